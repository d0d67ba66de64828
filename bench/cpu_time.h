// CPU time of the calling thread, for benchmarks that report work per CPU second (the machine is
// shared, so wall time measures the neighbours too).
#pragma once

#include <time.h>

namespace fl::bench {

// CPU seconds (user + system) the calling thread has used.
inline double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace fl::bench
