// Runtime: what a process offers the service code running in it, besides the data-store ports.
//
// Contract
// - spawn(name, task) starts a detached task owned by this process: it runs until it finishes or
//   the process crashes (its frame is then destroyed with every local). An exception escaping a
//   detached task crashes the process (as an uncaught panic kills a Go program).
// - random_u64() draws from this process's deterministic stream (simulation) or a real source
//   (real mode). Service code never draws from ambient (process-global) randomness.
// - process_name() and incarnation() identify the running instance: incarnation grows by one on
//   every restart, so names derived from it (consumer names, lock owners) differ across restarts.
// - note(text) appends a user event to the trace (simulation) or the log (real mode).
// - A coroutine that another task of this process resumes directly (a queue's waiters) is held as
//   a Suspended: capture() it when it suspends, resume() it when its turn comes. The simulation
//   resumes it working for the client operation it worked for when it suspended (the operation a
//   fault record names, sim/fault_log.h), not for the task that wakes it; real mode just resumes.
#pragma once

#include <coroutine>
#include <cstdint>
#include <string>
#include <string_view>

#include "impl/ports/clock.h"
#include "impl/ports/task.h"

namespace fl {

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual Clock& clock() = 0;
  virtual void spawn(std::string_view name, Task<void> task) = 0;
  virtual uint64_t random_u64() = 0;
  virtual std::string_view process_name() const = 0;
  virtual std::string_view node_name() const = 0;
  virtual uint32_t incarnation() const = 0;
  virtual void note(std::string_view text) = 0;

  struct Suspended {
    std::coroutine_handle<> handle;
    uint64_t context = 0;  // the world's, opaque to service code
    bool operator==(const Suspended& o) const { return handle == o.handle; }
  };
  virtual Suspended capture(std::coroutine_handle<> h) { return Suspended{h, 0}; }
  virtual void resume(const Suspended& s) { s.handle.resume(); }
};

}  // namespace fl
