// Every likes checker passes on a clean run and FAILS on a run built to violate its invariant.
#include "properties/likes/checks.h"
#include "properties/likes/truth.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fl::likes::props {
namespace {

HistoryOp op(uint64_t id, std::string kind, int64_t asset, int64_t user, uint64_t req, int64_t s, int64_t e, Outcome o,
             std::string result) {
  HistoryOp h;
  h.id = id;
  h.process = "c1";
  h.op = std::move(kind);
  h.args = "asset=" + std::to_string(asset) + " user=" + std::to_string(user) + " req=" + std::to_string(req);
  h.invoke_us = s;
  h.complete_us = e;
  h.outcome = o;
  h.result = std::move(result);
  return h;
}

uint64_t g_seq = 0;

RedisWrite rw(std::string cmd, bool count, int64_t asset, int64_t user, std::optional<int64_t> after, bool changed,
              uint64_t request, int64_t t, bool names_state = false) {
  RedisWrite w;
  w.seq = ++g_seq;
  w.time_us = t;
  w.node_ms = t / 1000;
  w.client = "replica-1";
  w.request = request;
  w.request_names_state = names_state || !count;
  w.count = count;
  w.asset = asset;
  w.user = user;
  w.cmd = std::move(cmd);
  w.after = after;
  w.changed = changed;
  return w;
}

DbChange dc(uint64_t seq, bool row, int64_t asset, int64_t user, int64_t delta, bool applied, int64_t t) {
  DbChange c;
  c.seq = seq;
  c.time_us = t;
  c.client = "replica-1";
  c.row = row;
  c.asset = asset;
  c.user = user;
  c.delta = delta;
  c.applied = applied;
  c.refused = !applied;
  return c;
}

// User 7 likes asset 1 at [0,10] (the seed's pipeline SETNX+INCR, then the row and the counter)
// and reads its count at [20,30]; a reconciliation re-writes the right count; user 8 likes then
// unlikes asset 2 (one transaction each). Everything consistent.
// One replica, microsecond-scale timeouts to match the tiny times of these runs.
LikesRun tiny_run(int64_t end_us) {
  LikesRun run;
  run.replicas = {"replica-1"};
  run.end_us = end_us;
  run.timing.client_timeout_us = 10;
  run.timing.max_retries = 0;
  run.timing.sql_timeout_us = 10;
  run.timing.redis_timeout_us = 10;
  run.timing.sync_interval_us = 20;
  return run;
}

LikesRun clean_run() {
  LikesRun run = tiny_run(100);
  run.history.push_back(op(1, "like", 1, 7, 1, 0, 10, Outcome::kOk, "ok"));
  run.history.push_back(op(2, "count", 1, 0, 2, 20, 30, Outcome::kOk, "count=1"));
  run.history.push_back(op(3, "state", 1, 7, 3, 20, 30, Outcome::kOk, "state=1"));
  run.redis_writes.push_back(rw("SET", false, 1, 7, 1, true, 1, 5));
  run.redis_writes.push_back(rw("INCR", true, 1, 0, 1, true, 1, 5));
  run.redis_writes.push_back(rw("SET", true, 1, 0, 1, true, 2, 60));  // a repair
  run.db_changes.push_back(dc(1, true, 1, 7, +1, true, 12));
  run.db_changes.push_back(dc(2, false, 1, 0, +1, true, 13));
  // User 8 likes then unlikes asset 2.
  run.history.push_back(op(8, "like", 2, 8, 8, 0, 10, Outcome::kOk, "ok"));
  run.history.push_back(op(9, "unlike", 2, 8, 9, 20, 30, Outcome::kOk, "ok"));
  run.db_changes.push_back(dc(3, false, 2, 8, +1, true, 5));
  run.db_changes.push_back(dc(3, true, 2, 8, +1, true, 5));
  run.db_changes.push_back(dc(4, false, 2, 8, -1, true, 25));
  run.db_changes.push_back(dc(4, true, 2, 8, -1, true, 25));
  StoreSnapshot s;
  s.time_us = 15;
  s.redis_count[1] = 1;
  s.db_like_count[1] = 1;
  s.db_like_count[2] = 1;
  s.db_rows[{2, 8}] = 1;
  s.db_rows[{1, 7}] = 1;
  run.samples.push_back(s);
  run.final_state = s;
  run.final_state.time_us = 100;
  run.final_state.db_like_count[2] = 0;
  run.final_state.db_rows.erase({2, 8});
  run.final_state.redis_state[{1, 7}] = "1";
  return run;
}

sim::FaultRecord crash_of(const std::string& process, int64_t t) {
  sim::FaultRecord f;
  f.time_us = t;
  f.kind = sim::FaultKind::kCrash;
  f.node = process;
  f.process = process;
  return f;
}

sim::FaultRecord record(sim::FaultKind kind, const std::string& process, int64_t t, uint64_t cause = 0,
                        std::string message = "", int64_t duration_us = 0) {
  sim::FaultRecord f;
  f.time_us = t;
  f.kind = kind;
  f.node = process;
  f.process = process;
  f.cause = cause;
  f.message = std::move(message);
  f.duration_us = duration_us;
  return f;
}

// The null faults of `faultline null-faults`: a 0 ppm drift and a 0 ms jump on the DB, a 0 ms pause
// of a replica (none leaves a record that names an operation).
void add_null_faults(LikesRun& run, int64_t t) {
  sim::FaultRecord drift = record(sim::FaultKind::kClockDrift, "db", t);
  sim::FaultRecord jump = record(sim::FaultKind::kClockJump, "db", t);
  sim::FaultRecord pause = record(sim::FaultKind::kPause, "replica-1", t);
  run.faults.insert(run.faults.end(), {drift, jump, pause});
}

Verdict only(LikesRun run, const std::string& name) {
  // The world appends its records in time order; tests add them in any order.
  std::stable_sort(run.faults.begin(), run.faults.end(),
                   [](const sim::FaultRecord& a, const sim::FaultRecord& b) { return a.time_us < b.time_us; });
  std::vector<Verdict> v = check_likes(run, {name});
  EXPECT_EQ(v.size(), 1u);
  return v[0];
}

TEST(LikesChecksTest, CleanRunPassesEverything) {
  for (const Verdict& v : check_likes(clean_run(), {})) {
    EXPECT_TRUE(v.passed) << v.property << ": " << (v.evidence.empty() ? "" : v.evidence[0]);
    EXPECT_GT(v.checks, 0) << v.property;
  }
  EXPECT_EQ(check_likes(clean_run(), {}).size(), likes_properties().size());
}

TEST(LikesChecksTest, UniquenessFailsOnDuplicateRows) {
  LikesRun run = clean_run();
  run.samples[0].db_rows[{1, 7}] = 2;
  Verdict v = only(run, "like-uniqueness");
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.invariants, std::vector<std::string>{"LIKE-1"});
}

