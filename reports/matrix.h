// The test-matrix registry: every row the seed designs define, with its pass condition (in
// English), the invariant ids of docs/invariants.md it checks and the seed section it comes
// from. A scenario file names the rows it gives evidence for (`matrix_rows:`); the loader rejects
// ids that are not here, and the report writers list every row of a matrix, NOT_RUN when no run
// gives evidence for it.
//
// Matrices: "ranking" (doc 004 §16: C01–C33, F01–F15, A01–A07, P01–P10), "combo" (doc 000 §1.4
// goals COMBO-G1..G5, §9.1 units COMBO-U1..U3, §9.2 integration table COMBO-T1..T7, §9.3 front
// end COMBO-F1..F3), "likes" (doc 002), "gifts" (doc 003) and "demo" (the kernel demo).
#pragma once

#include <string>
#include <vector>

namespace fl::reports {

struct MatrixRow {
  std::string id;                       // "C01", "COMBO-T2", "DEMO-1"; unique across matrices
  std::string matrix;                   // "ranking" | "combo" | "likes" | "gifts" | "demo"
  std::string group;                    // "correctness", "fault drill", "algorithm", "capacity", ...
  std::string scenario;                 // what the row exercises, one line
  std::string pass_condition;           // what must hold for PASS, translated from the seed
  std::vector<std::string> invariants;  // INVARIANTS.md ids; may be empty (metrics plans)
  std::string source;                   // "004 §16.1 L420"
  bool assertable = true;               // false: a metric plan with no pass/fail check (A/P rows mostly)
};

// Every row, in matrix then document order. The vector lives for the whole program.
const std::vector<MatrixRow>& all_matrix_rows();
// nullptr when `id` is unknown. Case-sensitive.
const MatrixRow* find_matrix_row(const std::string& id);
// Sorted distinct matrix names.
std::vector<std::string> matrix_names();
// Rows of `matrix` ("all": every row), in registry order. Empty for an unknown name.
std::vector<const MatrixRow*> rows_of_matrix(const std::string& matrix);

// The candidate closest to `word` by edit distance, or "" when none is close enough to be a
// plausible typo (distance > max(2, |word|/3)). Used for "did you mean" hints.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace fl::reports
