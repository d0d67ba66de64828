// Reports: the evidence of runs, judged per test-matrix row and variant, written as Markdown, a
// self-contained HTML page, JUnit XML and JSON; and the merge of several JSON reports (shards).
//
// A report is a list of RunRecords (one per scenario × variant, over one or more seeds) plus
// when and on which commit it was produced. Row statuses are DERIVED from the runs, never stored
// as truth: a (row, variant) is PASS when at least one run with evidence covers it and every such
// run's relevant assertions held; FAIL when any of them failed (or the run crashed); NOT_RUN when
// no run covers it. A run "covers" a row when the scenario lists the row in matrix_rows; its
// relevant assertions are the verdicts whose invariants meet the row's invariants (all verdicts
// when none meet). A row whose runs measured figures (an evaluation) and assert none is MEASURED:
// figures, no verdict; a threshold the run declared on a figure is an assertion, and then the row
// is PASS or FAIL. A run without seeds, digest, and assertions or figures is not evidence and is
// ignored.
//
// This library knows nothing of harness/: the harness converts RunResults into RunRecords.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/matrix.h"
#include "reports/timeline.h"

namespace fl::reports {

struct AssertionRecord {
  std::string property;
  std::vector<std::string> invariants;
  bool passed = false;
  std::string assertion;              // what was checked, in words
  int64_t checks = 0;                 // assertions evaluated (summed over seeds)
  std::vector<std::string> evidence;  // the violating operations/events (failing seed)
  int64_t exempted = 0;               // operations left unjudged, each explained by a fault
  int64_t seeds = 0;                  // runs that judged it
  int64_t vacuous_seeds = 0;          // of those, runs where it checked nothing
  bool operator==(const AssertionRecord&) const = default;
  // "PASS", "FAIL", or "VACUOUS" (passed having checked nothing on any seed: never evidence of a
  // PASS, and a sweep of a scenario that names it is not as expected).
  const char* status() const { return !passed ? "FAIL" : checks > 0 ? "PASS" : "VACUOUS"; }
  bool vacuous() const { return passed && checks == 0; }
  // Of the items the property looked at, the share it excused instead of judging.
  double exempted_share() const {
    return checks + exempted > 0 ? static_cast<double>(exempted) / static_cast<double>(checks + exempted) : 0;
  }
  // One seed's verdict folded in (AssertionRecord of a sweep: sums over its seeds).
  void add_seed(int64_t seed_checks, int64_t seed_exempted, bool seed_passed);
};

// A property exempting more than this share of what it looked at is listed in a report's summary:
// its PASS rests on excuses more than on checks.
inline constexpr double kExemptedShareNoted = 0.10;

struct Counterexample {
  uint64_t seed = 0;
  uint64_t fingerprint = 0;
  std::string property;       // the first failed property
  std::string scenario_file;  // the minimal (shrunk) scenario file, when one was written
  std::string scenario_yaml;  // its text, so the report is self-contained
  std::string replay_command;
  std::vector<TimelineEvent> timeline;  // the failing run's trace, filtered (may be empty)
  bool operator==(const Counterexample&) const = default;
};

// Coverage-guided exploration (`faultline explore`): where it stood after a round.
struct CoverageSample {
  int64_t runs = 0;      // runs so far
  int64_t features = 0;  // distinct coverage features reached so far
  int64_t corpus = 0;    // schedules kept
  int64_t findings = 0;  // properties broken so far
  bool operator==(const CoverageSample&) const = default;
};

// A figure a run measured: one value with its unit, under one rule or configuration. It judges
// nothing by itself; a threshold the run declared on it is an AssertionRecord of the same run.
struct FigureRecord {
  std::string key;    // stable name, e.g. "a02_latency_s_p50"
  std::string label;  // in words
  std::string rule;   // the rule version or configuration it was measured under ("" if one)
  double value = 0;
  std::string unit;  // "s", "share", "snapshots", "" (a count)
  bool operator==(const FigureRecord&) const = default;
};

// A chart of a run's data, drawn by the writers as SVG (inline in HTML, a file beside Markdown).
struct ChartSeries {
  std::string name;
  std::vector<double> x, y;  // same length
  bool operator==(const ChartSeries&) const = default;
};
struct ChartRecord {
  std::string id;  // file-name safe, unique within the run
  std::string title, x_label, y_label;
  bool y_inverted = false;  // rank: 1 at the top
  std::vector<ChartSeries> series;
  bool operator==(const ChartRecord&) const = default;
};

struct RunRecord {
  std::string scenario;  // scenario name
  std::string scenario_file;
  std::string system, variant;
  std::vector<std::string> matrix_rows;
  bool expected_pass = true;
  std::vector<std::string> expected_failing;  // properties the scenario expects to fail
  bool expected_any = false;                  // one of them suffices (match: any)
  std::vector<uint64_t> seeds;                // every seed run
  std::vector<uint64_t> failing_seeds;
  uint64_t config_digest = 0;
  uint64_t fingerprint = 0;  // of the first failing seed, else of the first seed
  std::vector<AssertionRecord> assertions;
  std::map<std::string, int64_t> failures_per_property;
  // Per behaviour the system's judges check (SystemRun::behaviours): the seeds that exercised it.
  std::map<std::string, int64_t> behaviour_seeds;
  std::optional<Counterexample> counterexample;
  std::string error;                     // crash / timeout / build error of some seed
  int64_t simulated_us = 0;              // summed over seeds
  double wall_seconds = 0;               // summed over seeds
  std::string produced_at;               // ISO-8601 UTC
  std::string commit;                    // the commit the producing binary was built from (+ "-dirty")
  std::vector<CoverageSample> coverage;  // an exploration's coverage over time (empty otherwise)
  // A real-mode run (a load benchmark against real redis-server and SQLite): the machine it ran
  // on and the command that reruns it. Its timings are that machine's, so it has no trace
  // fingerprint; its seeds are the workload's. Both empty for a simulated run.
  std::string machine;
  std::string command;
  // Figures a run measured and charts of its data (an evaluation); empty for a run that only
  // judges.
  std::vector<FigureRecord> figures;
  std::vector<ChartRecord> charts;
  bool operator==(const RunRecord&) const = default;

