// JSON for report.json, trace JSON lines and the sweep's worker protocol, on nlohmann-json.
// `Json` is nlohmann's ordered_json: members keep the order they were written in, so a document
// serialises exactly as the hand-written writer it replaced did. 64-bit integers are exact
// (nlohmann keeps signed and unsigned integers apart from doubles). Parsing never throws.
// The helpers below are a thin layer so call sites stay short: typed member reads with a
// fallback, and a serialiser that puts one record per line where a document has always done so.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace fl::reports {

using Json = nlohmann::ordered_json;

// nullopt (and `*error` = the library's message) on malformed input or nesting deeper than 64.
std::optional<Json> parse_json(std::string_view text, std::string* error = nullptr);

// Member `key` of an object; nullptr when absent or `j` is not an object.
const Json* json_get(const Json& j, std::string_view key);
// Typed member reads with a fallback when absent or of another type.
std::string json_str(const Json& j, std::string_view key, std::string fallback = "");
int64_t json_i64(const Json& j, std::string_view key, int64_t fallback = 0);
uint64_t json_u64(const Json& j, std::string_view key, uint64_t fallback = 0);
double json_num(const Json& j, std::string_view key, double fallback = 0);
bool json_flag(const Json& j, std::string_view key, bool fallback = false);
std::vector<std::string> json_strings(const Json& j, std::string_view key);
// A member's elements (empty when absent or not an array).
const std::vector<Json>& json_items(const Json& j, std::string_view key);

// A double as the writer has always printed it: integral values without ".0", non-finite as 0.
Json json_double(double v);

// Where a document puts records on lines of their own (for diffs and line-oriented tools).
struct JsonLayout {
  std::set<std::string, std::less<>> row_arrays;   // top-level: ",\n" before the key, "[\n" then one item a line
  std::set<std::string, std::less<>> line_arrays;  // any depth: one item a line
};
// Compact serialisation (nlohmann's), with the line breaks `layout` asks for. Invalid UTF-8 is
// replaced by U+FFFD rather than thrown on.
std::string json_dump(const Json& j, const JsonLayout& layout = {});

// `"..."` with JSON escapes (the library's).
std::string json_quote(std::string_view s);
// 16 lowercase hex digits, and its inverse (0 on malformed input).
std::string hex16(uint64_t v);
uint64_t parse_hex16(const std::string& s);

}  // namespace fl::reports
