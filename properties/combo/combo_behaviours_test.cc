// combo_behaviours names what a hand-built run exercised, and nothing a run did not: each
// behaviour appears when its observation is added and not before (a null fault adds none).
#include "properties/combo/combo_behaviours.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/fault_log.h"

namespace fl::combo {
namespace {

constexpr int64_t kT0 = 1'767'225'600'000'000;  // world epoch (us)

bool has(const ComboRun& run, const std::string& name) {
  const std::vector<std::string> b = combo_behaviours(run);
  return std::find(b.begin(), b.end(), name) != b.end();
}

RowObs row(int64_t pid, int64_t activity, int64_t redis_us) {
  RowObs r;
  r.row.id = pid;
  r.row.activity_id = activity;
  r.row.user_id = 7;
  r.row.item_id = 2;
  r.redis_us = redis_us;
  return r;
}

ContributionRecord record(int64_t id, int64_t qty) {
  ContributionRecord r;
  r.id = id;
  r.activity_id = 1;
  r.user_id = 7;
  r.item_id = 2;
  r.quantity = r.combo_count = qty;
  return r;
}

ComboRun quiet_run() {
  ComboRun run;
  run.end_us = kT0 + 30'000'000;
  run.service_places = {"replica-1", "redis", "db"};
  run.clock_nodes = {"replica-1", "redis"};
  run.rows = {row(1, 1, kT0), row(2, 1, kT0 + 1'000'000)};
  run.entries.push_back({"1-0", kT0, {{"activity_id", "1"}, {"user_id", "7"}, {"item_id", "2"}}});
  for (int i = 1; i <= 30; ++i) run.unacked.push_back({kT0 + i * 100'000, {run.entries[0]}});
  run.publishes.push_back({kT0 + 3'100'000, channel_of(1), "", record(1, 2), "1-0"});
  return run;
}

TEST(ComboBehaviours, AQuietRunExercisesNothing) {
  EXPECT_EQ(combo_behaviours(quiet_run()), std::vector<std::string>{});
}

TEST(ComboBehaviours, ClientAnswersAndStoreLosses) {
  ComboRun run = quiet_run();
  run.ops.push_back(PurchaseOp{.result = PurchaseOp::Result::kOk, .alerted = true});
  run.ops.push_back(PurchaseOp{.result = PurchaseOp::Result::kInfo});
  run.committed_pids = {1, 2, 2};
  EXPECT_TRUE(has(run, "purchase answered alerted"));
  EXPECT_TRUE(has(run, "purchase answered indeterminate"));
  EXPECT_TRUE(has(run, "pid reused after a DB power loss"));
  EXPECT_FALSE(has(run, "Redis restart with a window pending"));
  run.redis_outages.push_back({kT0 + 2'500'000, kT0 + 4'000'000});  // the entry was unacked then
  EXPECT_TRUE(has(run, "Redis restart with a window pending"));
}

TEST(ComboBehaviours, PushesAndStream) {
  ComboRun run = quiet_run();
  EXPECT_FALSE(has(run, "stream entry unacked longer than the claim idle"));
  for (int i = 31; i <= 60; ++i) run.unacked.push_back({kT0 + i * 100'000, {run.entries[0]}});
  EXPECT_TRUE(has(run, "stream entry unacked longer than the claim idle"));
  run.publishes.push_back(run.publishes[0]);
  EXPECT_TRUE(has(run, "window published twice"));
  // A 0 ms pause and a 0 ppm drift move nothing: no behaviour of a worker held or a clock moved.
  sim::FaultLog log = {
      sim::FaultRecord{
          .time_us = kT0 + 100'000, .kind = sim::FaultKind::kClockDrift, .node = "redis", .process = "redis"},
      sim::FaultRecord{
          .time_us = kT0 + 200'000, .kind = sim::FaultKind::kPause, .node = "replica-1", .process = "replica-1"}};
  run.faults = props::FaultBudget(log, run.end_us);
  EXPECT_FALSE(has(run, "window timed by a moved clock"));
  EXPECT_FALSE(has(run, "window pending while a worker was down or paused"));
  log[0].value = 500;
  log[1].duration_us = 1'000'000;
  run.faults = props::FaultBudget(log, run.end_us);
  EXPECT_TRUE(has(run, "window timed by a moved clock"));
  EXPECT_TRUE(has(run, "window pending while a worker was down or paused"));
}

TEST(ComboBehaviours, ClickTimingAndPages) {
  ComboRun run = quiet_run();
  run.rows.push_back(row(3, 1, kT0 + 3'002'000));  // 3 s + 2 ms after the first
  EXPECT_TRUE(has(run, "clicks of one key a window apart"));
  EXPECT_FALSE(has(run, "one user and item in two activities at once"));
  run.rows.push_back(row(4, 2, kT0 + 3'500'000));
  EXPECT_TRUE(has(run, "one user and item in two activities at once"));
  UiObs u;
  u.event.cause = "ws";
  u.event.before = {record(1, 1), record(2, 1), record(3, 1), record(4, 1)};
  u.event.merges = {MergeCall{{record(5, 1), record(5, 1)}, {}, {}, {}, ""}};
  run.ui.push_back(u);
  EXPECT_FALSE(has(run, "page list full when a window arrived"));
  EXPECT_FALSE(has(run, "page merged two copies of one window"));
  run.ui[0].event.before.push_back(record(9, 1));
  run.ui[0].event.merges[0].input[1].quantity = 3;
  EXPECT_TRUE(has(run, "page list full when a window arrived"));
  EXPECT_TRUE(has(run, "page merged two copies of one window"));
}

}  // namespace
}  // namespace fl::combo
