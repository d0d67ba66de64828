// `faultline sweep`, `shrink`, `replay`, `report` and `explain`.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/fix_evidence.h"
#include "harness/fix_kill.h"
#include "harness/runner.h"
#include "harness/scenario_loader.h"
#include "harness/shrink.h"
#include "harness/build_info.h"
#include "harness/matrix_rows.h"
#include "harness/sweep.h"
#include "impl/ports/assert.h"
#include "sim/rng.h"
#include "absl/strings/numbers.h"
#include "reports/json.h"
#include "reports/report.h"
#include "reports/timeline.h"

namespace fl {
namespace {

namespace fs = std::filesystem;
using WallClock = std::chrono::steady_clock;

// ---------------------------------------------------------------- flags
// Parsed by CLI11 (harness/cli.h says why CLI11).
using Flags = CliFlags;

// --timeout-s: each run's wall-time limit (the flag table already requires a positive number).
bool timeout_flag(const Flags& f, absl::Duration* out) {
  double seconds = 120;
  if (!f.number("--timeout-s", &seconds)) return false;
  *out = absl::Seconds(seconds);
  return true;
}
using K = FlagKind;

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

std::string read_text(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---------------------------------------------------------------- progress
// The sweep's progress: seeds done, failures so far by property, seeds per second and time left.
// On a terminal one line redrawn in place; otherwise one line per finished seed.
class Progress {
 public:
  Progress(size_t total, bool quiet)
      : total_(total), tty_(::isatty(STDERR_FILENO)), quiet_(quiet), start_(WallClock::now()) {}
  // `seed` is the job's seed: a worker that crashed or timed out reported none.
  void update(const WorkerOutcome& o, uint64_t seed, size_t done) {
    const std::vector<std::string> failed = failed_properties(o.result);
    for (const std::string& p : failed) ++by_property_[p];
    failures_ += failed.empty() ? 0 : 1;
    if (quiet_) return;
    const double elapsed_s = std::chrono::duration<double>(WallClock::now() - start_).count();
    const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0;
    const double left_s = rate > 0 ? static_cast<double>(total_ - done) / rate : 0;
    std::string props;
    for (const auto& [p, n] : by_property_) props += " " + p + "=" + std::to_string(n);
    if (tty_) {
      const int width = 30;
      const int filled = static_cast<int>(width * done / std::max<size_t>(1, total_));
      std::fprintf(stderr, "\r[%s%s] %zu/%zu seeds, %.1f seeds/s, %.0f s left, failures %zu%s\033[K",
                   std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), done, total_, rate,
                   left_s, failures_, props.c_str());
      if (done == total_) std::fprintf(stderr, "\n");
    } else {
      std::printf(
          "[%zu/%zu %.1f seeds/s, %.0f s left, failures %zu%s] seed %llu: %s\n", done, total_, rate, left_s, failures_,
          props.c_str(), static_cast<unsigned long long>(seed),
          failed.empty() ? "pass" : ("FAIL" + (o.result.error.empty() ? "" : " (" + o.result.error + ")")).c_str());
      std::fflush(stdout);
    }
  }

 private:
  size_t total_;
  bool tty_, quiet_;
  WallClock::time_point start_;
  size_t failures_ = 0;
  std::map<std::string, size_t> by_property_;  // property -> failing seeds so far
};

// Re-runs a failing seed with its trace recorded and attaches the counterexample to `rec`.
void attach_counterexample(reports::RunRecord& rec, const Scenario& s, uint64_t seed, const std::string& trace_path,
                           const std::string& minimal_file, absl::Duration timeout) {
  RunOptions opt;
  opt.trace_jsonl_path = trace_path;
  opt.scenario_path = minimal_file.empty() ? s.source_file : minimal_file;
  const RunResult r = run_isolated(s, seed, opt, timeout);
  reports::Counterexample c;
  c.seed = seed;
  c.fingerprint = r.fingerprint;
  const std::vector<std::string> failed = failed_properties(r);
  c.property = failed.empty() ? "" : failed[0];
  c.scenario_file = minimal_file;
  if (!minimal_file.empty()) c.scenario_yaml = scenario_to_yaml(s);
  c.replay_command = minimal_file.empty() ? (r.replay_command.empty()
                                                 ? "faultline run " + s.source_file + " --seed " + std::to_string(seed)
                                                 : r.replay_command)
                                          : "faultline replay " + minimal_file;
  c.timeline = timeline_from_trace_file(trace_path, 120);
  rec.counterexample = std::move(c);
}

void print_sweep_summary(const reports::RunRecord& rec, const Scenario& s, double wall_s) {
  const double sim_s = static_cast<double>(rec.simulated_us) / 1e6;
  std::printf(
      "\nsweep %s (%s/%s): %zu seeds run, %zu failed, %.1f wall s, %.1f seeds/min, "
      "%.1f simulated s per wall s\n",
      s.name.c_str(), s.system.c_str(), s.variant.c_str(), rec.seeds.size(), rec.failing_seeds.size(), wall_s,
      rec.seeds.size() * 60.0 / std::max(wall_s, 1e-9), sim_s / std::max(wall_s, 1e-9));
  for (const auto& [p, n] : rec.failures_per_property) {
    std::printf("  failures of %-32s %lld\n", p.c_str(), static_cast<long long>(n));
  }
  // Per property over all seeds: checks evaluated, items exempted (their share of what it looked
  // at), and on how many seeds it checked nothing; vacuous on every seed is VACUOUS.
  for (const reports::AssertionRecord& a : rec.assertions) {
    std::printf("  %-7s %-32s %lld checks, %lld exempted (%.1f %%), vacuous on %lld of %lld seeds%s\n", a.status(),
                a.property.c_str(), static_cast<long long>(a.checks), static_cast<long long>(a.exempted),
                100.0 * a.exempted_share(), static_cast<long long>(a.vacuous_seeds), static_cast<long long>(a.seeds),
                a.exempted_share() > reports::kExemptedShareNoted ? "  <- exempts more than 10 %" : "");
  }
  // What the mix exercised: per behaviour the judges check, the share of seeds that reached it.
  for (const auto& [b, n] : rec.behaviour_seeds) {
    std::printf("  behaviour %-48s %lld of %zu seeds (%.1f %%)\n", b.c_str(), static_cast<long long>(n),
                rec.seeds.size(),
                100.0 * static_cast<double>(n) / static_cast<double>(std::max<size_t>(rec.seeds.size(), 1)));
  }
  for (const std::string& p : rec.vacuous_properties()) {
    std::printf("  %s checked nothing on any seed: the scenario judges it but never exercises it\n", p.c_str());
  }
  for (size_t i = 0; i < rec.failing_seeds.size() && i < 5; ++i) {
    std::string without;
    for (const std::string& id : s.without) without += " --without " + id;
    std::printf("  failing seed %llu: faultline run %s --seed %llu%s\n",
                static_cast<unsigned long long>(rec.failing_seeds[i]), s.source_file.c_str(),
                static_cast<unsigned long long>(rec.failing_seeds[i]), without.c_str());
  }
  if (!rec.error.empty()) std::printf("  first crash/timeout: %s\n", rec.error.c_str());
  std::printf("%s\n", rec.as_expected() ? "AS EXPECTED" : "UNEXPECTED");
}

// ---------------------------------------------------------------- sweep
const char* kSweepUsage =
    "usage: faultline sweep FILE --seeds N [--first-seed S] [--jobs J] [--shard i/n]\n"
    "                       [--json OUT.json] [--timeout-s T] [--quiet] [--without FIX[,FIX...]]\n"
    "       faultline sweep FILE --crash-points|--pause-points|--fail-points [--effects K] [--processes P,...]\n"
    "                       [--pause-ms MS,...] [--meanwhile P,...] [--seed N] [--jobs J] [--json OUT]\n"
    "                       [--found DIR]\n"
    "       faultline sweep HARDENED.yaml --each-fix [--seeds N] [--crash-scenario FILE] [--effects K]\n"
    "                       [--processes P,...] [--only FIX,...] [--found DIR] [--json OUT]\n"
    "  Runs the scenario with many seeds in parallel worker processes. A crash or hang of one\n"
    "  seed (over --timeout-s wall seconds, default 120) is that seed's failure. --shard i/n runs\n"
    "  every n-th seed starting at the i-th, so n machines cover N seeds; merge their --json files\n"
    "  with `faultline report --merge`. --crash-points lists every external effect of the service\n"
    "  processes (each Redis command, SQL statement, publish, ack) in one run, then re-runs the\n"
    "  seed once per effect (the first K with --effects), crashing the caller right before and\n"
    "  right after it; the crashed process restarts 1 s later. --processes P,... sweeps only the\n"
    "  effects of processes whose names start with one of the prefixes (e.g. coord-,topk-,pub-);\n"
    "  --effects K then counts those. --found DIR writes each broken\n"
    "  property's first crash point as a replayable scenario (crash_point: + seed:).\n"
    "  --pause-points pauses the caller at the same boundaries instead, each for one duration drawn\n"
    "  from the seed among 2 ms, 20 ms and just below and above each of the system's critical\n"
    "  durations (windows, TTLs, leases, timeouts), while everything else runs; --found writes\n"
    "  pause_point: files. --pause-ms MS,... pauses each boundary once for each of these durations\n"
    "  instead (a pause that must outlast a TTL another process starts during it). --meanwhile\n"
    "  P,... then sweeps pause pairs: each of those runs lists the effects that processes named\n"
    "  P* made while its pause held its caller, and each is paused in turn too, right before and\n"
    "  right after it (two processes stopped between their own steps at once).\n"
    "  --fail-points fails the call at each boundary instead: refused before it is sent (the caller\n"
    "  sees the connection refused at once), or its reply lost after the server ran it (the caller\n"
    "  times out); --found writes fail_point: files.\n"
    "  --each-fix proves each named fix needed: hardened runs without one fix at a time over seeds\n"
    "  S..S+N-1 (default 200, stopping at the first failure), then, if nothing failed, through the\n"
    "  crash points of --crash-scenario. Prints per fix: killed (property, seed or crash point,\n"
    "  seconds) or SURVIVED; --found DIR writes each kill, shrunk, as DIR/without-<FIX>.yaml.\n"
    "  Exit 1 when a fix survived.\n"
    "  --without FIX,... runs hardened without these fixes (see `faultline fixes`).\n"
    "exit: 0 as expected, 1 a property failed unexpectedly, 2 usage or input error\n";

// A crash, pause or failed call at one effect boundary (crash-, pause- and fail-point sweeps).
struct BoundaryPoint {
  uint64_t effect_index = 0;
  bool before = false;
  int64_t ms = 0;  // crash: restart after; pause: duration; fail: unused
  // A pause pair's second pause (--meanwhile): at an effect another process made while the first
  // pause held its caller, as the first pause's own run listed it.
  std::optional<PausePoint> then;
  std::string then_text;
};

struct PointKind {
  enum Kind { kCrash, kPause, kFail } kind = kCrash;
  const char* name() const { return kind == kPause ? "pause" : kind == kFail ? "fail" : "crash"; }
  const char* title() const { return kind == kPause ? "Pause" : kind == kFail ? "Fail" : "Crash"; }
  RunOptions options(const BoundaryPoint& p) const {
    RunOptions opt;
    if (kind == kPause) opt.pause_points = {PausePoint{p.effect_index, p.before, p.ms}};
    if (kind == kPause && p.then) opt.pause_points.push_back(*p.then);
    if (kind == kCrash) opt.crash_point = CrashPoint{p.effect_index, p.before, p.ms};
    if (kind == kFail) opt.fail_point = FailPoint{p.effect_index, p.before};
    return opt;
  }
  void pin(const BoundaryPoint& p, Scenario* s) const {
    if (kind == kPause) s->pause_points = {PausePointSpec{static_cast<int64_t>(p.effect_index), p.before, p.ms}};
    if (kind == kPause && p.then) {
      s->pause_points.push_back(
          PausePointSpec{static_cast<int64_t>(p.then->effect_index), p.then->before, p.then->duration_ms});
    }
    if (kind == kCrash) s->crash_point = CrashPointSpec{static_cast<int64_t>(p.effect_index), p.before, p.ms};
    if (kind == kFail) s->fail_point = FailPointSpec{static_cast<int64_t>(p.effect_index), p.before};
  }
  std::string describe(const BoundaryPoint& p, const RunResult& listed) const {
    const std::string& effect = listed.effects[p.effect_index].text;
    if (kind == kFail) return (p.before ? "refusing " : "losing the reply of ") + effect;
    std::string text = std::string(kind == kPause ? "pausing " + std::to_string(p.ms) + " ms " : "crashing ") +
                       (p.before ? "before " : "after ") + effect;
    if (p.then) {
      text += " and meanwhile " + std::to_string(p.then->duration_ms) + " ms " +
              (p.then->before ? "before " : "after ") + p.then_text;
    }
    return text;
  }
};

// The durations a pause may last: --pause-ms's when given, else the system's critical durations'.
std::vector<int64_t> sweep_pause_durations_ms(const Scenario& s, const std::vector<int64_t>& pause_ms) {
  if (!pause_ms.empty()) return pause_ms;
  const SystemUnderTest* sys = find_system(s.system);
  return pause_durations_ms(sys ? sys->critical_durations(s) : std::vector<CriticalDuration>{});
}

// `pause_ms` (--pause-ms): each boundary paused once for each of these durations; empty: one drawn.
std::vector<BoundaryPoint> points_to_sweep(const Scenario& s, const RunResult& listed, uint64_t effects,
                                           const std::vector<std::string>& processes, uint64_t seed, PointKind kind,
                                           const std::vector<int64_t>& pause_ms) {
  std::vector<BoundaryPoint> out;
  if (kind.kind == PointKind::kPause && !pause_ms.empty()) {
    for (const CrashPoint& p : crash_points_to_sweep(listed, effects, processes)) {
      for (int64_t ms : pause_ms) out.push_back(BoundaryPoint{p.effect_index, p.before, ms});
    }
  } else if (kind.kind == PointKind::kPause) {
    const std::vector<int64_t> durations = sweep_pause_durations_ms(s, pause_ms);
    for (const PausePoint& p : pause_points_to_sweep(listed, effects, processes, durations, seed)) {
      out.push_back(BoundaryPoint{p.effect_index, p.before, p.duration_ms});
    }
  } else {
    // Crash points and fail points share the boundaries: before and after each effect.
    for (const CrashPoint& p : crash_points_to_sweep(listed, effects, processes)) {
      out.push_back(BoundaryPoint{p.effect_index, p.before, p.restart_after_ms});
    }
  }
  return out;
}

// A point sweep's progress on stderr (its stdout is the summary): every 100 runs and the last.
ProgressFn point_progress(const char* what, size_t total) {
  const auto start = WallClock::now();
  return [what, total, start](const WorkerOutcome&, size_t done, size_t) {
    if (done % 100 != 0 && done != total) return;
    const double elapsed_s = std::chrono::duration<double>(WallClock::now() - start).count();
    const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0;
    std::fprintf(stderr, "%s: %zu/%zu runs, %.1f runs/s, %.0f s left\n", what, done, total, rate,
                 rate > 0 ? static_cast<double>(total - done) / rate : 0.0);
  };
}

// --meanwhile: each pause of the first sweep paired in turn with a pause right before and right
// after each effect that the --meanwhile processes made while it held its caller (as its own run
// listed them), for one duration drawn as the first's, or for each of --pause-ms.
std::vector<BoundaryPoint> pause_pairs(const std::vector<BoundaryPoint>& first, const std::vector<WorkerOutcome>& out,
                                       const std::vector<int64_t>& durations_ms, bool each_duration, uint64_t seed) {
  FL_ASSERT(!durations_ms.empty());
  std::vector<BoundaryPoint> pairs;
  for (const WorkerOutcome& o : out) {
    const BoundaryPoint& p = first[o.job];
    for (const ListedEffect& e : o.result.meanwhile) {
      if (e.index <= p.effect_index) continue;  // the pause's own effect, or one made before it
      for (bool before : {true, false}) {
        sim::Rng rng(sim::stable_hash("pause-pair") ^ (seed * 0x9e3779b97f4a7c15ULL) ^ (p.effect_index << 22) ^
                     (p.before ? 1ULL << 21 : 0) ^ (e.index << 1) ^ (before ? 1 : 0));
        std::vector<int64_t> ms =
            each_duration ? durations_ms : std::vector<int64_t>{durations_ms[rng.below(durations_ms.size())]};
        for (int64_t d : ms) {
          BoundaryPoint pair = p;
          pair.then = PausePoint{e.index, before, d};
          pair.then_text = e.text;
          pairs.push_back(std::move(pair));
        }
      }
    }
  }
  return pairs;
}

// Writes each broken property's first point as a replayable scenario (crash_point:, pause_point:
// or fail_point: + seed:). Returns "" or the path it could not write.
std::string write_found_points(const Scenario& s, const std::map<std::string, BoundaryPoint>& first_break,
                               const RunResult& listed, uint64_t seed, PointKind kind, const std::string& dir) {
  fs::create_directories(dir);
  for (const auto& [prop, p] : first_break) {
    if (prop.empty() || prop[0] == '<') continue;  // "<error>": a crashed run, not a property
    Scenario pinned = s;
    kind.pin(p, &pinned);
    pinned.seed = seed;
    pinned.expect = Expectation{.pass = false, .failing = {prop}};
    // Recorded from a run of the pinned file: its point is in the config digest that starts the
    // trace, so the sweep's run has another fingerprint.
    pinned.expect.fingerprint = run_scenario(pinned, seed, RunOptions{}).fingerprint;
    pinned.name = s.name + "-" + kind.name() + "-" + (p.before ? "before-" : "after-") + std::to_string(p.effect_index);
    if (p.then)
      pinned.name +=
          std::string("-then-") + (p.then->before ? "before-" : "after-") + std::to_string(p.then->effect_index);
    const std::string path = dir + "/" + pinned.name + "-" + prop + ".yaml";
    const std::string header = "# " + std::string(kind.title()) + " point found by `faultline sweep --" + kind.name() +
                               "-points` on " + s.source_file + ": " + kind.describe(p, listed) + " breaks " + prop +
                               ".\n# Replay: faultline replay " + path + "\n";
    if (!write_text(path, header + scenario_to_yaml(pinned))) return path;
    std::printf("  wrote %s\n", path.c_str());
  }
  return "";
}

// --crash-points / --pause-points / --fail-points: one discovery run lists the service processes'
// effects, then one run per boundary (before and after each effect) crashes or pauses the caller
// there, or fails its call (refused before, reply lost after).
int point_sweep(const Scenario& s, const Flags& f, int jobs, absl::Duration timeout, PointKind kind) {
  uint64_t effects = 0, seed = default_seed(s);
  if (!f.u64("--effects", &effects) || !f.u64("--seed", &seed)) return f.error("bad number");
  RunOptions discover;
  discover.list_effects = true;
  const RunResult listed = run_scenario(s, seed, discover);
  if (!listed.error.empty()) return f.error("discovery run failed: " + listed.error);
  const std::vector<std::string> processes = f.list("--processes");
  std::vector<int64_t> pause_ms;
  for (const std::string& ms : f.list("--pause-ms")) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(ms, &v) || v < 1 || v > 3'600'000) {
      return f.error("--pause-ms takes durations in milliseconds, 1..3600000: " + ms);
    }
    pause_ms.push_back(v);
  }
  const std::vector<std::string> meanwhile = f.list("--meanwhile");
  std::vector<BoundaryPoint> points = points_to_sweep(s, listed, effects, processes, seed, kind, pause_ms);
  std::string which;
  for (const std::string& p : processes) which += (which.empty() ? " (processes " : ", ") + p + "*";
  if (!which.empty()) which += ")";
  const size_t per_effect = 2 * std::max<size_t>(pause_ms.size(), 1);
  std::printf("%s-point discovery: %zu external effects; sweeping %zu of them%s, before and after\n", kind.name(),
              listed.effects.size(), points.size() / per_effect, which.c_str());
  std::fflush(stdout);
  if (listed.effects.empty()) return f.error("the scenario's service processes make no external calls");
  if (points.empty()) return f.error("no external effect of the processes given with --processes");
  const auto start = WallClock::now();
  std::vector<WorkerOutcome> out = run_in_workers(
      points.size(),
      [&](size_t job) {
        RunOptions o = kind.options(points[job]);
        o.meanwhile_processes = meanwhile;
        return run_scenario(s, seed, o);
      },
      jobs, timeout, point_progress(kind.name(), points.size()));
  if (!meanwhile.empty()) {
    const std::vector<BoundaryPoint> pairs =
        pause_pairs(points, out, sweep_pause_durations_ms(s, pause_ms), !pause_ms.empty(), seed);
    std::printf("pause pairs: %zu, each a pause above and one of the --meanwhile processes' effects during it\n",
                pairs.size());
    std::fflush(stdout);
    std::vector<WorkerOutcome> paired = run_in_workers(
        pairs.size(), [&](size_t job) { return run_scenario(s, seed, kind.options(pairs[job])); }, jobs, timeout,
        point_progress("pause pairs", pairs.size()));
    for (WorkerOutcome& o : paired) {
      o.job += points.size();
      out.push_back(std::move(o));
    }
    points.insert(points.end(), pairs.begin(), pairs.end());
  }
  std::map<std::string, std::vector<std::string>> broken;  // property -> points
  std::map<std::string, BoundaryPoint> first_break;        // property -> its first point
  for (const WorkerOutcome& o : out) {
    const BoundaryPoint& p = points[o.job];
    for (const std::string& prop : failed_properties(o.result)) {
      first_break.emplace(prop, p);
      broken[prop].push_back(kind.describe(p, listed));
    }
  }
  std::printf("%s-point sweep %s seed %llu: %zu runs in %.1f wall s\n", kind.name(), s.name.c_str(),
              static_cast<unsigned long long>(seed), points.size(),
              std::chrono::duration<double>(WallClock::now() - start).count());
  for (const auto& [prop, where] : broken) {
    std::printf("  %s broken by %zu %s points:", prop.c_str(), where.size(), kind.name());
    for (size_t i = 0; i < where.size() && i < 10; ++i) std::printf(" [%s]", where[i].c_str());
    std::printf("\n");
  }
  if (f.has("--json")) {
    reports::Report rep = new_report();
    rep.runs.push_back(make_run_record(s, out, rep.produced_at, rep.commit));
    if (!write_text(f.str("--json"), reports::to_json(rep))) return f.error("cannot write --json");
  }
  if (f.has("--found")) {
    const std::string bad = write_found_points(s, first_break, listed, seed, kind, f.str("--found"));
    if (!bad.empty()) return f.error("cannot write " + bad);
  }
  const bool expect_clean = s.expect.pass;
  return (broken.empty() == expect_clean) ? 0 : 1;
}

