#include "reports/report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "reports/json.h"
#include "reports/report_text.h"

namespace fl::reports {
namespace {

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

std::string counterexample_markdown(const RunRecord& r) {
  const Counterexample& c = *r.counterexample;
  std::ostringstream o;
  o << "# Counterexample: " << r.scenario << " (" << r.system << " / " << r.variant << ")\n\n"
    << "- property: `" << c.property << "`\n- seed " << c.seed << ", trace fingerprint `" << hex16(c.fingerprint)
    << "`\n- replay: `" << c.replay_command << "`\n";
  if (!c.scenario_file.empty()) o << "- scenario file: `" << c.scenario_file << "`\n";
  if (!c.scenario_yaml.empty()) o << "\n## The shrunk scenario\n\n```yaml\n" << c.scenario_yaml << "```\n";
  if (!c.timeline.empty()) {
    o << "\n## Sequence diagram\n\n```mermaid\n" << to_mermaid(c.timeline) << "```\n\nAs SVG: ["
      << std::filesystem::path(counterexample_page(r)).stem().string() << ".svg]("
      << std::filesystem::path(counterexample_page(r)).stem().string() << ".svg)\n";
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
      {"report.md", to_markdown(report)},   {"report.html", to_html(report)},
      {"junit.xml", to_junit_xml(report)},  {"report.json", to_json(report)},
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
      else if (!same->proven() && x.proven()) *same = x;
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
    if (!x.counterexample.empty() && !x.proven()) return 1;
  }
  return 0;
}

}  // namespace fl::reports