// The seed's double tap: both taps pass EXISTS, the second SETNX sets nothing, both INCRs run.
TEST(LikesChecksTest, SingleEffectFailsOnDoubleCountedDoubleTap) {
  LikesRun run = clean_run();
  run.history.push_back(op(4, "like", 1, 7, 4, 1, 9, Outcome::kOk, "ok"));
  run.redis_writes.push_back(rw("SET", false, 1, 7, 1, false, 3, 6));
  run.redis_writes.push_back(rw("INCR", true, 1, 0, 2, true, 3, 6));
  EXPECT_FALSE(only(run, "like-single-effect").passed);
}

// The seed's asyncWriteLike adds 1 whatever the INSERT said: a refused INSERT then +1.
TEST(LikesChecksTest, SingleEffectAndIdempotenceFailOnACounterChangeWithoutItsRow) {
  LikesRun run = clean_run();
  run.db_changes.push_back(dc(5, true, 1, 7, +1, false, 41));  // duplicate key: nothing inserted
  run.db_changes.push_back(dc(6, false, 1, 0, +1, true, 42));  // like_count + 1 anyway
  EXPECT_FALSE(only(run, "like-single-effect").passed);
  EXPECT_FALSE(only(run, "like-idempotence").passed);
}

TEST(LikesChecksTest, DbCountFailsWhenCounterDriftsFromRows) {
  LikesRun run = clean_run();
  run.final_state.db_like_count[1] = 2;
  EXPECT_FALSE(only(run, "like-db-count").passed);
}

TEST(LikesChecksTest, CacheCountFailsOnResidualDrift) {
  LikesRun run = clean_run();
  run.final_state.redis_count[1] = 5;
  EXPECT_FALSE(only(run, "like-cache-count").passed);
  run.final_state.redis_count[1] = std::nullopt;  // nil is allowed
  EXPECT_TRUE(only(run, "like-cache-count").passed);
}

TEST(LikesChecksTest, NonNegativeFailsOnANegativeSample) {
  LikesRun run = clean_run();
  run.samples[0].redis_count[1] = -1;
  EXPECT_FALSE(only(run, "like-non-negative").passed);
}

TEST(LikesChecksTest, DurabilityFailsWhenAnAcknowledgedLikeIsLost) {
  LikesRun run = clean_run();
  run.final_state.db_rows.clear();
  Verdict v = only(run, "like-durability");
  EXPECT_FALSE(v.passed);
  ASSERT_FALSE(v.evidence.empty());
  EXPECT_NE(v.evidence[0].find("#1"), std::string::npos);  // names the acknowledged like
}

TEST(LikesChecksTest, PerUserOrderFailsWhenAnEarlierLikeWinsOverALaterUnlike) {
  LikesRun run = clean_run();
  run.history.push_back(op(5, "unlike", 1, 7, 5, 40, 50, Outcome::kOk, "ok"));
  run.final_state.redis_state.clear();
  EXPECT_FALSE(only(run, "like-per-user-order").passed);  // row still present
  run.final_state.db_rows.clear();
  EXPECT_TRUE(only(run, "like-per-user-order").passed);
}

TEST(LikesChecksTest, StateCacheFailsWhenACachedZeroBlocksALike) {
  LikesRun run;
  run.history.push_back(op(1, "state", 1, 7, 1, 0, 10, Outcome::kOk, "state=0"));
  run.history.push_back(op(2, "like", 1, 7, 2, 20, 30, Outcome::kOk, "already"));
  Verdict v = only(run, "like-state-cache");
  EXPECT_FALSE(v.passed);
  ASSERT_FALSE(v.evidence.empty());
  EXPECT_NE(v.evidence[0].find("already"), std::string::npos);
}

TEST(LikesChecksTest, StateCacheFailsOnAStaleFinalKey) {
  LikesRun run = clean_run();
  run.final_state.redis_state[{1, 7}] = "0";
  EXPECT_FALSE(only(run, "like-state-cache").passed);
}

// LIKE-8 "whenever the key is present": a sampled state key of a pair certainly liked that reads
// "0" (a stale fill that stayed) fails, though no client read it; the right value passes.
TEST(LikesChecksTest, StateCacheFailsOnAStaleSampledKey) {
  LikesRun run = clean_run();
  StoreSnapshot s = run.samples.back();
  s.time_us = 5000;
  s.redis_state[{1, 7}] = "1";
  run.samples.push_back(s);
  EXPECT_TRUE(only(run, "like-state-cache").passed);
  run.samples.back().redis_state[{1, 7}] = "0";
  Verdict v = only(run, "like-state-cache");
  EXPECT_FALSE(v.passed);
  ASSERT_FALSE(v.evidence.empty());
  EXPECT_NE(v.evidence[0].find("sampled asset:like:1:7 = \"0\""), std::string::npos) << v.evidence[0];
}

TEST(LikesChecksTest, ExpirySafetyFailsWhenTheCountJumpsToOne) {
  LikesRun run = clean_run();
  for (int u = 10; u < 15; ++u) {
    run.history.push_back(op(100 + u, "like", 1, u, 100 + u, 0, 10, Outcome::kOk, "ok"));
    run.db_changes.insert(run.db_changes.begin(), dc(100 + u, true, 1, u, +1, true, 1));
    run.db_changes.insert(run.db_changes.begin() + 1, dc(100 + u, false, 1, u, +1, true, 1));
    run.final_state.db_rows[{1, u}] = 1;
    run.samples[0].db_rows[{1, u}] = 1;
  }
  // T = 6 after t=10; a sample at t=15 shows 1 (the key was lost and INCR restarted it).
  run.samples[0].redis_count[1] = 1;
  EXPECT_FALSE(only(run, "like-expiry-safety").passed);
  run.redis_grace.push_back({14, 31});  // inside a Redis restart's grace window: not judged
  EXPECT_TRUE(only(run, "like-expiry-safety").passed);
}

