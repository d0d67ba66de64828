#include "impl/ranking/fixes.h"

namespace fl::ranking {

const std::vector<FixInfo>& ranking_fixes() {
  static const std::vector<FixInfo> kFixes = {
      {"RK-DEDUP-EVENT-ID", "004:L87",
       {"RANK-4", "RANK-41"},
       "the aggregator's idempotency record per full key is source + event_id (004:L98) instead of "
       "source_partition + source_offset + scope_id: an event appended twice to the stable log (a relay retry "
       "through another ingest replica) has two offsets but is one event"},
  };
  return kFixes;
}

}  // namespace fl::ranking
