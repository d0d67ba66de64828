// Shared replies, parsing and formatting with Redis 7.0's exact rules and texts.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

RedisReply err_syntax() { return RedisReply::error("ERR syntax error"); }

RedisReply err_expire(const Ctx& c) {
  return RedisReply::error("ERR invalid expire time in '" + c.name() + "' command");
}

std::optional<int64_t> expire_arg_at_ms(const Ctx& c, int64_t when, bool seconds, bool relative) {
  if (when <= 0) return std::nullopt;
  if (seconds) {
    if (when > kLongMax / 1000) return std::nullopt;
    when *= 1000;
  }
  if (relative) {
    if (when > kLongMax - c.now_ms) return std::nullopt;
    when += c.now_ms;
  }
  return when;
}

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
RedisReply err_not_integer() { return RedisReply::error("ERR value is not an integer or out of range"); }
RedisReply err_not_float() { return RedisReply::error("ERR value is not a valid float"); }
RedisReply err_wrongtype() {
  return RedisReply::error("WRONGTYPE Operation against a key holding the wrong kind of value");
}
RedisReply err_arity(std::string_view fullname) {
  return RedisReply::error("ERR wrong number of arguments for '" + std::string(fullname) + "' command");
}

RedisReply bulk_array(const std::vector<std::string>& items) {
  std::vector<RedisReply> out;
  out.reserve(items.size());
  for (const auto& s : items) out.push_back(RedisReply::bulk(s));
  return RedisReply::array(std::move(out));
}

std::string lower(std::string_view s) {
  std::string out;
  assign_lower(&out, s);
  return out;
}

void assign_lower(std::string* out, std::string_view s) {
  out->assign(s);
  for (char& ch : *out) ch = ascii_lower(ch);
}

std::optional<int64_t> parse_int64(std::string_view s) {
  // util.c string2ll.
  if (s.empty() || s.size() > 20) return std::nullopt;
  if (s.size() == 1 && s[0] == '0') return 0;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return std::nullopt;
  }
  if (s[i] < '1' || s[i] > '9') return std::nullopt;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - v);
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> parse_double(std::string_view s) {
  // object.c getDoubleFromObject: strtod over the whole string, no leading space, no NaN.
  if (s.empty() || s.size() > 5000) return std::nullopt;
  if (std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  const std::string buf(s);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return std::nullopt;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || std::fpclassify(v) == FP_ZERO)) { return std::nullopt; }
  if (std::isnan(v)) return std::nullopt;
  return v;
}

std::string format_double(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[128];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

}  // namespace fl::sim::redis