  bool real_mode() const { return !machine.empty(); }

  bool passed() const { return failing_seeds.empty() && error.empty(); }
  // The verdicts matched the scenario's `expect:`, and no property the scenario judges was
  // vacuous on every seed (a scenario that names a property must exercise it).
  bool as_expected() const;
  // The properties that checked nothing on any seed.
  std::vector<std::string> vacuous_properties() const;
  // Enough evidence for a row (seeds, digest, and an assertion, an error or a figure).
  bool is_evidence() const;
};

// A named fix of a system's hardened variant and its evidence: the counterexample that fails
// without it (found/without-<FIX>.yaml) and passes, same seed, with it.
struct FixRecord {
  std::string system, id, seed_line, why;
  std::vector<std::string> invariants;
  std::string counterexample;  // scenario file, "" when none was saved
  uint64_t seed = 0;
  uint64_t fingerprint = 0;    // of the run without the fix
  std::string property;        // what fails without the fix
  bool fails_without = false;  // the counterexample reproduced
  bool passes_with = false;    // every property passed with the fix restored
  std::string replay_command;
  bool operator==(const FixRecord&) const = default;
  // Its counterexample fails without the fix and passes with it.
  bool proven() const { return !counterexample.empty() && fails_without && passes_with; }
  // "PROVEN", "NO_COUNTEREXAMPLE", or "NOT_REPRODUCED".
  const char* status() const {
    if (counterexample.empty()) return "NO_COUNTEREXAMPLE";
    return proven() ? "PROVEN" : "NOT_REPRODUCED";
  }
};

struct Report {
  std::string title = "faultline report";
  std::string produced_at;            // ISO-8601 UTC
  std::string commit;                 // the commit the producing binary was built from (+ "-dirty")
  std::vector<std::string> matrices;  // selected matrices ("all" or names)
  // The test-matrix rows the report judges: every row of the producing binary's systems
  // (harness/matrix_rows.h), carried in the report so that a merged or re-read report judges the
  // same rows.
  std::vector<MatrixRow> rows;
  std::vector<RunRecord> runs;
  std::vector<FixRecord> fixes;  // the named fixes of the reported systems, with evidence
  bool operator==(const Report&) const = default;
};

// A row whose relevant assertions all held but checked nothing is VACUOUS, never PASS; a row whose
// runs measured figures and asserted nothing is MEASURED.
enum class RowStatus { kNotRun, kPass, kFail, kVacuous, kMeasured };
inline constexpr int kRowStatuses = 5;
const char* row_status_name(RowStatus s);  // "NOT_RUN" | "PASS" | "FAIL" | "VACUOUS" | "MEASURED"

struct RowVerdict {
  const MatrixRow* row = nullptr;
  std::string variant;
  RowStatus status = RowStatus::kNotRun;
  std::vector<size_t> runs;  // indices into Report::runs that cover the row
  std::vector<std::string> failed_properties;
};

// One verdict per (row of the report's matrices) × variant ("spec", "hardened"), registry order.
std::vector<RowVerdict> judge_rows(const Report& report);

// Writers. Each returns the document text; write_report_files writes report.md, report.html,
// junit.xml, report.json and summary.md into `dir` (created if missing), and one page per
// counterexample under dir/counterexamples/ (its replay command, shrunk scenario, Mermaid and SVG
// sequence diagrams); it returns "" or an error message.
std::string to_markdown(const Report& report);
// A Markdown summary for a pull-request comment or a CI job summary: counts per system and
// variant, the unexpected results, the failing rows and the named fixes; at most max_bytes.
std::string to_summary_markdown(const Report& report, size_t max_bytes = 64 * 1024);
std::string to_html(const Report& report);
std::string to_junit_xml(const Report& report);
std::string to_json(const Report& report);
std::string write_report_files(const Report& report, const std::string& dir);
// The Markdown page of one run's counterexample (REQUIRES: r.counterexample).
std::string counterexample_markdown(const RunRecord& r);

// Parses a report.json written by to_json. Returns nullopt and sets *error on malformed input.
std::optional<Report> report_from_json(const std::string& text, std::string* error);

// Merges shards: runs of the same (scenario, variant, config digest) are combined (seeds,
// failures and times summed, the first counterexample kept); the others appended. produced_at
// and commit are taken from `now`/`commit`; shards from different commits are listed in the
// title note. Matrices are unioned.
Report merge_reports(const std::vector<Report>& shards, const std::string& now, const std::string& commit);

// Exit code for a report: 0 every run as expected and every saved fix counterexample proven,
// 1 otherwise.
int report_exit_code(const Report& report);

}  // namespace fl::reports
