// The layers point one way: every quoted include of every source file is an edge the architecture
// allows. The rules are the `include-rules` block of docs/architecture.md (a file belongs to the
// longest layer prefixing its path; `*` is one folder, `$` that folder again; `:test` rules apply
// to *_test.cc files, which otherwise follow their layer). A file in no layer, or an edge no entry
// of its layer allows, fails the test with the file, the line and the include.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = FAULTLINE_SOURCE_DIR;
constexpr const char* kLayers[] = {"impl", "sim", "model", "properties", "reports", "harness", "bench", "tests"};

struct Rule {
  std::string pattern;               // "impl/*", "sim", "impl/*:test"
  std::vector<std::string> allowed;  // path prefixes, `$` for the folder `*` matched
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

// The `include-rules` fenced block of an architecture document; empty when there is none.
std::vector<Rule> parse_rules(const std::string& doc) {
  std::vector<Rule> rules;
  std::istringstream in(doc);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!inside) {
      inside = line == "```include-rules";
      continue;
    }
    if (line.rfind("```", 0) == 0) break;
    std::vector<std::string> words = split(line, ' ');
    if (words.empty() || words[0][0] == '#') continue;
    Rule r{words[0], std::vector<std::string>(words.begin() + 1, words.end())};
    rules.push_back(r);
  }
  return rules;
}

// How well `pattern` (without `:test`) matches the file's folders: the number of folders it
// covers, -1 when it does not match. `system` receives the folder a `*` matched.
int match(const std::string& pattern, const std::vector<std::string>& folders, std::string& system) {
  const std::vector<std::string> parts = split(pattern, '/');
  if (parts.size() > folders.size()) return -1;
  std::string star;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == "*") {
      star = folders[i];
    } else if (parts[i] != folders[i]) {
      return -1;
    }
  }
  system = star;
  return static_cast<int>(parts.size());
}

// The rule a file follows: the longest match, a literal folder beating `*` at the same length,
// a `:test` rule beating the plain one for *_test.cc files. Null when no layer holds the file.
const Rule* rule_for(const std::vector<Rule>& rules, const std::string& path, std::string& system) {
  std::vector<std::string> folders = split(path, '/');
  const bool test = path.size() > 8 && path.compare(path.size() - 8, 8, "_test.cc") == 0;
  folders.pop_back();  // the file name
  const Rule* best = nullptr;
  int best_score = -1;
  for (const Rule& r : rules) {
    std::string pattern = r.pattern;
    const bool test_rule = pattern.size() > 5 && pattern.compare(pattern.size() - 5, 5, ":test") == 0;
    if (test_rule) pattern.resize(pattern.size() - 5);
    if (test_rule && !test) continue;
    std::string star;
    const int covered = match(pattern, folders, star);
    if (covered < 0) continue;
    const int score = covered * 4 + (pattern.find('*') == std::string::npos ? 2 : 0) + (test_rule ? 1 : 0);
    if (score > best_score) {
      best_score = score;
      best = &r;
      system = star;
    }
  }
  return best;
}

bool allowed(const Rule& rule, const std::string& system, const std::string& include) {
  for (std::string entry : rule.allowed) {
    const size_t dollar = entry.find('$');
    if (dollar != std::string::npos) entry.replace(dollar, 1, system);
    if (include == entry) return true;
    if (include.size() > entry.size() && include.compare(0, entry.size(), entry) == 0 && include[entry.size()] == '/') {
      return true;
    }
  }
  return false;
}

// Whether an include names a file of this tree (its first folder is a layer's), not a library's.
bool project_header(const std::string& include) {
  const size_t slash = include.find('/');
  if (slash == std::string::npos) return false;
  const std::string top = include.substr(0, slash);
  for (const char* layer : kLayers) {
    if (top == layer) return true;
  }
  return false;
}

