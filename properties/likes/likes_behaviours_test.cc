// likes_behaviours names what a hand-built run exercised, and nothing a run did not: each behaviour
// appears when its observation is added and not before (a near miss adds none).
#include "properties/likes/likes_behaviours.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/fault_log.h"

namespace fl::likes::props {
namespace {

constexpr int64_t kMs = 1000;  // us

bool has(const LikesRun& run, const std::string& name) {
  const std::vector<std::string> b = likes_behaviours(run);
  return std::find(b.begin(), b.end(), name) != b.end();
}

HistoryOp op(uint64_t id, std::string kind, int64_t user, uint64_t req, int64_t s_us, int64_t e_us,
             Outcome o = Outcome::kOk) {
  HistoryOp h;
  h.id = id;
  h.process = "client-1";
  h.op = std::move(kind);
  h.args = "asset=1" + (user > 0 ? " user=" + std::to_string(user) : std::string()) + " req=" + std::to_string(req);
  h.invoke_us = s_us;
  h.complete_us = e_us;
  h.outcome = o;
  h.result = "ok";
  return h;
}

// A SET of asset 1's count (count) or of user 7's state, in Redis request `request`.
RedisWrite set(bool count, int64_t value, uint64_t request, int64_t t_us, bool names_state,
               std::optional<int64_t> ttl_ms = std::nullopt) {
  static uint64_t seq = 0;
  RedisWrite w;
  w.seq = ++seq;
  w.time_us = t_us;
  w.node_ms = t_us / kMs;
  w.client = "replica-1";
  w.request = request;
  w.request_names_state = names_state;
  w.count = count;
  w.asset = 1;
  w.user = count ? 0 : 7;
  w.cmd = "SET";
  w.changed = true;
  w.after = value;
  w.ttl_ms = ttl_ms;
  return w;
}

// Redis holds `count` for asset 1; the DB holds user 7's like when `liked`.
StoreSnapshot sample(int64_t t_us, std::optional<int64_t> count, bool liked) {
  StoreSnapshot s;
  s.time_us = t_us;
  s.redis_count[1] = count;
  if (liked) s.db_rows[{1, 7}] = 1;
  return s;
}

// User 7 likes asset 1 over [10, 20] ms (its commit, then its cache update: state and count in one
// request) and the app reads the count at 150 ms, cached. Redis and the DB are sampled every
// 100 ms. Nothing else happens.
LikesRun quiet_run() {
  LikesRun run;
  run.end_us = 1000 * kMs;
  run.replicas = {"replica-1"};
  run.history = {op(1, "like", 7, 1, 10 * kMs, 20 * kMs), op(2, "count", 0, 2, 150 * kMs, 160 * kMs)};
  DbChange row;
  row.seq = 1;
  row.time_us = 15 * kMs;
  row.asset = 1;
  row.user = 7;
  row.delta = 1;
  row.applied = true;
  row.request_id = 1;
  run.db_changes.push_back(row);
  run.redis_writes = {set(false, 1, 1, 16 * kMs, true), set(true, 1, 1, 16 * kMs, true)};
  run.samples.push_back(sample(0, std::nullopt, false));
  for (int64_t t_ms = 100; t_ms < 1000; t_ms += 100) run.samples.push_back(sample(t_ms * kMs, 1, true));
  run.final_state = sample(run.end_us, 1, true);
  return run;
}

TEST(LikesBehaviours, AQuietRunExercisesNothing) {
  EXPECT_EQ(likes_behaviours(quiet_run()), std::vector<std::string>{});
}

TEST(LikesBehaviours, ClientAnswersAndConcurrentTaps) {
  LikesRun run = quiet_run();
  run.history.push_back(op(3, "like", 7, 3, 30 * kMs, 40 * kMs));  // after the first like: not at once
  EXPECT_FALSE(has(run, "one pair written twice at once"));
  run.history.push_back(op(4, "like", 7, 4, 35 * kMs, 45 * kMs));
  EXPECT_TRUE(has(run, "one pair written twice at once"));
  EXPECT_FALSE(has(run, "like and unlike of one pair at once"));
  run.history.push_back(op(5, "unlike", 7, 5, 44 * kMs, -1, Outcome::kInfo));
  EXPECT_TRUE(has(run, "like and unlike of one pair at once"));
  EXPECT_TRUE(has(run, "like or unlike answered indeterminate"));
  EXPECT_FALSE(has(run, "request retried with its id"));
  run.history.push_back(op(6, "unlike", 7, 5, 600 * kMs, 610 * kMs));
  EXPECT_TRUE(has(run, "request retried with its id"));
}

TEST(LikesBehaviours, ACountReadOfAnUncachedCount) {
  LikesRun run = quiet_run();
  run.history.push_back(op(3, "count", 0, 3, 50, 60));  // the sample at 0 holds no count
  EXPECT_TRUE(has(run, "count read while Redis held no count"));
}

TEST(LikesBehaviours, ALateWriteAndAFailedTransaction) {
  LikesRun run = quiet_run();
  DbChange late = run.db_changes[0];
  late.time_us = 20 * kMs;  // the instant the like was answered: not after it
  run.db_changes.push_back(late);
  EXPECT_FALSE(has(run, "write reached the DB after its request was answered"));
  run.db_changes.back().time_us = 300 * kMs;
  EXPECT_TRUE(has(run, "write reached the DB after its request was answered"));
  EXPECT_FALSE(has(run, "DB failed a write transaction"));
  run.db_changes.back().failed = true;
  EXPECT_TRUE(has(run, "DB failed a write transaction"));
}

TEST(LikesBehaviours, StoreFaults) {
  LikesRun run = quiet_run();
  // Redis restarts at 50 ms, when the last sample (0 ms) had nothing cached: no key to lose.
  run.faults = {
      sim::FaultRecord{.time_us = 50 * kMs, .kind = sim::FaultKind::kCrash, .node = "redis", .process = "redis"},
      sim::FaultRecord{.time_us = 60 * kMs, .kind = sim::FaultKind::kRestart, .node = "redis", .process = "redis"},
      sim::FaultRecord{.time_us = 70 * kMs,
                       .kind = sim::FaultKind::kEviction,
                       .node = "redis",
                       .process = "redis",
                       .detail = "other:key"},
      sim::FaultRecord{.time_us = 80 * kMs,
                       .kind = sim::FaultKind::kClockDrift,
                       .node = "replica-1",
                       .process = "replica-1",
                       .value = 0}};
  EXPECT_EQ(likes_behaviours(run), std::vector<std::string>{});
  run.faults[0].time_us = run.faults[1].time_us = 150 * kMs;  // the sample at 100 ms holds count 1
  run.faults[2].detail = "asset:like:1:7";
  run.faults[3].value = 50;
  EXPECT_TRUE(has(run, "Redis restart with keys cached"));
  EXPECT_TRUE(has(run, "state or count key evicted"));
  EXPECT_TRUE(has(run, "clock moved on a service node"));
  EXPECT_FALSE(has(run, "replica crashed with a write in flight"));
  run.faults.push_back(sim::FaultRecord{
      .time_us = 12 * kMs, .kind = sim::FaultKind::kCrash, .node = "replica-1", .process = "replica-1"});
  EXPECT_TRUE(has(run, "replica crashed with a write in flight"));
  EXPECT_FALSE(has(run, "DB lost commits in a power loss"));
  run.samples.back().db_rows.clear();  // the DB read back without the committed like
  EXPECT_TRUE(has(run, "DB lost commits in a power loss"));
}

TEST(LikesBehaviours, FillsRacingWritesAndRepairsOfADrift) {
  LikesRun run = quiet_run();
  // A 3.3 fill (a request of its own, naming no state key) after the like was answered, of the
  // value the cache holds: no race, no drift.
  run.redis_writes.push_back(set(true, 1, 2, 30 * kMs, false));
  EXPECT_EQ(likes_behaviours(run), std::vector<std::string>{});
  run.redis_writes.back().time_us = 18 * kMs;  // while the like was in flight
  EXPECT_TRUE(has(run, "count fill or repair while a write of the asset was in flight"));
  run.redis_writes.back().after = 2;  // and it changed the cached 1
  EXPECT_TRUE(has(run, "repair rewrote a drifted count"));
  EXPECT_FALSE(has(run, "state fill or repair while a write of the pair was in flight"));
  run.redis_writes.push_back(set(false, 0, 3, 19 * kMs, true));  // a 3.4 fill: state alone
  EXPECT_TRUE(has(run, "state fill or repair while a write of the pair was in flight"));
}

TEST(LikesBehaviours, AnExpiredCountIsNoDriftAndAnExpiredStateIsRefilled) {
  LikesRun run = quiet_run();
  run.redis_writes[0].ttl_ms = run.redis_writes[1].ttl_ms = 100;  // both expire at 116 ms
  run.redis_writes.push_back(set(true, 5, 2, 115 * kMs, false));
  EXPECT_TRUE(has(run, "repair rewrote a drifted count"));
  run.redis_writes.back().time_us = 116 * kMs;
  run.redis_writes.back().node_ms = 116;
  EXPECT_FALSE(has(run, "repair rewrote a drifted count"));  // the count had expired: nothing to drift from
  run.redis_writes.push_back(set(false, 1, 3, 115 * kMs, true));
  EXPECT_FALSE(has(run, "state key refilled after it expired"));
  run.redis_writes.back().node_ms = 116;
  EXPECT_TRUE(has(run, "state key refilled after it expired"));
}

}  // namespace
}  // namespace fl::likes::props