// The grace after a Redis restart lasts until a repair was possible for repair_us: an outage
// of the DB (or of every path to Redis) right after the restart extends it; a cache that stays
// stale once repairs were possible is judged again (and fails).
TEST(LikesChecksTest, GraceWindowEndsOnlyAfterARepairablePeriod) {
  GraceTracker g(/*repair_us=*/300, /*start_us=*/0);
  g.on_sample(100, false, true);
  EXPECT_TRUE(g.windows(1000).empty());  // no restart: no grace
  g.on_sample(200, true, true);          // Redis restarted since t=100, repair possible at once
  g.on_sample(300, false, true);
  g.on_sample(400, false, true);
  g.on_sample(500, false, true);  // 300 us of repairable time since 200
  ASSERT_EQ(g.windows(1000).size(), 1u);
  EXPECT_EQ(g.windows(1000)[0], std::make_pair(int64_t{100}, int64_t{500}));

  GraceTracker h(300, 0);
  h.on_sample(100, true, false);  // restarted; the DB is down
  h.on_sample(200, false, false);
  h.on_sample(300, false, true);   // repairable from 300
  h.on_sample(400, false, false);  // interrupted: starts over
  h.on_sample(500, false, true);
  h.on_sample(700, false, true);
  EXPECT_EQ(h.windows(2000), (std::vector<std::pair<int64_t, int64_t>>{{0, 2000}}));  // still open
  h.on_sample(800, true, true);  // another restart inside the window extends it
  h.on_sample(1000, false, true);
  h.on_sample(1100, false, true);
  EXPECT_EQ(h.windows(2000), (std::vector<std::pair<int64_t, int64_t>>{{0, 1100}}));

  // A stale sample after the window is judged: the checker fails on it.
  LikesRun run = clean_run();
  for (int u = 10; u < 15; ++u) {
    run.history.push_back(op(100 + u, "like", 1, u, 100 + u, 0, 10, Outcome::kOk, "ok"));
    run.db_changes.insert(run.db_changes.begin(), dc(100 + u, true, 1, u, +1, true, 1));
    run.db_changes.insert(run.db_changes.begin() + 1, dc(100 + u, false, 1, u, +1, true, 1));
    run.final_state.db_rows[{1, u}] = 1;
    run.samples[0].db_rows[{1, u}] = 1;
  }
  run.samples[0].time_us = 1200;
  run.samples[0].redis_count[1] = 1;
  run.redis_grace = h.windows(2000);
  EXPECT_FALSE(only(run, "like-expiry-safety").passed);
  run.samples[0].time_us = 1050;  // inside: not judged
  EXPECT_TRUE(only(run, "like-expiry-safety").passed);
}

TEST(LikesChecksTest, ExpirySafetyFailsWhenALegitUnlikeIsBlocked) {
  LikesRun run = clean_run();
  run.history.push_back(op(6, "unlike", 1, 7, 6, 40, 50, Outcome::kOk, "already"));
  EXPECT_FALSE(only(run, "like-expiry-safety").passed);
}

// CheckConsistency's `redisCount, _ :=` / `dbCount, _ :=`: a read error writes 0 over a right count.
TEST(LikesChecksTest, ReconciliationFailsOnWritingZeroAfterAReadError) {
  LikesRun run = clean_run();
  run.redis_writes.push_back(rw("SET", true, 1, 0, 0, true, 9, 70));
  Verdict v = only(run, "like-reconciliation");
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.invariants, std::vector<std::string>{"LIKE-10"});
}

// A like/unlike request's own count write (it names the pair's state key) is not a repair.
TEST(LikesChecksTest, ReconciliationJudgesOnlyRequestsThatNameNoStateKey) {
  LikesRun run = clean_run();
  run.redis_writes.push_back(rw("SET", true, 1, 0, 0, true, 9, 70, /*names_state=*/true));
  EXPECT_TRUE(only(run, "like-reconciliation").passed);
}

TEST(LikesChecksTest, IdempotenceFailsWhenAnUnlikeOfANeverLikedPairDecrements) {
  LikesRun run = clean_run();
  run.history.push_back(op(7, "unlike", 2, 9, 7, 40, 50, Outcome::kOk, "ok"));
  run.redis_writes.push_back(rw("DEL", false, 2, 9, std::nullopt, true, 8, 45));
  run.redis_writes.push_back(rw("DECR", true, 2, 0, -1, true, 8, 45));
  EXPECT_FALSE(only(run, "like-idempotence").passed);
}

TEST(LikesChecksTest, StateCacheFailsOnAStaleFillOverAConcurrentUnlike) {
  LikesRun run = clean_run();
  run.history.push_back(op(10, "unlike", 1, 7, 10, 40, 50, Outcome::kOk, "ok"));
  run.final_state.db_rows.clear();
  run.final_state.redis_state.clear();
  run.redis_writes.push_back(rw("SET", false, 1, 7, 1, true, 11, 70));  // "1" after the unlike
  EXPECT_FALSE(only(run, "like-state-cache").passed);
}

// A like answered ok at [0, 10] (committed at 5); an unlike left indeterminate (committed at 14, its
// cache update held back); a like answered ok at [20, 30] (committed at 25, cached at 26). The held
// back update then writes "0" at 60. The clients' intervals allow it (the unlike may take effect
// after the second like), the commit log does not: the unlike's transaction came before the like
// was invoked, so its "0" reverts the like.
LikesRun reverted_like_run() {
  LikesRun run = tiny_run(100);
  run.history.push_back(op(1, "like", 1, 7, 1, 0, 10, Outcome::kOk, "ok"));
  run.history.push_back(op(2, "unlike", 1, 7, 2, 12, -1, Outcome::kInfo, "timeout"));
  run.history.push_back(op(3, "like", 1, 7, 3, 20, 30, Outcome::kOk, "ok"));
  run.db_changes.push_back(dc(1, true, 1, 7, +1, true, 5));
  run.db_changes.push_back(dc(2, true, 1, 7, -1, true, 14));
  run.db_changes.push_back(dc(3, true, 1, 7, +1, true, 25));
  run.redis_writes.push_back(rw("SET", false, 1, 7, 1, true, 1, 6));
  run.redis_writes.push_back(rw("SET", false, 1, 7, 1, true, 3, 26));
  run.redis_writes.push_back(rw("SET", false, 1, 7, 0, true, 2, 60));
  StoreSnapshot s;
  s.time_us = 100;
  s.db_rows[{1, 7}] = 1;
  run.final_state = s;
  return run;
}

TEST(LikesChecksTest, StateCacheFailsOnAHeldBackWriteThatRevertsAnAcknowledgedLike) {
  const Verdict v = only(reverted_like_run(), "like-state-cache");
  EXPECT_FALSE(v.passed);
  ASSERT_FALSE(v.evidence.empty());
  EXPECT_NE(v.evidence[0].find("reverts #3"), std::string::npos) << v.evidence[0];
  // Before the like was answered the write may still precede its effect: not judged by this rule.
  LikesRun early = reverted_like_run();
  early.redis_writes.back().time_us = 28;
  EXPECT_TRUE(only(early, "like-state-cache").passed);
  // Null faults change nothing.
  LikesRun nulls = reverted_like_run();
  add_null_faults(nulls, 40);
  EXPECT_FALSE(only(nulls, "like-state-cache").passed);
}

TEST(LikesChecksTest, AWriteAskedForByALaterLikeIsNotAReversion) {
  // An unlike invoked after the like (still in flight at 60) may have written "0" itself, cache
  // first (the seed's 3.2 deletes the key before the DB write).
  LikesRun run = reverted_like_run();
  run.history.push_back(op(4, "unlike", 1, 7, 4, 50, -1, Outcome::kInfo, "timeout"));
  EXPECT_TRUE(only(run, "like-state-cache").passed);
}

