// The likes fixes: each departure of `hardened` from seed 002, with the seed line it departs from,
// the invariants it protects and one line of why. `spec` has none (the seed as written), `hardened`
// all; `--without LK-...` removes one (impl/ports/fixes.h). Service code asks
// `fixes.has(LikesFix::kX)` exactly where the fix departs from the seed, so the seed's path and each
// fix are visible side by side. The table with the evidence for each fix: docs/systems/likes.md.
#pragma once

#include <cstdint>
#include <vector>

#include "impl/ports/fixes.h"

namespace fl::likes {

// Index i describes likes_fixes()[i].
enum class LikesFix : uint8_t {
  kDbFirst,               // LK-DB-FIRST
  kCommitTimeVersion,     // LK-COMMIT-TIME-VERSION
  kVersionedStateFill,    // LK-VERSIONED-STATE-FILL
  kReconcile,             // LK-RECONCILE
  kCacheAck,              // LK-CACHE-ACK
  kIdempotentInsert,      // LK-IDEMPOTENT-INSERT
  kVersionedCountWrites,  // LK-VERSIONED-COUNT-WRITES
  kRequestIds,            // LK-REQUEST-IDS
  kFillLease,             // LK-FILL-LEASE
};

const std::vector<FixInfo>& likes_fixes();

using LikesFixes = FixSet<LikesFix>;

}  // namespace fl::likes
