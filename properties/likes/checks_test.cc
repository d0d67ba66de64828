// Every likes checker passes on a clean run and FAILS on a run built to violate its invariant.
#include "properties/likes/checks.h"

#include <gtest/gtest.h>

namespace fl::likes::props {
namespace {

HistoryOp op(uint64_t id, std::string kind, int64_t asset, int64_t user, uint64_t req, int64_t s, int64_t e,
             Outcome o, std::string result) {
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

EffectRecord eff(EffectKind k, int64_t asset, int64_t user, int64_t value, uint64_t req, std::string source,
                 int64_t t) {
  EffectRecord r;
  r.effect = Effect{k, asset, user, value, true, req, std::move(source), t};
  r.start_us = t;
  r.end_us = t + 1;
  return r;
}

// User 7 likes asset 1 at [0,10] and reads its count at [20,30]; everything consistent.
LikesRun clean_run() {
  LikesRun run;
  run.history.push_back(op(1, "like", 1, 7, 1, 0, 10, Outcome::kOk, "ok"));
  run.history.push_back(op(2, "count", 1, 0, 2, 20, 30, Outcome::kOk, "count=1"));
  run.history.push_back(op(3, "state", 1, 7, 3, 20, 30, Outcome::kOk, "state=1"));
  run.effects.push_back(eff(EffectKind::kRedisCountDelta, 1, 7, +1, 1, "like", 5));
  run.effects.push_back(eff(EffectKind::kDbCountDelta, 1, 7, +1, 1, "async-like", 12));
  run.effects.push_back(eff(EffectKind::kRedisCountWrite, 1, 0, 1, 0, "reconcile", 60));
  // User 8 likes then unlikes asset 2.
  run.history.push_back(op(8, "like", 2, 8, 8, 0, 10, Outcome::kOk, "ok"));
  run.history.push_back(op(9, "unlike", 2, 8, 9, 20, 30, Outcome::kOk, "ok"));
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

Verdict only(const LikesRun& run, const std::string& name) {
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

TEST(LikesChecksTest, SingleEffectFailsOnDoubleCountedDoubleTap) {
  LikesRun run = clean_run();
  run.history.push_back(op(4, "like", 1, 7, 4, 1, 9, Outcome::kOk, "ok"));
  run.effects.push_back(eff(EffectKind::kRedisCountDelta, 1, 7, +1, 4, "like", 6));
  EXPECT_FALSE(only(run, "like-single-effect").passed);
}

// An intent closed by a certain zero delta (the write changed nothing) leaves the pair judged; an
// intent left open makes it unknown (skipped). A second counted like of the pair then fails.
TEST(LikesChecksTest, SingleEffectJudgesPairsWhoseIntentsClosedWithNoChange) {
  LikesRun run = clean_run();
  EffectRecord intent = eff(EffectKind::kDbCountDelta, 1, 7, +1, 5, "like", 40);
  intent.effect.intent = true;
  intent.effect.certain = false;
  run.history.push_back(op(5, "like", 1, 7, 5, 39, 45, Outcome::kOk, "ok"));
  run.effects.push_back(intent);
  run.effects.push_back(eff(EffectKind::kDbCountDelta, 1, 7, 0, 5, "like", 41));  // no change
  EXPECT_TRUE(only(run, "like-single-effect").passed);
  EXPECT_TRUE(only(run, "like-idempotence").passed);  // a zero delta is no counter change
  run.effects.push_back(intent);
  run.effects.push_back(eff(EffectKind::kDbCountDelta, 1, 7, +1, 5, "like", 42));  // counted twice
  EXPECT_FALSE(only(run, "like-single-effect").passed);
  run.effects.push_back(intent);  // an intent left open: the pair's DB effect is unknown
  EXPECT_TRUE(only(run, "like-single-effect").passed);
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

TEST(LikesChecksTest, ExpirySafetyFailsWhenTheCountJumpsToOne) {
  LikesRun run = clean_run();
  for (int u = 10; u < 15; ++u) {
    run.history.push_back(op(100 + u, "like", 1, u, 100 + u, 0, 10, Outcome::kOk, "ok"));
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
  h.on_sample(300, false, true);  // repairable from 300
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

TEST(LikesChecksTest, ReconciliationFailsOnWritingZeroAfterAReadError) {
  LikesRun run = clean_run();
  run.effects.push_back(eff(EffectKind::kRedisCountWrite, 1, 0, 0, 0, "consistency", 60));
  Verdict v = only(run, "like-reconciliation");
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.invariants, std::vector<std::string>{"LIKE-10"});
}

TEST(LikesChecksTest, IdempotenceFailsWhenAnUnlikeOfANeverLikedPairDecrements) {
  LikesRun run = clean_run();
  run.history.push_back(op(7, "unlike", 2, 9, 7, 40, 50, Outcome::kOk, "ok"));
  run.effects.push_back(eff(EffectKind::kRedisCountDelta, 2, 9, -1, 7, "unlike", 45));
  EXPECT_FALSE(only(run, "like-idempotence").passed);
}

TEST(LikesChecksTest, UnknownPropertyIsAFailedVerdict) {
  EXPECT_FALSE(only(clean_run(), "no-such-thing").passed);
}

}  // namespace
}  // namespace fl::likes::props
