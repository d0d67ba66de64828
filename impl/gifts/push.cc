#include "impl/gifts/push.h"

#include <algorithm>
#include <map>
#include <vector>

#include "impl/gifts/schema.h"
#include "impl/gifts/scripts.h"

namespace fl::gifts {
namespace {

constexpr const char* kOpenKey = "gift:win:open";
constexpr const char* kReadyKey = "gift:ready";
constexpr const char* kDueKey = "gift:ready:due";
constexpr const char* kClaimOwnerKey = "gift:ready:owner";  // GF-CLAIM-RESUME: batch -> its claimer

std::string window_key(const GiftMsg& m) {
  return "gift:win:" + m.room + ":" + std::to_string(m.sender) + ":" + m.gift;
}

bool failed(const RedisReply& r) { return r.is_transport_error() || r.is_error(); }

}  // namespace

PushService::PushService(Runtime& rt, Rpc& rpc, Redis& redis, Sql& sql, Log& log, PushOptions options)
    : rt_(rt),
      rpc_(rpc),
      redis_(redis),
      sql_(sql),
      log_(log),
      options_(std::move(options)),
      lock_(rt, redis, options_.lock) {}

std::string PushService::owner() const {
  // Redisson's owner is the client id plus the thread id; each instance has one consumer thread.
  return std::string(rt_.process_name()) + ":" + std::to_string(rt_.incarnation()) + ":consumer";
}

Task<void> PushService::run() {
  if (options_.fixes.has(GiftFix::kComboAtomic)) rt_.spawn("sweeper", sweep());
  std::unique_ptr<LogConsumer> consumer = log_.consumer(ConsumerOptions{
      .group = options_.group, .client_id = owner(), .session_timeout_us = options_.session_timeout_us});
  while ((co_await consumer->join({options_.topic})).status != LogStatus::kOk) co_await rt_.clock().sleep_ms(200);
  for (;;) {
    PollResult p = co_await consumer->poll(20, 200'000);
    if (p.status == LogStatus::kOk && p.records.empty()) co_await rt_.clock().sleep_ms(50);  // idle back-off
    if (p.status != LogStatus::kOk) {
      co_await rt_.clock().sleep_ms(100);
      continue;
    }
    OffsetMap next;
    for (const LogRecord& rec : p.records) {
      std::optional<GiftMsg> m = GiftMsg::decode(rec.value);
      for (int attempt = 0; m && attempt < options_.handling_attempts; ++attempt) {
        if (co_await handle(*m)) break;  // a thrown handling is redelivered
      }
      next[TopicPartition{rec.topic, rec.partition}] = rec.offset + 1;
    }
    if (!next.empty()) co_await consumer->commit(next);  // process, then commit: at least once
  }
}

Task<bool> PushService::handle(GiftMsg msg) {
  // 003:L199-202: "now - msg.timestamp > 10_000" drops the message.
  if (rt_.clock().now_ms() - msg.timestamp_ms > options_.expiry_ms) co_return true;
  if (!options_.fixes.has(GiftFix::kPushDedupAfterSend)) {
    // 003:L92-96: the dedup key is written before the push.
    RedisReply d = co_await redis_.command(
        {"SET", push_dedup_key(msg.room, msg.msg_id), "1", "NX", "EX", std::to_string(options_.push_dedup_ttl_s)});
    if (failed(d)) co_return false;
    if (d.is_nil()) co_return true;  // "已推送，跳过"
  }
  if (options_.fixes.has(GiftFix::kComboAtomic)) co_return co_await combo_atomic(msg);
  co_return co_await combo_with_lock(msg);
}

// 003:L113-133 as written.
Task<bool> PushService::combo_with_lock(const GiftMsg& msg) {
  const std::string lock = lock_key(msg.room, msg.sender, msg.gift);
  bool ok = true;
  if (co_await lock_.try_lock(lock, owner())) {
    const std::string count = count_key(msg.room, msg.sender, msg.gift);
    // 003:L121-122: INCR by giftCount, EXPIRE 3 s.
    RedisReply c = co_await redis_.command({"INCRBY", count, std::to_string(msg.count)});
    RedisReply e = co_await redis_.command({"EXPIRE", count, std::to_string(options_.window_ms / 1000)});
    // isWindowExpired(countKey): the key's TTL ran out (docs/systems/gifts.md).
    RedisReply ttl = co_await redis_.command({"PTTL", count});
    ok = reply_integer(c).has_value() && !failed(e) && reply_integer(ttl).has_value();
    const bool expired = ok && *reply_integer(ttl) <= 0;
    if (ok && (*reply_integer(c) >= options_.threshold || expired)) {
      GiftMsg batch = msg;  // pushBatchedGift(roomId, senderId, giftId, currentCount) (003:L127)
      batch.count = *reply_integer(c);
      ok = co_await fan_out(batch);
      ok = !failed(co_await redis_.command({"DEL", count})) && ok;
    }
  }
  // 003:L131-132: finally { lock.unlock(); }, which throws when this thread does not hold it.
  const bool unlocked = co_await lock_.unlock(lock, owner());
  co_return ok&& unlocked;
}

// GF-COMBO-ATOMIC: the window lives in one script, idempotent per msgId; the sweeper flushes it.
// GF-WINDOW-DEADLINE: 003:L105 merges the clicks of 3 s; a window the sweeper could not close in
// time (Redis unreachable) is closed by the next add instead of swallowing a gift that arrives
// later, whose batch would carry the window's old stamp and expire with it (003:L199-202).
Task<bool> PushService::combo_atomic(const GiftMsg& msg) {
  const bool close_stale = options_.fixes.has(GiftFix::kWindowDeadline);
  RedisReply r = co_await redis_.script(
      kBatchAddScript, {window_key(msg), "gift:member:" + msg.msg_id, kOpenKey, kReadyKey, kDueKey},
      {msg.msg_id, std::to_string(msg.count), std::to_string(rt_.clock().now_ms()), std::to_string(options_.window_ms),
       std::to_string(options_.threshold), msg.room, std::to_string(msg.sender), msg.gift, close_stale ? "1" : "0"});
  co_return !failed(r);
}

Task<void> PushService::sweep() {
  for (;;) {
    co_await rt_.clock().sleep_us(options_.sweep_interval_us);
    co_await sweep_once();
  }
}

Task<void> PushService::sweep_once() {
  const int64_t now_ms = rt_.clock().now_ms();
  co_await redis_.script(kBatchCloseScript, {kOpenKey, kReadyKey, kDueKey}, {std::to_string(now_ms)});
  RedisReply claimed = co_await claim_ready(now_ms);
  if (claimed.kind != RedisReply::Kind::kArray) co_return;
  for (const RedisReply& p : claimed.elements) {
    std::optional<GiftMsg> batch = GiftMsg::decode(p.str);
    if (!batch) continue;
    // 003:L199-202 at this push point too: an expired batch is dropped (its orders stay recorded).
    const bool expired = rt_.clock().now_ms() - batch->timestamp_ms > options_.expiry_ms;
    if (!expired && !(co_await fan_out(*batch))) {
      // The claim lapses after the lease and another pusher retries. GF-CLAIM-RELEASE: a refused
      // push releases its claim at once, so the next sweep retries it instead of the batch aging
      // a lease per refusal toward the expiry (003:L199-202).
      if (options_.fixes.has(GiftFix::kClaimRelease)) {
        co_await redis_.command({"ZADD", kDueKey, "XX", std::to_string(rt_.clock().now_ms()), batch->msg_id});
      }
      continue;
    }
    std::vector<std::vector<std::string>> done = {{"HDEL", kReadyKey, batch->msg_id}, {"ZREM", kDueKey, batch->msg_id}};
    if (options_.fixes.has(GiftFix::kClaimResume)) done.push_back({"HDEL", kClaimOwnerKey, batch->msg_id});
    co_await redis_.pipeline(std::move(done));
  }
}

// GF-CLAIM-RESUME: a claim whose reply timed out (a clog or a pause of Redis) may still have moved
// its batches' leases, and nobody knew which: each waited its lease out (2 s) on top of the fault
// before any pusher retried it, toward the 10 s expiry (003:L199-202; explore-hardened-store-errors
// seed 11398). With the fix each claim carries a token that Redis records as the owner of what it claimed,
// and the next claim names the tokens whose reply was lost, taking those batches back.
Task<RedisReply> PushService::claim_ready(int64_t now_ms) {
  std::vector<std::string> args = {std::to_string(now_ms), std::to_string(options_.ready_lease_ms), "20"};
  if (!options_.fixes.has(GiftFix::kClaimResume)) {
    co_return co_await redis_.script(kReadyClaimScript, {kReadyKey, kDueKey}, std::move(args));
  }
  const std::string token = owner() + ":claim-" + std::to_string(++claims_);
  args.push_back(token);
  args.insert(args.end(), lost_claims_.begin(), lost_claims_.end());
  RedisReply r = co_await redis_.script(kReadyClaimScript, {kReadyKey, kDueKey, kClaimOwnerKey}, std::move(args));
  if (r.kind == RedisReply::Kind::kArray) {
    lost_claims_.clear();
  } else if (lost_claims_.size() < kMaxLostClaims) {
    lost_claims_.push_back(token);  // it may have run: its batches are owned by this token
  }
  co_return r;
}

// GF-PUSH-SEQ: the room's next seq at push time. 003:L35 "seq 单调递增": a Redis INCR is not, once
// a Redis crash loses its last second of writes (AOF everysec) and the counter hands the same seqs
// out again. GF-PUSH-LEDGER takes the seq from the push ledger in the DB instead, once per msgId:
// a message pushed again (its Redis dedup key and ready entry rolled back) keeps its seq.
Task<std::optional<int64_t>> PushService::push_seq(const GiftMsg& msg) {
  if (!options_.fixes.has(GiftFix::kPushLedger)) {
    co_return reply_integer(co_await redis_.command({"INCR", seq_key(msg.room, true)}));
  }
  std::vector<SqlStatement> tx;
  tx.push_back(
      sql_statement("INSERT OR IGNORE INTO push_ledger (room_id, seq, msg_id) "
                    "SELECT ?, COALESCE(MAX(seq), 0) + 1, ? FROM push_ledger WHERE room_id = ?",
                    msg.room, msg.msg_id, msg.room));
  tx.push_back(sql_statement("SELECT seq FROM push_ledger WHERE msg_id = ?", msg.msg_id));
  SqlResult r = co_await sql_.transaction(std::move(tx));
  if (!r.ok() || r.sets.size() != 2 || r.sets[1].rows.empty() || r.sets[1].rows.front().empty()) co_return std::nullopt;
  co_return r.sets[1].rows.front()[0].as_int();
}

// 003:L19: the room's online users (sorted set by heartbeat), one message per gateway.
Task<bool> PushService::fan_out(GiftMsg msg) {
  const bool dedup_after = options_.fixes.has(GiftFix::kPushDedupAfterSend);
  const std::string dedup = push_dedup_key(msg.room, msg.msg_id);
  if (dedup_after) {
    RedisReply seen = co_await redis_.command({"EXISTS", dedup});
    if (failed(seen)) co_return false;
    if (reply_integer(seen).value_or(0) == 1) co_return true;
  }
  if (options_.fixes.has(GiftFix::kPushSeq)) {
    const std::optional<int64_t> seq = co_await push_seq(msg);
    if (!seq) co_return false;
    msg.seq = *seq;
  }
  RedisReply members = co_await redis_.command({"ZRANGE", online_key(msg.room), "0", "-1"});
  if (members.kind != RedisReply::Kind::kArray) co_return false;
  std::map<std::string, std::vector<int64_t>> by_gateway;
  for (const RedisReply& m : members.elements) {
    const size_t at = m.str.find('@');
    if (at == std::string::npos) continue;
    by_gateway[m.str.substr(at + 1)].push_back(std::stoll(m.str.substr(0, at)));
  }
  for (auto& [gateway, users] : by_gateway) rpc_.send(gateway + ".deliver", make_message(Deliver{msg, users}));
  if (dedup_after) { co_await redis_.command({"SET", dedup, "1", "EX", std::to_string(options_.push_dedup_ttl_s)}); }
  co_return true;
}

}  // namespace fl::gifts
