#include "impl/likes/scripts.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace fl::likes {
namespace {

// A version key outlives its value by this much (5 min, the reconciler's window): once a value
// expired, a put of an older version — a repair or fill that read the DB before the newer write,
// delayed by a pause or a slow pass — is still refused. With equal TTLs both expired together and
// such a put wrote the old state back (swarm-hardened seed 12184, LIKE-8: a reconcile pass that
// read "liked" before an acknowledged unlike wrote "1" 3 s later, just after the unlike's key and
// version expired). The Lua below writes the same number.
constexpr int64_t kVersionOutlivesValueMs = 300'000;

const char* kPutLua = R"(local function put(vk, verk, val, ver, ttl)
  local cur = redis.call('GET', verk)
  local has = redis.call('EXISTS', vk)
  if cur and has == 1 and tonumber(cur) >= tonumber(ver) then return 0 end
  if cur and has == 0 and tonumber(cur) > tonumber(ver) then return 0 end
  if tonumber(ttl) > 0 then
    redis.call('SET', vk, val, 'PX', ttl)
    redis.call('SET', verk, ver, 'PX', tonumber(ttl) + 300000)
  else
    redis.call('SET', vk, val)
    redis.call('SET', verk, ver)
  end
  return 1
end
)";

std::string put_script_lua() {
  return std::string(kPutLua) + "return put(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])\n";
}
std::string apply_script_lua() {
  return std::string(kPutLua) +
         "local a = put(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])\n"
         "local b = put(KEYS[3], KEYS[4], ARGV[4], ARGV[6], ARGV[5])\n"
         "return {a, b}\n";
}

int64_t to_i64(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 10); }

// The C++ twin of the Lua `put`.
int64_t put(ScriptCalls& redis, const std::string& vk, const std::string& verk, const std::string& val,
            const std::string& ver, const std::string& ttl) {
  RedisReply cur = redis.call({"GET", verk});
  RedisReply has = redis.call({"EXISTS", vk});
  const bool cur_present = cur.kind == RedisReply::Kind::kBulk;
  const bool value_present = has.kind == RedisReply::Kind::kInteger && has.integer == 1;
  if (cur_present && value_present && to_i64(cur.str) >= to_i64(ver)) return 0;
  if (cur_present && !value_present && to_i64(cur.str) > to_i64(ver)) return 0;
  if (to_i64(ttl) > 0) {
    redis.call({"SET", vk, val, "PX", ttl});
    redis.call({"SET", verk, ver, "PX", std::to_string(to_i64(ttl) + kVersionOutlivesValueMs)});
  } else {
    redis.call({"SET", vk, val});
    redis.call({"SET", verk, ver});
  }
  return 1;
}

}  // namespace

void add_likes_scripts(ScriptRegistry& registry) {
  registry.add(RedisScript{kPutScript, put_script_lua(),
                           [](ScriptCalls& redis, const std::vector<std::string>& keys,
                              const std::vector<std::string>& args) {
                             if (keys.size() != 2 || args.size() != 3) {
                               return RedisReply::error("ERR likes_put: wrong arity");
                             }
                             return RedisReply::integer_of(put(redis, keys[0], keys[1], args[0], args[1], args[2]));
                           }});
  registry.add(RedisScript{kApplyScript, apply_script_lua(),
                           [](ScriptCalls& redis, const std::vector<std::string>& keys,
                              const std::vector<std::string>& args) {
                             if (keys.size() != 4 || args.size() != 6) {
                               return RedisReply::error("ERR likes_apply: wrong arity");
                             }
                             int64_t a = put(redis, keys[0], keys[1], args[0], args[1], args[2]);
                             int64_t b = put(redis, keys[2], keys[3], args[3], args[5], args[4]);
                             return RedisReply::array({RedisReply::integer_of(a), RedisReply::integer_of(b)});
                           }});
}

std::shared_ptr<const ScriptRegistry> likes_scripts() {
  auto registry = std::make_shared<ScriptRegistry>();
  add_likes_scripts(*registry);
  return registry;
}

}  // namespace fl::likes