// `--each-fix`: hardened without each named fix in turn (harness/fix_kill.h).
int each_fix_sweep(const Scenario& s, const Flags& f, uint64_t seeds, uint64_t first, int jobs,
                   absl::Duration timeout) {
  if (s.variant != "hardened" || !s.without.empty()) {
    return f.error("--each-fix sweeps a hardened scenario with every fix in place");
  }
  const SystemUnderTest* sys = find_system(s.system);
  if (sys == nullptr || sys->fixes().empty()) return f.error("system '" + s.system + "' declares no named fixes");
  FixKillOptions o;
  o.first_seed = first;
  o.seeds = seeds == 0 ? 200 : seeds;
  o.jobs = jobs;
  o.timeout = timeout;
  o.found_dir = f.str("--found");
  o.only = f.list("--only");
  for (const std::string& id : o.only) {
    if (!find_fix(sys->fixes(), id)) return f.error("system '" + s.system + "' has no fix '" + id + "'");
  }
  std::optional<Scenario> crash;
  if (f.has("--crash-scenario")) {
    crash = load_scenario_or_print(f.str("--crash-scenario"));
    if (!crash) return 2;
    if (crash->system != s.system || crash->variant != "hardened") {
      return f.error("--crash-scenario must be a hardened scenario of system '" + s.system + "'");
    }
    o.crash_scenario = &*crash;
  }
  uint64_t effects = 0;
  if (!f.u64("--effects", &effects)) return f.error("bad number");
  o.crash_effects = effects;
  o.crash_processes = f.list("--processes");
  o.log = [](const std::string& line) { std::printf("  %s\n", line.c_str()), std::fflush(stdout); };
  std::printf("fix-kill sweep of %s: %zu fixes, up to %llu seeds each%s\n", s.source_file.c_str(),
              o.only.empty() ? sys->fixes().size() : o.only.size(), static_cast<unsigned long long>(o.seeds),
              crash ? (", then the crash points of " + crash->source_file).c_str() : "");
  const std::vector<FixKill> kills = fix_kill_sweep(s, o);
  std::printf("\n%s", fix_kill_table(kills).c_str());
  size_t survived = 0;
  for (const FixKill& k : kills) survived += k.killed ? 0 : 1;
  std::printf("%zu of %zu fixes killed%s\n", kills.size() - survived, kills.size(),
              survived ? "; a SURVIVED fix is unneeded or shows a gap in the judges or the faults" : "");
  if (f.has("--json")) {
    using reports::Json;
    Json fixes = Json::array();
    for (const FixKill& k : kills) {
      fixes.push_back(Json{{"id", k.fix.id},
                           {"killed", k.killed},
                           {"property", k.property},
                           {"via", k.via},
                           {"seed", k.seed},
                           {"seeds_run", k.seeds_run},
                           {"wall_seconds", reports::json_double(k.wall_seconds)},
                           {"counterexample", k.counterexample}});
    }
    const Json doc{{"scenario", s.source_file}, {"system", s.system}, {"fixes", std::move(fixes)}};
    const std::string text = reports::json_dump(doc, reports::JsonLayout{{}, {"fixes"}}) + "\n";
    if (!write_text(f.str("--json"), text)) return f.error("cannot write --json");
  }
  return survived == 0 ? 0 : 1;
}

}  // namespace

