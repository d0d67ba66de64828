// The test-matrix rows of every system compiled into faultline, read from the matrix.yaml each
// system declares beside its adapter (fl_system in harness/systems/<name>/CMakeLists.txt).
//
// A matrix file is a map with `matrix:` (the system's name) and `rows:`, a list of maps with keys
// id, group, scenario, pass, invariants (a list, may be empty), source and, optionally,
// assertable (default true). Ids are unique across all systems. docs/adding-a-system.md shows one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "reports/matrix.h"

namespace fl {

// Parses one system's matrix text. Errors name `file:line:column` and what is wrong: a missing or
// unknown key, a `matrix:` other than `system`, an empty id or a repeated one.
absl::StatusOr<std::vector<reports::MatrixRow>> parse_matrix_rows(const std::string& system, const std::string& file,
                                                                  std::string_view yaml);

// Every declared system's rows, systems by name, rows in file order. Built once; a matrix file
// that does not parse, or an id two systems share, stops the program with the error (the data is
// compiled in: CTest's MatrixRows tests catch it before any user does).
const std::vector<reports::MatrixRow>& all_matrix_rows();

// One declared system's rows, parsed at their first use (nullptr for an unknown system): what a
// scenario's `matrix_rows:` are checked against first, without parsing every system's matrix.
const std::vector<reports::MatrixRow>* matrix_rows_of_system(const std::string& system);

// The registry's rows searched by id / by matrix ("all": every row) / their matrix names.
const reports::MatrixRow* find_matrix_row(const std::string& id);
std::vector<const reports::MatrixRow*> rows_of_matrix(const std::string& matrix);
std::vector<std::string> matrix_names();

}  // namespace fl
