#include "impl/gifts/scripts.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

namespace fl::gifts {
namespace {

using Args = std::vector<std::string>;

int64_t to_i64(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 10); }
bool is_one(const RedisReply& r) { return r.kind == RedisReply::Kind::kInteger && r.integer == 1; }

const char* kLockLua = R"(if (redis.call('exists', KEYS[1]) == 0) or redis.call('hget', KEYS[1], ARGV[2]) then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
)";

RedisReply lock(ScriptCalls& redis, const Args& keys, const Args& args) {
  if (keys.size() != 1 || args.size() != 2) return RedisReply::error("ERR redisson_lock: wrong arity");
  if (!is_one(redis.call({"EXISTS", keys[0]})) ||
      redis.call({"HGET", keys[0], args[1]}).kind == RedisReply::Kind::kBulk) {
    redis.call({"HINCRBY", keys[0], args[1], "1"});
    redis.call({"PEXPIRE", keys[0], args[0]});
    return RedisReply::nil();
  }
  return redis.call({"PTTL", keys[0]});
}

const char* kUnlockLua = R"(if not redis.call('hget', KEYS[1], ARGV[1]) then return nil end
local counter = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if counter > 0 then return 0 end
redis.call('del', KEYS[1])
return 1
)";

RedisReply unlock(ScriptCalls& redis, const Args& keys, const Args& args) {
  if (keys.size() != 1 || args.size() != 1) return RedisReply::error("ERR redisson_unlock: wrong arity");
  if (redis.call({"HGET", keys[0], args[0]}).kind != RedisReply::Kind::kBulk) return RedisReply::nil();
  RedisReply counter = redis.call({"HINCRBY", keys[0], args[0], "-1"});
  if (counter.kind == RedisReply::Kind::kInteger && counter.integer > 0) return RedisReply::integer_of(0);
  redis.call({"DEL", keys[0]});
  return RedisReply::integer_of(1);
}

const char* kRenewLua = R"(if redis.call('hget', KEYS[1], ARGV[2]) then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0
)";

RedisReply renew(ScriptCalls& redis, const Args& keys, const Args& args) {
  if (keys.size() != 1 || args.size() != 2) return RedisReply::error("ERR redisson_renew: wrong arity");
  if (redis.call({"HGET", keys[0], args[1]}).kind != RedisReply::Kind::kBulk) return RedisReply::integer_of(0);
  redis.call({"PEXPIRE", keys[0], args[0]});
  return RedisReply::integer_of(1);
}

// 003:L147-152 as written: KEYS lock; ARGV owner lease_ms.
const char* kSeedLockLua = R"(if redis.call("exists", KEYS[1]) == 0 then
    redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[2])
    return 1
else
    return 0
end
)";

RedisReply seed_lock(ScriptCalls& redis, const Args& keys, const Args& args) {
  if (keys.size() != 1 || args.size() != 2) return RedisReply::error("ERR gift_lua_lock: wrong arity");
  if (is_one(redis.call({"EXISTS", keys[0]}))) return RedisReply::integer_of(0);
  redis.call({"SET", keys[0], args[0], "PX", args[1]});
  return RedisReply::integer_of(1);
}

// The owner check the seed asks for on release (003:L154): compare-and-delete.
const char* kSeedUnlockLua = R"(if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
else
    return 0
end
)";

RedisReply seed_unlock(ScriptCalls& redis, const Args& keys, const Args& args) {
  if (keys.size() != 1 || args.size() != 1) return RedisReply::error("ERR gift_lua_unlock: wrong arity");
  RedisReply held = redis.call({"GET", keys[0]});
  if (held.kind != RedisReply::Kind::kBulk || held.str != args[0]) return RedisReply::integer_of(0);
  return redis.call({"DEL", keys[0]});
}

// Shared Lua: move a window to the ready set (KEYS[ready], KEYS[due] passed in).
const char* kMoveLua = R"(local function move(win, ready, due)
  local f = {}
  for i, name in ipairs({'id', 'room', 'sender', 'gift', 'total', 'ts'}) do f[i] = redis.call('hget', win, name) end
  local payload = table.concat(f, '|') .. '|0'
  redis.call('hset', ready, f[1], payload)
  redis.call('zadd', due, 0, f[1])
  redis.call('del', win)
