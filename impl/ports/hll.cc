#include "impl/ports/hll.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "impl/ports/stable_hash.h"
#include "impl/ports/text.h"
#include "impl/ports/assert.h"

namespace fl {

uint64_t hll_hash(std::string_view bytes) { return stable_hash(bytes); }

void Hll::add(std::string_view element) {
  const uint64_t h = hll_hash(element);
  const uint64_t index = h >> (64 - kHllPrecision);
  const uint64_t rest = h << kHllPrecision;
  const int rank = rest == 0 ? 64 - kHllPrecision + 1 : std::countl_zero(rest) + 1;
  uint8_t& r = registers_[index];
  if (rank > r) r = static_cast<uint8_t>(rank);
}

void Hll::merge(const Hll& other) {
  FL_ASSERT(other.registers_.size() == registers_.size());
  // Through local pointers and a local count: a uint8_t store may alias the vectors' own fields,
  // so indexing the vectors reloads them for every register and the loop is not vectorised.
  uint8_t* to = registers_.data();
  const uint8_t* from = other.registers_.data();
  const size_t n = registers_.size();
  for (size_t j = 0; j < n; ++j) to[j] = std::max(to[j], from[j]);
}

namespace {

constexpr int kMaxRank = 64 - kHllPrecision + 1;

// 2^-r for every rank a register can hold: exact powers of two, so summing them from the table is
// bit for bit the sum of std::ldexp(1.0, -r), without a libm call per register.
constexpr std::array<double, kMaxRank + 1> kInversePowers = [] {
  std::array<double, kMaxRank + 1> t{};
  double v = 1.0;
  for (double& x : t) {
    x = v;
    v /= 2;
  }
  return t;
}();

bool eight_zero(const uint8_t* registers) {
  uint64_t eight;
  std::memcpy(&eight, registers, sizeof eight);
  return eight == 0;
}

}  // namespace

int64_t Hll::estimate() const {
  const double m = kHllRegisters;
  double sum = 0;
  int64_t zeros = 0;
  for (uint8_t r : registers_) {
    FL_ASSERT(r <= kMaxRank);
    sum += kInversePowers[r];
    zeros += r == 0 ? 1 : 0;
  }
  const double alpha = 0.7213 / (1 + 1.079 / m);
  double e = alpha * m * m / sum;
  if (e <= 2.5 * m && zeros > 0) e = m * std::log(m / static_cast<double>(zeros));  // linear counting
  return std::llround(e);
}

std::string Hll::encode() const {
  std::string out;
  const size_t n = registers_.size();
  for (size_t j = 0; j < n; ++j) {
    // Most sketches are sparse and every checkpoint encodes each one again: skip zero registers
    // eight at a time.
    if (j % 8 == 0 && j + 8 <= n && eight_zero(&registers_[j])) {
      j += 7;
      continue;
    }
    if (registers_[j] == 0) continue;
    if (!out.empty()) out += ',';
    append_decimal(out, static_cast<int64_t>(j));
    out += ':';
    append_decimal(out, registers_[j]);
  }
  return out;
}

std::optional<Hll> Hll::decode(const std::string& text) {
  Hll h;
  if (!text.empty() && text.back() == ',') return std::nullopt;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    const size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size()) return std::nullopt;
    char* rest = nullptr;
    const long j = std::strtol(item.c_str(), &rest, 10);
    if (rest != item.c_str() + colon) return std::nullopt;
    const long r = std::strtol(item.c_str() + colon + 1, &rest, 10);
    if (*rest != '\0' || j < 0 || j >= kHllRegisters || r < 1 || r > 64 - kHllPrecision + 1) return std::nullopt;
    h.registers_[static_cast<size_t>(j)] = static_cast<uint8_t>(r);
    at = end + 1;
  }
  return h;
}

int64_t hll_error_bound(int64_t n) {
  return 3 + static_cast<int64_t>(std::ceil(6.0 * 1.04 / std::sqrt(double{kHllRegisters}) * static_cast<double>(n)));
}

}  // namespace fl
