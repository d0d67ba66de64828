#include "impl/toy/scripts.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace fl::toy {
namespace {

// redis.call('SET', ..., 'NX') is false when the key exists, {ok='OK'} when it wrote.
const char* kVisitLua = R"(if redis.call('SET', KEYS[2], ARGV[1], 'NX') then
  return redis.call('INCR', KEYS[1])
end
return tonumber(redis.call('GET', KEYS[1]) or '0')
)";

// Lua's tonumber(s) (Lua 5.1: strtod, surrounding spaces allowed) as the script's reply: the
// number converted as Redis converts it, nil when `s` is not one. Redis's (long long) cast of
// inf, nan or a number out of range gives INT64_MIN on x86, and so does this.
RedisReply lua_tonumber_reply(const std::string& s) {
  const char* begin = s.c_str();
  char* end = nullptr;
  const double d = std::strtod(begin, &end);
  if (end == begin) return RedisReply::nil();  // no number at all
  while (*end != '\0' && std::strchr(" \t\n\v\f\r", *end) != nullptr) ++end;
  if (*end != '\0') return RedisReply::nil();
  const bool fits = d >= -9223372036854775808.0 && d < 9223372036854775808.0;  // false for nan
  return RedisReply::integer_of(fits ? static_cast<int64_t>(d) : std::numeric_limits<int64_t>::min());
}

// The C++ twin of kVisitLua, reply for reply. An inner error raises (ScriptCalls), as in Lua.
RedisReply visit(ScriptCalls& redis, const std::vector<std::string>& keys, const std::vector<std::string>& args) {
  if (keys.size() != 2 || args.size() != 1) return RedisReply::error("ERR toy_visit: wrong arity");
  const RedisReply recorded = redis.call({"SET", keys[1], args[0], "NX"});
  if (recorded.kind == RedisReply::Kind::kStatus) return redis.call({"INCR", keys[0]});
  const RedisReply counter = redis.call({"GET", keys[0]});
  return lua_tonumber_reply(counter.kind == RedisReply::Kind::kBulk ? counter.str : "0");
}

}  // namespace

void add_toy_scripts(ScriptRegistry& registry) { registry.add(RedisScript{kVisitScript, kVisitLua, visit}); }

std::shared_ptr<const ScriptRegistry> toy_scripts() {
  auto registry = std::make_shared<ScriptRegistry>();
  add_toy_scripts(*registry);
  return registry;
}

}  // namespace fl::toy
