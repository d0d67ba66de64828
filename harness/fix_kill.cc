#include "harness/fix_kill.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "harness/runner.h"
#include "harness/scenario_loader.h"
#include "harness/shrink.h"
#include "harness/sweep.h"
#include "harness/system.h"
#include "impl/ports/assert.h"

namespace fl {

namespace {

using WallClock = std::chrono::steady_clock;

double seconds_since(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

Scenario without_fix(const Scenario& s, const std::string& id) {
  Scenario out = s;
  out.without = {id};
  return out;
}

// Exploratory seeds in batches of 2 x jobs; the smallest failing seed of the first failing batch
// that hardened with every fix passes (a seed hardened fails too is an open defect, not a kill).
void explore(const Scenario& s, const FixKillOptions& o, FixKill* k) {
  Scenario with_all = s;
  with_all.without.clear();
  const uint64_t batch = static_cast<uint64_t>(std::max(1, o.jobs)) * 2;
  for (uint64_t from = o.first_seed; from < o.first_seed + o.seeds && !k->killed; from += batch) {
    const uint64_t n = std::min(batch, o.first_seed + o.seeds - from);
    std::vector<WorkerOutcome> out = run_in_workers(
        n, [&](size_t job) { return run_scenario(s, from + job, RunOptions{}); }, o.jobs, o.timeout);
    k->seeds_run += n;
    for (const WorkerOutcome& w : out) {  // job order = seed order
      const std::vector<std::string> failed = failed_properties(w.result);
      if (failed.empty()) continue;
      if (!failed_properties(run_scenario(with_all, from + w.job, RunOptions{})).empty()) continue;
      k->killed = true;
      k->property = failed.front();
      k->seed = from + w.job;
      k->via = "exploratory seed " + std::to_string(k->seed);
      break;
    }
  }
}

// The crash-point sweep of the survivors: the first crash point (in effect order) that breaks.
void crash_points(const Scenario& s, const FixKillOptions& o, FixKill* k, Scenario* pinned) {
  const uint64_t seed = default_seed(s);
  RunOptions discover;
  discover.list_effects = true;
  const RunResult listed = run_scenario(s, seed, discover);
  if (!listed.error.empty()) return;
  const std::vector<CrashPoint> points = crash_points_to_sweep(listed, o.crash_effects, o.crash_processes);
  const uint64_t batch = static_cast<uint64_t>(std::max(1, o.jobs)) * 4;
  for (uint64_t from = 0; from < points.size() && !k->killed; from += batch) {
    const uint64_t n = std::min<uint64_t>(batch, points.size() - from);
    std::vector<WorkerOutcome> out = run_in_workers(
        n,
        [&](size_t job) {
          RunOptions opt;
          opt.crash_point = points[from + job];
          return run_scenario(s, seed, opt);
        },
        o.jobs, o.timeout);
    for (const WorkerOutcome& w : out) {
      const std::vector<std::string> failed = failed_properties(w.result);
      if (failed.empty() || failed.front()[0] == '<') continue;
      const CrashPoint& point = points[from + w.job];
      k->killed = true;
      k->property = failed.front();
      k->seed = seed;
      k->via = std::string("crash ") + (point.before ? "before" : "after") + " effect " +
               listed.effects[point.effect_index].text;
      *pinned = s;
      pinned->crash_point = CrashPointSpec{static_cast<int64_t>(point.effect_index), point.before, 1000};
      pinned->seed = seed;
      // The pinned crash point is part of the file's config digest, which the trace starts with:
      // its fingerprint is that of a run of the pinned file, not of the sweep's run.
      k->fingerprint = run_scenario(*pinned, seed, RunOptions{}).fingerprint;
      pinned->expect = Expectation{.pass = false, .failing = {k->property}, .fingerprint = k->fingerprint};
      break;
    }
  }
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

// Shrinks the exploratory kill (or keeps the pinned crash point) and writes without-<FIX>.yaml.
void save_counterexample(const Scenario& s, const FixKillOptions& o, const Scenario* pinned, FixKill* k) {
  std::filesystem::create_directories(o.found_dir);
  const std::string path = o.found_dir + "/without-" + k->fix.id + ".yaml";
  Scenario minimal;
  std::string how;
  if (pinned != nullptr) {
    minimal = *pinned;
    how = k->via;
  } else {
    ShrinkResult res = shrink_failure(
        s, k->seed,
        [&](const Scenario& c, uint64_t seed) {
          RunOptions opt;
          opt.scenario_path = path;
          return run_isolated(c, seed, opt, o.timeout);
        },
        o.shrink_runs, k->property);
    if (!res.reproduced) return;
    minimal = res.minimal;
    k->fingerprint = res.minimal_run.fingerprint;
    how = "shrank " + res.summary;
  }
  minimal.name = "without-" + k->fix.id;
  minimal.matrix_rows.clear();  // evidence for the fix, not for hardened's matrix rows
  minimal.description = "hardened without " + k->fix.id + " (" + k->fix.why + "): " + k->property + " fails; " +
                        "with the fix restored every property passes.";
  const std::string header = "# Kill of fix " + k->fix.id + " found by `faultline sweep --each-fix` on " +
                             s.source_file + " (" + k->via + "; " + how + ").\n" + "# Replay: faultline replay " +
                             path + "   (and --with-fixes: passes)\n";
  if (write_file(path, header + scenario_to_yaml(minimal))) k->counterexample = path;
}

}  // namespace

std::vector<FixKill> fix_kill_sweep(const Scenario& hardened, const FixKillOptions& o) {
  FL_ASSERT(hardened.variant == "hardened");
  std::vector<FixKill> kills;
  const SystemUnderTest* sys = find_system(hardened.system);
  if (sys == nullptr) return kills;
  for (const FixInfo& fix : sys->fixes()) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), fix.id) == o.only.end()) continue;
    const auto start = WallClock::now();
    FixKill k;
    k.fix = fix;
    const Scenario s = without_fix(hardened, fix.id);
    explore(s, o, &k);
    Scenario pinned;
    if (!k.killed && o.crash_scenario != nullptr) crash_points(without_fix(*o.crash_scenario, fix.id), o, &k, &pinned);
    k.wall_seconds = seconds_since(start);
    if (o.log) {
      o.log(fix.id + ": " + (k.killed ? "killed by " + k.property + " (" + k.via + ")" : std::string("SURVIVED")) +
            " in " + std::to_string(k.wall_seconds).substr(0, 6) + " s");
    }
    if (k.killed && !o.found_dir.empty()) {
      const bool by_crash = k.via.rfind("crash", 0) == 0;
      save_counterexample(s, o, by_crash ? &pinned : nullptr, &k);
    }
    kills.push_back(std::move(k));
  }
  return kills;
}

std::string fix_kill_table(const std::vector<FixKill>& kills) {
  std::string out =
      "| fix | seed line | invariants | killed by | found via | seconds | counterexample |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const FixKill& k : kills) {
    std::string ids;
    for (const std::string& i : k.fix.invariants) ids += (ids.empty() ? "" : ", ") + i;
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", k.wall_seconds);
    out += "| " + k.fix.id + " | " + k.fix.seed_line + " | " + ids + " | " +
           (k.killed ? k.property : std::string("**SURVIVED**")) + " | " +
           (k.killed ? k.via : std::to_string(k.seeds_run) + " seeds") + " | " + secs + " | " +
           (k.counterexample.empty() ? "-" : "`" + k.counterexample + "`") + " |\n";
  }
  return out;
}

}  // namespace fl
