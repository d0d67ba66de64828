// Stable 64-bit hashing: the same value in every process and on every machine (unlike std::hash,
// which is unspecified, and absl::Hash, which is seeded per process). The world uses it for trace
// fingerprints, RNG forks and log partitioning (sim/hash.h); service code for values it stores,
// such as the registers of a HyperLogLog sketch (impl/ports/hll.h). Stored values and saved trace
// fingerprints depend on it, so it stays as it is.
#pragma once

#include <cstdint>
#include <string_view>

namespace fl {

// SplitMix64's finaliser: a bijective avalanche of 64 bits.
constexpr uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// FNV-1a over the bytes, finalised with mix64.
constexpr uint64_t stable_hash(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return mix64(h);
}

}  // namespace fl
