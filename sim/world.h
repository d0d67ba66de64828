// World: one deterministic simulated universe — clock, scheduler, nodes, processes, network,
// trace and history. Nothing is global: two worlds can run side by side in one process.
//
// Contract
// - Single-threaded. Everything happens inside run_until(): events are popped in
//   (time, seeded tie-break, seq) order and executed to their next suspension point.
// - World time (now_us) starts at kEpochUs and never goes backwards. Each node has its own local
//   clock (NodeClock) that may be skewed, drift, or jump.
// - A process has an incarnation; crash() destroys all of its coroutine frames, forgets its
//   services and pending calls, and every event scheduled for the dead incarnation is dropped.
//   restart() boots a new incarnation. pause(d) freezes the process for d: its events queue up
//   and run, in order, when it resumes.
// - Same seed + same construction + same faults => same trace fingerprint.
#pragma once

#include <algorithm>
#include <coroutine>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/ports/clock.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/task.h"
#include "sim/coverage.h"
#include "sim/fault_log.h"
#include "sim/history_log.h"
#include "sim/network.h"
#include "sim/node_clock.h"
#include "sim/rng.h"
#include "sim/scheduler.h"
#include "sim/trace.h"

namespace fl::sim {

class World;
class Process;

// The code a process runs when it boots (again after every restart).
using BootFn = std::function<Task<void>(Process&)>;

struct Node {
  uint32_t index = 0;
  std::string name;
  NodeClock clock;
  std::vector<uint32_t> processes;
};

enum class ProcessState : uint8_t { kNew, kRunning, kPaused, kCrashed };
const char* process_state_name(ProcessState s);

class Process final : public Runtime, private Clock, private Rpc {
 public:
  Process(World& world, uint32_t index, uint32_t node, std::string name, BootFn boot);
  ~Process() override;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Runtime.
  Clock& clock() override { return *this; }
  void spawn(std::string_view name, Task<void> task) override;
  uint64_t random_u64() override { return rng_.next_u64(); }
  std::string_view process_name() const override { return name_; }
  std::string_view node_name() const override;
  uint32_t incarnation() const override { return incarnation_; }
  void note(std::string_view text) override;
  Suspended capture(std::coroutine_handle<> h) override;
  void resume(const Suspended& s) override;

  Rpc& rpc() { return *this; }
  Rng& rng() { return rng_; }
  World& world() { return world_; }
  uint32_t index() const { return index_; }
  uint32_t node() const { return node_; }
  ProcessState state() const { return state_; }
  bool alive() const { return state_ == ProcessState::kRunning || state_ == ProcessState::kPaused; }
  int64_t paused_until_us() const { return paused_until_us_; }
  uint64_t connection_epoch() const { return connection_epoch_; }
  size_t live_tasks() const { return roots_.size(); }
  // Volatile per-incarnation state that service code may keep here is up to the boot function;
  // anything it must keep across a crash belongs in a simulated store.

  // Clock (public through clock()).
  int64_t now_us() const override;

 private:
  friend class World;
  friend class Network;
  friend class RootAccess;

  void resume_after_us(std::coroutine_handle<> h, int64_t delay_us) override;
  // Rpc.
  Task<RpcResult> call(std::string_view service, MessagePtr request, int64_t timeout_us) override;
  void serve(std::string_view service, RpcHandler handler) override;
  void send(std::string_view service, MessagePtr message) override;
  void on_message(std::string_view service, OnewayHandler handler) override;

  void boot();
  void destroy_frames();
  void root_finished(void* frame, std::exception_ptr error);

