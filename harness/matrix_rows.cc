#include "harness/matrix_rows.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

#include "absl/strings/str_cat.h"
#include "harness/system.h"

namespace fl {
namespace {

using reports::MatrixRow;

absl::Status error_at(const std::string& file, const YAML::Mark& mark, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", mark.line + 1, ":", mark.column + 1, ": ", what));
}

// The scalar under `key`, or an error naming the row's position when it is missing or not text.
absl::StatusOr<std::string> text_of(const std::string& file, const YAML::Node& row, const char* key) {
  const YAML::Node n = row[key];
  if (!n || !n.IsScalar()) return error_at(file, row.Mark(), absl::StrCat("a row needs `", key, ":` (text)"));
  return n.Scalar();
}

absl::StatusOr<MatrixRow> row_of(const std::string& system, const std::string& file, const YAML::Node& n) {
  static const std::set<std::string> kKeys = {"id", "group", "scenario", "pass", "invariants", "source", "assertable"};
  if (!n.IsMap()) return error_at(file, n.Mark(), "a row is a map (id, group, scenario, pass, invariants, source)");
  for (const auto& kv : n) {
    if (!kKeys.count(kv.first.Scalar()))
      return error_at(file, kv.first.Mark(), "unknown key `" + kv.first.Scalar() + "`");
  }
  MatrixRow r;
  r.matrix = system;
  for (auto [field, key] : {std::pair{&r.id, "id"}, std::pair{&r.group, "group"}, std::pair{&r.scenario, "scenario"},
                            std::pair{&r.pass_condition, "pass"}, std::pair{&r.source, "source"}}) {
    absl::StatusOr<std::string> v = text_of(file, n, key);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  if (r.id.empty()) return error_at(file, n.Mark(), "empty id");
  const YAML::Node inv = n["invariants"];
  if (!inv || !inv.IsSequence()) return error_at(file, n.Mark(), "a row needs `invariants:` (a list, may be [])");
  for (const YAML::Node& i : inv) r.invariants.push_back(i.Scalar());
  if (const YAML::Node a = n["assertable"]) {
    bool value = true;
    if (!YAML::convert<bool>::decode(a, value)) return error_at(file, a.Mark(), "`assertable:` takes true or false");
    r.assertable = value;
  }
  return r;
}

}  // namespace

absl::StatusOr<std::vector<MatrixRow>> parse_matrix_rows(const std::string& system, const std::string& file,
                                                         std::string_view yaml) {
  YAML::Node doc;
  try {
    doc = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) { return error_at(file, e.mark, e.msg); }
  if (!doc.IsMap()) return error_at(file, doc.Mark(), "a matrix file is a map with `matrix:` and `rows:`");
  if (!doc["matrix"] || doc["matrix"].Scalar() != system) {
    return error_at(file, doc.Mark(), "`matrix:` must be the system's name, " + system);
  }
  if (!doc["rows"] || !doc["rows"].IsSequence()) return error_at(file, doc.Mark(), "`rows:` must be a list");
  std::vector<MatrixRow> rows;
  std::set<std::string> ids;
  for (const YAML::Node& n : doc["rows"]) {
    absl::StatusOr<MatrixRow> r = row_of(system, file, n);
    if (!r.ok()) return r.status();
    if (!ids.insert(r->id).second) return error_at(file, n.Mark(), "id " + r->id + " repeated");
    rows.push_back(std::move(*r));
  }
  return rows;
}

namespace {

// A compiled-in matrix that does not parse is a build defect: stop with its error.
std::vector<MatrixRow> parse_declared(const SystemDeclaration& d) {
  absl::StatusOr<std::vector<MatrixRow>> parsed = parse_matrix_rows(d.system->name(), d.matrix_file, d.matrix_yaml);
  if (!parsed.ok()) {
    std::fprintf(stderr, "faultline: %s\n", std::string(parsed.status().message()).c_str());
    std::abort();
  }
  return *std::move(parsed);
}

}  // namespace

const std::vector<MatrixRow>* matrix_rows_of_system(const std::string& system) {
  // One slot per declared system, each parsed at its first use (yaml-cpp takes about 1,500
  // instructions a byte, and ranking's matrix is most of the bytes: a run of another system need
  // not pay for it). call_once: benchmarks run scenarios on several threads.
  struct Slot {
    std::once_flag once;
    std::vector<MatrixRow> rows;
  };
  static std::vector<Slot> slots(declared_systems().size());
  const std::vector<SystemDeclaration>& declared = declared_systems();
  for (size_t i = 0; i < declared.size(); ++i) {
    if (declared[i].system->name() != system) continue;
    std::call_once(slots[i].once, [&] { slots[i].rows = parse_declared(declared[i]); });
    return &slots[i].rows;
  }
  return nullptr;
}

const std::vector<MatrixRow>& all_matrix_rows() {
  static const std::vector<MatrixRow> rows = [] {
    std::vector<MatrixRow> all;
    std::set<std::string> ids;
    for (const SystemDeclaration& d : declared_systems()) {
      for (const MatrixRow& r : *matrix_rows_of_system(d.system->name())) {
        if (!ids.insert(r.id).second) {
          std::fprintf(stderr, "faultline: %s: row id %s is also another system's\n", d.matrix_file, r.id.c_str());
          std::abort();
        }
        all.push_back(r);
      }
    }
    return all;
  }();
  return rows;
}

const MatrixRow* find_matrix_row(const std::string& id) { return reports::find_matrix_row(all_matrix_rows(), id); }

std::vector<const MatrixRow*> rows_of_matrix(const std::string& matrix) {
  return reports::rows_of_matrix(all_matrix_rows(), matrix);
}

std::vector<std::string> matrix_names() { return reports::matrix_names(all_matrix_rows()); }

}  // namespace fl
