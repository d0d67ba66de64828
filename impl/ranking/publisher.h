// Snapshots and publishing of seed 004 part 2 (004:L255-266, L317): a publisher builds a snapshot of
// the newest SEALED run of a scope (PREPARED, items, READY), then publishes it in one DB transaction
// that locks and checks the scope context, CASes RANKING_PUBLISH_POINTER on (version,
// publication_epoch) and sets the snapshot PUBLISHED; a lost CAS sets it REJECTED. Redis caches the
// pointer (`ranking:pointer:{scope_id}` = "epoch|snapshot_id", written by a script that rejects
// older epochs) and the snapshot (`ranking:snapshot:{scope_id}:{snapshot_id}`); a Redis pointer
// found missing is restored from the DB pointer only (004:L317).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "impl/ports/redis.h"
#include "impl/ports/redis_script.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"
#include "impl/ranking/fixes.h"

namespace fl::ranking {

// KEYS pointer restore-token; ARGV epoch snapshot_id mode nonce. Sets the pointer to
// "epoch|snapshot_id" when it holds an older epoch, or when it is missing and mode is "create", or
// mode is "restore" and the token holds the nonce; returns 1 when it wrote, else 0.
inline constexpr const char* kPointerSetScript = "rank_pointer_set";
// `cache`: also the candidate cache's switch script (only with the cache, so other scenarios keep
// their traces).
// `risk`: also the denylist script (only with risk actions).
std::shared_ptr<const ScriptRegistry> ranking_scripts(bool cache = false, bool risk = false);

std::string pointer_key(const std::string& scope);
std::string snapshot_key(const std::string& scope, const std::string& snapshot_id);
std::string restore_key(const std::string& scope);  // the restore token (RK-POINTER-FROM-DB)

struct PublisherOptions {
  std::vector<std::string> scopes = {"GLOBAL|ALL|ALL|ALL", "GLOBAL|ALL|ALL|zh-CN"};
  int top_n = 5;  // items per snapshot
  int64_t interval_us = 1'000'000;
  RankFixes fixes = RankFixes::spec();
  // 004:L151, L265: the publish transaction also checks that no required source is flagged
  // incomplete (source_status, kept by the aggregators when the scenario has watermarks): spec
  // freezes, keeping the previous snapshot.
  bool completeness_gate = false;
  // C33 (a faulty publisher, 004:L452): its snapshots copy the run's two set digests but carry the
  // Top N item count as input_manifest_count and candidate_count.
  bool counts_from_items = false;
  // §9.2-§9.3 (risk actions in the scenario): a snapshot leaves out the topics blocked in its scope
  // or globally and records the risk context it was made under (risk_epoch, global_risk_epoch);
  // the publish transaction also checks both against the context row and the global epoch against
  // the GLOBAL|ALL|ALL|ALL authority row (004:L212, L264).
  bool risk = false;
  // Mapping switches and window-configuration changes (control.h): a snapshot carries its run's
  // mapping_version + mapping_activation_epoch and window_config_version, and the publish
  // transaction checks them against the context (004:L262-263).
  bool scope_control = false;
  // 004:L325 (param promote_replays): a replay's snapshot waits READY instead of trying the
  // publish transaction; it publishes only with an APPROVED promotion authorization naming it,
  // through the publish transaction with the authorization's checks and its use in place of the
  // official-run condition (004:L265).
  bool promotion = false;
  int64_t promotion_validity_us = 3'000'000;  // how long an approver's authorization is valid
};

Task<void> run_publisher(Runtime& rt, Sql& sql, Redis& redis, PublisherOptions o);

// F13, C13 (004:L494): an unauthorized history replay. Every interval (until stop_at_us) it replays
// a random scope's newest SEALED run as a replay run in its own namespace (replay_run, 004:L101),
// builds a snapshot from that run's candidates and tries the publish transaction (and, were it to
// commit, the Redis writes) exactly as a publisher does, with no promotion authorization.
// With o.promotion it first publishes, per scope, a READY replay snapshot an approver authorized.
Task<void> run_replay(Runtime& rt, Sql& sql, Redis& redis, PublisherOptions o, int64_t stop_at_us);

// 004:L325: an approver (process "approver") that, every interval, authorizes the promotion of the
// newest READY replay snapshot of each scope not yet authorized: the scope, the replay run, its input
// watermark (as a one-point range), its manifest digest, the scope's current rule, mapping and risk
// activation epochs and context version, the pointer's current version, valid for
// o.promotion_validity_us from now.
Task<void> run_approver(Runtime& rt, Sql& sql, PublisherOptions o, int64_t stop_at_us);

}  // namespace fl::ranking
