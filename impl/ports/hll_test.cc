// The HyperLogLog definition ranking stores: a fixed hash, exact register-level merge, estimates
// within the documented bound, and a lossless encoding.
#include "impl/ports/hll.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

// The header's definition, written out plainly: the fast paths of estimate() and encode() must
// give exactly these (stored rows hold both).
int64_t estimate_by_definition(const Hll& h) {
  const double m = kHllRegisters;
  double sum = 0;
  int64_t zeros = 0;
  for (uint8_t r : h.registers()) {
    sum += std::ldexp(1.0, -r);
    zeros += r == 0 ? 1 : 0;
  }
  double e = 0.7213 / (1 + 1.079 / m) * m * m / sum;
  if (e <= 2.5 * m && zeros > 0) e = m * std::log(m / static_cast<double>(zeros));
  return std::llround(e);
}

std::string encoding_by_definition(const Hll& h) {
  std::string out;
  for (size_t j = 0; j < h.registers().size(); ++j) {
    if (h.registers()[j] == 0) continue;
    out += (out.empty() ? "" : ",") + std::to_string(j) + ":" + std::to_string(h.registers()[j]);
  }
  return out;
}

TEST(Hll, EstimateAndEncodingAreExactlyTheDefinition) {
  for (int n : {0, 1, 3, 40, 700, 2600, 3000, 50000}) {
    const Hll h = of_range(0, n);
    EXPECT_EQ(h.estimate(), estimate_by_definition(h)) << n;
    EXPECT_EQ(h.encode(), encoding_by_definition(h)) << n;
  }
  // The largest rank a register can hold (all 54 bits after the index zero) is in the table too.
  const Hll top = Hll::decode("0:55,1023:1").value();
  EXPECT_EQ(top.estimate(), estimate_by_definition(top));
  EXPECT_EQ(top.encode(), "0:55,1023:1");
}

}  // namespace
}  // namespace fl
