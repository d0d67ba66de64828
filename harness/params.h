// Typed per-system configuration (issue 15): each system declares its `params:` once — name,
// type, unit, range, default and doc — in SystemUnderTest::params(). The scenario loader parses
// and range-checks every value against that declaration (file:line:col, did-you-mean, exit 2),
// and hands the typed values to build() and critical_durations() as Scenario::config.
// `faultline list params` and the table in docs/scenario-format.md come from the same declaration.
//
// Adding a param: one line in the system's params(), e.g.
//   int_param("window_ms", "ms", 1, 600'000, 3000, "combo window (000:L39)"),
// then read it in the adapter as s.config.i64("window_ms").
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fl {

struct Scenario;
class SystemUnderTest;

enum class ParamType { kInt, kNumber, kText };

// One declared param. A brace-initialised {name, description, default} is an integer >= 0.
struct ParamInfo {
  std::string name;
  std::string description;
  std::string default_value;  // as a scenario would write it; "" = none (the system derives it)
  ParamType type = ParamType::kInt;
  std::string unit;  // "ms", "percent", "" (a count)
  double min = 0;    // inclusive range of a number or integer
  double max = 1e15;
  std::vector<std::string> choices;  // text: the values allowed (empty: any text)
};

ParamInfo int_param(std::string name, std::string unit, int64_t min, int64_t max, int64_t fallback, std::string doc);
ParamInfo number_param(std::string name, std::string unit, double min, double max, double fallback, std::string doc);
ParamInfo text_param(std::string name, std::string fallback, std::string doc);
// A text param that must be one of `choices` (the fallback among them).
ParamInfo choice_param(std::string name, std::string fallback, std::vector<std::string> choices, std::string doc);
// An integer without a default: the system derives it when a scenario leaves it out.
ParamInfo derived_int_param(std::string name, std::string unit, int64_t min, int64_t max, std::string doc);

struct ParamValue {
  ParamType type = ParamType::kInt;
  int64_t i = 0;
  double d = 0;
  std::string text;
};

// Parses `text` as `p` declares it: the value, or an InvalidArgument status saying why not
// ("param 'window_ms' must be an integer in ms between 1 and 600000, got 'two'").
absl::StatusOr<ParamValue> parse_param(const ParamInfo& p, const std::string& text);

// A scenario's params, typed, with the declared defaults filled in.
class ParamValues {
 public:
  bool resolved() const { return resolved_; }
  // Given in the scenario or defaulted (false for a derived param left out).
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  // The value of a declared param of that type; std::logic_error for an undeclared name or a
  // type mismatch (a bug in the adapter, not in the scenario).
  int64_t i64(const std::string& name) const;
  int64_t i64_or(const std::string& name, int64_t derived) const { return has(name) ? i64(name) : derived; }
  double num(const std::string& name) const;
  const std::string& text(const std::string& name) const;
  // Derived from Scenario::params, which equality and the digest already compare.
  bool operator==(const ParamValues&) const { return true; }

 private:
  friend ParamValues resolve_params(const std::vector<ParamInfo>& declared, const Scenario& s);
  const ParamValue& at(const std::string& name, ParamType type) const;
  std::map<std::string, ParamValue> values_;
  bool resolved_ = false;
};

// The typed values of `s` (scenario-level params first, then the workloads'), defaults filled in.
// Values must already be valid (the loader checked them): an invalid one throws
// std::invalid_argument naming it.
ParamValues resolve_params(const std::vector<ParamInfo>& declared, const Scenario& s);
// `s` with its config resolved against its system's declaration (unchanged when resolved).
Scenario with_config(const Scenario& s);

// The Markdown table of every system's params (for `faultline list params` and the docs).
std::string params_markdown(const std::vector<const SystemUnderTest*>& systems);

}  // namespace fl
