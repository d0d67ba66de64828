#include "impl/ranking/risk.h"

#include <algorithm>
#include <cstdlib>

#include "impl/ranking/candidate_cache.h"
#include "impl/ranking/contract.h"
#include "impl/ranking/edge.h"

namespace fl::ranking {
namespace {

const char* kDenylistSetLua = R"(local cur = redis.call('get', KEYS[1])
if cur and tonumber(string.match(cur, '^(%d+)')) >= tonumber(ARGV[1]) then return 0 end
redis.call('set', KEYS[1], ARGV[1] .. '|' .. ARGV[2])
return 1
)";

// 004:L212: a local action moves the scope's risk_epoch; a global one the global_risk_epoch that
// "可由 GLOBAL|ALL|ALL|ALL 这条权威 scope 控制记录分配".
std::string epoch_column(const std::string& scope) {
  return scope == kGlobalScope ? "global_risk_epoch" : "risk_epoch";
}

// The current row of (scope, topic) as "action_id/state" (the highest risk_action_version).
const char* kCurrentRowSql =
    "SELECT action_id || '/' || state FROM risk_action WHERE scope_id = ? AND topic_id = ? ORDER BY "
    "risk_action_version DESC LIMIT 1";

struct Action {
  std::string scope, topic, action_id, state;
  int64_t from_us = 0, until_us = 0;
};

// 004:L211-213, L234: one control transaction locks the context row (version + 1), advances the
// scope's (or the global) risk epoch and writes the action with the next risk_action_version of its
// (scope_id, topic_id); `guards` are the conditions it commits under.
std::vector<SqlStatement> control_tx(const Action& a, std::vector<SqlStatement> guards, const std::string& who) {
  std::vector<SqlStatement> tx = std::move(guards);
  const std::string col = epoch_column(a.scope);
  tx.push_back(expecting(sql_statement("UPDATE ranking_scope_context SET version = version + 1, " + col + " = " + col +
                                           " + 1 WHERE scope_id = ?",
                                       a.scope),
                         SqlExpect::kChanged));
  tx.push_back(expecting(
      sql_statement("INSERT INTO risk_action (scope_id, topic_id, risk_action_version, action_id, state, "
                    "effective_from_us, effective_until_us, risk_epoch, operator) SELECT ?, ?, "
                    "COALESCE(MAX(a.risk_action_version), 0) + 1, ?, ?, ?, ?, (SELECT " +
                        col +
                        " FROM ranking_scope_context WHERE scope_id = ?), ? FROM risk_action a WHERE a.scope_id = ? "
                        "AND a.topic_id = ?",
                    a.scope, a.topic, a.action_id, a.state, a.from_us, a.until_us, a.scope, who, a.scope, a.topic),
      SqlExpect::kChanged));
  return tx;
}

SqlStatement current_is(const Action& a, const std::string& want) {
  return expecting(sql_statement(std::string("SELECT 1 WHERE (") + kCurrentRowSql + ") = ?", a.scope, a.topic, want),
                   SqlExpect::kSomeRows);
}

// RK-CACHE-CONTEXT-FENCE: moves the fence of `scope` (every board scope for the global one, whose
// actions are absorbed by all). Called before a context transaction (the fence turns odd: no
// rebuild pinned earlier may switch while it may commit) and after it (even again, but not the
// value a rebuild read before). A Redis error leaves a fence odd or moved: a rebuild discards its
// batch, never switches a stale one.
Task<void> move_fence(Redis& redis, const RiskOptions& o, const std::string& scope) {
  if (!o.cache_fence) co_return;
  if (scope != kGlobalScope) {
    co_await redis.command({"INCR", context_fence_key(scope)});
    co_return;
  }
  for (const std::string& s : o.scopes) co_await redis.command({"INCR", context_fence_key(s)});
}

// 004:L212: "各 scope 的控制投影随后记录已吸收的全局 epoch": a control transaction per scope that
// lags the authority row.
Task<void> absorb_global(Sql& sql, Redis& redis, const RiskOptions& o) {
  const std::vector<std::string>& scopes = o.scopes;
  for (const std::string& s : scopes) {
    if (s == kGlobalScope) continue;
    co_await move_fence(redis, o, s);
    co_await sql.exec(
        "UPDATE ranking_scope_context SET version = version + 1, global_risk_epoch = (SELECT "
        "global_risk_epoch FROM ranking_scope_context WHERE scope_id = ?) WHERE scope_id = ? AND "
        "global_risk_epoch < (SELECT global_risk_epoch FROM ranking_scope_context WHERE scope_id = ?)",
        std::string(kGlobalScope), s, std::string(kGlobalScope));
    co_await move_fence(redis, o, s);
  }
}

// 004:L235: the epoch'd denylist of a scope (its local blocks with its risk_epoch; for the global
// scope the global blocks with the global epoch), read in one statement, pushed through the
// emergency channel; an older epoch never replaces a newer one. It carries the earliest
// effective_until of those blocks, which bounds every cached answer built with it (004:L213:
// "快照和 CDN 的有效期不得跨过当前最早到期时间").
Task<void> push_denylist(Sql& sql, Redis& redis, const RiskOptions& o, const std::string& scope) {
  SqlResult r =
      co_await sql.exec("SELECT " + epoch_column(scope) + ", COALESCE((SELECT group_concat(topic_id, ',') FROM (" +
                            kBlockedTopicsSql + " ORDER BY a.topic_id)), ''), COALESCE((" + kEarliestExpirySql +
                            "), 0) FROM ranking_scope_context WHERE "
                            "scope_id = ?",
                        scope, scope, scope, scope, scope);
  if (!r.ok() || r.rows().empty()) co_return;
  co_await redis.script(kDenylistSetScript, {denylist_key(scope)},
                        {std::to_string(r.rows()[0][0].as_int()),
                         r.rows()[0][1].as_text() + "|" + std::to_string(r.rows()[0][2].as_int())});
  if (o.edge == nullptr) co_return;
  // 004:L235, L237: the same denylist to the CDN's edge filter, and a purge of the affected scopes
  // (a global action expands to every board scope).
  std::vector<std::string> purge = {scope};
  if (scope == kGlobalScope) purge = o.scopes;
  co_await push_to_edge(*o.edge, scope, r.rows()[0][0].as_int(), r.rows()[0][1].as_text(), std::move(purge));
}

// RK-DENYLIST-CATCHUP: pushes again the denylist of each scope whose Redis key is missing or holds an
// older epoch than the DB's context row (004:L213: the tasks are idempotent and retryable; L235: the
// push is part of the action, and the edge trusts Redis's epoch). A push a fault lost is otherwise
// never retried. (Between a Redis loss and this round the query layer still has no denylist:
// RK-DENYLIST-BYPASS reads the DB then.)
Task<void> catch_up_denylists(Sql& sql, Redis& redis, const RiskOptions& o) {
  SqlResult ctx = co_await sql.exec("SELECT scope_id, risk_epoch, global_risk_epoch FROM ranking_scope_context");
  if (!ctx.ok()) co_return;
  std::vector<std::pair<std::string, int64_t>> db;  // (scope, its key's epoch in the DB)
  std::vector<std::string> get = {"MGET"};
  for (const SqlRow& row : ctx.rows()) {
    const std::string scope = row[0].as_text();
    if (std::find(o.scopes.begin(), o.scopes.end(), scope) == o.scopes.end()) continue;
    db.emplace_back(scope, scope == kGlobalScope ? row[2].as_int() : row[1].as_int());
    get.push_back(denylist_key(scope));
  }
  if (db.empty()) co_return;
  RedisReply held = co_await redis.command(get);
  if (held.kind != RedisReply::Kind::kArray || held.elements.size() != db.size()) co_return;
  for (size_t i = 0; i < db.size(); ++i) {
    const RedisReply& key = held.elements[i];
    const bool missing = key.kind == RedisReply::Kind::kNil;
    if (db[i].second == 0 || (!missing && (key.kind != RedisReply::Kind::kBulk ||
                                           std::strtoll(key.str.c_str(), nullptr, 10) >= db[i].second))) {
      continue;
    }
    co_await push_denylist(sql, redis, o, db[i].first);
  }
}

int64_t jitter(Runtime& rt, int64_t mean_us) {
  return mean_us / 2 + static_cast<int64_t>(rt.random_u64() % static_cast<uint64_t>(std::max<int64_t>(1, mean_us)));
}

// A risk-model switch of a local scope (risk-m1 <-> risk-m2): a control transaction that locks the
// context row by a compare-and-set on the model it read, moves the context version and advances the
// scope's risk_epoch (004:L212: "切换风险模型也推进它"), so runs and risk verdicts made under the old
// model never publish (004:L260); then the scope's denylist at the new epoch (same blocks).
Task<void> switch_model(Sql& sql, Redis& redis, const RiskOptions& o, const std::string& scope) {
  SqlResult cur = co_await sql.exec("SELECT risk_model_version FROM ranking_scope_context WHERE scope_id = ?", scope);
  if (!cur.ok() || cur.rows().empty()) co_return;  // the publisher creates the context row
  const std::string from = cur.rows()[0][0].as_text(), to = from == "risk-m1" ? "risk-m2" : "risk-m1";
  std::vector<SqlStatement> tx;
  tx.push_back(
      expecting(sql_statement("UPDATE ranking_scope_context SET version = version + 1, risk_epoch = risk_epoch + "
                              "1, risk_model_version = ? WHERE scope_id = ? AND risk_model_version = ?",
                              to, scope, from),
                SqlExpect::kChanged));
  co_await move_fence(redis, o, scope);
  const bool ok = (co_await sql.transaction(std::move(tx))).ok();
  co_await move_fence(redis, o, scope);
  if (!ok) co_return;
  co_await push_denylist(sql, redis, o, scope);
}

// One block or lift: a new block of a topic that is not blocked in the scope, or a lift of the
// current block (004:L211: "解除屏蔽不是删除旧记录，而是产生更高的 risk_action_version"); with
// model_switch_percent, sometimes a risk-model switch of a local scope instead.
Task<void> one_action(Runtime& rt, Sql& sql, Redis& redis, const RiskOptions& o, int64_t n) {
  std::vector<std::string> locals = o.local_scopes;
  if (locals.empty()) {
    for (const std::string& s : o.scopes) {
      if (s != kGlobalScope) locals.push_back(s);
    }
  }
  if (o.model_switch_percent > 0 && !locals.empty() &&
      static_cast<int>(rt.random_u64() % 100) < o.model_switch_percent) {
    co_await switch_model(sql, redis, o, locals[rt.random_u64() % locals.size()]);
    co_return;
  }
  const bool global = locals.empty() || static_cast<int>(rt.random_u64() % 100) < o.global_percent;
  Action a;
  a.scope = global ? std::string(kGlobalScope) : locals[rt.random_u64() % locals.size()];
  a.topic = "t_" + std::to_string(1 + rt.random_u64() % static_cast<uint64_t>(std::max(1, o.topics)));
  SqlResult cur = co_await sql.exec(kCurrentRowSql, a.scope, a.topic);
  if (!cur.ok()) co_return;
  const std::string row = cur.rows().empty() ? "" : cur.rows()[0][0].as_text();
  const bool blocked = row.size() > 6 && row.substr(row.size() - 6) == "/BLOCK";
  std::vector<SqlStatement> guards;
  if (blocked) {
    if (static_cast<int>(rt.random_u64() % 100) >= o.lift_percent) co_return;
    a.action_id = row.substr(0, row.size() - 6);  // the lift is the next version of that action
    a.state = "LIFTED";
    guards.push_back(current_is(a, row));
  } else {
    a.action_id = std::string(rt.process_name()) + "." + std::to_string(rt.incarnation()) + "." + std::to_string(n) +
                  "." + std::to_string(rt.random_u64() % 100000);
    a.state = "BLOCK";
    guards.push_back(expecting(sql_statement(std::string("SELECT 1 WHERE COALESCE((") + kCurrentRowSql +
                                                 "), '') "
                                                 "NOT LIKE '%/BLOCK'",
                                             a.scope, a.topic),
                               SqlExpect::kSomeRows));
  }
  a.from_us = rt.clock().now_us();
  a.until_us = a.from_us + o.block_ttl_us;
  co_await move_fence(redis, o, a.scope);
  SqlResult r = co_await sql.transaction(control_tx(a, std::move(guards), std::string(rt.process_name())));
  co_await move_fence(redis, o, a.scope);
  if (!r.ok()) co_return;
  if (global) co_await absorb_global(sql, redis, o);
  co_await push_denylist(sql, redis, o, a.scope);
}

// 004:L213: "到期任务锁定 scope context、写入更高动作版本并推进 scope 或 global risk epoch";
// "任务使用动作 ID 幂等执行并可重试". Spec's idempotence is per action id (no EXPIRED row for it
// yet); RK-EXPIRY-CURRENT-ACTION also requires the action to be its topic's current BLOCK, so a
// late expiry of a lifted action never ends a newer block of the same topic.
Task<void> expire(Sql& sql, Redis& redis, const RiskOptions& o, Action a, const std::string& who) {
  std::vector<SqlStatement> guards;
  guards.push_back(expecting(sql_statement("SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM risk_action WHERE action_id = ? "
                                           "AND state = 'EXPIRED')",
                                           a.action_id),
                             SqlExpect::kSomeRows));
  if (o.fixes.has(RankFix::kExpiryCurrentAction)) guards.push_back(current_is(a, a.action_id + "/BLOCK"));
  a.state = "EXPIRED";
  co_await move_fence(redis, o, a.scope);
  SqlResult r = co_await sql.transaction(control_tx(a, std::move(guards), who));
  co_await move_fence(redis, o, a.scope);
  if (!r.ok()) co_return;
  if (a.scope == kGlobalScope) co_await absorb_global(sql, redis, o);
  co_await push_denylist(sql, redis, o, a.scope);
}

}  // namespace

