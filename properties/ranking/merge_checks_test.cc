// The merge checkers (004:L79-89) pass a hand-built merge whose numbers are known and catch runs
// broken the ways a cutover can break: an event past the vector left on the source topic, a
// shadow that lost an event, an actor counted twice, an epoch moved without its cutover, a run
// completed early, a scope that fell back.
#include <gtest/gtest.h>

#include "properties/ranking/checks.h"

namespace fl::ranking::props {
namespace {

constexpr const char* kGlobal = "GLOBAL|ALL|ALL|ALL";
constexpr const char* kChannel = "CHANNEL|technology|ALL|ALL";

std::string event(const std::string& id, const std::string& actor, const std::string& topic) {
  return "actorKey=" + actor + "\x1f" + "channelId=technology\x1f" + "contentOrQueryId=q-" + id + "\x1f" +
         "eventId=" + id + "\x1f" + "eventTime=15000\x1f" + "eventType=SEARCH_EXECUTED\x1f" + "mappingVersion=1\x1f" +
         "receivedAt=15500\x1f" + "riskContextVersion=1\x1f" + "schemaVersion=3\x1f" +
         "sourceService=search-service\x1f" + "topicHints=" + topic;
}

void set_value(RankingRun& run, const std::string& topic, const std::string& scope, const model::Value& v) {
  const std::string ak = topic + "#" + scope + "#short#10000#search_actors";
  for (HeadRow& h : run.heads) {
    if (h.aggregate_key == ak) {
      ++h.version;
      run.versions.push_back(VersionRow{ak, 1, h.version, v, "k0@9/g1", value_digest(v)});
      return;
    }
  }
  run.heads.push_back(HeadRow{ak, topic, scope, "short", 10000, "search_actors", 1, 1});
  run.versions.push_back(VersionRow{ak, 1, 1, v, "k0@9/g1", value_digest(v)});
}

SqlCommit commit(int64_t at_us, std::vector<SqlStatementObs> statements) {
  return SqlCommit{at_us, true, "merger", std::move(statements)};
}

// t_2 merged into t_1 on the global scope at vector 0:2. Stable partition 0: e1 (t_1, actor a1),
// e2 (t_2, a1, below the vector), e3 (t_2, a2, at it). Global: t_1 holds e1, e2 (through the
// shadow) and e3 (new chain), a1 once: raw 3, effective 2; t_2 keeps e2 alone. The channel scope
// did not merge: t_1 holds e1, t_2 holds e2 and e3.
RankingRun merged() {
  RankingRun run;
  run.config.windows = {{"short", 10'000}};
  run.db_read = true;
  const std::vector<std::tuple<std::string, std::string, std::string>> evs = {
      {"e1", "a1", "t_1"}, {"e2", "a1", "t_2"}, {"e3", "a2", "t_2"}};
  int64_t offset = 0;
  for (const auto& [id, actor, topic] : evs)
    run.stable.push_back(LogRecordObs{0, offset++, "", event(id, actor, topic)});
  set_value(run, "t_1", kGlobal, {3, 2, 0, 2});
  set_value(run, "t_2", kGlobal, {1, 1, 0, 1});
  set_value(run, "t_1", kChannel, {1, 1, 0, 1});
  set_value(run, "t_2", kChannel, {2, 2, 0, 2});
  run.merges.enabled = true;
  run.merges.initial_mapping = "map-v1";
  run.merges.runs = {{"merge-1", "t_2", "t_1", "map-merge-1", kGlobal, "COMPLETED"}};
  run.merges.cutovers = {CutoverRow{"merge-1", kGlobal, 1, 2, "0:2", true, "ACTIVE"}};
  run.merges.contexts[kGlobal] = {"map-merge-1", 2};
  run.commits.push_back(commit(10, {{"UPDATE ranking_scope_context SET mapping_version = ?, mapping_activation_epoch = "
                                     "?, version = version + 1 WHERE scope_id = ? AND version = ?",
                                     {"map-merge-1", "2", kGlobal, "1"},
                                     1},
                                    {"UPDATE merge_scope_cutover SET state = 'ACTIVE' WHERE merge_run_id = ? AND ...",
                                     {"merge-1", kGlobal, "0:2", "2"},
                                     1}}));
  run.commits.push_back(
      commit(20, {{"UPDATE merge_scope_cutover SET shadow_delivered = 1 WHERE merge_run_id = ? AND ...",
                   {"merge-1", kGlobal},
                   1}}));
  run.commits.push_back(commit(
      30, {{"UPDATE merge_run SET state = 'COMPLETED' WHERE merge_run_id = ? AND ...", {"merge-1", "merge-1"}, 1}}));
  return run;
}

TEST(MergeChecks, AHandBuiltMergePasses) {
  const RankingRun run = merged();
  EXPECT_EQ(check_merge_ownership(run).status(), VerdictStatus::kPass) << check_merge_ownership(run).evidence.size();
  EXPECT_EQ(check_merge_cutover(run).status(), VerdictStatus::kPass);
  // The part-1 value checkers count each event where its cutover puts it, too.
  EXPECT_EQ(check_event_idempotence(run).status(), VerdictStatus::kPass);
  EXPECT_EQ(check_full_key(run).status(), VerdictStatus::kPass);
}

TEST(MergeChecks, OwnershipCatchesAnEventPastTheVectorLeftOnTheSource) {
  RankingRun run = merged();
  set_value(run, "t_2", kGlobal, {2, 2, 0, 2});  // e3 counted on t_2 too (the old chain took it)
  const Verdict v = check_merge_ownership(run);
  ASSERT_EQ(v.status(), VerdictStatus::kFail);
  EXPECT_NE(v.evidence[0].find("source t_2#GLOBAL|ALL|ALL|ALL"), std::string::npos) << v.evidence[0];
}

TEST(MergeChecks, OwnershipCatchesAShadowThatLostAnEvent) {
  RankingRun run = merged();
  set_value(run, "t_1", kGlobal, {2, 2, 0, 2});  // e2 never reached the main topic
  const Verdict v = check_merge_ownership(run);
  ASSERT_EQ(v.status(), VerdictStatus::kFail);
  EXPECT_NE(v.evidence[0].find("main t_1#GLOBAL"), std::string::npos) << v.evidence[0];
}

TEST(MergeChecks, OwnershipCatchesAnActorCountedOnceForEachTopic) {
  RankingRun run = merged();
  set_value(run, "t_1", kGlobal, {3, 3, 0, 3});  // a1 of t_1 and a1 of t_2 as two actors
  EXPECT_EQ(check_merge_ownership(run).status(), VerdictStatus::kFail);
}

TEST(MergeChecks, OwnershipCatchesAMergedCountInAScopeThatDidNotSwitch) {
  RankingRun run = merged();
  run.merges.cutovers[0].state = "SHADOW_READY";  // the CAS never committed: nothing moves
  run.merges.contexts[kGlobal] = {"map-v1", 1};
  // Without an ACTIVE cutover the merge judge has nothing to judge, and the value judge finds the
  // main topic holding the source's events.
  EXPECT_EQ(check_merge_ownership(run).status(), VerdictStatus::kVacuous);
  EXPECT_EQ(check_event_idempotence(run).status(), VerdictStatus::kFail);
}

TEST(MergeChecks, CutoverCatchesAnEpochMovedWithoutItsCutover) {
  RankingRun run = merged();
  run.commits[0].statements.pop_back();  // the context moved, the cutover row did not
  EXPECT_EQ(check_merge_cutover(run).status(), VerdictStatus::kFail);
}

TEST(MergeChecks, CutoverCatchesARunCompletedBeforeItsScopes) {
  RankingRun run = merged();
  std::swap(run.commits[1], run.commits[2]);  // COMPLETED before the shadow was delivered
  const Verdict v = check_merge_cutover(run);
  ASSERT_EQ(v.status(), VerdictStatus::kFail);
  EXPECT_NE(v.evidence[0].find("shadow not delivered"), std::string::npos) << v.evidence[0];
}

TEST(MergeChecks, CutoverCatchesAScopeThatFellBack) {
  RankingRun run = merged();
  run.merges.contexts[kGlobal] = {"map-v1", 1};  // a switched scope back on the old mapping
  EXPECT_EQ(check_merge_cutover(run).status(), VerdictStatus::kFail);
  RankingRun back = merged();
  back.commits.push_back(commit(40, {{"UPDATE ranking_scope_context SET mapping_version = ?, mapping_activation_epoch "
                                      "= ?, version = version + 1 WHERE scope_id = ? AND version = ?",
                                      {"map-v1", "1", kGlobal, "2"},
                                      1}}));
  EXPECT_EQ(check_merge_cutover(back).status(), VerdictStatus::kFail);
}

// 004:L89: a snapshot made under the global scope's new mapping (epoch 2) must not list t_2; one
// made before it (epoch 1) keeps it, and no snapshot lists a topic twice.
TEST(MergeChecks, CutoverCatchesASnapshotListingAMergedTopicUnderTheNewMapping) {
  RankingRun run = merged();
  run.board.snapshots.push_back(SnapshotRow{.snapshot_id = "s-old", .scope_id = kGlobal, .mapping_epoch = 1});
  run.board.snapshots.push_back(SnapshotRow{.snapshot_id = "s-new", .scope_id = kGlobal, .mapping_epoch = 2});
  run.board.items = {{"s-old", 1, "t_1"}, {"s-old", 2, "t_2"}, {"s-new", 1, "t_1"}};
  EXPECT_EQ(check_merge_cutover(run).status(), VerdictStatus::kPass);
  EXPECT_EQ(merged_away(run, kGlobal, 1), std::set<std::string>{});
  EXPECT_EQ(merged_away(run, kGlobal, 2), std::set<std::string>{"t_2"});
  EXPECT_EQ(merged_away(run, kChannel, 9), std::set<std::string>{});
  run.board.items.push_back({"s-new", 2, "t_2"});
  Verdict v = check_merge_cutover(run);
  ASSERT_EQ(v.status(), VerdictStatus::kFail);
  EXPECT_NE(v.evidence[0].find("merged away"), std::string::npos) << v.evidence[0];
  run.board.items.back() = {"s-new", 2, "t_1"};
  v = check_merge_cutover(run);
  ASSERT_EQ(v.status(), VerdictStatus::kFail);
  EXPECT_NE(v.evidence[0].find("twice"), std::string::npos) << v.evidence[0];
}

TEST(MergeChecks, BothAreVacuousWithoutAMerge) {
  RankingRun run = merged();
  run.merges.runs.clear();
  run.merges.cutovers.clear();
  EXPECT_EQ(check_merge_cutover(run).status(), VerdictStatus::kVacuous);
  EXPECT_EQ(check_merge_ownership(run).status(), VerdictStatus::kVacuous);
}

}  // namespace
}  // namespace fl::ranking::props
