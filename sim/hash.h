// Stable 64-bit hashing for fingerprints, RNG forks and config digests.
//
// Unlike std::hash and absl::Hash these give the same value in every process and on every
// machine, which is what a trace fingerprint compared across processes needs. mix64 and
// stable_hash are impl/ports/stable_hash.h's (service code stores values hashed by them too).
#pragma once

#include <cstdint>
#include <string_view>

#include "impl/ports/stable_hash.h"

namespace fl::sim {

using ::fl::mix64;
using ::fl::stable_hash;

// Order-sensitive combination: combine(combine(s, a), b) != combine(combine(s, b), a).
constexpr uint64_t combine(uint64_t state, uint64_t value) {
  return mix64((state ^ 0x9e3779b97f4a7c15ULL) + value * 0xff51afd7ed558ccdULL + (state << 6));
}

}  // namespace fl::sim
