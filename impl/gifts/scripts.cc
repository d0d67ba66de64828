#include "impl/gifts/scripts.h"

#include <memory>
#include <string>

namespace fl::gifts {
namespace {

const char* kLockLua = R"(if (redis.call('exists', KEYS[1]) == 0) or redis.call('hget', KEYS[1], ARGV[2]) then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
)";

const char* kUnlockLua = R"(if not redis.call('hget', KEYS[1], ARGV[1]) then return nil end
local counter = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if counter > 0 then return 0 end
redis.call('del', KEYS[1])
return 1
)";

const char* kRenewLua = R"(if redis.call('hget', KEYS[1], ARGV[2]) then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0
)";

// 003:L147-152 as written: KEYS lock; ARGV owner lease_ms.
const char* kSeedLockLua = R"(if redis.call("exists", KEYS[1]) == 0 then
    redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[2])
    return 1
else
    return 0
end
)";

// The owner check the seed asks for on release (003:L154): compare-and-delete.
const char* kSeedUnlockLua = R"(if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
else
    return 0
end
)";

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

}  // namespace

std::shared_ptr<const ScriptRegistry> gifts_scripts() {
  auto registry = std::make_shared<ScriptRegistry>();
  registry->add(RedisScript{kLockScript, kLockLua});
  registry->add(RedisScript{kUnlockScript, kUnlockLua});
  registry->add(RedisScript{kRenewScript, kRenewLua});
  registry->add(RedisScript{kSeedLockScript, kSeedLockLua});
  registry->add(RedisScript{kSeedUnlockScript, kSeedUnlockLua});
  registry->add(RedisScript{kBatchAddScript, batch_add_lua()});
  registry->add(RedisScript{kBatchCloseScript, batch_close_lua()});
  registry->add(RedisScript{kReadyClaimScript, kClaimLua});
  return registry;
}

}  // namespace fl::gifts