int sweep_main(const Args& args) {
  Flags f(args, kSweepUsage,
          {{"--seeds", K::kCount},         {"--first-seed", K::kCount},    {"--jobs", K::kCount},
           {"--shard", K::kText},          {"--json", K::kText},           {"--timeout-s", K::kPositive},
           {"--quiet", K::kSwitch},        {"--crash-points", K::kSwitch}, {"--pause-points", K::kSwitch},
           {"--fail-points", K::kSwitch},  {"--effects", K::kCount},       {"--found", K::kText},
           {"--seed", K::kCount},          {"--without", K::kList},        {"--each-fix", K::kSwitch},
           {"--crash-scenario", K::kText}, {"--only", K::kList},           {"--processes", K::kList},
           {"--pause-ms", K::kList},       {"--meanwhile", K::kList}});
  if (f.status() >= 0) return f.status();
  if (f.positional().size() != 1) return f.error("expected exactly one scenario FILE");
  uint64_t seeds = 0, first = 1, jobs = 2;
  absl::Duration timeout;
  if (!f.u64("--seeds", &seeds) || !f.u64("--first-seed", &first) || !f.u64("--jobs", &jobs) ||
      !timeout_flag(f, &timeout) || jobs == 0 || jobs > 256) {
    return f.error("bad number");
  }
  int shard = 0, shards = 1;
  if (f.has("--shard") && !parse_shard(f.str("--shard"), &shard, &shards)) {
    return f.error("--shard takes i/n with 0 <= i < n");
  }
  std::optional<Scenario> s = load_scenario_or_print(f.positional()[0]);
  if (!s) return 2;
  RunOptions run_options;
  run_options.without = f.list("--without");
  if (std::string why = apply_without(*s, run_options.without); !why.empty()) return f.error(why);
  const int point_modes = f.has("--crash-points") + f.has("--pause-points") + f.has("--fail-points");
  if (f.has("--processes") && point_modes == 0 && !f.has("--crash-scenario")) {
    return f.error(
        "--processes chooses crash points: it goes with --crash-points, --pause-points, --fail-points or "
        "--crash-scenario");
  }
  if (point_modes > 1) return f.error("--crash-points, --pause-points and --fail-points exclude each other");
  if (f.has("--pause-ms") && !f.has("--pause-points")) return f.error("--pause-ms goes with --pause-points");
  if (f.has("--meanwhile") && !f.has("--pause-points")) return f.error("--meanwhile goes with --pause-points");
  if (f.has("--each-fix")) return each_fix_sweep(*s, f, seeds, first, static_cast<int>(jobs), timeout);
  if (f.has("--crash-points")) return point_sweep(*s, f, static_cast<int>(jobs), timeout, PointKind{PointKind::kCrash});
  if (f.has("--pause-points")) return point_sweep(*s, f, static_cast<int>(jobs), timeout, PointKind{PointKind::kPause});
  if (f.has("--fail-points")) return point_sweep(*s, f, static_cast<int>(jobs), timeout, PointKind{PointKind::kFail});
  if (seeds == 0) return f.error("--seeds N is required (N >= 1)");
  const std::vector<uint64_t> list = shard_seeds(first, seeds, shard, shards);
  Progress progress(list.size(), f.has("--quiet"));
  const auto start = WallClock::now();
  std::vector<WorkerOutcome> out = run_in_workers(
      list.size(), [&](size_t job) { return run_scenario(*s, list[job], run_options); }, static_cast<int>(jobs),
      timeout, [&](const WorkerOutcome& o, size_t done, size_t) { progress.update(o, list[o.job], done); });
  for (WorkerOutcome& o : out) o.result.seed = list[o.job];  // crashed workers report no seed
  const double wall_s = std::chrono::duration<double>(WallClock::now() - start).count();
  reports::Report rep = new_report();
  reports::RunRecord rec = make_run_record(*s, out, rep.produced_at, rep.commit);
  print_sweep_summary(rec, *s, wall_s);
  if (f.has("--json")) {
    if (!rec.failing_seeds.empty()) {
      attach_counterexample(rec, *s, rec.failing_seeds[0], f.str("--json") + ".trace.jsonl", "", timeout);
    }
    rep.runs.push_back(rec);
    if (!write_text(f.str("--json"), reports::to_json(rep))) return f.error("cannot write --json");
  }
  return rec.as_expected() ? 0 : 1;
}

