// Rng: the only source of randomness in a simulated world.
//
// One root seed; every component draws from its own stream forked by name (`rng.fork("net")`), so
// adding a component or a draw in one stream does not reshuffle the others. No global state: an
// Rng is a value, copied or forked explicitly. Generator: xoshiro256** seeded through SplitMix64.
#pragma once

#include <cassert>
#include <cstdint>
#include <string_view>

#include "sim/hash.h"

namespace fl::sim {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t seed() const { return seed_; }
  // A new independent stream named `name`, derived from this stream's seed (not its position).
  Rng fork(std::string_view name) const { return Rng(combine(seed_, stable_hash(name))); }

  uint64_t next_u64();
  // Uniform in [0, bound). REQUIRES bound > 0.
  uint64_t below(uint64_t bound);
  // Uniform in [lo, hi]. REQUIRES lo <= hi.
  int64_t between(int64_t lo, int64_t hi);
  // Uniform in [0, 1).
  double unit();
  bool chance(double probability) { return probability > 0 && unit() < probability; }
  // Exponentially distributed with the given mean, rounded down; 0 when mean <= 0.
  int64_t exponential(double mean);

 private:
  uint64_t seed_;
  uint64_t s_[4];
};

}  // namespace fl::sim
