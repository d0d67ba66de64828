// Coverage-guided fault schedules: `faultline explore FILE --budget N`.
//
// Random swarm faults find a defect when its window is wide; a defect a few milliseconds wide,
// between two effects of one process while another acts, needs the schedule that reaches it. The
// explorer keeps a corpus of fault schedules that reached new coverage (sim/coverage.h: a fault that
// interrupted an effect boundary it had not interrupted before, two processes meeting on a shared
// key or table in an order not seen before) and mutates them.
//
// Contract
// - A schedule is (workload seed, explicit faults). The first round runs the scenario as written
//   (its swarm) with seeds drawn from the exploration's seed and writes each run's faults out
//   (RunResult::applied_faults); later rounds run the scenario with its swarm's rate at 0 and a
//   mutated schedule as its faults: shift a fault in time, retarget it, stretch or shrink it to a
//   critical duration, add a pause at an effect boundary or another fault, drop one, splice two
//   schedules, reseed the workload.
// - Rounds of `batch` candidates run in worker processes; results are taken in candidate order, so
//   the corpus, the coverage series and the findings depend only on (scenario, seed, budget,
//   batch), never on --jobs or timing.
// - A finding is a run where a property failed: the first for each property is kept, as a plain
//   scenario file with its faults written out and its seed (it replays like any other; shrink it
//   with `faultline shrink`).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "harness/runner.h"
#include "harness/scenario.h"
#include "harness/sweep.h"

namespace fl {

struct ExploreOptions {
  uint64_t budget = 1000;  // runs in all, the first round's included
  uint64_t seed = 1;       // the exploration's own seed
  size_t batch = 32;       // candidates per round
  int jobs = 2;
  absl::Duration timeout = absl::Seconds(120);
};

struct ExploreFinding {
  std::string property;
  Scenario scenario;         // the schedule that broke it: faults written out, seed set, expect fail
  uint64_t runs_before = 0;  // how many runs the exploration had made when it found it
};

struct ExploreResult {
  std::vector<reports::CoverageSample> series;  // after each round
  std::vector<ExploreFinding> findings;         // the first per property, in the order found
  std::vector<WorkerOutcome> outcomes;          // every run, in candidate order
  size_t corpus = 0;
  size_t features = 0;
  double wall_seconds = 0;
  double in_runs_seconds = 0;  // wall time spent waiting for the runs it scheduled
};

using ExploreProgress = std::function<void(const reports::CoverageSample&)>;

ExploreResult explore(const Scenario& s, const ExploreOptions& options, const ExploreProgress& progress = {});

// The scenario a schedule runs: `s` with its swarm's rate at 0 (its draws of the clients'
// patience kept) and `faults` after its own, in time order.
Scenario schedule_scenario(const Scenario& s, std::vector<FaultSpec> faults);

}  // namespace fl