  World& world_;
  uint32_t index_;
  uint32_t node_;
  std::string name_;
  BootFn boot_;
  Rng rng_;
  ProcessState state_ = ProcessState::kNew;
  uint32_t incarnation_ = 0;
  int64_t paused_until_us_ = 0;
  // How much later injected faults have made it so far, at most: each pause by how long it held
  // the oldest event it deferred (a pause that deferred nothing delayed nothing), each crash by
  // the time from the lost incarnation's boot to the next (its progress is redone). What
  // Network::serve reads when it first serves a service.
  int64_t fault_held_us_ = 0;
  int64_t booted_us_ = 0;
  bool crashed_by_fault_ = false;  // since its last boot
  uint64_t connection_epoch_ = 0;
  std::map<void*, std::coroutine_handle<>> roots_;  // detached root frames by address
  std::vector<Event> deferred_;                     // events that arrived while paused
  std::map<std::string, RpcHandler, std::less<>> handlers_;
  std::map<std::string, OnewayHandler, std::less<>> oneway_handlers_;
};

// An external effect: a call a watched process made to another service (a Redis command, an SQL
// statement, a produce, an ack). Crash-point sweeps list them, then crash the caller right
// before or right after each one.
struct EffectRecord {
  uint64_t index = 0;
  std::string process;
  std::string service;
  std::string request;
  int64_t time_us = 0;
};

struct CrashPointPlan {
  uint64_t effect_index = 0;
  bool before = false;                   // crash instead of sending; else right after the reply
  int64_t restart_after_us = 1'000'000;  // the crashed process restarts this much later
};

// A pause point: the process that makes the effect with this index is paused right before it
// (instead of sending; it sends when the pause ends) or right after its reply (before it sees it),
// for duration_us, while everything else runs.
struct PausePointPlan {
  uint64_t effect_index = 0;
  bool before = false;
  int64_t duration_us = 0;
};

// A fail point: the call that makes the effect with this index fails, as one refused or lost
// reply would make it. Before: refused, never sent (the caller sees kUnavailable in the same
// instant, as a refused connection). After: the server executed it and its reply is lost (the
// caller sees kTimeout when its timeout expires). The world's fault log names the call's operation.
struct FailPointPlan {
  uint64_t effect_index = 0;
  bool before = false;
};

struct WorldOptions {
  uint64_t seed = 1;
  bool record_trace = false;
  // False when no judge will read this run's observations (a speed or state-size measurement):
  // systems may then skip the logs that only judges read. Never changes what the run does.
  bool judged = true;
  // Collect coverage features (sim/coverage.h) for coverage-guided exploration. Never changes
  // what the run does.
  bool coverage = false;
};

enum class StopReason : uint8_t { kQuiescent, kDeadline, kStopped };
const char* stop_reason_name(StopReason r);

class World {
 public:
  explicit World(const WorldOptions& options);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // ---- Time, randomness, records.
  int64_t now_us() const { return now_us_; }
  uint64_t seed() const { return seed_; }
  // See WorldOptions::judged.
  bool judged() const { return judged_; }
  // The persistent stream named `name` (created on first use by forking the root seed).
  Rng& stream(std::string_view name);
  Trace& trace() { return trace_; }
  HistoryLog& history() { return history_; }
  Network& network() { return *network_; }
  Coverage& coverage() { return coverage_; }

  // ---- Topology.
  uint32_t add_node(std::string name);
  Node& node(uint32_t index) { return nodes_.at(index); }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::optional<uint32_t> find_node(std::string_view name) const;
  // Adds a process (not started). Names are unique.
  Process& add_process(uint32_t node, std::string name, BootFn boot);
  Process& process(uint32_t index) { return *processes_.at(index); }
  Process* find_process(std::string_view name);
  size_t process_count() const { return processes_.size(); }
  // Boots the process now (first incarnation).
  void start(Process& p);
  // Boots the process `delay_us` from now, unless something booted it first: a restart fault
  // drawn before then starts a process that has not started yet (restart), and the late start
  // then has nothing to do (explore-publish-hardened seed 19100 asserted here).
  void start_after(Process& p, int64_t delay_us);

  // ---- Scheduling.
  // A world-level action (workload arrivals, scheduled faults, checkers).
  void at(int64_t time_us, std::function<void()> fn);
  void after(int64_t delay_us, std::function<void()> fn) { at(now_us_ + delay_us, std::move(fn)); }
  // An observer's action (a checker sampling the stores): its tie-break comes from a stream of its
  // own, so adding, removing or moving observers never reorders the world's other events. The
  // action itself must only read the world.
  void observe_at(int64_t time_us, std::function<void()> fn);
  // A fault added to a run without reordering it (a scenario's `extra_faults`, the null faults of
  // `faultline null-faults`): its tie-break comes from a stream of its own, as observe_at's, so
  // scheduling it changes no other event's; what the fault then does to the world is its effect.
  void inject_at(int64_t time_us, std::function<void()> fn);
  // Process-owned events: dropped if that incarnation dies, deferred while it is paused.
  void resume_at(Process& p, int64_t time_us, std::coroutine_handle<> h);
  void post(Process& p, int64_t time_us, std::function<void()> fn);

