#include "properties/ranking/ranking_behaviours.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fl::ranking::props {
namespace {

bool names(const RankingRun& run, const std::string& behaviour) {
  const std::vector<std::string> got = ranking_behaviours(run);
  return std::find(got.begin(), got.end(), behaviour) != got.end();
}

// A committed flush of keyed partition `partition` by `client` at `time_us`: its source-offset cut,
// then a head's version bump.
SqlCommit flush(int64_t time_us, const std::string& client, const std::string& partition) {
  SqlCommit c;
  c.time_us = time_us;
  c.ok = true;
  c.client = client;
  c.statements.push_back(SqlStatementObs{
      "INSERT OR IGNORE INTO source_offset_cut (cut_id, keyed_partition, next_offset, generation) VALUES (?, ?, ?, ?)",
      {"k" + partition + "@9/g1", partition, "9", "1"},
      1});
  c.statements.push_back(
      SqlStatementObs{"UPDATE topic_window_metric SET current_aggregate_version = ? WHERE "
                      "aggregate_key = ? AND active_generation = ? AND current_aggregate_version = ?",
                      {"4", "t_1#s#long#0#heat", "1", "3"},
                      1});
  return c;
}

sim::FaultRecord fault(sim::FaultKind kind, const std::string& process, int64_t time_us, int64_t duration_us = 0) {
  sim::FaultRecord f;
  f.kind = kind;
  f.process = process;
  f.node = process;
  f.time_us = time_us;
  f.duration_us = duration_us;
  return f;
}

TEST(RankingBehaviours, AQuietRunExercisesNothing) {
  RankingRun run;
  run.end_us = 20'000'000;
  EXPECT_TRUE(ranking_behaviours(run).empty());
}

TEST(RankingBehaviours, AnIndeterminateEmitAndAReplayedEventAreNamed) {
  RankingRun run;
  run.emits.push_back(EmitOp{"producer-1", "e1", 100, Outcome::kOk, 1, 200});
  run.stable.push_back(LogRecordObs{0, 0, "k", "eventId=e1", 150});
  EXPECT_FALSE(names(run, "emit answered indeterminate"));
  EXPECT_FALSE(names(run, "event appended twice to the stable log"));
  run.emits.push_back(EmitOp{"producer-1", "e2", 300, Outcome::kInfo, 2, -1});
  run.stable.push_back(LogRecordObs{1, 0, "k", "eventId=e1", 400});
  EXPECT_TRUE(names(run, "emit answered indeterminate"));
  EXPECT_TRUE(names(run, "event appended twice to the stable log"));
}

TEST(RankingBehaviours, AnOwnershipChangeCountsTheOldOwnerBackOnlyAfterIt) {
  RankingRun run;
  run.end_us = 20'000'000;
  run.commits.push_back(flush(1'000'000, "agg-1", "0"));
  run.commits.push_back(flush(2'000'000, "agg-1", "0"));
  run.commits.push_back(flush(2'500'000, "agg-2", "1"));
  EXPECT_FALSE(names(run, "keyed partition flushed by a second aggregator"));
  run.commits.push_back(flush(5'000'000, "agg-2", "0"));                               // partition 0 moved to agg-2
  run.faults.push_back(fault(sim::FaultKind::kPause, "agg-1", 1'000'000, 2'000'000));  // back at 3 s: before
  EXPECT_TRUE(names(run, "keyed partition flushed by a second aggregator"));
  EXPECT_TRUE(names(run, "chain process paused or crashed"));
  EXPECT_FALSE(names(run, "ownership change followed by the old owner's return"));
  run.faults.push_back(fault(sim::FaultKind::kPause, "agg-2", 4'000'000, 2'000'000));  // not the old owner
  EXPECT_FALSE(names(run, "ownership change followed by the old owner's return"));
  run.faults.push_back(fault(sim::FaultKind::kCrash, "agg-1", 5'500'000));
  run.faults.push_back(fault(sim::FaultKind::kRestart, "agg-1", 6'000'000));
  EXPECT_TRUE(names(run, "ownership change followed by the old owner's return"));
}

TEST(RankingBehaviours, OnlyARefusedAggregatorWriteIsAStaleOwnersFlush) {
  RankingRun run;
  run.commits.push_back(flush(1'000'000, "agg-1", "0"));
  run.commits.back().ok = false;  // an I/O error, say: not a refusal
  EXPECT_FALSE(names(run, "stale owner's flush refused"));
  run.commits.back().refused_index = 0;  // the cut: not an aggregator's state
  EXPECT_FALSE(names(run, "stale owner's flush refused"));
  run.commits.back().refused_index = 1;  // the head's CAS
  EXPECT_TRUE(names(run, "stale owner's flush refused"));
}

TEST(RankingBehaviours, ACdnHitCountsOnlyWithinTheSafeTtlOfABlock) {
  RankingRun run;
  run.board.params.max_safe_ttl_us = 1'000'000;
  run.board.risk.actions.push_back(
      RiskActionRow{"GLOBAL|ALL|ALL|ALL", "t_2", 1, "a1", "BLOCK", 2'000'000, 9'000'000, 1});
  run.board.risk.views.push_back(ViewOp{"viewer", "scope=s", 3'500'000, 3'600'000, Outcome::kOk, "snap=x src=hit"});
  EXPECT_TRUE(names(run, "global risk action"));
  EXPECT_FALSE(names(run, "scope risk action"));
  EXPECT_FALSE(names(run, "CDN hit within the safe TTL of a block"));
  run.board.risk.views.push_back(ViewOp{"viewer", "scope=s", 2'500'000, 2'600'000, Outcome::kOk, "snap=x src=hit"});
  EXPECT_TRUE(names(run, "CDN hit within the safe TTL of a block"));
}

TEST(RankingBehaviours, ARefusedPointerCasAndARedisLossAfterAPointerAreNamed) {
  RankingRun run;
  SqlCommit c;
  c.ok = true;
  c.statements.push_back(
      SqlStatementObs{"UPDATE ranking_publish_pointer SET snapshot_id = ?", {"s", "x", "2", "1", "1"}, 1});
  run.commits.push_back(c);
  run.board.redis_losses = {500};
  run.board.redis_writes.push_back(RedisWrite{1000, "pub-1", {"SET", "ranking:pointer:s", "1|x"}, true});
  EXPECT_FALSE(names(run, "publish CAS lost to a newer pointer"));
  EXPECT_FALSE(names(run, "Redis lost a cached pointer"));  // lost before anything was cached
  run.commits[0].ok = false;
  run.commits[0].refused_index = 0;
  run.board.redis_losses.push_back(1500);
  EXPECT_TRUE(names(run, "publish CAS lost to a newer pointer"));
  EXPECT_TRUE(names(run, "Redis lost a cached pointer"));
}

// Merges: a keyed copy stamped with an epoch its scope had left when it was appended, and a late
// source-topic event at or past an ACTIVE cutover's vector; neither before the cutover.
TEST(RankingBehaviours, OldEpochCopiesAndLateEventsPastAVectorAreNamed) {
  RankingRun run;
  run.end_us = 20'000'000;
  run.merges.enabled = true;
  run.merges.runs = {{"merge-1", "t_2", "t_1", "map-merge-1", "GLOBAL|ALL|ALL|ALL", "COMPLETED"}};
  run.merges.cutovers = {CutoverRow{"merge-1", "GLOBAL|ALL|ALL|ALL", 1, 2, "0:1", true, "ACTIVE"}};
  SqlCommit cas;
  cas.time_us = 5'000'000;
  cas.ok = true;
  cas.statements.push_back(
      SqlStatementObs{"UPDATE ranking_scope_context SET mapping_version = ?, "
                      "mapping_activation_epoch = ?, version = version + 1 WHERE scope_id = ? AND version = ?",
                      {"map-merge-1", "2", "GLOBAL|ALL|ALL|ALL", "1"},
                      1});
  run.commits.push_back(cas);
  LogRecordObs copy{0, 0, "t_2|GLOBAL|ALL|ALL|ALL", "mappingEpoch=1\x1fscopeId=GLOBAL|ALL|ALL|ALL\x1ftopicId=t_2"};
  copy.append_us = 4'000'000;  // before the CAS: current then
  run.keyed.push_back(copy);
  const std::string late = "eventTime=1000\x1freceivedAt=900000\x1ftopicHints=t_2";
  run.stable.push_back(LogRecordObs{0, 0, "", late});  // below the vector
  EXPECT_FALSE(names(run, "keyed copy appended with an older mapping epoch than its scope's"));
  EXPECT_FALSE(names(run, "late source-topic event past a merge's handover vector"));
  run.keyed[0].append_us = 6'000'000;
  run.stable.push_back(LogRecordObs{0, 1, "", late});
  EXPECT_TRUE(names(run, "keyed copy appended with an older mapping epoch than its scope's"));
  EXPECT_TRUE(names(run, "late source-topic event past a merge's handover vector"));
  EXPECT_FALSE(names(run, "merge scope cutover aborted by a moved context"));
  run.merges.cutovers[0].state = "ABORTED";
  EXPECT_TRUE(names(run, "merge scope cutover aborted by a moved context"));
}

}  // namespace
}  // namespace fl::ranking::props
