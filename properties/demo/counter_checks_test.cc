#include "properties/demo/counter_checks.h"

#include <gtest/gtest.h>

namespace fl::demo {
namespace {

std::vector<sim::Operation> history_of(int ok, int info, int fail) {
  std::vector<sim::Operation> h;
  auto add = [&](Outcome o) {
    sim::Operation op;
    op.id = h.size() + 1;
    op.op = "inc";
    op.complete_us = 1;
    op.outcome = o;
    h.push_back(op);
  };
  for (int i = 0; i < ok; ++i) add(Outcome::kOk);
  for (int i = 0; i < info; ++i) add(Outcome::kInfo);
  for (int i = 0; i < fail; ++i) add(Outcome::kFail);
  return h;
}

TEST(CounterChecks, PassWithinBounds) {
  auto h = history_of(3, 2, 4);
  for (int64_t counter = 3; counter <= 5; ++counter) {
    EXPECT_TRUE(check_no_double_count({&h, counter}).passed);
    EXPECT_TRUE(check_no_lost_increment({&h, counter}).passed);
  }
}

TEST(CounterChecks, DoubleCountIsCaught) {
  auto h = history_of(3, 2, 4);
  Verdict v = check_no_double_count({&h, 6});
  EXPECT_FALSE(v.passed);
  ASSERT_EQ(v.evidence.size(), 1u);
  EXPECT_NE(v.evidence[0].find("6 > 3"), std::string::npos);
}

TEST(CounterChecks, LostIncrementIsCaught) {
  auto h = history_of(3, 0, 0);
  EXPECT_FALSE(check_no_lost_increment({&h, 2}).passed);
}

TEST(CounterChecks, OpenOperationsCountAsIndeterminate) {
  auto h = history_of(1, 0, 0);
  sim::Operation open;
  open.id = 2;
  open.op = "inc";
  h.push_back(open);  // never completed
  EXPECT_TRUE(check_no_double_count({&h, 2}).passed);
  EXPECT_FALSE(check_no_double_count({&h, 3}).passed);
}

}  // namespace
}  // namespace fl::demo
