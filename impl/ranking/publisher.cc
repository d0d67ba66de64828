#include "impl/ranking/publisher.h"

#include "impl/ranking/candidate_cache.h"
#include "impl/ranking/risk.h"

#include <cstdlib>
#include <utility>

namespace fl::ranking {
namespace {

int64_t epoch_of(const std::string& pointer) { return std::strtoll(pointer.c_str(), nullptr, 10); }

// 004:L266: "Redis 中的 current pointer 只是数据库发布指针的缓存，写入时也按 publication epoch 拒绝旧值".
// KEYS pointer token; ARGV epoch snapshot_id mode nonce. An existing pointer is advanced only to a
// higher epoch; a missing one is created in mode "create", or in mode "restore" only while the
// token still holds the nonce (a Redis loss since the restorer read the DB pointer removed it).
const char* kPointerSetLua = R"(local cur = redis.call('get', KEYS[1])
if cur then
  if tonumber(string.match(cur, '^(%d+)')) < tonumber(ARGV[1]) then
    redis.call('set', KEYS[1], ARGV[1] .. '|' .. ARGV[2])
    return 1
  end
  return 0
end
if ARGV[3] == 'create' or (ARGV[3] == 'restore' and redis.call('get', KEYS[2]) == ARGV[4]) then
  redis.call('set', KEYS[1], ARGV[1] .. '|' .. ARGV[2])
  return 1
end
return 0
)";

struct Pointer {
  std::string snapshot_id;
  int64_t version = 0, epoch = 0, watermark = -1;
};

Task<std::optional<Pointer>> read_pointer(Sql& sql, const std::string& scope) {
  SqlResult r = co_await sql.exec(
      "SELECT snapshot_id, version, publication_epoch, input_watermark FROM "
      "ranking_publish_pointer WHERE scope_id = ?",
      scope);
  if (!r.ok() || r.rows().empty()) co_return std::nullopt;
  const SqlRow& row = r.rows()[0];
  co_return Pointer{row[0].as_text(), row[1].as_int(), row[2].as_int(), row[3].as_int()};
}

// The items of a snapshot as cached: "rank_no:topic_id:score" joined by ';'.
Task<std::optional<std::string>> snapshot_items(Sql& sql, const std::string& snapshot_id) {
  SqlResult r = co_await sql.exec(
      "SELECT i.rank_no, i.topic_id, i.score FROM ranking_snapshot_item i JOIN "
      "ranking_snapshot s ON s.snapshot_id = i.snapshot_id WHERE i.snapshot_id = ? AND "
      "s.status = 'PUBLISHED' ORDER BY i.rank_no",
      snapshot_id);
  if (!r.ok()) co_return std::nullopt;
  std::string out;
  for (const SqlRow& row : r.rows()) {
    out += (out.empty() ? "" : ";") + std::to_string(row[0].as_int()) + ":" + row[1].as_text() + ":" +
           std::to_string(row[2].as_int());
  }
  co_return std::move(out);
}

// 004:L317: a lost Redis pointer is restored from the DB pointer only, with its publication_epoch,
// and only its PUBLISHED snapshot. Spec restores by creating the key. RK-POINTER-FROM-DB first
// takes a restore token, so a Redis loss between its DB read and its write voids the write, and
// also refreshes a pointer that is behind the DB's.
Task<void> repair_cache(Runtime& rt, Sql& sql, Redis& redis, const PublisherOptions& o, const std::string& scope) {
  RedisReply cached = co_await redis.command({"GET", pointer_key(scope)});
  if (!cached.ok_reply()) co_return;
  const bool missing = cached.kind != RedisReply::Kind::kBulk, fenced = o.fixes.has(RankFix::kPointerFromDb);
  const std::string nonce = std::string(rt.process_name()) + "." + std::to_string(rt.incarnation()) + "." +
                            std::to_string(rt.random_u64() % 1000000000);
  if (missing && fenced) {
    RedisReply token = co_await redis.command({"SET", restore_key(scope), nonce, "PX", "5000"});
    if (!token.ok_reply()) co_return;
  }
  std::optional<Pointer> p = co_await read_pointer(sql, scope);
  if (!p || p->snapshot_id.empty()) co_return;
  const bool behind = !missing && epoch_of(cached.str) < p->epoch && fenced;
  if (!missing && !behind) co_return;
  std::optional<std::string> items = co_await snapshot_items(sql, p->snapshot_id);
  if (!items) co_return;
  co_await redis.command({"SET", snapshot_key(scope, p->snapshot_id), *items});
  co_await redis.script(kPointerSetScript, {pointer_key(scope), restore_key(scope)},
                        {std::to_string(p->epoch), p->snapshot_id, fenced ? "restore" : "create", nonce});
}

struct SealedRun {
  std::string run_id;
  int64_t watermark = 0, manifest_count = 0, candidate_count = 0;
  std::string manifest_digest, candidate_digest;
  int64_t ctx_version = 0;
  std::string rule_version;
  int64_t rule_epoch = 0;
  int64_t risk_epoch = 0, global_epoch = 0;    // the risk context read before the snapshot (risk only)
  std::string mapping_version, window_config;  // pinned by the run (scope control only)
  int64_t mapping_epoch = 0;
};

// The newest SEALED run of a scope; `unpublished`: only one none of whose snapshots is PUBLISHED.
Task<std::optional<SealedRun>> newest_sealed(Sql& sql, const std::string& scope, bool unpublished = true,
                                             bool scope_control = false) {
  SqlResult r = co_await sql.exec(
      std::string("SELECT run_id, input_watermark, input_manifest_count, input_manifest_set_digest, candidate_count, "
                  "candidate_set_digest, scope_context_version, rule_version, rule_activation_epoch") +
          (scope_control ? ", mapping_version, mapping_activation_epoch, window_config_version" : "") +
          " FROM calculation_run r WHERE scope_id = ? AND status = 'SEALED'" +
          (unpublished ? " AND NOT EXISTS (SELECT 1 FROM ranking_snapshot s WHERE s.run_id = r.run_id AND s.status = "
                         "'PUBLISHED')"
                       : "") +
          " ORDER BY seq DESC LIMIT 1",
      scope);
  if (!r.ok() || r.rows().empty()) co_return std::nullopt;
  const SqlRow& row = r.rows()[0];
  SealedRun run{row[0].as_text(), row[1].as_int(), row[2].as_int(),  row[4].as_int(), row[3].as_text(),
                row[5].as_text(), row[6].as_int(), row[7].as_text(), row[8].as_int()};
  if (scope_control) {
    run.mapping_version = row[9].as_text();
    run.mapping_epoch = row[10].as_int();
    run.window_config = row[11].as_text();
  }
  co_return std::move(run);
}

// Appends columns and their values to an INSERT statement ("(...) VALUES (...)").
void insert_columns(SqlStatement& insert, const std::string& columns, std::vector<SqlValue> values) {
  insert.sql.replace(insert.sql.find(") VALUES ("), 10, columns + ") VALUES (");
  std::string marks;
  for (size_t i = 0; i < values.size(); ++i) marks += ", ?";
  insert.sql.insert(insert.sql.rfind(')'), marks);
  for (SqlValue& v : values) insert.params.push_back(std::move(v));
}

// PREPARED, then every item, then READY (004:L255: READY only says the content is complete). The
// items are the top candidates of `candidates_of` (the run itself, or the run a replay recomputes).
Task<bool> prepare_snapshot(Sql& sql, const PublisherOptions& o, const std::string& scope, const SealedRun& run,
                            const std::string& id, const std::string& candidates_of) {
  SqlStatement select = sql_statement(
      "SELECT topic_id, score, input_manifest_id FROM run_candidate WHERE run_id = ? "
      "ORDER BY score DESC, topic_id ASC LIMIT ?",
      candidates_of, int64_t{o.top_n});
  if (o.risk) {  // 004:L236: "发布器生成不包含该话题的新快照"
    select = sql_statement(
        "SELECT topic_id, score, input_manifest_id FROM run_candidate WHERE run_id = ? AND topic_id "
        "NOT IN (" +
            std::string(kBlockedTopicsSql) + ") ORDER BY score DESC, topic_id ASC LIMIT ?",
        candidates_of, scope, std::string(kGlobalScope), int64_t{o.top_n});
  }
  SqlResult top = co_await sql.execute(std::move(select));
  if (!top.ok()) co_return false;
  const int64_t shown = static_cast<int64_t>(top.rows().size());
  SqlStatement insert = sql_statement(
      "INSERT INTO ranking_snapshot (snapshot_id, scope_id, run_id, status, input_watermark, input_manifest_count, "
      "input_manifest_set_digest, candidate_count, candidate_set_digest, scope_context_version, rule_version, "
      "rule_activation_epoch) VALUES (?, ?, ?, 'PREPARED', ?, ?, ?, ?, ?, ?, ?, ?)",
      id, scope, run.run_id, run.watermark, o.counts_from_items ? shown : run.manifest_count, run.manifest_digest,
      o.counts_from_items ? shown : run.candidate_count, run.candidate_digest, run.ctx_version, run.rule_version,
      run.rule_epoch);
  if (o.risk)
    insert_columns(insert, ", risk_epoch, global_risk_epoch", {SqlValue(run.risk_epoch), SqlValue(run.global_epoch)});
  if (o.scope_control) {
    insert_columns(insert, ", mapping_version, mapping_activation_epoch, window_config_version",
                   {SqlValue(run.mapping_version), SqlValue(run.mapping_epoch), SqlValue(run.window_config)});
  }
  SqlResult prepared = co_await sql.execute(std::move(insert));
  if (!prepared.ok()) co_return false;
  std::vector<SqlStatement> items;
  int64_t rank = 0;
  for (const SqlRow& c : top.rows()) {
    items.push_back(
        sql_statement("INSERT INTO ranking_snapshot_item (snapshot_id, rank_no, topic_id, score, "
                      "input_manifest_id) VALUES (?, ?, ?, ?, ?)",
                      id, ++rank, c[0].as_text(), c[1].as_int(), c[2].as_text()));
  }
  if (!items.empty() && !(co_await sql.transaction(std::move(items))).ok()) co_return false;
  SqlResult ready = co_await sql.exec(
      "UPDATE ranking_snapshot SET status = 'READY' WHERE snapshot_id = ? AND "
      "status = 'PREPARED'",
      id);
  co_return ready.ok() && ready.changes() == 1;
}

// 004:L255-266: one transaction checks the context is still the version the run and snapshot were
// made under with the same rule_version + rule_activation_epoch, CASes the pointer on (version,
// publication_epoch) with a watermark not below the published one, and moves the snapshot READY ->
// PUBLISHED only while its run is SEALED with the snapshot's counts and digests.
// 004:L265, L325: a replay's snapshot publishes only under an APPROVED authorization that names it,
// its scope, its watermark and manifest, the current activation epochs, context version and
// pointer version, valid now; the same transaction uses it up.
SqlStatement promotion_check(Runtime& rt, const PublisherOptions& o, const std::string& scope, const SealedRun& run,
                             const std::string& id, const std::string& auth) {
  const int64_t now = rt.clock().now_us();
  SqlStatement s = sql_statement(
      "SELECT 1 FROM promotion_authorization a JOIN ranking_scope_context c ON c.scope_id = a.scope_id JOIN "
      "ranking_publish_pointer p ON p.scope_id = a.scope_id WHERE a.auth_id = ? AND a.status = 'APPROVED' AND "
      "a.scope_id = ? AND a.replay_run_id = ? AND c.version = a.expected_ctx_version AND c.rule_activation_epoch = "
      "a.rule_epoch AND p.version = a.expected_pointer_version AND ? BETWEEN a.watermark_from AND a.watermark_to AND "
      "a.manifest_digest = (SELECT input_manifest_set_digest FROM ranking_snapshot WHERE snapshot_id = ?) AND "
      "a.valid_from_us <= ? AND ? < a.valid_until_us",
      auth, scope, run.run_id, run.watermark, id, now, now);
  if (o.risk) s.sql += " AND c.risk_epoch = a.risk_epoch";
  if (o.scope_control) s.sql += " AND c.mapping_activation_epoch = a.mapping_epoch";
  return expecting(std::move(s), SqlExpect::kSomeRows);
}

// `auth` ("" for an official run): the promotion authorization a replay's snapshot publishes under.
std::vector<SqlStatement> publish_tx(const PublisherOptions& o, const std::string& scope, const SealedRun& run,
                                     const std::string& id, const Pointer& p, const std::string& auth = "") {
  std::vector<SqlStatement> tx;
  if (o.completeness_gate) {
    // 004:L151: "必需数据源不完整时，发布器按策略冻结新榜或切到明确的降级规则版本"; spec freezes.
    tx.push_back(expecting(sql_statement("SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM source_status WHERE complete = 0)"),
                           SqlExpect::kSomeRows));
  }
  SqlStatement ctx = sql_statement(
      "SELECT 1 FROM ranking_scope_context WHERE scope_id = ? AND version = ? AND "
      "rule_version = ? AND rule_activation_epoch = ?",
      scope, run.ctx_version, run.rule_version, run.rule_epoch);
  if (o.risk) {
    // The risk context (risk_epoch, global_risk_epoch) too, and the global epoch against the authority
    // row. 004:L264: "并且其中的 global epoch 等于全局权威 scope 行".
    ctx.sql +=
        " AND risk_epoch = ? AND global_risk_epoch = ? AND global_risk_epoch = (SELECT global_risk_epoch FROM "
        "ranking_scope_context WHERE scope_id = ?)";
    ctx.params.push_back(SqlValue(run.risk_epoch));
    ctx.params.push_back(SqlValue(run.global_epoch));
    ctx.params.push_back(SqlValue(std::string(kGlobalScope)));
  }
  if (o.scope_control) {
    // 004:L262: "window_config_version等于当前活动窗口配置"; 004:L263: "mapping_version +
    // mapping_activation_epoch等于当前活动映射上下文".
    ctx.sql += " AND window_config_version = ? AND mapping_version = ? AND mapping_activation_epoch = ?";
    ctx.params.push_back(SqlValue(run.window_config));
    ctx.params.push_back(SqlValue(run.mapping_version));
    ctx.params.push_back(SqlValue(run.mapping_epoch));
  }
  tx.push_back(expecting(std::move(ctx), SqlExpect::kSomeRows));
  tx.push_back(expecting(
      sql_statement("UPDATE ranking_publish_pointer SET snapshot_id = ?, version = version + 1, publication_epoch = "
                    "publication_epoch + 1, input_watermark = ? WHERE scope_id = ? AND version = ? AND "
                    "publication_epoch = ? AND input_watermark <= ?",
                    id, run.watermark, scope, p.version, p.epoch, run.watermark),
      SqlExpect::kChanged));
  // An official run must be SEALED with the snapshot's counts and digests; a promoted replay's source
  // run likewise (the replay recomputed it).
  const std::string run_of = auth.empty()
                                 ? "SELECT 1 FROM calculation_run r WHERE r.run_id = ranking_snapshot.run_id AND "
                                   "r.scope_id = ranking_snapshot.scope_id"
                                 : "SELECT 1 FROM replay_run x JOIN calculation_run r ON r.run_id = "
                                   "x.source_run_id WHERE x.run_id = ranking_snapshot.run_id AND x.scope_id = "
                                   "ranking_snapshot.scope_id AND r.scope_id = ranking_snapshot.scope_id";
  tx.push_back(expecting(
      sql_statement(
          "UPDATE ranking_snapshot SET status = 'PUBLISHED', publication_epoch = ? WHERE snapshot_id = ? AND "
          "scope_id = ? AND status = 'READY' AND EXISTS (" +
              run_of +
              " AND r.status = 'SEALED' AND "
              "r.input_manifest_count = ranking_snapshot.input_manifest_count AND r.input_manifest_set_digest = "
              "ranking_snapshot.input_manifest_set_digest AND r.candidate_count = ranking_snapshot.candidate_count "
              "AND r.candidate_set_digest = ranking_snapshot.candidate_set_digest)",
          p.epoch + 1, id, scope),
      SqlExpect::kChanged));
  if (!auth.empty()) {
    tx.push_back(expecting(sql_statement("UPDATE promotion_authorization SET status = 'USED' WHERE auth_id = ? AND "
                                         "status = 'APPROVED'",
                                         auth),
                           SqlExpect::kChanged));
  }
  return tx;
}

// The publish transaction, then (only once it committed) the Redis writes.
Task<void> publish_and_cache(Sql& sql, Redis& redis, const PublisherOptions& o, const std::string& scope,
                             const Pointer& p, const std::string& id, std::vector<SqlStatement> tx) {
  SqlResult r = co_await sql.transaction(std::move(tx));
  if (!r.ok()) {
    // 004:L255: a lost race, an expired version or a failed check ends in REJECTED.
    if (r.certainly_not_applied()) {
      co_await sql.exec("UPDATE ranking_snapshot SET status = 'REJECTED' WHERE snapshot_id = ? AND status = 'READY'",
                        id);
    }
    co_return;
  }
  std::optional<std::string> items = co_await snapshot_items(sql, id);
  if (!items) co_return;
  co_await redis.command({"SET", snapshot_key(scope, id), *items});
  // Spec: the publisher's write rejects only older epochs (004:L266), so it creates a missing
  // pointer. RK-POINTER-FROM-DB: it only advances an existing one; creating is the DB restore's.
  const std::string mode = o.fixes.has(RankFix::kPointerFromDb) ? "advance" : "create";
  co_await redis.script(kPointerSetScript, {pointer_key(scope), restore_key(scope)},
                        {std::to_string(p.epoch + 1), id, mode, ""});
}

Task<void> publish_scope(Runtime& rt, Sql& sql, Redis& redis, const PublisherOptions& o, const std::string& scope) {
  std::vector<SqlStatement> init;
  init.push_back(
      sql_statement("INSERT OR IGNORE INTO ranking_scope_context (scope_id, version, rule_version, "
                    "rule_activation_epoch) VALUES (?, 1, 'rule-v1', 1)",
                    scope));
  init.push_back(
      sql_statement("INSERT OR IGNORE INTO ranking_publish_pointer (scope_id, snapshot_id, version, "
                    "publication_epoch, input_watermark) VALUES (?, '', 0, 0, -1)",
                    scope));
  if (!(co_await sql.transaction(std::move(init))).ok()) co_return;
  co_await repair_cache(rt, sql, redis, o, scope);
  std::optional<Pointer> p = co_await read_pointer(sql, scope);
  SqlResult ctx = co_await sql.exec(o.risk ? "SELECT version, risk_epoch, global_risk_epoch FROM ranking_scope_context "
                                             "WHERE scope_id = ?"
                                           : "SELECT version FROM ranking_scope_context WHERE scope_id = ?",
                                    scope);
  std::optional<SealedRun> run = co_await newest_sealed(sql, scope, /*unpublished=*/true, o.scope_control);
  // A run made under an older context can never publish (004:L260); wait for the next run.
  if (!p || !ctx.ok() || ctx.rows().empty() || !run || run->watermark < p->watermark ||
      run->ctx_version != ctx.rows()[0][0].as_int()) {
    co_return;
  }
  if (o.risk) {
    run->risk_epoch = ctx.rows()[0][1].as_int();
    run->global_epoch = ctx.rows()[0][2].as_int();
  }
  const std::string id = run->run_id + "/" + std::string(rt.process_name()) + "." + std::to_string(rt.incarnation()) +
                         "." + std::to_string(rt.random_u64() % 1000000);
  if (!(co_await prepare_snapshot(sql, o, scope, *run, id, run->run_id))) co_return;
  co_await publish_and_cache(sql, redis, o, scope, *p, id, publish_tx(o, scope, *run, id, *p));
}

// The pinned inputs of a READY snapshot as the publish transaction checks them.
Task<std::optional<SealedRun>> snapshot_inputs(Sql& sql, const PublisherOptions& o, const std::string& id) {
  SqlResult r = co_await sql.exec(
      std::string("SELECT run_id, input_watermark, input_manifest_count, input_manifest_set_digest, candidate_count, "
                  "candidate_set_digest, scope_context_version, rule_version, rule_activation_epoch") +
          (o.risk ? ", risk_epoch, global_risk_epoch" : "") +
          (o.scope_control ? ", mapping_version, mapping_activation_epoch, window_config_version" : "") +
          " FROM ranking_snapshot WHERE snapshot_id = ? AND status = 'READY'",
      id);
  if (!r.ok() || r.rows().empty()) co_return std::nullopt;
  const SqlRow& x = r.rows()[0];
  SealedRun run{x[0].as_text(), x[1].as_int(), x[2].as_int(),  x[4].as_int(), x[3].as_text(),
                x[5].as_text(), x[6].as_int(), x[7].as_text(), x[8].as_int()};
  size_t at = 9;
  if (o.risk) {
    run.risk_epoch = x[at++].as_int();
    run.global_epoch = x[at++].as_int();
  }
  if (o.scope_control) {
    run.mapping_version = x[at++].as_text();
    run.mapping_epoch = x[at++].as_int();
    run.window_config = x[at++].as_text();
  }
  co_return run;
}

// 004:L325: publishes the scope's READY replay snapshot that holds an APPROVED authorization.
Task<void> promote_scope(Runtime& rt, Sql& sql, Redis& redis, const PublisherOptions& o, const std::string& scope) {
  SqlResult a = co_await sql.exec(
      "SELECT a.auth_id, s.snapshot_id FROM promotion_authorization a JOIN ranking_snapshot "
      "s ON s.run_id = a.replay_run_id WHERE a.scope_id = ? AND a.status = 'APPROVED' AND "
      "s.status = 'READY' ORDER BY a.auth_id DESC LIMIT 1",
      scope);
  if (!a.ok() || a.rows().empty()) co_return;
  const std::string auth = a.rows()[0][0].as_text(), id = a.rows()[0][1].as_text();
  std::optional<SealedRun> run = co_await snapshot_inputs(sql, o, id);
  std::optional<Pointer> p = co_await read_pointer(sql, scope);
  if (!run || !p) co_return;
  std::vector<SqlStatement> tx = publish_tx(o, scope, *run, id, *p, auth);
  tx.insert(tx.begin(), promotion_check(rt, o, scope, *run, id, auth));
  co_await publish_and_cache(sql, redis, o, scope, *p, id, std::move(tx));
}

// F13 (004:L494): the replay run goes to its own namespace; its snapshot then meets the same
// publish transaction, which admits only a SEALED official calculation_run (004:L265). With
// promotion the snapshot waits READY for an authorization instead (004:L325).
Task<void> replay_scope(Runtime& rt, Sql& sql, Redis& redis, const PublisherOptions& o, const std::string& scope) {
  if (o.promotion) co_await promote_scope(rt, sql, redis, o, scope);
  std::optional<SealedRun> source = co_await newest_sealed(sql, scope, /*unpublished=*/false, o.scope_control);
  std::optional<Pointer> p = co_await read_pointer(sql, scope);
  if (!source || !p) co_return;
  SealedRun replay = *source;
  if (o.promotion && o.risk) {  // made under the risk context as it is now, like a publisher's snapshot
    SqlResult ctx =
        co_await sql.exec("SELECT risk_epoch, global_risk_epoch FROM ranking_scope_context WHERE scope_id = ?", scope);
    if (!ctx.ok() || ctx.rows().empty()) co_return;
    replay.risk_epoch = ctx.rows()[0][0].as_int();
    replay.global_epoch = ctx.rows()[0][1].as_int();
  }
  replay.run_id =
      source->run_id + "/replay." + std::to_string(rt.incarnation()) + "." + std::to_string(rt.random_u64() % 1000000);
  SqlResult made = co_await sql.exec(
      "INSERT INTO replay_run (run_id, scope_id, source_run_id, status) VALUES (?, ?, ?, "
      "'SEALED')",
      replay.run_id, scope, source->run_id);
  if (!made.ok()) co_return;
  const std::string id = replay.run_id + "/snapshot";
  if (!(co_await prepare_snapshot(sql, o, scope, replay, id, source->run_id))) co_return;
  if (!o.promotion) co_await publish_and_cache(sql, redis, o, scope, *p, id, publish_tx(o, scope, replay, id, *p));
}

// 004:L325: one authorization for the scope's newest READY replay snapshot none names yet.
Task<void> approve_scope(Runtime& rt, Sql& sql, const PublisherOptions& o, const std::string& scope) {
  SqlResult s = co_await sql.exec(
      "SELECT s.run_id, s.input_watermark, s.input_manifest_set_digest FROM ranking_snapshot "
      "s JOIN replay_run x ON x.run_id = s.run_id WHERE s.scope_id = ? AND s.status = 'READY' "
      "AND NOT EXISTS (SELECT 1 FROM promotion_authorization a WHERE a.replay_run_id = "
      "s.run_id) ORDER BY s.snapshot_id DESC LIMIT 1",
      scope);
  if (!s.ok() || s.rows().empty()) co_return;
  const SqlRow& x = s.rows()[0];
  const int64_t now = rt.clock().now_us();
  const std::string auth = "auth-" + std::string(rt.process_name()) + "." + std::to_string(rt.incarnation()) + "." +
                           std::to_string(rt.random_u64() % 1000000000);
  co_await sql.exec(
      std::string("INSERT INTO promotion_authorization (auth_id, approver, scope_id, replay_run_id, "
                  "watermark_from, watermark_to, manifest_digest, rule_epoch, mapping_epoch, risk_epoch, "
                  "valid_from_us, valid_until_us, expected_ctx_version, expected_pointer_version, status) "
                  "SELECT ?, ?, c.scope_id, ?, ?, ?, ?, c.rule_activation_epoch, ") +
          (o.scope_control ? "c.mapping_activation_epoch" : "1") + ", " + (o.risk ? "c.risk_epoch" : "0") +
          ", ?, ?, c.version, p.version, 'APPROVED' FROM ranking_scope_context c JOIN "
          "ranking_publish_pointer p ON p.scope_id = c.scope_id WHERE c.scope_id = ?",
      auth, std::string(rt.process_name()), x[0].as_text(), x[1].as_int(), x[1].as_int(), x[2].as_text(), now,
      now + o.promotion_validity_us, scope);
}

}  // namespace

