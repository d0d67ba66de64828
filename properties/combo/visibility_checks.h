// The visibility checkers (docs/invariants.md COMBO-11, COMBO-13): what users are shown (poll
// answers, the items each page displays last) fitted with the published records to the windows
// of the definition (000:L39), and every published record shown or polled at some later time.
#pragma once

#include "properties/combo/combo_run.h"
#include "properties/verdict.h"

namespace fl::combo {

Verdict check_polling_merge(const ComboRun& run);      // COMBO-11
Verdict check_ui_convergence(const ComboRun& run);     // COMBO-13
Verdict check_published_visible(const ComboRun& run);  // COMBO-13 (completeness: published -> seen)

}  // namespace fl::combo
