#include "sim/world.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>

#include "sim/hash.h"
#include "impl/ports/assert.h"

namespace fl::sim {

const char* process_state_name(ProcessState s) {
  switch (s) {
    case ProcessState::kNew:
      return "new";
    case ProcessState::kRunning:
      return "running";
    case ProcessState::kPaused:
      return "paused";
    case ProcessState::kCrashed:
      return "crashed";
  }
  return "?";
}

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kQuiescent:
      return "quiescent";
    case StopReason::kDeadline:
      return "deadline";
    case StopReason::kStopped:
      return "stopped";
  }
  return "?";
}

World::World(const WorldOptions& options)
    : seed_(options.seed),
      judged_(options.judged),
      tiebreak_rng_(Rng(options.seed).fork("scheduler")),
      observer_tiebreak_rng_(Rng(options.seed).fork("observers")),
      injected_tiebreak_rng_(Rng(options.seed).fork("injected")),
      trace_(options.record_trace),
      coverage_(options.coverage),
      history_([this] { return now_us_; },
               [this](const Operation& op, bool completed) { trace_operation(op, completed); }) {
  network_ = std::make_unique<Network>(*this);
}

World::~World() {
  // Frames may hold references into other processes' objects: destroy all frames first.
  for (auto& p : processes_) p->destroy_frames();
}

// The history's operations enter the trace as "invoke #ID OP ARGS" or "complete #ID OP OUTCOME
// RESULT". The detail is hashed piece by piece (the hash of the concatenation, without building it:
// ARGS and RESULT can be long statement and row descriptions) and rendered only when recording.
void World::trace_operation(const Operation& op, bool completed) {
  // What follows an invocation works for it until it completes (see current_cause()).
  if (!completed) {
    current_cause_ = op.id;
  } else if (current_cause_ == op.id) {
    current_cause_ = 0;
  }
  auto render = [&op, completed](auto& out) {
    out += completed ? std::string_view("complete #") : std::string_view("invoke #");
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, op.id);
    FL_ASSERT(ec == std::errc());
    out.append(digits, end);
    out += ' ';
    out += std::string_view(op.op);
    out += ' ';
    if (completed) {
      out += std::string_view(outcome_name(op.outcome));
      out += ' ';
      out += std::string_view(op.result);
    } else {
      out += std::string_view(op.args);
    }
  };
  StableHasher detail_hash;
  render(detail_hash);
  trace_.record_hashed(now_us_, TraceKind::kOp, "", op.process, detail_hash.finish(), [&] {
    std::string detail;
    render(detail);
    return detail;
  });
}

Rng& World::stream(std::string_view name) {
  auto it = streams_.find(name);
  if (it == streams_.end()) { it = streams_.emplace(std::string(name), Rng(seed_).fork(name)).first; }
  return it->second;
}

uint32_t World::add_node(std::string name) {
  FL_ASSERT(!find_node(name).has_value());  // node names are unique
  Node n;
  n.index = static_cast<uint32_t>(nodes_.size());
  n.name = std::move(name);
  nodes_.push_back(std::move(n));
  return nodes_.back().index;
}

std::optional<uint32_t> World::find_node(std::string_view name) const {
  for (const Node& n : nodes_) {
    if (n.name == name) return n.index;
  }
  return std::nullopt;
}

Process& World::add_process(uint32_t node, std::string name, BootFn boot) {
  FL_ASSERT(node < nodes_.size());
  FL_ASSERT(find_process(name) == nullptr);  // process names are unique
  const auto index = static_cast<uint32_t>(processes_.size());
  processes_.push_back(std::make_unique<Process>(*this, index, node, std::move(name), std::move(boot)));
  nodes_[node].processes.push_back(index);
  return *processes_.back();
}

Process* World::find_process(std::string_view name) {
  for (auto& p : processes_) {
    if (p->name_ == name) return p.get();
  }
  return nullptr;
}

void World::start(Process& p) {
  FL_ASSERT(p.state_ == ProcessState::kNew);
  p.boot();
}

void World::start_after(Process& p, int64_t delay_us) {
  after(delay_us, [this, &p] {
    if (p.state_ == ProcessState::kNew) start(p);
  });
}

void World::schedule(Event e) {
  FL_ASSERT(e.time_us >= now_us_);  // the world's clock never goes backwards
  e.tiebreak = tiebreak_rng_.next_u64();
  e.cause = current_cause_;
  scheduler_.push(e);
}

void World::at(int64_t time_us, std::function<void()> fn) {
  Event e;
  e.time_us = std::max(time_us, now_us_);
  e.action = scheduler_.store_action(std::move(fn));
  schedule(e);
}

