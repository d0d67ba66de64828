// Hardened's atomic scripts (seed §12 "Lua 脚本：原子化累加 + 入队"), each written twice: the Lua
// a real redis-server runs and the C++ twin the simulated Redis runs.
#include <map>
#include <string>
#include <vector>

#include "impl/combo/record.h"
#include "impl/combo/service.h"
#include "impl/combo/stream_reply.h"

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

RedisReply aggregate_fn(ScriptCalls& r, const std::vector<std::string>& k, const std::vector<std::string>& a) {
  if (k.size() != 3 || (a.size() != 18 && a.size() != 19)) return RedisReply::error("ERR combo_aggregate: wrong arity");
  const std::string& member = a.size() == 19 ? a[18] : a[0];  // CB-BIND-BY-ROW: "pid.created_at"
  RedisReply done = r.call({"GET", k[2]});
  if (done.kind == RedisReply::Kind::kBulk) return done;
  RedisReply lock = r.call({"GET", k[0]});
  std::string wid;
  if (lock.kind == RedisReply::Kind::kBulk) {
    wid = lock.str;
  } else {
    wid = a[17];
    r.call({"SET", k[0], wid, "PX", a[12]});
    r.call({"XADD",      k[1], "MAXLEN",  "~",  a[15],       "*", "activity_id", a[2], "user_id",          a[3],
            "item_type", a[6], "item_id", a[5], "window_id", wid, "first_id",    a[0], "first_created_at", a[11]});
  }
  const std::string agg = a[16] + wid;
  r.call({"HINCRBY", agg, "quantity", a[1]});
  // COMBO-3/11/13: the window's members, so the worker can bind every row to it (see flush).
  RedisReply members = r.call({"HGET", agg, "pids"});
  r.call({"HSET", agg, "pids", members.kind == RedisReply::Kind::kBulk ? members.str + "," + member : member});
  const char* names[] = {"activity_id", "user_id",   "star_id",  "item_id",   "item_type",
                         "item_name",   "item_icon", "nickname", "avatar_url"};
  for (size_t i = 0; i < 9; ++i) r.call({"HSETNX", agg, names[i], a[2 + i]});
  RedisReply first = r.call({"HGET", agg, "first_id"});
  if (first.kind != RedisReply::Kind::kBulk || std::stoll(a[0]) < std::stoll(first.str)) {
    r.call({"HSET", agg, "first_id", a[0], "first_created_at", a[11]});
  }
  r.call({"PEXPIRE", agg, a[13]});
  r.call({"SET", k[2], wid, "PX", a[14]});
  return RedisReply::bulk(wid);
}

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

RedisReply ack_fn(ScriptCalls& r, const std::vector<std::string>& k, const std::vector<std::string>& a) {
  if (k.size() != 2 || a.size() != 2) return RedisReply::error("ERR combo_ack: wrong arity");
  if (r.call({"EXISTS", k[1]}).integer == 0) return RedisReply::integer_of(0);
  r.call({"XACK", k[0], a[0], a[1]});
  r.call({"DEL", k[1]});
  return RedisReply::integer_of(1);
}

int64_t to_i64(const std::map<std::string, std::string>& h, const char* k) {
  auto it = h.find(k);
  if (it == h.end()) return 0;
  try {
    return std::stoll(it->second);
  } catch (...) { return 0; }
}
std::string to_str(const std::map<std::string, std::string>& h, const char* k) {
  auto it = h.find(k);
  return it == h.end() ? std::string() : it->second;
}

RedisReply flush(ScriptCalls& r, const std::vector<std::string>& k, const std::vector<std::string>& a,
                 bool writes_first) {
  if (k.size() != 4 || a.size() != 9) return RedisReply::error("ERR combo_flush: wrong arity");
  RedisReply lock = r.call({"GET", k[0]});
  if (lock.kind == RedisReply::Kind::kBulk && lock.str == a[2]) {
    return RedisReply::array({RedisReply::bulk("wait"), r.call({"PTTL", k[0]})});
  }
  RedisReply prev = r.call({"GET", k[3]});
  if (prev.kind == RedisReply::Kind::kBulk) {
    const size_t a_cut = prev.str.find('\n');
    const size_t b_cut = prev.str.find('\n', a_cut + 1);
    return RedisReply::array({RedisReply::bulk("already"), RedisReply::bulk(prev.str.substr(b_cut + 1)),
                              RedisReply::bulk(prev.str.substr(0, a_cut)),
                              RedisReply::bulk(prev.str.substr(a_cut + 1, b_cut - a_cut - 1))});
  }
  const auto h = parse_hash(r.call({"HGETALL", k[1]}));
  if (h.empty()) {
    r.call({"XACK", k[2], a[0], a[1]});
    return RedisReply::array({RedisReply::bulk("gone")});
  }
  ContributionRecord rec;
  rec.id = to_i64(h, "first_id");
  rec.activity_id = std::stoll(a[4]);
  rec.user_id = std::stoll(a[5]);
  rec.nickname = to_str(h, "nickname");
  rec.avatar_url = to_str(h, "avatar_url");
  rec.star_id = to_i64(h, "star_id");
  rec.item_id = to_i64(h, "item_id");
  rec.item_type = a[6];
  rec.item_name = to_str(h, "item_name");
  rec.item_icon = to_str(h, "item_icon");
  rec.quantity = to_i64(h, "quantity");
  rec.combo_count = rec.quantity;
  rec.created_at = to_i64(h, "first_created_at");
  const std::string payload = encode_payload(rec.activity_id, rec);
  const std::string members = to_str(h, "pids");
  if (!writes_first) r.call({"PUBLISH", a[3], payload});
  r.call({"DEL", k[1]});
  r.call({"SET", k[3], a[8] + "\n" + members + "\n" + payload, "PX", a[7]});
  if (writes_first) r.call({"PUBLISH", a[3], payload});
  return RedisReply::array({RedisReply::bulk("published"), RedisReply::bulk(payload), RedisReply::bulk(members)});
}

}  // namespace

std::shared_ptr<ScriptRegistry> combo_scripts() {
  auto registry = std::make_shared<ScriptRegistry>();
  registry->add(RedisScript{"combo_aggregate", kAggregateLua, aggregate_fn});
  registry->add(
      RedisScript{"combo_flush", std::string(kFlushHeadLua) + kFlushTailLua,
                  [](ScriptCalls& r, const auto& k, const auto& a) { return flush(r, k, a, /*writes_first=*/false); }});
  registry->add(RedisScript{"combo_flush_writes_first", std::string(kFlushHeadLua) + kFlushWritesFirstTailLua,
                            [](ScriptCalls& r, const auto& k, const auto& a) { return flush(r, k, a, true); }});
  registry->add(RedisScript{"combo_ack", kAckLua, ack_fn});
  return registry;
}

}  // namespace fl::combo