TEST(LikesChecksTest, AStateAGroupCommitPassedThroughIsNoReversion) {
  // The second like's transaction shares its instant (25) with an unlike and a third like (one group
  // commit): "0" was the row's state at 25 after the like, so the unlike's update may write it.
  LikesRun run = reverted_like_run();
  run.history.push_back(op(4, "unlike", 1, 7, 4, 15, -1, Outcome::kInfo, "timeout"));
  run.history.push_back(op(5, "like", 1, 7, 5, 16, -1, Outcome::kInfo, "timeout"));
  run.db_changes.push_back(dc(3, true, 1, 7, -1, true, 25));
  run.db_changes.push_back(dc(3, true, 1, 7, +1, true, 25));
  EXPECT_TRUE(only(run, "like-state-cache").passed);
}

TEST(LikesChecksTest, TheAcknowledgedRequestsOwnStateIsNoReversion) {
  // The second like changed nothing at 25 (a group commit ran the unlike's delete after it at the
  // same instant, so the replay shows only the row leaving): its "1" is still its own state.
  LikesRun run = reverted_like_run();
  run.db_changes.erase(run.db_changes.begin() + 1);      // the first unlike never committed
  run.db_changes[1] = dc(3, true, 1, 7, +1, false, 25);  // the second like: the row was there
  run.db_changes.push_back(dc(4, true, 1, 7, -1, true, 25));
  run.history.push_back(op(4, "unlike", 1, 7, 4, 15, -1, Outcome::kInfo, "timeout"));
  run.redis_writes.back().after = 1;
  run.final_state.db_rows.clear();
  EXPECT_TRUE(only(run, "like-state-cache").passed);
  // Its opposite, with nothing since the like that asked for it, is still a reversion.
  run.history.pop_back();
  run.redis_writes.back().after = 0;
  run.db_changes.pop_back();
  run.final_state.db_rows[{1, 7}] = 1;
  EXPECT_FALSE(only(run, "like-state-cache").passed);
}

// An eviction excuses no reversion: an evicted version key leaves the value's writers a floor
// to respect (a like/unlike's update deletes the value; a fill or repair needs its lease).
TEST(LikesChecksTest, AnEvictionExcusesNoReversion) {
  LikesRun run = reverted_like_run();
  sim::FaultRecord evicted = record(sim::FaultKind::kEviction, "redis", 40);
  evicted.detail = "asset:like_ver:1:7";
  run.faults.push_back(evicted);
  const Verdict v = only(run, "like-state-cache");
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.exempted(), 0);
}

// The degradation budget: an indeterminate like with no fault fails; a crash of the DB while it
// ran exempts it, naming the crash.
TEST(LikesChecksTest, DegradationNeedsAFaultOnThePath) {
  LikesRun run = clean_run();
  run.history.push_back(op(11, "like", 3, 7, 11, 40, 50, Outcome::kInfo, "timeout"));
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
  run.faults.push_back(crash_of("db", 45));
  Verdict v = only(run, "like-degradation-budget");
  EXPECT_TRUE(v.passed);
  ASSERT_EQ(v.exemptions.size(), 1u);
  EXPECT_NE(v.exemptions[0].first.find("crash of db"), std::string::npos);
}

// A retry carries its request id: its indeterminate answer ("applied before") is explained by a
// fault that hit an earlier attempt of the same request, not by one that hit another request.
TEST(LikesChecksTest, DegradationJudgesARetryFromItsFirstAttempt) {
  LikesRun run = clean_run();
  run.history.push_back(op(11, "like", 3, 7, 11, 40, 50, Outcome::kInfo, "timeout"));
  run.history.push_back(op(12, "like", 3, 7, 12, 100'000'000, 100'000'100, Outcome::kInfo, "request applied before"));
  run.faults.push_back(crash_of("db", 45));
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);  // request 12 never met the crash
  run.history.back() = op(12, "like", 3, 7, 11, 100'000'000, 100'000'100, Outcome::kInfo, "request applied before");
  EXPECT_TRUE(only(run, "like-degradation-budget").passed);  // a retry of request 11
}

// Issue 42: only a fault that touched the request excuses its degraded answer. A Redis error reply
// to its own command does; the same reply to another operation's command, or to a background job's,
// does not, nor do null faults; a pause of its path excuses it only for the pause's duration.
TEST(LikesChecksTest, DegradationIsExcusedOnlyByAFaultThatTouchedTheRequest) {
  LikesRun run = clean_run();
  run.history.push_back(op(11, "like", 3, 7, 11, 40, 50, Outcome::kInfo, "committed; cache update failed"));
  add_null_faults(run, 41);
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
  const std::string cmd = "replica-1: EVALSHA apply 6 asset:like:3:7 asset:like_ver:3:7 asset:like_count:3";
  run.faults.push_back(record(sim::FaultKind::kRedisError, "redis", 45, /*cause=*/1, cmd));  // another op's
  run.faults.push_back(record(sim::FaultKind::kRedisError, "redis", 46, /*cause=*/0, cmd));  // a job's
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
  run.faults.push_back(record(sim::FaultKind::kRedisError, "redis", 47, /*cause=*/11, cmd));
  Verdict v = only(run, "like-degradation-budget");
  EXPECT_TRUE(v.passed);
  ASSERT_EQ(v.exempted(), 1);
  EXPECT_NE(v.exemptions[0].first.find("operation #11"), std::string::npos) << v.exemptions[0].first;

  LikesRun paused = clean_run();
  paused.history.push_back(op(11, "like", 3, 7, 11, 40, 50, Outcome::kInfo, "timeout"));
  paused.faults.push_back(record(sim::FaultKind::kPause, "replica-1", 20, 0, "", /*duration_us=*/15));  // until 35
  EXPECT_FALSE(only(paused, "like-degradation-budget").passed);  // over before the request: no slack
  paused.faults.push_back(record(sim::FaultKind::kPause, "replica-1", 45, 0, "", 3));
  EXPECT_TRUE(only(paused, "like-degradation-budget").passed);
}

// A replica's group commit sends many requests' writes in one transaction under the cause of the
// request that started its committer. An I/O error that failed that transaction touched every
// write the commit log shows in it (the pair, and the request id the statement binds), and nothing
// else: a request whose write was not in it still fails, and so does one in a transaction the
// error did not fail.
TEST(LikesChecksTest, AFailedGroupCommitTouchesEveryWriteItCarried) {
  LikesRun run = clean_run();
  run.history.push_back(op(11, "like", 3, 7, 11, 40, 50, Outcome::kInfo, "db: io_error"));
  DbChange batch = dc(9, true, 3, 7, +1, false, 45);  // op 11's write, in op 20's transaction
  batch.failed = true;
  batch.cause = 20;
  batch.request_id = 11;
  run.db_changes.push_back(batch);
  run.faults.push_back(record(sim::FaultKind::kStorageError, "db", 45, /*cause=*/21));  // another transaction's
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
  run.faults.push_back(record(sim::FaultKind::kStorageError, "db", 45, /*cause=*/20));
  EXPECT_TRUE(only(run, "like-degradation-budget").passed);
  run.db_changes.back().request_id = 12;  // the transaction carried another request of the pair
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
  run.db_changes.back().request_id = 11;
  run.db_changes.back().user = 8;  // ... or another pair
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
}

