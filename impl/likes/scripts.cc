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

// LK-FILL-LEASE: an apply writes its value only over a floor it can compare with; with no version
// key (never written, or evicted) it deletes the value instead, so a delayed apply never writes
// an older value over a newer one whose floor Redis evicted (swarm-hardened-eviction seed 161).
int64_t put_over_floor(ScriptCalls& redis, const std::string& vk, const std::string& verk, const std::string& val,
                       const std::string& ver, const std::string& ttl) {
  if (redis.call({"GET", verk}).kind != RedisReply::Kind::kBulk) {
    redis.call({"DEL", vk});
    return 0;
  }
  return put(redis, vk, verk, val, ver, ttl);
}

RedisReply apply(ScriptCalls& redis, const std::vector<std::string>& keys, const std::vector<std::string>& args) {
  if ((keys.size() != 4 && keys.size() != 6) || args.size() != 6) {
    return RedisReply::error("ERR likes_apply: wrong arity");
  }
  if (keys.size() == 6) {
    redis.call({"DEL", keys[4], keys[5]});  // LK-FILL-LEASE: void both fills' leases
    int64_t a = put_over_floor(redis, keys[0], keys[1], args[0], args[1], args[2]);
    int64_t b = put_over_floor(redis, keys[2], keys[3], args[3], args[5], args[4]);
    return RedisReply::array({RedisReply::integer_of(a), RedisReply::integer_of(b)});
  }
  int64_t a = put(redis, keys[0], keys[1], args[0], args[1], args[2]);
  int64_t b = put(redis, keys[2], keys[3], args[3], args[5], args[4]);
  return RedisReply::array({RedisReply::integer_of(a), RedisReply::integer_of(b)});
}

RedisReply lease(ScriptCalls& redis, const std::vector<std::string>& keys, const std::vector<std::string>& args) {
  if (args.size() != 2) return RedisReply::error("ERR likes_lease: wrong arity");
  for (const std::string& k : keys) redis.call({"SET", k, args[0], "PX", args[1]});
  return RedisReply::integer_of(static_cast<int64_t>(keys.size()));
}

RedisReply fill(ScriptCalls& redis, const std::vector<std::string>& keys, const std::vector<std::string>& args) {
  if (keys.size() != 3 || args.size() != 4) return RedisReply::error("ERR likes_fill: wrong arity");
  RedisReply held = redis.call({"GET", keys[2]});
  if (held.kind != RedisReply::Kind::kBulk || held.str != args[3]) return RedisReply::integer_of(0);
  redis.call({"DEL", keys[2]});
  return RedisReply::integer_of(put(redis, keys[0], keys[1], args[0], args[1], args[2]));
}

}  // namespace

void add_likes_scripts(ScriptRegistry& registry) {
  registry.add(
      RedisScript{kPutScript, put_script_lua(),
                  [](ScriptCalls& redis, const std::vector<std::string>& keys, const std::vector<std::string>& args) {
                    if (keys.size() != 2 || args.size() != 3) {
                      return RedisReply::error("ERR likes_put: wrong arity");
                    }
                    return RedisReply::integer_of(put(redis, keys[0], keys[1], args[0], args[1], args[2]));
                  }});
  registry.add(RedisScript{kApplyScript, apply_script_lua(), apply});
  registry.add(RedisScript{kLeaseScript, kLeaseLua, lease});
  registry.add(RedisScript{kFillScript, fill_script_lua(), fill});
}

std::shared_ptr<const ScriptRegistry> likes_scripts() {
  auto registry = std::make_shared<ScriptRegistry>();
  add_likes_scripts(*registry);
  return registry;
}

}  // namespace fl::likes
