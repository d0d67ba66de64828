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

// stable_hash fed piece by piece: after any sequence of appends whose concatenation is `s`,
// finish() == stable_hash(s). It has the appending interface of std::string that text
// renderers use (`+=` a char or a string, append(first, last)), so a renderer written once
// for both can hash a description without building it (Message::digest, impl/ports/rpc.h).
class StableHasher {
 public:
  constexpr StableHasher& operator+=(char c) {
    h_ ^= static_cast<unsigned char>(c);
    h_ *= kPrime;
    return *this;
  }
  constexpr StableHasher& operator+=(std::string_view bytes) {
    uint64_t h = h_;  // a local: the bytes may alias h_ as far as the compiler knows
    for (unsigned char c : bytes) {
      h ^= c;
      h *= kPrime;
    }
    h_ = h;
    return *this;
  }
  constexpr StableHasher& append(const char* first, const char* last) {
    return *this += std::string_view(first, static_cast<size_t>(last - first));
  }
  constexpr uint64_t finish() const { return mix64(h_); }

 private:
  static constexpr uint64_t kPrime = 0x100000001b3ULL;
  uint64_t h_ = 0xcbf29ce484222325ULL;  // FNV-1a's offset basis
};

// FNV-1a over the bytes, finalised with mix64.
constexpr uint64_t stable_hash(std::string_view bytes) {
  StableHasher h;
  h += bytes;
  return h.finish();
}

}  // namespace fl