// ---------------------------------------------------------------- shrink
namespace {
const char* kShrinkUsage =
    "usage: faultline shrink FILE --seed N [--out MIN.yaml] [--property P] [--max-runs R]\n"
    "                        [--timeout-s T] [--without FIX[,FIX...]]\n"
    "  Reduces a failing run (fewer faults, clients, operations, shorter duration, lower rates)\n"
    "  while the same property still fails with the same seed, and writes the minimal scenario\n"
    "  (carrying its seed and fingerprint) for `faultline replay`. Default --out: FILE with\n"
    "  .min-seed<N>.yaml; default --max-runs 200.\n"
    "exit: 0 shrunk (or nothing to remove), 1 the scenario does not fail with that seed, 2 usage\n";
}  // namespace

int shrink_main(const Args& args) {
  Flags f(args, kShrinkUsage,
          {{"--seed", K::kCount},
           {"--out", K::kText},
           {"--property", K::kText},
           {"--max-runs", K::kCount},
           {"--timeout-s", K::kPositive},
           {"--without", K::kList}});
  if (f.status() >= 0) return f.status();
  if (f.positional().size() != 1) return f.error("expected exactly one scenario FILE");
  std::optional<Scenario> s = load_scenario_or_print(f.positional()[0]);
  if (!s) return 2;
  // The minimal file carries the removed fixes in its `without:` list.
  if (std::string why = apply_without(*s, f.list("--without")); !why.empty()) return f.error(why);
  uint64_t seed = default_seed(*s), max_runs = 200;
  absl::Duration timeout;
  if (!f.u64("--seed", &seed) || !f.u64("--max-runs", &max_runs) || !timeout_flag(f, &timeout) || max_runs == 0) {
    return f.error("bad number");
  }
  const std::string base = f.positional()[0];
  const std::string out_path =
      f.str("--out", base.substr(0, base.rfind(".yaml")) + ".min-seed" + std::to_string(seed) + ".yaml");
  const auto start = WallClock::now();
  ShrinkResult res = shrink_failure(
      *s, seed,
      [&](const Scenario& c, uint64_t sd) {
        RunOptions opt;
        opt.scenario_path = out_path;
        return run_isolated(c, sd, opt, timeout);
      },
      static_cast<int>(max_runs), f.str("--property"));
  if (!res.reproduced) {
    std::printf("shrink: %s\n", res.summary.c_str());
    return 1;
  }
  const std::string header = "# Minimal counterexample shrunk by `faultline shrink` from " + base + " (seed " +
                             std::to_string(seed) + ", property " + res.property + ").\n# Shrank: " + res.summary +
                             " (" + std::to_string(res.runs) + " runs).\n# Replay: faultline replay " + out_path + "\n";
  if (!write_text(out_path, header + scenario_to_yaml(res.minimal))) { return f.error("cannot write " + out_path); }
  std::printf(
      "shrink %s seed %llu, property %s: %s\n  %d runs, %d steps kept, %.1f wall s\n"
      "  wrote %s\n  replay: faultline replay %s\n",
      s->name.c_str(), static_cast<unsigned long long>(seed), res.property.c_str(), res.summary.c_str(), res.runs,
      res.accepted, std::chrono::duration<double>(WallClock::now() - start).count(), out_path.c_str(),
      out_path.c_str());
  return 0;
}