// A fault that refused a group commit's transaction, or lost its reply, hit every write the
// transaction carried: the requests whose ids its statements bind (the request the network
// recorded). A write it did not carry, one answered before the fault, and one whose id only
// appears inside another number are not excused.
TEST(LikesChecksTest, ARefusedGroupCommitTouchesTheWritesItsRequestCarried) {
  LikesRun run = clean_run();
  run.history.push_back(op(11, "like", 3, 7, 282574488338435, 40, 50, Outcome::kFail, "db: unavailable"));
  sim::FaultRecord refused =
      record(sim::FaultKind::kCallBroken, "replica-1", 45, /*cause=*/20,
             "sql: sql txn replica-1#9 | UPDATE assets SET like_count = like_count + 1 WHERE id = ? AND NOT EXISTS "
             "(SELECT 1 FROM like_requests WHERE request_id = ?) [3, 282574488338436] | INSERT INTO like_requests "
             "(request_id) VALUES (?) [282574488338436]");
  refused.peer_node = refused.peer_process = "db";
  refused.detail = "refused at a fail point";
  run.faults.push_back(refused);
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);  // it carried another request
  run.faults.back().message += " | INSERT INTO like_requests (request_id) VALUES (?) [282574488338435]";
  Verdict v = only(run, "like-degradation-budget");
  EXPECT_TRUE(v.passed);
  ASSERT_EQ(v.exempted(), 1);
  EXPECT_NE(v.exemptions[0].first.find("carried this write"), std::string::npos) << v.exemptions[0].first;
  run.faults.back().time_us = 55;  // after the request was answered: not what failed it
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
  run.faults.back().time_us = 45;
  run.faults.back().message = "sql: sql txn replica-1#9 | INSERT INTO t (v) VALUES (?) [1282574488338435]";
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
}

// A fault that lost a transaction's request held its replica's committer until the call timed out
// (002:L237, L352-L353: writes wait behind the batch ahead): a request whose write went in the
// committer's next transaction (same replica, same cause) waited behind the fault. The same fault
// does not excuse a request invoked after that transaction ran, one whose write went through
// another replica, or one in a later committer's transaction.
TEST(LikesChecksTest, AGroupCommitHeldByALostCallHoldsTheWritesQueuedBehindIt) {
  LikesRun run = clean_run();
  run.replicas = {"replica-1", "replica-2"};
  run.history.push_back(op(11, "unlike", 3, 7, 11, 44, 54, Outcome::kInfo, "timeout"));
  sim::FaultRecord lost = record(sim::FaultKind::kMessageLost, "replica-1", 42, /*cause=*/20,
                                 "sql: sql txn replica-1#5 | UPDATE assets SET like_count = like_count - 1 [3]");
  lost.peer_node = lost.peer_process = "db";
  lost.detail = "partition";
  run.faults.push_back(lost);
  DbChange next = dc(9, true, 3, 7, -1, true, 60);  // the committer's next transaction, with op 11's write
  next.client = "replica-1";
  next.cause = 20;
  next.request_seq = 6;
  next.request_id = 11;
  run.db_changes.push_back(next);
  Verdict v = only(run, "like-degradation-budget");
  EXPECT_TRUE(v.passed);
  ASSERT_EQ(v.exempted(), 1);
  EXPECT_NE(v.exemptions[0].first.find("group commit"), std::string::npos) << v.exemptions[0].first;
  run.history.back().complete_us = 65;  // its app gave up after its write reached the DB: still held
  EXPECT_TRUE(only(run, "like-degradation-budget").passed);
  run.history.back().invoke_us = 61;  // a like of the pair invoked after the transaction: never held
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
  run.history.back().invoke_us = 44;
  run.history.back().complete_us = 54;
  run.db_changes.back().client = "replica-2";  // went through a replica the fault never held
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
  run.db_changes.back().client = "replica-1";
  run.db_changes.back().cause = 21;  // a later committer of replica-1, not the one the fault held
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
}

// The same hold when the held call ends without a next transaction (swarm-hardened-impatient seed
// 10096: a DB crash broke it, and the writes queued behind it were failed unsent): a write the
// network delivered to the held replica between the fault and the end of its call waited behind
// it. One delivered to another replica, or after the call ended, did not; and without a record
// of when the committer was free again, the hold has no known end and excuses nothing.
TEST(LikesChecksTest, AWriteDeliveredToAHeldCommitterWaitedEvenIfItsBatchNeverRan) {
  LikesRun run = clean_run();
  run.replicas = {"replica-1", "replica-2"};
  run.history.push_back(op(11, "unlike", 3, 7, 11, 44, 54, Outcome::kInfo, "timeout"));
  run.history.back().delivered = {{45, "replica-1"}};
  sim::FaultRecord lost = record(sim::FaultKind::kMessageLost, "replica-1", 42, /*cause=*/20,
                                 "sql: sql txn replica-1#5 | UPDATE assets SET like_count = like_count - 1 [3]");
  lost.peer_node = lost.peer_process = "db";
  lost.detail = "partition";
  run.faults.push_back(lost);
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);  // the hold's end is unknown
  sim::FaultRecord broken = lost;
  broken.kind = sim::FaultKind::kCallBroken;
  broken.time_us = 70;
  broken.detail = "server crashed";
  run.faults.push_back(broken);
  Verdict v = only(run, "like-degradation-budget");
  EXPECT_TRUE(v.passed) << (v.evidence.empty() ? "" : v.evidence[0]);
  ASSERT_EQ(v.exempted(), 1);
  EXPECT_NE(v.exemptions[0].first.find("waited behind it"), std::string::npos) << v.exemptions[0].first;
  // An earlier transaction of the committer that a paused DB executed late (its wire number is
  // below the held one's; swarm-hardened-seed-ttls seed 15850) did not free it; a later one did.
  DbChange late = dc(9, true, 4, 8, +1, true, 43);
  late.client = "replica-1";
  late.cause = 20;
  late.request_seq = 4;
  run.db_changes.push_back(late);
  EXPECT_TRUE(only(run, "like-degradation-budget").passed);
  run.db_changes.back().request_seq = 6;
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
  run.db_changes.pop_back();
  run.history.back().delivered = {{45, "replica-2"}};  // reached a replica the fault never held
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
  run.history.back().delivered = {{71, "replica-1"}};  // reached it after the held call ended
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
  run.history.back().delivered = {{45, "replica-1"}};
  run.faults.back().cause = 21;  // another committer's call broke: the held one's end is unknown
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
  // The held replica crashed (swarm-hardened-seed-ttls seed 5095): its committer died with it, so
  // the hold ended there; a write delivered to it before the crash waited, one after did not.
  run.faults.push_back(record(sim::FaultKind::kCrash, "replica-1", 60));
  run.faults.push_back(record(sim::FaultKind::kRestart, "replica-1", 62));
  EXPECT_TRUE(only(run, "like-degradation-budget").passed);
  run.history.back().delivered = {{63, "replica-1"}};
  run.history.back().invoke_us = 63;
  run.history.back().complete_us = 66;
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
}

