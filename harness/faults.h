// Fault injection for a run: the scenario's scheduled faults and its random ("swarm") faults,
// applied to the targets a system names by role.
//
// Swarm (after TigerBeetle's VOPR options_swarm and FoundationDB's BUGGIFY): each run draws from
// the seed which fault kinds are on and at what rate, so different seeds test different mixes.
// Timing-aware: pause lengths, clock jumps and downtimes are drawn half uniformly and half
// clustered just below or just above the system's critical durations (TTLs, windows, leases), so
// a stale worker wakes up exactly when its lease or TTL has just passed.
// At the end of the fault window every fault is healed (links healed, crashed processes
// restarted, paused ones resumed on their own), so liveness is judged after a quiet tail.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/scenario.h"
#include "harness/system.h"
#include "sim/rng.h"

namespace fl::sim {
class World;
class Process;
}  // namespace fl::sim

namespace fl {

// The fault kinds the swarm knows.
const std::vector<std::string>& swarm_fault_kinds();
// The fault kinds a scheduled FaultSpec may name.
const std::vector<std::string>& scheduled_fault_kinds();
// The kinds the system applies itself (SystemRun::apply_fault): in both lists above.
const std::vector<std::string>& system_fault_kinds();
// The simulated Redis's error replies ("redis-oom", "redis-loading", "redis-busy",
// "redis-readonly"): scheduled kinds, and swarm kinds a scenario opts into by naming them in
// `swarm.kinds` (they are not in the default swarm mix, so existing scenarios draw as before).
const std::vector<std::string>& redis_error_fault_kinds();
// Faults an at-least-once transport makes ("late-duplicate": a client's requests delivered again,
// late). Only a scenario that declares `network.at_least_once: true` may schedule them or name
// them in `swarm.kinds` (opt-in, never in the default mix).
const std::vector<std::string>& at_least_once_fault_kinds();
// Pauses between two of a process's own effects ("pause-at-boundary": right before its next call,
// value 0, or right after that call's reply, value 1, for duration_ms): scheduled kinds, and swarm
// kinds a scenario opts into by naming them in `swarm.kinds` (not in the default mix).
const std::vector<std::string>& boundary_fault_kinds();
// Every name `swarm.kinds` accepts: swarm_fault_kinds(), boundary_fault_kinds(),
// redis_error_fault_kinds() and at_least_once_fault_kinds().
std::vector<std::string> accepted_swarm_fault_kinds();

// Clients with patience (issue 16, `swarm.patience: true`): `s` with each of the system's
// patience params (SystemUnderTest::patience) drawn from `rng`, half below and half above the
// server's internal budget, typed config re-resolved. `drawn` (if given) says what was drawn,
// e.g. "client_timeout_ms=1412 max_retries=4". Without patience, `s` unchanged.
Scenario draw_patience(const Scenario& s, const SystemUnderTest& sys, sim::Rng rng, std::string* drawn = nullptr);
// `s` with every patience param at its maximum: the loader checks the quiet tail against it.
Scenario most_patient(const Scenario& s, const SystemUnderTest& sys);

class FaultInjector {
 public:
  FaultInjector(sim::World& world, SystemRun& run, const Scenario& scenario, std::vector<CriticalDuration> critical);

  // Schedules every fault of the scenario, the swarm's draws, and the final healing.
  void schedule_all();
  // Applies one fault now (also used by tests). Unknown targets are ignored with a trace note.
  void apply(const FaultSpec& fault);
  // apply() of one of the scenario's extra_faults: what it schedules (a restart, a heal) goes on the
  // injected tie-break stream too (sim::World::inject_at).
  void apply_extra(const FaultSpec& fault);
  // The swarm's drawn configuration, for the report ("crash-restart@0.4/s pause@0.2/s").
  const std::string& swarm_summary() const { return swarm_summary_; }
  // Every fault schedule_all() scheduled (the scenario's, then the swarm's draws, then the extra
  // ones), as scheduled faults: a swarm run written out.
  const std::vector<FaultSpec>& scheduled() const { return scheduled_; }

 private:
  void schedule_swarm();
  FaultSpec draw_fault(const std::string& kind, int64_t at_ms);
  int64_t draw_duration_ms(int64_t max_ms);
  std::vector<std::string> service_targets() const;
  std::vector<std::string> every_process() const;  // services plus the Redis and DB processes
  void heal_everything();
  // Schedules `fn` delay_us from now: on the injected stream while an extra fault is applied.
  void later(int64_t delay_us, std::function<void()> fn);
  sim::Process* process(const std::string& name) const;
  bool node_of(const std::string& name, uint32_t* node) const;

  sim::World& world_;
  SystemRun& run_;
  const Scenario& scenario_;
  std::vector<CriticalDuration> critical_;
  sim::Rng rng_;
  std::string swarm_summary_;
  std::vector<FaultSpec> scheduled_;
  bool applying_extra_ = false;
};

}  // namespace fl
