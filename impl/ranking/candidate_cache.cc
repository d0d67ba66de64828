#include "impl/ranking/candidate_cache.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <utility>

#include "impl/ranking/contract.h"
#include "impl/ranking/runs.h"

namespace fl::ranking {
namespace {

// KEYS isolated live fence; ARGV fence-read-before-the-pin ("" when absent). Renames the isolated
// list onto the live key only while the fence still holds that value and no control transaction
// is in progress (an odd fence); returns 1 when it switched, else 0.
const char* kCacheSwitchLua = R"(local f = redis.call('get', KEYS[3]) or ''
if f ~= ARGV[1] or (tonumber(f) or 0) % 2 == 1 then return 0 end
if not redis.call('get', KEYS[1]) then return 0 end
redis.call('rename', KEYS[1], KEYS[2])
return 1
)";

struct Pinned {
  int64_t ctx_version = 0;
  std::string run_id;
};

// The scope's context version and the newest SEALED run made under it.
Task<std::optional<Pinned>> pin(Sql& sql, const std::string& scope) {
  SqlResult r = co_await sql.exec(
      "SELECT c.version, r.run_id FROM ranking_scope_context c JOIN calculation_run r ON r.scope_id = c.scope_id AND "
      "r.scope_context_version = c.version WHERE c.scope_id = ? AND r.status = 'SEALED' ORDER BY r.seq DESC LIMIT 1",
      scope);
  if (!r.ok() || r.rows().empty()) co_return std::nullopt;
  co_return Pinned{r.rows()[0][0].as_int(), r.rows()[0][1].as_text()};
}

Task<std::optional<int64_t>> context_version(Sql& sql, const std::string& scope) {
  SqlResult r = co_await sql.exec("SELECT version FROM ranking_scope_context WHERE scope_id = ?", scope);
  if (!r.ok() || r.rows().empty()) co_return std::nullopt;
  co_return r.rows()[0][0].as_int();
}

std::string cache_value(const Pinned& p, const std::map<std::string, int64_t>& candidates) {
  std::string out = "ctx=" + std::to_string(p.ctx_version) + "|run=" + p.run_id + "|";
  bool first = true;
  for (const auto& [topic, score] : candidates) {
    out += (first ? "" : ";") + topic + ":" + std::to_string(score);
    first = false;
  }
  return out;
}

// The run's candidate rows (topic -> score).
Task<std::optional<std::map<std::string, int64_t>>> stored_candidates(Sql& sql, const std::string& scope,
                                                                      const std::string& run) {
  SqlResult r =
      co_await sql.exec("SELECT topic_id, score FROM run_candidate WHERE run_id = ? AND scope_id = ?", run, scope);
  if (!r.ok()) co_return std::nullopt;
  std::map<std::string, int64_t> out;
  for (const SqlRow& row : r.rows()) out[row[0].as_text()] = row[1].as_int();
  co_return std::move(out);
}

// 004:L317: the candidates recomputed from the immutable versions the run's frozen manifest names
// (its source-offset cut): each entry's score is the sum of its versions' risk-adjusted values,
// a version counts only if its stored value digest is the one the manifest pinned.
Task<std::optional<std::map<std::string, int64_t>>> recompute(Sql& sql, const CandidateCacheOptions& o,
                                                              const std::string& scope, const std::string& run) {
  SqlResult entries = co_await sql.exec("SELECT topic_id, items FROM run_input_manifest WHERE run_id = ?", run);
  const std::vector<std::string> windows = split(o.window_type, ',');
  std::vector<SqlValue> params = {scope};
  for (const std::string& w : windows) params.emplace_back(w);
  SqlResult versions = co_await sql.execute(
      std::string("SELECT v.aggregate_key, v.aggregation_generation, v.aggregate_version, v.risk_adjusted_value, "
                  "v.value_digest FROM topic_window_metric_version v JOIN topic_window_metric h ON h.aggregate_key = "
                  "v.aggregate_key WHERE h.scope_id = ? AND ") +
          window_type_clause(windows.size()),
      std::move(params));
  if (!entries.ok() || !versions.ok()) co_return std::nullopt;
  std::map<std::string, std::pair<int64_t, std::string>> by_triple;  // "ak,gen,ver" -> (value, digest)
  for (const SqlRow& v : versions.rows()) {
    by_triple[v[0].as_text() + "," + std::to_string(v[1].as_int()) + "," + std::to_string(v[2].as_int())] = {
        v[3].as_int(), v[4].as_text()};
  }
  std::map<std::string, int64_t> out;
  for (const SqlRow& e : entries.rows()) {
    int64_t score = 0;
    for (const std::string& item : split(e[1].as_text(), ';')) {
      const std::vector<std::string> f = split(item, ',');
      auto it = f.size() == 5 ? by_triple.find(f[0] + "," + f[1] + "," + f[2]) : by_triple.end();
      if (it == by_triple.end() || it->second.second != f[3]) co_return std::nullopt;  // not the pinned version
      score += it->second.first;
    }
    if (score >= o.entry_score) out[e[0].as_text()] = score;
  }
  co_return std::move(out);
}

// Rebuild into the isolated namespace, reconcile, and switch only under the pinned context.
// `fence`: the context fence read before the pin (RK-CACHE-CONTEXT-FENCE; "" when absent).
Task<void> rebuild(Runtime& rt, Sql& sql, Redis& redis, const CandidateCacheOptions& o, const std::string& scope,
                   const Pinned& p, const std::string& fence) {
  std::optional<std::map<std::string, int64_t>> rebuilt = co_await recompute(sql, o, scope, p.run_id);
  if (!rebuilt) co_return;
  const std::string isolated = candidates_rebuild_prefix(scope) + std::to_string(rt.incarnation()) + "." +
                               std::to_string(rt.random_u64() % 1000000000);
  if (!(co_await redis.command({"SET", isolated, cache_value(p, *rebuilt), "PX", "10000"})).ok_reply()) co_return;
  std::optional<std::map<std::string, int64_t>> stored = co_await stored_candidates(sql, scope, p.run_id);
  std::optional<int64_t> now = co_await context_version(sql, scope);
  // 004:L317: "在隔离候选namespace重算并逐榜项对账；上下文在重建期间变化就废弃本批结果重来".
  if (!stored || *stored != *rebuilt || !now || *now != p.ctx_version) {
    co_await redis.command({"DEL", isolated});
    co_return;
  }
  if (!o.fixes.has(RankFix::kCacheContextFence)) {
    co_await redis.command({"RENAME", isolated, candidates_key(scope)});  // spec: check, then switch
    co_return;
  }
  RedisReply switched =
      co_await redis.script(kCacheSwitchScript, {isolated, candidates_key(scope), context_fence_key(scope)}, {fence});
  if (switched.kind == RedisReply::Kind::kInteger && switched.integer == 0) co_await redis.command({"DEL", isolated});
}

Task<void> refresh_scope(Runtime& rt, Sql& sql, Redis& redis, const CandidateCacheOptions& o,
                         const std::string& scope) {
  std::string fence;  // read before the pin, so a control commit after the pin moves it
  if (o.fixes.has(RankFix::kCacheContextFence)) {
    RedisReply f = co_await redis.command({"GET", context_fence_key(scope)});
    if (!f.ok_reply()) co_return;
    if (f.kind == RedisReply::Kind::kBulk) fence = f.str;
  }
  std::optional<Pinned> p = co_await pin(sql, scope);
  if (!p) co_return;
  RedisReply live = co_await redis.command({"GET", candidates_key(scope)});
  if (!live.ok_reply()) co_return;
  if (live.kind != RedisReply::Kind::kBulk) {
    co_await rebuild(rt, sql, redis, o, scope, *p, fence);  // lost (or never written): rebuild from the versions
    co_return;
  }
  const std::string prefix = "ctx=" + std::to_string(p->ctx_version) + "|run=" + p->run_id + "|";
  if (live.str.rfind(prefix, 0) == 0) co_return;
  // A newer sealed run: the live list follows its stored candidates.
  std::optional<std::map<std::string, int64_t>> stored = co_await stored_candidates(sql, scope, p->run_id);
  if (stored) co_await redis.command({"SET", candidates_key(scope), cache_value(*p, *stored)});
}

}  // namespace

std::string candidates_key(const std::string& scope) { return "ranking:candidates:" + scope; }
std::string context_fence_key(const std::string& scope) { return "ranking:ctx-fence:" + scope; }

void add_cache_scripts(ScriptRegistry& registry) { registry.add(RedisScript{kCacheSwitchScript, kCacheSwitchLua}); }
std::string candidates_rebuild_prefix(const std::string& scope) { return "ranking:candidates-rebuild:" + scope + ":"; }

Task<void> run_candidate_cache(Runtime& rt, Sql& sql, Redis& redis, CandidateCacheOptions o) {
  for (;;) {
    co_await rt.clock().sleep_us(o.interval_us);
    for (const std::string& scope : o.scopes) co_await refresh_scope(rt, sql, redis, o, scope);
  }
}

}  // namespace fl::ranking
