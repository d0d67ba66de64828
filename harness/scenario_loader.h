// Scenario files: YAML -> Scenario (validated), Scenario -> canonical YAML, and the digest.
//
// Contract
// - load_scenario_text/file never throw and never run anything. On any problem they return no
//   scenario and one Diagnostic per problem found (all of them, not only the first), each with
//   the 1-based line and column of the offending node: malformed YAML, an unknown key, a wrong
//   type, an out-of-range value, an unknown system / variant / property / workload kind / param /
//   fault kind / matrix row. Names are validated against the system registry (system.h) and the
//   matrix registry (reports/matrix.h); hints suggest the closest valid name.
// - scenario_to_yaml() prints every field in a fixed order (the canonical form), and
//   load(scenario_to_yaml(s)) == s for every valid s (source_file aside: it is the file name).
// - scenario_digest() (declared in scenario.h) hashes the canonical YAML without seed and
//   source_file: the report's "config digest".
// The format is documented in docs/scenario-format.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario.h"
#include "harness/system.h"

namespace fl {

struct Diagnostic {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based; 0 when unknown
  std::string message;
  std::string hint;  // "" or e.g. "did you mean 'replicas'?"
  // "file:line:column: error: message (hint: ...)"
  std::string to_string() const;
};

struct LoadOptions {
  // Systems to validate against; nullptr means the compiled-in registry all_systems().
  const std::vector<const SystemUnderTest*>* systems = nullptr;
  // Check matrix_rows against reports/matrix.h (and that each row belongs to the system).
  bool validate_matrix_rows = true;
};

struct LoadResult {
  std::optional<Scenario> scenario;  // set iff errors is empty
  std::vector<Diagnostic> errors;
  bool ok() const { return scenario.has_value(); }
  // Every diagnostic, one per line.
  std::string error_text() const;
};

LoadResult load_scenario_text(std::string_view yaml, const std::string& filename, const LoadOptions& options = {});
LoadResult load_scenario_file(const std::string& path, const LoadOptions& options = {});
// For the commands: the scenario, or nullopt after printing every diagnostic to stderr.
std::optional<Scenario> load_scenario_or_print(const std::string& path);

// The canonical YAML form of `s` (every field, fixed order, strings double-quoted).
std::string scenario_to_yaml(const Scenario& s);

// Names the loader accepts for `faults[].kind` (= scheduled_fault_kinds() of harness/faults.h,
// what the fault injector implements; `swarm.kinds` are checked against swarm_fault_kinds()),
// and for `workload[].distribution`.
const std::vector<std::string>& known_fault_kinds();
const std::vector<std::string>& known_distributions();

}  // namespace fl