// An I/O error while the DB opens its database at boot (it names no operation) keeps the DB from
// serving until it executes its next request: a request refused meanwhile is excused, one after
// the DB served again is not.
TEST(LikesChecksTest, ADbThatCouldNotOpenExcusesOnlyUntilItServesAgain) {
  LikesRun run = clean_run();
  run.history.push_back(op(11, "count", 3, 0, 11, 42, 46, Outcome::kFail, "db: unavailable"));
  run.faults.push_back(record(sim::FaultKind::kStorageError, "db", 40));
  run.db_executed_us = {5, 13, 48};
  EXPECT_TRUE(only(run, "like-degradation-budget").passed);
  run.history.back().invoke_us = 50;
  run.history.back().complete_us = 55;
  EXPECT_FALSE(only(run, "like-degradation-budget").passed);
}

// Asset 1: user 7's like commits at 5 (T = 1), user 8's at 100 (T = 2); the cached count, 2 from
// 101, is sampled at 300 as 1: stale since 100, far beyond one request's lag (10 us).
LikesRun stale_count_run() {
  LikesRun run = tiny_run(1000);
  run.history.push_back(op(1, "like", 1, 7, 1, 0, 10, Outcome::kOk, "ok"));
  run.history.push_back(op(2, "like", 1, 8, 2, 95, 110, Outcome::kOk, "ok"));
  run.db_changes.push_back(dc(1, true, 1, 7, +1, true, 5));
  run.db_changes.push_back(dc(2, true, 1, 8, +1, true, 100));
  StoreSnapshot s;
  s.time_us = 300;
  s.db_read = false;  // only the cache is sampled here
  s.redis_count[1] = 1;
  run.samples.push_back(s);
  run.final_state.time_us = 1000;
  run.final_state.db_read = false;
  return run;
}

// Issue 42 (like-expiry-safety): a stale cached count is excused only by a fault since it went
// stale that can have kept it — a duration fault on the stores or replicas, or an instant fault
// that hit a write of that count — and only for one reconciliation after it (lag + sync period +
// repair window = 50 us here), stretched by the time duration faults held the stores. Null faults, a refused read of the key, a write of another asset's
// count, a fault before the count went stale or one long over excuse nothing; a clock fault
// stretches the reach by as far as it moved the clock, and no more.
TEST(LikesChecksTest, AStaleCountIsExcusedOnlyByAFaultSinceItWentStale) {
  const std::string apply = "replica-1: EVALSHA apply 6 asset:like:1:8 asset:like_ver:1:8 asset:like_count:1 x";
  LikesRun run = stale_count_run();
  EXPECT_FALSE(only(run, "like-expiry-safety").passed);
  add_null_faults(run, 260);
  EXPECT_FALSE(only(run, "like-expiry-safety").passed);
  run.faults.push_back(record(sim::FaultKind::kRedisError, "redis", 270, 0, "replica-1: GET asset:like_count:1"));
  run.faults.push_back(record(sim::FaultKind::kRedisError, "redis", 271, 0, "replica-1: SET asset:like_count:12 4"));
  run.faults.push_back(record(sim::FaultKind::kRedisError, "redis", 90, 0, apply));  // before it went stale
  run.faults.push_back(record(sim::FaultKind::kPause, "redis", 120, 0, "", 100));    // over at 220
  EXPECT_FALSE(only(run, "like-expiry-safety").passed);
  LikesRun refused = run;
  refused.faults.push_back(record(sim::FaultKind::kRedisError, "redis", 275, 0, apply));
  Verdict v = only(refused, "like-expiry-safety");
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.exempted(), 1);
  // A pause excuses the staleness only for as long as it held Redis: 20 us of it do not explain
  // 200 us; with the one over at 220, 65 us more (225..290) do.
  LikesRun paused = run;
  paused.faults.push_back(record(sim::FaultKind::kPause, "redis", 240, 0, "", 20));
  EXPECT_FALSE(only(paused, "like-expiry-safety").passed);
  paused.faults.back() = record(sim::FaultKind::kPause, "redis", 225, 0, "", 65);
  EXPECT_TRUE(only(paused, "like-expiry-safety").passed);
  // The write refused at 120 is 180 us before the sample: a replica clock jump of 200 us inside the
  // reach stretches it that far; a 0 ms one does not.
  LikesRun jumped = run;
  jumped.faults.push_back(record(sim::FaultKind::kRedisError, "redis", 120, 0, apply));
  EXPECT_FALSE(only(jumped, "like-expiry-safety").passed);
  sim::FaultRecord jump = record(sim::FaultKind::kClockJump, "replica-1", 280);
  jumped.faults.push_back(jump);
  EXPECT_FALSE(only(jumped, "like-expiry-safety").passed);
  jumped.faults.back().value = 200;
  EXPECT_TRUE(only(jumped, "like-expiry-safety").passed);
}

// A repair of the count goes through keys named after it (its version, its lease): a refusal of
// the repair's lease (LK-FILL-LEASE) refuses the repair and excuses the stale count; the same
// refusal for another asset, or a refused read of the count's version, does not.
TEST(LikesChecksTest, ARefusedRepairOfTheCountExcusesItsStaleness) {
  LikesRun run = stale_count_run();
  run.faults.push_back(record(sim::FaultKind::kRedisError, "redis", 270, 0,
                              "replica-1: EVALSHA lease 2 asset:like_count_lease:2 asset:like_count_lease:12 t 10000"));
  run.faults.push_back(record(sim::FaultKind::kRedisError, "redis", 271, 0,
                              "replica-1: MGET asset:like_count_ver:1 asset:like_count_ver:2"));
  EXPECT_FALSE(only(run, "like-expiry-safety").passed);
  run.faults.push_back(record(sim::FaultKind::kRedisError, "redis", 272, 0,
                              "replica-1: EVALSHA lease 2 asset:like_count_lease:1 asset:like_count_lease:2 t 10000"));
  EXPECT_TRUE(only(run, "like-expiry-safety").passed);
}

