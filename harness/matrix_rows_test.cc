#include "harness/matrix_rows.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "harness/system.h"

namespace fl {
namespace {

using reports::MatrixRow;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(MatrixRows, EverySystemDeclaresItsRowsAndIdsAreUnique) {
  std::map<char, int> ranking;
  std::set<std::string> ids;
  for (const MatrixRow& r : all_matrix_rows()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_FALSE(r.pass_condition.empty()) << r.id;
    EXPECT_FALSE(r.source.empty()) << r.id;
    EXPECT_NE(find_system(r.matrix), nullptr) << r.id << " belongs to no system: " << r.matrix;
    if (r.matrix == "ranking") ++ranking[r.id[0]];
  }
  for (const SystemUnderTest* s : all_systems()) EXPECT_FALSE(rows_of_matrix(s->name()).empty()) << s->name();
  EXPECT_EQ(matrix_names(), system_names());
  EXPECT_EQ(rows_of_matrix("all").size(), all_matrix_rows().size());
}

// One system's rows, parsed on their own (what a scenario's rows are checked against first), are
// exactly that system's part of the registry, in the same order; an unknown system has none.
TEST(MatrixRows, OneSystemsRowsAreItsPartOfTheRegistry) {
  for (const SystemUnderTest* s : all_systems()) {
    const std::vector<MatrixRow>* own = matrix_rows_of_system(s->name());
    ASSERT_NE(own, nullptr) << s->name();
    std::vector<MatrixRow> expected;
    for (const MatrixRow* r : rows_of_matrix(s->name())) expected.push_back(*r);
    EXPECT_EQ(*own, expected) << s->name();
    EXPECT_EQ(matrix_rows_of_system(s->name()), own);  // parsed once, the same rows after
  }
  EXPECT_EQ(matrix_rows_of_system("no-such-system"), nullptr);
}

// The rows of the seed designs' matrices, as the designs number them (doc 004 §16 for ranking).
TEST(MatrixRows, TheSeedMatricesAreComplete) {
  std::map<char, int> ranking;
  for (const MatrixRow* r : rows_of_matrix("ranking")) ++ranking[r->id[0]];
  EXPECT_EQ(ranking['C'], 33);
  EXPECT_EQ(ranking['F'], 15);
  EXPECT_EQ(ranking['A'], 7);
  EXPECT_EQ(ranking['P'], 10);
  for (int i = 1; i <= 7; ++i) EXPECT_NE(find_matrix_row("COMBO-T" + std::to_string(i)), nullptr);
  for (int i = 1; i <= 5; ++i) EXPECT_NE(find_matrix_row("COMBO-G" + std::to_string(i)), nullptr);
  EXPECT_NE(find_matrix_row("DEMO-1"), nullptr);
  EXPECT_EQ(find_matrix_row("C34"), nullptr);
  EXPECT_EQ(find_matrix_row("C01")->invariants, (std::vector<std::string>{"RANK-4", "RANK-11", "RANK-41"}));
  EXPECT_EQ(find_matrix_row("C33")->source, "004 §16.1 L452");
  EXPECT_EQ(find_matrix_row("F15")->source, "004 §16.4 L496");
  EXPECT_FALSE(find_matrix_row("P01")->assertable);
}

// Every invariant id a row cites is defined in docs/invariants.md (the seed systems' catalogue) or
// in the system's own page docs/systems/<system>.md (a system with no seed design defines its
// ids there), as a table row `| ID |`; and the ranking rows cite exactly the ids of its mapping table.
TEST(MatrixRows, InvariantIdsAreDefinedInTheDocs) {
  const std::string catalogue = read_file(std::string(FAULTLINE_SOURCE_DIR) + "/docs/invariants.md");
  ASSERT_FALSE(catalogue.empty()) << "docs/invariants.md is the invariant catalogue: it must exist";
  for (const MatrixRow& r : all_matrix_rows()) {
    const std::string page = read_file(std::string(FAULTLINE_SOURCE_DIR) + "/docs/systems/" + r.matrix + ".md");
    for (const std::string& inv : r.invariants) {
      const std::string cell = "| " + inv + " |";
      EXPECT_TRUE(catalogue.find(cell) != std::string::npos || page.find(cell) != std::string::npos)
          << r.id << " cites " << inv;
    }
    if (r.matrix != "ranking" || (r.id[0] != 'C' && r.id[0] != 'F')) continue;
    const size_t at = catalogue.find("| " + r.id + " |");
    ASSERT_NE(at, std::string::npos) << r.id;
    const std::string line = catalogue.substr(at, catalogue.find('\n', at) - at);
    for (const std::string& inv : r.invariants) {
      EXPECT_NE(line.find(inv), std::string::npos) << r.id << ": " << inv << " not in " << line;
    }
  }
}

TEST(MatrixRows, BadFilesAreRejectedWithTheirPosition) {
  const std::string good =
      "matrix: mini\nrows:\n  - id: T-1\n    group: g\n    scenario: s\n    pass: p\n"
      "    invariants: []\n    source: here\n";
  absl::StatusOr<std::vector<MatrixRow>> ok = parse_matrix_rows("mini", "m.yaml", good);
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_EQ((*ok)[0].matrix, "mini");
  EXPECT_TRUE((*ok)[0].assertable);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"matrix: other\nrows: []\n", "m.yaml:1:1: `matrix:` must be the system's name, mini"},
      {"matrix: mini\nrows: {}\n", "`rows:` must be a list"},
      {"matrix: mini\nrows:\n  - id: T-1\n", "m.yaml:3:5: a row needs `group:` (text)"},
      {good + "    colour: red\n", "m.yaml:9:5: unknown key `colour`"},
      {good + "    assertable: maybe\n", "m.yaml:9:17: `assertable:` takes true or false"},
      {good + "  - id: T-1\n    group: g\n    scenario: s\n    pass: p\n    invariants: []\n    source: x\n",
       "m.yaml:9:5: id T-1 repeated"},
      {"matrix: mini\nrows: [\n", "m.yaml:"},
  };
  for (const auto& [text, message] : bad) {
    absl::StatusOr<std::vector<MatrixRow>> r = parse_matrix_rows("mini", "m.yaml", text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(std::string(r.status().message()).find(message), std::string::npos) << r.status();
  }
}

}  // namespace
}  // namespace fl
