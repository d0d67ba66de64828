// SystemUnderTest: what a seed system (or the kernel demo) offers the harness.
//
// The harness knows systems only through this interface and the registry below: the scenario
// loader validates names against it, the runner builds a world with it, the reports map its
// properties to invariant ids and matrix rows.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario.h"
#include "impl/ports/fixes.h"
#include "impl/ports/redis_script.h"
#include "properties/verdict.h"

namespace fl::sim {
class World;
}
namespace fl::sim::redis {
struct CommandRecord;                          // sim/redis/server.h
using CommandLog = std::deque<CommandRecord>;  // as sim/redis/server.h declares it
}  // namespace fl::sim::redis

namespace fl {

// ParamInfo (a system-specific knob under `params:` or a workload's `params:`, declared once with
// type, unit, range, default and doc) lives in harness/params.h.

struct CriticalDuration {
  std::string name;  // "combo window", "state key TTL"
  int64_t duration_us = 0;
};

// Exact boundaries (issue 16): each critical duration up to `max_ms` and its neighbours, -1 ms,
// 0, +1 ms, in milliseconds, each once, in the order the durations come.
std::vector<int64_t> boundary_gaps_ms(const std::vector<CriticalDuration>& critical, int64_t max_ms = 60'000);

// One built run: the system's processes live in the world; check() judges the finished run.
class SystemRun {
 public:
  virtual ~SystemRun() = default;
  // Called once after the run (deadline reached). Returns one verdict per requested property.
  virtual std::vector<Verdict> check(sim::World& world, const std::vector<std::string>& properties) = 0;
  // Names of processes / nodes the fault injector may target, by role ("replica", "worker", ...).
  virtual std::vector<std::string> fault_targets(const std::string& role) const = 0;
  // Applies a fault only the system can reach (its storage, its Redis node's replies): kinds in
  // system_fault_kinds() of harness/faults.h, e.g. "sql-io-error" (value: how many I/O calls of
  // the DB fail). Returns false when the system has no such target. Every injected fault must be
  // recorded in the world's fault log (World::record_fault) so judges can see it.
  virtual bool apply_fault(const FaultSpec& /*fault*/) { return false; }
  // The behaviours this run exercised, of those the system's judges check (e.g. "global risk
  // action", "cache hit while the edge is behind", "lease expired under a paused holder"), named
  // from what the world observed. Called after check(); a sweep counts, per behaviour, the seeds
  // that exercised it, so a team sees what its exploratory mix reaches (docs/systems/).
  virtual std::vector<std::string> behaviours(sim::World& /*world*/) { return {}; }
  // The command logs of the run's simulated Redis servers (sim/redis/server.h: every command each
  // executed, in order, with its calling process): the system's Redis traffic, for tools that
  // replay it elsewhere (the Redis differential suite runs it on a real redis-server). None when
  // the system has no Redis.
  virtual std::vector<const sim::redis::CommandLog*> redis_command_logs() const { return {}; }
};

// A client's patience the swarm draws per seed (issue 16, `swarm.patience: true`): an integer
// param, drawn half below and half above `budget` — the server's internal retry budget in the
// param's unit (the longest the server may take to answer, retries included, or the number of
// internal attempts) — within [min, max], so an answer given after internal retries sometimes
// reaches a client and sometimes finds it gone.
struct PatienceParam {
  std::string param;
  int64_t budget = 0;
  int64_t min = 0, max = 0;
};

class SystemUnderTest {
 public:
  virtual ~SystemUnderTest() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual std::vector<std::string> variants() const { return {"spec", "hardened"}; }
  virtual std::vector<PropertyInfo> properties() const = 0;
  virtual std::vector<std::string> workload_kinds() const = 0;
  virtual std::vector<ParamInfo> params() const { return {}; }
  virtual std::vector<CriticalDuration> critical_durations(const Scenario& s) const = 0;
  // The named fixes `hardened` adds to the seed's design (impl/ports/fixes.h), in the order of
  // the system's fix enum. spec has none of them; `without:` removes some from hardened.
  virtual const std::vector<FixInfo>& fixes() const {
    static const std::vector<FixInfo> kNone;
    return kNone;
  }
  // The shortest quiescent tail after which the system's liveness properties can be judged
  // (work still in flight when the tail ends would read as lost). The loader rejects shorter.
  virtual int64_t min_quiet_tail_ms(const Scenario& /*s*/) const { return 0; }
  // The client patience params the swarm may draw per seed (see PatienceParam); none by default.
  virtual std::vector<PatienceParam> patience(const Scenario& /*s*/) const { return {}; }
  // The Redis scripts the system's services run (their Lua texts and SHA1s), which
  // `faultline redis-serve --scripts NAME` preloads; null when the system has none.
  virtual std::shared_ptr<const ScriptRegistry> redis_scripts() const { return nullptr; }
  // Builds topology and workload into `world` (processes added and started, arrivals scheduled).
  virtual std::unique_ptr<SystemRun> build(sim::World& world, const Scenario& s) const = 0;
};

// One system as it declared itself (fl_system in harness/systems/<name>/CMakeLists.txt): the
// adapter's SystemUnderTest and its test-matrix rows as YAML text (compiled in, so the binary
// needs no source tree), with the repository path they came from for error messages.
struct SystemDeclaration {
  const SystemUnderTest* system = nullptr;
  const char* matrix_file = "";
  std::string_view matrix_yaml;
};
// Every declaration compiled into this binary, sorted by name. Generated at configure time
// (cmake/faultline.cmake fl_generate_system_registry): nothing else lists the systems.
const std::vector<SystemDeclaration>& declared_systems();

// The registry of systems compiled into this binary, sorted by name.
const std::vector<const SystemUnderTest*>& all_systems();
const SystemUnderTest* find_system(const std::string& name);
// Sorted names of the systems, for usage lines and "did you mean" hints.
std::vector<std::string> system_names();

}  // namespace fl