// swarm-hardened-fill-races seed 368: a clog held a replica's transaction 3.9 s, the replica gave
// up on it (no cache update follows a call that timed out), then the DB committed it and the count
// went stale until the next sync. The fault that hit the transaction that made the count stale (a
// record naming its cause, at its replica or the DB, held until the commit) excuses it for one
// reconciliation after the commit; the same record for another transaction's cause, or one over
// long before the commit, does not.
TEST(LikesChecksTest, AFaultThatHeldTheCommitThatMadeTheCountStaleExcusesIt) {
  LikesRun run = stale_count_run();
  run.samples[0].time_us = 140;  // 40 us after the commit at 100: within one reconciliation (50 us)
  run.db_changes[1].cause = 20;
  run.db_changes[1].client = "replica-1";
  sim::FaultRecord held = record(sim::FaultKind::kDelayed, "replica-1", 40, /*cause=*/21, "sql: sql txn replica-1#9");
  held.peer_node = held.peer_process = "db";
  held.detail = "clog";
  held.value = 59;  // delivered at 99
  run.faults.push_back(held);
  EXPECT_FALSE(only(run, "like-expiry-safety").passed);  // another committer's transaction
  run.faults.back().cause = 20;
  run.faults.back().value = 5;  // over at 45, long before the commit's SQL call (timeout 10 us)
  EXPECT_FALSE(only(run, "like-expiry-safety").passed);
  run.faults.back().value = 59;
  Verdict v = only(run, "like-expiry-safety");
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.exempted(), 1);
  run.samples[0].time_us = 300;  // 200 us after the commit: beyond one reconciliation
  EXPECT_FALSE(only(run, "like-expiry-safety").passed);
}

// Issue 42 (like-reconciliation): a repair that writes a count older than its healthy window (its
// DB read and Redis write within their timeouts, 20 us here) is excused only when a duration fault
// on its own path (the writing replica, the DB, Redis) held it that long: the window widens by what
// the fault covered. A pause of another replica, or null faults, excuse nothing.
TEST(LikesChecksTest, AnOldRepairIsExcusedOnlyByAFaultThatHeldItsPath) {
  LikesRun run = stale_count_run();
  run.samples.clear();
  run.redis_writes.push_back(rw("SET", true, 1, 0, 2, true, 1, 101, /*names_state=*/true));  // the like's apply
  run.redis_writes.push_back(rw("SET", true, 1, 0, 1, true, 2, 300));  // a repair writes 1 over 2: T = 2
  EXPECT_FALSE(only(run, "like-reconciliation").passed);
  add_null_faults(run, 200);
  EXPECT_FALSE(only(run, "like-reconciliation").passed);
  sim::FaultRecord other = record(sim::FaultKind::kPause, "replica-2", 90, 0, "", 200);
  run.faults.push_back(other);
  EXPECT_FALSE(only(run, "like-reconciliation").passed);
  run.faults.push_back(record(sim::FaultKind::kPause, "replica-1", 90, 0, "", 200));  // held the repair 90..290
  Verdict v = only(run, "like-reconciliation");
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.exempted(), 1);
}

// A DB resuming from a pause runs its queued requests at one instant; a read among them sees the
// values in between (swarm-hardened seed 73: a warm-up read count 8 between a like and two unlikes
// that ran at 9.256 s). T(a) keeps every value it passed through at an instant, and at(t) is the
// value after all of them.
TEST(LikesChecksTest, TruthTimelineKeepsEveryValueOfOneInstant) {
  LikesRun run = tiny_run(1000);
  run.db_changes.push_back(dc(1, true, 1, 7, +1, true, 5));
  run.db_changes.push_back(dc(2, true, 1, 8, +1, true, 50));  // T = 2 ...
  run.db_changes.push_back(dc(3, true, 1, 7, -1, true, 50));  // ... then 1 ...
  run.db_changes.push_back(dc(4, true, 1, 8, -1, true, 50));  // ... then 0, all at t = 50
  const TruthTimeline t(run);
  EXPECT_EQ(t.at(1, 49), 1);
  EXPECT_EQ(t.at(1, 50), 0);
  EXPECT_EQ(t.over(1, 50, 60).hi, 2);
  EXPECT_EQ(t.over(1, 50, 60).lo, 0);
  EXPECT_EQ(t.over(1, 51, 60).hi, 0);
  EXPECT_EQ(t.left_at(1, 2, 60), 50);
  EXPECT_EQ(t.left_at(1, 1, 60), 50);
  EXPECT_EQ(t.left_at(1, 5, 60), std::nullopt);
}

// A power loss of the DB takes commits the replay holds until a sample shows it: a repair that read
// the DB after the reboot writes a count the replay does not know yet. It is exempted, naming the
// crash, only while the loss is unseen; without a crash it fails, as it does once the replay was
// re-based.
TEST(LikesChecksTest, ARepairAfterALostCommitIsExemptedOnlyUntilTheReplaySeesIt) {
  LikesRun run = tiny_run(1000);
  run.history.push_back(op(1, "like", 1, 7, 1, 0, 10, Outcome::kOk, "ok"));
  run.db_changes.push_back(dc(1, true, 1, 7, +1, true, 5));
  run.redis_writes.push_back(rw("SET", true, 1, 0, 1, true, 1, 6, /*names_state=*/true));
  run.redis_writes.push_back(rw("SET", true, 1, 0, 0, true, 2, 300));  // read the rebooted DB: 0
  StoreSnapshot s;  // the first sample after the reboot shows the row gone
  s.time_us = 400;
  s.db_read = true;
  run.samples.push_back(s);
  run.final_state = s;
  run.final_state.time_us = 1000;
  EXPECT_FALSE(only(run, "like-reconciliation").passed);  // a loss without a crash: no fault
  run.faults.push_back(crash_of("db", 100));
  run.faults.push_back(record(sim::FaultKind::kRestart, "db", 120));
  Verdict v = only(run, "like-reconciliation");
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.exempted(), 1);
  run.redis_writes.back().time_us = 500;  // after the replay saw the loss, 0 is T(a): no exemption
  v = only(run, "like-reconciliation");
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.exempted(), 0);
  run.redis_writes.push_back(rw("SET", true, 1, 0, 1, true, 3, 600));  // the lost count written back
  EXPECT_FALSE(only(run, "like-reconciliation").passed);
}

// A DB power loss (synchronous below FULL) that drops an acknowledged like is the DB's, not the
// service's: the pair is exempted, naming the crash; without the crash it fails.
TEST(LikesChecksTest, DurabilityExemptsACommitTheDbLost) {
  LikesRun run = clean_run();
  run.final_state.db_rows.clear();
  run.final_state.db_like_count[1] = 0;
  EXPECT_FALSE(only(run, "like-durability").passed);
  run.faults.push_back(crash_of("db", 50));
  Verdict v = only(run, "like-durability");
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.exempted(), 1);
}

// T(a) is the replayed row count, re-based on samples (a lost commit).
TEST(LikesChecksTest, TruthTimelineReplaysRowsAndRebasesOnSamples) {
  LikesRun run = clean_run();
  TruthTimeline t(run);
  EXPECT_EQ(t.at(1, 11), 0);
  EXPECT_EQ(t.at(1, 12), 1);
  EXPECT_EQ(t.at(2, 5), 1);
  EXPECT_EQ(t.at(2, 25), 0);
  EXPECT_EQ(t.over(2, 0, 30).lo, 0);
  EXPECT_EQ(t.over(2, 0, 30).hi, 1);
  EXPECT_FALSE(t.rebased(0, 1000));
  run.final_state.db_rows.clear();
  TruthTimeline lost(run);
  EXPECT_TRUE(lost.rebased(0, 1000));
  EXPECT_EQ(lost.at(1, 100), 0);
}