// ---------------------------------------------------------------- replay
namespace {
const char* kReplayUsage =
    "usage: faultline replay FILE [--timeout-s T] [--with-fixes]\n"
    "  Runs a saved scenario with its seed and checks the failure reproduces exactly: the\n"
    "  expected property fails and, when the file records expect.fingerprint, the trace\n"
    "  fingerprint is the same.\n"
    "  --with-fixes  for a counterexample of hardened `without: [FIX]`: restore the removed\n"
    "                fixes and check that every property now passes (the fix is what kills it)\n"
    "exit: 0 reproduced (with --with-fixes: all passed), 1 not, 2 usage or input error\n";
}  // namespace

namespace {

// The other half of a fix's evidence: the counterexample that fails without the fix passes, with
// the same seed, once the fix is back.
int replay_with_fixes(Scenario s, const std::string& path, absl::Duration timeout, const Flags& f) {
  if (s.without.empty()) return f.error("--with-fixes needs a scenario with 'without: [FIX]'");
  const std::vector<std::string> restored = s.without;
  s.without.clear();
  s.expect = Expectation{};
  RunOptions opt;
  opt.scenario_path = path;
  const RunResult r = run_isolated(s, *s.seed, opt, timeout);
  std::string fixes;
  for (const std::string& id : restored) fixes += (fixes.empty() ? "" : ", ") + id;
  std::printf("replay %s seed %llu with %s restored:", s.name.c_str(), static_cast<unsigned long long>(*s.seed),
              fixes.c_str());
  for (const std::string& p : failed_properties(r)) std::printf(" FAIL %s", p.c_str());
  if (!r.error.empty()) std::printf(" (%s)", r.error.c_str());
  const bool ok = r.error.empty() && r.all_passed;
  std::printf("\n%s\n",
              ok ? "FIXED: every property passes with the fix" : "NOT FIXED: a property still fails with the fix");
  return ok ? 0 : 1;
}

}  // namespace