// Every forbidden edge of `files` (path relative to the source root -> contents), as
// "path:line: includes X".
std::vector<std::string> violations(const std::vector<Rule>& rules, const std::map<std::string, std::string>& files) {
  static const std::regex kInclude(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::vector<std::string> out;
  for (const auto& [path, text] : files) {
    std::string system;
    const Rule* rule = rule_for(rules, path, system);
    if (rule == nullptr) {
      out.push_back(path + ": in no layer of the include rules");
      continue;
    }
    std::istringstream in(text);
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      std::smatch m;
      if (!std::regex_search(line, m, kInclude)) continue;
      const std::string include = m[1];
      if (!project_header(include)) continue;  // a sibling or a third-party header ("absl/...")
      if (!allowed(*rule, system, include)) {
        out.push_back(path + ":" + std::to_string(line_no) + ": includes " + include + " (layer " + rule->pattern +
                      ")");
      }
    }
  }
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, std::string> source_files() {
  std::map<std::string, std::string> files;
  for (const char* dir : kLayers) {
    for (const auto& e : fs::recursive_directory_iterator(kSource / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      files[fs::relative(e.path(), kSource).generic_string()] = read(e.path());
    }
  }
  return files;
}

std::vector<Rule> tree_rules() { return parse_rules(read(kSource / "docs" / "architecture.md")); }

TEST(IncludeEdges, TheArchitectureDocDeclaresTheRules) {
  const std::vector<Rule> rules = tree_rules();
  ASSERT_GE(rules.size(), 8u) << "docs/architecture.md has no include-rules block";
  for (const Rule& r : rules) EXPECT_FALSE(r.allowed.empty()) << r.pattern;
}

TEST(IncludeEdges, EverySourceFileIncludesOnlyWhatItsLayerMay) {
  const std::map<std::string, std::string> files = source_files();
  ASSERT_GT(files.size(), 100u);
  const std::vector<std::string> bad = violations(tree_rules(), files);
  std::string all;
  for (const std::string& b : bad) all += b + "\n";
  EXPECT_TRUE(bad.empty()) << bad.size() << " forbidden include edge(s):\n" << all;
}

// The check catches a deliberately added forbidden include, in a source file and in a test, and
// leaves the allowed ones alone: the tree's own rules applied to a few made-up files.
TEST(IncludeEdges, AForbiddenIncludeFails) {
  const std::vector<Rule> rules = tree_rules();
  const std::map<std::string, std::string> files = {
      {"impl/likes/service.cc", "#include \"impl/likes/service.h\"\n#include \"impl/ports/redis.h\"\n"},
      {"impl/likes/leak_test.cc", "#include <gtest/gtest.h>\n#include \"sim/world.h\"\n"},
      {"impl/gifts/peek.cc", "#include \"impl/likes/service.h\"\n"},
      {"properties/gifts/judge.cc", "#include \"harness/runner.h\"\n#include \"model/gifts/model.h\"\n"},
      {"properties/likes/judge.cc", "#include \"model/gifts/model.h\"\n"},
      {"sim/world.cc", "  #  include \"properties/verdict.h\"\n"},
      {"model/combo/model.cc", "#include \"model/combo/model.h\"\n"},
      {"harness/runner.cc", "#include \"impl/likes/service.h\"\n#include \"sim/world.h\"\n"},
  };
  const std::vector<std::string> bad = violations(rules, files);
  const std::vector<std::string> expected = {
      "impl/gifts/peek.cc:1: includes impl/likes/service.h (layer impl/*)",
      "impl/likes/leak_test.cc:2: includes sim/world.h (layer impl/*)",
      "properties/gifts/judge.cc:1: includes harness/runner.h (layer properties/*)",
      "properties/likes/judge.cc:1: includes model/gifts/model.h (layer properties/*)",
      "sim/world.cc:1: includes properties/verdict.h (layer sim)",
  };
  EXPECT_EQ(bad, expected);
}

TEST(IncludeEdges, AFileInNoLayerFails) {
  const std::vector<std::string> bad = violations(tree_rules(), {{"tools/x.cc", ""}});
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("in no layer"), std::string::npos);
}

}  // namespace
