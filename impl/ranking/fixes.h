// The named fixes `hardened` adds to seed 004 (impl/ports/fixes.h). ranking_fixes()[i] describes
// RankFix value i; `spec` has none of them.
#pragma once

#include <cstdint>
#include <vector>

#include "impl/ports/fixes.h"

namespace fl::ranking {

enum class RankFix : uint8_t {
  kDedupByEventId,         // RK-DEDUP-EVENT-ID
  kCheckpointCas,          // RK-CHECKPOINT-CAS
  kPointerFromDb,          // RK-POINTER-FROM-DB
  kNewPartitionCatchesUp,  // RK-NEW-PARTITION-CATCHUP
  kCacheContextFence,      // RK-CACHE-CONTEXT-FENCE
  kExpiryCurrentAction,    // RK-EXPIRY-CURRENT-ACTION
  kDenylistBypass,         // RK-DENYLIST-BYPASS
  kEtagRiskEpochs,         // RK-ETAG-RISK-EPOCHS
  kDenylistCatchUp,        // RK-DENYLIST-CATCHUP
  kMergeShadowFromSource,  // RK-MERGE-SHADOW-FROM-SOURCE
  kMergeHoldBeforeVector,  // RK-MERGE-HOLD-BEFORE-VECTOR
};
using RankFixes = FixSet<RankFix>;

const std::vector<FixInfo>& ranking_fixes();

}  // namespace fl::ranking
