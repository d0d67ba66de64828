// Verdict: what a property checker returns. A checker is a function of the run's history, trace
// and final state; its verdict carries the evidence (Jepsen/Elle style: the smallest set of
// operations and events that shows the violation) so reports can print it and `explain` draw it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fl {

struct PropertyInfo {
  std::string name;                      // e.g. "quantity-conservation"
  std::vector<std::string> invariants;   // ids in ../shared/INVARIANTS.md, e.g. {"COMBO-2"}
  std::string description;               // one line; cites the seed section
};

struct Verdict {
  std::string property;
  std::vector<std::string> invariants;
  bool passed = false;
  std::string assertion;                 // what was checked, in words
  std::vector<std::string> evidence;     // the violating operations/events (empty when passed)
  int64_t checks = 0;                    // how many assertions were evaluated
};

}  // namespace fl