  // ---- Running.
  // Runs events until the queue is empty (kQuiescent), the next event is after deadline_us
  // (kDeadline; time advances to the deadline), or stop() was called (kStopped).
  StopReason run_until(int64_t deadline_us);
  // Runs one event; false when none is left.
  bool step();
  void stop(std::string reason);
  const std::string& stop_message() const { return stop_message_; }
  uint64_t events_executed() const { return events_executed_; }
  // The client operation (history id) the running code works for, 0 for none. An invocation makes
  // its operation current; every event scheduled meanwhile (timers, messages, replies, spawned
  // tasks) carries it and makes it current again when it runs; a boot starts with none. The fault
  // log names it in the records of what a fault hit (sim/fault_log.h). Never changes a run.
  uint64_t current_cause() const { return current_cause_; }
  size_t pending_events() const { return scheduler_.size(); }

  // ---- Process and clock faults.
  void crash(Process& p, std::string_view why);
  // An exception escaped a process's task: it goes down as after a crash, but the failure is its
  // own, not an injected fault, so it is kept in panics(), never in the fault log that excuses
  // degraded outcomes.
  struct Panic {
    int64_t time_us = 0;
    std::string process, what;
  };
  void panic(Process& p, std::string_view what);
  const std::vector<Panic>& panics() const { return panics_; }
  void restart(Process& p);
  void pause(Process& p, int64_t duration_us);
  // A simulated component's own fault (an injected I/O error that failed a database's open) made
  // `p` this much later (Process::fault_held_us_, what Network::serve reads at a first serve).
  void note_fault_delay(Process& p, int64_t delay_us) {
    FL_ASSERT(delay_us >= 0);
    p.fault_held_us_ += delay_us;
  }
  void clock_jump(uint32_t node, int64_t delta_us);
  void set_clock_drift(uint32_t node, int64_t drift_ppm);
  // Records a fault (or its healing) in the trace.
  void note_fault(std::string_view target, std::string_view what);
  // Every fault injected so far, structured (sim/fault_log.h): what judges may cite to excuse a
  // degraded outcome. The world records its own; storage and Redis injectors add theirs here.
  const FaultLog& fault_log() const { return fault_log_; }
  void record_fault(FaultRecord r);
  // Shorthand for a fault at process `p` now.
  void record_process_fault(const Process& p, FaultKind kind, int64_t duration_us = 0, int64_t value = 0);
  // Faults only a component can make (the simulated Redis's error replies): the component
  // registers a handler under its process's name; apply_component_fault calls it and returns
  // false when no handler took the kind.
  using ComponentFaultHandler = std::function<bool(std::string_view kind, int64_t duration_us, int64_t value)>;
  void set_component_fault_handler(const std::string& process, ComponentFaultHandler handler) {
    component_faults_[process] = std::move(handler);
  }
  bool apply_component_fault(std::string_view process, std::string_view kind, int64_t duration_us, int64_t value) {
    auto it = component_faults_.find(std::string(process));
    return it != component_faults_.end() && it->second(kind, duration_us, value);
  }

