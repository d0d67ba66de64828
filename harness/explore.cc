#include "harness/explore.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <utility>

#include "harness/faults.h"
#include "harness/system.h"
#include "sim/rng.h"
#include "sim/world.h"
#include "impl/ports/assert.h"

namespace fl {

namespace {

using WallClock = std::chrono::steady_clock;

struct Schedule {
  uint64_t seed = 0;
  std::vector<FaultSpec> faults;
};

// What a mutation may target: the system's processes by role, its critical durations.
struct Targets {
  std::vector<std::string> services;  // replicas, workers, gateways: they make the calls
  std::vector<std::string> every;     // and the stores
  std::vector<int64_t> durations_ms;  // pause_durations_ms of the critical durations
};

Targets read_targets(const Scenario& s) {
  Targets t;
  RunOptions probe;
  probe.judges = false;
  probe.inspect = [&t](sim::World&, const SystemRun& run) {
    for (const char* role : {"replica", "worker", "gateway"}) {
      for (const std::string& p : run.fault_targets(role)) t.services.push_back(p);
    }
    t.every = t.services;
    for (const char* role : {"redis", "db", "log"}) {
      for (const std::string& p : run.fault_targets(role)) t.every.push_back(p);
    }
  };
  Scenario quiet = s;
  quiet.duration_ms = 1;
  quiet.quiescent_tail_ms = 0;
  run_scenario(quiet, 1, probe);
  const SystemUnderTest* sys = find_system(s.system);
  t.durations_ms = pause_durations_ms(sys ? sys->critical_durations(s) : std::vector<CriticalDuration>{});
  return t;
}

const std::string& pick(sim::Rng& rng, const std::vector<std::string>& from) {
  FL_ASSERT(!from.empty());
  return from[rng.below(from.size())];
}

// One new fault, as the swarm would draw it, clustered on the boundaries and durations that matter.
FaultSpec new_fault(sim::Rng& rng, const Targets& t, int64_t duration_ms) {
  FaultSpec f;
  f.at_ms = rng.between(0, std::max<int64_t>(duration_ms - 1, 0));
  const int64_t d = t.durations_ms[rng.below(t.durations_ms.size())];
  switch (rng.below(6)) {
    case 0:
    case 1:  // the explorer's own: between two effects of one process
      f.kind = "pause-at-boundary";
      f.target = pick(rng, t.services);
      f.duration_ms = d;
      f.value = rng.chance(0.5) ? 0 : 1;
      break;
    case 2:
      f.kind = "pause";
      f.target = pick(rng, t.every);
      f.duration_ms = d;
      break;
    case 3:
      f.kind = "crash-restart";
      f.target = pick(rng, t.every);
      f.duration_ms = d;
      break;
    case 4:
      f.kind = "clog";
      f.target = pick(rng, t.every) + "|" + pick(rng, t.every);
      f.duration_ms = d;
      break;
    default:
      f.kind = "reset";
      f.target = pick(rng, t.services);
      break;
  }
  if (f.kind == "clog" && f.target.substr(0, f.target.find('|')) == f.target.substr(f.target.find('|') + 1)) {
    f.target = f.target.substr(0, f.target.find('|'));  // a node clogged towards every other
  }
  return f;
}

bool timed(const FaultSpec& f) {
  return f.kind == "pause" || f.kind == "pause-at-boundary" || f.kind == "crash-restart" || f.kind == "clog" ||
         f.kind == "partition" || f.kind == "partition-oneway";
}

void mutate_once(sim::Rng& rng, Schedule& s, const Schedule& other, const Targets& t, int64_t duration_ms) {
  std::vector<FaultSpec>& f = s.faults;
  const uint64_t op = f.empty() ? 4 : rng.below(9);
  const size_t i = f.empty() ? 0 : rng.below(f.size());
  switch (op) {
    case 0:  // shift in time
      f[i].at_ms = std::clamp<int64_t>(f[i].at_ms + rng.between(-2000, 2000), 0, duration_ms);
      break;
    case 1:  // retarget (a link keeps its shape)
      if (f[i].target.find('|') == std::string::npos && !f[i].target.empty()) {
        f[i].target = pick(rng, f[i].kind == "pause-at-boundary" || f[i].kind == "reset" ? t.services : t.every);
      }
      break;
    case 2:  // stretch or shrink to a critical duration
      if (timed(f[i])) f[i].duration_ms = t.durations_ms[rng.below(t.durations_ms.size())];
      break;
    case 3:  // drop
      f.erase(f.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    case 4:
    case 5:  // add, mostly pauses between two effects
      f.push_back(new_fault(rng, t, duration_ms));
      break;
    case 6: {  // splice: this one's faults before a cut, the other's after it
      const int64_t cut = rng.between(0, duration_ms);
      std::vector<FaultSpec> spliced;
      for (const FaultSpec& x : f)
        if (x.at_ms < cut) spliced.push_back(x);
      for (const FaultSpec& x : other.faults)
        if (x.at_ms >= cut) spliced.push_back(x);
      f = std::move(spliced);
      break;
    }
    case 7:  // the other side of the boundary
      if (f[i].kind == "pause-at-boundary")
        f[i].value = 1 - f[i].value;
      else
        f[i].at_ms = std::clamp<int64_t>(f[i].at_ms + rng.between(-50, 50), 0, duration_ms);
      break;
    default:  // another workload under the same faults
      s.seed = rng.next_u64() % 1'000'000'000 + 1;
      break;
  }
}

Schedule mutate(sim::Rng& rng, const std::vector<Schedule>& corpus, const Targets& t, int64_t duration_ms) {
  Schedule s = corpus[rng.below(corpus.size())];
  const Schedule& other = corpus[rng.below(corpus.size())];
  const uint64_t rounds = 1 + rng.below(3);
  for (uint64_t k = 0; k < rounds; ++k) mutate_once(rng, s, other, t, duration_ms);
  return s;
}

}  // namespace

Scenario schedule_scenario(const Scenario& s, std::vector<FaultSpec> faults) {
  Scenario out = s;
  out.swarm.faults_per_s = 0;  // enabled still: the clients' patience is drawn as before
  std::vector<FaultSpec> all = s.faults;
  all.insert(all.end(), faults.begin(), faults.end());
  std::stable_sort(all.begin(), all.end(), [](const FaultSpec& a, const FaultSpec& b) { return a.at_ms < b.at_ms; });
  out.faults = std::move(all);
  return out;
}

ExploreResult explore(const Scenario& s, const ExploreOptions& o, const ExploreProgress& progress) {
  const auto start = WallClock::now();
  ExploreResult r;
  sim::Rng rng = sim::Rng(o.seed).fork("explore");
  const Targets targets = read_targets(s);
  std::vector<Schedule> corpus;
  std::set<uint64_t> seen;
  std::set<std::string> broken;
  const size_t batch = std::max<size_t>(o.batch, 1);
  while (r.outcomes.size() < o.budget) {
    const bool first = r.outcomes.empty() || corpus.empty();
    const size_t n = std::min<size_t>(batch, o.budget - r.outcomes.size());
    std::vector<Schedule> candidates;
    for (size_t k = 0; k < n; ++k) {
      candidates.push_back(first ? Schedule{rng.next_u64() % 1'000'000'000 + 1, {}}
                                 : mutate(rng, corpus, targets, s.duration_ms));
    }
    const auto round_start = WallClock::now();
    std::vector<WorkerOutcome> out = run_in_workers(
        candidates.size(),
        [&](size_t job) {
          RunOptions ro;
          ro.coverage = true;
          const Schedule& c = candidates[job];
          return run_scenario(first ? s : schedule_scenario(s, c.faults), c.seed, ro);
        },
        o.jobs, o.timeout);
    r.in_runs_seconds += std::chrono::duration<double>(WallClock::now() - round_start).count();
    for (size_t k = 0; k < out.size(); ++k) {
      Schedule c = candidates[k];
      if (first) c.faults = out[k].result.applied_faults;  // the swarm's draws, written out
      size_t fresh = 0;
      for (uint64_t feature : out[k].result.coverage) fresh += seen.insert(feature).second ? 1 : 0;
      if (fresh > 0) corpus.push_back(c);
      for (const std::string& prop : failed_properties(out[k].result)) {
        if (!broken.insert(prop).second) continue;
        Scenario pinned = schedule_scenario(s, c.faults);
        pinned.seed = c.seed;
        pinned.expect = Expectation{.pass = false, .failing = {prop}};
        r.findings.push_back(ExploreFinding{prop, pinned, r.outcomes.size() + k + 1});
      }
    }
    for (WorkerOutcome& w : out) r.outcomes.push_back(std::move(w));
    r.series.push_back(reports::CoverageSample{static_cast<int64_t>(r.outcomes.size()),
                                               static_cast<int64_t>(seen.size()), static_cast<int64_t>(corpus.size()),
                                               static_cast<int64_t>(r.findings.size())});
    if (progress) progress(r.series.back());
  }
  r.corpus = corpus.size();
  r.features = seen.size();
  r.wall_seconds = std::chrono::duration<double>(WallClock::now() - start).count();
  return r;
}

}  // namespace fl
