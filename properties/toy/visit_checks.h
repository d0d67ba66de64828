// Judges of the toy visit counter (docs/systems/toy.md), from what the world observed only: the
// clients' history (op "visit", args = the request id), the commands the Redis server executed
// (scripts' inner commands included, each naming the client operation it worked for) and the
// counter Redis holds at the end. Nothing the service writes about itself, not the variant.
//
// TOY-1 visit-counted-once: no request id is counted twice. Per request id, at most one INCR of
//       the counter worked for it; no INCR of the counter worked for no visit; and the final
//       counter is at most the number of request ids that may have been counted (answered
//       counted, or indeterminate).
// TOY-2 visit-not-lost: every visit answered counted is counted. Per such request id, an INCR of
//       the counter worked for it; and the final counter is at least their number, unless a crash
//       of the Redis node (which may lose its last writes) explains the shortfall.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "properties/common/fault_budget.h"
#include "properties/verdict.h"
#include "sim/history_log.h"
#include "sim/redis/server.h"

namespace fl::toy {

// The design's counter key (docs/systems/toy.md).
inline constexpr const char* kJudgedCounterKey = "toy:visits";

struct VisitRun {
  const std::vector<sim::Operation>* history = nullptr;
  const sim::redis::CommandLog* redis_commands = nullptr;
  int64_t final_counter = 0;                   // what Redis holds at kJudgedCounterKey (0 when absent)
  const props::FaultBudget* faults = nullptr;  // the injected faults; null: none
  std::string redis_process = "redis";         // the Redis node's process, as the fault log names it
};

std::vector<PropertyInfo> visit_properties();
Verdict check_visit_counted_once(const VisitRun& run);
Verdict check_visit_not_lost(const VisitRun& run);
// The behaviours the run exercised, of those the judges check (SystemRun::behaviours).
std::vector<std::string> visit_behaviours(const VisitRun& run);

}  // namespace fl::toy
