// The runner: one scenario + one seed -> one judged run, with its evidence.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/scenario.h"
#include "harness/system.h"

namespace fl {

// Crash a process right before or right after its n-th external effect (crash-point sweeps).
// Effects are the calls made by the system's service processes (roles replica, worker, gateway),
// numbered in the order they happen: every Redis command, SQL statement, produce, publish, ack.
struct CrashPoint {
  uint64_t effect_index = 0;
  bool before = false;
  int64_t restart_after_ms = 1000;
};

// Pause a process right before or right after its n-th external effect (pause-point sweeps), for
// duration_ms, while everything else runs.
struct PausePoint {
  uint64_t effect_index = 0;
  bool before = false;
  int64_t duration_ms = 0;
};

// Fail the call of a process's n-th external effect (fail-point sweeps): refused before it is
// sent, or its reply lost after the server executed it (sim::FailPointPlan).
struct FailPoint {
  uint64_t effect_index = 0;
  bool before = false;
};

// One external effect of a discovery run (RunOptions::list_effects), for crash-point sweeps.
struct ListedEffect {
  std::string process;  // the caller, e.g. "pub-1"
  std::string text;     // "#i t=<ms>ms process -> service: request"
  uint64_t index = 0;   // its effect index (what a crash, pause or fail point names)
};

struct RunOptions {
  bool record_trace = false;     // keep every trace event (needed for the exports)
  std::string trace_jsonl_path;  // write the trace as JSON lines here (implies recording)
  std::string perfetto_path;     // write Chrome/Perfetto trace JSON here
  std::optional<CrashPoint> crash_point;
  std::vector<PausePoint> pause_points;  // one, or a pause pair (Scenario::pause_points)
  std::optional<FailPoint> fail_point;
  std::string scenario_path;  // for the replay command; defaults to s.source_file
  bool list_effects = false;  // fill RunResult::effects (the crash-point discovery run)
  // Fixes the command line removed (already applied to the scenario with apply_without); only
  // for the replay command.
  std::vector<std::string> without;
  // False: run the world without its judges (`faultline run --no-judges`, the chain benchmarks),
  // to measure speed and state size alone. No property is checked (a process that panics is
  // still reported, as process-panic), so the run is never as expected; systems skip the
  // observation logs only judges read (WorldOptions::judged).
  bool judges = true;
  // With pause points: list in RunResult::meanwhile the effects of the processes whose names start
  // with one of these prefixes that were made while the first pause point held its caller (the
  // candidates for the second pause of a pair, `sweep --pause-points --meanwhile`).
  std::vector<std::string> meanwhile_processes;
  // Collect the world's coverage features (sim/coverage.h) into RunResult::coverage (explore).
  bool coverage = false;
  // Called once the run is judged, before its world is destroyed (the null-fault check reads the
  // topology and the recorded trace through it). Must not change the world.
  std::function<void(sim::World&, const SystemRun&)> inspect;
};

struct RunResult {
  std::string scenario;  // scenario name
  std::string system, variant;
  uint64_t seed = 0;
  uint64_t config_digest = 0;
  uint64_t fingerprint = 0;
  uint64_t events = 0;
  int64_t simulated_us = 0;
  bool judged = true;          // false: run with RunOptions::judges off, nothing checked
  uint64_t operations_ok = 0;  // client operations (the history's) that completed ok
  double wall_seconds = 0;
  std::vector<Verdict> verdicts;
  bool all_passed = false;
  bool as_expected = false;  // verdicts match the scenario's expectation
  // On a failing expectation: properties that failed although the scenario did not name them.
  std::vector<std::string> further_findings;
  std::vector<std::string> vacuous;  // properties that checked nothing
  std::string replay_command;
  std::string error;                    // non-empty: the run could not be built or crashed
  std::vector<ListedEffect> effects;    // with list_effects: every watched effect, in index order
  bool crash_point_fired = false;       // with crash_point: the armed effect was reached
  bool pause_point_fired = false;       // with pause points: every armed effect was reached
  bool fail_point_fired = false;        // with fail_point: the armed call was failed
  std::vector<ListedEffect> meanwhile;  // with meanwhile_processes: their effects during the first pause
  std::vector<std::string> caveats;     // guarantees the scenario's environment voids (scenario_caveats)
  std::vector<uint64_t> coverage;       // with RunOptions::coverage: the features reached, ascending
  std::vector<std::string> behaviours;  // what the run exercised (SystemRun::behaviours), sorted
  // Every fault the run applied, scheduled or drawn by the swarm, as a scheduled fault (in the order
  // they were scheduled): the swarm's draws written out (explore mutates them).
  std::vector<FaultSpec> applied_faults;
};

// The crash points a sweep runs, from a discovery run's effects: right before and right after
// each effect whose process name starts with one of `process_prefixes` (every effect when it is
// empty), in effect order, the first `limit` such effects when limit > 0.
std::vector<CrashPoint> crash_points_to_sweep(const RunResult& listed, uint64_t limit,
                                              const std::vector<std::string>& process_prefixes);
// The pause points a sweep runs: the same boundaries, each paused for one duration drawn (from
// `seed`, the effect and the side) among `durations_ms`: a few milliseconds, and just below and
// just above each of the system's critical durations (pause_durations_ms).
std::vector<PausePoint> pause_points_to_sweep(const RunResult& listed, uint64_t limit,
                                              const std::vector<std::string>& process_prefixes,
                                              const std::vector<int64_t>& durations_ms, uint64_t seed);
// 2 ms, 20 ms, and each critical duration -10 % and +10 % (at least 1 ms apart), each once.
std::vector<int64_t> pause_durations_ms(const std::vector<CriticalDuration>& critical);

// The guarantees a scenario's environment voids, one sentence each, for whoever reads its verdicts:
// e.g. a disk that lies about fsync voids durability and atomicity across a DB power loss.
std::vector<std::string> scenario_caveats(const Scenario& s);

RunResult run_scenario(const Scenario& s, uint64_t seed, const RunOptions& options);

// The seed a scenario runs with when none is given: its saved seed, else 1.
uint64_t default_seed(const Scenario& s);

// Removes the named fixes from a hardened scenario (`--without FIX`). Returns "" on success, or
// what is wrong (not hardened, an unknown fix id) and leaves `s` unchanged.
std::string apply_without(Scenario& s, const std::vector<std::string>& without);

// A process that died of an exception escaping its task (sim::World::panics) failed by itself:
// whatever the system's judges say, the run fails with this verdict ("process-panic", one failure
// per panic), and the panic excuses nothing (World::panic keeps it out of the fault log).
Verdict panic_verdict(const sim::World& world);

}  // namespace fl
