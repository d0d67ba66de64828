// `faultline explore`: coverage-guided fault schedules (harness/explore.h).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "harness/build_info.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/explore.h"
#include "harness/scenario_loader.h"
#include "harness/sweep.h"
#include "reports/report.h"

namespace fl {

namespace {

const char* kExploreUsage =
    "usage: faultline explore FILE --budget N [--seed S] [--batch B] [--jobs J] [--timeout-s T]\n"
    "                         [--found DIR] [--json OUT] [--quiet]\n"
    "  Coverage-guided fault schedules. Runs the scenario as written with seeds drawn from --seed\n"
    "  (default 1), writes each run's faults out, then mutates the schedules that reached new\n"
    "  coverage (an effect boundary interrupted for the first time, two processes meeting on a\n"
    "  shared key or table in a new order): shift a fault, retarget it, stretch it to a critical\n"
    "  duration, add a pause between two effects of a process or another fault, drop one, splice\n"
    "  two schedules, reseed the workload. N runs in all, in rounds of B (default 32) whatever J is:\n"
    "  the same seed gives the same corpus, coverage and findings.\n"
    "  --found DIR  writes the first schedule that breaks each property as DIR/explore-<prop>.yaml,\n"
    "               its faults and seed written out (replay it; shrink it with `faultline shrink`)\n"
    "  --json OUT   the runs as a report (with the coverage over time, drawn by report.html)\n"
    "exit: 0 as the scenario expects (no property broken, or, for a failing expectation, broken),\n"
    "      1 otherwise, 2 usage or input error\n";

using K = FlagKind;

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

// Writes the finding as a replayable file, its fingerprint pinned from a run of the file itself.
std::string write_finding(const std::string& dir, const ExploreFinding& f, const std::string& source) {
  std::filesystem::create_directories(dir);
  Scenario pinned = f.scenario;
  const RunResult check = run_scenario(pinned, *pinned.seed, RunOptions{});
  pinned.expect.fingerprint = check.fingerprint;
  const std::string path = dir + "/explore-" + f.property + ".yaml";
  const std::string header = "# Found by `faultline explore " + source + "` after " + std::to_string(f.runs_before) +
                             " runs: this schedule breaks " + f.property +
                             (check.as_expected ? "" : " (NOT reproduced)") + ".\n# Replay: faultline replay " + path +
                             "\n";
  return write_text(path, header + scenario_to_yaml(pinned)) ? path : "";
}

}  // namespace

int explore_main(const Args& args) {
  CliFlags f(args, kExploreUsage,
             {{"--budget", K::kCount},
              {"--seed", K::kCount},
              {"--batch", K::kCount},
              {"--jobs", K::kCount},
              {"--timeout-s", K::kPositive},
              {"--found", K::kText},
              {"--json", K::kText},
              {"--quiet", K::kSwitch}});
  if (f.status() >= 0) return f.status();
  if (f.positional().size() != 1) return f.error("expected exactly one scenario FILE");
  ExploreOptions o;
  uint64_t batch = o.batch, jobs = 2;
  double timeout_s = 120;
  if (!f.u64("--budget", &o.budget) || !f.u64("--seed", &o.seed) || !f.u64("--batch", &batch) ||
      !f.u64("--jobs", &jobs) || !f.number("--timeout-s", &timeout_s)) {
    return f.error("bad number");
  }
  if (!f.has("--budget") || o.budget == 0) return f.error("--budget N is required (N >= 1)");
  if (batch == 0 || batch > 4096 || jobs == 0 || jobs > 256)
    return f.error("--batch and --jobs take 1.. (batch up to 4096)");
  o.batch = batch;
  o.jobs = static_cast<int>(jobs);
  o.timeout = absl::Seconds(timeout_s);
  std::optional<Scenario> s = load_scenario_or_print(f.positional()[0]);
  if (!s) return 2;
  const bool quiet = f.has("--quiet");
  ExploreResult r = explore(*s, o, [&](const reports::CoverageSample& c) {
    if (!quiet) {
      std::printf("[%lld/%llu runs] %lld features, corpus %lld, %lld properties broken\n",
                  static_cast<long long>(c.runs), static_cast<unsigned long long>(o.budget),
                  static_cast<long long>(c.features), static_cast<long long>(c.corpus),
                  static_cast<long long>(c.findings));
      std::fflush(stdout);
    }
  });
  const double outside = r.wall_seconds - r.in_runs_seconds;
  std::printf(
      "explore %s seed %llu: %zu runs, %zu coverage features, corpus %zu, %.1f wall s (%.1f %% outside the "
      "runs)\n",
      s->name.c_str(), static_cast<unsigned long long>(o.seed), r.outcomes.size(), r.features, r.corpus, r.wall_seconds,
      r.wall_seconds > 0 ? 100.0 * outside / r.wall_seconds : 0.0);
  for (const ExploreFinding& x : r.findings) {
    std::printf("  %s broken after %llu runs (seed %llu, %zu faults)\n", x.property.c_str(),
                static_cast<unsigned long long>(x.runs_before), static_cast<unsigned long long>(*x.scenario.seed),
                x.scenario.faults.size());
    if (f.has("--found")) {
      const std::string path = write_finding(f.str("--found"), x, s->source_file);
      if (path.empty()) return f.error("cannot write into " + f.str("--found"));
      std::printf("    wrote %s\n", path.c_str());
    }
  }
  if (f.has("--json")) {
    reports::Report rep = new_report();
    rep.runs.push_back(make_run_record(*s, r.outcomes, rep.produced_at, rep.commit));
    rep.runs.back().coverage = r.series;
    if (!write_text(f.str("--json"), reports::to_json(rep))) return f.error("cannot write --json");
  }
  const bool broke = !r.findings.empty();
  return broke == !s->expect.pass ? 0 : 1;
}

}  // namespace fl
