// The HyperLogLog definition ranking stores: a fixed hash, exact register-level merge, estimates
// within the documented bound, and a lossless encoding.
#include "impl/ports/hll.h"

#include <gtest/gtest.h>

#include <string>

namespace fl {
namespace {

Hll of_range(int from, int to) {
  Hll h;
  for (int i = from; i < to; ++i) h.add("actor-" + std::to_string(i));
  return h;
}

TEST(Hll, HashIsFixedAcrossProcesses) {
  // Golden values: stored registers depend on them, so a change of the hash is a format change.
  EXPECT_EQ(hll_hash("actor-1"), hll_hash(std::string("actor-") + "1"));
  EXPECT_NE(hll_hash("actor-1"), hll_hash("actor-2"));
  EXPECT_EQ(hll_hash("a"), 0x02c0bdbf481420f8ULL);
}

TEST(Hll, EmptyEstimatesZeroAndEncodesEmpty) {
  Hll h;
  EXPECT_EQ(h.estimate(), 0);
  EXPECT_EQ(h.encode(), "");
  EXPECT_EQ(Hll::decode("").value(), h);
}

TEST(Hll, EstimatesStayWithinTheDocumentedBound) {
  for (int n : {1, 2, 5, 10, 50, 100, 500, 1000, 2000, 2600, 5000, 20000, 100000}) {
    const Hll h = of_range(0, n);
    EXPECT_LE(std::llabs(h.estimate() - n), hll_error_bound(n)) << n;
  }
  // Small sets are exact or nearly so (linear counting).
  EXPECT_EQ(of_range(0, 1).estimate(), 1);
  EXPECT_LE(std::llabs(of_range(0, 50).estimate() - 50), 2);
}

TEST(Hll, MergeIsTheSketchOfTheUnion) {
  Hll a = of_range(0, 700), b = of_range(400, 1500);
  Hll u = a;
  u.merge(b);
  EXPECT_EQ(u, of_range(0, 1500));  // exact at register level
  Hll v = b;
  v.merge(a);
  EXPECT_EQ(u, v);  // commutative
  v.merge(a);
  EXPECT_EQ(u, v);  // idempotent
  // Adding the same elements again changes nothing: the sketch is a function of the set.
  Hll twice = of_range(0, 700);
  for (int i = 0; i < 700; ++i) twice.add("actor-" + std::to_string(i));
  EXPECT_EQ(twice, a);
}

TEST(Hll, EncodingRoundTripsAndRejectsGarbage) {
  const Hll h = of_range(0, 300);
  EXPECT_EQ(Hll::decode(h.encode()).value(), h);
  for (const char* bad : {"x", "1:", ":3", "1:0", "1024:3", "5:99", "1:2,", "1;2"}) {
    EXPECT_FALSE(Hll::decode(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace fl