void World::observe_at(int64_t time_us, std::function<void()> fn) {
  Event e;
  e.time_us = std::max(time_us, now_us_);
  e.action = scheduler_.store_action(std::move(fn));
  e.tiebreak = observer_tiebreak_rng_.next_u64();
  e.cause = current_cause_;
  scheduler_.push(e);
}

void World::inject_at(int64_t time_us, std::function<void()> fn) {
  Event e;
  e.time_us = std::max(time_us, now_us_);
  e.action = scheduler_.store_action(std::move(fn));
  e.tiebreak = injected_tiebreak_rng_.next_u64();
  scheduler_.push(e);
}

void World::resume_at(Process& p, int64_t time_us, std::coroutine_handle<> h) {
  FL_ASSERT(p.alive());
  Event e;
  e.time_us = std::max(time_us, now_us_);
  e.coroutine = h.address();
  e.process = p.index_;
  e.incarnation = p.incarnation_;
  schedule(e);
}

void World::post(Process& p, int64_t time_us, std::function<void()> fn) {
  Event e;
  e.time_us = std::max(time_us, now_us_);
  e.process = p.index_;
  e.incarnation = p.incarnation_;
  e.action = scheduler_.store_action(std::move(fn));
  schedule(e);
}

bool World::step() {
  if (scheduler_.empty()) return false;
  Event e = scheduler_.pop();
  FL_ASSERT(e.time_us >= now_us_);
  now_us_ = e.time_us;
  ++events_executed_;
  execute(e);
  current_cause_ = 0;  // between events nothing works for an operation
  return true;
}

void World::execute(const Event& e) {
  current_cause_ = e.cause;
  if (e.process == kNoProcess) {
    trace_.fold(now_us_, TraceKind::kAction, e.seq, 0);
    scheduler_.take_action(e.action)();
    return;
  }
  Process& p = *processes_[e.process];
  if (!p.alive() || p.incarnation_ != e.incarnation) {
    // Aimed at a dead incarnation: dropped, never delivered.
    trace_.fold(now_us_, TraceKind::kDrop, e.process, e.incarnation);
    if (e.action != kNoAction) scheduler_.take_action(e.action);
    return;
  }
  if (p.state_ == ProcessState::kPaused) {
    p.deferred_.push_back(e);  // runs, in order, when the pause ends
    return;
  }
  run_owned(p, e);
}

void World::run_owned(Process& p, const Event& e) {
  if (e.coroutine != nullptr) {
    trace_.fold_recorded(now_us_, TraceKind::kResume, e.process, e.incarnation, nodes_[p.node_].name, p.name_,
                         [] { return std::string("resume"); });
    std::coroutine_handle<>::from_address(e.coroutine).resume();
  } else {
    trace_.fold(now_us_, TraceKind::kAction, e.process, e.incarnation);
    scheduler_.take_action(e.action)();
  }
}

StopReason World::run_until(int64_t deadline_us) {
  stopped_ = false;
  while (!stopped_) {
    if (scheduler_.empty()) return StopReason::kQuiescent;
    if (scheduler_.top().time_us > deadline_us) {
      now_us_ = std::max(now_us_, deadline_us);
      return StopReason::kDeadline;
    }
    step();
  }
  return StopReason::kStopped;
}

void World::stop(std::string reason) {
  stopped_ = true;
  stop_message_ = std::move(reason);
  trace_.record(now_us_, TraceKind::kViolation, "", "", stop_message_);
}

void World::note_fault(std::string_view target, std::string_view what) {
  trace_.record(now_us_, TraceKind::kFault, "", target, what);
}

void World::record_fault(FaultRecord r) {
  FL_ASSERT(fault_log_.empty() || fault_log_.back().time_us <= r.time_us);
  if (coverage_.enabled() && !r.message.empty()) {
    coverage_.interruption(fault_kind_name(r.kind), r.process, r.message, r.peer_process);
  }
  fault_log_.push_back(std::move(r));
}

void World::record_process_fault(const Process& p, FaultKind kind, int64_t duration_us, int64_t value) {
  FaultRecord r;
  r.time_us = now_us_;
  r.kind = kind;
  r.node = nodes_[p.node_].name;
  r.process = p.name_;
  r.duration_us = duration_us;
  r.value = value;
  record_fault(std::move(r));
}

void World::crash(Process& p, std::string_view why) {
  if (!p.alive()) return;
  record_process_fault(p, FaultKind::kCrash);
  take_down(p, why);
  p.crashed_by_fault_ = true;
}

void World::panic(Process& p, std::string_view what) {
  if (!p.alive()) return;
  panics_.push_back(Panic{now_us_, p.name_, std::string(what)});
  take_down(p, what);
}