  // ---- External effects and crash points.
  // Calls made by these processes are numbered and kept as effects.
  void watch_effects(const std::vector<std::string>& process_names);
  // Crashes the caller right before / after the effect with this index.
  void arm_crash_point(const CrashPointPlan& plan) { crash_point_ = plan; }
  // Pauses the caller right before / after the effect with this index (PausePointPlan). May be
  // called more than once: each armed point fires once (a pause pair stops two processes, the
  // second at an effect made while the first is paused).
  void arm_pause_point(const PausePointPlan& plan) { pause_points_.push_back(ArmedPause{plan, std::nullopt}); }
  // Fails the call of the effect with this index (FailPointPlan).
  void arm_fail_point(const FailPointPlan& plan) { fail_point_ = plan; }
  // Pauses `p` at the boundary of its next call (any call, watched or not): right before sending
  // it, or right after its reply, for duration_us (the swarm's pause-at-boundary).
  void arm_boundary_pause(Process& p, bool before, int64_t duration_us);
  const std::vector<EffectRecord>& effects() const { return effects_; }
  bool crash_point_fired() const { return crash_point_fired_; }
  // When the k-th armed pause point paused its caller (simulated us), if it fired.
  std::optional<int64_t> pause_point_fired_at_us(size_t k) const {
    return k < pause_points_.size() ? pause_points_[k].fired_at_us : std::nullopt;
  }
  // True when a pause point was armed and every armed one was reached.
  bool pause_point_fired() const {
    return !pause_points_.empty() && std::all_of(pause_points_.begin(), pause_points_.end(),
                                                 [](const ArmedPause& a) { return a.fired_at_us.has_value(); });
  }
  bool fail_point_fired() const { return fail_point_fired_; }

 private:
  // The process goes down (crash or panic): its pending events and frames are dropped.
  void take_down(Process& p, std::string_view why);
  // Folds an operation's invocation or completion into the trace (the history's observer).
  void trace_operation(const Operation& op, bool completed);

  friend class Process;
  friend class Network;
  void schedule(Event e);
  void execute(const Event& e);
  void run_owned(Process& p, const Event& e);
  void resume_paused(Process& p);
  void record_held(const Process& p, const std::vector<Event>& held, const char* detail = "pause");
  // Network hooks: returns the effect index of a call, or -1 when the caller is not watched.
  int64_t note_effect(Process& caller, std::string_view service, const Message* request);
  // True (and crashes the caller, scheduling its restart) when `effect` is the armed crash point
  // for this phase. "before" is called from the caller's own await_suspend, so that crash runs
  // as the next event of the instant instead of destroying the suspending frame in place.
  bool crash_at_effect(Process& caller, int64_t effect, bool before);
  // True (and pauses the caller) when this call's boundary is the armed pause point or the caller
  // has a boundary pause armed for this side of its next call. The network then defers what the
  // caller does next (sending the call, seeing its reply) to an event of its own, held by the pause.
  bool pause_at_call(Process& caller, int64_t effect, bool before, std::string_view service, const Message* request);
  // True (once) when `effect` is the armed fail point for this phase: the network then refuses the
  // call (before) or loses its reply (after) and records the fault.
  bool fail_at_effect(const Process& caller, int64_t effect, bool before, std::string_view service,
                      const Message* request);

  uint64_t seed_;
  bool judged_;
  Rng tiebreak_rng_;
  Rng observer_tiebreak_rng_;
  Rng injected_tiebreak_rng_;
  uint64_t current_cause_ = 0;
  std::map<std::string, Rng, std::less<>> streams_;
  int64_t now_us_ = kEpochUs;
  Scheduler scheduler_;
  Trace trace_;
  Coverage coverage_;
  HistoryLog history_;
  std::vector<Node> nodes_;
  std::vector<std::unique_ptr<Process>> processes_;
  std::unique_ptr<Network> network_;
  bool stopped_ = false;
  std::string stop_message_;
  uint64_t events_executed_ = 0;
  std::vector<bool> watched_;  // by process index
  std::vector<EffectRecord> effects_;
  FaultLog fault_log_;
  std::vector<Panic> panics_;
  std::map<std::string, ComponentFaultHandler> component_faults_;
  std::optional<CrashPointPlan> crash_point_;
  bool crash_point_fired_ = false;
  struct ArmedPause {
    PausePointPlan plan;
    std::optional<int64_t> fired_at_us;  // set when it paused its caller
  };
  std::vector<ArmedPause> pause_points_;  // in the order armed
  std::optional<FailPointPlan> fail_point_;
  bool fail_point_fired_ = false;
  struct BoundaryPause {
    bool before = false;
    int64_t duration_us = 0;
    uint32_t incarnation = 0;
  };
  std::map<uint32_t, BoundaryPause> boundary_pauses_;  // by process index
};

}  // namespace fl::sim