// 004:L281-283: the scope-isolated cache keys.
std::string pointer_key(const std::string& scope) { return "ranking:pointer:" + scope; }
std::string snapshot_key(const std::string& scope, const std::string& snapshot_id) {
  return "ranking:snapshot:" + scope + ":" + snapshot_id;
}
std::string restore_key(const std::string& scope) { return "ranking:restore:" + scope; }

std::shared_ptr<const ScriptRegistry> ranking_scripts(bool cache, bool risk) {
  auto registry = std::make_shared<ScriptRegistry>();
  registry->add(RedisScript{kPointerSetScript, kPointerSetLua});
  if (cache) add_cache_scripts(*registry);
  if (risk) add_risk_scripts(*registry);
  return registry;
}

Task<void> run_replay(Runtime& rt, Sql& sql, Redis& redis, PublisherOptions o, int64_t stop_at_us) {
  while (rt.clock().now_us() < stop_at_us) {
    co_await rt.clock().sleep_us(o.interval_us / 2 +
                                 static_cast<int64_t>(rt.random_u64() % static_cast<uint64_t>(o.interval_us)));
    co_await replay_scope(rt, sql, redis, o, o.scopes[rt.random_u64() % o.scopes.size()]);
  }
}

Task<void> run_approver(Runtime& rt, Sql& sql, PublisherOptions o, int64_t stop_at_us) {
  while (rt.clock().now_us() < stop_at_us) {
    co_await rt.clock().sleep_us(o.interval_us / 2 +
                                 static_cast<int64_t>(rt.random_u64() % static_cast<uint64_t>(o.interval_us)));
    for (const std::string& scope : o.scopes) co_await approve_scope(rt, sql, o, scope);
  }
}

Task<void> run_publisher(Runtime& rt, Sql& sql, Redis& redis, PublisherOptions o) {
  for (;;) {
    co_await rt.clock().sleep_us(o.interval_us / 2 +
                                 static_cast<int64_t>(rt.random_u64() % static_cast<uint64_t>(o.interval_us)));
    for (const std::string& scope : o.scopes) co_await publish_scope(rt, sql, redis, o, scope);
  }
}

}  // namespace fl::ranking
