// Shared pieces of the report writers (Markdown, HTML, JUnit, the PR summary): how a report's
// runs, rows and fixes are named, counted and capped. Internal to reports/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "reports/report.h"

namespace fl::reports {

// Evidence lines shown per property on a page; the full list is in report.json.
inline constexpr size_t kEvidenceShown = 5;

// The assertions of `run` that speak for `row` (report.h's contract).
std::vector<const AssertionRecord*> relevant(const RunRecord& run, const MatrixRow& row);
// The matrices a report covers ("all" expands to every registered matrix by the callers).
std::vector<std::string> selected_matrices(const Report& r);
// "spec", "hardened", then any other variant the runs use.
std::vector<std::string> variants_of(const Report& r);
std::string seeds_text(const std::vector<uint64_t>& seeds, size_t max_shown = 12);
std::string join(const std::vector<std::string>& v, const std::string& sep);
// "a, b" or "one of a, b" (match: any).
std::string expected_text(const RunRecord& r);
// Stable anchors: "run-<i>" for a run's evidence, "ev-<row>-<variant>" for a row.
std::string run_anchor(size_t run_index);
std::string row_anchor(const RowVerdict& v);
// The counterexample file of a run, relative to the report's directory ("" if none).
std::string counterexample_page(const RunRecord& r);

// Row statuses counted per (matrix, variant), in registry order.
struct Tally {
  std::string matrix, variant;
  size_t count[kRowStatuses] = {};  // by RowStatus: NOT_RUN, PASS, FAIL, VACUOUS, MEASURED
};
std::vector<Tally> tally_rows(const std::vector<RowVerdict>& rows);
// Runs whose verdicts did not match their scenario's expectation, in report order.
std::vector<size_t> unexpected_runs(const Report& report);
// The properties a run failed (failures_per_property > 0), "<error>" first when it crashed.
std::vector<std::string> failed_properties_of(const RunRecord& r);
// What made an unexpected run unexpected, besides its failures: "" or "vacuous on every seed: p, q".
std::string vacuity_text(const RunRecord& r);

// A property of a run that exempted more than kExemptedShareNoted of what it looked at.
struct HeavyExemption {
  size_t run = 0;  // index in Report::runs
  const AssertionRecord* assertion = nullptr;
};
std::vector<HeavyExemption> heavy_exemptions(const Report& report);
// "12.5 %"
std::string share_text(double share);
// A figure's value with its unit: "12.5 %" (share), "120 s", "9.0 snapshots", "34" (a count).
std::string figure_text(const FigureRecord& f);
// A run's figures as a table: one row per figure key (first appearance order), one column per rule
// ("value" when a figure has none), each cell figure_text or "" when that rule has no such figure.
struct FigureTable {
  struct Row {
    std::string key, label;
    std::vector<std::string> cells;  // one per column
  };
  std::vector<std::string> columns;
  std::vector<Row> rows;
};
FigureTable figure_table(const RunRecord& r);
// "PASS" or "FAIL" for a run that judged, "MEASURED" for one that only measured figures.
const char* run_status(const RunRecord& r);

}  // namespace fl::reports
