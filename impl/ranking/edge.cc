#include "impl/ranking/edge.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>

#include "impl/ranking/contract.h"
#include "impl/ranking/risk.h"
#include "impl/ports/assert.h"

namespace fl::ranking {
namespace {

// "epoch|t_a,t_b|until" (a denylist as Redis holds it) -> epoch, topics and the earliest pending
// effective_until of those blocks (0: none); a missing key is epoch 0.
int64_t parse_deny(const RedisReply& r, std::vector<std::string>* topics, int64_t* until = nullptr) {
  if (r.kind != RedisReply::Kind::kBulk) return 0;
  const std::vector<std::string> f = split(r.str, '|');
  if (topics && f.size() > 1) *topics = split(f[1], ',');
  if (until && f.size() > 2) *until = std::strtoll(f[2].c_str(), nullptr, 10);
  return std::strtoll(r.str.c_str(), nullptr, 10);
}

// The earlier of two validity bounds, 0 standing for none.
int64_t earliest(int64_t a, int64_t b) { return a == 0 ? b : (b == 0 ? a : std::min(a, b)); }

std::string field_of(const std::string& r, const std::string& name) {
  const size_t at = r.find(name + "=");
  if (at == std::string::npos) return "";
  const size_t from = at + name.size() + 1, to = r.find(' ', from);
  return r.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

struct EdgeState {
  struct Cached {
    std::string scope, result;
    int64_t cached_us = 0, expires_us = 0;
  };
  struct Deny {
    int64_t epoch = 0;
    std::set<std::string> topics;
  };
  std::map<std::string, Cached> cache;  // by CDN cache key
  std::map<std::string, Deny> deny;     // by scope_id: what the emergency channel delivered
};

// 004:L285: "在 CDN 命中之后再经过边缘 denylist 过滤；请求携带的边缘 risk epoch 落后时必须绕过缓存回源".
Task<std::string> edge_answer(Runtime& rt, Redis& redis, Sql* db, EdgeState& st, const EdgeOptions& o,
                              const EdgeGet& g) {
  const std::optional<std::string> scope = canonical_scope(g.scope_type, g.channel_id, g.region_id, g.language);
  if (!scope) co_return "error";  // 004:L279: an invalid combination is rejected, never the global board
  RedisReply ls = co_await redis.command({"GET", denylist_key(*scope)});
  RedisReply gs = co_await redis.command({"GET", denylist_key(kGlobalScope)});
  if (!ls.ok_reply() || !gs.ok_reply()) co_return "error";
  const EdgeState::Deny& dl = st.deny[*scope];
  const EdgeState::Deny& dg = st.deny[kGlobalScope];
  const bool behind = dl.epoch < parse_deny(ls, nullptr) || dg.epoch < parse_deny(gs, nullptr);
  const std::string key = cdn_cache_key(g, o.cache_policy_version);
  auto hit = st.cache.find(key);
  if (!behind && hit != st.cache.end() && hit->second.expires_us > rt.clock().now_us()) {
    std::string shown;
    for (const std::string& t : split(field_of(hit->second.result, "items"), ',')) {
      if (dl.topics.count(t) || dg.topics.count(t)) continue;
      shown += (shown.empty() ? "" : ",") + t;
    }
    // Like HTTP's Age: when the object left the origin, and the denylist epochs the origin applied.
    co_return "snap=" + field_of(hit->second.result, "snap") + " deny=" + std::to_string(dl.epoch) + "/" +
        std::to_string(dg.epoch) + " items=" + shown + " src=hit cached=" + std::to_string(hit->second.cached_us) +
        " origin_epochs=" + field_of(hit->second.result, "deny");
  }
  const std::string r = co_await origin_view(redis, *scope, db);
  if (r.empty()) co_return "error";
  // 004:L213: "快照和 CDN 的有效期不得跨过当前最早到期时间": the object lives until the TTL or the
  // earliest pending expiry of the blocks the origin applied, whichever comes first (a past one:
  // not cached at all).
  const int64_t now = rt.clock().now_us();
  const int64_t expires = earliest(now + o.ttl_us, std::strtoll(field_of(r, "until").c_str(), nullptr, 10));
  if (!behind && expires > now) st.cache[key] = EdgeState::Cached{*scope, r, now, expires};
  co_return r + " src=origin";
}

// The conditional request (004:L279) is evaluated on the answer the edge would send, after its
// denylist filter: "not-modified" only when that answer's validator is the client's.
Task<std::string> edge_get(Runtime& rt, Redis& redis, Sql* db, EdgeState& st, const EdgeOptions& o, const EdgeGet& g) {
  const std::string r = co_await edge_answer(rt, redis, db, st, o, g);
  if (!o.etag || r == "error") co_return r;
  const std::string etag = edge_etag(r, o.etag_risk_epochs);
  if (!g.if_none_match.empty() && g.if_none_match == etag) co_return "not-modified etag=" + etag;
  co_return r + " etag=" + etag;
}

}  // namespace

std::string edge_etag(const std::string& answer, bool risk_epochs) {
  const std::string snap = field_of(answer, "snap");
  return risk_epochs ? snap + "@" + field_of(answer, "deny") : snap;
}

std::string cdn_cache_key(const EdgeGet& g, const std::string& cache_policy_version) {
  return "/rankings/hot-search|" + g.scope_type + "|" + g.channel_id + "|" + g.region_id + "|" + g.language +
         "|latest|" + cache_policy_version;
}

// RK-DENYLIST-BYPASS: the scope's and the global blocks with their epochs, from the DB in one
// statement (the global scope's own key holds the global blocks and epoch).
struct DbDenylist {
  std::string epochs;  // "<scope epoch>/<global epoch>"
  std::vector<std::string> topics;
  int64_t until_us = 0;  // the earliest pending effective_until of those blocks (0: none)
};
Task<std::optional<DbDenylist>> db_denylist(Sql& db, const std::string& scope) {
  const std::string local = scope == kGlobalScope ? "global_risk_epoch" : "risk_epoch";
  SqlResult r = co_await db.exec(
      "SELECT (SELECT " + local +
          " FROM ranking_scope_context WHERE scope_id = ?), (SELECT global_risk_epoch FROM "
          "ranking_scope_context WHERE scope_id = ?), COALESCE((SELECT group_concat(topic_id, ',') FROM (" +
          std::string(kBlockedTopicsSql) + ")), ''), (" + kEarliestExpirySql + ")",
      scope, std::string(kGlobalScope), scope, std::string(kGlobalScope), scope, std::string(kGlobalScope));
  if (!r.ok() || r.rows().empty()) co_return std::nullopt;
  const SqlRow& row = r.rows()[0];
  const auto epoch = [](const SqlValue& v) { return v.is_null() ? int64_t{0} : v.as_int(); };
  co_return DbDenylist{std::to_string(epoch(row[0])) + "/" + std::to_string(epoch(row[1])),
                       split(row[2].as_text(), ','), epoch(row[3])};
}

Task<std::string> origin_view(Redis& redis, const std::string& scope, Sql* db) {
  RedisReply p = co_await redis.command({"GET", "ranking:pointer:" + scope});
  if (!p.ok_reply()) co_return "";
  if (p.kind != RedisReply::Kind::kBulk) co_return "snap= deny=0/0 items=";
  const std::string snap = p.str.substr(p.str.find('|') + 1);
  RedisReply items = co_await redis.command({"GET", "ranking:snapshot:" + scope + ":" + snap});
  RedisReply local = co_await redis.command({"GET", denylist_key(scope)});
  RedisReply global = co_await redis.command({"GET", denylist_key(kGlobalScope)});
  if (!items.ok_reply() || !local.ok_reply() || !global.ok_reply() || items.kind != RedisReply::Kind::kBulk)
    co_return "";
  // 004:L240: "全局动作和局部动作的并集仍在当前 scope 下求值".
  std::vector<std::string> deny, g;
  int64_t ul = 0, ug = 0;
  const int64_t el = parse_deny(local, &deny, &ul), eg = parse_deny(global, &g, &ug);
  deny.insert(deny.end(), g.begin(), g.end());
  std::string epochs = std::to_string(el) + "/" + std::to_string(eg);
  int64_t until = earliest(ul, ug);
  if (db != nullptr && (local.kind != RedisReply::Kind::kBulk || global.kind != RedisReply::Kind::kBulk)) {
    // 004:L235: "边缘尚未确认最新 epoch 时绕过榜单缓存回源": a lost denylist confirms nothing.
    auto from_db = co_await db_denylist(*db, scope);
    if (!from_db) co_return "";
    epochs = from_db->epochs;
    deny = from_db->topics;
    until = from_db->until_us;
  }
  std::string shown;
  for (const std::string& item : split(items.str, ';')) {
    const std::vector<std::string> f = split(item, ':');
    if (f.size() < 2 || std::find(deny.begin(), deny.end(), f[1]) != deny.end()) continue;
    shown += (shown.empty() ? "" : ",") + f[1];
  }
  // until: how long an answer built from these denylists may be kept (004:L213), 0 when no block is pending.
  co_return "snap=" + snap + " deny=" + epochs + " items=" + shown + " until=" + std::to_string(until);
}

Task<void> run_edge(Runtime& rt, Rpc& rpc, Redis& redis, EdgeOptions o, Sql* db) {
  auto st = std::make_shared<EdgeState>();  // volatile: a crash loses the cache and the denylists
  rpc.serve("edge", [&rt, &redis, db, st, o](MessagePtr m) -> Task<MessagePtr> {
    const EdgeGet* g = message_as<EdgeGet>(m);
    if (g == nullptr) co_return make_message(EdgeReply{"error"});
    // Copies first: the closure's captures are not used after the first suspension.
    const EdgeGet get = *g;
    std::shared_ptr<EdgeState> state = st;
    const EdgeOptions opts = o;
    Runtime& runtime = rt;
    Redis& cache_redis = redis;
    Sql* origin_db = db;
    co_return make_message(EdgeReply{co_await edge_get(runtime, cache_redis, origin_db, *state, opts, get)});
  });
  rpc.serve("edge-deny", [st](MessagePtr m) -> Task<MessagePtr> {
    const EdgeDeny* d = message_as<EdgeDeny>(m);
    if (d == nullptr) co_return make_message(EdgeAck{false});
    EdgeState::Deny& cur = st->deny[d->scope_id];
    if (d->epoch > cur.epoch) {  // an older push never replaces a newer one
      cur.epoch = d->epoch;
      const std::vector<std::string> t = split(d->topics, ',');
      cur.topics = std::set<std::string>(t.begin(), t.end());
    }
    co_return make_message(EdgeAck{true});
  });
  rpc.serve("edge-purge", [&rt, st, o](MessagePtr m) -> Task<MessagePtr> {
    const EdgePurge* p = message_as<EdgePurge>(m);
    // 004:L237: "purge 失败时由边缘 denylist 继续过滤".
    if (p == nullptr || static_cast<int>(rt.random_u64() % 100) < o.purge_fail_percent)
      co_return make_message(EdgeAck{false});
    for (auto it = st->cache.begin(); it != st->cache.end();) {
      it = std::find(p->scopes.begin(), p->scopes.end(), it->second.scope) != p->scopes.end() ? st->cache.erase(it)
                                                                                              : std::next(it);
    }
    co_return make_message(EdgeAck{true});
  });
  co_return;
}

Task<void> push_to_edge(Rpc& rpc, const std::string& scope, int64_t epoch, const std::string& topics,
                        std::vector<std::string> purge_scopes) {
  co_await rpc.call("edge-deny", make_message(EdgeDeny{scope, epoch, topics}), 300'000);
  co_await rpc.call("edge-purge", make_message(EdgePurge{std::move(purge_scopes)}), 300'000);
}

Task<void> run_edge_viewer(Runtime& rt, Rpc& rpc, Recorder& history, std::vector<std::string> scopes,
                           int64_t interval_us, int64_t stop_at_us, bool conditional, bool shared_cache) {
  std::map<std::string, std::string> kept;  // cache key -> the last full answer shown (volatile)
  while (rt.clock().now_us() < stop_at_us) {
    co_await rt.clock().sleep_us(
        interval_us / 2 +
        static_cast<int64_t>(rt.random_u64() % static_cast<uint64_t>(std::max<int64_t>(1, interval_us))));
    const std::string scope = scopes[rt.random_u64() % scopes.size()];
    std::vector<std::string> d = split(scope, '|');
    for (std::string& x : d) x = x == "ALL" ? "" : x;
    if (d.size() != 4) continue;
    const uint64_t op = history.invoke(rt.process_name(), "view", "scope=" + scope);
    const std::string cache_key = shared_cache ? "latest" : scope;
    auto k = kept.find(cache_key);
    const std::string validator = conditional && k != kept.end() ? field_of(k->second, "etag") : "";
    RpcResult r = co_await rpc.call("edge", make_message(EdgeGet{d[0], d[1], d[2], d[3], validator}), 1'000'000);
    const EdgeReply* reply = r.ok() ? message_as<EdgeReply>(r.reply) : nullptr;
    if (reply == nullptr || reply->result == "error") {
      history.complete(op, Outcome::kInfo, "error");
      continue;
    }
    if (reply->result.rfind("not-modified", 0) == 0) {
      // What the client displays: its kept answer, shown again on the server's word. Only a request
      // carrying a kept answer's validator is answered so, and nothing else touches `kept`.
      FL_ASSERT(k != kept.end());
      const std::string& body = k->second;
      history.complete(op, Outcome::kOk,
                       "snap=" + field_of(body, "snap") + " deny=" + field_of(body, "deny") + " items=" +
                           field_of(body, "items") + " src=not-modified etag=" + field_of(reply->result, "etag"));
      continue;
    }
    if (conditional) kept[cache_key] = reply->result;
    history.complete(op, Outcome::kOk, reply->result);
  }
}

}  // namespace fl::ranking
