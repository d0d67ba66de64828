// Each ranking checker passes a clean hand-built run and catches one that violates its invariant.
#include "properties/ranking/checks.h"

#include <gtest/gtest.h>

namespace fl::ranking::props {
namespace {

std::string event(const std::string& id, const std::string& actor, const std::string& hint,
                  const std::string& channel = "technology") {
  std::string s = "actorKey=" + actor +
                  "\x1f"
                  "channelId=" +
                  channel +
                  "\x1f"
                  "contentOrQueryId=q1\x1f"
                  "eventId=" +
                  id +
                  "\x1f"
                  "eventTime=15000\x1f"
                  "eventType=SEARCH_EXECUTED\x1f"
                  "mappingVersion=1\x1f"
                  "receivedAt=15500\x1f"
                  "riskContextVersion=1\x1f"
                  "schemaVersion=3\x1f"
                  "sourceService=search-service\x1f"
                  "topicHints=" +
                  hint;
  return s;
}

std::string keyed(const std::string& id, const std::string& actor, const std::string& topic, const std::string& scope,
                  int64_t offset) {
  return "actorKey=" + actor +
         "\x1f"
         "contentOrQueryId=q1\x1f"
         "eventId=" +
         id +
         "\x1f"
         "eventTime=15000\x1f"
         "eventType=SEARCH_EXECUTED\x1f"
         "scopeId=" +
         scope +
         "\x1f"
         "source=search-service\x1f"
         "sourceOffset=" +
         std::to_string(offset) +
         "\x1f"
         "sourcePartition=0\x1f"
         "topicId=" +
         topic;
}

// Two events (one by alias) on t_1, both reaching every derived scope and every window.
RankingRun clean() {
  RankingRun run;
  run.config.windows = {{"short", 10'000}};
  run.db_read = true;
  const std::vector<std::pair<std::string, std::string>> evs = {{"e1", "t_1"}, {"e2", "a1x"}};
  int64_t offset = 0, k = 0;
  for (const auto& [id, hint] : evs) {
    const std::string p = event(id, "act" + id, hint);
    run.emits.push_back(EmitOp{"producer-1", p, 0, Outcome::kOk});
    run.outbox.push_back({id, "SENT"});
    run.stable.push_back(LogRecordObs{0, offset, "q1", p});
    for (const char* scope : {"GLOBAL|ALL|ALL|ALL", "CHANNEL|technology|ALL|ALL"}) {
      run.keyed.push_back(LogRecordObs{0, k++, "t_1", keyed(id, "act" + id, "t_1", scope, offset)});
    }
    ++offset;
  }
  run.keyed_end[0] = k;
  run.checkpoints[0] = k;
  for (const char* scope : {"GLOBAL|ALL|ALL|ALL", "CHANNEL|technology|ALL|ALL"}) {
    const std::string ak = std::string("t_1#") + scope + "#short#10000#search_actors";
    run.heads.push_back(HeadRow{ak, "t_1", scope, "short", 10000, "search_actors", 1, 1});
    const model::Value v{2, 2, 0, 2};
    run.versions.push_back(VersionRow{ak, 1, 1, v, "k0@4/g1", value_digest(v)});
    run.commits.push_back(SqlCommit{
        1,
        true,
        "agg-1",
        {{"INSERT OR IGNORE INTO topic_window_metric (aggregate_key, ...)",
          {ak, "t_1", scope, "short", "10000", "search_actors", "1"},
          1},
         {"INSERT INTO topic_window_metric_version (aggregate_key, ...)", {ak}, 1},
         {"UPDATE topic_window_metric SET current_aggregate_version = ? WHERE ...", {"1", ak, "1", "0"}, 1}}});
  }
  return run;
}

void expect_pass(const Verdict& v) {
  EXPECT_EQ(v.status(), VerdictStatus::kPass) << v.property << ": " << (v.evidence.empty() ? "" : v.evidence[0]);
}
void expect_fail(const Verdict& v) { EXPECT_EQ(v.status(), VerdictStatus::kFail) << v.property; }

// The kept parse of a record is its current text's: a record edited after a checker read it is
// parsed again (mutation tests edit a clean run's records between checks).
TEST(LogRecordObs, FieldsFollowTheValue) {
  LogRecordObs r{0, 0, "q1", event("e1", "act1", "t_1")};
  EXPECT_EQ(r.fields().at("eventId"), "e1");
  r.value = event("e2", "act1", "t_1");
  EXPECT_EQ(r.fields().at("eventId"), "e2");
  const LogRecordObs copy = r;
  EXPECT_EQ(copy.fields().at("eventId"), "e2");
  EXPECT_EQ(r.fields(), model::parse_event(r.value));
}

TEST(RankingChecks, CleanRunPassesEveryProperty) {
  const RankingRun run = clean();
  std::vector<std::string> names;
  for (const PropertyInfo& p : ranking_properties()) names.push_back(p.name);
  const std::vector<Verdict> vs = check_ranking(run, names);
  // The part-2 and risk checkers judge only a run with a board (board_checks_test.cc), the four §6.3
  // ones only a run with watermarks (watermark_checks_test.cc), the completeness gate only one
  // with both, rank-distinct-sketch only one with sketches (sketch_checks_test.cc), the two merge
  // checkers only one that merges topics (merge_checks_test.cc); this one has none.
  ASSERT_EQ(vs.size(), names.size() - 22);
  for (const Verdict& v : vs) expect_pass(v);
}

TEST(RankingChecks, IngestDurableCatchesALostEvent) {
  RankingRun run = clean();
  run.emits.push_back(EmitOp{"producer-1", event("e3", "x", "t_1"), 0, Outcome::kOk});
  run.outbox.push_back({"e3", "SENT"});
  expect_fail(check_ingest_durable(run));
  RankingRun wrong = clean();  // a valid event rejected as replay although never logged
  wrong.emits.push_back(EmitOp{"producer-1", event("e4", "x", "t_1"), 0, Outcome::kOk});
  wrong.rejects.push_back({event("e4", "x", "t_1"), "replay"});
  expect_fail(check_ingest_durable(wrong));
  RankingRun unexplained = clean();  // indeterminate, nowhere, and no fault to explain it
  unexplained.emits.push_back(EmitOp{"producer-1", event("e5", "x", "t_1"), 0, Outcome::kInfo});
  expect_fail(check_ingest_durable(unexplained));
}

// An indeterminate emit whose event is nowhere is excused only by a fault that touched it: an I/O
// error of its statement (the record names its operation), its producer's crash while it was in
// flight. An I/O error of another operation, a DB pause that held nothing of it, or a crash of
// another producer leave it unexplained.
TEST(RankingChecks, IngestDurableExcusesAnIndeterminateEmitOnlyByAFaultThatTouchedIt) {
  RankingRun base = clean();
  base.end_us = 10'000'000;
  base.emits.push_back(EmitOp{"producer-1", event("e5", "x", "t_1"), 1'000'000, Outcome::kInfo, 7, 1'200'000});
  auto status = [&base](std::vector<sim::FaultRecord> faults) {
    RankingRun run = base;
    run.faults = std::move(faults);
    return check_ingest_durable(run).status();
  };
  auto io_error = [](uint64_t cause) {
    return sim::FaultRecord{.time_us = 1'100'000,
                            .kind = sim::FaultKind::kStorageError,
                            .node = "db",
                            .process = "db",
                            .value = 1,
                            .cause = cause};
  };
  auto crash = [](const std::string& who, int64_t at_us) {
    return sim::FaultRecord{.time_us = at_us, .kind = sim::FaultKind::kCrash, .node = who, .process = who};
  };
  EXPECT_EQ(status({}), VerdictStatus::kFail);
  EXPECT_EQ(status({io_error(7)}), VerdictStatus::kPass);
  EXPECT_EQ(status({io_error(8)}), VerdictStatus::kFail);
  EXPECT_EQ(status({io_error(0)}), VerdictStatus::kFail);
  EXPECT_EQ(status({sim::FaultRecord{.time_us = 900'000,
                                     .kind = sim::FaultKind::kPause,
                                     .node = "db",
                                     .process = "db",
                                     .duration_us = 1'000'000}}),
            VerdictStatus::kFail);
  EXPECT_EQ(status({crash("producer-2", 1'100'000)}), VerdictStatus::kFail);
  EXPECT_EQ(status({crash("producer-1", 1'100'000)}), VerdictStatus::kPass);
  EXPECT_EQ(status({crash("producer-1", 1'300'000)}), VerdictStatus::kFail);  // after it completed
}

TEST(RankingChecks, ScopeCanonicalCatchesAnEmptyDimensionAndAFallback) {
  RankingRun run = clean();
  run.heads[0].scope_id = "GLOBAL||ALL|ALL";
  expect_fail(check_scope_canonical(run));
  RankingRun accepted_invalid = clean();
  accepted_invalid.stable.push_back(LogRecordObs{0, 2, "q1", event("e9", "x", "t_1", "no-such-channel")});
  expect_fail(check_scope_canonical(accepted_invalid));
}

TEST(RankingChecks, FullKeyCatchesAKeyWithoutItsScope) {
  RankingRun run = clean();
  run.heads.push_back(HeadRow{"t_1#short#10000#search_actors", "t_1", "", "short", 10000, "search_actors", 1, 1});
  expect_fail(check_full_key(run));
  RankingRun missing = clean();
  missing.heads.pop_back();
  expect_fail(check_full_key(missing));
}

TEST(RankingChecks, EventIdempotenceCatchesADoubleCountedRedelivery) {
  RankingRun run = clean();
  run.versions[0].value = model::Value{3, 2, 0, 2};  // e1 redelivered at another offset, counted again
  expect_fail(check_event_idempotence(run));
}

TEST(RankingChecks, VersionImmutableCatchesAnUpdateAndABadDigest) {
  RankingRun run = clean();
  run.commits[0].statements.push_back({"UPDATE topic_window_metric_version SET raw_count = 9", {}, 1});
  expect_fail(check_version_immutable(run));
  RankingRun digest = clean();
  digest.versions[0].digest = "0000000000000000";
  expect_fail(check_version_immutable(digest));
}

TEST(RankingChecks, HeadFenceCatchesAnOldGenerationWinningWithABiggerVersion) {
  RankingRun run = clean();
  const std::string ak = run.heads[0].aggregate_key;
  // g1/v1 -> recovery switches to g2/v1; then a paused g1 worker writes g1/v2 (004:L321).
  run.commits.push_back(SqlCommit{
      2, true, "recovery", {{"UPDATE topic_window_metric SET active_generation ...", {"2", "1", ak, "1", "1"}, 1}}});
  run.heads[0].generation = 2;
  expect_pass(check_head_fence(run));  // the switch itself is fenced and legitimate
  run.commits.push_back(
      SqlCommit{3, true, "agg-old", {{"UPDATE topic_window_metric SET ...", {"2", ak, "1", "1"}, 1}}});
  run.heads[0].generation = 1;
  run.heads[0].version = 2;
  expect_fail(check_head_fence(run));
}

// A flush whose COMMIT answered an I/O error may have applied (its WAL frames recovered after a
// crash): explore-hardened seed 7664 ended with a head only such a commit explains.
TEST(RankingChecks, HeadFenceAdmitsACommitAnsweredAnIoErrorThatApplied) {
  RankingRun run = clean();
  const std::string ak = run.heads[0].aggregate_key;
  SqlCommit doubt{2, false, "agg-1", {{"UPDATE topic_window_metric SET ...", {"2", ak, "1", "1"}, 0}}};
  doubt.in_doubt = true;
  run.commits.push_back(doubt);
  run.heads[0].version = 2;
  expect_pass(check_head_fence(run));  // it applied
  RankingRun confirmed = run;          // it applied, and a later flush moved on from it
  confirmed.commits.push_back(
      SqlCommit{3, true, "agg-1", {{"UPDATE topic_window_metric SET ...", {"3", ak, "1", "2"}, 1}}});
  confirmed.heads[0].version = 3;
  expect_pass(check_head_fence(confirmed));
  RankingRun retried = run;  // it did not apply: the retry moved g1/v1 to v2
  retried.commits.push_back(
      SqlCommit{3, true, "agg-1", {{"UPDATE topic_window_metric SET ...", {"2", ak, "1", "1"}, 1}}});
  expect_pass(check_head_fence(retried));
  RankingRun unexplained = run;  // v3: neither the commits nor the in-doubt one explain it
  unexplained.heads[0].version = 3;
  expect_fail(check_head_fence(unexplained));
  RankingRun failed = run;  // an I/O error before COMMIT is a rollback: it explains nothing
  failed.commits.back().in_doubt = false;
  expect_fail(check_head_fence(failed));
}

TEST(RankingChecks, OffsetContinuityCatchesASkippedOffset) {
  RankingRun run = clean();
  run.keyed.erase(run.keyed.begin() + 1);
  expect_fail(check_offset_continuity(run));
  RankingRun behind = clean();
  behind.checkpoints[0] = 2;
  expect_fail(check_offset_continuity(behind));
}

TEST(RankingChecks, NormalizationCatchesAnAliasAggregatedAsItsOwnTopic) {
  RankingRun run = clean();
  run.keyed[2].value = keyed("e2", "acte2", "a1x", "GLOBAL|ALL|ALL|ALL", 1);
  expect_fail(check_normalization(run));
}

// Scope control: a mapping switch of GLOBAL|ALL|ALL|ALL commits at 50, before the stable records are
// appended (100); their copies (appended at 200) must carry map-v2 epoch 2 in that scope.
TEST(RankingChecks, NormalizationCatchesACopyStampedWithAMappingItsScopeHadLeft) {
  RankingRun run = clean();
  run.board.params.scope_control = true;
  run.board.params.initial_mapping = "map-v1";
  for (LogRecordObs& r : run.stable) r.append_us = 100;
  auto stamp = [&](const char* global_version, const char* global_epoch) {
    for (LogRecordObs& r : run.keyed) {
      const bool global = r.value.find("scopeId=GLOBAL|ALL|ALL|ALL") != std::string::npos;
      r.value = r.value.substr(0, r.value.find("\x1fmapping")) + "\x1fmappingEpoch=" + (global ? global_epoch : "1") +
                "\x1fmappingVersion=" + (global ? global_version : "map-v1");
      r.append_us = 200;
    }
  };
  stamp("map-v1", "1");
  expect_pass(check_normalization(run));  // no switch: the initial mapping everywhere
  run.commits.push_back(SqlCommit{50,
                                  true,
                                  "control",
                                  {{"UPDATE ranking_scope_context SET mapping_version = ?, mapping_activation_epoch = "
                                    "mapping_activation_epoch + 1, version = version + 1 WHERE scope_id = ? AND "
                                    "mapping_version = ? AND mapping_activation_epoch = ?",
                                    {"map-v2", "GLOBAL|ALL|ALL|ALL", "map-v1", "1"},
                                    1}}});
  expect_fail(check_normalization(run));  // a normalizer that kept the mapping it loaded
  stamp("map-v2", "2");
  expect_pass(check_normalization(run));
}

}  // namespace
}  // namespace fl::ranking::props
