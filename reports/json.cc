#include "reports/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace fl::reports {
namespace {

constexpr int kMaxDepth = 64;

struct TooDeep {};

std::string dump_scalar(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

void dump_into(const Json& j, const JsonLayout& layout, int depth, bool lines, bool rows, std::string& out) {
  if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, value] : j.items()) {
      const bool row = depth == 0 && layout.row_arrays.count(key) > 0;
      out += first ? "" : row ? ",\n" : ",";
      first = false;
      out += json_quote(key);
      out += ':';
      dump_into(value, layout, depth + 1, row || layout.line_arrays.count(key) > 0, row, out);
    }
    out += '}';
  } else if (j.is_array()) {
    out += rows ? "[\n" : "[";
    for (size_t i = 0; i < j.size(); ++i) {
      if (i) out += lines ? ",\n" : ",";
      dump_into(j[i], layout, depth + 1, false, false, out);
    }
    out += ']';
  } else {
    out += dump_scalar(j);
  }
}

}  // namespace

std::optional<Json> parse_json(std::string_view text, std::string* error) {
  // The callback bounds nesting (nlohmann's parser itself is iterative, the bound is ours).
  const Json::parser_callback_t depth_guard = [](int depth, Json::parse_event_t, Json&) {
    if (depth > kMaxDepth) throw TooDeep{};
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), depth_guard);
  } catch (const Json::exception& e) {
    if (error) *error = e.what();
  } catch (const TooDeep&) {
    if (error) *error = "nesting deeper than " + std::to_string(kMaxDepth);
  }
  return std::nullopt;
}

const Json* json_get(const Json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string json_str(const Json& j, std::string_view key, std::string fallback) {
  const Json* v = json_get(j, key);
  return v && v->is_string() ? v->get<std::string>() : fallback;
}

int64_t json_i64(const Json& j, std::string_view key, int64_t fallback) {
  const Json* v = json_get(j, key);
  if (!v || !v->is_number()) return fallback;
  if (v->is_number_float()) return static_cast<int64_t>(v->get<double>());
  return v->get<int64_t>();
}

uint64_t json_u64(const Json& j, std::string_view key, uint64_t fallback) {
  const Json* v = json_get(j, key);
  if (!v || !v->is_number_integer()) return fallback;
  if (v->is_number_unsigned()) return v->get<uint64_t>();
  const int64_t s = v->get<int64_t>();
  return s < 0 ? fallback : static_cast<uint64_t>(s);
}

double json_num(const Json& j, std::string_view key, double fallback) {
  const Json* v = json_get(j, key);
  return v && v->is_number() ? v->get<double>() : fallback;
}

bool json_flag(const Json& j, std::string_view key, bool fallback) {
  const Json* v = json_get(j, key);
  return v && v->is_boolean() ? v->get<bool>() : fallback;
}

std::vector<std::string> json_strings(const Json& j, std::string_view key) {
  std::vector<std::string> out;
  for (const Json& i : json_items(j, key)) {
    if (i.is_string()) out.push_back(i.get<std::string>());
  }
  return out;
}

const std::vector<Json>& json_items(const Json& j, std::string_view key) {
  static const std::vector<Json> kNone;
  const Json* v = json_get(j, key);
  return v && v->is_array() ? v->get_ref<const Json::array_t&>() : kNone;
}

Json json_double(double v) {
  if (!std::isfinite(v)) return 0;
  // nlohmann prints 2.0 as "2.0"; the reports have always printed "2".
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) return static_cast<int64_t>(v);
  return v;
}

std::string json_dump(const Json& j, const JsonLayout& layout) {
  if (layout.row_arrays.empty() && layout.line_arrays.empty()) return dump_scalar(j);
  std::string out;
  dump_into(j, layout, 0, false, false, out);
  return out;
}

std::string json_quote(std::string_view s) { return dump_scalar(Json(s)); }

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t parse_hex16(const std::string& s) {
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return ec == std::errc() ? out : 0;
}

}  // namespace fl::reports
