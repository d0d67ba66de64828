#include "reports/report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "reports/charts.h"
#include "reports/json.h"
#include "reports/report_text.h"

namespace fl::reports {
namespace {

// ---------------------------------------------------------------- JSON
// Records are built as nlohmann objects (members in the order report.json has always had) and
// serialised by the library; kReportLayout keeps one run, fix, row and timeline event a line.
const JsonLayout& report_layout() {
  static const JsonLayout kLayout{{"runs", "fixes", "rows", "matrix_rows"}, {"timeline"}};
  return kLayout;
}

Json assertion_json(const AssertionRecord& a) {
  return Json{{"property", a.property}, {"invariants", a.invariants},
              {"passed", a.passed},     {"assertion", a.assertion},
              {"checks", a.checks},     {"status", a.status()},
              {"exempted", a.exempted}, {"exempted_share", json_double(a.exempted_share())},
              {"seeds", a.seeds},       {"vacuous_seeds", a.vacuous_seeds},
              {"evidence", a.evidence}};
}

Json counterexample_json(const Counterexample& c) {
  Json timeline = Json::array();
  for (const TimelineEvent& e : c.timeline) {
    timeline.push_back(
        Json{{"t_us", e.t_us}, {"kind", e.kind}, {"node", e.node}, {"process", e.process}, {"detail", e.detail}});
  }
  return Json{{"seed", c.seed},
              {"fingerprint", hex16(c.fingerprint)},
              {"property", c.property},
              {"scenario_file", c.scenario_file},
              {"scenario_yaml", c.scenario_yaml},
              {"replay_command", c.replay_command},
              {"timeline", std::move(timeline)}};
}

Json coverage_json(const std::vector<CoverageSample>& series) {
  Json out = Json::array();
  for (const CoverageSample& c : series) {
    out.push_back(Json{{"runs", c.runs}, {"features", c.features}, {"corpus", c.corpus}, {"findings", c.findings}});
  }
  return out;
}

Json figures_json(const std::vector<FigureRecord>& figures) {
  Json out = Json::array();
  for (const FigureRecord& f : figures) {
    out.push_back(
        Json{{"key", f.key}, {"label", f.label}, {"rule", f.rule}, {"value", json_double(f.value)}, {"unit", f.unit}});
  }
  return out;
}

Json charts_json(const std::vector<ChartRecord>& charts) {
  Json out = Json::array();
  for (const ChartRecord& c : charts) {
    Json series = Json::array();
    for (const ChartSeries& s : c.series) {
      Json x = Json::array(), y = Json::array();
      for (double v : s.x) x.push_back(json_double(v));
      for (double v : s.y) y.push_back(json_double(v));
      series.push_back(Json{{"name", s.name}, {"x", std::move(x)}, {"y", std::move(y)}});
    }
    out.push_back(Json{{"id", c.id},
                       {"title", c.title},
                       {"x_label", c.x_label},
                       {"y_label", c.y_label},
                       {"y_inverted", c.y_inverted},
                       {"series", std::move(series)}});
  }
  return out;
}

std::vector<double> read_numbers(const Json& j, std::string_view key) {
  std::vector<double> out;
  for (const Json& v : json_items(j, key)) out.push_back(v.is_number() ? v.get<double>() : 0);
  return out;
}

Json run_json(const RunRecord& r) {
  Json assertions = Json::array();
  for (const AssertionRecord& a : r.assertions) assertions.push_back(assertion_json(a));
  Json failures = Json::object();
  for (const auto& [k, n] : r.failures_per_property) failures[k] = n;
  Json behaviours = Json::object();
  for (const auto& [k, n] : r.behaviour_seeds) behaviours[k] = n;
  Json j{{"scenario", r.scenario},
         {"scenario_file", r.scenario_file},
         {"system", r.system},
         {"variant", r.variant},
         {"matrix_rows", r.matrix_rows},
         {"expected_pass", r.expected_pass},
         {"expected_failing_properties", r.expected_failing},
         {"expected_match", r.expected_any ? "any" : "all"},
         {"seeds", r.seeds},
         {"failing_seeds", r.failing_seeds},
         {"config_digest", hex16(r.config_digest)},
         {"fingerprint", hex16(r.fingerprint)},
         {"assertions", std::move(assertions)},
         {"failures_per_property", std::move(failures)},
         {"behaviour_seeds", std::move(behaviours)},
         {"counterexample", r.counterexample ? counterexample_json(*r.counterexample) : Json()},
         {"error", r.error},
         {"simulated_us", r.simulated_us},
         {"wall_seconds", json_double(r.wall_seconds)},
         {"produced_at", r.produced_at},
         {"commit", r.commit},
         {"passed", r.passed()},
         {"as_expected", r.as_expected()},
         {"coverage", coverage_json(r.coverage)}};
  if (r.real_mode()) {  // only real-mode runs carry them: simulated runs' documents stay as they were
    j["machine"] = r.machine;
    j["command"] = r.command;
  } else if (!r.command.empty()) {
    j["command"] = r.command;
  }
  if (!r.figures.empty()) j["figures"] = figures_json(r.figures);
  if (!r.charts.empty()) j["charts"] = charts_json(r.charts);
  return j;
}

Json matrix_row_json(const MatrixRow& r) {
  return Json{{"id", r.id},
              {"matrix", r.matrix},
              {"group", r.group},
              {"scenario", r.scenario},
              {"pass", r.pass_condition},
              {"invariants", r.invariants},
              {"source", r.source},
              {"assertable", r.assertable}};
}

MatrixRow read_matrix_row_json(const Json& j) {
  return MatrixRow{
      json_str(j, "id"),   json_str(j, "matrix"),         json_str(j, "group"),  json_str(j, "scenario"),
      json_str(j, "pass"), json_strings(j, "invariants"), json_str(j, "source"), json_flag(j, "assertable", true)};
}

Json fix_json(const FixRecord& x) {
  return Json{{"system", x.system},
              {"id", x.id},
              {"seed_line", x.seed_line},
              {"why", x.why},
              {"invariants", x.invariants},
              {"counterexample", x.counterexample},
              {"seed", x.seed},
              {"fingerprint", hex16(x.fingerprint)},
              {"property", x.property},
              {"fails_without", x.fails_without},
              {"passes_with", x.passes_with},
              {"replay_command", x.replay_command},
              {"status", x.status()}};
}

std::vector<uint64_t> read_seeds(const Json& j, std::string_view key) {
  std::vector<uint64_t> out;
  for (const Json& s : json_items(j, key)) out.push_back(s.is_number_unsigned() ? s.get<uint64_t>() : 0);
  return out;
}

Counterexample read_counterexample(const Json& c) {
  Counterexample ce;
  ce.seed = json_u64(c, "seed");
  ce.fingerprint = parse_hex16(json_str(c, "fingerprint"));
  ce.property = json_str(c, "property");
  ce.scenario_file = json_str(c, "scenario_file");
  ce.scenario_yaml = json_str(c, "scenario_yaml");
  ce.replay_command = json_str(c, "replay_command");
  for (const Json& e : json_items(c, "timeline")) {
    ce.timeline.push_back(TimelineEvent{json_i64(e, "t_us"), json_str(e, "kind"), json_str(e, "node"),
                                        json_str(e, "process"), json_str(e, "detail")});
  }
  return ce;
}

RunRecord read_run_json(const Json& j) {
  RunRecord r;
  r.scenario = json_str(j, "scenario");
  r.scenario_file = json_str(j, "scenario_file");
  r.system = json_str(j, "system");
  r.variant = json_str(j, "variant");
  r.matrix_rows = json_strings(j, "matrix_rows");
  r.expected_pass = json_flag(j, "expected_pass", true);
  r.expected_failing = json_strings(j, "expected_failing_properties");
  r.expected_any = json_str(j, "expected_match") == "any";
  r.seeds = read_seeds(j, "seeds");
  r.failing_seeds = read_seeds(j, "failing_seeds");
  r.config_digest = parse_hex16(json_str(j, "config_digest"));
  r.fingerprint = parse_hex16(json_str(j, "fingerprint"));
  for (const Json& a : json_items(j, "assertions")) {
    r.assertions.push_back(AssertionRecord{json_str(a, "property"), json_strings(a, "invariants"),
                                           json_flag(a, "passed"), json_str(a, "assertion"), json_i64(a, "checks"),
                                           json_strings(a, "evidence"), json_i64(a, "exempted"), json_i64(a, "seeds"),
                                           json_i64(a, "vacuous_seeds")});
  }
  if (const Json* f = json_get(j, "failures_per_property"); f && f->is_object()) {
    for (const auto& [k, n] : f->items()) r.failures_per_property[k] = n.is_number() ? n.get<int64_t>() : 0;
  }
  if (const Json* b = json_get(j, "behaviour_seeds"); b && b->is_object()) {
    for (const auto& [k, n] : b->items()) r.behaviour_seeds[k] = n.is_number() ? n.get<int64_t>() : 0;
  }
  if (const Json* c = json_get(j, "counterexample"); c && c->is_object()) r.counterexample = read_counterexample(*c);
  r.error = json_str(j, "error");
  r.simulated_us = json_i64(j, "simulated_us");
  r.wall_seconds = json_num(j, "wall_seconds");
  r.produced_at = json_str(j, "produced_at");
  r.commit = json_str(j, "commit");
  r.machine = json_str(j, "machine");
  r.command = json_str(j, "command");
  for (const Json& c : json_items(j, "coverage")) {
    r.coverage.push_back(
        CoverageSample{json_i64(c, "runs"), json_i64(c, "features"), json_i64(c, "corpus"), json_i64(c, "findings")});
  }
  for (const Json& f : json_items(j, "figures")) {
    r.figures.push_back(FigureRecord{json_str(f, "key"), json_str(f, "label"), json_str(f, "rule"),
                                     json_num(f, "value"), json_str(f, "unit")});
  }
  for (const Json& c : json_items(j, "charts")) {
    ChartRecord chart{json_str(c, "id"),      json_str(c, "title"),       json_str(c, "x_label"),
                      json_str(c, "y_label"), json_flag(c, "y_inverted"), {}};
    for (const Json& s : json_items(c, "series")) {
      chart.series.push_back(ChartSeries{json_str(s, "name"), read_numbers(s, "x"), read_numbers(s, "y")});
    }
    r.charts.push_back(std::move(chart));
  }
  return r;
}

}  // namespace

const char* row_status_name(RowStatus s) {
  switch (s) {
    case RowStatus::kNotRun:
      return "NOT_RUN";
    case RowStatus::kPass:
      return "PASS";
    case RowStatus::kFail:
      return "FAIL";
    case RowStatus::kVacuous:
      return "VACUOUS";
    case RowStatus::kMeasured:
      return "MEASURED";
  }
  return "?";
}

void AssertionRecord::add_seed(int64_t seed_checks, int64_t seed_exempted, bool seed_passed) {
  checks += seed_checks;
  exempted += seed_exempted;
  ++seeds;
  if (seed_passed && seed_checks == 0) ++vacuous_seeds;
  passed = passed && seed_passed;
}

std::vector<std::string> RunRecord::vacuous_properties() const {
  std::vector<std::string> out;
  for (const AssertionRecord& a : assertions) {
    if (a.vacuous()) out.push_back(a.property);
  }
  return out;
}

bool RunRecord::as_expected() const {
  if (!vacuous_properties().empty()) return false;
  if (expected_pass) return passed();
  if (passed() || expected_failing.empty()) return false;
  size_t failing = 0;
  for (const std::string& p : expected_failing) {
    auto it = failures_per_property.find(p);
    failing += it != failures_per_property.end() && it->second > 0 ? 1 : 0;
  }
  return expected_any ? failing > 0 : failing == expected_failing.size();
}

bool RunRecord::is_evidence() const {
  return !seeds.empty() && config_digest != 0 && (!assertions.empty() || !error.empty() || !figures.empty());
}

std::vector<RowVerdict> judge_rows(const Report& report) {
  std::vector<RowVerdict> out;
  const std::vector<std::string> variants = variants_of(report);
  std::set<std::string> seen_rows;
  for (const std::string& m : selected_matrices(report)) {
    for (const MatrixRow* row : rows_of_matrix(report.rows, m)) {
      if (!seen_rows.insert(row->id).second) continue;
      for (const std::string& variant : variants) {
        RowVerdict v{row, variant, RowStatus::kNotRun, {}, {}};
        bool failed = false;
        bool checked = false;   // some relevant assertion evaluated something
        bool asserted = false;  // some relevant assertion exists
        bool measured = false;  // some covering run measured figures
        for (size_t i = 0; i < report.runs.size(); ++i) {
          const RunRecord& run = report.runs[i];
          if (run.variant != variant || !run.is_evidence()) continue;
          if (std::find(run.matrix_rows.begin(), run.matrix_rows.end(), row->id) == run.matrix_rows.end()) continue;
          v.runs.push_back(i);
          if (!run.error.empty()) failed = true;
          if (!run.figures.empty()) measured = true;
          for (const AssertionRecord* a : relevant(run, *row)) {
            asserted = true;
            if (a->checks > 0) checked = true;
            if (!a->passed) {
              failed = true;
              // Each property once, however many runs and seeds of the row failed it.
              if (std::find(v.failed_properties.begin(), v.failed_properties.end(), a->property) ==
                  v.failed_properties.end()) {
                v.failed_properties.push_back(a->property);
              }
            }
          }
        }
        if (!v.runs.empty()) {
          v.status = failed                  ? RowStatus::kFail
                     : checked               ? RowStatus::kPass
                     : measured && !asserted ? RowStatus::kMeasured
                                             : RowStatus::kVacuous;
        }
        out.push_back(std::move(v));
      }
    }
  }
  return out;
}

std::string to_json(const Report& report) {
  Json runs = Json::array(), fixes = Json::array(), rows = Json::array(), matrix_rows = Json::array();
  for (const MatrixRow& r : report.rows) matrix_rows.push_back(matrix_row_json(r));
  for (const RunRecord& r : report.runs) runs.push_back(run_json(r));
  for (const FixRecord& x : report.fixes) fixes.push_back(fix_json(x));
  for (const RowVerdict& v : judge_rows(report)) {
    rows.push_back(Json{{"id", v.row->id},
                        {"matrix", v.row->matrix},
                        {"variant", v.variant},
                        {"status", row_status_name(v.status)},
                        {"runs", v.runs}});
  }
  const Json doc{
      {"format", "faultline-report/1"}, {"title", report.title},       {"produced_at", report.produced_at},
      {"commit", report.commit},        {"matrices", report.matrices}, {"runs", std::move(runs)},
      {"fixes", std::move(fixes)},      {"rows", std::move(rows)},     {"matrix_rows", std::move(matrix_rows)}};
  return json_dump(doc, report_layout()) + "\n";
}

std::optional<Report> report_from_json(const std::string& text, std::string* error) {
  std::string err;
  std::optional<Json> j = parse_json(text, &err);
  if (!j || !j->is_object() || json_str(*j, "format") != "faultline-report/1") {
    if (error) *error = j ? "not a faultline report (format != faultline-report/1)" : err;
    return std::nullopt;
  }
  Report r;
  r.title = json_str(*j, "title");
  r.produced_at = json_str(*j, "produced_at");
  r.commit = json_str(*j, "commit");
  r.matrices = json_strings(*j, "matrices");
  for (const Json& row : json_items(*j, "matrix_rows")) r.rows.push_back(read_matrix_row_json(row));
  for (const Json& run : json_items(*j, "runs")) r.runs.push_back(read_run_json(run));
  for (const Json& x : json_items(*j, "fixes")) {
    FixRecord f;
    f.system = json_str(x, "system");
    f.id = json_str(x, "id");
    f.seed_line = json_str(x, "seed_line");
    f.why = json_str(x, "why");
    f.invariants = json_strings(x, "invariants");
    f.counterexample = json_str(x, "counterexample");
    f.seed = json_u64(x, "seed");
    f.fingerprint = parse_hex16(json_str(x, "fingerprint"));
    f.property = json_str(x, "property");
    f.fails_without = json_flag(x, "fails_without");
    f.passes_with = json_flag(x, "passes_with");
    f.replay_command = json_str(x, "replay_command");
    r.fixes.push_back(std::move(f));
  }
  return r;
}

std::string counterexample_markdown(const RunRecord& r) {
  const Counterexample& c = *r.counterexample;
  std::ostringstream o;
  o << "# Counterexample: " << r.scenario << " (" << r.system << " / " << r.variant << ")\n\n"
    << "- property: `" << c.property << "`\n- seed " << c.seed << ", trace fingerprint `" << hex16(c.fingerprint)
    << "`\n- replay: `" << c.replay_command << "`\n";
  if (!c.scenario_file.empty()) o << "- scenario file: `" << c.scenario_file << "`\n";
  if (!c.scenario_yaml.empty()) o << "\n## The shrunk scenario\n\n```yaml\n" << c.scenario_yaml << "```\n";
  if (!c.timeline.empty()) {
    o << "\n## Sequence diagram\n\n```mermaid\n"
      << to_mermaid(c.timeline) << "```\n\nAs SVG: [" << std::filesystem::path(counterexample_page(r)).stem().string()
      << ".svg](" << std::filesystem::path(counterexample_page(r)).stem().string() << ".svg)\n";
  }
  return o.str();
}

// Writes `text` to dir/name; "" or what went wrong.
std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  return out ? "" : "cannot write " + path;
}