void World::take_down(Process& p, std::string_view why) {
  trace_.record(now_us_, TraceKind::kProcess, nodes_[p.node_].name, p.name_,
                "crash incarnation " + std::to_string(p.incarnation_) + ": " + std::string(why));
  // A crash while paused drops the events the pause held: their operations were held, then lost.
  record_held(p, p.deferred_, "pause, then dropped by a crash");
  p.state_ = ProcessState::kCrashed;
  for (const Event& e : p.deferred_) {
    if (e.action != kNoAction) scheduler_.take_action(e.action);
  }
  p.deferred_.clear();
  network_->forget_process(p);
  p.destroy_frames();
}

void World::restart(Process& p) {
  if (p.state_ == ProcessState::kNew) return start(p);
  if (p.alive()) crash(p, "restart");
  record_process_fault(p, FaultKind::kRestart);
  if (p.crashed_by_fault_) p.fault_held_us_ += now_us_ - p.booted_us_;
  p.boot();
}

void World::pause(Process& p, int64_t duration_us) {
  if (p.state_ != ProcessState::kRunning || duration_us < 0) return;
  if (duration_us == 0) {
    // A pause that holds nothing: in the fault log (a judge must not be moved by it) and nothing else.
    record_process_fault(p, FaultKind::kPause, 0);
    note_fault(p.name_, "pause 0us");
    return;
  }
  p.state_ = ProcessState::kPaused;
  p.paused_until_us_ = now_us_ + duration_us;
  record_process_fault(p, FaultKind::kPause, duration_us);
  trace_.record(now_us_, TraceKind::kProcess, nodes_[p.node_].name, p.name_,
                "pause " + std::to_string(duration_us) + "us");
  const uint32_t incarnation = p.incarnation_;
  at(p.paused_until_us_, [this, &p, incarnation] {
    if (p.state_ == ProcessState::kPaused && p.incarnation_ == incarnation) resume_paused(p);
  });
}

void World::resume_paused(Process& p) {
  p.state_ = ProcessState::kRunning;
  trace_.record(now_us_, TraceKind::kProcess, nodes_[p.node_].name, p.name_,
                "resume after pause, " + std::to_string(p.deferred_.size()) + " queued events");
  std::vector<Event> queued;
  queued.swap(p.deferred_);
  record_held(p, queued);
  if (!queued.empty()) {
    const auto oldest = std::min_element(queued.begin(), queued.end(),
                                         [](const Event& x, const Event& y) { return x.time_us < y.time_us; });
    p.fault_held_us_ += now_us_ - oldest->time_us;
  }
  for (const Event& e : queued) {
    // Each queued event may crash or pause the process again: re-check before each.
    if (!p.alive() || p.incarnation_ != e.incarnation) {
      if (e.action != kNoAction) scheduler_.take_action(e.action);
      continue;
    }
    if (p.state_ == ProcessState::kPaused) {
      p.deferred_.push_back(e);
      continue;
    }
    // A held event works, when it finally runs, for the operation it worked for when it was queued.
    const uint64_t cause = current_cause_;
    current_cause_ = e.cause;
    run_owned(p, e);
    current_cause_ = cause;
  }
}

// One kDelayed record per operation whose events the pause held (the longest wait), in the order of
// their first held event: which operations a pause touched, and by how much.
void World::record_held(const Process& p, const std::vector<Event>& held, const char* detail) {
  std::vector<std::pair<uint64_t, int64_t>> waits;  // (cause, longest wait)
  for (const Event& e : held) {
    if (e.cause == 0) continue;
    auto it = std::find_if(waits.begin(), waits.end(), [&e](const auto& w) { return w.first == e.cause; });
    if (it == waits.end()) {
      waits.emplace_back(e.cause, now_us_ - e.time_us);
    } else {
      it->second = std::max(it->second, now_us_ - e.time_us);
    }
  }
  for (const auto& [cause, wait_us] : waits) {
    FaultRecord r;
    r.time_us = now_us_;
    r.kind = FaultKind::kDelayed;
    r.node = nodes_[p.node_].name;
    r.process = p.name_;
    r.value = wait_us;
    r.detail = detail;
    r.cause = cause;
    record_fault(std::move(r));
  }
}

void World::clock_jump(uint32_t node, int64_t delta_us) {
  nodes_.at(node).clock.jump(delta_us);
  record_fault(
      FaultRecord{.time_us = now_us_, .kind = FaultKind::kClockJump, .node = nodes_[node].name, .value = delta_us});
  note_fault(nodes_[node].name, "clock-jump " + std::to_string(delta_us) + "us");
}

