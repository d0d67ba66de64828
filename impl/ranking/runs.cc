#include "impl/ranking/runs.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <utility>

#include "impl/ranking/contract.h"
#include "impl/ranking/control.h"
#include "impl/ranking/risk.h"

namespace fl::ranking {

std::string sorted_digest(std::vector<std::string> lines) {
  std::sort(lines.begin(), lines.end());
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return fnv_hex(all);
}

std::string cut_ref(int32_t partition, int64_t next_offset, int64_t generation) {
  return "k" + std::to_string(partition) + "@" + std::to_string(next_offset) + "/g" + std::to_string(generation);
}

bool parse_cut_ref(const std::string& ref, int32_t* partition, int64_t* next_offset, int64_t* generation) {
  long long p = 0, n = 0, g = 0;
  if (std::sscanf(ref.c_str(), "k%lld@%lld/g%lld", &p, &n, &g) != 3) return false;
  *partition = static_cast<int32_t>(p);
  *next_offset = n;
  *generation = g;
  return true;
}

std::string TopkEntry::encode() const { return topic_id + "\t" + std::to_string(score) + "\t" + items; }

bool TopkEntry::decode(const std::string& line, TopkEntry* out) {
  const size_t a = line.find('\t'), b = a == std::string::npos ? a : line.find('\t', a + 1);
  if (b == std::string::npos) return false;
  out->topic_id = line.substr(0, a);
  out->score = std::stoll(line.substr(a + 1, b - a - 1));
  out->items = line.substr(b + 1);
  return true;
}

std::string window_type_clause(size_t windows) {
  if (windows <= 1) return "h.window_type = ?";
  std::string in = "h.window_type IN (?";
  for (size_t i = 1; i < windows; ++i) in += ",?";
  return in + ")";
}

namespace {

// ---- Top K workers (004:L247-248).

// The partition's local Top K inside its fixed cut: per aggregate key of the scope's score windows,
// the newest version of the cut's generation whose own cut lies inside it; score rule v1 sums the
// risk-adjusted values of a topic's keys (a simple rule, 004:L214-220 fixes only the manifest).
Task<std::optional<std::string>> local_topk(Sql& sql, const std::string& window_type, const RunOptions& o,
                                            const std::string& run, const std::string& scope, const std::string& ref) {
  int32_t p = 0;
  int64_t next = 0, gen = 0;
  if (!parse_cut_ref(ref, &p, &next, &gen)) co_return std::nullopt;
  // A rule over several windows ("short,medium,long": C21's multi-window inputs) reads each of them
  // inside the same fixed cut; one window keeps the statement of score rule v1.
  const std::vector<std::string> windows = split(window_type, ',');
  std::vector<SqlValue> params = {p, next, gen, gen, scope};
  for (const std::string& w : windows) params.emplace_back(w);
  std::string merged_away;
  if (o.merges) {
    // 004:L89: "只有新快照使用新映射，且同一主话题只能出现一次".
    merged_away =
        " AND h.topic_id NOT IN (SELECT m.source_topic FROM merge_scope_cutover x JOIN merge_run m ON "
        "m.merge_run_id = x.merge_run_id JOIN calculation_run r ON r.run_id = ? WHERE x.scope_id = h.scope_id AND "
        "x.state = 'ACTIVE' AND x.activation_epoch <= r.mapping_activation_epoch)";
    params.emplace_back(run);
  }
  SqlResult r = co_await sql.execute(
      std::string("SELECT v.aggregate_key, v.aggregation_generation, v.aggregate_version, v.risk_adjusted_value, "
                  "v.value_digest, v.source_offset_cut_ref, h.topic_id FROM topic_window_metric_version v JOIN "
                  "source_offset_cut c ON c.cut_id = v.source_offset_cut_ref JOIN topic_window_metric h ON "
                  "h.aggregate_key = v.aggregate_key WHERE c.keyed_partition = ? AND c.next_offset <= ? AND "
                  "c.generation = ? AND v.aggregation_generation = ? AND h.scope_id = ? AND ") +
          window_type_clause(windows.size()) + merged_away,
      std::move(params));
  if (!r.ok()) co_return std::nullopt;
  std::map<std::string, const SqlRow*> newest;  // aggregate_key -> row
  for (const SqlRow& row : r.rows()) {
    const SqlRow*& cur = newest[row[0].as_text()];
    if (cur == nullptr || (*cur)[2].as_int() < row[2].as_int()) cur = &row;
  }
  std::map<std::string, TopkEntry> topics;
  for (const auto& [ak, row] : newest) {
    TopkEntry& e = topics[(*row)[6].as_text()];
    e.topic_id = (*row)[6].as_text();
    e.score += (*row)[3].as_int();
    if (!e.items.empty()) e.items += ";";
    e.items += ak + "," + std::to_string((*row)[1].as_int()) + "," + std::to_string((*row)[2].as_int()) + "," +
               (*row)[4].as_text() + "," + (*row)[5].as_text();
  }
  std::vector<TopkEntry> all;
  for (auto& [t, e] : topics) all.push_back(std::move(e));
  // 004:L200: a stable order ending with topic_id.
  std::sort(all.begin(), all.end(), [](const TopkEntry& a, const TopkEntry& b) {
    return a.score != b.score ? a.score > b.score : a.topic_id < b.topic_id;
  });
  if (all.size() > static_cast<size_t>(o.top_k)) all.resize(static_cast<size_t>(o.top_k));
  std::string content;
  for (const TopkEntry& e : all) content += e.encode() + "\n";
  co_return std::move(content);
}

// 004:L247-248: "把不可变的topk_object_ref + topk_item_count + topk_digest一次性提交后，才条件推进为COMPLETED";
// a resubmission succeeds only when identical.
// `window_type`: the one the run's window configuration scores (o.window_type without scope control).
Task<void> submit_partition(Sql& sql, const RunOptions& o, const std::string& run, const std::string& scope, int32_t p,
                            const std::string& ref, const std::string& window_type) {
  std::optional<std::string> content = co_await local_topk(sql, window_type, o, run, scope, ref);
  if (!content) co_return;
  const std::string digest = fnv_hex(*content);
  const int64_t count = static_cast<int64_t>(std::count(content->begin(), content->end(), '\n'));
  const std::string object = "topk:" + run + ":" + std::to_string(p) + ":" + digest;
  std::vector<SqlStatement> tx;
  tx.push_back(
      sql_statement("INSERT OR IGNORE INTO partition_topk_object (ref, content) VALUES (?, ?)", object, *content));
  tx.push_back(expecting(sql_statement("UPDATE run_partition_cut SET status = 'COMPLETED', topk_object_ref = ?, "
                                       "topk_item_count = ?, topk_digest = ? WHERE run_id = ? AND "
                                       "candidate_partition_id = ? AND status = 'PENDING'",
                                       object, count, digest, run, p),
                         SqlExpect::kChanged));
  co_await sql.transaction(std::move(tx));  // lost CAS: the row is COMPLETED already (identical or not)
}

// ---- Coordinator (004:L246-252).

struct RunRow {
  std::string run_id, scope, status, vector;
  int64_t expected = 0;
};

// 004:L246-247: the frozen source-offset vector (the aggregation checkpoints' cuts now) and one
// PENDING cut row per expected partition, with the expected-set digest over (partition, cut).
Task<void> create_run(Runtime& rt, Sql& sql, const RunOptions& o, const std::string& scope) {
  SqlResult ctx = co_await sql.exec(
      "INSERT OR IGNORE INTO ranking_scope_context (scope_id, version, rule_version, "
      "rule_activation_epoch) VALUES (?, 1, 'rule-v1', 1)",
      scope);
  if (!ctx.ok()) co_return;
  SqlResult cps = co_await sql.exec("SELECT keyed_partition, next_offset, generation FROM agg_checkpoint");
  SqlResult seq = co_await sql.exec("SELECT COALESCE(MAX(seq), 0) + 1 FROM calculation_run WHERE scope_id = ?", scope);
  if (!cps.ok() || !seq.ok()) co_return;
  std::vector<std::string> refs(static_cast<size_t>(o.candidate_partitions));
  for (int32_t p = 0; p < o.candidate_partitions; ++p) refs[static_cast<size_t>(p)] = cut_ref(p, 0, 0);
  int64_t watermark = 0;  // the cut's total offset: runs of one scope order by it
  for (const SqlRow& r : cps.rows()) {
    const int32_t p = static_cast<int32_t>(r[0].as_int());
    if (p < 0 || p >= o.candidate_partitions) continue;
    refs[static_cast<size_t>(p)] = cut_ref(p, r[1].as_int(), r[2].as_int());
    watermark += r[1].as_int();
  }
  std::string vector;
  std::vector<std::string> expected;
  for (int32_t p = 0; p < o.candidate_partitions; ++p) {
    vector += (p ? "," : "") + refs[static_cast<size_t>(p)];
    expected.push_back(std::to_string(p) + "|" + refs[static_cast<size_t>(p)]);
  }
  // A new run only for a new cut or a new scope context: the same frozen inputs under the same
  // context would give the same run (004:L230).
  SqlResult last = co_await sql.exec(
      "SELECT r.source_offset_vector, r.scope_context_version = c.version FROM calculation_run r JOIN "
      "ranking_scope_context c ON c.scope_id = r.scope_id WHERE r.scope_id = ? ORDER BY r.seq DESC LIMIT 1",
      scope);
  if (!last.ok() ||
      (!last.rows().empty() && last.rows()[0][0].as_text() == vector && last.rows()[0][1].as_int() == 1)) {
    co_return;
  }
  const int64_t n = seq.rows()[0][0].as_int();
  const std::string run = scope + "#r" + std::to_string(n);
  std::vector<SqlStatement> tx;
  // The run is created under the scope context as it is at commit (004:L101, L222-229).
  tx.push_back(expecting(
      sql_statement(
          "INSERT INTO calculation_run (run_id, scope_id, status, seq, source_offset_vector, input_watermark, "
          "expected_partition_count, expected_partition_set_digest, scope_context_version, rule_version, "
          "rule_activation_epoch) SELECT ?, ?, 'COLLECTING', ?, ?, ?, ?, ?, version, rule_version, "
          "rule_activation_epoch FROM ranking_scope_context WHERE scope_id = ?",
          run, scope, n, vector, watermark, int64_t{o.candidate_partitions}, sorted_digest(expected), scope),
      SqlExpect::kChanged));
  if (o.scope_control) {
    // 004:L220: "清单同时保存 ... 窗口配置版本"; the run is pinned to the mapping too (004:L263).
    SqlStatement& insert = tx.back();
    insert.sql.replace(insert.sql.find(") SELECT"), 8,
                       ", mapping_version, mapping_activation_epoch, "
                       "window_config_version) SELECT");
    insert.sql.replace(insert.sql.find(" FROM ranking_scope_context"), 0,
                       ", mapping_version, "
                       "mapping_activation_epoch, window_config_version");
  }
  for (int32_t p = 0; p < o.candidate_partitions; ++p) {
    tx.push_back(
        sql_statement("INSERT INTO run_partition_cut (run_id, candidate_partition_id, expected_source_cut_ref, "
                      "status) VALUES (?, ?, ?, 'PENDING')",
                      run, p, refs[static_cast<size_t>(p)]));
  }
  co_await sql.transaction(std::move(tx));
  (void)rt;
}

// 004:L249: COMPLETED rows equal the expected set, each cut as in the run's vector; the result-set
// digest; the merged Top K frozen as RUN_INPUT_MANIFEST with count and set digest; CAS to BUILDING.
Task<void> build_run(Sql& sql, const RunRow& run) {
  SqlResult cuts = co_await sql.exec(
      "SELECT c.candidate_partition_id, c.expected_source_cut_ref, c.status, c.topk_object_ref, c.topk_item_count, "
      "c.topk_digest, o.content FROM run_partition_cut c LEFT JOIN partition_topk_object o ON o.ref = "
      "c.topk_object_ref "
      "WHERE c.run_id = ? ORDER BY c.candidate_partition_id",
      run.run_id);
  if (!cuts.ok()) co_return;
  const std::vector<std::string> vector = split(run.vector, ',');
  std::vector<std::string> results;
  std::vector<TopkEntry> entries;
  for (const SqlRow& r : cuts.rows()) {
    const int64_t p = r[0].as_int();
    if (r[2].as_text() != "COMPLETED" || p < 0 || p >= static_cast<int64_t>(vector.size()) ||
        r[1].as_text() != vector[static_cast<size_t>(p)] || r[6].is_null() ||
        fnv_hex(r[6].as_text()) != r[5].as_text()) {
      co_return;  // stays COLLECTING: the previous snapshot keeps being served (004:L253)
    }
    results.push_back(std::to_string(p) + "|" + r[1].as_text() + "|" + r[3].as_text() + "|" +
                      std::to_string(r[4].as_int()) + "|" + r[5].as_text() + "|COMPLETED");
    for (const std::string& line : split(r[6].as_text(), '\n')) {
      TopkEntry e;
      if (TopkEntry::decode(line, &e)) entries.push_back(std::move(e));
    }
  }
  if (static_cast<int64_t>(results.size()) != run.expected) co_return;
  std::vector<std::string> manifest_lines;
  std::vector<SqlStatement> rows;
  for (const TopkEntry& e : entries) {
    const std::string id = run.run_id + "/" + e.topic_id, digest = fnv_hex(e.items);
    manifest_lines.push_back(e.topic_id + "|" + id + "|" + digest);  // 004:L100
    rows.push_back(
        sql_statement("INSERT INTO run_input_manifest (run_id, topic_id, input_manifest_id, manifest_digest, "
                      "items, score, disposition) VALUES (?, ?, ?, ?, ?, ?, 'PENDING')",
                      run.run_id, e.topic_id, id, digest, e.items, e.score));
  }
  std::vector<SqlStatement> tx;
  tx.push_back(
      expecting(sql_statement("UPDATE calculation_run SET status = 'BUILDING', partition_result_set_digest = ?, "
                              "input_manifest_count = ?, input_manifest_set_digest = ? WHERE run_id = ? AND "
                              "status = 'COLLECTING'",
                              sorted_digest(results), static_cast<int64_t>(manifest_lines.size()),
                              sorted_digest(manifest_lines), run.run_id),
                SqlExpect::kChanged));
  for (SqlStatement& s : rows) tx.push_back(std::move(s));
  co_await sql.transaction(std::move(tx));
}

// The run's entry with the risk service (004:L231): the request carries the context as it is now,
// which must still be the run's; the verdict commits only while all of it is the scope's context
// (the CAS), with the candidate recording it (004:L210). A context that moved before the request or
// under it rejects the entry ('risk-context-changed': the run can never publish, the next run
// recomputes); no answer in time applies the versioned degrade policy (004:L313: the topic is held
// back, 'risk-unavailable:risk-degrade-v1'); a suspicious verdict rejects it ('risk-suspicious').
Task<bool> dispose_with_risk(Sql& sql, Rpc& rpc, const RunOptions& o, const RunRow& run, const std::string& topic,
                             const std::string& manifest_id, int64_t score) {
  SqlResult ctx = co_await sql.exec(
      "SELECT c.version, c.rule_activation_epoch, c.risk_epoch, c.global_risk_epoch, "
      "r.scope_context_version FROM ranking_scope_context c JOIN calculation_run r ON "
      "r.scope_id = c.scope_id WHERE r.run_id = ?",
      run.run_id);
  if (!ctx.ok() || ctx.rows().empty()) co_return false;
  const SqlRow& c = ctx.rows()[0];
  const RiskCheckRequest req{run.scope,     c[0].as_int(), manifest_id, c[1].as_int(), 1,
                             c[2].as_int(), c[3].as_int(), run.run_id,  topic};
  std::string reason;
  if (req.scope_context_version != c[4].as_int()) {
    reason = "risk-context-changed";
  } else {
    RpcResult r = co_await rpc.call("risk-svc", make_message(req), o.risk_timeout_us);
    const RiskCheckReply* reply = r.ok() ? message_as<RiskCheckReply>(r.reply) : nullptr;
    reason = reply == nullptr ? "risk-unavailable:risk-degrade-v1" : reply->verdict == "pass" ? "" : "risk-suspicious";
  }
  std::vector<SqlStatement> tx;
  tx.push_back(
      expecting(sql_statement("SELECT 1 FROM calculation_run WHERE run_id = ? AND status = 'BUILDING'", run.run_id),
                SqlExpect::kSomeRows));
  if (reason.empty()) {
    tx.push_back(expecting(sql_statement("SELECT 1 FROM ranking_scope_context WHERE scope_id = ? AND version = ? AND "
                                         "rule_activation_epoch = ? AND risk_epoch = ? AND global_risk_epoch = ?",
                                         run.scope, req.scope_context_version, req.rule_activation_epoch,
                                         req.risk_epoch, req.global_risk_epoch),
                           SqlExpect::kSomeRows));
    tx.push_back(
        sql_statement("INSERT INTO run_candidate (scope_id, run_id, topic_id, score, input_manifest_id, "
                      "candidate_revision, risk_ctx_version, risk_epoch, global_risk_epoch, risk_verdict) "
                      "VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, 'pass')",
                      run.scope, run.run_id, topic, score, manifest_id, req.scope_context_version, req.risk_epoch,
                      req.global_risk_epoch));
  }
  tx.push_back(expecting(sql_statement("UPDATE run_input_manifest SET disposition = ?, reason = ? WHERE run_id = ? AND "
                                       "topic_id = ? AND disposition = 'PENDING'",
                                       std::string(reason.empty() ? "CANDIDATE" : "REJECTED"),
                                       reason.empty() ? SqlValue() : SqlValue(reason), run.run_id, topic),
                         SqlExpect::kChanged));
  SqlResult done = co_await sql.transaction(std::move(tx));
  if (done.ok() || !done.certainly_not_applied() || !reason.empty()) co_return done.ok();
  // The CAS failed: if the context moved, the entry is rejected for it (a new run recomputes).
  std::vector<SqlStatement> stale;
  stale.push_back(
      expecting(sql_statement("SELECT 1 FROM calculation_run r JOIN ranking_scope_context c ON c.scope_id = "
                              "r.scope_id WHERE r.run_id = ? AND r.status = 'BUILDING' AND c.version != ?",
                              run.run_id, req.scope_context_version),
                SqlExpect::kSomeRows));
  stale.push_back(expecting(sql_statement("UPDATE run_input_manifest SET disposition = 'REJECTED', reason = "
                                          "'risk-context-changed' WHERE run_id = ? AND topic_id = ? AND disposition = "
                                          "'PENDING'",
                                          run.run_id, topic),
                            SqlExpect::kChanged));
  co_return (co_await sql.transaction(std::move(stale))).ok();
}

// 004:L230: "候选写入必须逐项验证 scope 上下文：scope_context_version、活动窗口配置和三个 activation epoch
// 都与当前控制记录一致" (the risk epoch moves the version): the context row still equals what the run
// was created under.
SqlStatement context_unchanged(const RunRow& run) {
  return sql_statement(
      "SELECT 1 FROM calculation_run r JOIN ranking_scope_context c ON c.scope_id = r.scope_id WHERE "
      "r.run_id = ? AND c.version = r.scope_context_version AND c.rule_activation_epoch = "
      "r.rule_activation_epoch AND c.mapping_activation_epoch = r.mapping_activation_epoch AND "
      "c.window_config_version = r.window_config_version",
      run.run_id);
}

// A candidate write refused because the context left the run's: the entry is REJECTED
// 'context-changed' (the run can never publish, 004:L260; a new run recomputes, as for a risk
// response, 004:L231: "CAS 就失败并重新计算"), still under the parent-run lock.
Task<bool> reject_context_changed(Sql& sql, const RunRow& run, const std::string& topic) {
  std::vector<SqlStatement> tx;
  tx.push_back(expecting(sql_statement("SELECT 1 FROM calculation_run r JOIN ranking_scope_context c ON c.scope_id = "
                                       "r.scope_id WHERE r.run_id = ? AND r.status = 'BUILDING' AND c.version != "
                                       "r.scope_context_version",
                                       run.run_id),
                         SqlExpect::kSomeRows));
  tx.push_back(
      expecting(sql_statement("UPDATE run_input_manifest SET disposition = 'REJECTED', reason = "
                              "'context-changed' WHERE run_id = ? AND topic_id = ? AND disposition = 'PENDING'",
                              run.run_id, topic),
                SqlExpect::kChanged));
  co_return (co_await sql.transaction(std::move(tx))).ok();
}

// 004:L249-250: each entry becomes CANDIDATE or REJECTED with a reason, in a transaction that
// confirms the parent run is still BUILDING.
Task<void> dispose_entries(Sql& sql, const RunOptions& o, const RunRow& run, Rpc* rpc) {
  SqlResult pending = co_await sql.exec(
      "SELECT topic_id, input_manifest_id, score FROM run_input_manifest WHERE "
      "run_id = ? AND disposition = 'PENDING' ORDER BY topic_id",
      run.run_id);
  if (!pending.ok()) co_return;
  for (const SqlRow& e : pending.rows()) {
    const std::string topic = e[0].as_text();
    const bool candidate = e[2].as_int() >= o.entry_score;
    if (candidate && o.risk_service && rpc != nullptr) {
      if (!(co_await dispose_with_risk(sql, *rpc, o, run, topic, e[1].as_text(), e[2].as_int()))) co_return;
      continue;
    }
    std::vector<SqlStatement> tx;
    tx.push_back(
        expecting(sql_statement("SELECT 1 FROM calculation_run WHERE run_id = ? AND status = 'BUILDING'", run.run_id),
                  SqlExpect::kSomeRows));
    if (candidate && o.scope_control) tx.push_back(expecting(context_unchanged(run), SqlExpect::kSomeRows));
    if (candidate) {
      tx.push_back(
          sql_statement("INSERT INTO run_candidate (scope_id, run_id, topic_id, score, input_manifest_id, "
                        "candidate_revision) VALUES (?, ?, ?, ?, ?, 1)",
                        run.scope, run.run_id, topic, e[2].as_int(), e[1].as_text()));
    }
    tx.push_back(
        expecting(sql_statement("UPDATE run_input_manifest SET disposition = ?, reason = ? WHERE run_id = ? AND "
                                "topic_id = ? AND disposition = 'PENDING'",
                                std::string(candidate ? "CANDIDATE" : "REJECTED"),
                                candidate ? SqlValue() : SqlValue(std::string("below-entry-score")), run.run_id, topic),
                  SqlExpect::kChanged));
    SqlResult done = co_await sql.transaction(std::move(tx));
    if (done.ok()) continue;
    if (!candidate || !o.scope_control || !done.certainly_not_applied()) co_return;
    if (!(co_await reject_context_changed(sql, run, topic))) co_return;
  }
}

// 004:L250-251: lock the run, verify the closure (no entry pending, candidate topics exactly the
// CANDIDATE entries), store candidate_count + candidate_set_digest and CAS to SEALED.
Task<void> seal_run(Sql& sql, const RunRow& run) {
  SqlResult c =
      co_await sql.exec("SELECT topic_id, score, input_manifest_id FROM run_candidate WHERE run_id = ?", run.run_id);
  if (!c.ok()) co_return;
  std::vector<std::string> lines;
  for (const SqlRow& r : c.rows()) {
    lines.push_back(r[0].as_text() + "|" + std::to_string(r[1].as_int()) + "|" + r[2].as_text());
  }
  SqlStatement seal = sql_statement(
      "UPDATE calculation_run SET status = 'SEALED', candidate_count = ?, candidate_set_digest = ? WHERE run_id = ? "
      "AND "
      "status = 'BUILDING' AND NOT EXISTS (SELECT 1 FROM run_input_manifest WHERE run_id = ? AND disposition = "
      "'PENDING') "
      "AND NOT EXISTS (SELECT 1 FROM run_candidate c WHERE c.run_id = ? AND NOT EXISTS (SELECT 1 FROM "
      "run_input_manifest m "
      "WHERE m.run_id = c.run_id AND m.topic_id = c.topic_id AND m.disposition = 'CANDIDATE')) AND NOT EXISTS (SELECT "
      "1 "
      "FROM run_input_manifest m WHERE m.run_id = ? AND m.disposition = 'CANDIDATE' AND NOT EXISTS (SELECT 1 FROM "
      "run_candidate c WHERE c.run_id = m.run_id AND c.topic_id = m.topic_id)) AND (SELECT COUNT(*) FROM run_candidate "
      "WHERE run_id = ?) = ?",
      static_cast<int64_t>(lines.size()), sorted_digest(lines), run.run_id, run.run_id, run.run_id, run.run_id,
      run.run_id, static_cast<int64_t>(lines.size()));
  std::vector<SqlStatement> tx;
  tx.push_back(expecting(std::move(seal), SqlExpect::kChanged));
  co_await sql.transaction(std::move(tx));
}

// C26 (004:L445): "删除一个候选并用另一个重复条目维持相同数量". Candidates are keyed by scope_id +
// calculation_run_id + topic_id (004:L101), so the duplicate of topic B can only sit under another
// scope_id, where a count by run_id still includes it. Once per run; the seal must then refuse.
Task<void> tamper_candidates(Sql& sql, const RunOptions& o, const RunRow& run) {
  SqlResult c = co_await sql.exec(
      "SELECT scope_id, topic_id, score, input_manifest_id, candidate_revision FROM "
      "run_candidate WHERE run_id = ? ORDER BY scope_id, topic_id",
      run.run_id);
  if (!c.ok() || c.rows().size() < 2) co_return;
  for (const SqlRow& r : c.rows()) {
    if (r[0].as_text() != run.scope) co_return;  // tampered already
  }
  std::string other;
  for (const std::string& s : o.scopes) {
    if (s != run.scope) other = s;
  }
  if (other.empty()) co_return;
  const SqlRow &gone = c.rows()[0], &dup = c.rows()[1];
  std::vector<SqlStatement> tx;
  tx.push_back(sql_statement("DELETE FROM run_candidate WHERE run_id = ? AND scope_id = ? AND topic_id = ?", run.run_id,
                             run.scope, gone[1].as_text()));
  tx.push_back(
      sql_statement("INSERT INTO run_candidate (scope_id, run_id, topic_id, score, input_manifest_id, "
                    "candidate_revision) VALUES (?, ?, ?, ?, ?, ?)",
                    other, run.run_id, dup[1].as_text(), dup[2].as_int(), dup[3].as_text(), dup[4].as_int()));
  co_await sql.transaction(std::move(tx));
}

// 004:L253: the run stays COLLECTING and is never changed in place; a new run under the approved
// policy whose excluded set is exactly the run's missing partitions expects only the included ones,
// with new cuts (the same frozen vector), and writes data_completeness_status = DEGRADED. Created
// only while no later run of the scope exists and the original is not itself degraded.
Task<void> create_degraded_run(Runtime& rt, Sql& sql, const RunOptions& o, const RunRow& run) {
  SqlResult missing = co_await sql.exec(
      "SELECT group_concat(candidate_partition_id, ',') FROM (SELECT candidate_partition_id FROM run_partition_cut "
      "WHERE "
      "run_id = ? AND status = 'PENDING' AND NOT EXISTS (SELECT 1 FROM calculation_run n JOIN calculation_run o ON "
      "n.scope_id = o.scope_id WHERE o.run_id = ? AND n.seq > o.seq) ORDER BY candidate_partition_id)",
      run.run_id, run.run_id);
  if (!missing.ok() || missing.rows().empty() || missing.rows()[0][0].is_null()) co_return;
  SqlResult policy = co_await sql.exec(
      "SELECT policy_version, included_partitions FROM degraded_policy WHERE scope_id = ? "
      "AND excluded_partitions = ? AND approval_status = 'APPROVED' ORDER BY "
      "policy_version LIMIT 1",
      run.scope, missing.rows()[0][0].as_text());
  if (!policy.ok() || policy.rows().empty()) co_return;  // no policy allows it: the run waits (004:L253)
  const std::string version = policy.rows()[0][0].as_text();
  const std::vector<std::string> vector = split(run.vector, ',');
  const size_t hash = run.run_id.rfind("#r");
  const int64_t seq = std::strtoll(run.run_id.c_str() + hash + 2, nullptr, 10) + 1;
  const std::string id = run.scope + "#r" + std::to_string(seq);
  std::vector<std::string> expected;
  std::vector<SqlStatement> cuts;  // new cuts for the included partitions (004:L253)
  for (const std::string& p : split(policy.rows()[0][1].as_text(), ',')) {
    const size_t i = static_cast<size_t>(std::strtoll(p.c_str(), nullptr, 10));
    if (i >= vector.size()) co_return;  // a policy for other partitions than the run's
    expected.push_back(p + "|" + vector[i]);
    cuts.push_back(
        sql_statement("INSERT INTO run_partition_cut (run_id, candidate_partition_id, expected_source_cut_ref, "
                      "status) VALUES (?, ?, ?, 'PENDING')",
                      id, static_cast<int64_t>(i), vector[i]));
  }
  const int64_t now = rt.clock().now_us();
  const char* pinned = o.scope_control ? ", mapping_version, mapping_activation_epoch, window_config_version" : "";
  const char* from_ctx =
      o.scope_control ? ", c.mapping_version, c.mapping_activation_epoch, c.window_config_version" : "";
  std::vector<SqlStatement> tx;
  tx.push_back(expecting(
      sql_statement(
          std::string("INSERT INTO calculation_run (run_id, scope_id, status, seq, source_offset_vector, "
                      "input_watermark, expected_partition_count, expected_partition_set_digest, "
                      "scope_context_version, rule_version, rule_activation_epoch, degraded_policy_version, "
                      "data_completeness_status") +
              pinned +
              ") SELECT ?, o.scope_id, 'COLLECTING', o.seq + 1, o.source_offset_vector, o.input_watermark, ?, "
              "?, c.version, c.rule_version, c.rule_activation_epoch, p.policy_version, 'DEGRADED'" +
              from_ctx +
              " FROM calculation_run o JOIN ranking_scope_context c ON c.scope_id = o.scope_id JOIN "
              "degraded_policy p ON p.scope_id = o.scope_id WHERE o.run_id = ? AND o.status = 'COLLECTING' "
              "AND o.degraded_policy_version IS NULL AND p.policy_version = ? AND p.approval_status = "
              "'APPROVED' AND p.valid_from_us <= ? AND ? < p.valid_until_us AND NOT EXISTS (SELECT 1 FROM "
              "calculation_run n WHERE n.scope_id = o.scope_id AND n.seq > o.seq)",
          id, static_cast<int64_t>(expected.size()), sorted_digest(expected), run.run_id, version, now, now),
      SqlExpect::kChanged));
  for (SqlStatement& c : cuts) tx.push_back(std::move(c));
  co_await sql.transaction(std::move(tx));
}

// One step of a scope: continue its open run, or create the next one. `collecting_since` is this
// coordinator's memory of when it first saw each run COLLECTING (lost with a crash: it waits again).
Task<void> step(Runtime& rt, Sql& sql, const RunOptions& o, const std::string& scope, Rpc* rpc,
                std::map<std::string, int64_t>& collecting_since) {
  SqlResult open = co_await sql.exec(
      "SELECT run_id, status, source_offset_vector, expected_partition_count FROM "
      "calculation_run WHERE scope_id = ? AND status IN ('COLLECTING', 'BUILDING') "
      "ORDER BY seq",
      scope);
  if (!open.ok()) co_return;
  if (open.rows().empty()) {
    co_await create_run(rt, sql, o, scope);
    co_return;
  }
  for (const SqlRow& r : open.rows()) {
    const RunRow run{r[0].as_text(), scope, r[1].as_text(), r[2].as_text(), r[3].as_int()};
    if (run.status == "COLLECTING") {
      co_await build_run(sql, run);
      if (o.degraded_after_us <= 0 || &r != &open.rows().back()) continue;  // only the scope's newest run
      const int64_t since = collecting_since.emplace(run.run_id, rt.clock().now_us()).first->second;
      if (rt.clock().now_us() - since >= o.degraded_after_us) co_await create_degraded_run(rt, sql, o, run);
    } else {
      co_await dispose_entries(sql, o, run, rpc);
      if (o.tamper_candidates) co_await tamper_candidates(sql, o, run);
      co_await seal_run(sql, run);
    }
  }
}

}  // namespace

Task<void> run_coordinator(Runtime& rt, Sql& sql, RunOptions o, Rpc* rpc) {
  std::map<std::string, int64_t> collecting_since;
  for (;;) {
    co_await rt.clock().sleep_us(o.interval_us);
    for (const std::string& scope : o.scopes) co_await step(rt, sql, o, scope, rpc, collecting_since);
  }
}

Task<void> run_topk_worker(Runtime& rt, Sql& sql, RunOptions o, int index, int workers) {
  for (;;) {
    co_await rt.clock().sleep_us(o.interval_us / 3);
    // With scope control the run's own window configuration says which windows it scores (004:L220).
    SqlResult pending = co_await sql.exec(
        std::string("SELECT c.run_id, r.scope_id, c.candidate_partition_id, c.expected_source_cut_ref") +
        (o.scope_control ? ", r.window_config_version" : "") +
        " FROM run_partition_cut c JOIN calculation_run r ON r.run_id = c.run_id WHERE c.status = 'PENDING' AND "
        "r.status = 'COLLECTING' ORDER BY r.seq, c.run_id, c.candidate_partition_id");
    if (!pending.ok()) continue;
    for (const SqlRow& r : pending.rows()) {
      const int32_t p = static_cast<int32_t>(r[2].as_int());
      if (p % workers != index) continue;
      const std::string window_type = o.scope_control ? window_type_of(r[4].as_text(), o.window_type) : o.window_type;
      co_await submit_partition(sql, o, r[0].as_text(), r[1].as_text(), p, r[3].as_text(), window_type);
    }
  }
}

}  // namespace fl::ranking
