#include "harness/faults.h"

#include <algorithm>
#include <functional>

#include "harness/params.h"
#include "sim/world.h"
#include "impl/ports/assert.h"

namespace fl {

namespace {

constexpr int64_t kUsPerMs = 1000;

std::pair<std::string, std::string> split_pair(const std::string& target) {
  const size_t bar = target.find('|');
  if (bar == std::string::npos) return {target, ""};
  return {target.substr(0, bar), target.substr(bar + 1)};
}

}  // namespace

const std::vector<std::string>& swarm_fault_kinds() {
  static const std::vector<std::string> kinds = {"crash-restart", "pause",       "partition",   "clog",
                                                 "reset",         "clock-jump",  "clock-drift", "redis-restart",
                                                 "db-restart",    "sql-io-error"};
  return kinds;
}

const std::vector<std::string>& scheduled_fault_kinds() {
  static const std::vector<std::string> kinds = {
      "crash",     "restart",       "crash-restart", "pause",          "partition",      "partition-oneway",
      "heal",      "clog",          "reset",         "clock-jump",     "clock-drift",    "sql-io-error",
      "redis-oom", "redis-loading", "redis-busy",    "redis-readonly", "late-duplicate", "pause-at-boundary"};
  return kinds;
}

const std::vector<std::string>& at_least_once_fault_kinds() {
  static const std::vector<std::string> kinds = {"late-duplicate"};
  return kinds;
}

const std::vector<std::string>& redis_error_fault_kinds() {
  static const std::vector<std::string> kinds = {"redis-oom", "redis-loading", "redis-busy", "redis-readonly"};
  return kinds;
}

const std::vector<std::string>& boundary_fault_kinds() {
  static const std::vector<std::string> kinds = {"pause-at-boundary"};
  return kinds;
}

std::vector<std::string> accepted_swarm_fault_kinds() {
  std::vector<std::string> kinds = swarm_fault_kinds();
  for (const std::string& k : boundary_fault_kinds()) kinds.push_back(k);
  for (const std::string& k : redis_error_fault_kinds()) kinds.push_back(k);
  for (const std::string& k : at_least_once_fault_kinds()) kinds.push_back(k);
  return kinds;
}

const std::vector<std::string>& system_fault_kinds() {
  static const std::vector<std::string> kinds = {"sql-io-error"};
  return kinds;
}

namespace {

Scenario with_patience(const Scenario& s, const SystemUnderTest& sys,
                       const std::function<int64_t(const PatienceParam&)>& value, std::string* drawn) {
  Scenario out = s;
  for (const PatienceParam& p : sys.patience(s)) {
    const int64_t v = value(p);
    out.params[p.param] = std::to_string(v);
    if (drawn) *drawn += (drawn->empty() ? "" : " ") + p.param + "=" + std::to_string(v);
  }
  out.config = resolve_params(sys.params(), out);
  return out;
}

}  // namespace

Scenario draw_patience(const Scenario& s, const SystemUnderTest& sys, sim::Rng rng, std::string* drawn) {
  if (!s.swarm.enabled || !s.swarm.patience) return s;
  return with_patience(
      s, sys,
      [&rng](const PatienceParam& p) {
        // Half the draws less patient than the server's budget, half more (never equal: each side
        // of the budget is what a run tests).
        const bool shorter = rng.chance(0.5);
        const int64_t lo = shorter ? p.min : std::min(p.budget + 1, p.max);
        const int64_t hi = shorter ? std::max(p.budget - 1, p.min) : p.max;
        return rng.between(lo, std::max(lo, hi));
      },
      drawn);
}

Scenario most_patient(const Scenario& s, const SystemUnderTest& sys) {
  return with_patience(
      s, sys, [](const PatienceParam& p) { return p.max; }, nullptr);
}

FaultInjector::FaultInjector(sim::World& world, SystemRun& run, const Scenario& scenario,
                             std::vector<CriticalDuration> critical)
    : world_(world), run_(run), scenario_(scenario), critical_(std::move(critical)), rng_(world.stream("faults")) {}

sim::Process* FaultInjector::process(const std::string& name) const { return world_.find_process(name); }

bool FaultInjector::node_of(const std::string& name, uint32_t* node) const {
  if (auto n = world_.find_node(name)) {
    *node = *n;
    return true;
  }
  if (sim::Process* p = process(name)) {
    *node = p->node();
    return true;
  }
  return false;
}

void FaultInjector::later(int64_t delay_us, std::function<void()> fn) {
  if (applying_extra_) {
    world_.inject_at(world_.now_us() + delay_us, std::move(fn));
  } else {
    world_.after(delay_us, std::move(fn));
  }
}

void FaultInjector::apply_extra(const FaultSpec& f) {
  applying_extra_ = true;
  apply(f);
  applying_extra_ = false;
}

void FaultInjector::apply(const FaultSpec& f) {
  const int64_t duration_us = f.duration_ms * kUsPerMs;
  sim::Process* p = process(f.target);
  uint32_t node = 0;
  const auto& own = system_fault_kinds();
  if (std::find(own.begin(), own.end(), f.kind) != own.end()) {
    if (!run_.apply_fault(f))
      world_.note_fault(f.target, "ignored fault " + f.kind + " (the system has no such target)");
    return;
  }
  const auto& redis_errors = redis_error_fault_kinds();
  if (std::find(redis_errors.begin(), redis_errors.end(), f.kind) != redis_errors.end()) {
    // The Redis node refuses commands for the duration (sim/redis/server.h), then recovers.
    if (!world_.apply_component_fault(f.target, f.kind, std::max<int64_t>(duration_us, 1), f.value)) {
      world_.note_fault(f.target, "ignored fault " + f.kind + " (no simulated Redis there)");
    }
    return;
  }
  if (f.kind == "crash" && p) {
    world_.crash(*p, "fault");
  } else if (f.kind == "restart" && p) {
    world_.restart(*p);
  } else if (f.kind == "crash-restart" && p) {
    world_.crash(*p, "fault");
    const uint32_t incarnation = p->incarnation();
    later(std::max<int64_t>(duration_us, 1), [this, p, incarnation] {
      if (!p->alive() && p->incarnation() == incarnation) world_.restart(*p);
    });
  } else if (f.kind == "pause" && p) {
    world_.pause(*p, duration_us);
  } else if (f.kind == "pause-at-boundary" && p) {
    // Between two of its own effects: right before its next call (value 0) or right after that
    // call's reply (value 1), for the duration, while everything else runs.
    world_.arm_boundary_pause(*p, f.value == 0, duration_us);
  } else if (f.kind == "late-duplicate" && p) {
    // The at-least-once transport re-sends each request `p` sends in the window, value ms late;
    // the window ends with the active phase at the latest (the quiet tail has no faults).
    const int64_t active_end_us = sim::kEpochUs + scenario_.duration_ms * kUsPerMs;
    world_.network().late_duplicates(*p, std::max<int64_t>(f.value, 1) * kUsPerMs,
                                     std::min(world_.now_us() + std::max<int64_t>(duration_us, 1), active_end_us));
  } else if (f.kind == "reset" && p) {
    world_.network().reset_connections(*p);
  } else if ((f.kind == "clock-jump" || f.kind == "clock-drift") && node_of(f.target, &node)) {
    if (f.kind == "clock-jump")
      world_.clock_jump(node, f.value * kUsPerMs);
    else
      world_.set_clock_drift(node, f.value);
  } else if (f.kind == "heal" && f.target.empty()) {
    world_.network().heal_all();
  } else if (f.kind == "partition" || f.kind == "partition-oneway" || f.kind == "clog" || f.kind == "heal") {
    auto [a, b] = split_pair(f.target);
    uint32_t na = 0, nb = 0;
    if (!node_of(a, &na)) return world_.note_fault(f.target, "unknown target for " + f.kind);
    std::vector<uint32_t> others;
    if (!b.empty()) {
      if (!node_of(b, &nb)) return world_.note_fault(f.target, "unknown target for " + f.kind);
      others.push_back(nb);
    } else {
      // A single node: isolate it from every other node.
      for (const sim::Node& n : world_.nodes())
        if (n.index != na) others.push_back(n.index);
    }
    for (uint32_t other : others) {
      if (f.kind == "heal")
        world_.network().heal(na, other);
      else if (f.kind == "clog")
        world_.network().clog(na, other, duration_us);
      else
        world_.network().partition(na, other, f.kind == "partition-oneway");
    }
    if ((f.kind == "partition" || f.kind == "partition-oneway") && duration_us > 0) {
      later(duration_us, [this, na, others] {
        for (uint32_t other : others) world_.network().heal(na, other);
      });
    }
  } else {
    world_.note_fault(f.target, "ignored fault " + f.kind + " (no such target)");
  }
}

void FaultInjector::schedule_all() {
  for (const FaultSpec& f : scenario_.faults) {
    world_.at(sim::kEpochUs + f.at_ms * kUsPerMs, [this, f] { apply(f); });
    scheduled_.push_back(f);
  }
  if (scenario_.swarm.enabled) schedule_swarm();
  // Heal at the end of the fault window so the quiescent tail can judge liveness.
  world_.at(sim::kEpochUs + scenario_.duration_ms * kUsPerMs, [this] { heal_everything(); });
  // Last, and on their own tie-break stream: adding them reorders nothing (Scenario::extra_faults).
  for (const FaultSpec& f : scenario_.extra_faults) {
    world_.inject_at(sim::kEpochUs + f.at_ms * kUsPerMs, [this, f] { apply_extra(f); });
    scheduled_.push_back(f);
  }
}

std::vector<std::string> FaultInjector::every_process() const {
  std::vector<std::string> targets = service_targets();
  for (const char* role : {"redis", "db"}) {
    for (const std::string& t : run_.fault_targets(role)) targets.push_back(t);
  }
  return targets;
}

std::vector<std::string> FaultInjector::service_targets() const {
  std::vector<std::string> targets;
  for (const char* role : {"replica", "worker", "gateway"}) {
    for (const std::string& t : run_.fault_targets(role)) targets.push_back(t);
  }
  return targets;
}

int64_t FaultInjector::draw_duration_ms(int64_t max_ms) {
  FL_ASSERT(max_ms > 0);
  if (scenario_.swarm.timing_aware && !critical_.empty() && rng_.chance(0.5)) {
    // Just below or just above a critical duration (within 10%, at least 1 ms).
    const CriticalDuration& c = critical_[rng_.below(critical_.size())];
    const int64_t d_ms = std::max<int64_t>(c.duration_us / kUsPerMs, 1);
    const int64_t spread_ms = std::max<int64_t>(d_ms / 10, 1);
    const int64_t drawn = rng_.chance(0.5) ? d_ms - rng_.between(1, spread_ms) : d_ms + rng_.between(1, spread_ms);
    return std::max<int64_t>(drawn, 1);
  }
  return rng_.between(1, max_ms);
}

FaultSpec FaultInjector::draw_fault(const std::string& kind, int64_t at_ms) {
  FaultSpec f;
  f.at_ms = at_ms;
  f.kind = kind;
  const SwarmSpec& sw = scenario_.swarm;
  auto pick = [this](const std::vector<std::string>& from) {
    return from.empty() ? std::string() : from[rng_.below(from.size())];
  };
  const std::vector<std::string> services = service_targets();
  if (kind == "redis-restart" || kind == "db-restart") {
    f.kind = "crash-restart";
    f.target = pick(run_.fault_targets(kind == "redis-restart" ? "redis" : "db"));
    f.duration_ms = rng_.between(1, std::max<int64_t>(sw.max_downtime_ms, 1));
  } else if (kind == "crash-restart") {
    f.target = pick(services);
    f.duration_ms = draw_duration_ms(std::max<int64_t>(sw.max_downtime_ms, 1));
  } else if (kind == "pause") {
    f.target = pick(every_process());  // a GC pause or SIGSTOP can hit Redis and the DB too
    f.duration_ms = draw_duration_ms(std::max<int64_t>(sw.max_pause_ms, 1));
  } else if (kind == "partition" || kind == "clog") {
    std::vector<std::string> all = services;
    for (const char* role : {"redis", "db"})
      for (const std::string& t : run_.fault_targets(role)) all.push_back(t);
    f.target = pick(all);
    const std::string other = pick(all);
    if (!other.empty() && other != f.target && rng_.chance(0.5)) f.target += "|" + other;
    f.duration_ms = draw_duration_ms(std::max<int64_t>(sw.max_downtime_ms, 1));
  } else if (kind == "pause-at-boundary") {
    f.target = pick(services);  // the processes that make calls: a boundary is between two of them
    f.duration_ms = draw_duration_ms(std::max<int64_t>(sw.max_pause_ms, 1));
    f.value = rng_.chance(0.5) ? 0 : 1;  // before its next call, or after that call's reply
  } else if (kind == "reset") {
    f.target = pick(services);
  } else if (kind == "clock-jump") {
    f.target = pick(every_process());  // Redis's clock times TTLs, the DB's may stamp versions
    const int64_t magnitude = draw_duration_ms(std::max<int64_t>(sw.max_clock_jump_ms, 1));
    f.value = rng_.chance(0.5) ? magnitude : -magnitude;
  } else if (kind == "clock-drift") {
    f.target = pick(every_process());
    f.value = rng_.between(-500, 500);  // ppm, as bad NTP-less clocks do
  } else if (kind.rfind("redis-", 0) == 0 && kind != "redis-restart") {
    // An error-reply window on the Redis node: as long as a downtime (a loading data set, a
    // script running past its time limit, a failover, a full memory).
    f.target = pick(run_.fault_targets("redis"));
    f.duration_ms = draw_duration_ms(std::max<int64_t>(sw.max_downtime_ms, 1));
  } else if (kind == "late-duplicate") {
    // A client's requests are re-sent for a while, each copy arriving late by a drawn interval:
    // clustered around the system's critical durations (a copy landing just after the window
    // closed, the lock or the dedup record expired) or anywhere up to max_downtime_ms.
    f.target = pick(run_.fault_targets("client"));
    f.duration_ms = draw_duration_ms(std::max<int64_t>(sw.max_downtime_ms, 1));
    f.value = draw_duration_ms(std::max<int64_t>(sw.max_downtime_ms, 1));
  } else if (kind == "sql-io-error") {
    f.target = pick(run_.fault_targets("db"));
    f.value = rng_.between(1, 3);  // this many I/O calls of the DB fail (SQLITE_IOERR)
  }
  return f;
}

void FaultInjector::schedule_swarm() {
  const SwarmSpec& sw = scenario_.swarm;
  std::vector<std::string> candidates = sw.kinds.empty() ? swarm_fault_kinds() : sw.kinds;
  // Swarm testing: each kind is on with probability 1/2 in this run (at least one is on).
  std::vector<std::string> on;
  for (const std::string& k : candidates) {
    if (rng_.chance(0.5)) on.push_back(k);
  }
  if (on.empty() && !candidates.empty()) on.push_back(candidates[rng_.below(candidates.size())]);
  if (on.empty()) return;
  const double rate_per_s = sw.faults_per_s * (0.25 + 1.5 * rng_.unit());  // drawn per run
  swarm_summary_ = "rate=" + std::to_string(rate_per_s).substr(0, 5) + "/s kinds=";
  for (size_t i = 0; i < on.size(); ++i) swarm_summary_ += (i ? "," : "") + on[i];
  world_.note_fault("", "swarm " + swarm_summary_);
  if (rate_per_s <= 0) return;
  const double mean_gap_ms = 1000.0 / rate_per_s;
  for (int64_t at_ms = rng_.exponential(mean_gap_ms); at_ms < scenario_.duration_ms;
       at_ms += 1 + rng_.exponential(mean_gap_ms)) {
    FaultSpec f = draw_fault(on[rng_.below(on.size())], at_ms);
    if (f.target.empty()) continue;
    world_.at(sim::kEpochUs + at_ms * kUsPerMs, [this, f] { apply(f); });
    scheduled_.push_back(f);
  }
}

void FaultInjector::heal_everything() {
  world_.network().heal_all();
  for (size_t i = 0; i < world_.process_count(); ++i) {
    sim::Process& p = world_.process(static_cast<uint32_t>(i));
    if (p.state() == sim::ProcessState::kCrashed) world_.restart(p);
  }
  world_.note_fault("", "end of fault window: healed");
}

}  // namespace fl
