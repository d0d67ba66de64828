#include "impl/combo/service.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "impl/combo/frontend.h"
#include "impl/combo/messages.h"
#include "impl/combo/stream_reply.h"

namespace fl::combo {

namespace {

struct CatalogItem {
  const char* type;
  int64_t id;
  const char* name;
  const char* icon;
};
constexpr CatalogItem kCatalog[] = {
    {"firework", 1, "烟花", "icon-firework.png"},
    {"rose", 2, "玫瑰", "icon-rose.png"},
    {"rocket", 3, "火箭", "icon-rocket.png"},
    {"heart", 4, "爱心", "icon-heart.png"},
};

std::string str(int64_t v) { return std::to_string(v); }

int64_t as_int(const SqlValue& v) { return v.type() == SqlValue::Type::kInteger ? v.as_int() : 0; }
std::string as_text(const SqlValue& v) {
  return v.type() == SqlValue::Type::kText || v.type() == SqlValue::Type::kBlob ? v.as_text() : std::string();
}

constexpr const char* kRowColumns =
    "id, activity_id, user_id, star_id, item_id, item_type, item_name, item_icon, nickname, avatar_url, "
    "quantity, created_at, window_id";

std::vector<ContributionRow> rows_of(const SqlResult& r) {
  std::vector<ContributionRow> out;
  for (const SqlRow& row : r.rows()) {
    ContributionRow c;
    c.id = as_int(row[0]);
    c.activity_id = as_int(row[1]);
    c.user_id = as_int(row[2]);
    c.star_id = as_int(row[3]);
    c.item_id = as_int(row[4]);
    c.item_type = as_text(row[5]);
    c.item_name = as_text(row[6]);
    c.item_icon = as_text(row[7]);
    c.nickname = as_text(row[8]);
    c.avatar_url = as_text(row[9]);
    c.quantity = as_int(row[10]);
    c.created_at = as_int(row[11]);
    if (!row[12].is_null()) c.window_id = as_int(row[12]);
    out.push_back(std::move(c));
  }
  return out;
}

// The window's members as the scripts list them ("12,15,16", or "12.1767225600123,..." with
// CB-BIND-BY-ROW: a pid stops at the dot); unparsable parts are skipped.
std::vector<int64_t> parse_members(const std::string& list) {
  std::vector<int64_t> members;
  for (size_t from = 0; from < list.size();) {
    size_t comma = list.find(',', from);
    if (comma == std::string::npos) comma = list.size();
    try {
      members.push_back(std::stoll(list.substr(from, comma - from)));
    } catch (...) {}
    from = comma + 1;
  }
  return members;
}

// The member list as rows: each pid with its created_at when the list names it ("pid.created_at").
std::vector<std::pair<int64_t, std::optional<int64_t>>> parse_rows(const std::string& list) {
  std::vector<std::pair<int64_t, std::optional<int64_t>>> rows;
  for (size_t from = 0; from < list.size();) {
    size_t comma = list.find(',', from);
    if (comma == std::string::npos) comma = list.size();
    const std::string part = list.substr(from, comma - from);
    const size_t dot = part.find('.');
    try {
      const int64_t pid = std::stoll(part.substr(0, dot));
      std::optional<int64_t> created;
      if (dot != std::string::npos) created = std::stoll(part.substr(dot + 1));
      rows.emplace_back(pid, created);
    } catch (...) {}
    from = comma + 1;
  }
  return rows;
}

// Hardened's per-window keys (CB-WINDOW-SCRIPTS): the open window's lock (its value is the
// window token), the window's hash and its published marker, all named by key suffix and token.
std::string window_lock_key(const std::string& suffix) { return "combo:agg:lock:" + suffix; }
std::string window_hash_prefix(const std::string& suffix) { return "combo:agg:" + suffix + ":"; }
std::string window_hash_key(const std::string& suffix, const std::string& token) {
  return window_hash_prefix(suffix) + token;
}
std::string published_marker_key(const std::string& suffix, const std::string& token) {
  return "combo:pub:" + suffix + ":" + token;
}

class Replica {
 public:
  Replica(Runtime& rt, Redis& redis, Sql& sql, ServiceOptions o) : rt_(rt), redis_(redis), sql_(sql), o_(o) {}

