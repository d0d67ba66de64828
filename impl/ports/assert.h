// FL_ASSERT: an assertion that stays on in every build, release sweeps included (TIGER_STYLE:
// an assert states what the code relies on; a run that breaks it stops there, with the file and
// line, instead of running on into a wrong verdict). A failed assertion aborts the process, so a
// sweep reports that seed as crashed and keeps its replay command.
//
// Checks that re-derive a whole structure (O(n) per call) stay in `#ifndef NDEBUG` blocks: on in
// the sanitizer (Debug) build only. Configure with -DFAULTLINE_ASSERTS=OFF to compile FL_ASSERT
// out; that build exists to measure what the assertions cost (docs/performance.md), not to ship.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace fl::detail {

[[noreturn]] inline void assert_failed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, condition);
  std::fflush(stderr);
  std::abort();
}

}  // namespace fl::detail

#if defined(FAULTLINE_ASSERTS_OFF)
#define FL_ASSERT(condition) static_cast<void>(sizeof(!(condition)))
#else
#define FL_ASSERT(condition)                                                \
  (__builtin_expect(static_cast<bool>(condition), 1) ? static_cast<void>(0) \
                                                     : ::fl::detail::assert_failed(#condition, __FILE__, __LINE__))
#endif
