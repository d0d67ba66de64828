// Checkers of the kernel demo (impl/demo/counter.h).
//
// DEMO-1 no double count: the store's counter never exceeds the increments that may have
//        happened (acknowledged + indeterminate).
// DEMO-2 no lost increment: the counter is at least the number of acknowledged increments.
#pragma once

#include <cstdint>
#include <vector>

#include "properties/verdict.h"
#include "sim/history_log.h"

namespace fl::demo {

struct CounterRun {
  const std::vector<sim::Operation>* history = nullptr;
  int64_t final_counter = 0;
};

std::vector<PropertyInfo> counter_properties();
Verdict check_no_double_count(const CounterRun& run);
Verdict check_no_lost_increment(const CounterRun& run);

}  // namespace fl::demo