std::string write_report_files(const Report& report, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create " + dir + ": " + ec.message();
  const std::pair<std::string, std::string> files[] = {
      {"report.md", to_markdown(report)},          {"report.html", to_html(report)},
      {"junit.xml", to_junit_xml(report)},         {"report.json", to_json(report)},
      {"summary.md", to_summary_markdown(report)},
  };
  for (const auto& [name, text] : files) {
    if (std::string err = write_file(dir, name, text); !err.empty()) return err;
  }
  // One page per counterexample: replay command, shrunk scenario, Mermaid and SVG diagrams.
  for (const RunRecord& r : report.runs) {
    if (!r.counterexample) continue;
    const std::string page = counterexample_page(r);
    if (std::string err = write_file(dir, page, counterexample_markdown(r)); !err.empty()) return err;
    if (r.counterexample->timeline.empty()) continue;
    const std::string svg = page.substr(0, page.size() - 3) + ".svg";
    if (std::string err = write_file(dir, svg, to_svg(r.counterexample->timeline)); !err.empty()) return err;
  }
  for (size_t i = 0; i < report.runs.size(); ++i) {  // the charts report.md links
    for (const ChartRecord& c : report.runs[i].charts) {
      if (std::string err = write_file(dir, chart_file(i, c), chart_svg(c)); !err.empty()) return err;
    }
  }
  return "";
}

