// Every seed citation in the code points at what it claims. A comment cites a seed line as
// `NNN:Lx` or `NNN:Lx-Ly` (or `NNN:Lx-y`): NNN is the seed's number (its file
// designs/NNN_*.txt), x..y are line numbers as `cat -n` prints them. The lines must exist;
// and when the citation is directly followed (after optional spaces or a colon) by a quoted span,
// "..." or `...`, the quoted text with every white-space character removed must occur in those
// lines with theirs removed (quotes may elide with "..."/"…": each piece must then occur, in
// order). A citation that quotes the wrong line is how reviewers get misled.
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
const fs::path kSeeds = kSource / "designs";

std::string squeeze(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    // U+3000 IDEOGRAPHIC SPACE (E3 80 80) counts as white space too.
    if (c == 0xE3 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        static_cast<unsigned char>(s[i + 2]) == 0x80) {
      i += 2;
      continue;
    }
    out += s[i];
  }
  return out;
}

std::vector<std::string> read_lines(const fs::path& p) {
  std::vector<std::string> lines;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Seed number -> its lines (index 0 = line 1).
std::map<std::string, std::vector<std::string>> load_seeds() {
  std::map<std::string, std::vector<std::string>> seeds;
  if (!fs::exists(kSeeds)) return seeds;
  for (const auto& e : fs::directory_iterator(kSeeds)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name[3] == '_' && e.path().extension() == ".txt")
      seeds[name.substr(0, 3)] = read_lines(e.path());
  }
  return seeds;
}

std::vector<fs::path> code_files() {
  std::vector<fs::path> files;
  for (const char* dir : {"impl", "model", "properties", "sim", "harness", "reports", "bench", "tests"}) {
    if (!fs::exists(kSource / dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(kSource / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cc" || ext == ".h")) files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Splits a quote on elisions ("...", "…") into the pieces that must each occur, in order.
std::vector<std::string> pieces_of(const std::string& quote) {
  std::vector<std::string> out;
  std::string rest = quote;
  for (;;) {
    size_t at = rest.find("...");
    size_t len = 3;
    const size_t uni = rest.find("\xE2\x80\xA6");
    if (uni != std::string::npos && (at == std::string::npos || uni < at)) at = uni, len = 3;
    if (at == std::string::npos) break;
    out.push_back(rest.substr(0, at));
    rest = rest.substr(at + len);
  }
  out.push_back(rest);
  return out;
}

bool occurs_in_order(const std::string& haystack, const std::vector<std::string>& pieces) {
  size_t from = 0;
  for (const std::string& raw : pieces) {
    const std::string p = squeeze(raw);
    if (p.empty()) continue;
    const size_t at = haystack.find(p, from);
    if (at == std::string::npos) return false;
    from = at + p.size();
  }
  return true;
}

TEST(SeedCitations, EveryCitationPointsAtWhatItQuotes) {
  const auto seeds = load_seeds();
  ASSERT_EQ(seeds.size(), 4u) << "the four design documents belong in " << kSeeds;
  const std::regex cite(R"re((\d{3}):L(\d+)(?:-L?(\d+))?)re");
  const std::regex quoted(R"re(^[ :]*(?:"([^"]+)"|`([^`]+)`))re");
  int citations = 0, quotes = 0;
  std::vector<std::string> wrong;
  for (const fs::path& file : code_files()) {
    const std::vector<std::string> lines = read_lines(file);
    for (size_t n = 0; n < lines.size(); ++n) {
      const std::string& line = lines[n];
      for (std::sregex_iterator it(line.begin(), line.end(), cite), end; it != end; ++it) {
        const std::smatch& m = *it;
        const std::string where = fs::relative(file, kSource).string() + ":" + std::to_string(n + 1) + ": " + m.str();
        auto seed = seeds.find(m[1].str());
        if (seed == seeds.end()) continue;  // not one of the four seeds (e.g. a port number)
        ++citations;
        const int from = std::stoi(m[2].str());
        const int to = m[3].matched ? std::stoi(m[3].str()) : from;
        if (from < 1 || to < from || to > static_cast<int>(seed->second.size())) {
          wrong.push_back(where + " (no such lines)");
          continue;
        }
        std::smatch q;
        const std::string after = line.substr(m.position() + m.length());
        if (!std::regex_search(after, q, quoted)) continue;
        ++quotes;
        const std::string text = q[1].matched ? q[1].str() : q[2].str();
        std::string cited;
        for (int l = from; l <= to; ++l) cited += seed->second[l - 1];
        if (!occurs_in_order(squeeze(cited), pieces_of(text))) {
          wrong.push_back(where + " quotes \"" + text + "\", not in those lines");
        }
      }
    }
  }
  std::string all;
  for (const std::string& w : wrong) all += "\n  " + w;
  EXPECT_TRUE(wrong.empty()) << wrong.size() << " wrong citations of " << citations << ":" << all;
  EXPECT_GT(citations, 0);
  RecordProperty("citations", citations);
  RecordProperty("quotes", quotes);
}

TEST(SeedCitations, TheCheckerCatchesAMisquote) {
  EXPECT_TRUE(occurs_in_order(squeeze("func  Like(ctx)  {\n  SetNX(k)"), pieces_of("Like(ctx) {")));
  EXPECT_FALSE(occurs_in_order(squeeze("func Like(ctx) {"), pieces_of("Unlike(ctx)")));
  EXPECT_TRUE(occurs_in_order(squeeze("a b c d e"), pieces_of("a...d")));
  EXPECT_FALSE(occurs_in_order(squeeze("a b c d e"), pieces_of("d...a")));
}

}  // namespace
