#include "harness/fix_evidence.h"

#include <filesystem>
#include <optional>

#include "harness/runner.h"
#include "harness/scenario_loader.h"
#include "harness/sweep.h"
#include "harness/system.h"

namespace fl {

namespace {

struct Job {
  size_t fix = 0;  // index into the records
  bool with_fix = false;
  Scenario scenario;
};

reports::FixRecord record_of(const SystemUnderTest& sys, const FixInfo& f) {
  reports::FixRecord r;
  r.system = sys.name();
  r.id = f.id;
  r.seed_line = f.seed_line;
  r.why = f.why;
  r.invariants = f.invariants;
  return r;
}

}  // namespace

std::vector<reports::FixRecord> fix_evidence(const std::string& scenarios_dir, const std::string& matrix, int jobs,
                                             absl::Duration timeout) {
  std::vector<reports::FixRecord> records;
  std::vector<Job> runs;
  for (const SystemUnderTest* sys : all_systems()) {
    if (matrix != "all" && matrix != sys->name()) continue;
    for (const FixInfo& f : sys->fixes()) {
      reports::FixRecord r = record_of(*sys, f);
      const std::string path = scenarios_dir + "/" + sys->name() + "/found/without-" + f.id + ".yaml";
      if (std::filesystem::exists(path)) {
        if (std::optional<Scenario> s = load_scenario_or_print(path); s && s->seed) {
          r.counterexample = path;
          r.seed = *s->seed;
          r.property = s->expect.failing.empty() ? "" : s->expect.failing.front();
          r.replay_command = "faultline replay " + path + " (--with-fixes)";
          runs.push_back(Job{records.size(), false, *s});
          Scenario with = *s;
          with.without.clear();
          with.expect = Expectation{};
          runs.push_back(Job{records.size(), true, with});
        }
      }
      records.push_back(std::move(r));
    }
  }
  const std::vector<WorkerOutcome> out = run_in_workers(
      runs.size(), [&](size_t i) { return run_scenario(runs[i].scenario, *runs[i].scenario.seed, RunOptions{}); }, jobs,
      timeout);
  for (const WorkerOutcome& w : out) {
    const Job& job = runs[w.job];
    reports::FixRecord& r = records[job.fix];
    const RunResult& res = w.result;
    if (job.with_fix) {
      r.passes_with = res.error.empty() && res.all_passed;
    } else {
      const auto& fp = job.scenario.expect.fingerprint;
      r.fingerprint = res.fingerprint;
      r.fails_without = res.as_expected && (!fp || *fp == res.fingerprint);
    }
  }
  return records;
}

}  // namespace fl