  Task<MessagePtr> purchase(MessagePtr m);
  Task<MessagePtr> latest(MessagePtr m);
  Task<MessagePtr> ranking(MessagePtr m);
  Task<void> worker();

 private:
  struct Line {
    const PurchaseRequest* req;
    PurchaseLine line;
    ItemInfo item;
    int64_t pid = 0;
    int64_t created_at = 0;
  };
  bool has(Fix f) const { return o_.fixes.has(f); }
  Task<bool> spec_aggregate(const Line& l);
  Task<bool> window_aggregate(const Line& l);
  Task<bool> bind_window(int64_t window_id, std::string member_list, const StreamEntry& e);
  Task<bool> bind_before_publish(int64_t window_id, const std::vector<std::string>& keys, const StreamEntry& e,
                                 std::vector<int64_t>* bound);
  Task<void> process(const StreamEntry& e);
  Task<void> spec_process(const StreamEntry& e);
  Task<void> window_process(const StreamEntry& e);
  Task<void> ack_window(const StreamEntry& e, const std::string& marker);
  Task<void> ensure_group();
  std::string key_suffix(const std::string& activity, const std::string& user, const std::string& item_id,
                         const std::string& item_type) const;
  std::string consumer_name();

  Runtime& rt_;
  Redis& redis_;
  Sql& sql_;
  ServiceOptions o_;
};

Task<MessagePtr> Replica::purchase(MessagePtr m) {
  const PurchaseRequest* req = message_as<PurchaseRequest>(m);
  PurchaseReply reply;
  if (req == nullptr || req->lines.empty()) {
    reply.error = "bad request";
    reply.db_not_applied = true;
    co_return make_message(std::move(reply));
  }
  for (const PurchaseLine& pl : req->lines) {
    Line l{req, pl, {}, 0, 0};
    if (!lookup_item(pl.item_type, &l.item) || pl.quantity <= 0) {
      reply.error = "unknown item";
      reply.db_not_applied = reply.pids.empty();
      co_return make_message(std::move(reply));
    }
    // 000:L110 "err=s.activityRepo.CreateContribution(contribution)": one row per purchase (COMBO-1).
    l.created_at = rt_.clock().now_ms();
    SqlResult ins = co_await sql_.execute(
        "INSERT INTO activity_contributions (activity_id, user_id, star_id, item_id, item_type, item_name, "
        "item_icon, nickname, avatar_url, quantity, created_at, client_ref) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        {req->activity_id, req->user_id, req->star_id, l.item.item_id, pl.item_type, l.item.name, l.item.icon,
         nickname_of(req->user_id), avatar_of(req->user_id), pl.quantity, l.created_at,
         req->client_ref + "#" + str(static_cast<int64_t>(&pl - req->lines.data()))});
    if (!ins.ok()) {
      reply.error = std::string("db: ") + sql_status_name(ins.status);
      reply.db_not_applied = ins.certainly_not_applied() && reply.pids.empty();
      co_return make_message(std::move(reply));
    }
    l.pid = ins.last_insert_rowid();
    reply.pids.push_back(l.pid);
    const bool secured = has(Fix::kWindowScripts) ? co_await window_aggregate(l) : co_await spec_aggregate(l);
    if (!secured && has(Fix::kAlert)) {
      reply.alerted = true;  // CB-ALERT (COMBO-10): an explicit failure instead of a silent drop
      rt_.note("ALERT combo push not secured for pid " + str(l.pid));
    }
  }
  reply.ok = true;
  co_return make_message(std::move(reply));
}

// 000:L114-152 as written: every error ignored, each command its own round trip. Returns whether
// every command succeeded (spec does not look; CB-ALERT does).
Task<bool> Replica::spec_aggregate(const Line& l) {
  const PurchaseRequest& req = *l.req;
  const std::string agg_key = "combo:agg:" + str(req.user_id) + ":" + l.line.item_type;
  const std::string lock_key = "combo:agg:lock:" + str(req.user_id) + ":" + l.line.item_type;
  bool ok = true;
  RedisReply r = co_await redis_.command({"HINCRBY", agg_key, "quantity", str(l.line.quantity)});
  ok = ok && r.ok_reply();
  const std::vector<std::pair<std::string, std::string>> fields = {{"activity_id", str(req.activity_id)},
                                                                   {"user_id", str(req.user_id)},
                                                                   {"star_id", str(req.star_id)},
                                                                   {"item_id", str(l.item.item_id)},
                                                                   {"item_name", l.item.name},
                                                                   {"item_icon", l.item.icon},
                                                                   {"nickname", nickname_of(req.user_id)},
                                                                   {"avatar_url", avatar_of(req.user_id)},
                                                                   {"first_id", str(l.pid)},
                                                                   {"first_created_at", str(l.created_at)}};
  for (const auto& [f, v] : fields) {
    r = co_await redis_.command({"HSETNX", agg_key, f, v});
    ok = ok && r.ok_reply();
  }
  r = co_await redis_.command({"EXPIRE", agg_key, str(o_.agg_ttl_s)});
  ok = ok && r.ok_reply();
  // 000:L136 "isFirst,_:=s.redisClient.SetNX(ctx,lockKey,"1",3*time.Second).Result()": an error reads as false.
  RedisReply set = co_await redis_.command({"SET", lock_key, "1", "EX", str(o_.lock_ttl_s), "NX"});
  ok = ok && (set.ok_reply() || set.is_nil());
  const bool is_first = set.kind == RedisReply::Kind::kStatus;
  if (is_first) {
    const int64_t expire_at = rt_.clock().now_ms() + o_.window_ms;
    r = co_await redis_xadd(redis_, kStreamKey,
                            {{"activity_id", str(req.activity_id)},
                             {"user_id", str(req.user_id)},
                             {"item_type", l.line.item_type},
                             {"first_id", str(l.pid)},
                             {"first_created_at", str(l.created_at)},
                             {"expire_at_ms", str(expire_at)}},
                            o_.stream_maxlen);
    ok = ok && r.ok_reply();
  }
  co_return ok;
}

std::string Replica::key_suffix(const std::string& activity, const std::string& user, const std::string& item_id,
                                const std::string& item_type) const {
  // CB-KEY-ACTIVITY (COMBO-15): 000:L115 keys by (user, item_type) only; two activities share it.
  return has(Fix::kKeyActivity) ? activity + ":" + user + ":" + item_id : user + ":" + item_type;
}

// CB-WINDOW-SCRIPTS: one atomic script (combo_aggregate, scripts.cc) counts, opens the window and
// enqueues it, one attempt, as the seed makes one call per command. The row is NOT bound to its
// window here: the worker binds every member once the window is closed (CB-POLL-BY-WINDOW; before
// its push with CB-BIND-FIRST), so the DB never shows a window before its membership is final.
Task<bool> Replica::window_aggregate(const Line& l) {
  const PurchaseRequest& req = *l.req;
  const std::string suffix = key_suffix(str(req.activity_id), str(req.user_id), str(l.item.item_id), l.line.item_type);
  // CB-LONG-AGG-TTL: 000:L133 "s.redisClient.Expire(ctx,aggKey,5*time.Second)" lets a stalled worker find nothing.
  const int64_t agg_ttl_ms = has(Fix::kLongAggTtl) ? o_.hardened_agg_ttl_ms : o_.agg_ttl_s * 1000;
  // The purchase's and its window's Redis identity is its pid AND created_at: a DB power loss
  // (synchronous NORMAL/OFF) forgets rows with AUTOINCREMENT's counter and hands their pids out
  // again, which must neither hit the old purchase's marker nor reuse an old window's keys.
  const std::string token = str(l.pid) + "." + str(l.created_at);
  const std::vector<std::string> keys = {
      window_lock_key(suffix), kStreamKey,
      purchase_marker_key(req.activity_id, req.user_id, l.item.item_id, l.pid, l.created_at)};
  std::vector<std::string> args = {str(l.pid),
                                   str(l.line.quantity),
                                   str(req.activity_id),
                                   str(req.user_id),
                                   str(req.star_id),
                                   str(l.item.item_id),
                                   l.line.item_type,
                                   l.item.name,
                                   l.item.icon,
                                   nickname_of(req.user_id),
                                   avatar_of(req.user_id),
                                   str(l.created_at),
                                   str(o_.window_ms),
                                   str(agg_ttl_ms),
                                   str(o_.marker_ttl_ms),
                                   str(o_.stream_maxlen),
                                   window_hash_prefix(suffix),
                                   token};
  // CB-BIND-BY-ROW: the member list names this row by pid and created_at (the token's form).
  if (has(Fix::kBindByRow)) args.push_back(token);
  RedisReply r = co_await redis_.script("combo_aggregate", keys, args);
  co_return r.kind == RedisReply::Kind::kBulk;
}

// CB-POLL-BY-WINDOW: one UPDATE binds the window's members; one attempt: if it does not land the
// entry stays pending and whoever reclaims it finishes the binding.
// Only rows of the entry's key: a DB power loss (synchronous NORMAL/OFF) may have forgotten a
// member and handed its pid to another purchase, whose row must not join this window.
// CB-BIND-BY-ROW: a member named with its created_at binds only that row, never a later purchase
// the DB handed the forgotten member's pid to (explore-hardened-lying-disk seed 8386).
Task<bool> Replica::bind_window(int64_t window_id, std::string member_list, const StreamEntry& e) {
  const std::vector<std::pair<int64_t, std::optional<int64_t>>> rows = parse_rows(member_list);
  if (rows.empty()) co_return true;
  SqlStatement up;
  up.sql =
      "UPDATE activity_contributions SET window_id = ? WHERE activity_id = ? AND user_id = ? AND item_id = ? AND (";
  up.params.push_back(window_id);
  for (const char* f : {"activity_id", "user_id", "item_id"}) {
    int64_t v = 0;
    try {
      v = std::stoll(e.field(f));
    } catch (...) {}
    up.params.push_back(v);
  }
  const bool by_row = has(Fix::kBindByRow);
  std::vector<int64_t> pids;  // members named by pid alone: one IN list, as the seed-era bind did
  bool first = true;
  for (const auto& [pid, created] : rows) {
    if (by_row && created) {
      up.sql += first ? "(id = ? AND created_at = ?)" : " OR (id = ? AND created_at = ?)";
      first = false;
      up.params.push_back(pid);
      up.params.push_back(*created);
    } else {
      pids.push_back(pid);
    }
  }
  if (!pids.empty()) {
    up.sql += first ? "id IN (" : " OR id IN (";
    for (size_t i = 0; i < pids.size(); ++i) {
      up.sql += i == 0 ? "?" : ",?";
      up.params.push_back(pids[i]);
    }
    up.sql += ")";
  }
  up.sql += ")";
  SqlResult res = co_await sql_.execute(up);
  co_return res.ok();
}

Task<MessagePtr> Replica::latest(MessagePtr m) {
  const LatestRequest* req = message_as<LatestRequest>(m);
  LatestReply reply;
  if (req == nullptr) co_return make_message(std::move(reply));
  SqlResult r;
  if (!has(Fix::kPollByWindow)) {
    r = co_await sql_.query(std::string("SELECT ") + kRowColumns +
                                " FROM activity_contributions WHERE activity_id = ? ORDER BY created_at DESC, id DESC "
                                "LIMIT ?",
                            {req->activity_id, o_.latest_limit});
  } else {
    // CB-POLL-BY-WINDOW (COMBO-11): whole windows (the newest latest_limit of them), never a
    // window cut in half; a window is shown once its opening row is bound (COMBO-11/13).
    r = co_await sql_.query(
        std::string("SELECT ") + kRowColumns +
            " FROM activity_contributions WHERE activity_id = ?1 AND window_id IN (SELECT DISTINCT "
            "window_id FROM activity_contributions WHERE activity_id = ?1 AND window_id IS NOT NULL "
            "AND window_id IN (SELECT id FROM activity_contributions WHERE id = window_id) "
            "ORDER BY window_id DESC LIMIT ?2)",
        {req->activity_id, o_.latest_limit});
  }
  if (!r.ok()) {
    reply.error = sql_status_name(r.status);
    co_return make_message(std::move(reply));
  }
  const std::vector<ContributionRow> rows = rows_of(r);
  reply.records = has(Fix::kPollByWindow) ? merge_latest_by_window(rows) : merge_latest_spec(rows);
  reply.ok = true;
  co_return make_message(std::move(reply));
}

Task<MessagePtr> Replica::ranking(MessagePtr m) {
  const RankingRequest* req = message_as<RankingRequest>(m);
  RankingReply reply;
  if (req == nullptr) co_return make_message(std::move(reply));
  SqlResult r = co_await sql_.query(
      "SELECT user_id, SUM(quantity) AS total FROM activity_contributions WHERE activity_id = ? GROUP BY user_id "
      "ORDER BY total DESC, user_id",
      {req->activity_id});
  if (r.ok()) {
    reply.ok = true;
    for (const SqlRow& row : r.rows()) reply.totals.emplace_back(as_int(row[0]), as_int(row[1]));
  }
  co_return make_message(std::move(reply));
}

std::string Replica::consumer_name() {
  // 000:L175 "consumerName:=fmt.Sprintf("worker-%d",time.Now().UnixNano()%100000)"
  return "worker-" + str((rt_.clock().now_us() * 1000) % 100000);
}

Task<void> Replica::ensure_group() {
  // 000:L178 "_=s.redisClient.XGroupCreateMkStream(ctx,streamKey,consumerGroup,"0").Err()"
  co_await redis_.command({"XGROUP", "CREATE", kStreamKey, kConsumerGroup, "0", "MKSTREAM"});
}

Task<void> Replica::worker() {
  const std::string consumer = consumer_name();
  co_await ensure_group();  // once, at start, error ignored
  int64_t last_claim_ms = rt_.clock().now_ms() - o_.claim_interval_ms;
  for (;;) {
    const int64_t now_ms = rt_.clock().now_ms();
    if (has(Fix::kAutoclaim) && (now_ms - last_claim_ms >= o_.claim_interval_ms || now_ms < last_claim_ms)) {
      last_claim_ms = now_ms;
      // CB-XAUTOCLAIM (COMBO-7/4): entries stranded in the PEL of a crashed or stalled consumer
      // are claimed by a live one (000:L420's promise, absent from the code at L189-195).
      RedisReply c = co_await redis_.command({"XAUTOCLAIM", kStreamKey, kConsumerGroup, consumer,
                                              str(o_.claim_min_idle_ms), "0-0", "COUNT", str(o_.read_count)});
      for (const StreamEntry& e : parse_xautoclaim(c)) co_await process(e);
    }
    const int64_t block = has(Fix::kAutoclaim) ? std::min(o_.block_ms, o_.claim_interval_ms) : o_.block_ms;
    RedisReply r = co_await redis_xreadgroup(redis_, kConsumerGroup, consumer, kStreamKey, ">", o_.read_count, block);
    if (r.is_nil()) continue;  // redis.Nil
    if (!r.ok_reply()) {
      // CB-NOGROUP (COMBO-2/7): a Redis restart that lost the group would fail every read forever.
      if (has(Fix::kNogroup) && r.is_error() && r.str.find("NOGROUP") != std::string::npos) {
        co_await ensure_group();
        continue;
      }
      rt_.note("XReadGroup error " + r.describe());
      co_await rt_.clock().sleep_ms(o_.error_sleep_ms);
      continue;
    }
    for (const StreamEntry& e : parse_xreadgroup(r)) co_await process(e);
  }
}

Task<void> Replica::process(const StreamEntry& e) {
  if (has(Fix::kWindowScripts)) {
    co_await window_process(e);
    co_return;
  }
  co_await spec_process(e);
  co_await redis_xack(redis_, kStreamKey, kConsumerGroup, e.id);  // 000:L210 确认消费, error ignored
}

Task<void> Replica::spec_process(const StreamEntry& e) {
  int64_t expire_at = 0, user_id = 0, activity_id = 0;
  try {
    expire_at = std::stoll(e.field("expire_at_ms"));
    user_id = std::stoll(e.field("user_id"));
    activity_id = std::stoll(e.field("activity_id"));
  } catch (...) {}
  const int64_t now = rt_.clock().now_ms();
  if (now < expire_at) co_await rt_.clock().sleep_ms(expire_at - now);  // local sleep, local clock
  const std::string item_type = e.field("item_type");
  const std::string agg_key = "combo:agg:" + str(user_id) + ":" + item_type;
  const std::string lock_key = "combo:agg:lock:" + str(user_id) + ":" + item_type;
  RedisReply h = co_await redis_hgetall(redis_, agg_key);
  const auto fields = parse_hash(h);
  if (!h.ok_reply() || fields.empty()) co_return;
  auto num = [&](const char* k) -> int64_t {
    auto it = fields.find(k);
    if (it == fields.end()) return 0;
    try {
      return std::stoll(it->second);
    } catch (...) { return 0; }  // strconv errors ignored
  };
  auto text = [&](const char* k) {
    auto it = fields.find(k);
    return it == fields.end() ? std::string() : it->second;
  };
  ContributionRecord rec;
  rec.id = num("first_id");
  rec.activity_id = activity_id;
  rec.user_id = user_id;
  rec.nickname = text("nickname");
  rec.avatar_url = text("avatar_url");
  rec.star_id = num("star_id");
  rec.item_id = num("item_id");
  rec.item_type = item_type;
  rec.item_name = text("item_name");
  rec.item_icon = text("item_icon");
  rec.quantity = static_cast<int32_t>(num("quantity"));
  rec.combo_count = rec.quantity;
  rec.created_at = num("first_created_at");
  co_await redis_publish(redis_, channel_of(activity_id), encode_payload(activity_id, rec));
  co_await redis_.command({"DEL", agg_key, lock_key});
}

// CB-WINDOW-SCRIPTS: publish + delete in one script (combo_flush), only for the entry's window,
// once its lock is gone on Redis's clock; then bind (CB-POLL-BY-WINDOW) and ack.
Task<void> Replica::window_process(const StreamEntry& e) {
  const std::string activity = e.field("activity_id"), user = e.field("user_id"), item_id = e.field("item_id");
  const std::string wid = e.field("window_id"), item_type = e.field("item_type");
  int64_t window_id = 0;
  std::string channel;
  bool malformed = false;
  try {
    window_id = std::stoll(wid);  // the token "<pid>.<created_at>": the DB binds by the pid
    channel = channel_of(std::stoll(activity));
    (void)std::stoll(user);
  } catch (...) { malformed = true; }
  if (malformed) {
    co_await redis_xack(redis_, kStreamKey, kConsumerGroup, e.id);  // malformed: drop it
    co_return;
  }
  const std::string suffix = key_suffix(activity, user, item_id, item_type);
  const std::vector<std::string> keys = {window_lock_key(suffix), window_hash_key(suffix, wid), kStreamKey,
                                         published_marker_key(suffix, wid)};
  const std::string owner = consumer_name() + "@" + str(rt_.clock().now_us()) + "#" + e.id;
  const std::vector<std::string> args = {
      kConsumerGroup, e.id, wid, channel, activity, user, item_type, str(o_.published_marker_ttl_ms), owner};
  std::vector<int64_t> bound;                   // the members this worker bound before publishing (CB-BIND-FIRST)
  for (int round = 0; round < 1000; ++round) {  // bounded: each wait is the lock's remaining TTL
    if (has(Fix::kBindFirst) && bound.empty() && !co_await bind_before_publish(window_id, keys, e, &bound)) {
      co_return;  // the DB or Redis did not answer: nothing published, the entry stays pending
    }
    // CB-FLUSH-WRITES-FIRST (COMBO-3/8): 000:L262-263 publishes, then deletes; a flush refused at
    // its first write (READONLY) has then pushed with no marker to say so.
    RedisReply r =
        co_await redis_.script(has(Fix::kFlushWritesFirst) ? "combo_flush_writes_first" : "combo_flush", keys, args);
    if (r.kind == RedisReply::Kind::kArray && !r.elements.empty()) {
      const std::string& what = r.elements[0].str;
      if (what == "wait") {
        // COMBO-5: the window ends when its lock expires on Redis's clock, not on ours.
        const int64_t pttl = r.elements.size() > 1 ? r.elements[1].integer : 0;
        co_await rt_.clock().sleep_ms(std::clamp<int64_t>(pttl, 1, o_.window_ms) + 2);
        continue;
      }
      if (what == "gone") co_return;  // nothing left of the window: acked by the script
      const bool published = what == "published" && r.elements.size() > 2;
      const bool already = what == "already" && r.elements.size() > 3;
      if (!published && !already) co_return;  // malformed reply: stays pending, reclaimed later
      const std::string& member_list = r.elements[published ? 2 : 3].str;
      const std::vector<int64_t> members = parse_members(member_list);
      // CB-POLL-BY-WINDOW (COMBO-11/13): bind the members before acking; if the DB is unreachable
      // the entry stays pending and whoever claims it next finds "already" and finishes.
      if (has(Fix::kPollByWindow) && members != bound && !co_await bind_window(window_id, member_list, e)) co_return;
      co_await ack_window(e, keys[3]);
      co_return;
    }
    if (r.is_transport_error() && r.indeterminate) continue;  // retry: the flush is idempotent (marker)
    co_return;  // Redis down or erroring: the entry stays pending (CB-XAUTOCLAIM brings it back)
  }
}

// CB-BIND-FIRST (COMBO-13): once the window's lock is gone no purchase can join it (a new one
// opens the next window), so its members are final: bind them in the DB before the push goes
// out. Bound after the push, a window whose Redis state a restart lost before any bind landed
// (the DB down meanwhile) is pushed yet never shown by a poll. Returns false when nothing may be
// published yet (the DB refused, Redis did not answer); `bound` stays empty when there was
// nothing to bind (the window is gone or already published: the flush says which).
Task<bool> Replica::bind_before_publish(int64_t window_id, const std::vector<std::string>& keys, const StreamEntry& e,
                                        std::vector<int64_t>* bound) {
  for (int round = 0; round < 1000; ++round) {  // bounded: each wait is the lock's remaining TTL
    RedisReply lock = co_await redis_.command({"GET", keys[0]});
    if (lock.is_transport_error() || lock.kind == RedisReply::Kind::kError) co_return false;
    if (lock.kind == RedisReply::Kind::kBulk && lock.str == e.field("window_id")) {
      RedisReply pttl = co_await redis_.command({"PTTL", keys[0]});
      const int64_t wait_ms = pttl.kind == RedisReply::Kind::kInteger ? pttl.integer : o_.window_ms;
      co_await rt_.clock().sleep_ms(std::clamp<int64_t>(wait_ms, 1, o_.window_ms) + 2);
      continue;
    }
    RedisReply pids = co_await redis_.command({"HGET", keys[1], "pids"});
    if (pids.is_transport_error() || pids.kind == RedisReply::Kind::kError) co_return false;
    if (pids.kind != RedisReply::Kind::kBulk) co_return true;
    std::vector<int64_t> members = parse_members(pids.str);
    if (!co_await bind_window(window_id, pids.str, e)) co_return false;
    *bound = std::move(members);
    co_return true;
  }
  co_return false;
}

Task<void> Replica::ack_window(const StreamEntry& e, const std::string& marker) {
  if (has(Fix::kConditionalAck)) {
    // CB-CONDITIONAL-ACK (COMBO-2/7): ack and drop the marker only while the marker exists; a
    // Redis restart that forgot the flush restored the window, which must be flushed again.
    co_await redis_.script("combo_ack", {kStreamKey, marker}, {kConsumerGroup, e.id});
    co_return;
  }
  co_await redis_xack(redis_, kStreamKey, kConsumerGroup, e.id);  // 000:L210: unconditional
  co_await redis_.command({"DEL", marker});
}

}  // namespace

