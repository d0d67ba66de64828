#include "harness/shrink.h"

#include <algorithm>
#include <cmath>

#include "harness/faults.h"
#include "harness/sweep.h"

namespace fl {
namespace {

bool fails_with(const RunResult& r, const std::string& property) {
  const std::vector<std::string> failed = failed_properties(r);
  return std::find(failed.begin(), failed.end(), property) != failed.end();
}

std::string pick_property(const Scenario& s, const RunResult& r, const std::string& wanted) {
  if (!wanted.empty()) return fails_with(r, wanted) ? wanted : "";
  const std::vector<std::string> failed = failed_properties(r);
  if (failed.empty()) return "";
  for (const std::string& p : s.expect.failing) {
    if (fails_with(r, p)) return p;
  }
  return failed[0];
}

// Faults beyond the (new) active phase are dropped so the candidate stays a valid scenario.
void clamp_faults(Scenario& s) {
  s.faults.erase(
      std::remove_if(s.faults.begin(), s.faults.end(), [&](const FaultSpec& f) { return f.at_ms > s.duration_ms; }),
      s.faults.end());
}

// Never below the system's declared minimum either: a shorter tail would not load.
int64_t quiescent_tail_floor_ms(const Scenario& s) {
  int64_t longest_us = 0;
  int64_t declared_ms = 0;
  if (const SystemUnderTest* sys = find_system(s.system)) {
    for (const CriticalDuration& c : sys->critical_durations(s)) longest_us = std::max(longest_us, c.duration_us);
    // With drawn patience, the most patient draw's tail (what the loader checks).
    declared_ms = sys->min_quiet_tail_ms(s.swarm.enabled && s.swarm.patience ? most_patient(s, *sys) : s);
  }
  return std::max(2 * (longest_us / 1000) + 1000, declared_ms);
}

// Candidate reductions of `s`, most aggressive first.
std::vector<Scenario> candidates(const Scenario& s) {
  std::vector<Scenario> out;
  auto with = [&](auto change) {
    Scenario c = s;
    change(c);
    clamp_faults(c);
    if (!(c == s)) out.push_back(std::move(c));
  };
  const size_t nf = s.faults.size();
  if (nf > 1) {
    with([&](Scenario& c) { c.faults.erase(c.faults.begin() + static_cast<long>(nf / 2), c.faults.end()); });
    with([&](Scenario& c) { c.faults.erase(c.faults.begin(), c.faults.begin() + static_cast<long>(nf / 2)); });
  }
  for (size_t i = 0; i < nf; ++i) {
    with([&](Scenario& c) { c.faults.erase(c.faults.begin() + static_cast<long>(i)); });
  }
  if (s.swarm.enabled) {
    with([](Scenario& c) { c.swarm.enabled = false; });
    if (s.swarm.kinds.size() != 1) {
      // Narrow to one kind at a time (an empty list means "all": try the usual suspects).
      std::vector<std::string> kinds = s.swarm.kinds;
      if (kinds.empty()) kinds = swarm_fault_kinds();
      for (const std::string& k : kinds) with([&](Scenario& c) { c.swarm.kinds = {k}; });
    }
    with([](Scenario& c) { c.swarm.faults_per_s = std::floor(c.swarm.faults_per_s * 50) / 100; });
  }
  for (size_t i = 0; s.workload.size() > 1 && i < s.workload.size(); ++i) {
    with([&](Scenario& c) { c.workload.erase(c.workload.begin() + static_cast<long>(i)); });
  }
  for (size_t i = 0; i < s.workload.size(); ++i) {
    with([&](Scenario& c) { c.workload[i].rate_per_s = std::floor(c.workload[i].rate_per_s * 50) / 100; });
  }
  if (s.topology.clients > 1) {
    with([](Scenario& c) { c.topology.clients = 1; });
    with([](Scenario& c) { c.topology.clients /= 2; });
    with([](Scenario& c) { c.topology.clients -= 1; });
  }
  if (s.topology.workers > 0) with([](Scenario& c) { c.topology.workers -= 1; });
  if (s.topology.replicas > 1) with([](Scenario& c) { c.topology.replicas -= 1; });
  if (s.duration_ms > 100) {
    with([](Scenario& c) { c.duration_ms /= 2; });
    with([](Scenario& c) { c.duration_ms -= c.duration_ms / 4; });
  }
  // Liveness is judged after the quiet tail: never shrink it below what the system needs to
  // recover (twice its longest critical duration plus a second), or a cut tail would turn into a
  // false liveness failure.
  const int64_t floor_ms = std::min(s.quiescent_tail_ms, quiescent_tail_floor_ms(s));
  if (s.quiescent_tail_ms > floor_ms) {
    with([floor_ms](Scenario& c) { c.quiescent_tail_ms = std::max(floor_ms, c.quiescent_tail_ms / 2); });
  }
  with([](Scenario& c) {
    c.network.drop_probability = 0;
    c.network.duplicate_probability = 0;
    c.network.reorder_probability = 0;
  });
  with([](Scenario& c) { c.storage.io_error_probability = 0; });
  return out;
}

void change(std::string& out, const char* what, double before, double after) {
  if (before == after) return;
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s%s %g -> %g", out.empty() ? "" : ", ", what, before, after);
  out += buf;
}

double total_rate(const Scenario& s) {
  double r = 0;
  for (const WorkloadSpec& w : s.workload) r += w.rate_per_s;
  return r;
}

}  // namespace

std::string shrink_summary(const Scenario& a, const Scenario& b) {
  std::string out;
  change(out, "faults", static_cast<double>(a.faults.size()), static_cast<double>(b.faults.size()));
  change(out, "swarm", a.swarm.enabled, b.swarm.enabled);
  change(out, "swarm kinds", static_cast<double>(a.swarm.kinds.size()), static_cast<double>(b.swarm.kinds.size()));
  change(out, "swarm faults_per_s", a.swarm.faults_per_s, b.swarm.faults_per_s);
  change(out, "workload generators", static_cast<double>(a.workload.size()), static_cast<double>(b.workload.size()));
  change(out, "total rate_per_s", total_rate(a), total_rate(b));
  change(out, "clients", a.topology.clients, b.topology.clients);
  change(out, "workers", a.topology.workers, b.topology.workers);
  change(out, "replicas", a.topology.replicas, b.topology.replicas);
  change(out, "duration_ms", static_cast<double>(a.duration_ms), static_cast<double>(b.duration_ms));
  change(out, "quiescent_tail_ms", static_cast<double>(a.quiescent_tail_ms), static_cast<double>(b.quiescent_tail_ms));
  change(out, "drop_probability", a.network.drop_probability, b.network.drop_probability);
  change(out, "duplicate_probability", a.network.duplicate_probability, b.network.duplicate_probability);
  return out.empty() ? "nothing could be removed" : out;
}

ShrinkResult shrink_failure(const Scenario& s, uint64_t seed, const ScenarioRunFn& run, int max_runs,
                            const std::string& property) {
  ShrinkResult res;
  res.minimal = s;
  res.minimal_run = run(s, seed);
  res.runs = 1;
  res.property = pick_property(s, res.minimal_run, property);
  if (res.property.empty()) {
    res.summary = "the scenario does not fail with seed " + std::to_string(seed);
    return res;
  }
  res.reproduced = true;
  bool progress = true;
  while (progress && res.runs < max_runs) {
    progress = false;
    for (Scenario& c : candidates(res.minimal)) {
      if (res.runs >= max_runs) break;
      RunResult r = run(c, seed);
      ++res.runs;
      if (!fails_with(r, res.property)) continue;
      res.minimal = std::move(c);
      res.minimal_run = std::move(r);
      ++res.accepted;
      progress = true;
      break;  // restart from the most aggressive reduction of the smaller scenario
    }
  }
  res.minimal.seed = seed;
  res.minimal.expect.pass = false;
  res.minimal.expect.failing.clear();
  res.minimal.expect.any = false;
  if (res.property != "<error>") res.minimal.expect.failing.push_back(res.property);
  if (!res.minimal.expect.failing.empty() && !res.minimal.properties.empty() &&
      std::find(res.minimal.properties.begin(), res.minimal.properties.end(), res.property) ==
          res.minimal.properties.end()) {
    res.minimal.properties.push_back(res.property);
  }
  if (res.minimal_run.error.empty()) res.minimal.expect.fingerprint = res.minimal_run.fingerprint;
  res.summary = shrink_summary(s, res.minimal);
  return res;
}

}  // namespace fl