// A DB power loss shows only when the DB is read again: in a sample after it came back, or in a
// commit that contradicts the replay. The loss is dated at the DB's first crash after the pair's
// last change, not its latest crash before the observation (swarm-hardened-none-normal seeds 16818
// and 19418: the DB crashed again before the first sample after its reboot).
TEST(LikesChecksTest, ALostCommitIsDatedAtTheFirstCrashAfterIt) {
  LikesRun run;
  run.db_changes.push_back(dc(1, true, 1, 7, +1, true, 10));
  run.faults.push_back(crash_of("db", 20));
  run.faults.push_back(crash_of("db", 40));
  StoreSnapshot s;  // the first readable sample, after both crashes: the row is gone
  s.time_us = 50;
  s.db_read = true;
  run.samples.push_back(s);
  run.final_state = s;
  run.final_state.time_us = 100;
  run.end_us = 100;
  TruthTimeline t(run);
  EXPECT_EQ(t.lost_at({1, 7}, 0), 20);
  EXPECT_TRUE(t.any_lost(1, 0, 30));
  // Without a crash the loss is dated where it was seen (and no fault explains it).
  run.faults.clear();
  EXPECT_EQ(TruthTimeline(run).lost_at({1, 7}, 0), 50);
}

// swarm-hardened-none-normal seeds 6095 and 14402 (LIKE-8): a power loss of the DB took an
// acknowledged like; after the reboot a state read answered "not liked" from the DB, and a new
// like re-inserted the row before the next sample, so no sample ever disagreed with the replay.
// The re-insert itself shows the loss: the read is exempted, naming the crash; without a crash
// the same history fails.
TEST(LikesChecksTest, ACommitThatContradictsTheReplayShowsALostCommit) {
  LikesRun run = tiny_run(1000);
  run.history.push_back(op(1, "like", 1, 7, 1, 0, 10, Outcome::kOk, "ok"));
  run.history.push_back(op(2, "state", 1, 7, 2, 300, 310, Outcome::kOk, "state=0"));
  run.history.push_back(op(3, "like", 1, 7, 3, 320, 330, Outcome::kOk, "ok"));
  run.db_changes.push_back(dc(1, true, 1, 7, +1, true, 5));
  run.db_changes.push_back(dc(2, true, 1, 7, +1, true, 325));  // inserted again: it was gone
  StoreSnapshot s;
  s.time_us = 400;
  s.db_read = true;
  s.db_rows[{1, 7}] = 1;
  s.db_like_count[1] = 1;
  run.final_state = s;
  run.final_state.time_us = 1000;
  run.final_state.redis_state[{1, 7}] = "1";
  EXPECT_FALSE(only(run, "like-state-cache").passed);
  EXPECT_EQ(TruthTimeline(run).lost_at({1, 7}, 0), 325);
  run.faults.push_back(crash_of("db", 100));
  EXPECT_EQ(TruthTimeline(run).lost_at({1, 7}, 0), 100);
  const Verdict v = only(run, "like-state-cache");
  EXPECT_TRUE(v.passed);
  EXPECT_GE(v.exempted(), 1);
}

// swarm-hardened-none-normal seed 9710 (LIKE-6, LIKE-7, LIKE-9): a DB resumed from a pause and ran
// its queued requests at one instant, the instant a sample read it, before them. Replaying every
// commit dated at or before the sample made the sample disagree: a "loss" without a crash, which no
// fault explains, so the pair was judged though a later power loss had taken its row. A sample
// re-bases after the commits it saw (StoreSnapshot::db_seq): the only loss is the crash's.
TEST(LikesChecksTest, ASampleAtTheInstantOfACommitSeesOnlyTheCommitsBeforeIt) {
  LikesRun run = tiny_run(1000);
  run.history.push_back(op(1, "like", 1, 7, 1, 90, 110, Outcome::kOk, "ok"));
  run.db_changes.push_back(dc(1, true, 1, 7, +1, true, 100));
  run.db_changes.push_back(dc(1, false, 1, 0, +1, true, 100));
  StoreSnapshot before;  // read at t=100, before commit 1 of that instant ran
  before.time_us = 100;
  before.db_seq = 0;
  StoreSnapshot after = before;
  after.time_us = 200;
  after.db_seq = 1;
  after.db_rows[{1, 7}] = 1;
  after.db_like_count[1] = 1;
  run.samples = {before, after};
  run.faults.push_back(crash_of("db", 300));  // a power loss takes commit 1
  run.final_state = before;
  run.final_state.time_us = 1000;
  run.final_state.db_seq = 1;
  const TruthTimeline t(run);
  EXPECT_FALSE(t.rebased(0, 250));
  EXPECT_EQ(t.lost_at({1, 7}, 0), 300);
  Verdict v = only(run, "like-durability");
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.exempted(), 1);
  // Ordered by time alone, the sample at t=100 shows a loss no fault explains: the pair is judged.
  for (StoreSnapshot& s : run.samples) s.db_seq.reset();
  EXPECT_EQ(TruthTimeline(run).lost_at({1, 7}, 0), 100);
  EXPECT_FALSE(only(run, "like-durability").passed);
}

// swarm-hardened seed 10669 (LIKE-11 before issue 10): a like whose first attempt timed out, an
// acknowledged unlike, then the like's retry (same request id) answered ok. The retry's ok must be
// an effect inside the retry's own interval: the pair ends liked. Hardened answered the retry with
// its first attempt's outcome (LK-JOIN-DUPLICATE), an effect before the unlike: the row was gone.
TEST(LikesChecksTest, ARetrysAcknowledgementIsAnEffectInsideTheRetry) {
  LikesRun run;
  run.replicas = {"replica-1"};
  run.end_us = 1000;
  run.history.push_back(op(1, "like", 3, 1300, 13, 0, 500, Outcome::kInfo, "timeout"));
  run.history.push_back(op(2, "unlike", 3, 1300, 17, 600, 650, Outcome::kOk, "ok"));
  run.history.push_back(op(3, "like", 3, 1300, 13, 700, 750, Outcome::kOk, "ok"));  // the retry
  run.final_state.time_us = 1000;
  run.final_state.db_like_count[3] = 0;  // the row is gone: the retry's "ok" was the first attempt's
  EXPECT_TRUE(build_model(run).possible_final(3, 1300).only(true));
  EXPECT_FALSE(only(run, "like-per-user-order").passed);
  EXPECT_FALSE(only(run, "like-durability").passed);
  run.final_state.db_rows[{3, 1300}] = 1;
  EXPECT_TRUE(only(run, "like-per-user-order").passed);
}

TEST(LikesChecksTest, UnknownPropertyIsAFailedVerdict) { EXPECT_FALSE(only(clean_run(), "no-such-thing").passed); }

}  // namespace
}  // namespace fl::likes::props