void add_risk_scripts(ScriptRegistry& registry) { registry.add(RedisScript{kDenylistSetScript, kDenylistSetLua}); }

std::string denylist_key(const std::string& scope) { return "ranking:emergency-block:" + scope; }

Task<void> run_risk_control(Runtime& rt, Sql& sql, Redis& redis, RiskOptions o) {
  for (int64_t n = 0; rt.clock().now_us() < o.stop_at_us; ++n) {
    co_await rt.clock().sleep_us(jitter(rt, o.interval_us));
    co_await one_action(rt, sql, redis, o, n);
  }
}

Task<void> run_expiry(Runtime& rt, Sql& sql, Redis& redis, RiskOptions o) {
  for (;;) {
    co_await rt.clock().sleep_us(jitter(rt, o.expiry_interval_us));
    // 004:L213: effective_until is the earliest moment the task may commit EXPIRED.
    SqlResult due = co_await sql.exec(
        "SELECT scope_id, topic_id, action_id, effective_from_us, effective_until_us FROM risk_action r WHERE state = "
        "'BLOCK' AND effective_until_us <= ? AND NOT EXISTS (SELECT 1 FROM risk_action e WHERE e.action_id = "
        "r.action_id AND e.state = 'EXPIRED') ORDER BY effective_until_us, action_id",
        rt.clock().now_us());
    if (!due.ok()) continue;
    for (const SqlRow& d : due.rows()) {
      Action a{d[0].as_text(), d[1].as_text(), d[2].as_text(), "", d[3].as_int(), d[4].as_int()};
      co_await expire(sql, redis, o, a, std::string(rt.process_name()));
    }
    co_await absorb_global(sql, redis, o);  // retried here too: a crash after a global commit
    if (o.fixes.has(RankFix::kDenylistCatchUp)) co_await catch_up_denylists(sql, redis, o);
  }
}

