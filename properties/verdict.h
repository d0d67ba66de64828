// Verdict: what a property checker returns. A checker is a function of what the world observed
// (the clients' history, what the Redis and SQL servers executed and hold, what the network
// delivered, the faults the world injected); its verdict carries the evidence (Jepsen/Elle
// style: the smallest set of operations and events that shows the violation) so reports can print
// it and `explain` draw it.
//
// Contract
// - `checks` counts the assertions actually evaluated. A verdict that passed with 0 checks is
//   VACUOUS, never PASS: nothing was judged (status() says so everywhere a verdict is shown).
// - `exemptions` says how many operations or windows the property did not judge and why (each
//   reason must name an injected fault that explains it); it is printed with every run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fl {

struct PropertyInfo {
  std::string name;                     // e.g. "quantity-conservation"
  std::vector<std::string> invariants;  // ids in docs/invariants.md, e.g. {"COMBO-2"}
  std::string description;              // one line; cites the seed section
};

enum class VerdictStatus : uint8_t { kPass, kFail, kVacuous };
inline const char* verdict_status_name(VerdictStatus s) {
  switch (s) {
    case VerdictStatus::kPass:
      return "PASS";
    case VerdictStatus::kFail:
      return "FAIL";
    case VerdictStatus::kVacuous:
      return "VACUOUS";
  }
  return "?";
}

struct Verdict {
  std::string property;
  std::vector<std::string> invariants;
  bool passed = false;                // no assertion failed (see status())
  std::string assertion;              // what was checked, in words
  std::vector<std::string> evidence;  // the violating operations/events (empty when passed)
  int64_t checks = 0;                 // how many assertions were evaluated
  // (reason, count): operations or windows left unjudged, each reason naming the injected fault.
  std::vector<std::pair<std::string, int64_t>> exemptions;

  VerdictStatus status() const {
    if (!passed) return VerdictStatus::kFail;
    return checks > 0 ? VerdictStatus::kPass : VerdictStatus::kVacuous;
  }
  const char* status_name() const { return verdict_status_name(status()); }
  // Adds `count` to the exemptions under `reason` (merging equal reasons; first-seen order kept).
  void exempt(const std::string& reason, int64_t count = 1) {
    auto [it, fresh] = exemption_index.try_emplace(reason, exemptions.size());
    if (fresh) {
      exemptions.emplace_back(reason, count);
    } else {
      exemptions[it->second].second += count;
    }
  }
  int64_t exempted() const {
    int64_t n = 0;
    for (const auto& e : exemptions) n += e.second;
    return n;
  }

  // exemptions' positions by reason (a checker may exempt thousands of operations under a few
  // hundred reasons). Public only so that a Verdict stays an aggregate: write both through
  // exempt(), never one of them alone.
  std::map<std::string, size_t, std::less<>> exemption_index;
};

// A checker's starting verdict: passed until an assertion fails.
inline Verdict passing_verdict(std::string property, std::vector<std::string> invariants, std::string assertion) {
  Verdict v;
  v.property = std::move(property);
  v.invariants = std::move(invariants);
  v.assertion = std::move(assertion);
  v.passed = true;
  return v;
}

// At most this many pieces of evidence are kept per verdict: enough to show the violation.
inline constexpr size_t kVerdictEvidenceCap = 12;

// Marks `v` failed and keeps `evidence` while fewer than kVerdictEvidenceCap are kept.
inline void fail_verdict(Verdict& v, std::string evidence) {
  v.passed = false;
  if (v.evidence.size() < kVerdictEvidenceCap) v.evidence.push_back(std::move(evidence));
}

}  // namespace fl
