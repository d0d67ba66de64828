// The self-contained HTML report: the same order as the Markdown one (summary, unexpected
// results, failing rows, named fixes, matrix, runs), with filters by system, variant and status,
// evidence folded per run, and each counterexample's sequence diagram embedded as SVG.
#include <algorithm>
#include <map>
#include <sstream>

#include "reports/json.h"
#include "reports/charts.h"
#include "reports/report.h"
#include "reports/report_text.h"
#include "reports/timeline.h"

namespace fl::reports {

namespace {

// Timeline events drawn inline per counterexample (the full diagram is in counterexamples/), and
// evidence lines shown per failing property (report.json and the Markdown report have more).
constexpr size_t kInlineDiagramEvents = 20;
constexpr size_t kHtmlEvidenceShown = 3;

// The inline window of a counterexample's timeline: the kInlineDiagramEvents events that end at
// the first violation (the last ones when none is marked), since the events leading to the
// failure say more than the boot events at the start.
std::vector<TimelineEvent> inline_window(const std::vector<TimelineEvent>& timeline) {
  size_t end = timeline.size();
  for (size_t i = 0; i < timeline.size(); ++i) {
    if (timeline[i].kind == "violation") {
      end = i + 1;
      break;
    }
  }
  const size_t begin = end > kInlineDiagramEvents ? end - kInlineDiagramEvents : 0;
  return {timeline.begin() + static_cast<std::ptrdiff_t>(begin), timeline.begin() + static_cast<std::ptrdiff_t>(end)};
}

const char* kCss = R"(body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:12px 0}th,td{border:1px solid #ccc;padding:4px 8px;
vertical-align:top;font-size:13px}th{background:#f0f3f7}.PASS{background:#c8efc8}
.FAIL{background:#f6c4c0}.NOT_RUN{background:#eee;color:#777}.VACUOUS{background:#f6e7b0}.MEASURED{background:#cfe3f6}
td.status a{color:inherit;font-weight:bold}pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px}
.meta{color:#555}details.run{border-top:2px solid #ccd;margin-top:12px;padding-top:6px}
details.run>summary{cursor:pointer;font-weight:600}.timeline-box{overflow:auto;max-height:600px;border:1px solid #ddd}
#filters label{margin-right:16px})";

// Hides matrix rows and runs that do not match the selected system, variant and status.
const char* kFilterJs = R"(function flFilter(){var s=document.getElementById('f-system').value,
v=document.getElementById('f-variant').value,st=document.getElementById('f-status').value;
document.querySelectorAll('#matrix tbody tr').forEach(function(tr){var ok=s===''||tr.dataset.system===s;
if(ok&&st!==''){var vs=v===''?tr.dataset.variants.split(' '):[v];ok=vs.some(function(x){return tr.getAttribute('data-'+x)===st;});}
tr.style.display=ok?'':'none';});
document.querySelectorAll('details.run').forEach(function(d){var ok=(s===''||d.dataset.system===s)&&
(v===''||d.dataset.variant===v)&&(st===''||d.dataset.status===st);d.style.display=ok?'':'none';});})";

std::string esc(const std::string& s) { return xml_escape(s); }

// One evidence line as the page shows it: at most kEvidenceChars bytes, cut at a UTF-8 character
// boundary (report.json has the whole line).
constexpr size_t kEvidenceChars = 160;
std::string clipped(const std::string& s) {
  if (s.size() <= kEvidenceChars) return s;
  size_t n = kEvidenceChars;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "\u2026";
}

void write_summary(std::ostream& o, const Report& report, const std::vector<RowVerdict>& rows) {
  o << "<h2 id=\"summary\">Summary</h2>\n<table><tr><th>system</th><th>variant</th><th>PASS</th><th>FAIL</th>"
       "<th>VACUOUS</th><th>MEASURED</th><th>NOT_RUN</th></tr>\n";
  for (const Tally& t : tally_rows(rows)) {
    o << "<tr><td>" << esc(t.matrix) << "</td><td>" << esc(t.variant) << "</td><td class=\"PASS\">" << t.count[1]
      << "</td><td class=\"FAIL\">" << t.count[2] << "</td><td class=\"VACUOUS\">" << t.count[3]
      << "</td><td class=\"MEASURED\">" << t.count[4] << "</td><td class=\"NOT_RUN\">" << t.count[0] << "</td></tr>\n";
  }
  size_t proven = 0;
  for (const FixRecord& x : report.fixes) proven += x.proven() ? 1 : 0;
  o << "</table>\n<p>" << report.runs.size() << " scenario runs, " << unexpected_runs(report).size()
    << " not as expected. Named fixes: " << proven << " of " << report.fixes.size()
    << " proven needed. A row is PASS or FAIL only with evidence; VACUOUS: it checked nothing; MEASURED: figures "
       "without a declared threshold.</p>\n";
}

void write_unexpected(std::ostream& o, const Report& report) {
  const std::vector<size_t> bad = unexpected_runs(report);
  o << "<h2 id=\"unexpected\">Unexpected results</h2>\n";
  if (bad.empty()) {
    o << "<p>None: every run matched its scenario's expectation.</p>\n";
    return;
  }
  o << "<ul>\n";
  for (size_t i : bad) {
    const RunRecord& r = report.runs[i];
    o << "<li><a href=\"#" << run_anchor(i) << "\"><code>" << esc(r.scenario_file) << "</code></a> (" << esc(r.variant)
      << "): expected " << esc(r.expected_pass ? "pass" : "fail " + expected_text(r))
      << ", failed: " << esc(r.passed() ? "nothing" : join(failed_properties_of(r), ", "))
      << esc(vacuity_text(r).empty() ? "" : "; " + vacuity_text(r)) << "</li>\n";
  }
  o << "</ul>\n";
}

void write_heavy_exemptions(std::ostream& o, const Report& report) {
  const std::vector<HeavyExemption> heavy = heavy_exemptions(report);
  o << "<h2 id=\"exemptions\">Properties exempting more than 10 %</h2>\n";
  if (heavy.empty()) {
    o << "<p>None: every property judged at least 90 % of what it looked at.</p>\n";
    return;
  }
  o << "<table><tr><th>property</th><th>scenario</th><th>variant</th><th>exempted</th><th>checks</th><th>share</th></"
       "tr>\n";
  for (const HeavyExemption& h : heavy) {
    const RunRecord& r = report.runs[h.run];
    o << "<tr><td>" << esc(h.assertion->property) << "</td><td><a href=\"#" << run_anchor(h.run) << "\"><code>"
      << esc(r.scenario_file) << "</code></a></td><td>" << esc(r.variant) << "</td><td>" << h.assertion->exempted
      << "</td><td>" << h.assertion->checks << "</td><td>" << share_text(h.assertion->exempted_share())
      << "</td></tr>\n";
  }
  o << "</table>\n";
}

void write_failing_rows(std::ostream& o, const Report& report, const std::vector<RowVerdict>& rows) {
  o << "<h2 id=\"failing\">Failing rows</h2>\n<table><tr><th>row</th><th>variant</th><th>failed properties</th>"
       "<th>expected</th></tr>\n";
  for (const RowVerdict& v : rows) {
    if (v.status != RowStatus::kFail) continue;
    bool expected = true;
    for (size_t i : v.runs) expected = expected && report.runs[i].as_expected();
    o << "<tr><td><a href=\"#" << run_anchor(v.runs.front()) << "\">" << esc(v.row->id) << "</a></td><td>"
      << esc(v.variant) << "</td><td>" << esc(join(v.failed_properties, ", ")) << "</td><td>"
      << (expected ? "yes" : "<b>no</b>") << "</td></tr>\n";
  }
  o << "</table>\n";
}

void write_fixes(std::ostream& o, const std::vector<FixRecord>& fixes) {
  if (fixes.empty()) return;
  o << "<h2 id=\"fixes\">Named fixes: why hardened departs from each seed</h2>\n<p>Each fix is needed: its "
       "counterexample fails without it and passes, same seed, with it.</p>\n<table><tr><th>system</th><th>fix</th>"
       "<th>seed line</th><th>invariants</th><th>why</th><th>without it</th><th>evidence</th><th>status</th></tr>\n";
  for (const FixRecord& x : fixes) {
    const char* cls = x.proven() ? "PASS" : "FAIL";
    o << "<tr><td>" << esc(x.system) << "</td><td>" << esc(x.id) << "</td><td>" << esc(x.seed_line) << "</td><td>"
      << esc(join(x.invariants, ", ")) << "</td><td>" << esc(x.why) << "</td><td>"
      << esc(x.property.empty() ? "-" : x.property) << "</td><td>";
    if (x.counterexample.empty())
      o << "none saved";
    else
      o << "<code>" << esc(x.counterexample) << "</code> seed " << x.seed << ", fingerprint <code>"
        << hex16(x.fingerprint) << "</code>";
    o << "</td><td class=\"" << cls << "\">" << x.status() << "</td></tr>\n";
  }
  o << "</table>\n";
}

void write_filters(std::ostream& o, const std::vector<RowVerdict>& rows, const std::vector<std::string>& variants) {
  std::vector<std::string> systems;
  for (const RowVerdict& v : rows) {
    if (std::find(systems.begin(), systems.end(), v.row->matrix) == systems.end()) systems.push_back(v.row->matrix);
  }
  o << "<p id=\"filters\"><label>system <select id=\"f-system\" onchange=\"flFilter()\"><option "
       "value=\"\">all</option>";
  for (const std::string& s : systems) o << "<option>" << esc(s) << "</option>";
  o << "</select></label><label>variant <select id=\"f-variant\" onchange=\"flFilter()\"><option "
       "value=\"\">all</option>";
  for (const std::string& v : variants) o << "<option>" << esc(v) << "</option>";
  o << "</select></label><label>status <select id=\"f-status\" onchange=\"flFilter()\"><option value=\"\">all</option>"
       "<option>PASS</option><option>FAIL</option><option>VACUOUS</option><option>MEASURED</option><option>NOT_RUN</"
       "option></select></label></"
       "p>\n";
}

void write_matrix(std::ostream& o, const std::vector<RowVerdict>& rows, const std::vector<std::string>& variants) {
  o << "<h2 id=\"matrix-title\">Matrix</h2>\n";
  write_filters(o, rows, variants);
  o << "<table id=\"matrix\"><thead><tr><th>row</th><th>matrix</th><th>scenario</th><th>pass condition</th>"
       "<th>invariants</th><th>source</th>";
  for (const std::string& v : variants) o << "<th>" << esc(v) << "</th>";
  o << "</tr></thead><tbody>\n";
  for (size_t i = 0; i < rows.size(); i += variants.size()) {
    const MatrixRow& r = *rows[i].row;
    o << "<tr id=\"row-" << esc(r.id) << "\" data-system=\"" << esc(r.matrix) << "\" data-variants=\""
      << esc(join(variants, " ")) << "\"";
    for (size_t k = 0; k < variants.size(); ++k) {
      o << " data-" << esc(variants[k]) << "=\"" << row_status_name(rows[i + k].status) << "\"";
    }
    o << "><td>" << esc(r.id) << "</td><td>" << esc(r.matrix + " / " + r.group) << "</td><td>" << esc(r.scenario)
      << "</td><td>" << esc(r.pass_condition) << "</td><td>" << esc(join(r.invariants, ", ")) << "</td><td>"
      << esc(r.source) << "</td>";
    for (size_t k = 0; k < variants.size(); ++k) {
      const RowVerdict& v = rows[i + k];
      const char* s = row_status_name(v.status);
      o << "<td id=\"" << esc(row_anchor(v)) << "\" class=\"status " << s << "\">";
      if (v.status == RowStatus::kNotRun)
        o << s;
      else
        o << "<a href=\"#" << run_anchor(v.runs.front()) << "\">" << s << "</a>";
      o << "</td>";
    }
    o << "</tr>\n";
  }
  o << "</tbody></table>\n";
}

void write_assertion_row(std::ostream& o, const AssertionRecord& a) {
  o << "<tr><td>" << esc(a.property) << "</td><td>" << esc(join(a.invariants, ", ")) << "</td><td class=\""
    << a.status() << "\">" << a.status() << "</td><td>" << a.checks << "</td><td>" << a.exempted
    << (a.exempted > 0 ? " (" + share_text(a.exempted_share()) + ")" : "") << "</td><td>"
    << (a.vacuous_seeds > 0
            ? "vacuous on " + std::to_string(a.vacuous_seeds) + " of " + std::to_string(a.seeds) + " seeds<br>"
            : "");
  for (size_t i = 0; i < a.evidence.size() && i < kHtmlEvidenceShown; ++i) o << esc(clipped(a.evidence[i])) << "<br>";
  if (a.evidence.size() > kHtmlEvidenceShown) {
    o << "<i>... " << a.evidence.size() - kHtmlEvidenceShown << " more in report.json</i>";
  }
  o << "</td></tr>";
}

// A property that passed with nothing exempted and nothing to show gets one line for all of them
// (name and checks); what each asserts is stated once, under "Properties". Failing, vacuous and
// exempting properties get a row each with their evidence.
void write_assertions(std::ostream& o, const RunRecord& r) {
  o << "<table><tr><th>property</th><th>invariants</th><th>verdict</th><th>checks</th><th>exempted</th>"
       "<th>evidence</th></tr>";
  std::string plain_passes;
  for (const AssertionRecord& a : r.assertions) {
    if (a.passed && a.checks > 0 && a.exempted == 0 && a.evidence.empty()) {
      plain_passes += (plain_passes.empty() ? "" : ", ") + a.property + " (" + std::to_string(a.checks) + ")";
      continue;
    }
    write_assertion_row(o, a);
  }
  if (!plain_passes.empty()) {
    o << "<tr><td colspan=\"6\"><span class=\"PASS\">PASS</span> (checks): " << esc(plain_passes) << "</td></tr>";
  }
  o << "</table>\n";
}

void write_counterexample(std::ostream& o, const RunRecord& r) {
  const Counterexample& c = *r.counterexample;
  o << "<h4>Minimal counterexample: seed " << c.seed << ", property " << esc(c.property) << ", fingerprint <code>"
    << hex16(c.fingerprint) << "</code></h4><p>Replay: <code>" << esc(c.replay_command) << "</code>; scenario and "
    << "full diagram: <a href=\"" << esc(counterexample_page(r)) << "\">" << esc(counterexample_page(r)) << "</a></p>";
  if (!c.scenario_yaml.empty())
    o << "<details><summary>shrunk scenario</summary><pre>" << esc(c.scenario_yaml) << "</pre></details>";
  if (!c.timeline.empty()) {
    o << "<div class=\"timeline-box diagram\">" << to_svg(inline_window(c.timeline), false) << "</div>";
  }
}

// Each property the runs judged, with its invariants and what it asserts (once per system).
void write_properties(std::ostream& o, const Report& report) {
  std::map<std::pair<std::string, std::string>, const AssertionRecord*> seen;
  for (const RunRecord& r : report.runs) {
    for (const AssertionRecord& a : r.assertions) seen.emplace(std::make_pair(r.system, a.property), &a);
  }
  o << "<h2 id=\"properties\">Properties</h2>\n<table><tr><th>system</th><th>property</th><th>invariants</th>"
       "<th>assertion</th></tr>";
  for (const auto& [key, a] : seen) {
    o << "<tr><td>" << esc(key.first) << "</td><td>" << esc(key.second) << "</td><td>" << esc(join(a->invariants, ", "))
      << "</td><td>" << esc(a->assertion) << "</td></tr>";
  }
  o << "</table>\n";
}

// An exploration's coverage over time: features reached (line) against runs made, and where a
// property first broke (dots), as an inline SVG.
void write_coverage(std::ostream& o, const std::vector<CoverageSample>& series) {
  const double width = 480, height = 160, pad = 30;
  const double max_runs = static_cast<double>(std::max<int64_t>(series.back().runs, 1));
  int64_t max_features = 1;
  for (const CoverageSample& c : series) max_features = std::max(max_features, c.features);
  auto x = [&](int64_t runs) { return pad + (width - 2 * pad) * static_cast<double>(runs) / max_runs; };
  auto y = [&](int64_t f) {
    return height - pad - (height - 2 * pad) * static_cast<double>(f) / static_cast<double>(max_features);
  };
  o << "<h4>Coverage over time</h4><svg class=\"coverage\" width=\"" << width << "\" height=\"" << height
    << "\" role=\"img\" aria-label=\"coverage features against runs\"><polyline fill=\"none\" stroke=\"#1565c0\" "
       "points=\""
    << x(0) << "," << y(0);
  for (const CoverageSample& c : series) o << " " << x(c.runs) << "," << y(c.features);
  o << "\"/>";
  int64_t findings = 0;
  for (const CoverageSample& c : series) {
    if (c.findings > findings)
      o << "<circle r=\"4\" fill=\"#c62828\" cx=\"" << x(c.runs) << "\" cy=\"" << y(c.features) << "\"/>";
    findings = c.findings;
  }
  o << "<text x=\"" << pad << "\" y=\"14\">" << max_features << " features</text><text x=\"" << width - pad - 80
    << "\" y=\"" << height - 8 << "\">" << series.back().runs << " runs</text></svg>\n";
}

// A run's figures, one row per figure and one column per rule, then its charts inline.
void write_figures(std::ostream& o, const RunRecord& r) {
  const FigureTable t = figure_table(r);
  o << "<table><tr><th>figure</th>";
  for (const std::string& c : t.columns) o << "<th>" << esc(c) << "</th>";
  o << "</tr>";
  for (const FigureTable::Row& row : t.rows) {
    o << "<tr><td>" << esc(row.label) << " <code>" << esc(row.key) << "</code></td>";
    for (const std::string& cell : row.cells) o << "<td>" << esc(cell) << "</td>";
    o << "</tr>";
  }
  o << "</table>\n";
  for (const ChartRecord& c : r.charts) o << "<div class=\"chart\">" << chart_svg(c) << "</div>\n";
}

void write_run(std::ostream& o, const RunRecord& r, size_t index) {
  const char* status = run_status(r);
  o << "<details class=\"run\" id=\"" << run_anchor(index) << "\" data-system=\"" << esc(r.system)
    << "\" data-variant=\"" << esc(r.variant) << "\" data-status=\"" << status << "\""
    << (r.as_expected() ? "" : " open") << "><summary>" << esc(r.scenario) << " (" << esc(r.system + " / " + r.variant)
    << "): <span class=\"" << status << "\">" << status << "</span>"
    << (r.as_expected() ? ", as expected" : ", <b>NOT as expected</b>")
    << "</summary>\n<table><tr><th>scenario</th><td><code>" << esc(r.scenario_file) << "</code></td></tr>"
    << "<tr><th>rows</th><td>" << esc(join(r.matrix_rows, ", ")) << "</td></tr>"
    << "<tr><th>seeds</th><td>" << esc(seeds_text(r.seeds)) << "</td></tr>"
    << "<tr><th>failing seeds</th><td>" << esc(seeds_text(r.failing_seeds)) << "</td></tr>"
    << "<tr><th>config digest</th><td><code>" << hex16(r.config_digest) << "</code></td></tr>";
  if (r.real_mode()) {
    o << "<tr><th>real mode</th><td>on " << esc(r.machine) << " (timings are this machine's: no trace fingerprint)"
      << "</td></tr><tr><th>command</th><td><code>" << esc(r.command) << "</code></td></tr>";
  } else {
    o << "<tr><th>trace fingerprint</th><td><code>" << hex16(r.fingerprint) << "</code></td></tr>";
    if (!r.command.empty()) o << "<tr><th>command</th><td><code>" << esc(r.command) << "</code></td></tr>";
  }
  o << "<tr><th>expected</th><td>" << esc(r.expected_pass ? "pass" : "fail " + expected_text(r)) << "</td></tr>"
    << "<tr><th>produced</th><td>" << esc(r.produced_at) << " at commit <code>" << esc(r.commit) << "</code></td></tr>";
  if (!r.error.empty()) o << "<tr><th>error</th><td>" << esc(r.error) << "</td></tr>";
  o << "</table>\n";
  if (!r.coverage.empty()) write_coverage(o, r.coverage);
  if (!r.figures.empty()) write_figures(o, r);
  if (!r.assertions.empty()) write_assertions(o, r);
  if (r.counterexample) write_counterexample(o, r);
  o << "</details>\n";
}

}  // namespace

std::string to_html(const Report& report) {
  std::ostringstream o;
  const std::vector<RowVerdict> rows = judge_rows(report);
  const std::vector<std::string> variants = variants_of(report);
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << esc(report.title)
    << "</title><style>" << kCss << svg_css() << "</style><script>" << kFilterJs << "</script></head><body>\n<h1>"
    << esc(report.title) << "</h1>\n<p class=\"meta\">Produced " << esc(report.produced_at) << " at commit <code>"
    << esc(report.commit) << "</code>. Matrices: " << esc(join(selected_matrices(report), ", ")) << ".</p>\n";
  write_summary(o, report, rows);
  write_unexpected(o, report);
  write_heavy_exemptions(o, report);
  write_failing_rows(o, report, rows);
  write_fixes(o, report.fixes);
  write_matrix(o, rows, variants);
  write_properties(o, report);
  o << "<h2 id=\"runs\">Runs: the evidence</h2>\n";
  for (size_t i = 0; i < report.runs.size(); ++i) write_run(o, report.runs[i], i);
  o << "</body></html>\n";
  return o.str();
}

}  // namespace fl::reports
