// gifts_behaviours names what a hand-built run exercised, and nothing a run did not: each
// behaviour appears when its observation is added and not before.
#include "properties/gifts/behaviours.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fl::gifts::props {
namespace {

constexpr int64_t kS = 1'000'000;

bool has(const GiftsRun& run, const std::string& name) {
  const std::vector<std::string> b = gifts_behaviours(run);
  return std::find(b.begin(), b.end(), name) != b.end();
}

void add_op(GiftsRun& run, const std::string& process, const std::string& op, const std::string& args, int64_t at_us,
            Outcome outcome, const std::string& result) {
  run.history.push_back(HistoryOp{run.history.size() + 1, process, op, args, at_us, at_us + 100'000, outcome, result});
}

void send(GiftsRun& run, const std::string& req, const std::string& intent, int64_t at_us,
          Outcome outcome = Outcome::kOk, const std::string& result = "order=1") {
  add_op(run, "sender-1", "send", "user=1 room=r1 gift=g1 count=1 req=" + req + " intent=" + intent, at_us, outcome,
         result);
}

void receive(GiftsRun& run, const std::string& msg, int64_t seq, int64_t at_us, int64_t ts_ms) {
  add_op(run, "viewer-1", "deliver",
         "msg=" + msg + " room=r1 sender=1 gift=g1 count=1 seq=" + std::to_string(seq) + " ts=" + std::to_string(ts_ms),
         at_us, Outcome::kOk, "played");
}

sim::FaultRecord fault(sim::FaultKind kind, const std::string& where, int64_t at_us, int64_t duration_us = 0) {
  sim::FaultRecord f;
  f.kind = kind;
  f.node = f.process = where;
  f.time_us = at_us;
  f.duration_us = duration_us;
  return f;
}

// One gift charged at 1 s, appended at once and played 1 s later by the room's one viewer.
GiftsRun quiet_run() {
  GiftsRun run;
  run.db_read = true;
  run.end_us = 60 * kS;
  run.pushers = {"push-1"};
  run.gateways = {"gw-1"};
  add_op(run, "viewer-1", "connect", "user=9 room=r1 gw=gw-1 lastSeq=0", 0, Outcome::kOk, "seq=0");
  send(run, "a", "1-1", 1 * kS);
  run.orders.push_back(model::Order{1, 1, "a", "r1", "g1", 1, 10, "m1"});
  run.commits.push_back(SqlCommit{1 * kS + 50'000, true, "gift-1", {{"INSERT INTO gift_order (...)", {"1", "a"}}}});
  run.log.push_back(LogRecordObs{"r1", "m1|r1|1|g1|1|1000|0", 1 * kS + 60'000});
  receive(run, "m1", 1, 2 * kS, 1000);
  return run;
}

TEST(GiftsBehaviours, AQuietRunExercisesNothing) {
  EXPECT_EQ(gifts_behaviours(quiet_run()), std::vector<std::string>{});
}

TEST(GiftsBehaviours, SendersAndTheDb) {
  GiftsRun run = quiet_run();
  send(run, "b", "1-2", 3 * kS, Outcome::kInfo, "timeout");
  EXPECT_TRUE(has(run, "gift answered indeterminate"));
  EXPECT_FALSE(has(run, "double tap within 200 ms"));
  send(run, "b", "1-2", 3 * kS + 120'000);  // the second tap, 120 ms later
  EXPECT_TRUE(has(run, "double tap within 200 ms"));
  EXPECT_FALSE(has(run, "request retried after the 10 s dedup TTL"));
  send(run, "b", "1-2", 14 * kS);
  EXPECT_TRUE(has(run, "request retried after the 10 s dedup TTL"));
  EXPECT_FALSE(has(run, "one request reached the DB twice"));
  run.commits.push_back(SqlCommit{14 * kS, false, "gift-1", {{"INSERT INTO gift_order (...)", {"1", "a"}}}});
  EXPECT_TRUE(has(run, "one request reached the DB twice"));
  EXPECT_FALSE(has(run, "DB held while a gift was charged"));
  run.faults.push_back(fault(sim::FaultKind::kPause, "db", 3 * kS + 50'000, 500'000));
  EXPECT_TRUE(has(run, "DB held while a gift was charged"));
}

TEST(GiftsBehaviours, TheLogAndThePushPath) {
  GiftsRun run = quiet_run();
  EXPECT_FALSE(has(run, "gift appended 6 s or more after its commit"));
  run.log.front().time_us = 8 * kS;  // the poller (or a check-back) appended it 7 s after its commit
  EXPECT_TRUE(has(run, "gift appended 6 s or more after its commit"));
  EXPECT_FALSE(has(run, "gift appended to the log twice"));
  run.log.push_back(run.log.front());
  EXPECT_TRUE(has(run, "gift appended to the log twice"));
  EXPECT_FALSE(has(run, "Redis restart with a gift in flight"));
  GiftsRun late = run;
  late.faults.push_back(fault(sim::FaultKind::kCrash, "redis", 30 * kS));  // 22 s after the append: not in flight
  EXPECT_FALSE(has(late, "Redis restart with a gift in flight"));
  run.faults.push_back(fault(sim::FaultKind::kCrash, "redis", 9 * kS));
  run.faults.push_back(fault(sim::FaultKind::kRestart, "redis", 10 * kS));
  EXPECT_TRUE(has(run, "Redis restart with a gift in flight"));
  EXPECT_FALSE(has(run, "push service held past the claim lease"));
  run.faults.push_back(fault(sim::FaultKind::kPause, "push-1", 20 * kS, 1'900'000));
  EXPECT_FALSE(has(run, "push service held past the claim lease"));
  run.faults.push_back(fault(sim::FaultKind::kPause, "push-1", 25 * kS, 2'000'000));
  EXPECT_TRUE(has(run, "push service held past the claim lease"));
  EXPECT_FALSE(has(run, "gift reached the combo window twice"));
  for (int i = 0; i < 2; ++i)
    run.redis.push_back(RedisCommand{9 * kS, 9000, "push-1", 1, 1, {"EXISTS", "gift:member:m1"}});
  EXPECT_TRUE(has(run, "gift reached the combo window twice"));
}

TEST(GiftsBehaviours, Viewers) {
  GiftsRun run = quiet_run();
  receive(run, "m3", 3, 4 * kS, 3500);
  EXPECT_FALSE(has(run, "viewer received seqs out of order"));
  receive(run, "m2", 2, 5 * kS, 4000);  // seq 2 after seq 3
  EXPECT_TRUE(has(run, "viewer received seqs out of order"));
  EXPECT_FALSE(has(run, "viewer received one message twice"));
  EXPECT_FALSE(has(run, "message received more than 8 s old"));
  receive(run, "m3", 3, 12 * kS, 3500);  // 8.5 s after its stamp
  EXPECT_TRUE(has(run, "viewer received one message twice"));
  EXPECT_TRUE(has(run, "message received more than 8 s old"));
  EXPECT_FALSE(has(run, "viewer rejoined behind its room"));
  add_op(run, "viewer-1", "connect", "user=9 room=r1 gw=gw-1 lastSeq=3", 20 * kS, Outcome::kOk, "seq=3");
  EXPECT_FALSE(has(run, "viewer rejoined behind its room"));  // level with the room
  add_op(run, "viewer-1", "connect", "user=9 room=r1 gw=gw-1 lastSeq=3", 30 * kS, Outcome::kOk, "seq=5");
  EXPECT_TRUE(has(run, "viewer rejoined behind its room"));
  EXPECT_FALSE(has(run, "viewer switched rooms"));
  add_op(run, "viewer-1", "connect", "user=9 room=r2 gw=gw-1 lastSeq=0", 40 * kS, Outcome::kOk, "seq=0");
  EXPECT_TRUE(has(run, "viewer switched rooms"));
}

}  // namespace
}  // namespace fl::gifts::props
