#include "reports/matrix.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <set>

namespace fl::reports {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                                std::tolower(static_cast<unsigned char>(b[j - 1]))
                                            ? 0
                                            : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

const MatrixRow* find_matrix_row(const std::vector<MatrixRow>& rows, const std::string& id) {
  for (const MatrixRow& r : rows) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

std::vector<std::string> matrix_names(const std::vector<MatrixRow>& rows) {
  std::set<std::string> names;
  for (const MatrixRow& r : rows) names.insert(r.matrix);
  return {names.begin(), names.end()};
}

std::vector<const MatrixRow*> rows_of_matrix(const std::vector<MatrixRow>& rows, const std::string& matrix) {
  std::vector<const MatrixRow*> out;
  for (const MatrixRow& r : rows) {
    if (matrix == "all" || r.matrix == matrix) out.push_back(&r);
  }
  return out;
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  return best_d <= limit ? best : "";
}

}  // namespace fl::reports
