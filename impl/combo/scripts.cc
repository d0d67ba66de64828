// Hardened's atomic scripts (seed §12 "Lua 脚本：原子化累加 + 入队"), each one Lua text that the
// simulated and a real redis-server run alike.
#include <memory>
#include <string>

#include "impl/combo/service.h"

namespace fl::combo {

namespace {

// combo_aggregate: COMBO-2/5/6/15 — the whole "count + open window + enqueue" step is one atomic
// unit bound to a window id, so no purchase can land between a read and a delete, a window is
// never reopened by a late HSETNX, and a retried call (marker) is counted once.
// KEYS: lock, stream, marker.  ARGV: pid qty activity user star item_id item_type item_name
// item_icon nickname avatar created_at window_ms agg_ttl_ms marker_ttl_ms maxlen agg_prefix
// window_token (the opener's pid and created_at: a window's Redis identity must not be its pid
// alone, which a DB power loss under synchronous NORMAL/OFF can hand out again) [member] (how the
// member list names this row: "pid.created_at" with CB-BIND-BY-ROW; the pid when absent).
const char* kAggregateLua = R"LUA(
local done = redis.call('GET', KEYS[3])
if done then return done end
local wid = redis.call('GET', KEYS[1])
if not wid then
  wid = ARGV[18]
  redis.call('SET', KEYS[1], wid, 'PX', ARGV[13])
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[16], '*', 'activity_id', ARGV[3], 'user_id', ARGV[4],
    'item_type', ARGV[7], 'item_id', ARGV[6], 'window_id', wid, 'first_id', ARGV[1], 'first_created_at', ARGV[12])
end
local agg = ARGV[17] .. wid
redis.call('HINCRBY', agg, 'quantity', ARGV[2])
local member = ARGV[19] or ARGV[1]
local members = redis.call('HGET', agg, 'pids')
redis.call('HSET', agg, 'pids', members and (members .. ',' .. member) or member)
local names = {'activity_id','user_id','star_id','item_id','item_type','item_name','item_icon','nickname','avatar_url'}
local vals = {ARGV[3],ARGV[4],ARGV[5],ARGV[6],ARGV[7],ARGV[8],ARGV[9],ARGV[10],ARGV[11]}
for i = 1, #names do redis.call('HSETNX', agg, names[i], vals[i]) end
local first = redis.call('HGET', agg, 'first_id')
if (not first) or tonumber(ARGV[1]) < tonumber(first) then
  redis.call('HSET', agg, 'first_id', ARGV[1], 'first_created_at', ARGV[12])
end
redis.call('PEXPIRE', agg, ARGV[14])
redis.call('SET', KEYS[3], wid, 'PX', ARGV[15])
return wid
)LUA";

// combo_flush: COMBO-2/3/5/6/7 — publish and delete in one atomic step, only once the window's
// lock (Redis clock) is gone, only for the window the entry names, at most once (a retry finds
// the published marker and answers with the same payload). It does NOT ack: the worker first
// binds the window's rows in the DB (COMBO-3/11/13: the DB then groups exactly as the record),
// then acks and drops the marker (combo ack, service.cc). An entry whose binding did not land
// stays pending and is reclaimed; the marker (owner, members, payload) lets the next worker
// finish the binding without publishing again.
// KEYS: lock, agg, stream, published-marker.  ARGV: group entry_id wid channel activity user
// item_type marker_ttl_ms owner (who publishes: a retry by the same owner learns it was its own).
// Replies: {'wait', pttl} | {'gone'} (nothing left, acked) | {'published', payload, members} |
// {'already', payload, owner, members}.
const char* kFlushHeadLua = R"LUA(
if redis.call('GET', KEYS[1]) == ARGV[3] then return {'wait', redis.call('PTTL', KEYS[1])} end
local prev = redis.call('GET', KEYS[4])
if prev then
  local a = string.find(prev, '\n', 1, true)
  local b = string.find(prev, '\n', a + 1, true)
  return {'already', string.sub(prev, b + 1), string.sub(prev, 1, a - 1), string.sub(prev, a + 1, b - 1)}
end
local flat = redis.call('HGETALL', KEYS[2])
if #flat == 0 then redis.call('XACK', KEYS[3], ARGV[1], ARGV[2]) return {'gone'} end
local h = {}
for i = 1, #flat, 2 do h[flat[i]] = flat[i + 1] end
local q = tonumber(h['quantity'] or '0')
local function s(v) return cjson.encode(v or '') end
local payload = '{"activity_id":' .. ARGV[5] .. ',"type":"contributions_response","record":{"id":' .. h['first_id'] ..
  ',"user_id":' .. ARGV[6] .. ',"nickname":' .. s(h['nickname']) .. ',"avatar_url":' .. s(h['avatar_url']) ..
  ',"star_id":' .. (h['star_id'] or '0') .. ',"item_id":' .. (h['item_id'] or '0') .. ',"item_type":' .. s(ARGV[7]) ..
  ',"item_name":' .. s(h['item_name']) .. ',"item_icon":' .. s(h['item_icon']) .. ',"quantity":' .. q ..
  ',"combo_count":' .. q .. ',"created_at":' .. (h['first_created_at'] or '0') .. '}}'
local members = h['pids'] or ''
)LUA";
// 000:L262-263 as the seed orders it: PUBLISH, then the deletes.
const char* kFlushTailLua = R"LUA(redis.call('PUBLISH', ARGV[4], payload)
redis.call('DEL', KEYS[2])
redis.call('SET', KEYS[4], ARGV[9] .. '\n' .. members .. '\n' .. payload, 'PX', ARGV[8])
return {'published', payload, members}
)LUA";
// CB-FLUSH-WRITES-FIRST: the writes first, PUBLISH last. A node that refuses writes (READONLY:
// a failover demoted it) refuses the first DEL before anything went out; in the seed's order the
// push is already out when the DEL is refused, no marker records it, and the retried flush
// pushes the window again (COMBO-3, COMBO-8).
const char* kFlushWritesFirstTailLua = R"LUA(redis.call('DEL', KEYS[2])
redis.call('SET', KEYS[4], ARGV[9] .. '\n' .. members .. '\n' .. payload, 'PX', ARGV[8])
redis.call('PUBLISH', ARGV[4], payload)
return {'published', payload, members}
)LUA";

// combo_ack: COMBO-7/9 — acks an entry and drops its published marker once the window's rows
// are bound, but only while the marker exists: if Redis lost the flush (a restart that forgot
// the last writes), acking would strand the window's restored state forever; the entry stays
// pending instead and is flushed again.  KEYS: stream, published-marker.  ARGV: group entry_id.
const char* kAckLua = R"LUA(
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('DEL', KEYS[2])
return 1
)LUA";

}  // namespace

std::shared_ptr<ScriptRegistry> combo_scripts() {
  auto registry = std::make_shared<ScriptRegistry>();
  registry->add(RedisScript{"combo_aggregate", kAggregateLua});
  registry->add(RedisScript{"combo_flush", std::string(kFlushHeadLua) + kFlushTailLua});
  registry->add(RedisScript{"combo_flush_writes_first", std::string(kFlushHeadLua) + kFlushWritesFirstTailLua});
  registry->add(RedisScript{"combo_ack", kAckLua});
  return registry;
}

}  // namespace fl::combo