int replay_main(const Args& args) {
  Flags f(args, kReplayUsage, {{"--timeout-s", K::kPositive}, {"--with-fixes", K::kSwitch}});
  if (f.status() >= 0) return f.status();
  if (f.positional().size() != 1) return f.error("expected exactly one scenario FILE");
  absl::Duration timeout;
  if (!timeout_flag(f, &timeout)) return f.error("bad number");
  std::optional<Scenario> s = load_scenario_or_print(f.positional()[0]);
  if (!s) return 2;
  if (!s->seed) {
    std::fprintf(stderr, "%s: error: no 'seed:' recorded; use `faultline run FILE --seed N`\n",
                 f.positional()[0].c_str());
    return 2;
  }
  if (f.has("--with-fixes")) return replay_with_fixes(*s, f.positional()[0], timeout, f);
  RunOptions opt;
  opt.scenario_path = f.positional()[0];
  const RunResult r = run_isolated(*s, *s->seed, opt, timeout);
  const std::vector<std::string> failed = failed_properties(r);
  std::printf("replay %s seed %llu: fingerprint %016llx", s->name.c_str(), static_cast<unsigned long long>(*s->seed),
              static_cast<unsigned long long>(r.fingerprint));
  for (const std::string& p : failed) std::printf(" FAIL %s", p.c_str());
  if (!r.error.empty()) std::printf(" (%s)", r.error.c_str());
  std::printf("\n");
  bool ok = r.as_expected;
  if (s->expect.fingerprint && *s->expect.fingerprint != r.fingerprint) {
    std::printf("NOT REPRODUCED: fingerprint %016llx differs from the recorded %016llx\n",
                static_cast<unsigned long long>(r.fingerprint),
                static_cast<unsigned long long>(*s->expect.fingerprint));
    return 1;
  }
  std::printf("%s\n", ok ? "REPRODUCED" : "NOT REPRODUCED: verdicts differ from expect:");
  return ok ? 0 : 1;
}

