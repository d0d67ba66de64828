// Judge: the scaffold a checker builds its Verdict with. Every expectation counts as one check
// (the scaffold keeps the count, not the checker), a failed one marks the verdict failed and keeps
// its evidence up to kVerdictEvidenceCap lines, and an item a fault explains is exempted under the
// fault's name instead of being judged (FaultBudget answers which fault, as far as it reaches).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "properties/verdict.h"

namespace fl::props {

struct Judge {
  Verdict v;

  Judge(std::string property, std::vector<std::string> invariants, std::string assertion)
      : v(passing_verdict(std::move(property), std::move(invariants), std::move(assertion))) {}

  // One check: `ok`, or the verdict fails with `evidence()` (built only when it fails).
  void expect(bool ok, const std::function<std::string()>& evidence) {
    ++v.checks;
    if (ok) return;
    v.passed = false;
    if (v.evidence.size() < kVerdictEvidenceCap) v.evidence.push_back(evidence());
  }

  // A check unless `fault` explains a violation: then the item is exempted as `what`, naming the
  // fault, and not counted as a check.
  void expect_or_exempt(bool ok, const std::optional<std::string>& fault, const std::string& what,
                        const std::function<std::string()>& evidence) {
    if (!ok && fault) {
      v.exempt(what + " explained by " + *fault);
      return;
    }
    expect(ok, evidence);
  }

  // One check, counted even when `fault` explains a violation: the item is then exempted as
  // "`what`: `fault`" instead of failing (for an item judged first, then excused).
  void expect_or_excuse(bool ok, const std::optional<std::string>& fault, const std::string& what,
                        const std::function<std::string()>& evidence) {
    expect(ok || fault.has_value(), evidence);
    if (!ok && fault) v.exempt(what + ": " + *fault);
  }
};

}  // namespace fl::props
