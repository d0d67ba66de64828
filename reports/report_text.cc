#include "reports/report_text.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace fl::reports {

namespace {

bool meets(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const std::string& x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  }
  return false;
}

}  // namespace

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
        if (const MatrixRow* row = find_matrix_row(r.rows, id)) names.insert(row->matrix);
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

std::string seeds_text(const std::vector<uint64_t>& seeds, size_t max_shown) {
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
std::string run_anchor(size_t run_index) { return "run-" + std::to_string(run_index); }

std::string row_anchor(const RowVerdict& v) { return "ev-" + v.row->id + "-" + v.variant; }

std::string counterexample_page(const RunRecord& r) {
  if (!r.counterexample) return "";
  return "counterexamples/" + r.scenario + "-" + r.variant + "-seed" + std::to_string(r.counterexample->seed) + ".md";
}

std::vector<Tally> tally_rows(const std::vector<RowVerdict>& rows) {
  std::vector<Tally> out;
  for (const RowVerdict& v : rows) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const Tally& t) { return t.matrix == v.row->matrix && t.variant == v.variant; });
    if (it == out.end()) {
      out.push_back(Tally{v.row->matrix, v.variant, {}});
      it = out.end() - 1;
    }
    ++it->count[static_cast<int>(v.status)];
  }
  return out;
}

std::vector<size_t> unexpected_runs(const Report& report) {
  std::vector<size_t> out;
  for (size_t i = 0; i < report.runs.size(); ++i) {
    if (!report.runs[i].as_expected()) out.push_back(i);
  }
  return out;
}

std::vector<std::string> failed_properties_of(const RunRecord& r) {
  std::vector<std::string> out;
  if (!r.error.empty()) out.push_back("<error>");
  for (const auto& [property, n] : r.failures_per_property) {
    if (n > 0 && property != "<error>") out.push_back(property);
  }
  return out;
}

std::string vacuity_text(const RunRecord& r) {
  const std::vector<std::string> vacuous = r.vacuous_properties();
  return vacuous.empty() ? "" : "vacuous on every seed: " + join(vacuous, ", ");
}

std::vector<HeavyExemption> heavy_exemptions(const Report& report) {
  std::vector<HeavyExemption> out;
  for (size_t i = 0; i < report.runs.size(); ++i) {
    for (const AssertionRecord& a : report.runs[i].assertions) {
      if (a.exempted_share() > kExemptedShareNoted) out.push_back(HeavyExemption{i, &a});
    }
  }
  return out;
}

std::string share_text(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100.0 * share);
  return buf;
}

std::string figure_text(const FigureRecord& f) {
  char buf[64];
  if (f.unit == "share") {
    std::snprintf(buf, sizeof buf, "%.1f %%", 100 * f.value);
  } else if (f.unit.empty() && f.value == static_cast<double>(static_cast<int64_t>(f.value))) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(f.value));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f%s%s", f.value, f.unit.empty() ? "" : " ", f.unit.c_str());
  }
  return buf;
}

FigureTable figure_table(const RunRecord& r) {
  std::vector<std::string> rules;
  FigureTable t;
  for (const FigureRecord& f : r.figures) {
    if (std::find(rules.begin(), rules.end(), f.rule) == rules.end()) rules.push_back(f.rule);
    auto row = std::find_if(t.rows.begin(), t.rows.end(), [&](const FigureTable::Row& x) { return x.key == f.key; });
    if (row == t.rows.end()) t.rows.push_back(FigureTable::Row{f.key, f.label, {}});
  }
  for (const std::string& rule : rules) t.columns.push_back(rule.empty() ? "value" : rule);
  for (FigureTable::Row& row : t.rows) {
    row.cells.assign(rules.size(), "");
    for (const FigureRecord& f : r.figures) {
      if (f.key != row.key) continue;
      row.label = f.label;
      row.cells[static_cast<size_t>(std::find(rules.begin(), rules.end(), f.rule) - rules.begin())] = figure_text(f);
    }
  }
  return t;
}

const char* run_status(const RunRecord& r) {
  if (r.assertions.empty() && r.error.empty() && !r.figures.empty()) return "MEASURED";
  return r.passed() ? "PASS" : "FAIL";
}

}  // namespace fl::reports
