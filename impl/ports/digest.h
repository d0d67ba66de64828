// The text digest ranking stores with window versions, Top K objects, manifests and snapshots
// (004:L98, L100, L247): 64-bit FNV-1a over the bytes, as 16 lower-case hex digits. The service
// writes it and a judge recomputes it from what it read back, so both use this one definition.
//
// The offset basis is 1469598103934665603, FNV's 14695981039346656037 without its last digit.
// Stored digests and saved trace fingerprints depend on it, so it stays as it is.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace fl {

inline std::string fnv_hex(std::string_view bytes) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

}  // namespace fl