Report merge_reports(const std::vector<Report>& shards, const std::string& now, const std::string& commit) {
  Report out;
  out.produced_at = now;
  out.commit = commit;
  std::set<std::string> matrices, commits;
  for (const Report& s : shards) {
    matrices.insert(s.matrices.begin(), s.matrices.end());
    for (const MatrixRow& row : s.rows) {  // each row once, in the order the shards give them
      if (!find_matrix_row(out.rows, row.id)) out.rows.push_back(row);
    }
    commits.insert(s.commit);
    for (const FixRecord& x : s.fixes) {  // one record per fix: a proven one wins
      auto same = std::find_if(out.fixes.begin(), out.fixes.end(),
                               [&](const FixRecord& o) { return o.system == x.system && o.id == x.id; });
      if (same == out.fixes.end())
        out.fixes.push_back(x);
      else if (!same->proven() && x.proven())
        *same = x;
    }
    for (const RunRecord& r : s.runs) {
      auto same = std::find_if(out.runs.begin(), out.runs.end(), [&](const RunRecord& o) {
        return o.scenario == r.scenario && o.variant == r.variant && o.config_digest == r.config_digest &&
               o.scenario_file == r.scenario_file;
      });
      if (same == out.runs.end()) {
        out.runs.push_back(r);
        continue;
      }
      RunRecord& m = *same;
      const bool first_failure = m.failing_seeds.empty() && !r.failing_seeds.empty();
      m.seeds.insert(m.seeds.end(), r.seeds.begin(), r.seeds.end());
      m.failing_seeds.insert(m.failing_seeds.end(), r.failing_seeds.begin(), r.failing_seeds.end());
      std::sort(m.seeds.begin(), m.seeds.end());
      std::sort(m.failing_seeds.begin(), m.failing_seeds.end());
      for (const auto& [k, n] : r.failures_per_property) m.failures_per_property[k] += n;
      for (const auto& [k, n] : r.behaviour_seeds) m.behaviour_seeds[k] += n;
      for (const AssertionRecord& a : r.assertions) {
        auto it = std::find_if(m.assertions.begin(), m.assertions.end(),
                               [&](const AssertionRecord& x) { return x.property == a.property; });
        if (it == m.assertions.end()) {
          m.assertions.push_back(a);
          continue;
        }
        it->checks += a.checks;
        it->exempted += a.exempted;
        it->seeds += a.seeds;
        it->vacuous_seeds += a.vacuous_seeds;
        if (it->passed && !a.passed) it->evidence = a.evidence;
        it->passed = it->passed && a.passed;
      }
      if (first_failure) m.fingerprint = r.fingerprint;
      if (!m.counterexample && r.counterexample) m.counterexample = r.counterexample;
      if (m.error.empty()) m.error = r.error;
      m.simulated_us += r.simulated_us;
      m.wall_seconds += r.wall_seconds;
    }
  }
  out.matrices.assign(matrices.begin(), matrices.end());
  out.title = "faultline report (merged from " + std::to_string(shards.size()) + " shards";
  if (commits.size() > 1) out.title += ", commits " + join({commits.begin(), commits.end()}, " ");
  out.title += ")";
  return out;
}

int report_exit_code(const Report& report) {
  for (const RunRecord& r : report.runs) {
    if (!r.as_expected()) return 1;
  }
  // A saved fix counterexample that no longer proves its fix is a regression of the evidence.
  for (const FixRecord& x : report.fixes) {
    if (!x.counterexample.empty() && !x.proven()) return 1;
  }
  return 0;
}

}  // namespace fl::reports