end
)";

void move(ScriptCalls& redis, const std::string& win, const std::string& open, const std::string& ready,
          const std::string& due) {
  std::vector<std::string> f;
  for (const char* name : {"id", "room", "sender", "gift", "total", "ts"})
    f.push_back(redis.call({"HGET", win, name}).str);
  auto field = [&](size_t i) { return f[i]; };
  const std::string payload =
      field(0) + "|" + field(1) + "|" + field(2) + "|" + field(3) + "|" + field(4) + "|" + field(5) + "|0";
  redis.call({"HSET", ready, field(0), payload});
  redis.call({"ZADD", due, "0", field(0)});
  redis.call({"DEL", win});
  redis.call({"ZREM", open, win});
}

std::string batch_add_lua() {
  return std::string(kMoveLua) + R"(if redis.call('exists', KEYS[2]) == 1 then return 0 end
redis.call('set', KEYS[2], '1', 'EX', 3600)
if ARGV[9] == '1' and redis.call('exists', KEYS[1]) == 1 and
    tonumber(redis.call('hget', KEYS[1], 'ts')) + tonumber(ARGV[4]) <= tonumber(ARGV[3]) then
  move(KEYS[1], KEYS[4], KEYS[5])
  redis.call('zrem', KEYS[3], KEYS[1])
end
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hset', KEYS[1], 'id', 'batch_' .. ARGV[1], 'room', ARGV[6], 'sender', ARGV[7], 'gift', ARGV[8], 'ts', ARGV[3])
  redis.call('zadd', KEYS[3], tonumber(ARGV[3]) + tonumber(ARGV[4]), KEYS[1])
end
local total = redis.call('hincrby', KEYS[1], 'total', ARGV[2])
if total >= tonumber(ARGV[5]) then
  move(KEYS[1], KEYS[4], KEYS[5])
  redis.call('zrem', KEYS[3], KEYS[1])
  return 2
end
return 1
)";
}

RedisReply batch_add(ScriptCalls& redis, const Args& keys, const Args& args) {
  if (keys.size() != 5 || (args.size() != 8 && args.size() != 9))
    return RedisReply::error("ERR gift_batch_add: wrong arity");
  if (is_one(redis.call({"EXISTS", keys[1]}))) return RedisReply::integer_of(0);
  redis.call({"SET", keys[1], "1", "EX", "3600"});
  // ARGV[9] = 1 (GF-WINDOW-DEADLINE): a window past its deadline is closed, not joined.
  if (args.size() == 9 && args[8] == "1" && is_one(redis.call({"EXISTS", keys[0]})) &&
      to_i64(redis.call({"HGET", keys[0], "ts"}).str) + to_i64(args[3]) <= to_i64(args[2])) {
    move(redis, keys[0], keys[2], keys[3], keys[4]);
  }
  if (!is_one(redis.call({"EXISTS", keys[0]}))) {
    redis.call({"HSET", keys[0], "id", "batch_" + args[0], "room", args[5], "sender", args[6], "gift", args[7], "ts",
                args[2]});
    redis.call({"ZADD", keys[2], std::to_string(to_i64(args[2]) + to_i64(args[3])), keys[0]});
  }
  RedisReply total = redis.call({"HINCRBY", keys[0], "total", args[1]});
  if (total.kind == RedisReply::Kind::kInteger && total.integer >= to_i64(args[4])) {
    move(redis, keys[0], keys[2], keys[3], keys[4]);
    return RedisReply::integer_of(2);
  }
  return RedisReply::integer_of(1);
}

std::string batch_close_lua() {
  return std::string(kMoveLua) + R"(local all = redis.call('zrange', KEYS[1], 0, -1, 'WITHSCORES')
local n = 0
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) <= tonumber(ARGV[1]) then
    move(all[i], KEYS[2], KEYS[3])
    redis.call('zrem', KEYS[1], all[i])
    n = n + 1
  end
end
return n
)";
}

