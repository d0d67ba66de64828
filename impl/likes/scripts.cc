#include "impl/likes/scripts.h"

#include <memory>
#include <string>

namespace fl::likes {
namespace {

// A version key outlives its value by this much (5 min, the reconciler's window): once a value
// expired, a put of an older version — a repair or fill that read the DB before the newer write,
// delayed by a pause or a slow pass — is still refused. With equal TTLs both expired together and
// such a put wrote the old state back (swarm-hardened seed 12184, LIKE-8: a reconcile pass that
// read "liked" before an acknowledged unlike wrote "1" 3 s later, just after the unlike's key and
// version expired). The Lua below writes it as 300000.

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
         "if KEYS[5] then\n"
         "  redis.call('DEL', KEYS[5], KEYS[6])\n"
         "  local function over_floor(vk, verk, val, ver, ttl)\n"
         "    if not redis.call('GET', verk) then redis.call('DEL', vk) return 0 end\n"
         "    return put(vk, verk, val, ver, ttl)\n"
         "  end\n"
         "  return {over_floor(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]),"
         " over_floor(KEYS[3], KEYS[4], ARGV[4], ARGV[6], ARGV[5])}\n"
         "end\n"
         "local a = put(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])\n"
         "local b = put(KEYS[3], KEYS[4], ARGV[4], ARGV[6], ARGV[5])\n"
         "return {a, b}\n";
}
// LK-FILL-LEASE: the lease and the fill that checks it.
const char* kLeaseLua = R"(for i = 1, #KEYS do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
end
return #KEYS
)";
std::string fill_script_lua() {
  return std::string(kPutLua) +
         "if redis.call('GET', KEYS[3]) ~= ARGV[4] then return 0 end\n"
         "redis.call('DEL', KEYS[3])\n"
         "return put(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])\n";
}

}  // namespace

void add_likes_scripts(ScriptRegistry& registry) {
  registry.add(RedisScript{kPutScript, put_script_lua()});
  registry.add(RedisScript{kApplyScript, apply_script_lua()});
  registry.add(RedisScript{kLeaseScript, kLeaseLua});
  registry.add(RedisScript{kFillScript, fill_script_lua()});
}

std::shared_ptr<const ScriptRegistry> likes_scripts() {
  auto registry = std::make_shared<ScriptRegistry>();
  add_likes_scripts(*registry);
  return registry;
}

}  // namespace fl::likes
