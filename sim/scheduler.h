// Scheduler: the single-threaded event queue of a simulated world.
//
// Events are ordered by (time_us, tiebreak, seq). The tie-break is drawn from the world's seeded
// RNG when the event is scheduled, so events at the same instant run in a seed-dependent order:
// different seeds explore different interleavings, the same seed always the same one. `seq`
// (insertion order) only separates equal tie-breaks, which keeps the order total.
//
// The scheduler stores events and callbacks; it does not run them (World::step does, because only
// the world knows whether the target process is alive, paused or crashed).
#pragma once

#include <cassert>
#include <coroutine>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace fl::sim {

inline constexpr uint32_t kNoProcess = UINT32_MAX;
inline constexpr uint32_t kNoAction = UINT32_MAX;

struct Event {
  int64_t time_us = 0;
  uint64_t tiebreak = 0;
  uint64_t seq = 0;
  void* coroutine = nullptr;      // a coroutine to resume, or null when `action` is set
  uint32_t process = kNoProcess;  // owner; kNoProcess for world-level actions
  uint32_t incarnation = 0;       // owner's incarnation when scheduled
  uint32_t action = kNoAction;    // index of a callback in the scheduler's slab
  // The client operation (history id) this event works for, 0 for none: what was current when it
  // was scheduled (World::current_cause). Never ordered on, never in the fingerprint.
  uint64_t cause = 0;

  bool operator>(const Event& o) const {
    if (time_us != o.time_us) return time_us > o.time_us;
    if (tiebreak != o.tiebreak) return tiebreak > o.tiebreak;
    return seq > o.seq;
  }
};

class Scheduler {
 public:
  Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void push(Event e) {
    e.seq = next_seq_++;
    queue_.push(e);
  }
  bool empty() const { return queue_.empty(); }
  size_t size() const { return queue_.size(); }
  const Event& top() const { return queue_.top(); }
  Event pop() {
    Event e = queue_.top();
    queue_.pop();
    return e;
  }

  // Stores `fn` and returns its slot; take_action() hands it back exactly once.
  uint32_t store_action(std::function<void()> fn);
  std::function<void()> take_action(uint32_t slot);
  size_t live_actions() const { return actions_.size() - free_slots_.size(); }

 private:
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  uint64_t next_seq_ = 0;
  std::vector<std::function<void()>> actions_;
  std::vector<uint32_t> free_slots_;
};

}  // namespace fl::sim