RedisReply batch_close(ScriptCalls& redis, const Args& keys, const Args& args) {
  if (keys.size() != 3 || args.size() != 1) return RedisReply::error("ERR gift_batch_close: wrong arity");
  RedisReply all = redis.call({"ZRANGE", keys[0], "0", "-1", "WITHSCORES"});
  int64_t n = 0;
  for (size_t i = 0; i + 1 < all.elements.size(); i += 2) {
    if (to_i64(all.elements[i + 1].str) > to_i64(args[0])) continue;
    move(redis, all.elements[i].str, keys[0], keys[1], keys[2]);
    ++n;
  }
  return RedisReply::integer_of(n);
}

// GF-CLAIM-RESUME: with an owner hash (KEYS[3]) the claim records its token (ARGV[4]) as each
// claimed batch's owner and also returns the batches still owned by the tokens ARGV[5..], claims whose
// reply the caller never got: it takes them back instead of waiting their lease out.
const char* kClaimLua = R"(local all = redis.call('zrange', KEYS[2], 0, -1, 'WITHSCORES')
local out = {}
local lost = {}
for j = 5, #ARGV do lost[ARGV[j]] = true end
for i = 1, #all, 2 do
  if #out >= tonumber(ARGV[3]) then break end
  local held = false
  if ARGV[4] then
    local owner = redis.call('hget', KEYS[3], all[i])
    held = owner and lost[owner] or false
  end
  if held or tonumber(all[i + 1]) <= tonumber(ARGV[1]) then
    redis.call('zadd', KEYS[2], tonumber(ARGV[1]) + tonumber(ARGV[2]), all[i])
    if ARGV[4] then redis.call('hset', KEYS[3], all[i], ARGV[4]) end
    local p = redis.call('hget', KEYS[1], all[i])
    if p then out[#out + 1] = p end
  end
end
return out
)";

RedisReply ready_claim(ScriptCalls& redis, const Args& keys, const Args& args) {
  const bool owned = keys.size() == 3 && args.size() >= 4;
  if (!owned && (keys.size() != 2 || args.size() != 3)) return RedisReply::error("ERR gift_ready_claim: wrong arity");
  const std::set<std::string> lost(args.begin() + std::min<size_t>(args.size(), 4), args.end());
  RedisReply all = redis.call({"ZRANGE", keys[1], "0", "-1", "WITHSCORES"});
  std::vector<RedisReply> out;
  for (size_t i = 0; i + 1 < all.elements.size(); i += 2) {
    if (static_cast<int64_t>(out.size()) >= to_i64(args[2])) break;
    const std::string& id = all.elements[i].str;
    bool held = false;
    if (owned) {
      RedisReply owner = redis.call({"HGET", keys[2], id});
      held = owner.kind == RedisReply::Kind::kBulk && lost.count(owner.str) > 0;
    }
    if (!held && to_i64(all.elements[i + 1].str) > to_i64(args[0])) continue;
    redis.call({"ZADD", keys[1], std::to_string(to_i64(args[0]) + to_i64(args[1])), id});
    if (owned) redis.call({"HSET", keys[2], id, args[3]});
    RedisReply p = redis.call({"HGET", keys[0], id});
    if (p.kind == RedisReply::Kind::kBulk) out.push_back(RedisReply::bulk(p.str));
  }
  return RedisReply::array(std::move(out));
}

}  // namespace

std::shared_ptr<const ScriptRegistry> gifts_scripts() {
  auto registry = std::make_shared<ScriptRegistry>();
  registry->add(RedisScript{kLockScript, kLockLua, lock});
  registry->add(RedisScript{kUnlockScript, kUnlockLua, unlock});
  registry->add(RedisScript{kRenewScript, kRenewLua, renew});
  registry->add(RedisScript{kSeedLockScript, kSeedLockLua, seed_lock});
  registry->add(RedisScript{kSeedUnlockScript, kSeedUnlockLua, seed_unlock});
  registry->add(RedisScript{kBatchAddScript, batch_add_lua(), batch_add});
  registry->add(RedisScript{kBatchCloseScript, batch_close_lua(), batch_close});
  registry->add(RedisScript{kReadyClaimScript, kClaimLua, ready_claim});
  return registry;
}

}  // namespace fl::gifts
