// Shadow rule runs of seed 004 (004:L101, L252, L302-303): a shadow process recomputes the
// candidates of a SEALED official run under a shadow rule (rule-shadow-1: the official score with
// an entry score one higher) from the run's frozen input manifest, in its own namespace
// (`shadow_run`, `shadow_candidate`), carrying the run's input watermark, manifest digest, context
// version and rule, mapping and risk activation epochs. It then compares its Top N with an official
// run's only when both sides have the same context (scope, input watermark, manifest digest, scope
// context version: the window configuration, mapping and risk epochs are the context version's),
// and records REFUSED otherwise (`shadow_comparison`). Shadow results never reach the official
// tables, snapshots, the pointer or Redis: they have no publishing right (004:L252).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"

namespace fl::ranking {

inline constexpr const char* kShadowRule = "rule-shadow-1";

struct ShadowOptions {
  std::vector<std::string> scopes = {"GLOBAL|ALL|ALL|ALL", "GLOBAL|ALL|ALL|zh-CN"};
  int64_t interval_us = 1'000'000;
  int64_t stop_at_us = 0;
  int top_n = 5;
  int64_t entry_score = 2;     // the official rule's; the shadow rule's is one higher
  bool risk = false;           // the context has risk epochs
  bool scope_control = false;  // the context has a mapping activation epoch
  // A faulty comparer: every other comparison takes the official side from the scope's previous
  // SEALED run (another watermark and manifest), which must be REFUSED.
  bool mix = false;
};

// Every interval (until stop_at_us), for a random scope: one shadow run of its newest SEALED run
// that has none, then one comparison.
Task<void> run_shadow(Runtime& rt, Sql& sql, ShadowOptions o);

}  // namespace fl::ranking
