// Fix-kill sweeps: is every named fix needed? For each fix of the system, hardened runs without it
// through the exploratory sweep (seeds in order, stopping at the first failure) and, if that
// finds nothing, through a crash-point sweep. A fix whose removal breaks a property is KILLED (the
// property, the first failing seed or crash point, the wall time, and with found_dir a shrunk
// counterexample `found_dir/without-<FIX>.yaml`); one that nothing breaks SURVIVED: it is either
// not needed or shows a gap in the judges or the faults.
#pragma once

#include "absl/time/time.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/scenario.h"
#include "impl/ports/fixes.h"

namespace fl {

struct FixKillOptions {
  uint64_t first_seed = 1;
  uint64_t seeds = 200;  // exploratory seeds per fix (stops at the first failure)
  int jobs = 2;
  absl::Duration timeout = absl::Seconds(120);
  const Scenario* crash_scenario = nullptr;  // hardened crash-point scenario for the survivors
  uint64_t crash_effects = 0;                // 0: every effect of the discovery run
  std::vector<std::string> crash_processes;  // non-empty: only these processes' effects (name prefixes)
  std::string found_dir;                     // "" : do not shrink or write counterexamples
  int shrink_runs = 150;
  std::vector<std::string> only;                // non-empty: just these fix ids
  std::function<void(const std::string&)> log;  // progress lines (may be empty)
};

struct FixKill {
  FixInfo fix;
  bool killed = false;
  std::string property;  // the first property that failed without the fix
  std::string via;       // "exploratory seed 17" | "crash after effect #42 (...)"
  uint64_t seed = 0;
  uint64_t seeds_run = 0;      // exploratory seeds run until the kill (or all)
  double wall_seconds = 0;     // until the kill (or the whole search)
  std::string counterexample;  // path of the written counterexample, if any
  uint64_t fingerprint = 0;    // of the counterexample's run
};

// REQUIRES: hardened.variant == "hardened" and its system has fixes.
std::vector<FixKill> fix_kill_sweep(const Scenario& hardened, const FixKillOptions& options);

// One Markdown table row per fix: | fix | seed line | invariants | killed by | seed | seconds |.
std::string fix_kill_table(const std::vector<FixKill>& kills);

}  // namespace fl
