// One checker per COMBO invariant family (docs/invariants.md). Each compares the run with
// the reference model (model/combo) and returns a Verdict naming its invariant ids, with evidence.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "properties/combo/combo_run.h"
#include "properties/verdict.h"

namespace fl::combo {

Verdict check_db_granularity(const ComboRun& run);         // COMBO-1
Verdict check_quantity_conservation(const ComboRun& run);  // COMBO-2
Verdict check_one_push_per_window(const ComboRun& run);    // COMBO-3
Verdict check_timeliness(const ComboRun& run);             // COMBO-4
Verdict check_no_early_or_split(const ComboRun& run);      // COMBO-5
Verdict check_entry_binding(const ComboRun& run);          // COMBO-6
Verdict check_pel_drains(const ComboRun& run);             // COMBO-7
Verdict check_no_garbage(const ComboRun& run);             // COMBO-8
Verdict check_ttl_hygiene(const ComboRun& run);            // COMBO-9
Verdict check_stream_bounded(const ComboRun& run);         // COMBO-9 (the stream, §9.1 MAXLEN)
Verdict check_degradation(const ComboRun& run);            // COMBO-10
Verdict check_polling_merge(const ComboRun& run);          // COMBO-11
Verdict check_merge_algebra(const ComboRun& run);          // COMBO-12
Verdict check_ui_convergence(const ComboRun& run);         // COMBO-13
Verdict check_no_wrongful_drop(const ComboRun& run);       // COMBO-14
Verdict check_activity_isolation(const ComboRun& run);     // COMBO-15
Verdict check_bounded_list(const ComboRun& run);           // COMBO-16
Verdict check_published_visible(const ComboRun& run);      // COMBO-13 (completeness: published -> seen)

struct ComboProperty {
  PropertyInfo info;
  std::function<Verdict(const ComboRun&)> check;
};
const std::vector<ComboProperty>& combo_properties();
// The requested properties' verdicts, in combo_properties() order, the checkers sharing what they
// derive from the run (ComboRun::memo) while they run.
std::vector<Verdict> check_combo(const ComboRun& run, const std::vector<std::string>& properties);

// COMBO-12's laws (a)-(g) for one input: the violated laws, in words (empty: all hold).
using MergeFn = std::function<JsArray(const JsArray&)>;
std::vector<std::string> merge_law_violations(const MergeFn& merge, const std::vector<ContributionRecord>& input);
// Laws (a)-(e), (g) on one call a page made (what it was given, returned, and left of its input).
std::vector<std::string> observed_merge_violations(const MergeCall& call);

}  // namespace fl::combo