std::string purchase_marker_key(int64_t activity_id, int64_t user_id, int64_t item_id, int64_t pid,
                                int64_t created_at_ms) {
  return "combo:pid:" + str(activity_id) + ":" + str(user_id) + ":" + str(item_id) + ":" + str(pid) + "." +
         str(created_at_ms);
}

const std::vector<std::string>& item_types() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> v;
    for (const CatalogItem& c : kCatalog) v.push_back(c.type);
    return v;
  }();
  return types;
}

bool lookup_item(const std::string& item_type, ItemInfo* out) {
  for (const CatalogItem& c : kCatalog) {
    if (item_type == c.type) {
      *out = ItemInfo{c.id, c.name, c.icon};
      return true;
    }
  }
  return false;
}

std::string nickname_of(int64_t user_id) { return "user" + std::to_string(user_id); }
std::string avatar_of(int64_t user_id) { return "avatar-" + std::to_string(user_id) + ".png"; }

const char* combo_schema_sql() {
  return "CREATE TABLE IF NOT EXISTS activity_contributions ("
         " id INTEGER PRIMARY KEY AUTOINCREMENT,"
         " activity_id INTEGER NOT NULL, user_id INTEGER NOT NULL, star_id INTEGER NOT NULL,"
         " item_id INTEGER NOT NULL, item_type TEXT NOT NULL, item_name TEXT NOT NULL, item_icon TEXT NOT NULL,"
         " nickname TEXT NOT NULL, avatar_url TEXT NOT NULL,"
         " quantity INTEGER NOT NULL CHECK (quantity > 0),"
         " created_at INTEGER NOT NULL,"
         " window_id INTEGER,"  // CB-POLL-BY-WINDOW: the window the server bound (NULL in spec)
         " client_ref TEXT);"   // instrumentation: joins a row to the client operation
         "CREATE INDEX IF NOT EXISTS idx_ac_activity_created ON activity_contributions(activity_id, created_at);"
         "CREATE INDEX IF NOT EXISTS idx_ac_activity_window ON activity_contributions(activity_id, window_id);";
}

