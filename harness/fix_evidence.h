// The report's evidence for the named fixes: each system's found/without-<FIX>.yaml replayed both
// ways — it must fail (as recorded, same fingerprint) without the fix and pass, same seed, with
// every fix in place.
#pragma once

#include "absl/time/time.h"

#include <string>
#include <vector>

#include "reports/report.h"

namespace fl {

// One record per fix of every system named by `matrix` ("all" or a system name), in registry
// order; runs the counterexamples under `scenarios_dir` in `jobs` worker processes.
std::vector<reports::FixRecord> fix_evidence(const std::string& scenarios_dir, const std::string& matrix, int jobs,
                                             absl::Duration timeout);

}  // namespace fl
