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
#pragma once

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
};

}  // namespace fl