Task<void> replica_main(Runtime& rt, Rpc& rpc, Redis& redis, Sql& sql, ServiceOptions options) {
  // Schema: one statement at a time (the port runs one statement per execute()).
  const std::string schema = combo_schema_sql();
  size_t from = 0;
  while (from < schema.size()) {
    size_t end = schema.find(';', from);
    if (end == std::string::npos) end = schema.size();
    const std::string stmt = schema.substr(from, end - from);
    from = end + 1;
    if (stmt.empty()) continue;
    for (;;) {
      SqlResult r = co_await sql.execute(SqlStatement(stmt));
      if (r.ok()) break;
      co_await rt.clock().sleep_ms(200);  // DB not up yet
    }
  }
  Replica replica(rt, redis, sql, options);
  Replica* self = &replica;
  rpc.serve(std::string(kActivityService) + ".purchase", [self](MessagePtr m) { return self->purchase(std::move(m)); });
  rpc.serve(std::string(kActivityService) + ".latest", [self](MessagePtr m) { return self->latest(std::move(m)); });
  rpc.serve(std::string(kActivityService) + ".ranking", [self](MessagePtr m) { return self->ranking(std::move(m)); });
  co_await replica.worker();  // never returns: the worker runs for the life of the process
}

}  // namespace fl::combo
