#include "properties/redis/diff_scripts.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>

namespace fl::redis_diff {
namespace {

using Args = std::vector<std::string>;

// Lua 5.1's tonumber on a string: strtod of the whole string (surrounding spaces allowed);
// nullopt when it is not a number.
std::optional<double> lua_tonumber(const RedisReply& r) {
  if (r.kind != RedisReply::Kind::kBulk || r.str.empty()) return std::nullopt;
  const char* begin = r.str.c_str();
  char* end = nullptr;
  double d = std::strtod(begin, &end);
  if (end == begin) return std::nullopt;
  while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') ++end;
  if (*end != '\0') return std::nullopt;
  return d;
}

// Lua number -> Redis integer reply: truncation, as (long long) does on x86-64 (out of range,
// including 2^63 which INT64_MAX rounds to, gives INT64_MIN).
RedisReply lua_number(double d) {
  if (!(d < 9223372036854775808.0) || d < -9223372036854775808.0) return RedisReply::integer_of(INT64_MIN);
  return RedisReply::integer_of(static_cast<int64_t>(d));
}
// An integer reply that went through a Lua variable (a double) and back.
RedisReply via_lua(const RedisReply& r) {
  return r.kind == RedisReply::Kind::kInteger ? lua_number(static_cast<double>(r.integer)) : r;
}

RedisScript cas_delete() {
  return {"cas_delete",
          "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
          "  return redis.call('DEL', KEYS[1])\n"
          "end\n"
          "return 0\n",
          [](ScriptCalls& redis, const Args& keys, const Args& args) {
            RedisReply v = redis.call({"GET", keys[0]});
            if (v.is_error()) return v;  // redis.call raises
            if (v.kind == RedisReply::Kind::kBulk && v.str == args[0]) return redis.call({"DEL", keys[0]});
            return RedisReply::integer_of(0);
          }};
}

RedisScript incr_ttl() {
  return {"incr_ttl",
          "local v = redis.call('INCRBY', KEYS[1], ARGV[1])\n"
          "if v == tonumber(ARGV[1]) then\n"
          "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
          "end\n"
          "return v\n",
          [](ScriptCalls& redis, const Args& keys, const Args& args) {
            RedisReply v = redis.call({"INCRBY", keys[0], args[0]});
            if (v.is_error()) return v;
            if (static_cast<double>(v.integer) == std::strtod(args[0].c_str(), nullptr)) {
              RedisReply e = redis.call({"PEXPIRE", keys[0], args[1]});
              if (e.is_error()) return e;
            }
            return via_lua(v);
          }};
}

RedisScript zadd_top() {
  return {"zadd_top",
          "redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])\n"
          "return redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1, 'WITHSCORES')\n",
          [](ScriptCalls& redis, const Args& keys, const Args& args) {
            RedisReply a = redis.call({"ZADD", keys[0], args[0], args[1]});
            if (a.is_error()) return a;
            long long n = std::strtoll(args[2].c_str(), nullptr, 10);
            return redis.call({"ZREVRANGE", keys[0], "0", std::to_string(n - 1), "WITHSCORES"});
          }};
}

RedisScript ack_del() {
  return {"ack_del",
          "local n = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])\n"
          "redis.call('XDEL', KEYS[1], ARGV[2])\n"
          "return n\n",
          [](ScriptCalls& redis, const Args& keys, const Args& args) {
            RedisReply n = redis.call({"XACK", keys[0], args[0], args[1]});
            if (n.is_error()) return n;
            RedisReply d = redis.call({"XDEL", keys[0], args[1]});
            if (d.is_error()) return d;
            return via_lua(n);
          }};
}

RedisScript hsum() {
  return {"hsum",
          "local a = tonumber(redis.call('HGET', KEYS[1], ARGV[1])) or 0\n"
          "local b = tonumber(redis.call('HGET', KEYS[1], ARGV[2])) or 0\n"
          "return a + b\n",
          [](ScriptCalls& redis, const Args& keys, const Args& args) {
            RedisReply a = redis.call({"HGET", keys[0], args[0]});
            if (a.is_error()) return a;
            RedisReply b = redis.call({"HGET", keys[0], args[1]});
            if (b.is_error()) return b;
            return lua_number(lua_tonumber(a).value_or(0) + lua_tonumber(b).value_or(0));
          }};
}

RedisScript list_mix() {
  return {"list_mix",
          "local n = redis.call('INCR', KEYS[1])\n"
          "return {n, redis.call('GET', KEYS[1]), false, 'x', {1, 'y'}, 3.99, true}\n",
          [](ScriptCalls& redis, const Args& keys, const Args&) {
            RedisReply n = redis.call({"INCR", keys[0]});
            if (n.is_error()) return n;
            RedisReply g = redis.call({"GET", keys[0]});
            if (g.is_error()) return g;
            return RedisReply::array({via_lua(n), g, RedisReply::nil(), RedisReply::bulk("x"),
                                      RedisReply::array({RedisReply::integer_of(1), RedisReply::bulk("y")}),
                                      RedisReply::integer_of(3), RedisReply::integer_of(1)});
          }};
}

RedisScript ok_or_err() {
  return {"ok_or_err",
          "if redis.call('EXISTS', KEYS[1]) == 1 then\n"
          "  return {ok='DONE'}\n"
          "end\n"
          "return {err='ERR missing key'}\n",
          [](ScriptCalls& redis, const Args& keys, const Args&) {
            RedisReply e = redis.call({"EXISTS", keys[0]});
            if (e.is_error()) return e;
            if (e.integer == 1) return RedisReply::status("DONE");
            return RedisReply::error("ERR missing key");
          }};
}

}  // namespace

std::shared_ptr<const ScriptRegistry> diff_scripts() {
  auto reg = std::make_shared<ScriptRegistry>();
  for (auto s : {cas_delete(), incr_ttl(), zadd_top(), ack_del(), hsum(), list_mix(), ok_or_err()}) {
    reg->add(std::move(s));
  }
  return reg;
}

std::vector<ScriptShape> diff_script_shapes() {
  return {{"ack_del", 1, 2},  {"cas_delete", 1, 1}, {"hsum", 1, 2},    {"incr_ttl", 1, 2},
          {"list_mix", 1, 0}, {"ok_or_err", 1, 0},  {"zadd_top", 1, 3}};
}

}  // namespace fl::redis_diff
