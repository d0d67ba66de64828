#include "properties/common/fault_budget.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "sim/node_clock.h"

namespace fl::props {
namespace {

using sim::FaultKind;
using sim::FaultRecord;
constexpr int64_t T0 = sim::kEpochUs;

TEST(FaultBudget, FaultFreeRunExplainsNothing) {
  FaultBudget b(sim::FaultLog{}, T0 + 10'000'000);
  EXPECT_FALSE(b.any());
  EXPECT_FALSE(b.explain({"redis", "replica-1"}, T0, T0 + 10'000'000).has_value());
  EXPECT_FALSE(b.instant_in({"redis", "replica-1"}, T0, T0 + 10'000'000).has_value());
  EXPECT_FALSE(b.touched(1).has_value());
  EXPECT_EQ(b.clock("redis", T0, T0 + 10'000'000).error_us, 0);
}

TEST(FaultBudget, CrashCoversTheDowntimeOnlyAndOnlyItsPlace) {
  sim::FaultLog log = {
      FaultRecord{.time_us = T0 + 1'000'000, .kind = FaultKind::kCrash, .node = "redis", .process = "redis"},
      FaultRecord{.time_us = T0 + 2'000'000, .kind = FaultKind::kRestart, .node = "redis", .process = "redis"},
  };
  FaultBudget b(log, T0 + 10'000'000);
  EXPECT_TRUE(b.explain({"redis"}, T0 + 1'500'000, T0 + 1'600'000).has_value());
  EXPECT_FALSE(b.explain({"db"}, T0 + 1'500'000, T0 + 1'600'000).has_value());
  EXPECT_FALSE(b.explain({"redis"}, T0 + 3'000'000, T0 + 4'000'000).has_value());
  EXPECT_TRUE(b.explain({"redis"}, T0 + 3'000'000, T0 + 4'000'000, /*slack_us=*/1'000'001).has_value());
  EXPECT_EQ(b.downtimes("redis"), (std::vector<std::pair<int64_t, int64_t>>{{T0 + 1'000'000, T0 + 2'000'000}}));
}

// The faults that change nothing: a 0 ppm drift, a 0 ms jump, a 0 ms pause, a clog that held no
// message, a partition that lost none. None of them explains anything, anywhere, ever.
TEST(FaultBudget, ANullFaultReachesNothing) {
  sim::FaultLog log = {
      FaultRecord{.time_us = T0 + 100'000, .kind = FaultKind::kClockDrift, .node = "db", .value = 0},
      FaultRecord{.time_us = T0 + 100'000, .kind = FaultKind::kClockJump, .node = "db", .value = 0},
      FaultRecord{.time_us = T0 + 100'000, .kind = FaultKind::kPause, .node = "db", .process = "db"},
      FaultRecord{.time_us = T0 + 100'000,
                  .kind = FaultKind::kClog,
                  .node = "db",
                  .peer_node = "client-1",
                  .duration_us = 1'000'000,
                  .one_way = true},
      FaultRecord{.time_us = T0 + 100'000, .kind = FaultKind::kPartition, .node = "db", .peer_node = "client-1"},
      FaultRecord{.time_us = T0 + 5'000'000, .kind = FaultKind::kHeal},
  };
  FaultBudget b(log, T0 + 10'000'000);
  for (const char* place : {"db", "client-1"}) {
    EXPECT_FALSE(b.explain({place}, T0, T0 + 10'000'000, 10'000'000).has_value()) << place;
    EXPECT_EQ(b.covered_us({place}, T0, T0 + 10'000'000), 0) << place;
    EXPECT_FALSE(b.instant_in({place}, T0, T0 + 10'000'000).has_value()) << place;
  }
  const ClockReach c = b.clock("db", T0, T0 + 10'000'000);
  EXPECT_EQ(c.max_abs_offset_us, 0);
  EXPECT_EQ(c.error_us, 0);
  EXPECT_EQ(c.max_fall_us, 0);
  EXPECT_EQ(c.what, "");
}

// A drift moves its node's clock by ppm x elapsed and a jump by its size; neither is a span.
TEST(FaultBudget, ClockFaultsMoveTheClockByTheirSizeAndAreNeverSpans) {
  sim::FaultLog log = {
      FaultRecord{.time_us = T0 + 1'000'000, .kind = FaultKind::kClockDrift, .node = "replica-2", .value = 500},
      FaultRecord{.time_us = T0 + 5'000'000, .kind = FaultKind::kClockJump, .node = "replica-2", .value = -2'000},
  };
  FaultBudget b(log, T0 + 10'000'000);
  EXPECT_FALSE(b.explain({"replica-2"}, T0, T0 + 10'000'000).has_value());
  EXPECT_EQ(b.clock_offset_us("replica-2", T0 + 1'000'000), 0);
  EXPECT_EQ(b.clock_offset_us("replica-2", T0 + 3'000'000), 1'000);  // 500 ppm x 2 s
  EXPECT_EQ(b.clock_offset_us("replica-2", T0 + 5'000'000), 0);      // 2 ms of drift, then -2 ms
  EXPECT_EQ(b.clock("replica-2", T0 + 1'000'000, T0 + 3'000'000).error_us, 1'000);
  EXPECT_EQ(b.clock("replica-2", T0 + 1'000'000, T0 + 3'000'000).min_offset_us, 0);
  EXPECT_EQ(b.clock("replica-2", T0 + 1'000'000, T0 + 3'000'000).max_offset_us, 1'000);
  EXPECT_NEAR(b.clock("replica-2", T0 + 4'000'000, T0 + 6'000'000).max_offset_us, 2'000, 1);  // before the jump
  EXPECT_NEAR(b.clock("replica-2", T0 + 4'000'000, T0 + 6'000'000).min_offset_us, 0, 1);      // at it
  EXPECT_NEAR(b.clock("replica-2", T0 + 4'000'000, T0 + 6'000'000).error_us, 2'000, 1);       // up to 2 ms, then 0
  EXPECT_EQ(b.clock("replica-2", T0, T0 + 900'000).error_us, 0);                              // before the drift began
  EXPECT_EQ(b.clock("other", T0, T0 + 10'000'000).error_us, 0);
  // Only the jump back is a fall; the forward drift before it is none.
  EXPECT_EQ(b.clock("replica-2", T0 + 1'000'000, T0 + 3'000'000).max_fall_us, 0);
  EXPECT_NEAR(b.clock("replica-2", T0 + 4'000'000, T0 + 6'000'000).max_fall_us, 2'000, 1);
  EXPECT_EQ(b.clock("other", T0, T0 + 10'000'000).max_fall_us, 0);
}

// A reader that never lets the clock go back (the log broker's) stays at the clock's highest
// reading after a jump back until the clock catches up; a jump forward moves it at once.
TEST(FaultBudget, AMonotonicReaderFreezesAtAJumpBackUntilTheClockCatchesUp) {
  sim::FaultLog log = {
      FaultRecord{.time_us = T0 + 2'000'000, .kind = FaultKind::kClockJump, .node = "log", .value = -3'000'000},
      FaultRecord{.time_us = T0 + 8'000'000, .kind = FaultKind::kClockJump, .node = "log", .value = 1'000'000},
  };
  FaultBudget b(log, T0 + 20'000'000);
  EXPECT_EQ(b.monotonic_clock_us("log", T0 + 1'000'000), T0 + 1'000'000);
  EXPECT_EQ(b.monotonic_clock_us("log", T0 + 2'000'000), T0 + 2'000'000 - 1);  // frozen at the jump
  EXPECT_EQ(b.monotonic_clock_us("log", T0 + 4'000'000), T0 + 2'000'000 - 1);  // local 1 s: still frozen
  EXPECT_EQ(b.monotonic_clock_us("log", T0 + 6'000'000), T0 + 3'000'000);      // caught up
  EXPECT_EQ(b.monotonic_clock_us("log", T0 + 8'000'000), T0 + 6'000'000);      // forward: at once
  EXPECT_EQ(b.monotonic_clock_us("other", T0 + 8'000'000), T0 + 8'000'000);
  // A null jump (0 ms) freezes nothing.
  FaultBudget null_jump({FaultRecord{.time_us = T0 + 2'000'000, .kind = FaultKind::kClockJump, .node = "log"}},
                        T0 + 20'000'000);
  EXPECT_EQ(null_jump.monotonic_clock_us("log", T0 + 4'000'000), T0 + 4'000'000);
}

TEST(FaultBudget, PartitionLastsUntilHealOnBothEndsWhenItLostAMessage) {
  sim::FaultLog log = {
      FaultRecord{.time_us = T0 + 1'000'000, .kind = FaultKind::kPartition, .node = "replica-1", .peer_node = "redis"},
      FaultRecord{.time_us = T0 + 2'000'000,
                  .kind = FaultKind::kMessageLost,
                  .node = "replica-1",
                  .process = "replica-1",
                  .peer_node = "redis",
                  .peer_process = "redis",
                  .detail = "partition",
                  .cause = 7},
      FaultRecord{.time_us = T0 + 5'000'000, .kind = FaultKind::kHeal},
  };
  FaultBudget b(log, T0 + 10'000'000);
  EXPECT_TRUE(b.explain({"redis"}, T0 + 4'000'000, T0 + 4'000'000).has_value());
  EXPECT_TRUE(b.explain({"replica-1"}, T0 + 4'000'000, T0 + 4'000'000).has_value());
  EXPECT_FALSE(b.explain({"replica-1"}, T0 + 6'000'000, T0 + 7'000'000).has_value());
  EXPECT_TRUE(b.touched(7).has_value());
  EXPECT_FALSE(b.touched(8).has_value());
  // Each end's span names the other end (a judge may weigh only the links on a path).
  ASSERT_EQ(b.spans().size(), 2u);
  for (const FaultSpan& s : b.spans()) EXPECT_EQ(s.peer, s.place == "redis" ? "replica-1" : "redis");
}

TEST(FaultBudget, AClogIsASpanOnlyWhenItHeldAMessageBack) {
  sim::FaultLog log = {
      FaultRecord{.time_us = T0 + 1'000'000,
                  .kind = FaultKind::kClog,
                  .node = "a",
                  .peer_node = "b",
                  .duration_us = 2'000'000,
                  .one_way = true},
      FaultRecord{.time_us = T0 + 1'500'000,
                  .kind = FaultKind::kDelayed,
                  .node = "a",
                  .process = "a",
                  .peer_node = "b",
                  .peer_process = "b",
                  .value = 1'500'000,
                  .detail = "clog",
                  .cause = 3},
      FaultRecord{.time_us = T0 + 6'000'000,
                  .kind = FaultKind::kClog,
                  .node = "a",
                  .peer_node = "c",
                  .duration_us = 2'000'000,
                  .one_way = true},
  };
  FaultBudget b(log, T0 + 10'000'000);
  EXPECT_EQ(b.covered_us({"b"}, T0, T0 + 10'000'000), 2'000'000);
  EXPECT_EQ(b.covered_us({"c"}, T0, T0 + 10'000'000), 0);
  EXPECT_EQ(b.held_us(3), 1'500'000);
  EXPECT_EQ(b.held_us(4), 0);
}

TEST(FaultBudget, UnhealedCrashLastsToTheEnd) {
  sim::FaultLog log = {
      FaultRecord{.time_us = T0 + 1'000'000, .kind = FaultKind::kCrash, .node = "n", .process = "p"},
  };
  FaultBudget b(log, T0 + 10'000'000);
  ASSERT_TRUE(b.explain({"p"}, T0 + 9'000'000, T0 + 9'500'000).has_value());
  EXPECT_NE(b.explain({"p"}, T0 + 9'000'000, T0 + 9'500'000)->find("crash of p"), std::string::npos);
  EXPECT_TRUE(b.explain({"n"}, T0 + 9'000'000, T0 + 9'500'000).has_value());
}

// An eviction explains the loss of its key only: not another key, not the Redis node as a whole.
TEST(FaultBudget, AnEvictionExplainsOnlyItsKey) {
  sim::FaultLog log = {FaultRecord{.time_us = T0 + 1'000'000,
                                   .kind = FaultKind::kEviction,
                                   .node = "redis",
                                   .process = "redis",
                                   .detail = "combo:agg:1"}};
  FaultBudget b(log, T0 + 10'000'000);
  EXPECT_TRUE(b.instant_in({FaultBudget::eviction_place("combo:agg:1")}, T0, T0 + 2'000'000).has_value());
  EXPECT_FALSE(b.instant_in({FaultBudget::eviction_place("combo:agg:2")}, T0, T0 + 2'000'000).has_value());
  EXPECT_FALSE(b.instant_in({"redis"}, T0, T0 + 2'000'000).has_value());
  EXPECT_FALSE(b.explain({"redis"}, T0, T0 + 2'000'000).has_value());
  EXPECT_FALSE(b.instant_in({FaultBudget::eviction_place("combo:agg:1")}, T0 + 1'000'001, T0 + 2'000'000).has_value());
}

// An instant fault touches the processes it names, at its instant, and the operation it hit.
TEST(FaultBudget, AnInstantTouchesItsEndsAtItsInstantAndItsOperation) {
  sim::FaultLog log = {FaultRecord{.time_us = T0 + 1'000'000,
                                   .kind = FaultKind::kLateDuplicate,
                                   .node = "c",
                                   .process = "client-0",
                                   .peer_process = "replica-0",
                                   .value = 3'000'000,
                                   .cause = 12}};
  FaultBudget b(log, T0 + 10'000'000);
  EXPECT_TRUE(b.instant_in({"client-0"}, T0 + 900'000, T0 + 1'100'000).has_value());
  EXPECT_TRUE(b.instant_in({"replica-0"}, T0 + 900'000, T0 + 1'100'000).has_value());
  EXPECT_FALSE(b.instant_in({"replica-1", "redis"}, T0, T0 + 10'000'000).has_value());
  EXPECT_FALSE(b.instant_in({"client-0"}, T0 + 1'000'001, T0 + 10'000'000).has_value());
  EXPECT_FALSE(b.explain({"client-0", "replica-0"}, T0, T0 + 10'000'000).has_value());
  EXPECT_TRUE(b.touched(12).has_value());
  EXPECT_FALSE(b.touched(11).has_value());
  EXPECT_FALSE(b.touched(0).has_value());
}

// naming(op) lists every record of operation op in time order (touched() describes only the first).
TEST(FaultBudget, NamingListsEveryRecordOfAnOperationInTimeOrder) {
  sim::FaultLog log = {
      FaultRecord{.time_us = T0 + 1'000,
                  .kind = FaultKind::kDelayed,
                  .process = "replica-0",
                  .value = 500,
                  .detail = "clog",
                  .cause = 7,
                  .message = "sql: sql txn replica-0#3"},
      FaultRecord{.time_us = T0 + 2'000, .kind = FaultKind::kRedisError, .process = "redis", .cause = 8},
      FaultRecord{.time_us = T0 + 3'000, .kind = FaultKind::kMessageLost, .process = "db", .cause = 7}};
  FaultBudget b(log, T0 + 10'000);
  const std::vector<const FaultRecord*> seven = b.naming(7);
  ASSERT_EQ(seven.size(), 2u);
  EXPECT_EQ(seven[0]->time_us, T0 + 1'000);
  EXPECT_EQ(seven[0]->message, "sql: sql txn replica-0#3");
  EXPECT_EQ(seven[1]->time_us, T0 + 3'000);
  EXPECT_EQ(b.naming(8).size(), 1u);
  EXPECT_TRUE(b.naming(9).empty());
  EXPECT_TRUE(b.naming(0).empty());
}

// covered_us is the union of the spans at the places, clipped to the window: overlaps count once,
// other places and instants count nothing; instant_in names the first instant in the window.
TEST(FaultBudget, CoveredTimeIsTheUnionOfThePlacesSpansInTheWindow) {
  sim::FaultLog log = {
      FaultRecord{
          .time_us = T0 + 1'000, .kind = FaultKind::kPause, .node = "db", .process = "db", .duration_us = 4'000},
      FaultRecord{
          .time_us = T0 + 2'000, .kind = FaultKind::kPause, .node = "redis", .process = "redis", .duration_us = 1'000},
      FaultRecord{
          .time_us = T0 + 4'000, .kind = FaultKind::kPause, .node = "redis", .process = "redis", .duration_us = 4'000},
      FaultRecord{.time_us = T0 + 6'000, .kind = FaultKind::kPause, .node = "x", .process = "x", .duration_us = 9'000},
      FaultRecord{.time_us = T0 + 9'000,
                  .kind = FaultKind::kMessageLost,
                  .node = "a",
                  .process = "a",
                  .peer_node = "db",
                  .peer_process = "db"},
  };
  FaultBudget b(log, T0 + 20'000);
  EXPECT_EQ(b.covered_us({"db", "redis"}, T0, T0 + 20'000), 7'000);  // [1000, 8000]
  EXPECT_EQ(b.covered_us({"db", "redis"}, T0 + 3'000, T0 + 7'000), 4'000);
  EXPECT_EQ(b.covered_us({"redis"}, T0, T0 + 20'000), 5'000);
  EXPECT_EQ(b.covered_us({"y"}, T0, T0 + 20'000), 0);
  ASSERT_TRUE(b.instant_in({"db"}, T0, T0 + 20'000).has_value());
  EXPECT_FALSE(b.instant_in({"db"}, T0 + 9'001, T0 + 20'000).has_value());
  EXPECT_FALSE(b.instant_in({"redis"}, T0, T0 + 20'000).has_value());  // pauses are not instants
}

// explain answers what the contract says, by its indexed search: the same fault a scan of every
// span in start order would name (the last one that starts by `to`, reaches `from - slack` and
// touches one of the places), over random fault logs and queries.
RC_GTEST_PROP(FaultBudget, ExplainNamesWhatAScanOfEverySpanNames, ()) {
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  const auto name = [&] { return names[*rc::gen::inRange<size_t>(0, names.size())]; };
  const auto at = [] { return T0 + *rc::gen::inRange<int64_t>(0, 20) * 250'000; };
  sim::FaultLog log;
  const int faults = *rc::gen::inRange(0, 25);
  for (int i = 0; i < faults; ++i) {
    FaultRecord r{.time_us = at(),
                  .node = name(),
                  .process = name(),
                  .peer_node = name(),
                  .peer_process = name(),
                  .duration_us = *rc::gen::inRange<int64_t>(0, 3'000'000)};
    r.kind = *rc::gen::element(FaultKind::kCrash, FaultKind::kRestart, FaultKind::kPause, FaultKind::kPartition,
                               FaultKind::kHeal, FaultKind::kClog, FaultKind::kMessageLost, FaultKind::kClockDrift,
                               FaultKind::kStorageError, FaultKind::kLateDuplicate, FaultKind::kDelayed);
    r.detail = *rc::gen::element(std::string("partition"), std::string("clog"), std::string());
    log.push_back(r);
  }
  std::stable_sort(log.begin(), log.end(),
                   [](const FaultRecord& x, const FaultRecord& y) { return x.time_us < y.time_us; });
  const FaultBudget budget(log, T0 + 6'000'000);
  for (int q = 0; q < 20; ++q) {
    std::vector<std::string> places = {name()};
    if (*rc::gen::arbitrary<bool>()) places.push_back(name());
    const int64_t from = at(), to = from + *rc::gen::inRange<int64_t>(0, 4) * 250'000;
    const int64_t slack = *rc::gen::inRange<int64_t>(0, 3) * 500'000;
    const FaultSpan* scan = nullptr;
    for (const FaultSpan& s : budget.spans()) {
      if (s.from_us <= to && s.to_us >= from - slack && std::count(places.begin(), places.end(), s.place) > 0) {
        scan = &s;
      }
    }
    const std::optional<std::string> named = budget.explain(places, from, to, slack);
    RC_ASSERT(named.has_value() == (scan != nullptr));
    if (scan != nullptr) RC_ASSERT(*named == scan->what);
  }
}

}  // namespace
}  // namespace fl::props
