// The push service (003:L19, L90-133, L197-202): push-service instances in one consumer group
// read gift messages from the log, drop expired ones, de-duplicate, batch combos and fan the
// batches out to the gateways of the room's online users.
//
// spec, per record: the 10 s expiry (003:L199-202), SET gift:push:{room}:{msgId} NX EX 60
// (003:L92-96), then the combo step of 003:L113-133 under a Redisson RLock (tryLock 100 ms wait,
// 3 s lease, so no watchdog; unlock() in finally throws IllegalMonitorStateException when this
// instance does not hold the lock). A handling that throws is redelivered (re-run, up to
// `handling_attempts` times, as Spring Kafka's DefaultErrorHandler does), then skipped.
// With lock.lua, the lock is the hand-written script of 003:L147-152 instead (combo_lock.h).
// hardened: GF-COMBO-ATOMIC (scripted windows + sweeper), GF-PUSH-DEDUP-AFTER-SEND, GF-PUSH-SEQ,
// GF-PUSH-LEDGER (the push-time seq from the DB's push ledger, once per msgId).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>
#include <string>

#include "impl/gifts/combo_lock.h"
#include "impl/gifts/fixes.h"
#include "impl/gifts/messages.h"
#include "impl/ports/log.h"
#include "impl/ports/redis.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"

namespace fl::gifts {

struct PushOptions {
  GiftFixes fixes = GiftFixes::spec();
  std::string topic = "gift_topic";
  std::string group = "push";
  ComboLockOptions lock;          // 003:L118: tryLock(100 ms, 3 s); scenario option lock: lua | redisson-watchdog
  int64_t window_ms = 3000;       // 003:L105, L122
  int64_t threshold = 10;         // 003:L125
  int64_t expiry_ms = 10'000;     // 003:L200
  int64_t push_dedup_ttl_s = 60;  // 003:L93
  int handling_attempts = 10;
  int64_t session_timeout_us = 6'000'000;
  int64_t sweep_interval_us = 200'000;  // GF-COMBO-ATOMIC
  int64_t ready_lease_ms = 2000;        // GF-COMBO-ATOMIC: a claimed batch returns after this
};

class PushService {
 public:
  // `sql` is the DB of the push ledger (GF-PUSH-LEDGER); spec never uses it.
  PushService(Runtime& rt, Rpc& rpc, Redis& redis, Sql& sql, Log& log, PushOptions options);
  // Consumes until the process dies (and sweeps windows with GF-COMBO-ATOMIC).
  Task<void> run();
  // One record's handling; false when it "threw" (it is then redelivered).
  Task<bool> handle(GiftMsg msg);

 private:
  Task<bool> combo_with_lock(const GiftMsg& msg);
  Task<bool> combo_atomic(const GiftMsg& msg);
  Task<bool> fan_out(GiftMsg msg);
  Task<std::optional<int64_t>> push_seq(const GiftMsg& msg);
  Task<void> sweep();
  Task<void> sweep_once();
  Task<RedisReply> claim_ready(int64_t now_ms);
  std::string owner() const;

  Runtime& rt_;
  Rpc& rpc_;
  Redis& redis_;
  Sql& sql_;
  Log& log_;
  PushOptions options_;
  ComboLock lock_;
  // GF-CLAIM-RESUME: claims made by this incarnation, and the tokens of those whose reply was lost
  // since the last answered claim (a bounded list: a longer outage waits the leases out).
  static constexpr size_t kMaxLostClaims = 8;
  uint64_t claims_ = 0;
  std::vector<std::string> lost_claims_;
};

}  // namespace fl::gifts
