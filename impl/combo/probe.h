// Screen: the front end's port to what shows the page, which the runtime around the page owns (in
// simulation the harness implements it and watches it). The page reports nothing about itself: it
// renders its list on the screen, and it runs mergeComboRecords through the screen's runtime, which
// sees what went in and what came out. What the page received (pushes, poll responses) the harness
// watches on the page's network port, not here.
//
// Contract
// - show(list): the page renders records.value (ContributionList.vue) after each update of it.
// - run_merge(merge, input): returns merge(input), calling `merge` exactly once on `input` and
//   passing on what it throws; it may look at `input` before and after, and at the result. It never
//   changes behaviour.
#pragma once

#include <functional>
#include <vector>

#include "impl/combo/frontend.h"
#include "impl/combo/record.h"

namespace fl::combo {

class Screen {
 public:
  virtual ~Screen() = default;
  virtual void show(const std::vector<ContributionRecord>& list) = 0;
  using Merge = std::function<JsArray(const JsArray&)>;
  virtual JsArray run_merge(const Merge& merge, const JsArray& input) = 0;
};

}  // namespace fl::combo
