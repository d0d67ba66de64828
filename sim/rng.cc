#include "sim/rng.h"
#include "impl/ports/assert.h"

#include <cmath>

namespace fl::sim {

namespace {
constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(uint64_t seed) : seed_(seed) {
  uint64_t x = seed;
  for (auto& word : s_) {
    x += 0x9e3779b97f4a7c15ULL;
    word = mix64(x);
  }
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Rng::below(uint64_t bound) {
  FL_ASSERT(bound > 0);
  // Lemire's nearly divisionless method, with rejection so the draw is exactly uniform.
  __uint128_t m = static_cast<__uint128_t>(next_u64()) * bound;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < bound) {
    const uint64_t threshold = -bound % bound;
    while (low < threshold) {
      m = static_cast<__uint128_t>(next_u64()) * bound;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

int64_t Rng::between(int64_t lo, int64_t hi) {
  FL_ASSERT(lo <= hi);
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (span == 0) return static_cast<int64_t>(next_u64());  // the full 64-bit range
  return lo + static_cast<int64_t>(below(span));
}

double Rng::unit() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

int64_t Rng::exponential(double mean) {
  if (mean <= 0) return 0;
  const double u = unit();
  return static_cast<int64_t>(-mean * std::log1p(-u));
}

}  // namespace fl::sim