void World::set_clock_drift(uint32_t node, int64_t drift_ppm) {
  FL_ASSERT(drift_ppm > -1'000'000);
  nodes_.at(node).clock.set_drift(now_us_, drift_ppm);
  record_fault(
      FaultRecord{.time_us = now_us_, .kind = FaultKind::kClockDrift, .node = nodes_[node].name, .value = drift_ppm});
  note_fault(nodes_[node].name, "clock-drift " + std::to_string(drift_ppm) + "ppm");
}

void World::watch_effects(const std::vector<std::string>& process_names) {
  for (const std::string& name : process_names) {
    Process* p = find_process(name);
    if (p == nullptr) continue;
    if (watched_.size() <= p->index_) watched_.resize(p->index_ + 1, false);
    watched_[p->index_] = true;
  }
}

int64_t World::note_effect(Process& caller, std::string_view service, const Message* request) {
  if (caller.index_ >= watched_.size() || !watched_[caller.index_]) return -1;
  EffectRecord e;
  e.index = effects_.size();
  e.process = caller.name_;
  e.service = std::string(service);
  e.request = request ? request->describe() : "";
  e.time_us = now_us_;
  effects_.push_back(std::move(e));
  return static_cast<int64_t>(effects_.back().index);
}

bool World::crash_at_effect(Process& caller, int64_t effect, bool before) {
  if (effect < 0 || !crash_point_ || crash_point_fired_) return false;
  if (static_cast<uint64_t>(effect) != crash_point_->effect_index || crash_point_->before != before) return false;
  crash_point_fired_ = true;
  coverage_.interruption(
      before ? "crash-before" : "crash-after", caller.name_,
      effects_[static_cast<size_t>(effect)].service + ": " + effects_[static_cast<size_t>(effect)].request, "");
  const std::string why = std::string("crash point ") + (before ? "before" : "after") + " effect #" +
                          std::to_string(effect) + " (" + effects_[static_cast<size_t>(effect)].service + ")";
  const uint32_t incarnation = caller.incarnation_;
  Process* p = &caller;
  if (before) {
    // We are inside the caller's await_suspend: crash as the very next event of this instant.
    Event e;
    e.time_us = now_us_;
    e.action = scheduler_.store_action([this, p, why] { crash(*p, why); });
    e.tiebreak = 0;
    scheduler_.push(e);
  } else {
    crash(*p, why);
  }
  at(now_us_ + crash_point_->restart_after_us, [this, p, incarnation] {
    if (!p->alive() && p->incarnation_ == incarnation) restart(*p);
  });
  return true;
}

void World::arm_boundary_pause(Process& p, bool before, int64_t duration_us) {
  if (!p.alive() || duration_us <= 0) return;
  boundary_pauses_[p.index_] = BoundaryPause{before, duration_us, p.incarnation_};
  note_fault(p.name_, std::string("pause at its next call boundary (") + (before ? "before" : "after") + "), " +
                          std::to_string(duration_us) + "us");
}

bool World::pause_at_call(Process& caller, int64_t effect, bool before, std::string_view service,
                          const Message* request) {
  int64_t duration_us = 0;
  auto point = std::find_if(pause_points_.begin(), pause_points_.end(), [&](const ArmedPause& a) {
    return !a.fired_at_us && effect >= 0 && static_cast<uint64_t>(effect) == a.plan.effect_index &&
           a.plan.before == before;
  });
  if (point != pause_points_.end()) {
    point->fired_at_us = now_us_;
    duration_us = point->plan.duration_us;
  } else if (!boundary_pauses_.empty()) {
    auto it = boundary_pauses_.find(caller.index_);
    if (it == boundary_pauses_.end() || it->second.before != before) return false;
    const BoundaryPause armed = it->second;
    boundary_pauses_.erase(it);
    if (armed.incarnation != caller.incarnation_) return false;  // armed for an incarnation now gone
    duration_us = armed.duration_us;
  } else {
    return false;
  }
  pause(caller, duration_us);
  if (coverage_.enabled()) {
    coverage_.interruption(before ? "pause-before" : "pause-after", caller.name_,
                           std::string(service) + ": " + (request ? request->describe() : ""), "");
  }
  return caller.state_ == ProcessState::kPaused;
}

bool World::fail_at_effect(const Process& caller, int64_t effect, bool before, std::string_view service,
                           const Message* request) {
  if (effect < 0 || !fail_point_ || fail_point_fired_) return false;
  if (static_cast<uint64_t>(effect) != fail_point_->effect_index || fail_point_->before != before) return false;
  fail_point_fired_ = true;
  if (coverage_.enabled()) {
    coverage_.interruption(before ? "refuse" : "lose-reply", caller.name_,
                           std::string(service) + ": " + (request ? request->describe() : ""), "");
  }
  return true;
}

}  // namespace fl::sim
