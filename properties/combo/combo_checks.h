// One checker per COMBO invariant family (docs/invariants.md). Each compares the run with
// the reference model (model/combo) and returns a Verdict naming its invariant ids, with evidence.
// The checkers are declared by family in the headers below (window_checks.h: COMBO-1..6,
// hygiene_checks.h: COMBO-7..10 and 15, frontend_checks.h: COMBO-12, 14, 16 and COMBO-12's laws,
// visibility_checks.h: COMBO-11 and 13); what they share is judge_support.h, internal.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "properties/combo/combo_run.h"
#include "properties/combo/frontend_checks.h"
#include "properties/combo/hygiene_checks.h"
#include "properties/combo/visibility_checks.h"
#include "properties/combo/window_checks.h"
#include "properties/verdict.h"

namespace fl::combo {

struct ComboProperty {
  PropertyInfo info;
  std::function<Verdict(const ComboRun&)> check;
};
const std::vector<ComboProperty>& combo_properties();
// The requested properties' verdicts, in combo_properties() order, the checkers sharing what they
// derive from the run (ComboRun::memo) while they run.
std::vector<Verdict> check_combo(const ComboRun& run, const std::vector<std::string>& properties);

}  // namespace fl::combo
