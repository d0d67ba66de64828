// The window and store checkers (docs/invariants.md COMBO-1..6): the DB's rows against the
// purchases, and the published records fitted to the windows of the definition (000:L39). Each
// returns a Verdict naming its invariant ids, with evidence; see combo_checks.h for the list.
#pragma once

#include "properties/combo/combo_run.h"
#include "properties/verdict.h"

namespace fl::combo {

Verdict check_db_granularity(const ComboRun& run);         // COMBO-1
Verdict check_quantity_conservation(const ComboRun& run);  // COMBO-2
Verdict check_one_push_per_window(const ComboRun& run);    // COMBO-3
Verdict check_timeliness(const ComboRun& run);             // COMBO-4
Verdict check_no_early_or_split(const ComboRun& run);      // COMBO-5
Verdict check_entry_binding(const ComboRun& run);          // COMBO-6

}  // namespace fl::combo
