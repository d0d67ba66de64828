// Clock: a process's view of time, and the way service code waits.
//
// Contract
// - now_us() is the local clock of the node the process runs on, in microseconds since the Unix
//   epoch. In simulation it is world time plus the node's skew (offset + drift), so it may jump
//   backwards when a clock-jump fault is injected. Service code that assumes monotonic local
//   time is exactly what the clock faults are there to test.
// - sleep_us(d) suspends the calling task until d microseconds of *local* time have passed (d <= 0
//   yields: the task is resumed after the other events of the same instant).
// - A sleep of a crashed process never resumes; a sleep of a paused process resumes after the
//   pause ends (late, with a stale view of the world).
#pragma once

#include <coroutine>
#include <cstdint>

namespace fl {

class Clock {
 public:
  virtual ~Clock() = default;

  virtual int64_t now_us() const = 0;
  int64_t now_ms() const { return now_us() / 1000; }

  struct SleepAwaiter {
    Clock* clock;
    int64_t delay_us;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) { clock->resume_after_us(h, delay_us); }
    void await_resume() const noexcept {}
  };
  SleepAwaiter sleep_us(int64_t delay_us) { return SleepAwaiter{this, delay_us}; }
  SleepAwaiter sleep_ms(int64_t delay_ms) { return SleepAwaiter{this, delay_ms * 1000}; }

 protected:
  // Arranges for `h` to be resumed once `delay_us` of local time has passed. REQUIRES: `h` is a
  // suspended coroutine of the process this clock belongs to.
  virtual void resume_after_us(std::coroutine_handle<> h, int64_t delay_us) = 0;
};

}  // namespace fl