// ---------------------------------------------------------------- report
namespace {
const char* kReportUsage =
    "usage: faultline report --matrix NAME|all --out DIR [--scenarios DIR] [--seeds N]\n"
    "                        [--jobs J] [--timeout-s T] [--max-shrink-runs R] [--no-shrink]\n"
    "                        [--summary FILE|-]\n"
    "       faultline report --merge A.json B.json ... --out DIR [--summary FILE|-]\n"
    "  Runs every scenario under --scenarios (default scenarios/) whose matrix_rows hit the\n"
    "  matrix, N seeds each (default 10, plus the seed a scenario saves), shrinks each failure to a\n"
    "  minimal counterexample, replays each named fix's counterexample both ways, and writes\n"
    "  report.md, report.html, junit.xml, report.json, summary.md and counterexamples/ into DIR.\n"
    "  --summary also writes\n"
    "  the summary (at most 64 KB of Markdown, for a pull-request comment or a CI job summary)\n"
    "  to FILE or standard output. --merge combines the JSON of sharded sweeps/reports into one\n"
    "  report. Matrices: a system's name (each system has one: faultline list), or all.\n"
    "exit: 0 every run as expected, 1 some run was not, 2 usage or input error\n";

std::vector<std::string> scenario_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".yaml" || p.string().find("/invalid/") != std::string::npos) continue;
    if (p.filename().string().find(".min-seed") != std::string::npos) continue;
    out.push_back(p.string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool hits_matrix(const Scenario& s, const std::string& matrix) {
  // hardened minus a fix is not the hardened design: it is a fix's evidence (fix_evidence.h).
  if (!s.without.empty()) return false;
  for (const std::string& id : s.matrix_rows) {
    const reports::MatrixRow* row = find_matrix_row(id);
    if (row && (matrix == "all" || row->matrix == matrix)) return true;
  }
  return false;
}

// --summary FILE: the pull-request summary (at most 64 KB of Markdown); "-" is standard output.
std::string write_summary(const Flags& f, const reports::Report& rep) {
  if (!f.has("--summary")) return "";
  const std::string text = reports::to_summary_markdown(rep);
  const std::string path = f.str("--summary");
  if (path.empty() || path == "-") {
    std::fputs(text.c_str(), stdout);
    return "";
  }
  return write_text(path, text) ? "" : "cannot write " + path;
}

int merge_main(const Flags& f, const std::vector<std::string>& inputs, const std::string& out) {
  std::vector<reports::Report> shards;
  for (const std::string& path : inputs) {
    bool ok = false;
    const std::string text = read_text(path, &ok);
    std::string err;
    std::optional<reports::Report> r = ok ? reports::report_from_json(text, &err) : std::nullopt;
    if (!r) {
      std::fprintf(stderr, "%s: error: %s\n", path.c_str(), ok ? err.c_str() : "cannot read");
      return 2;
    }
    shards.push_back(std::move(*r));
  }
  reports::Report merged = reports::merge_reports(shards, utc_now_iso8601(), build_commit());
  // Shards written before reports carried their rows are judged on this binary's rows.
  if (merged.rows.empty()) merged.rows = all_matrix_rows();
  if (std::string err = reports::write_report_files(merged, out); !err.empty()) return f.error(err);
  if (std::string err = write_summary(f, merged); !err.empty()) return f.error(err);
  std::printf("merged %zu reports (%zu runs) into %s/report.{md,html,json} and junit.xml\n", shards.size(),
              merged.runs.size(), out.c_str());
  return reports::report_exit_code(merged);
}

reports::RunRecord evidence_for(const Scenario& s, const std::string& out_dir, uint64_t seeds, int jobs,
                                absl::Duration timeout, int max_shrink_runs, const std::string& now,
                                const std::string& commit) {
  // Seeds 1..N, and the scenario's own seed too: a saved counterexample is defined by its seed.
  std::vector<uint64_t> list;
  for (uint64_t seed = 1; seed <= seeds; ++seed) list.push_back(seed);
  if (s.seed.has_value() && *s.seed > seeds) list.push_back(*s.seed);
  std::vector<WorkerOutcome> out = run_in_workers(
      list.size(), [&](size_t job) { return run_scenario(s, list[job], RunOptions{}); }, jobs, timeout);
  for (WorkerOutcome& o : out) o.result.seed = list[o.job];
  reports::RunRecord rec = make_run_record(s, out, now, commit);
  if (rec.failing_seeds.empty()) return rec;
  const uint64_t seed = rec.failing_seeds[0];
  const std::string stem = out_dir + "/counterexamples/" + s.name + "-" + s.variant + "-seed" + std::to_string(seed);
  fs::create_directories(out_dir + "/counterexamples");
  Scenario minimal = s;
  if (max_shrink_runs > 0) {
    ShrinkResult sr = shrink_failure(
        s, seed, [&](const Scenario& c, uint64_t sd) { return run_isolated(c, sd, RunOptions{}, timeout); },
        max_shrink_runs);
    if (sr.reproduced) minimal = sr.minimal;
    std::printf("  shrunk seed %llu: %s\n", static_cast<unsigned long long>(seed), sr.summary.c_str());
  }
  minimal.seed = seed;
  minimal.source_file = stem + ".yaml";
  write_text(stem + ".yaml", scenario_to_yaml(minimal));
  attach_counterexample(rec, minimal, seed, stem + ".trace.jsonl", stem + ".yaml", timeout);
  return rec;
}
}  // namespace

