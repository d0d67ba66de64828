#include "properties/demo/counter_checks.h"
#include "impl/ports/assert.h"

#include <string>

namespace fl::demo {

namespace {

struct Tally {
  int64_t ok = 0, info = 0, fail = 0;
};

Tally tally(const std::vector<sim::Operation>& history) {
  Tally t;
  for (const sim::Operation& op : history) {
    if (op.op != "inc") continue;
    // An operation still open at the end of the run is indeterminate.
    const Outcome o = op.completed() ? op.outcome : Outcome::kInfo;
    if (o == Outcome::kOk)
      ++t.ok;
    else if (o == Outcome::kInfo)
      ++t.info;
    else
      ++t.fail;
  }
  return t;
}

}  // namespace

std::vector<PropertyInfo> counter_properties() {
  return {
      {"no-double-count", {"DEMO-1"}, "counter <= acknowledged + indeterminate increments"},
      {"no-lost-increment", {"DEMO-2"}, "counter >= acknowledged increments"},
  };
}

Verdict check_no_double_count(const CounterRun& run) {
  FL_ASSERT(run.history != nullptr);
  const Tally t = tally(*run.history);
  // One check per increment invoked: a run without increments judged nothing (VACUOUS).
  Verdict v{"no-double-count", {"DEMO-1"}, true, "final counter <= ok + info increments", {}, t.ok + t.info + t.fail};
  if (run.final_counter > t.ok + t.info) {
    v.passed = false;
    v.evidence.push_back("final counter " + std::to_string(run.final_counter) + " > " + std::to_string(t.ok) +
                         " acknowledged + " + std::to_string(t.info) + " indeterminate increments");
  }
  return v;
}

Verdict check_no_lost_increment(const CounterRun& run) {
  FL_ASSERT(run.history != nullptr);
  const Tally t = tally(*run.history);
  // One check per acknowledged increment (the ones that must be in the counter).
  Verdict v{"no-lost-increment", {"DEMO-2"}, true, "final counter >= ok increments", {}, t.ok};
  if (run.final_counter < t.ok) {
    v.passed = false;
    v.evidence.push_back("final counter " + std::to_string(run.final_counter) + " < " + std::to_string(t.ok) +
                         " acknowledged increments");
  }
  return v;
}

}  // namespace fl::demo
