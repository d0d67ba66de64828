// Process-wide allocation policy for runs (the CLI and the benchmarks call it first thing).
#pragma once

namespace fl {

// A run allocates and frees tens of MB in short-lived blocks (messages, row sets, SQLite pages,
// the VFS's file images). glibc's defaults hand blocks over 128 KB to mmap and give the heap top
// back to the kernel past 128 KB free, so a process page-faults the same memory in again and
// again (the profile of a combo run: about a fifth of its time in page faults); mimalloc gives
// freed pages back after a short delay. This keeps freed memory in the process, for either
// allocator. Allocation policy only: it changes nothing a run computes.
void keep_freed_memory();

}  // namespace fl
