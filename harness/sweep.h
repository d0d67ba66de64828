// Sweeps: many runs of one scenario in parallel worker processes, and what they add up to.
//
// Runs happen in fork()ed worker processes, each running up to 64 runs one after another (it
// gets a job index over a socket and reports each RunResult as one JSON line). A worker that dies
// (signal, abnormal exit) or outlives the time limit of its current run is killed and counted as
// that run's failure (RunResult::error says which): never the sweep's; the next run goes to a
// fresh worker. Results come back in job
// order whatever order the workers finish in, so a sweep's output does not depend on timing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "harness/runner.h"
#include "harness/scenario.h"
#include "reports/report.h"

namespace fl {

// "i/n" with 0 <= i < n. Returns false on anything else.
bool parse_shard(const std::string& text, int* index, int* count);
// The seeds shard i of n runs: first + k for every k in [0, count) with k % n == i.
std::vector<uint64_t> shard_seeds(uint64_t first, uint64_t count, int shard_index, int shard_count);

struct WorkerOutcome {
  size_t job = 0;
  RunResult result;        // from the worker; on crash/timeout only `error` (and seed) are set
  bool completed = false;  // false: the worker crashed or timed out
  double wall_seconds = 0;
};

using WorkerFn = std::function<RunResult(size_t job)>;
using ProgressFn = std::function<void(const WorkerOutcome& done, size_t finished, size_t total)>;

// Runs fn(0..jobs-1) in forked workers, at most `parallel` at once, each run limited to
// `timeout` of wall time. REQUIRES: the calling process is single-threaded (fork()); fn(job)
// depends only on `job` and on state fixed before the call, and leaves no state behind that
// changes a later fn call in the same worker (run_scenario qualifies).
std::vector<WorkerOutcome> run_in_workers(size_t jobs, const WorkerFn& fn, int parallel, absl::Duration timeout,
                                          const ProgressFn& progress = {});

// One run in a worker process (crash/hang isolation for shrink and replay).
RunResult run_isolated(const Scenario& s, uint64_t seed, const RunOptions& options, absl::Duration timeout);

// The worker protocol: a RunResult as one JSON line and back.
std::string run_result_to_json(const RunResult& r);
std::optional<RunResult> run_result_from_json(const std::string& line);

// The properties a run failed (verdicts not passed), or {"<error>"} for a crashed run.
std::vector<std::string> failed_properties(const RunResult& r);

// Folds the runs of one scenario into the report's evidence record (no counterexample).
reports::RunRecord make_run_record(const Scenario& s, const std::vector<WorkerOutcome>& runs, const std::string& now,
                                   const std::string& commit);

// Converts the recorded trace file of a failing run into a timeline (empty if unreadable).
std::vector<reports::TimelineEvent> timeline_from_trace_file(const std::string& path, size_t max_events);

// An empty report produced now by this binary: its time, its commit (build_info.h) and the
// test-matrix rows of every system compiled in (harness/matrix_rows.h), which its rows are judged on.
reports::Report new_report();

// Wall-clock UTC time "2025-01-31T12:34:56Z". Harness-only: sim/ never calls it. (A report's
// commit is the binary's own, build_commit() in harness/build_info.h.)
std::string utc_now_iso8601();

}  // namespace fl
