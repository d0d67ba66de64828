#include "properties/common/fault_budget.h"

#include <gtest/gtest.h>

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
}

TEST(FaultBudget, TheFaultNearestTheOutcomeNamesIt) {
  // A drift from the first second touches every later outcome of its node; a crash there later
  // is the explanation an exemption should cite.
  sim::FaultLog log = {
      FaultRecord{.time_us = T0 + 400'000, .kind = FaultKind::kClockDrift, .node = "replica-2", .value = 370},
      FaultRecord{.time_us = T0 + 5'000'000, .kind = FaultKind::kCrash, .node = "replica-2", .process = "replica-2"},
  };
  FaultBudget b(log, T0 + 10'000'000);
  const std::optional<std::string> early = b.explain({"replica-2"}, T0 + 1'000'000, T0 + 1'200'000);
  ASSERT_TRUE(early.has_value());
  EXPECT_NE(early->find("drift"), std::string::npos) << *early;
  const std::optional<std::string> late = b.explain({"replica-2"}, T0 + 5'100'000, T0 + 5'300'000);
  ASSERT_TRUE(late.has_value());
  EXPECT_NE(late->find("crash"), std::string::npos) << *late;
}

TEST(FaultBudget, PartitionLastsUntilHealOnBothEnds) {
  sim::FaultLog log = {
      FaultRecord{.time_us = T0 + 1'000'000, .kind = FaultKind::kPartition, .node = "replica-1", .peer_node = "redis"},
      FaultRecord{.time_us = T0 + 5'000'000, .kind = FaultKind::kHeal},
  };
  FaultBudget b(log, T0 + 10'000'000);
  EXPECT_TRUE(b.explain({"redis"}, T0 + 4'000'000, T0 + 4'000'000).has_value());
  EXPECT_TRUE(b.explain({"replica-1"}, T0 + 4'000'000, T0 + 4'000'000).has_value());
  EXPECT_FALSE(b.explain({"replica-1"}, T0 + 6'000'000, T0 + 7'000'000).has_value());
}

TEST(FaultBudget, UnhealedCrashLastsToTheEnd) {
  sim::FaultLog log = {
      FaultRecord{.time_us = T0 + 1'000'000, .kind = FaultKind::kCrash, .node = "n", .process = "p"},
  };
  FaultBudget b(log, T0 + 10'000'000);
  ASSERT_TRUE(b.explain({"p"}, T0 + 9'000'000, T0 + 9'500'000).has_value());
  EXPECT_NE(b.explain({"p"}, T0 + 9'000'000, T0 + 9'500'000)->find("crash of p"), std::string::npos);
}

// An eviction explains the loss of its key only: not another key, not the Redis node as a whole.
TEST(FaultBudget, AnEvictionExplainsOnlyItsKey) {
  sim::FaultLog log = {FaultRecord{.time_us = T0 + 1'000'000, .kind = FaultKind::kEviction, .node = "redis",
                                   .process = "redis", .detail = "combo:agg:1"}};
  FaultBudget b(log, T0 + 10'000'000);
  EXPECT_TRUE(b.explain({FaultBudget::eviction_place("combo:agg:1")}, T0, T0 + 2'000'000).has_value());
  EXPECT_FALSE(b.explain({FaultBudget::eviction_place("combo:agg:2")}, T0, T0 + 2'000'000).has_value());
  EXPECT_FALSE(b.explain({"redis"}, T0, T0 + 2'000'000).has_value());
  EXPECT_FALSE(b.explain({FaultBudget::eviction_place("combo:agg:1")}, T0 + 1'000'001, T0 + 2'000'000).has_value());
}

// A late duplicate touches its client and the server it reached at the instant it was sent (an
// indeterminate answer of an operation in flight then is excusable), nothing else, never later.
TEST(FaultBudget, ALateDuplicateTouchesOnlyItsEndsAtItsInstant) {
  sim::FaultLog log = {FaultRecord{.time_us = T0 + 1'000'000, .kind = FaultKind::kLateDuplicate, .node = "c",
                                   .process = "client-0", .peer_process = "replica-0", .value = 3'000'000}};
  FaultBudget b(log, T0 + 10'000'000);
  EXPECT_TRUE(b.explain({"client-0"}, T0 + 900'000, T0 + 1'100'000).has_value());
  EXPECT_TRUE(b.explain({"replica-0"}, T0 + 900'000, T0 + 1'100'000).has_value());
  EXPECT_FALSE(b.explain({"replica-1", "redis", "c"}, T0, T0 + 10'000'000).has_value());
  EXPECT_FALSE(b.explain({"client-0"}, T0 + 1'000'001, T0 + 10'000'000).has_value());
}

}  // namespace
}  // namespace fl::props
