// The hygiene and degradation checkers (docs/invariants.md COMBO-7..10, COMBO-15): the stream's
// pending list and length, the keys' TTLs, each published record alone (well-formed, once, on its
// own activity's channel), and purchases answered degraded only under a fault on their path.
#pragma once

#include "properties/combo/combo_run.h"
#include "properties/verdict.h"

namespace fl::combo {

Verdict check_pel_drains(const ComboRun& run);          // COMBO-7
Verdict check_no_garbage(const ComboRun& run);          // COMBO-8
Verdict check_ttl_hygiene(const ComboRun& run);         // COMBO-9
Verdict check_stream_bounded(const ComboRun& run);      // COMBO-9 (the stream, §9.1 MAXLEN)
Verdict check_degradation(const ComboRun& run);         // COMBO-10
Verdict check_activity_isolation(const ComboRun& run);  // COMBO-15

}  // namespace fl::combo
