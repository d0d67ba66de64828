// The judges' metamorphic check: a fault that changes nothing must change no verdict.
//
// A judge may excuse a degraded outcome only by a fault that touched it, as far as that fault can
// reach (properties/common/fault_budget.h). A null fault touches nothing: a clock drift of 0 ppm,
// a clock jump of 0 ms, a pause of 0 ms, a clog of a link that carries no traffic, a partition of
// two nodes that never talk. check_null_faults() runs a scenario once as it is (the baseline) and
// once per null fault, added as an extra fault (Scenario::extra_faults, scheduled on a tie-break
// stream of its own so that adding it reorders nothing), and requires
// - the world to run the same: the recorded trace equal to the baseline's event for event, apart
//   from the fault records themselves (TraceKind::kFault) and the configuration line (the extra
//   fault is part of the configuration);
// - every property to keep its verdict (PASS, FAIL, VACUOUS) and its count of exempted items.
// A finding is written as a plain scenario (the baseline plus the null fault) that replays it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/runner.h"
#include "harness/scenario.h"
#include "sim/trace.h"

namespace fl {

// The null-fault kinds, in the order a check runs them.
const std::vector<std::string>& null_fault_kinds();  // clock-drift clock-jump pause clog partition

struct NullFaultOptions {
  // The nodes the null faults hit. Empty: the store nodes (the system's roles redis, db and log)
  // and its first client (role client), or every node with all_nodes.
  std::vector<std::string> nodes;
  bool all_nodes = false;
  std::vector<std::string> kinds;      // a subset of null_fault_kinds(); empty: all of them
  std::vector<int64_t> at_ms = {100};  // when each null fault happens (ms into the run)
  int64_t clog_ms = 1000;              // how long a clog of an idle link lasts
};

struct NullFaultCase {
  std::string label;  // e.g. "clock-drift 0 ppm on db at 0.100 s"
  FaultSpec fault;
};

struct NullFaultFinding {
  NullFaultCase null_fault;
  std::vector<std::string> problems;  // "world changed at event 12: ..." or "p: FAIL -> PASS ..."
  Scenario scenario;                  // the baseline's scenario plus the null fault: replays it
};

struct NullFaultResult {
  std::string error;  // non-empty: the baseline could not run
  RunResult baseline;
  std::vector<NullFaultCase> cases;  // every null fault run
  std::vector<std::string> skipped;  // what could not be planned, e.g. "clog of db: no idle link"
  std::vector<NullFaultFinding> findings;
  bool held() const { return error.empty() && findings.empty(); }
};

// Runs `s` with `seed`, then once per planned null fault, and compares (see above).
NullFaultResult check_null_faults(const Scenario& s, uint64_t seed, const NullFaultOptions& options);

// What a run with a null fault changed against the baseline: where the world (its recorded trace,
// fault records aside) first differs, and each property whose verdict or exempted count moved.
// Empty: nothing changed.
std::vector<std::string> null_fault_changes(const RunResult& baseline,
                                            const std::vector<sim::TraceEvent>& baseline_trace, const RunResult& with,
                                            const std::vector<sim::TraceEvent>& with_trace);

}  // namespace fl
