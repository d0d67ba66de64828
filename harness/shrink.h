// Shrinking: reduce a failing scenario (same seed) while the same property still fails.
//
// Greedy, deterministic passes until none makes progress (or the run budget is spent): drop
// scheduled faults (halves, then one by one), switch the swarm off or narrow its kinds and rate,
// drop workload generators, lower rates, clients, workers and replicas, shorten the duration and
// the quiescent tail (never below twice the system's longest critical duration plus 1 s, so a
// liveness property keeps the recovery time it is judged after), zero the network fault
// probabilities. A candidate is kept only when its run
// fails the target property (or crashes the same way when the original run crashed).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/runner.h"
#include "harness/scenario.h"

namespace fl {

using ScenarioRunFn = std::function<RunResult(const Scenario&, uint64_t seed)>;

struct ShrinkResult {
  bool reproduced = false;  // the original scenario failed at all
  std::string property;     // the target property ("<error>" for a crash or hang)
  Scenario minimal;         // carries the seed and, when known, the failing fingerprint
  RunResult minimal_run;    // the run of `minimal`
  int runs = 0;             // scenario runs spent
  int accepted = 0;         // reduction steps kept
  std::string summary;      // "faults 3 -> 1, clients 4 -> 1, ..." (what shrank)
};

// REQUIRES: max_runs >= 1. `property` empty: the first property the original run fails (the
// scenario's expected failing property when it fails).
ShrinkResult shrink_failure(const Scenario& s, uint64_t seed, const ScenarioRunFn& run, int max_runs,
                            const std::string& property = "");

// "faults 3 -> 1, clients 4 -> 1, duration_ms 20000 -> 5000" (only the fields that changed).
std::string shrink_summary(const Scenario& before, const Scenario& after);

}  // namespace fl
