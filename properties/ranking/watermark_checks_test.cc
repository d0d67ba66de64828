// Each §6.3 checker passes a clean hand-built run and catches runs that break its invariant.
#include <gtest/gtest.h>

#include "properties/ranking/checks.h"

namespace fl::ranking::props {
namespace {

const char* kScope = "GLOBAL|ALL|ALL|ALL";

std::string keyed(const std::string& id, int64_t time_ms, int64_t source_offset) {
  return "actorKey=a" + id +
         "\x1f"
         "contentOrQueryId=q1\x1f"
         "eventId=" +
         id +
         "\x1f"
         "eventTime=" +
         std::to_string(time_ms) +
         "\x1f"
         "eventType=SEARCH_EXECUTED\x1f"
         "scopeId=" +
         kScope +
         "\x1f"
         "source=search-service\x1f"
         "sourceOffset=" +
         std::to_string(source_offset) +
         "\x1f"
         "sourcePartition=0\x1f"
         "topicId=t_1";
}

std::string ak(int64_t start) {
  return std::string("t_1#") + kScope + "#short#" + std::to_string(start) + "#search_actors";
}

SqlStatementObs cut(int64_t next) {
  return {"INSERT OR IGNORE INTO source_offset_cut (cut_id, ...)",
          {"k0@" + std::to_string(next) + "/g1", "0", std::to_string(next), "1"},
          1};
}
SqlStatementObs version(int64_t start, int64_t v, int64_t wm, int64_t next) {
  return {"INSERT INTO topic_window_metric_version (aggregate_key, ...)",
          {ak(start), "1", std::to_string(v), "1", "1", "0", "1", std::to_string(wm),
           "k0@" + std::to_string(next) + "/g1", "d"},
          1};
}
SqlStatementObs window(int64_t start, const std::string& state, int64_t wm) {
  return {"INSERT OR REPLACE INTO window_state (keyed_partition, ...) VALUES (?, ?, ?, ?, ?, ?, ?, '', '', '', '')",
          {"0", kScope, "short", std::to_string(start), std::to_string(start + 10'000), state, std::to_string(wm)},
          1};
}
SqlStatementObs purged(int64_t start, int64_t wm, const std::string& reconciliation) {
  return {"INSERT OR REPLACE INTO window_state (keyed_partition, ...) VALUES (?, ?, ?, ?, ?, 'PURGED', ?, ?, ?, ?, ?)",
          {"0", kScope, "short", std::to_string(start), std::to_string(start + 10'000), std::to_string(wm), "od",
           ak(start) + "/g1/v1", "k0@2/g1", reconciliation},
          1};
}
SqlStatementObs archive(int64_t start) {
  return {"INSERT OR REPLACE INTO window_archive (keyed_partition, ...)",
          {"0", std::string(kScope) + "#short#" + std::to_string(start) + "#" + std::to_string(start + 10'000), "38000",
           "od", ak(start) + "/g1/v1", "k0@2/g1", "ok"},
          1};
}
SqlStatementObs idle(int64_t start_us, int64_t end_us, int64_t resume, int64_t rejoin_us, int64_t rejoin_offset,
                     int64_t rejoin_wm, int64_t late) {
  return {"INSERT OR REPLACE INTO partition_idle (keyed_partition, ...)",
          {"0", "search-service", "0", std::to_string(start_us), "2000000", "1", std::to_string(end_us),
           std::to_string(resume), std::to_string(rejoin_us), std::to_string(rejoin_offset), std::to_string(rejoin_wm),
           std::to_string(late)},
          1};
}
SqlStatementObs status(int complete) {
  return {"INSERT OR REPLACE INTO source_status (keyed_partition, ...)",
          {"0", "search-service", std::to_string(complete), "0"},
          1};
}
SqlStatementObs side(int64_t offset, const std::string& id, int64_t start, const std::string& state, int64_t wm) {
  return {"INSERT OR IGNORE INTO late_side_output (keyed_partition, ...)",
          {"0", std::to_string(offset), "short", id, kScope, std::to_string(start), state, std::to_string(wm)},
          1};
}

// e1 (15 s) and e2 (40 s) open two short windows; the first goes FINAL, is archived and purged;
// the partition goes idle, comes back with e3 (41 s) and rejoins; e4 (12 s) goes to the side output.
RankingRun clean() {
  RankingRun run;
  run.config.windows = {{"short", 10'000}};
  run.db_read = true;
  run.wm.params = WatermarkParams{true, 2000, 5000, 3'000'000, 10'000, 6000};
  const std::vector<std::tuple<std::string, int64_t, int64_t>> recs = {
      {"e1", 15'000, 1'000'000}, {"e2", 40'000, 2'000'000}, {"e3", 41'000, 7'000'000}, {"e4", 12'000, 7'500'000}};
  for (size_t i = 0; i < recs.size(); ++i) {
    const auto& [id, t, at] = recs[i];
    run.keyed.push_back(LogRecordObs{0, static_cast<int64_t>(i), "t_1|" + std::string(kScope), keyed(id, t, i), at});
  }
  auto commit = [&](int64_t at, std::vector<SqlStatementObs> st) {
    run.commits.push_back(SqlCommit{at, true, "agg-1", std::move(st)});
  };
  commit(1'100'000, {cut(1), version(10'000, 1, 13'000, 1), window(10'000, "OPEN", 13'000)});
  commit(2'100'000,
         {cut(2), version(40'000, 1, 38'000, 2), window(10'000, "FINAL", 38'000), window(40'000, "OPEN", 38'000)});
  commit(2'200'000, {archive(10'000)});
  commit(2'300'000, {cut(2), purged(10'000, 38'000, "ok")});
  commit(6'000'000, {cut(2), idle(5'900'000, -1, -1, -1, -1, -1, 0), status(0)});
  commit(7'100'000, {cut(3), idle(5'900'000, 7'050'000, 2, 7'050'000, 2, 38'000, 0), status(1)});
  commit(7'600'000, {cut(4), side(3, "e4", 10'000, "PURGED", 39'000)});
  run.heads = {HeadRow{ak(10'000), "t_1", kScope, "short", 10'000, "search_actors", 1, 1},
               HeadRow{ak(40'000), "t_1", kScope, "short", 40'000, "search_actors", 1, 1}};
  run.wm.idle = {IdleRow{0, "search-service", 0, 5'900'000, 2'000'000, 1, 7'050'000, 2, 7'050'000, 2, 38'000, 0}};
  run.wm.side = {SideOutputRow{0, 3, "short", "e4", kScope, 10'000, "PURGED", 39'000}};
  return run;
}

void expect_pass(const Verdict& v) {
  EXPECT_EQ(v.status(), VerdictStatus::kPass) << v.property << ": " << (v.evidence.empty() ? "" : v.evidence[0]);
}
void expect_fail(const Verdict& v) { EXPECT_EQ(v.status(), VerdictStatus::kFail) << v.property; }

TEST(WatermarkChecks, CleanRunPasses) {
  const RankingRun run = clean();
  for (const Verdict& v :
       check_ranking(run, {"rank-watermark", "rank-idle-recovery", "rank-window-lifecycle", "rank-dedup-purge"})) {
    expect_pass(v);
    EXPECT_GT(v.checks, 0) << v.property;
  }
  EXPECT_EQ(late_events(run), std::set<std::string>{std::string("e4#") + kScope + "#short"});
}

TEST(WatermarkChecks, NotJudgedWithoutWatermarks) {
  RankingRun run = clean();
  run.wm.params.enabled = false;
  EXPECT_TRUE(check_ranking(run, {"rank-watermark", "rank-dedup-purge"}).empty());
  EXPECT_TRUE(late_events(run).empty());
}

TEST(WatermarkChecks, WatermarkCatchesARegressionAnOverrunAnEarlyIdleAndAMissingFlag) {
  RankingRun back = clean();  // a partition first seen with an old record pulls the minimum back
  back.commits.push_back(SqlCommit{8'000'000, true, "agg-1", {cut(4), version(40'000, 2, 30'000, 4)}});
  expect_fail(check_watermark(back));
  RankingRun ahead = clean();  // a watermark no record read so far justifies
  ahead.commits.push_back(SqlCommit{8'000'000, true, "agg-1", {cut(1), window(90'000, "OPEN", 80'000)}});
  expect_fail(check_watermark(ahead));
  RankingRun early = clean();  // idle 1 s after its last record (timeout 3 s)
  early.commits[4].time_us = 3'000'000;
  expect_fail(check_watermark(early));
  RankingRun unflagged = clean();  // idle, but its source still complete
  unflagged.commits[4].statements.pop_back();
  expect_fail(check_watermark(unflagged));
}

// An idle mark early by the append times (2 s short of the 3 s timeout here) is excused only by
// clocks that moved that far: the log's clock ahead at the append (its stamp late), or the
// committer's clock jumping forward between the append and the mark. A jump of the committer
// before the append, a jump of another node, a 0 ms jump or a 0 ppm drift excuse nothing.
TEST(WatermarkChecks, AnEarlyIdleMarkIsExcusedOnlyByClocksThatMovedThatFar) {
  RankingRun early = clean();
  early.end_us = 10'000'000;
  early.commits[4].time_us = 3'000'000;
  auto jump = [](const std::string& node, int64_t at_us, int64_t by_us) {
    return sim::FaultRecord{.time_us = at_us, .kind = sim::FaultKind::kClockJump, .node = node, .value = by_us};
  };
  auto status = [&early](std::vector<sim::FaultRecord> faults) {
    RankingRun run = early;
    run.faults = std::move(faults);
    return check_watermark(run).status();
  };
  EXPECT_EQ(status({}), VerdictStatus::kFail);
  EXPECT_EQ(status({jump("log", 500'000, 2'500'000)}), VerdictStatus::kPass);
  EXPECT_EQ(status({jump("agg-1", 2'500'000, 2'500'000)}), VerdictStatus::kPass);
  EXPECT_EQ(status({jump("agg-1", 500'000, 2'500'000)}), VerdictStatus::kFail);
  EXPECT_EQ(status({jump("agg-2", 2'500'000, 2'500'000)}), VerdictStatus::kFail);
  EXPECT_EQ(status({jump("agg-1", 2'500'000, 1'000'000)}), VerdictStatus::kFail);  // 1 s of the 2 s
  EXPECT_EQ(
      status({jump("log", 500'000, 0),
              sim::FaultRecord{.time_us = 500'000, .kind = sim::FaultKind::kClockDrift, .node = "agg-1", .value = 0}}),
      VerdictStatus::kFail);
}

TEST(WatermarkChecks, IdleRecoveryCatchesAWrongLateCountAndAnEarlyRejoin) {
  RankingRun count = clean();
  count.wm.idle[0].late_count = 1;
  expect_fail(check_idle_recovery(count));
  RankingRun early = clean();  // rejoined while its own watermark (39 s) was below the window's
  early.wm.idle[0].rejoin_watermark = 40'000;
  expect_fail(check_idle_recovery(early));
  RankingRun unrecorded = clean();
  unrecorded.wm.idle[0].resume_offset = -1;
  expect_fail(check_idle_recovery(unrecorded));
}

TEST(WatermarkChecks, WindowLifecycleCatchesAWriteAfterFinalASideOutputOfAnOpenWindowAndAStepBack) {
  RankingRun write = clean();  // a late event still counted into a FINAL window
  write.commits.push_back(SqlCommit{8'000'000, true, "agg-1", {cut(4), version(10'000, 2, 39'000, 4)}});
  expect_fail(check_window_lifecycle(write));
  RankingRun lost = clean();  // an event of an OPEN window dropped as late
  lost.commits.push_back(SqlCommit{8'000'000, true, "agg-1", {cut(4), side(2, "e3", 40'000, "OPEN", 39'000)}});
  expect_fail(check_window_lifecycle(lost));
  RankingRun back = clean();
  back.commits.push_back(SqlCommit{8'000'000, true, "agg-1", {cut(4), window(40'000, "CLOSED", 51'000)}});
  back.commits.push_back(SqlCommit{8'100'000, true, "agg-1", {cut(4), window(40'000, "OPEN", 39'000)}});
  expect_fail(check_window_lifecycle(back));
  RankingRun early = clean();  // FINAL before end + allowed lateness
  early.commits.push_back(SqlCommit{8'000'000, true, "agg-1", {cut(4), window(30'000, "FINAL", 39'000)}});
  expect_fail(check_window_lifecycle(early));
}

TEST(WatermarkChecks, DedupPurgeCatchesAPurgeBeforeItsEvidenceTooEarlyOrUnreconciled) {
  RankingRun order = clean();  // purged in the transaction that archives it
  order.commits[3].statements.insert(order.commits[3].statements.begin(), archive(10'000));
  order.commits.erase(order.commits.begin() + 2);
  expect_fail(check_dedup_purge(order));
  RankingRun soon = clean();  // purged before end + retention (20 s + 10 s)
  soon.commits[3].statements[1] = purged(10'000, 29'000, "ok");
  expect_fail(check_dedup_purge(soon));
  RankingRun unreconciled = clean();
  unreconciled.commits[3].statements[1] = purged(10'000, 38'000, "mismatch");
  expect_fail(check_dedup_purge(unreconciled));
  RankingRun after = clean();  // a redelivered event counted after the purge
  after.commits.push_back(SqlCommit{8'000'000, true, "agg-1", {cut(4), version(10'000, 2, 39'000, 4)}});
  expect_fail(check_dedup_purge(after));
}

}  // namespace
}  // namespace fl::ranking::props
