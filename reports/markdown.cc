// The Markdown report and the pull-request summary. Order: what a team reads first (the counts
// per system and variant, the unexpected results, the failing rows, the named fixes), then the
// full matrix, then each run's evidence once (capped per property; report.json has it all).
#include <algorithm>
#include <cstdint>
#include <sstream>

#include "reports/charts.h"
#include "reports/json.h"
#include "reports/report.h"
#include "reports/report_text.h"

namespace fl::reports {

namespace {

void write_summary_table(std::ostream& o, const Report& report, const std::vector<RowVerdict>& rows) {
  o << "## Summary\n\n| system | variant | PASS | FAIL | VACUOUS | MEASURED | NOT_RUN "
       "|\n|---|---|---|---|---|---|---|\n";
  for (const Tally& t : tally_rows(rows)) {
    o << "| " << t.matrix << " | " << t.variant << " | " << t.count[1] << " | " << t.count[2] << " | " << t.count[3]
      << " | " << t.count[4] << " | " << t.count[0] << " |\n";
  }
  size_t proven = 0;
  for (const FixRecord& x : report.fixes) proven += x.proven() ? 1 : 0;
  o << "\n"
    << report.runs.size() << " scenario runs, " << unexpected_runs(report).size()
    << " not as expected. Named fixes: " << proven << " of " << report.fixes.size()
    << " proven needed. A row is PASS or FAIL only with evidence; VACUOUS: it checked nothing; MEASURED: figures "
       "without a declared threshold.\n\n";
}

// The properties whose verdict rests on excuses more than on checks: over 10 % of what they looked
// at was exempted by an injected fault.
void write_heavy_exemptions(std::ostream& o, const Report& report, size_t max_items) {
  const std::vector<HeavyExemption> heavy = heavy_exemptions(report);
  o << "## Properties exempting more than 10 %\n\n";
  if (heavy.empty()) o << "None: every property judged at least 90 % of what it looked at.\n";
  for (size_t k = 0; k < heavy.size() && k < max_items; ++k) {
    const RunRecord& r = report.runs[heavy[k].run];
    const AssertionRecord& a = *heavy[k].assertion;
    o << "- `" << a.property << "` in `" << r.scenario_file << "` (" << r.variant << "): " << a.exempted
      << " exempted, " << a.checks << " checks (" << share_text(a.exempted_share()) << ") ([evidence](#"
      << run_anchor(heavy[k].run) << "))\n";
  }
  if (heavy.size() > max_items) o << "- ... " << heavy.size() - max_items << " more\n";
  o << "\n";
}

void write_unexpected(std::ostream& o, const Report& report, size_t max_items) {
  const std::vector<size_t> bad = unexpected_runs(report);
  o << "## Unexpected results\n\n";
  if (bad.empty()) o << "None: every run matched its scenario's expectation.\n";
  for (size_t k = 0; k < bad.size() && k < max_items; ++k) {
    const RunRecord& r = report.runs[bad[k]];
    o << "- `" << r.scenario_file << "` (" << r.variant << "): expected "
      << (r.expected_pass ? "pass" : "fail " + expected_text(r))
      << ", failed: " << (r.passed() ? "nothing" : join(failed_properties_of(r), ", "));
    if (!vacuity_text(r).empty()) o << "; " << vacuity_text(r);
    if (!r.failing_seeds.empty()) o << "; first failing seed " << r.failing_seeds.front();
    if (r.counterexample) o << "; replay `" << r.counterexample->replay_command << "`";
    o << " ([evidence](#" << run_anchor(bad[k]) << "))\n";
  }
  if (bad.size() > max_items) o << "- ... " << bad.size() - max_items << " more\n";
  o << "\n";
}

void write_failing_rows(std::ostream& o, const Report& report, const std::vector<RowVerdict>& rows, size_t max_items) {
  o << "## Failing rows\n\n";
  size_t shown = 0, total = 0;
  for (const RowVerdict& v : rows) {
    if (v.status != RowStatus::kFail) continue;
    if (++total > max_items) continue;
    if (++shown == 1) o << "| row | variant | failed properties | expected | evidence |\n|---|---|---|---|---|\n";
    bool expected = true;
    for (size_t i : v.runs) expected = expected && report.runs[i].as_expected();
    o << "| " << v.row->id << " | " << v.variant << " | " << join(v.failed_properties, ", ") << " | "
      << (expected ? "yes" : "**no**") << " | [run](#" << run_anchor(v.runs.front()) << ") |\n";
  }
  if (total == 0) o << "None.\n";
  if (total > shown) o << "\n... " << total - shown << " more failing rows (see the matrix).\n";
  o << "\n";
}

void write_fixes(std::ostream& o, const std::vector<FixRecord>& fixes, bool full) {
  if (fixes.empty()) return;
  o << "## Named fixes: why hardened departs from each seed\n\n"
       "Each fix is needed: its counterexample fails without it and passes, same seed, with it.\n\n";
  if (!full) {
    o << "| system | fix | invariants | without it | status |\n|---|---|---|---|---|\n";
    for (const FixRecord& x : fixes) {
      o << "| " << x.system << " | " << x.id << " | " << join(x.invariants, ", ") << " | "
        << (x.property.empty() ? "-" : x.property) << " | " << x.status() << " |\n";
    }
    o << "\n";
    return;
  }
  o << "| system | fix | seed line | invariants | why | without it | evidence | status |\n"
       "|---|---|---|---|---|---|---|---|\n";
  for (const FixRecord& x : fixes) {
    o << "| " << x.system << " | " << x.id << " | " << x.seed_line << " | " << join(x.invariants, ", ") << " | "
      << x.why << " | " << (x.property.empty() ? "-" : x.property) << " | ";
    if (x.counterexample.empty())
      o << "none saved";
    else
      o << "`" << x.counterexample << "` seed " << x.seed << ", fingerprint `" << hex16(x.fingerprint) << "`";
    o << " | " << x.status() << " |\n";
  }
  o << "\n";
}

void write_matrix(std::ostream& o, const std::vector<RowVerdict>& rows, const std::vector<std::string>& variants) {
  o << "## Matrix\n\n| row | scenario | pass condition | invariants | source |";
  for (const std::string& v : variants) o << " " << v << " |";
  o << "\n|---|---|---|---|---|";
  for (size_t i = 0; i < variants.size(); ++i) o << "---|";
  o << "\n";
  for (size_t i = 0; i < rows.size(); i += variants.size()) {
    const MatrixRow& r = *rows[i].row;
    o << "| " << r.id << " | " << r.scenario << " | " << r.pass_condition << " | " << join(r.invariants, ", ") << " | "
      << r.source << " |";
    for (size_t k = 0; k < variants.size(); ++k) {
      const RowVerdict& v = rows[i + k];
      if (v.status == RowStatus::kNotRun)
        o << " NOT_RUN |";
      else
        o << " [" << row_status_name(v.status) << "](#" << run_anchor(v.runs.front()) << ") |";
    }
    o << "\n";
  }
  o << "\n";
}

void write_assertion(std::ostream& o, const AssertionRecord& a) {
  o << "  - " << a.status() << " `" << a.property << "` (" << join(a.invariants, ", ") << "), " << a.checks
    << " checks";
  if (a.exempted > 0) {
    o << ", " << a.exempted << " exempted (" << share_text(a.exempted_share()) << ", explained by injected faults)";
  }
  if (a.vacuous_seeds > 0) o << ", vacuous on " << a.vacuous_seeds << " of " << a.seeds << " seeds";
  o << ": " << a.assertion << "\n";
  for (size_t e = 0; e < a.evidence.size() && e < kEvidenceShown; ++e) o << "    - " << a.evidence[e] << "\n";
  if (a.evidence.size() > kEvidenceShown) {
    o << "    - ... " << a.evidence.size() - kEvidenceShown << " more (report.json has every line)\n";
  }
}

// An exploration's coverage over time, at most ten rows.
void write_coverage(std::ostream& o, const std::vector<CoverageSample>& series) {
  o << "- coverage over time:\n\n  | runs | features | corpus | properties broken |\n  |---|---|---|---|\n";
  const size_t step = std::max<size_t>(1, (series.size() + 9) / 10);
  for (size_t i = 0; i < series.size(); i += step) {
    const CoverageSample& c = i + step >= series.size() ? series.back() : series[i];
    o << "  | " << c.runs << " | " << c.features << " | " << c.corpus << " | " << c.findings << " |\n";
    if (&c == &series.back()) break;
  }
  o << "\n";
}

// A run's figures, one row per figure and one column per rule, and links to its charts' files.
void write_figures(std::ostream& o, const RunRecord& r, size_t index) {
  const FigureTable t = figure_table(r);
  o << "\n  | figure |";
  for (const std::string& c : t.columns) o << " " << c << " |";
  o << "\n  |---|";
  for (size_t i = 0; i < t.columns.size(); ++i) o << "---|";
  o << "\n";
  for (const FigureTable::Row& row : t.rows) {
    o << "  | " << row.label << " (`" << row.key << "`) |";
    for (const std::string& cell : row.cells) o << " " << cell << " |";
    o << "\n";
  }
  o << "\n";
  for (const ChartRecord& c : r.charts) o << "- chart: [" << c.title << "](" << chart_file(index, c) << ")\n";
}

void write_run(std::ostream& o, const RunRecord& r, size_t index) {
  const std::string status = run_status(r);
  o << "\n<a id=\"" << run_anchor(index) << "\"></a>\n### " << r.scenario << " (" << r.system << " / " << r.variant
    << "): "
    << (status == "MEASURED" ? "measured"
        : r.passed()         ? "passed"
                             : "failed")
    << (r.as_expected() ? ", as expected" : ", **NOT as expected**") << "\n\n- scenario `" << r.scenario_file
    << "`; rows " << join(r.matrix_rows, ", ") << "\n- seeds " << seeds_text(r.seeds) << "; failing seeds "
    << seeds_text(r.failing_seeds) << "\n- config digest `" << hex16(r.config_digest) << "`, ";
  if (r.real_mode())
    o << "real mode on " << r.machine << " (timings are this machine's: no trace fingerprint), command `" << r.command
      << "`";
  else
    o << "trace fingerprint `" << hex16(r.fingerprint) << "`"
      << (r.command.empty() ? "" : ", command `" + r.command + "`");
  o << ", produced " << r.produced_at << " at `" << r.commit << "`\n- expected "
    << (r.expected_pass ? "pass" : "fail " + expected_text(r)) << "\n";
  if (!r.error.empty()) o << "- error: " << r.error << "\n";
  if (!r.coverage.empty()) write_coverage(o, r.coverage);
  if (!r.figures.empty()) write_figures(o, r, index);
  for (const auto& [b, n] : r.behaviour_seeds) {
    o << "- behaviour " << b << ": " << n << " of " << r.seeds.size() << " seeds\n";
  }
  for (const AssertionRecord& a : r.assertions) write_assertion(o, a);
  if (r.counterexample) {
    o << "- minimal counterexample: seed " << r.counterexample->seed << ", property " << r.counterexample->property
      << ", replay: `" << r.counterexample->replay_command << "`; scenario, trace diagram: [" << counterexample_page(r)
      << "](" << counterexample_page(r) << ")\n";
  }
}

}  // namespace

std::string to_markdown(const Report& report) {
  std::ostringstream o;
  const std::vector<RowVerdict> rows = judge_rows(report);
  o << "# " << report.title << "\n\nProduced " << report.produced_at << " at commit `" << report.commit
    << "`. Matrices: " << join(selected_matrices(report), ", ") << ".\n\n";
  write_summary_table(o, report, rows);
  write_unexpected(o, report, SIZE_MAX);
  write_heavy_exemptions(o, report, SIZE_MAX);
  write_failing_rows(o, report, rows, SIZE_MAX);
  write_fixes(o, report.fixes, true);
  write_matrix(o, rows, variants_of(report));
  o << "## Runs: the evidence\n";
  for (size_t i = 0; i < report.runs.size(); ++i) write_run(o, report.runs[i], i);
  return o.str();
}

std::string to_summary_markdown(const Report& report, size_t max_bytes) {
  const std::vector<RowVerdict> rows = judge_rows(report);
  // Fewer listed items until it fits: the counts always do.
  for (size_t items : {size_t{200}, size_t{50}, size_t{10}, size_t{0}}) {
    std::ostringstream o;
    o << "# " << report.title << "\n\nCommit `" << report.commit << "`, " << report.produced_at << ".\n\n";
    write_summary_table(o, report, rows);
    write_unexpected(o, report, items);
    write_heavy_exemptions(o, report, items);
    write_failing_rows(o, report, rows, items);
    if (items > 0) write_fixes(o, report.fixes, false);
    o << "Full report: report.md / report.html; every evidence line: report.json.\n";
    if (o.str().size() <= max_bytes || items == 0) {
      std::string text = o.str();
      if (text.size() > max_bytes) text = text.substr(0, max_bytes - 32) + "\n... (truncated)\n";
      return text;
    }
  }
  return "";
}

}  // namespace fl::reports
