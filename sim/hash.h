// Stable 64-bit hashing for fingerprints, RNG forks and config digests.
//
// Unlike std::hash and absl::Hash these give the same value in every process and on every
// machine, which is what a trace fingerprint compared across processes needs.
#pragma once

#include <cstdint>
#include <string_view>

namespace fl::sim {

// SplitMix64's finaliser: a bijective avalanche of 64 bits.
constexpr uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// Order-sensitive combination: combine(combine(s, a), b) != combine(combine(s, b), a).
constexpr uint64_t combine(uint64_t state, uint64_t value) {
  return mix64((state ^ 0x9e3779b97f4a7c15ULL) + value * 0xff51afd7ed558ccdULL + (state << 6));
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

}  // namespace fl::sim
