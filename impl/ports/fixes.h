// Named fixes: each departure of `hardened` from a seed's design is one fix with an id, the seed
// line it departs from, the invariants it protects and one line of why.
//
// Contract
// - A system declares its fixes once, as an enum E with values 0..N-1 (N <= 64) and a registry
//   `std::vector<FixInfo>` whose i-th entry describes the value i (ids are unique, stable and
//   upper-case with dashes, e.g. "LK-DB-FIRST").
// - FixSet<E> is the set a run enables: spec() is empty, hardened(registry) has every fix, and
//   hardened_without(registry, ids) removes some. Service code asks `fixes.has(E::kX)`, so the
//   seed's path and each fix are visible where they differ.
// - Cheap to copy and to query (one 64-bit mask). Deterministic: no hashing, no allocation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/ports/assert.h"

namespace fl {

struct FixInfo {
  std::string id;                       // "LK-DB-FIRST"
  std::string seed_line;                // "002:L240-L262", where the seed does otherwise
  std::vector<std::string> invariants;  // {"LIKE-6"}
  std::string why;                      // one line
};

// Index of `id` in `registry`, if present.
inline std::optional<size_t> find_fix(const std::vector<FixInfo>& registry, std::string_view id) {
  for (size_t i = 0; i < registry.size(); ++i) {
    if (registry[i].id == id) return i;
  }
  return std::nullopt;
}

template <typename E>
class FixSet {
 public:
  // The seed as written: no fix.
  static FixSet spec() { return FixSet(0); }
  // Every fix of the registry.
  static FixSet hardened(const std::vector<FixInfo>& registry) {
    FL_ASSERT(registry.size() <= 64);
    return FixSet(registry.size() == 64 ? ~uint64_t{0} : (uint64_t{1} << registry.size()) - 1);
  }
  // Every fix but those named. REQUIRES: each id is in the registry (the loader checks).
  static FixSet hardened_without(const std::vector<FixInfo>& registry, const std::vector<std::string>& without) {
    FixSet s = hardened(registry);
    for (const std::string& id : without) {
      const std::optional<size_t> i = find_fix(registry, id);
      FL_ASSERT(i.has_value());
      if (i) s.mask_ &= ~(uint64_t{1} << *i);
    }
    return s;
  }

  bool has(E fix) const { return (mask_ >> static_cast<unsigned>(fix)) & 1U; }
  bool none() const { return mask_ == 0; }
  FixSet with(E fix) const { return FixSet(mask_ | (uint64_t{1} << static_cast<unsigned>(fix))); }
  FixSet without(E fix) const { return FixSet(mask_ & ~(uint64_t{1} << static_cast<unsigned>(fix))); }
  uint64_t mask() const { return mask_; }
  bool operator==(const FixSet&) const = default;

 private:
  explicit FixSet(uint64_t mask) : mask_(mask) {}
  uint64_t mask_ = 0;
};

}  // namespace fl
