// Judges read the injected faults in one place: properties/common/fault_budget.h answers "which
// faults touched this, and by how much" from the world's fault log, with the reach each fault has.
// A judge that walks the fault log itself re-invents an excuse without that reach (a clock drift of
// 0 ppm excusing a whole run, a partition of two nodes that never talk excusing a lost push). So no
// file of properties/ outside common/, and no system adapter of harness/systems/, names a fault
// record or a fault kind, except to record a fault it injects: they hand the log to a FaultBudget
// and ask it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = FAULTLINE_SOURCE_DIR;

// The parentheses still open after `line` from `from` on, starting with `depth` open.
int open_after(const std::string& line, size_t from, int depth) {
  for (size_t i = from; i < line.size(); ++i) {
    if (line[i] == '(') ++depth;
    if (line[i] == ')') --depth;
  }
  return depth < 0 ? 0 : depth;
}

// "file:line: text" of every line in `dir` (recursively; tests excluded) that reads a fault record.
std::vector<std::string> fault_reads(const fs::path& dir) {
  static const std::regex kRead(R"(FaultRecord|FaultKind::|fault_log\(\)\s*\)|:\s*run\.faults\))");
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.find("_test.") != std::string::npos) continue;
    if (e.path().extension() != ".cc" && e.path().extension() != ".h") continue;
    std::ifstream in(e.path());
    int n = 0;
    int injecting_depth = 0;  // open parentheses of a record_fault( call that spans lines
    for (std::string line; std::getline(in, line);) {
      ++n;
      // Injecting a fault (recording it) is not reading one, on any line of the call.
      const size_t call = line.find("record_fault(");
      const bool injecting = injecting_depth > 0 || call != std::string::npos;
      if (std::regex_search(line, kRead) && !injecting) {
        out.push_back(fs::relative(e.path(), kSource).string() + ":" + std::to_string(n) + ": " + line);
      }
      if (injecting) injecting_depth = open_after(line, call == std::string::npos ? 0 : call, injecting_depth);
    }
  }
  return out;
}

std::string listing(const std::vector<std::string>& lines) {
  std::ostringstream s;
  for (const std::string& l : lines) s << "  " << l << "\n";
  return s.str();
}

// Every system's judges (properties/<system>/, common/ excluded: the budget is the one reader) and
// the system adapters, found by listing the folders, so a new system is checked without an edit.
std::vector<std::string> judge_folders() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kSource / "properties")) {
    if (e.is_directory() && e.path().filename() != "common")
      out.push_back("properties/" + e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  out.push_back("harness/systems");
  return out;
}

class FaultReads : public testing::TestWithParam<std::string> {};

TEST_P(FaultReads, JudgesReadFaultsOnlyThroughTheBudget) {
  const std::vector<std::string> reads = fault_reads(kSource / GetParam());
  EXPECT_TRUE(reads.empty()) << reads.size() << " lines read the fault log outside properties/common/:\n"
                             << listing(reads);
}

INSTANTIATE_TEST_SUITE_P(Judges, FaultReads, testing::ValuesIn(judge_folders()),
                         [](const testing::TestParamInfo<std::string>& p) {
                           std::string name = p.param;
                           for (char& c : name) c = (c == '/' ? '_' : c);
                           return name;
                         });

// The check sees what it is for: the budget itself reads records.
TEST(FaultReadsCheck, FindsTheBudgetsOwnReads) { EXPECT_FALSE(fault_reads(kSource / "properties/common").empty()); }

}  // namespace
