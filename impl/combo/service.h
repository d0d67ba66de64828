// The activity service of seed 000 (§4): PurchaseItem, BatchPurchaseItem,
// GetLatestContributions, GetContributionRanking, and the combo stream worker (§4.3) that
// replica_main starts, as one replica process would run them.
//
// Contract
// - replica_main() creates the schema if missing, serves kActivityService on `rpc`, then runs the
//   stream worker until the process dies (it never returns). Every reference must outlive it
//   (the boot coroutine of the process owns the clients).
// - spec (no fix) follows the seed's code statement by statement; each named fix (fixes.h) is a
//   `fixes.has(...)` branch at the place it departs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "impl/combo/fixes.h"
#include "impl/ports/redis.h"
#include "impl/ports/redis_script.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"

namespace fl::combo {

inline constexpr const char* kStreamKey = "combo:stream:contributions";
inline constexpr const char* kConsumerGroup = "combo-publishers";

struct ServiceOptions {
  Fixes fixes = Fixes::spec();
  int64_t window_ms = 3000;        // expire_at_ms = now + 3000; hardened lock PX
  int64_t agg_ttl_s = 5;           // spec: Expire(aggKey, 5s)
  int64_t lock_ttl_s = 3;          // spec: SetNX(lockKey, "1", 3s)
  int64_t stream_maxlen = 100000;  // XADD MAXLEN ~
  int64_t read_count = 10;         // XREADGROUP COUNT
  int64_t block_ms = 1000;         // XREADGROUP BLOCK
  int64_t error_sleep_ms = 1000;   // time.Sleep(time.Second) after a read error
  int64_t latest_limit = 20;       // rows GetLatestContributions reads (not in the seed)
  // fixes only
  int64_t hardened_agg_ttl_ms = 600'000;  // CB-LONG-AGG-TTL
  int64_t marker_ttl_ms = 8000;           // CB-WINDOW-SCRIPTS: per-pid marker of the aggregate script
  // CB-WINDOW-SCRIPTS: the published marker of a window (owner, members, payload) lives until the
  // worker acks the entry and deletes it; the TTL only bounds a leak.
  int64_t published_marker_ttl_ms = 60'000;
  int64_t claim_min_idle_ms = 5000;  // CB-XAUTOCLAIM min-idle
  int64_t claim_interval_ms = 1000;
};

// The scripts hardened uses (Lua). Build once per run and hand the same registry to every
// client.
std::shared_ptr<ScriptRegistry> combo_scripts();

// CB-WINDOW-SCRIPTS: the marker that makes one purchase line's Redis step idempotent. It names the
// line (activity, user, item, pid, created_at), not the pid and created_at alone: a DB power loss
// (synchronous NORMAL/OFF) forgets rows and hands their pids out again, and another replica's
// clock may stamp the same created_at (seed 10056 of explore-hardened-off), so the pair alone
// can name two purchases. The harness reads Redis's instant for each row by this key.
std::string purchase_marker_key(int64_t activity_id, int64_t user_id, int64_t item_id, int64_t pid,
                                int64_t created_at_ms);

// SQL schema of activity_contributions (one row per purchase).
const char* combo_schema_sql();

Task<void> replica_main(Runtime& rt, Rpc& rpc, Redis& redis, Sql& sql, ServiceOptions options);

// Catalog lookups (the seed reads items and users from their tables; fixed here).
struct ItemInfo {
  int64_t item_id = 0;
  std::string name, icon;
};
bool lookup_item(const std::string& item_type, ItemInfo* out);
std::string nickname_of(int64_t user_id);
std::string avatar_of(int64_t user_id);
const std::vector<std::string>& item_types();

}  // namespace fl::combo
