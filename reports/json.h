// A small JSON reader/writer for report.json, trace JSON lines and the sweep's worker protocol.
// Numbers keep their text so 64-bit seeds survive exactly. Depth is bounded (64). Never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fl::reports {

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // string value, or the number's literal text
  std::vector<Json> items;
  std::vector<std::string> keys;  // object member names, parallel to `values`
  std::vector<Json> values;

  // Member lookup (first match); nullptr when absent or not an object.
  const Json* get(std::string_view key) const;
  // Typed reads with a fallback when absent or of another type.
  std::string str(std::string_view key, std::string fallback = "") const;
  int64_t i64(std::string_view key, int64_t fallback = 0) const;
  uint64_t u64(std::string_view key, uint64_t fallback = 0) const;
  double num(std::string_view key, double fallback = 0) const;
  bool flag(std::string_view key, bool fallback = false) const;
  std::vector<std::string> strings(std::string_view key) const;
};

std::optional<Json> parse_json(std::string_view text, std::string* error = nullptr);

// `"..."` with JSON escapes.
std::string json_quote(std::string_view s);
// Shortest round-tripping decimal text of a double ("0" for non-finite).
std::string json_number(double v);
// 16 lowercase hex digits, and its inverse (0 on malformed input).
std::string hex16(uint64_t v);
uint64_t parse_hex16(const std::string& s);

}  // namespace fl::reports