std::string risk_verdict(const std::string& topic, int suspicious_mod) {
  const int64_t i = std::strtoll(topic.c_str() + std::min<size_t>(2, topic.size()), nullptr, 10);
  return suspicious_mod > 0 && i > 0 && i % suspicious_mod == 0 ? "suspicious" : "pass";
}

Task<void> run_risk_service(Runtime& rt, Rpc& rpc, int suspicious_mod, int64_t delay_us) {
  rpc.serve("risk-svc", [&rt, suspicious_mod, delay_us](MessagePtr m) -> Task<MessagePtr> {
    const RiskCheckRequest* r = message_as<RiskCheckRequest>(m);
    if (r == nullptr) co_return make_message(RiskCheckReply{"error", {}});
    // Copies first: the closure's captures are not used after the first suspension.
    const RiskCheckRequest req = *r;
    const int mod = suspicious_mod;
    const int64_t delay = delay_us;
    Runtime& runtime = rt;
    if (delay > 0)
      co_await runtime.clock().sleep_us(static_cast<int64_t>(runtime.random_u64() % static_cast<uint64_t>(delay + 1)));
    co_return make_message(RiskCheckReply{risk_verdict(req.topic_id, mod), req});
  });
  co_return;
}

Task<void> run_viewer(Runtime& rt, Redis& redis, Sql* db, Recorder& history, std::vector<std::string> scopes,
                      int64_t interval_us, int64_t stop_at_us) {
  while (rt.clock().now_us() < stop_at_us) {
    co_await rt.clock().sleep_us(jitter(rt, interval_us));
    const std::string scope = scopes[rt.random_u64() % scopes.size()];
    const uint64_t op = history.invoke(rt.process_name(), "view", "scope=" + scope);
    const std::string shown = co_await origin_view(redis, scope, db);
    history.complete(op, shown.empty() ? Outcome::kInfo : Outcome::kOk, shown.empty() ? "error" : shown);
  }
}

}  // namespace fl::ranking
