// A test-matrix row: one row a seed design defines, with its pass condition (in English), the
// invariant ids it checks and the seed section it comes from. A scenario file names the rows it
// gives evidence for (`matrix_rows:`); the report writers list every row of a report's matrices,
// NOT_RUN when no run gives evidence for it.
//
// The rows are data beside each system (harness/systems/<system>/matrix.yaml, compiled in by
// fl_system); the harness reads them (harness/matrix_rows.h) and hands a report the rows it judges
// (Report::rows). reports/ holds no rows of its own: the functions below search the rows given.
#pragma once

#include <string>
#include <vector>

namespace fl::reports {

struct MatrixRow {
  std::string id;                       // "C01", "COMBO-T2", "DEMO-1"; unique across matrices
  std::string matrix;                   // the system's name: "ranking", "combo", ...
  std::string group;                    // "correctness", "fault drill", "algorithm", "capacity", ...
  std::string scenario;                 // what the row exercises, one line
  std::string pass_condition;           // what must hold for PASS, translated from the seed
  std::vector<std::string> invariants;  // docs/invariants.md ids; may be empty (metrics plans)
  std::string source;                   // "004 §16.1 L420"
  bool assertable = true;               // false: a metric plan with no pass/fail check (A/P rows mostly)
  bool operator==(const MatrixRow&) const = default;
};

// nullptr when `id` is not among `rows`. Case-sensitive.
const MatrixRow* find_matrix_row(const std::vector<MatrixRow>& rows, const std::string& id);
// Sorted distinct matrix names of `rows`.
std::vector<std::string> matrix_names(const std::vector<MatrixRow>& rows);
// The rows of `matrix` ("all": every row), in the order given. Empty for an unknown name.
std::vector<const MatrixRow*> rows_of_matrix(const std::vector<MatrixRow>& rows, const std::string& matrix);

// The candidate closest to `word` by edit distance, or "" when none is close enough to be a
// plausible typo (distance > max(2, |word|/3)). Used for "did you mean" hints.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace fl::reports
