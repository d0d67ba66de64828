#include "harness/memory.h"

#include <malloc.h>

#ifdef FAULTLINE_MIMALLOC
#include <mimalloc.h>
#endif

namespace fl {

void keep_freed_memory() {
#ifdef FAULTLINE_MIMALLOC
  // mimalloc (the allocator of every executable but the sanitizer builds) gives freed pages back
  // to the kernel after a short delay, so a sweep worker running seed after seed faulted its heap
  // in again for every run: 230,000 minor faults per 60 likes seeds instead of 9,600, and 40 %
  // more CPU (docs/performance.md, "What holds the figures"). Disabling decommit alone at run time left the
  // faults; the delays (ms) are what removes them.
  mi_option_disable(mi_option_allow_decommit);
  mi_option_set(mi_option_decommit_delay, 3'600'000);
  mi_option_set(mi_option_segment_decommit_delay, 3'600'000);
#endif
  // glibc's allocator (the sanitizer builds; and the loader's own allocations everywhere).
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
}

}  // namespace fl
