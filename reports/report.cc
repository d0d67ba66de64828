#include "reports/report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "reports/json.h"

namespace fl::reports {
namespace {

bool meets(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const std::string& x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  }
  return false;
}

// The assertions of `run` that speak for `row` (see the header's contract).
std::vector<const AssertionRecord*> relevant(const RunRecord& run, const MatrixRow& row) {
  std::vector<const AssertionRecord*> out;
  for (const AssertionRecord& a : run.assertions) {
    if (meets(a.invariants, row.invariants)) out.push_back(&a);
  }
  if (out.empty()) {
    for (const AssertionRecord& a : run.assertions) out.push_back(&a);
  }
  return out;
}

std::vector<std::string> selected_matrices(const Report& r) {
  std::set<std::string> names(r.matrices.begin(), r.matrices.end());
  if (names.count("all")) return {"all"};
  if (names.empty()) {
    for (const RunRecord& run : r.runs) {
      for (const std::string& id : run.matrix_rows) {
        if (const MatrixRow* row = find_matrix_row(id)) names.insert(row->matrix);
      }
    }
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> variants_of(const Report& r) {
  std::vector<std::string> v = {"spec", "hardened"};
  for (const RunRecord& run : r.runs) {
    if (std::find(v.begin(), v.end(), run.variant) == v.end()) v.push_back(run.variant);
  }
  return v;
}

std::string seeds_text(const std::vector<uint64_t>& seeds, size_t max_shown = 12) {
  std::string out;
  for (size_t i = 0; i < seeds.size() && i < max_shown; ++i) {
    if (i) out += ", ";
    out += std::to_string(seeds[i]);
  }
  if (seeds.size() > max_shown) out += ", ... (" + std::to_string(seeds.size()) + " seeds)";
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// "a, b" or "one of a, b" (match: any).
std::string expected_text(const RunRecord& r) {
  return (r.expected_any && r.expected_failing.size() > 1 ? "one of " : "") + join(r.expected_failing, ", ");
}

// The named fixes: why each exists, and the run that proves it is needed.
void write_fixes_markdown(std::ostream& o, const std::vector<FixRecord>& fixes) {
  if (fixes.empty()) return;
  o << "\n## Named fixes: why hardened departs from each seed\n\n"
       "Each fix is needed: its counterexample fails without it and passes, same seed, with it.\n\n"
       "| system | fix | seed line | invariants | why | without it | evidence | status |\n"
       "|---|---|---|---|---|---|---|---|\n";
  for (const FixRecord& x : fixes) {
    o << "| " << x.system << " | " << x.id << " | " << x.seed_line << " | " << join(x.invariants, ", ") << " | "
      << x.why << " | " << (x.property.empty() ? "-" : x.property) << " | ";
    if (x.counterexample.empty()) o << "none saved";
    else o << "`" << x.counterexample << "` seed " << x.seed << ", fingerprint `" << hex16(x.fingerprint) << "`";
    o << " | " << x.status() << " |\n";
  }
}

void write_fixes_html(std::ostream& o, const std::vector<FixRecord>& fixes) {
  if (fixes.empty()) return;
  o << "<h2 id=\"fixes\">Named fixes: why hardened departs from each seed</h2>\n<p>Each fix is needed: its "
       "counterexample fails without it and passes, same seed, with it.</p>\n<table><tr><th>system</th><th>fix</th>"
       "<th>seed line</th><th>invariants</th><th>why</th><th>without it</th><th>evidence</th><th>status</th></tr>\n";
  for (const FixRecord& x : fixes) {
    const char* cls = std::string(x.status()) == "PROVEN" ? "PASS" : "FAIL";
    o << "<tr><td>" << xml_escape(x.system) << "</td><td>" << xml_escape(x.id) << "</td><td>" << xml_escape(x.seed_line)
      << "</td><td>" << xml_escape(join(x.invariants, ", ")) << "</td><td>" << xml_escape(x.why) << "</td><td>"
      << xml_escape(x.property.empty() ? "-" : x.property) << "</td><td>";
    if (x.counterexample.empty()) o << "none saved";
    else o << "<code>" << xml_escape(x.counterexample) << "</code> seed " << x.seed << ", fingerprint <code>"
           << hex16(x.fingerprint) << "</code><br><code>" << xml_escape(x.replay_command) << "</code>";
    o << "</td><td class=\"" << cls << "\">" << x.status() << "</td></tr>\n";
  }
  o << "</table>\n";
}

std::string anchor(const RowVerdict& v) { return "ev-" + v.row->id + "-" + v.variant; }

// ---------------------------------------------------------------- JSON
void write_assertion_json(std::ostream& o, const AssertionRecord& a) {
  o << "{\"property\":" << json_quote(a.property) << ",\"invariants\":[";
  for (size_t i = 0; i < a.invariants.size(); ++i) o << (i ? "," : "") << json_quote(a.invariants[i]);
  o << "],\"passed\":" << (a.passed ? "true" : "false") << ",\"assertion\":" << json_quote(a.assertion)
    << ",\"checks\":" << a.checks << ",\"status\":" << json_quote(a.status())
    << ",\"exempted\":" << a.exempted << ",\"evidence\":[";
  for (size_t i = 0; i < a.evidence.size(); ++i) o << (i ? "," : "") << json_quote(a.evidence[i]);
  o << "]}";
}

void write_seeds_json(std::ostream& o, const std::vector<uint64_t>& seeds) {
  o << "[";
  for (size_t i = 0; i < seeds.size(); ++i) o << (i ? "," : "") << seeds[i];
  o << "]";
}

void write_counterexample_json(std::ostream& o, const Counterexample& c) {
  o << "{\"seed\":" << c.seed << ",\"fingerprint\":" << json_quote(hex16(c.fingerprint))
    << ",\"property\":" << json_quote(c.property) << ",\"scenario_file\":"
    << json_quote(c.scenario_file) << ",\"scenario_yaml\":" << json_quote(c.scenario_yaml)
    << ",\"replay_command\":" << json_quote(c.replay_command) << ",\"timeline\":[";
  for (size_t i = 0; i < c.timeline.size(); ++i) {
    const TimelineEvent& e = c.timeline[i];
    o << (i ? ",\n" : "") << "{\"t_us\":" << e.t_us << ",\"kind\":" << json_quote(e.kind)
      << ",\"node\":" << json_quote(e.node) << ",\"process\":" << json_quote(e.process)
      << ",\"detail\":" << json_quote(e.detail) << "}";
  }
  o << "]}";
}

void write_run_json(std::ostream& o, const RunRecord& r) {
  o << "{\"scenario\":" << json_quote(r.scenario) << ",\"scenario_file\":"
    << json_quote(r.scenario_file) << ",\"system\":" << json_quote(r.system)
    << ",\"variant\":" << json_quote(r.variant) << ",\"matrix_rows\":[";
  for (size_t i = 0; i < r.matrix_rows.size(); ++i) o << (i ? "," : "") << json_quote(r.matrix_rows[i]);
  o << "],\"expected_pass\":" << (r.expected_pass ? "true" : "false")
    << ",\"expected_failing_properties\":[";
  for (size_t i = 0; i < r.expected_failing.size(); ++i) o << (i ? "," : "") << json_quote(r.expected_failing[i]);
  o << "],\"expected_match\":" << json_quote(r.expected_any ? "any" : "all") << ",\"seeds\":";
  write_seeds_json(o, r.seeds);
  o << ",\"failing_seeds\":";
  write_seeds_json(o, r.failing_seeds);
  o << ",\"config_digest\":" << json_quote(hex16(r.config_digest))
    << ",\"fingerprint\":" << json_quote(hex16(r.fingerprint)) << ",\"assertions\":[";
  for (size_t i = 0; i < r.assertions.size(); ++i) {
    o << (i ? "," : "");
    write_assertion_json(o, r.assertions[i]);
  }
  o << "],\"failures_per_property\":{";
  bool first = true;
  for (const auto& [k, n] : r.failures_per_property) {
    o << (first ? "" : ",") << json_quote(k) << ":" << n;
    first = false;
  }
  o << "},\"counterexample\":";
  if (r.counterexample) write_counterexample_json(o, *r.counterexample);
  else o << "null";
  o << ",\"error\":" << json_quote(r.error) << ",\"simulated_us\":" << r.simulated_us
    << ",\"wall_seconds\":" << json_number(r.wall_seconds) << ",\"produced_at\":"
    << json_quote(r.produced_at) << ",\"commit\":" << json_quote(r.commit)
    << ",\"passed\":" << (r.passed() ? "true" : "false")
    << ",\"as_expected\":" << (r.as_expected() ? "true" : "false") << "}";
}

std::vector<uint64_t> read_seeds(const Json& j, std::string_view key) {
  std::vector<uint64_t> out;
  const Json* a = j.get(key);
  if (!a || a->type != Json::Type::kArray) return out;
  for (const Json& s : a->items) {
    Json holder;
    holder.type = Json::Type::kObject;
    holder.keys.push_back("v");
    holder.values.push_back(s);
    out.push_back(holder.u64("v"));
  }
  return out;
}

RunRecord read_run_json(const Json& j) {
  RunRecord r;
  r.scenario = j.str("scenario");
  r.scenario_file = j.str("scenario_file");
  r.system = j.str("system");
  r.variant = j.str("variant");
  r.matrix_rows = j.strings("matrix_rows");
  r.expected_pass = j.flag("expected_pass", true);
  r.expected_failing = j.strings("expected_failing_properties");
  r.expected_any = j.str("expected_match") == "any";
  r.seeds = read_seeds(j, "seeds");
  r.failing_seeds = read_seeds(j, "failing_seeds");
  r.config_digest = parse_hex16(j.str("config_digest"));
  r.fingerprint = parse_hex16(j.str("fingerprint"));
  if (const Json* as = j.get("assertions"); as && as->type == Json::Type::kArray) {
    for (const Json& a : as->items) {
      r.assertions.push_back(AssertionRecord{a.str("property"), a.strings("invariants"),
                                             a.flag("passed"), a.str("assertion"), a.i64("checks"),
                                             a.strings("evidence"), a.i64("exempted")});
    }
  }
  if (const Json* f = j.get("failures_per_property"); f && f->type == Json::Type::kObject) {
    for (size_t i = 0; i < f->keys.size(); ++i) {
      Json holder;
      holder.type = Json::Type::kObject;
      holder.keys.push_back("v");
      holder.values.push_back(f->values[i]);
      r.failures_per_property[f->keys[i]] = holder.i64("v");
    }
  }
  if (const Json* c = j.get("counterexample"); c && c->type == Json::Type::kObject) {
    Counterexample ce;
    ce.seed = c->u64("seed");
    ce.fingerprint = parse_hex16(c->str("fingerprint"));
    ce.property = c->str("property");
    ce.scenario_file = c->str("scenario_file");
    ce.scenario_yaml = c->str("scenario_yaml");
    ce.replay_command = c->str("replay_command");
    if (const Json* t = c->get("timeline"); t && t->type == Json::Type::kArray) {
      for (const Json& e : t->items) {
        ce.timeline.push_back(TimelineEvent{e.i64("t_us"), e.str("kind"), e.str("node"),
                                            e.str("process"), e.str("detail")});
      }
    }
    r.counterexample = std::move(ce);
  }
  r.error = j.str("error");
  r.simulated_us = j.i64("simulated_us");
  r.wall_seconds = j.num("wall_seconds");
  r.produced_at = j.str("produced_at");
  r.commit = j.str("commit");
  return r;
}

// ---------------------------------------------------------------- HTML pieces
const char* kCss = R"(body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:12px 0}th,td{border:1px solid #ccc;padding:4px 8px;
vertical-align:top;font-size:13px}th{background:#f0f3f7}td.PASS{background:#c8efc8}
td.FAIL{background:#f6c4c0}td.NOT_RUN{background:#eee;color:#777}td.VACUOUS{background:#f6e7b0}td.status a{color:inherit;
font-weight:bold}pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px}
.meta{color:#555}.ev{border-top:2px solid #ccd;margin-top:24px;padding-top:8px}
.timeline-box{overflow:auto;max-height:600px;border:1px solid #ddd})";

void html_status_cell(std::ostream& o, const RowVerdict& v) {
  const char* s = row_status_name(v.status);
  o << "<td class=\"status " << s << "\">";
  if (v.status == RowStatus::kNotRun) o << s;
  else o << "<a href=\"#" << anchor(v) << "\">" << s << "</a>";
  o << "</td>";
}

void html_run(std::ostream& o, const RunRecord& r) {
  o << "<table><tr><th>scenario</th><td>" << xml_escape(r.scenario) << " (<code>"
    << xml_escape(r.scenario_file) << "</code>)</td></tr>"
    << "<tr><th>system / variant</th><td>" << xml_escape(r.system + " / " + r.variant)
    << "</td></tr><tr><th>seeds</th><td>" << xml_escape(seeds_text(r.seeds)) << "</td></tr>"
    << "<tr><th>failing seeds</th><td>" << xml_escape(seeds_text(r.failing_seeds)) << "</td></tr>"
    << "<tr><th>config digest</th><td><code>" << hex16(r.config_digest) << "</code></td></tr>"
    << "<tr><th>trace fingerprint</th><td><code>" << hex16(r.fingerprint) << "</code></td></tr>"
    << "<tr><th>expected</th><td>"
    << (r.expected_pass ? "pass" : "fail " + xml_escape(expected_text(r)))
    << (r.as_expected() ? " (as expected)" : " <b>(NOT as expected)</b>") << "</td></tr>"
    << "<tr><th>produced</th><td>" << xml_escape(r.produced_at) << " at commit <code>"
    << xml_escape(r.commit) << "</code></td></tr>";
  if (!r.error.empty()) o << "<tr><th>error</th><td>" << xml_escape(r.error) << "</td></tr>";
  o << "</table>\n<table><tr><th>property</th><th>invariants</th><th>verdict</th><th>checks</th>"
       "<th>assertion</th><th>evidence</th></tr>";
  for (const AssertionRecord& a : r.assertions) {
    o << "<tr><td>" << xml_escape(a.property) << "</td><td>" << xml_escape(join(a.invariants, ", "))
      << "</td><td class=\"" << a.status() << "\">"
      << a.status() << "</td><td>" << a.checks << "</td><td>"
      << xml_escape(a.assertion) << "</td><td>";
    for (size_t i = 0; i < a.evidence.size() && i < 20; ++i) {
      o << xml_escape(a.evidence[i]) << "<br>";
    }
    o << "</td></tr>";
  }
  o << "</table>\n";
  if (r.counterexample) {
    const Counterexample& c = *r.counterexample;
    o << "<h4>Minimal counterexample: seed " << c.seed << ", property " << xml_escape(c.property)
      << ", fingerprint <code>" << hex16(c.fingerprint) << "</code></h4>"
      << "<p>Replay: <code>" << xml_escape(c.replay_command) << "</code></p>";
    if (!c.scenario_file.empty()) {
      o << "<p>Scenario file: <code>" << xml_escape(c.scenario_file) << "</code></p>";
    }
    if (!c.scenario_yaml.empty()) o << "<pre>" << xml_escape(c.scenario_yaml) << "</pre>";
    if (!c.timeline.empty()) {
      o << "<div class=\"timeline-box\">" << to_svg(c.timeline) << "</div>";
    }
  }
}

}  // namespace

const char* row_status_name(RowStatus s) {
  switch (s) {
    case RowStatus::kNotRun: return "NOT_RUN";
    case RowStatus::kPass: return "PASS";
    case RowStatus::kFail: return "FAIL";
    case RowStatus::kVacuous: return "VACUOUS";
  }
  return "?";
}

bool RunRecord::as_expected() const {
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
  return !seeds.empty() && config_digest != 0 && (!assertions.empty() || !error.empty());
}

std::vector<RowVerdict> judge_rows(const Report& report) {
  std::vector<RowVerdict> out;
  const std::vector<std::string> variants = variants_of(report);
  std::set<std::string> seen_rows;
  for (const std::string& m : selected_matrices(report)) {
    for (const MatrixRow* row : rows_of_matrix(m)) {
      if (!seen_rows.insert(row->id).second) continue;
      for (const std::string& variant : variants) {
        RowVerdict v{row, variant, RowStatus::kNotRun, {}, {}};
        bool failed = false;
        bool checked = false;  // some relevant assertion evaluated something
        for (size_t i = 0; i < report.runs.size(); ++i) {
          const RunRecord& run = report.runs[i];
          if (run.variant != variant || !run.is_evidence()) continue;
          if (std::find(run.matrix_rows.begin(), run.matrix_rows.end(), row->id) ==
              run.matrix_rows.end())
            continue;
          v.runs.push_back(i);
          if (!run.error.empty()) failed = true;
          for (const AssertionRecord* a : relevant(run, *row)) {
            if (a->checks > 0) checked = true;
            if (!a->passed) {
              failed = true;
              v.failed_properties.push_back(a->property);
            }
          }
        }
        if (!v.runs.empty()) v.status = failed ? RowStatus::kFail : checked ? RowStatus::kPass : RowStatus::kVacuous;
        out.push_back(std::move(v));
      }
    }
  }
  return out;
}

std::string to_json(const Report& report) {
  std::ostringstream o;
  o << "{\"format\":\"faultline-report/1\",\"title\":" << json_quote(report.title)
    << ",\"produced_at\":" << json_quote(report.produced_at)
    << ",\"commit\":" << json_quote(report.commit) << ",\"matrices\":[";
  for (size_t i = 0; i < report.matrices.size(); ++i) {
    o << (i ? "," : "") << json_quote(report.matrices[i]);
  }
  o << "],\n\"runs\":[\n";
  for (size_t i = 0; i < report.runs.size(); ++i) {
    o << (i ? ",\n" : "");
    write_run_json(o, report.runs[i]);
  }
  o << "],\n\"fixes\":[\n";
  for (size_t i = 0; i < report.fixes.size(); ++i) {
    const FixRecord& x = report.fixes[i];
    o << (i ? ",\n" : "") << "{\"system\":" << json_quote(x.system) << ",\"id\":" << json_quote(x.id)
      << ",\"seed_line\":" << json_quote(x.seed_line) << ",\"why\":" << json_quote(x.why) << ",\"invariants\":[";
    for (size_t k = 0; k < x.invariants.size(); ++k) o << (k ? "," : "") << json_quote(x.invariants[k]);
    o << "],\"counterexample\":" << json_quote(x.counterexample) << ",\"seed\":" << x.seed
      << ",\"fingerprint\":" << json_quote(hex16(x.fingerprint)) << ",\"property\":" << json_quote(x.property)
      << ",\"fails_without\":" << (x.fails_without ? "true" : "false")
      << ",\"passes_with\":" << (x.passes_with ? "true" : "false")
      << ",\"replay_command\":" << json_quote(x.replay_command) << ",\"status\":" << json_quote(x.status()) << "}";
  }
  o << "],\n\"rows\":[\n";
  const std::vector<RowVerdict> rows = judge_rows(report);
  for (size_t i = 0; i < rows.size(); ++i) {
    const RowVerdict& v = rows[i];
    o << (i ? ",\n" : "") << "{\"id\":" << json_quote(v.row->id) << ",\"matrix\":"
      << json_quote(v.row->matrix) << ",\"variant\":" << json_quote(v.variant)
      << ",\"status\":" << json_quote(row_status_name(v.status)) << ",\"runs\":[";
    for (size_t k = 0; k < v.runs.size(); ++k) o << (k ? "," : "") << v.runs[k];
    o << "]}";
  }
  o << "]}\n";
  return o.str();
}

std::optional<Report> report_from_json(const std::string& text, std::string* error) {
  std::string err;
  std::optional<Json> j = parse_json(text, &err);
  if (!j || j->type != Json::Type::kObject || j->str("format") != "faultline-report/1") {
    if (error) *error = j ? "not a faultline report (format != faultline-report/1)" : err;
    return std::nullopt;
  }
  Report r;
  r.title = j->str("title");
  r.produced_at = j->str("produced_at");
  r.commit = j->str("commit");
  r.matrices = j->strings("matrices");
  if (const Json* runs = j->get("runs"); runs && runs->type == Json::Type::kArray) {
    for (const Json& run : runs->items) r.runs.push_back(read_run_json(run));
  }
  if (const Json* fixes = j->get("fixes"); fixes && fixes->type == Json::Type::kArray) {
    for (const Json& x : fixes->items) {
      FixRecord f;
      f.system = x.str("system");
      f.id = x.str("id");
      f.seed_line = x.str("seed_line");
      f.why = x.str("why");
      f.invariants = x.strings("invariants");
      f.counterexample = x.str("counterexample");
      f.seed = x.u64("seed");
      f.fingerprint = parse_hex16(x.str("fingerprint"));
      f.property = x.str("property");
      f.fails_without = x.flag("fails_without");
      f.passes_with = x.flag("passes_with");
      f.replay_command = x.str("replay_command");
      r.fixes.push_back(std::move(f));
    }
  }
  return r;
}

std::string to_markdown(const Report& report) {
  std::ostringstream o;
  const std::vector<RowVerdict> rows = judge_rows(report);
  const std::vector<std::string> variants = variants_of(report);
  o << "# " << report.title << "\n\nProduced " << report.produced_at << " at commit `"
    << report.commit << "`. Matrices: " << join(selected_matrices(report), ", ") << ".\n\n";
  o << "| row | scenario | pass condition | invariants | source |";
  for (const std::string& v : variants) o << " " << v << " |";
  o << "\n|---|---|---|---|---|";
  for (size_t i = 0; i < variants.size(); ++i) o << "---|";
  o << "\n";
  for (size_t i = 0; i < rows.size(); i += variants.size()) {
    const MatrixRow& r = *rows[i].row;
    o << "| " << r.id << " | " << r.scenario << " | " << r.pass_condition << " | "
      << join(r.invariants, ", ") << " | " << r.source << " |";
    for (size_t k = 0; k < variants.size(); ++k) {
      const RowVerdict& v = rows[i + k];
      if (v.status == RowStatus::kNotRun) o << " NOT_RUN |";
      else o << " [" << row_status_name(v.status) << "](#" << anchor(v) << ") |";
    }
    o << "\n";
  }
  write_fixes_markdown(o, report.fixes);
  o << "\n## Evidence\n";
  for (const RowVerdict& v : rows) {
    if (v.status == RowStatus::kNotRun) continue;
    o << "\n<a id=\"" << anchor(v) << "\"></a>\n### " << v.row->id << " (" << v.variant
      << "): " << row_status_name(v.status) << "\n\n";
    for (size_t idx : v.runs) {
      const RunRecord& r = report.runs[idx];
      o << "- scenario `" << r.scenario_file << "` (" << r.scenario << "), seeds "
        << seeds_text(r.seeds) << "; failing seeds " << seeds_text(r.failing_seeds)
        << "\n- config digest `" << hex16(r.config_digest) << "`, trace fingerprint `"
        << hex16(r.fingerprint) << "`, produced " << r.produced_at << " at `" << r.commit
        << "`\n- expected " << (r.expected_pass ? "pass" : "fail " + expected_text(r))
        << (r.as_expected() ? " (as expected)" : " (**NOT as expected**)") << "\n";
      if (!r.error.empty()) o << "- error: " << r.error << "\n";
      for (const AssertionRecord& a : r.assertions) {
        o << "  - " << a.status() << " `" << a.property << "` ("
          << join(a.invariants, ", ") << "), " << a.checks << " checks: " << a.assertion << "\n";
        for (size_t e = 0; e < a.evidence.size() && e < 10; ++e) {
          o << "    - " << a.evidence[e] << "\n";
        }
      }
      if (r.counterexample) {
        o << "- minimal counterexample: seed " << r.counterexample->seed << ", replay: `"
          << r.counterexample->replay_command << "`\n";
        if (!r.counterexample->scenario_yaml.empty()) {
          o << "\n```yaml\n" << r.counterexample->scenario_yaml << "```\n";
        }
      }
    }
  }
  return o.str();
}

std::string to_html(const Report& report) {
  std::ostringstream o;
  const std::vector<RowVerdict> rows = judge_rows(report);
  const std::vector<std::string> variants = variants_of(report);
  size_t counts[4] = {0, 0, 0, 0};
  for (const RowVerdict& v : rows) ++counts[static_cast<int>(v.status)];
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
    << xml_escape(report.title) << "</title><style>" << kCss << "</style></head><body>\n"
    << "<h1>" << xml_escape(report.title) << "</h1>\n<p class=\"meta\">Produced "
    << xml_escape(report.produced_at) << " at commit <code>" << xml_escape(report.commit)
    << "</code>. Matrices: " << xml_escape(join(selected_matrices(report), ", "))
    << ". Row verdicts: " << counts[1] << " PASS, " << counts[2] << " FAIL, " << counts[3]
    << " VACUOUS, " << counts[0] << " NOT_RUN. A row is PASS or FAIL only with evidence.</p>\n";
  o << "<table id=\"matrix\"><thead><tr><th>row</th><th>matrix</th><th>scenario</th>"
       "<th>pass condition</th><th>invariants</th><th>source</th>";
  for (const std::string& v : variants) o << "<th>" << xml_escape(v) << "</th>";
  o << "</tr></thead><tbody>\n";
  for (size_t i = 0; i < rows.size(); i += variants.size()) {
    const MatrixRow& r = *rows[i].row;
    o << "<tr id=\"row-" << xml_escape(r.id) << "\"><td>" << xml_escape(r.id) << "</td><td>"
      << xml_escape(r.matrix + " / " + r.group) << "</td><td>" << xml_escape(r.scenario)
      << "</td><td>" << xml_escape(r.pass_condition) << "</td><td>"
      << xml_escape(join(r.invariants, ", ")) << "</td><td>" << xml_escape(r.source) << "</td>";
    for (size_t k = 0; k < variants.size(); ++k) html_status_cell(o, rows[i + k]);
    o << "</tr>\n";
  }
  o << "</tbody></table>\n";
  write_fixes_html(o, report.fixes);
  o << "<h2>Evidence</h2>\n";
  for (const RowVerdict& v : rows) {
    if (v.status == RowStatus::kNotRun) continue;
    o << "<div class=\"ev\" id=\"" << anchor(v) << "\"><h3>" << xml_escape(v.row->id) << " ("
      << xml_escape(v.variant) << "): " << row_status_name(v.status) << "</h3><p>"
      << xml_escape(v.row->pass_condition) << "</p>\n";
    for (size_t idx : v.runs) html_run(o, report.runs[idx]);
    o << "</div>\n";
  }
  o << "</body></html>\n";
  return o.str();
}

std::string to_junit_xml(const Report& report) {
  // One testcase per (row, variant). A testcase fails when a covering run was not as expected
  // (a spec FAIL that the scenario expects is a passing test); NOT_RUN rows are skipped.
  const std::vector<RowVerdict> rows = judge_rows(report);
  std::map<std::string, std::vector<const RowVerdict*>> by_suite;
  for (const RowVerdict& v : rows) by_suite[v.row->matrix + "." + v.variant].push_back(&v);
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\""
    << xml_escape(report.title) << "\" timestamp=\"" << xml_escape(report.produced_at) << "\">\n";
  for (const auto& [suite, cases] : by_suite) {
    size_t failures = 0, skipped = 0;
    for (const RowVerdict* v : cases) {
      if (v->status == RowStatus::kNotRun) ++skipped;
      for (size_t idx : v->runs) {
        if (!report.runs[idx].as_expected()) { ++failures; break; }
      }
    }
    o << "<testsuite name=\"" << xml_escape(suite) << "\" tests=\"" << cases.size()
      << "\" failures=\"" << failures << "\" skipped=\"" << skipped << "\">\n"
      << "<properties><property name=\"commit\" value=\"" << xml_escape(report.commit)
      << "\"/></properties>\n";
    for (const RowVerdict* v : cases) {
      o << "<testcase classname=\"" << xml_escape(suite) << "\" name=\""
        << xml_escape(v->row->id + " " + v->row->scenario) << "\">";
      if (v->status == RowStatus::kNotRun) {
        o << "<skipped message=\"NOT_RUN: no run gives evidence for this row\"/>";
      } else {
        std::string unexpected;
        for (size_t idx : v->runs) {
          const RunRecord& r = report.runs[idx];
          if (!r.as_expected()) unexpected += r.scenario_file + " ";
        }
        if (!unexpected.empty()) {
          o << "<failure message=\"" << row_status_name(v->status)
            << " not as expected\">" << xml_escape("unexpected verdicts in: " + unexpected)
            << "</failure>";
        }
        o << "<system-out>" << row_status_name(v->status) << " "
          << xml_escape(join(v->failed_properties, ", ")) << "</system-out>";
      }
      o << "</testcase>\n";
    }
    o << "</testsuite>\n";
  }
  o << "</testsuites>\n";
  return o.str();
}

std::string write_report_files(const Report& report, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create " + dir + ": " + ec.message();
  const std::pair<const char*, std::string> files[] = {
      {"report.md", to_markdown(report)},
      {"report.html", to_html(report)},
      {"junit.xml", to_junit_xml(report)},
      {"report.json", to_json(report)},
  };
  for (const auto& [name, text] : files) {
    const std::string path = dir + "/" + name;
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) return "cannot write " + path;
  }
  return "";
}

Report merge_reports(const std::vector<Report>& shards, const std::string& now,
                     const std::string& commit) {
  Report out;
  out.produced_at = now;
  out.commit = commit;
  std::set<std::string> matrices, commits;
  for (const Report& s : shards) {
    matrices.insert(s.matrices.begin(), s.matrices.end());
    commits.insert(s.commit);
    for (const FixRecord& x : s.fixes) {  // one record per fix: a proven one wins
      auto same = std::find_if(out.fixes.begin(), out.fixes.end(),
                               [&](const FixRecord& o) { return o.system == x.system && o.id == x.id; });
      if (same == out.fixes.end()) out.fixes.push_back(x);
      else if (std::string(same->status()) != "PROVEN" && std::string(x.status()) == "PROVEN") *same = x;
    }
    for (const RunRecord& r : s.runs) {
      auto same = std::find_if(out.runs.begin(), out.runs.end(), [&](const RunRecord& o) {
        return o.scenario == r.scenario && o.variant == r.variant &&
               o.config_digest == r.config_digest && o.scenario_file == r.scenario_file;
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
      for (const AssertionRecord& a : r.assertions) {
        auto it = std::find_if(m.assertions.begin(), m.assertions.end(),
                               [&](const AssertionRecord& x) { return x.property == a.property; });
        if (it == m.assertions.end()) {
          m.assertions.push_back(a);
          continue;
        }
        it->checks += a.checks;
        it->exempted += a.exempted;
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
    if (!x.counterexample.empty() && std::string(x.status()) != "PROVEN") return 1;
  }
  return 0;
}

}  // namespace fl::reports