int report_main(const Args& args) {
  Flags f(args, kReportUsage,
          {{"--matrix", K::kText},
           {"--out", K::kText},
           {"--scenarios", K::kText},
           {"--seeds", K::kCount},
           {"--jobs", K::kCount},
           {"--timeout-s", K::kPositive},
           {"--max-shrink-runs", K::kCount},
           {"--no-shrink", K::kSwitch},
           {"--merge", K::kOptionalText},
           {"--summary", K::kText}});
  if (f.status() >= 0) return f.status();
  const std::string out = f.str("--out");
  if (out.empty()) return f.error("--out DIR is required");
  if (f.has("--merge")) {
    std::vector<std::string> inputs = f.positional();
    if (!f.str("--merge").empty()) inputs.insert(inputs.begin(), f.str("--merge"));
    if (inputs.empty()) return f.error("--merge needs report.json files");
    return merge_main(f, inputs, out);
  }
  const std::string matrix = f.str("--matrix");
  const std::vector<std::string> names = matrix_names();
  if (matrix != "all" && std::find(names.begin(), names.end(), matrix) == names.end()) {
    std::string valid = "all";
    for (const std::string& n : names) valid += ", " + n;
    return f.error("--matrix takes one of: " + valid);
  }
  uint64_t seeds = 10, jobs = 2, shrink_runs = 60;
  absl::Duration timeout;
  if (!f.u64("--seeds", &seeds) || !f.u64("--jobs", &jobs) || !timeout_flag(f, &timeout) ||
      !f.u64("--max-shrink-runs", &shrink_runs) || seeds == 0 || jobs == 0) {
    return f.error("bad number");
  }
  if (f.has("--no-shrink")) shrink_runs = 0;
  std::vector<Scenario> chosen;
  bool input_error = false;
  for (const std::string& path : scenario_files(f.str("--scenarios", "scenarios"))) {
    std::optional<Scenario> s = load_scenario_or_print(path);
    if (!s) {
      input_error = true;
      continue;
    }
    if (hits_matrix(*s, matrix)) chosen.push_back(std::move(*s));
  }
  if (input_error) return 2;
  reports::Report rep = new_report();
  rep.matrices = {matrix};
  for (const Scenario& s : chosen) {
    std::printf("running %s (%s/%s), %llu seeds\n", s.source_file.c_str(), s.system.c_str(), s.variant.c_str(),
                static_cast<unsigned long long>(seeds));
    std::fflush(stdout);
    rep.runs.push_back(evidence_for(s, out, seeds, static_cast<int>(jobs), timeout, static_cast<int>(shrink_runs),
                                    rep.produced_at, rep.commit));
  }
  std::printf("replaying each named fix's counterexample both ways\n");
  std::fflush(stdout);
  rep.fixes = fix_evidence(f.str("--scenarios", "scenarios"), matrix, static_cast<int>(jobs), timeout);
  if (std::string err = reports::write_report_files(rep, out); !err.empty()) return f.error(err);
  if (std::string err = write_summary(f, rep); !err.empty()) return f.error(err);
  size_t counts[reports::kRowStatuses] = {};  // by RowStatus
  for (const reports::RowVerdict& v : reports::judge_rows(rep)) ++counts[static_cast<int>(v.status)];
  size_t proven = 0;
  for (const reports::FixRecord& x : rep.fixes) proven += x.proven() ? 1 : 0;
  std::printf(
      "report %s: %zu scenarios; rows x variants: %zu PASS, %zu FAIL, %zu VACUOUS, %zu MEASURED, %zu NOT_RUN; "
      "named fixes: %zu of %zu proven needed\n"
      "  wrote %s/report.md, report.html, junit.xml, report.json\n",
      matrix.c_str(), chosen.size(), counts[1], counts[2], counts[3], counts[4], counts[0], proven, rep.fixes.size(),
      out.c_str());
  return reports::report_exit_code(rep);
}

// ---------------------------------------------------------------- explain
namespace {
const char* kExplainUsage =
    "usage: faultline explain TRACE.jsonl [--out PREFIX] [--max-events N]\n"
    "  Draws a trace (from `faultline run --trace`) as a sequence diagram, one lane per process,\n"
    "  faults and violations marked: prints Mermaid text and writes PREFIX.mmd and PREFIX.svg\n"
    "  (default PREFIX: the trace path without .jsonl). Default --max-events 200.\n";
}  // namespace

int explain_main(const Args& args) {
  Flags f(args, kExplainUsage, {{"--out", K::kText}, {"--max-events", K::kCount}});
  if (f.status() >= 0) return f.status();
  if (f.positional().size() != 1) return f.error("expected exactly one TRACE.jsonl");
  uint64_t max_events = 200;
  if (!f.u64("--max-events", &max_events) || max_events == 0) return f.error("bad number");
  const std::string path = f.positional()[0];
  bool ok = false;
  const std::string text = read_text(path, &ok);
  if (!ok) return f.error("cannot read " + path);
  size_t bad = 0;
  const std::vector<reports::TimelineEvent> all = reports::parse_trace_jsonl(text, &bad);
  if (all.empty()) {
    std::fprintf(stderr, "%s: error: no trace events (%zu unreadable lines)\n", path.c_str(), bad);
    return 2;
  }
  const auto shown = reports::select_timeline(all, max_events);
  const std::string prefix = f.str("--out", path.substr(0, path.rfind(".jsonl")));
  const std::string mermaid = reports::to_mermaid(shown);
  if (!write_text(prefix + ".mmd", mermaid) || !write_text(prefix + ".svg", reports::to_svg(shown))) {
    return f.error("cannot write " + prefix + ".{mmd,svg}");
  }
  std::fputs(mermaid.c_str(), stdout);
  std::fprintf(stderr, "explain: %zu of %zu events drawn; wrote %s.mmd and %s.svg\n", shown.size(), all.size(),
               prefix.c_str(), prefix.c_str());
  return 0;
}

}  // namespace fl
