// Each checker passes on a clean hand-built run and FAILS on a run that violates its invariant.
#include "properties/combo/combo_checks.h"

#include <gtest/gtest.h>

namespace fl::combo {
namespace {

constexpr int64_t kT0 = 1'767'225'600'000'000;  // world epoch (us)

ContributionRecord record(int64_t id, int64_t qty, int64_t created_at_ms, int64_t activity = 1) {
  ContributionRecord r;
  r.id = id;
  r.activity_id = activity;
  r.user_id = 7;
  r.item_id = 2;
  r.item_type = "rose";
  r.item_name = "玫瑰";
  r.item_icon = "icon-rose.png";
  r.nickname = "user7";
  r.quantity = r.combo_count = qty;
  r.created_at = created_at_ms;
  return r;
}

// Two purchases 500 ms apart (one window), published once at t0+3.1 s, shown and polled right.
ComboRun clean_run() {
  ComboRun run;
  run.variant = Variant::kHardened;
  run.rows_known = true;
  run.redis_known = true;
  run.final_pending = 0;
  run.end_us = kT0 + 30'000'000;
  for (int i = 0; i < 2; ++i) {
    PurchaseOp op;
    op.ref = "c1-" + std::to_string(i);
    op.activity = 1;
    op.user = 7;
    op.result = PurchaseOp::Result::kOk;
    op.invoke_us = kT0 + i * 500'000;
    op.complete_us = op.invoke_us + 5'000;
    run.ops.push_back(op);
    RowObs row;
    row.row.id = 1 + i;
    row.row.activity_id = 1;
    row.row.user_id = 7;
    row.row.item_id = 2;
    row.row.item_type = "rose";
    row.row.quantity = 1;
    row.row.created_at = (op.invoke_us + 1000) / 1000;
    row.row.window_id = 1;
    row.client_ref = op.ref + "#0";
    run.rows.push_back(row);
  }
  const ContributionRecord r = record(1, 2, run.rows[0].row.created_at);
  PublishObs p;
  p.event.process = "replica-1";
  p.event.entry_id = "1-0";
  p.event.entry_first_id = 1;
  p.event.entry_window_id = 1;
  p.event.entry_activity_id = 1;
  p.event.entry_user_id = 7;
  p.event.entry_item_type = "rose";
  p.event.channel = channel_of(1);
  p.event.payload = encode_payload(1, r);
  p.begin_us = kT0 + 3'100'000;
  p.end_us = kT0 + 3'101'000;
  p.record = r;
  p.definite = true;
  run.publishes.push_back(p);
  UiObs ws;
  ws.event.client = "client-1";
  ws.event.activity_id = 1;
  ws.event.cause = "ws";
  ws.event.incoming = r;
  ws.event.after = {r};
  ws.event.merge_inputs = {{r}};
  ws.time_us = kT0 + 3'102'000;
  run.ui.push_back(ws);
  PollObs poll;
  poll.event.client = "client-1";
  poll.event.activity_id = 1;
  poll.event.records = {r};
  poll.begin_us = kT0 + 4'000'000;
  poll.end_us = kT0 + 4'010'000;
  run.polls.push_back(poll);
  run.rankings.push_back({1, kT0 + 20'000'000, {{7, 2}}});
  return run;
}

TEST(ComboChecks, CleanRunPassesEveryChecker) {
  const ComboRun run = clean_run();
  for (const ComboProperty& p : combo_properties()) {
    Verdict v = p.check(run);
    EXPECT_TRUE(v.passed) << p.info.name << ": " << (v.evidence.empty() ? "" : v.evidence[0]);
  }
}

void expect_fails(const ComboRun& run, Verdict (*check)(const ComboRun&)) {
  Verdict v = check(run);
  EXPECT_FALSE(v.passed) << v.property;
  EXPECT_FALSE(v.evidence.empty());
}

TEST(ComboChecks, DbGranularityFailsOnAMissingRow) {
  ComboRun run = clean_run();
  run.rows.pop_back();  // an ok purchase without its row
  expect_fails(run, check_db_granularity);
}

TEST(ComboChecks, ConservationFailsOnLostAndDoubleCounts) {
  ComboRun lost = clean_run();
  lost.publishes[0].record->quantity = 1;
  expect_fails(lost, check_quantity_conservation);
  ComboRun twice = clean_run();
  twice.publishes.push_back(twice.publishes[0]);
  expect_fails(twice, check_quantity_conservation);
}

TEST(ComboChecks, ConservationCountsARepublishAfterRedisLostTheFirstOnceOnly) {
  // Redis restarts 1 s after the publish (AOF everysec may lose the publish's DEL and ack): the
  // same window published again is counted once (COMBO-2 holds for restarts that keep the data).
  ComboRun lossy = clean_run();
  lossy.redis_outages.push_back({kT0 + 4'000'000, kT0 + 4'500'000});
  PublishObs again = lossy.publishes[0];
  again.begin_us = again.end_us = kT0 + 10'000'000;
  lossy.publishes.push_back(again);
  EXPECT_TRUE(check_quantity_conservation(lossy).passed);
  // The same repeat with no Redis loss before it is a double count.
  ComboRun twice = clean_run();
  twice.redis_outages.push_back({kT0 + 20'000'000, kT0 + 20'500'000});  // long after both
  PublishObs late = twice.publishes[0];
  late.begin_us = late.end_us = kT0 + 10'000'000;
  twice.publishes.push_back(late);
  expect_fails(twice, check_quantity_conservation);
}

TEST(ComboChecks, OnePushFailsOnWrongId) {
  ComboRun run = clean_run();
  run.publishes[0].record->id = 2;  // the window's last pid instead of its first
  expect_fails(run, check_one_push_per_window);
}

TEST(ComboChecks, TimelinessFailsOnALatePublish) {
  ComboRun run = clean_run();
  run.publishes[0].begin_us = kT0 + 9'000'000;
  expect_fails(run, check_timeliness);
}

TEST(ComboChecks, TimelinessAfterOneCrashAllowsDeltaRecoverOnly) {
  ComboRun run = clean_run();
  run.faults_injected = true;
  run.single_crash = true;
  run.publishes[0].begin_us = run.publishes[0].end_us = kT0 + 9'000'000;  // reclaimed ~6 s late
  EXPECT_TRUE(check_timeliness(run).passed);
  run.publishes[0].begin_us = run.publishes[0].end_us = kT0 + 14'000'000;  // past 0.5 + 3 + 10 s
  expect_fails(run, check_timeliness);
}

TEST(ComboChecks, NoEarlyFailsOnAnEarlyPublish) {
  ComboRun run = clean_run();
  run.publishes[0].end_us = kT0 + 1'000'000;
  expect_fails(run, check_no_early_or_split);
}

TEST(ComboChecks, NoSplitFailsWhenAWindowIsCut) {
  ComboRun run = clean_run();
  run.rows[1].row.window_id = 2;  // the second purchase (0.5 s later) in a window of its own
  run.publishes[0].record->quantity = run.publishes[0].record->combo_count = 1;
  PublishObs second = run.publishes[0];
  second.record = record(2, 1, run.rows[1].row.created_at);
  second.event.entry_window_id = 2;
  run.publishes.push_back(second);
  expect_fails(run, check_no_early_or_split);
}

TEST(ComboChecks, EntryBindingFailsWhenAnEntryPublishesAnotherWindow) {
  ComboRun run = clean_run();
  run.variant = Variant::kSpec;
  run.publishes[0].event.entry_window_id = 0;
  run.publishes[0].event.entry_first_id = 9;  // entry created for another window's first row
  expect_fails(run, check_entry_binding);
}

TEST(ComboChecks, EntryBindingFailsWhenTwoUnackedEntriesShareALiveWindow) {
  ComboRun run = clean_run();
  run.unacked_samples_taken = 200;
  EXPECT_TRUE(check_entry_binding(run).passed);
  run.unacked_shared.push_back({kT0 + 1'000'000, "combo:agg:1:7:2:1", {"1-0", "2-0"}});
  expect_fails(run, check_entry_binding);
}

TEST(ComboChecks, PelDrainsFailsOnPendingEntries) {
  ComboRun run = clean_run();
  run.final_pending = 3;
  expect_fails(run, check_pel_drains);
}

TEST(ComboChecks, NoGarbageFailsOnAnEmptyRecord) {
  ComboRun run = clean_run();
  run.publishes[0].record->quantity = 0;
  run.publishes[0].record->nickname.clear();
  expect_fails(run, check_no_garbage);
}

TEST(ComboChecks, TtlHygieneFailsOnAKeyWithoutTtl) {
  ComboRun run = clean_run();
  run.no_ttl_samples.push_back({"combo:agg:7:rose", -1, kT0});
  expect_fails(run, check_ttl_hygiene);
  ComboRun left = clean_run();
  left.final_keys.push_back({"combo:agg:lock:7:rose", 1000, kT0});
  expect_fails(left, check_ttl_hygiene);
}

TEST(ComboChecks, StreamBoundedFailsOnAnUntrimmedStream) {
  ComboRun run = clean_run();
  run.stream_maxlen = 50;
  run.stream_len_max = 150;  // MAXLEN ~ 50 may keep up to one more node of 100
  EXPECT_TRUE(check_stream_bounded(run).passed);
  run.stream_len_max = 240;  // every entry ever added: no trimming
  expect_fails(run, check_stream_bounded);
}

TEST(ComboChecks, DegradationFailsOnASilentDrop) {
  ComboRun run = clean_run();
  run.publishes.clear();
  run.degraded.push_back({1, "HINCRBY: unavailable"});
  expect_fails(run, check_degradation);
}

TEST(ComboChecks, PollingMergeFailsOnNilsAndCrossWindowSums) {
  ComboRun run = clean_run();
  run.polls[0].event.records.push_back(std::nullopt);
  expect_fails(run, check_polling_merge);
  ComboRun sum = clean_run();
  sum.polls[0].event.records[0]->quantity = 5;
  expect_fails(sum, check_polling_merge);
}

TEST(ComboChecks, MergeAlgebraFailsOnTheSpecMerge) {
  ComboRun run = clean_run();
  run.variant = Variant::kSpec;
  ContributionRecord r = record(1, 2, 1000);
  run.ui[0].event.merge_inputs = {{r, r}};  // the same id twice: spec sums it
  expect_fails(run, check_merge_algebra);
}

TEST(ComboChecks, UiConvergenceFailsOnAStaleQuantity) {
  ComboRun run = clean_run();
  run.ui[0].event.after[0].quantity = 1;
  expect_fails(run, check_ui_convergence);
}

TEST(ComboChecks, UiConvergenceFailsOnTwoItemsForOneWindow) {
  // A poll showed the window under a later pid before its first row was bound: two items.
  ComboRun run = clean_run();
  ContributionRecord partial = record(2, 1, run.rows[1].row.created_at);
  run.ui[0].event.after.push_back(partial);
  expect_fails(run, check_ui_convergence);
}

TEST(ComboChecks, UiConvergenceExemptsOnlyWindowsRedisMayHaveLost) {
  ComboRun lossy = clean_run();
  lossy.ui[0].event.after[0].quantity = 1;
  lossy.redis_outages.push_back({kT0 + 2'000'000, kT0 + 2'500'000});  // inside the window
  EXPECT_TRUE(check_ui_convergence(lossy).passed);
  ComboRun later = clean_run();
  later.ui[0].event.after[0].quantity = 1;
  later.redis_outages.push_back({kT0 + 20'000'000, kT0 + 20'500'000});  // long after it
  expect_fails(later, check_ui_convergence);
}

TEST(ComboChecks, NoWrongfulDropFailsWhenAPushIsFiltered) {
  ComboRun run = clean_run();
  run.ui[0].event.after.clear();
  expect_fails(run, check_no_wrongful_drop);
}

TEST(ComboChecks, IsolationFailsOnACrossActivityRecord) {
  ComboRun run = clean_run();
  run.publishes[0].event.channel = channel_of(2);
  expect_fails(run, check_activity_isolation);
}

TEST(ComboChecks, BoundedListFailsOnSixItemsAndOnDroppingTheNewest) {
  ComboRun run = clean_run();
  for (int i = 0; i < 5; ++i) run.ui[0].event.after.push_back(record(10 + i, 1, 1000));
  expect_fails(run, check_bounded_list);
  ComboRun newest = clean_run();
  UiObs& u = newest.ui[0];
  u.event.incoming = record(99, 1, 5000);
  u.event.before.clear();
  u.event.after.clear();
  for (int i = 0; i < 5; ++i) u.event.after.push_back(record(10 + i, 1, 1000));
  expect_fails(newest, check_bounded_list);
}

}  // namespace
}  // namespace fl::combo
