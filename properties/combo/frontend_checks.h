// The front-end checkers (docs/invariants.md COMBO-12, COMBO-14, COMBO-16): the page's own logic
// (mergeComboRecords, the WS filter, the truncated list), judged on each call and UI state the
// front ends recorded; and COMBO-12's laws as functions for the RapidCheck suite.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "properties/combo/combo_run.h"
#include "properties/verdict.h"

namespace fl::combo {

Verdict check_merge_algebra(const ComboRun& run);     // COMBO-12
Verdict check_no_wrongful_drop(const ComboRun& run);  // COMBO-14
Verdict check_bounded_list(const ComboRun& run);      // COMBO-16

// COMBO-12's laws (a)-(g) for one input: the violated laws, in words (empty: all hold).
using MergeFn = std::function<JsArray(const JsArray&)>;
std::vector<std::string> merge_law_violations(const MergeFn& merge, const std::vector<ContributionRecord>& input);
// Laws (a)-(e), (g) on one call a page made (what it was given, returned, and left of its input).
std::vector<std::string> observed_merge_violations(const MergeCall& call);

}  // namespace fl::combo
