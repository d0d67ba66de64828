#include "impl/ranking/shadow.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

namespace fl::ranking {
namespace {

// The Top N topics of (topic, score) pairs in the fixed order (score, then topic_id).
std::set<std::string> top_n(std::vector<std::pair<std::string, int64_t>> items, int n) {
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::set<std::string> out;
  for (size_t i = 0; i < items.size() && static_cast<int>(i) < n; ++i) out.insert(items[i].first);
  return out;
}

// 004:L101: "影子规则和回放任务另放独立 namespace，并携带输入清单与三类 activation epoch". The run's
// risk epoch is the context's while the context is still the run's (else no shadow run: the epochs
// the run was made under can no longer be read).
Task<std::optional<std::string>> make_shadow_run(Runtime& rt, Sql& sql, const ShadowOptions& o,
                                                 const std::string& scope) {
  SqlResult r = co_await sql.exec(
      "SELECT r.run_id FROM calculation_run r JOIN ranking_scope_context c ON c.scope_id = "
      "r.scope_id WHERE r.scope_id = ? AND r.status = 'SEALED' AND c.version = "
      "r.scope_context_version AND NOT EXISTS (SELECT 1 FROM shadow_run s WHERE s.source_run_id "
      "= r.run_id) ORDER BY r.seq DESC LIMIT 1",
      scope);
  if (!r.ok() || r.rows().empty()) co_return std::nullopt;
  const std::string source = r.rows()[0][0].as_text();
  SqlResult m = co_await sql.exec(
      "SELECT topic_id, score, input_manifest_id FROM run_input_manifest WHERE run_id = ? "
      "ORDER BY topic_id",
      source);
  if (!m.ok()) co_return std::nullopt;
  const std::string id =
      source + "/shadow." + std::to_string(rt.incarnation()) + "." + std::to_string(rt.random_u64() % 1000000);
  const int64_t threshold = o.entry_score + 1;
  std::vector<SqlStatement> tx;
  tx.push_back(expecting(
      sql_statement(
          std::string("INSERT INTO shadow_run (shadow_run_id, scope_id, source_run_id, shadow_rule_version, "
                      "shadow_entry_score, input_watermark, input_manifest_set_digest, scope_context_version, "
                      "rule_activation_epoch, mapping_activation_epoch, risk_epoch) SELECT ?, r.scope_id, "
                      "r.run_id, ?, ?, r.input_watermark, r.input_manifest_set_digest, r.scope_context_version, "
                      "r.rule_activation_epoch, ") +
              (o.scope_control ? "r.mapping_activation_epoch" : "1") + ", " + (o.risk ? "c.risk_epoch" : "0") +
              " FROM calculation_run r JOIN ranking_scope_context c ON c.scope_id = r.scope_id WHERE r.run_id "
              "= ? AND r.status = 'SEALED' AND c.version = r.scope_context_version",
          id, std::string(kShadowRule), threshold, source),
      SqlExpect::kChanged));
  for (const SqlRow& row : m.rows()) {
    if (row[1].as_int() < threshold) continue;
    tx.push_back(
        sql_statement("INSERT INTO shadow_candidate (shadow_run_id, topic_id, score, input_manifest_id) VALUES "
                      "(?, ?, ?, ?)",
                      id, row[0].as_text(), row[1].as_int(), row[2].as_text()));
  }
  SqlResult done = co_await sql.transaction(std::move(tx));
  if (!done.ok()) co_return std::nullopt;
  co_return id;
}

// 004:L302-303: "新旧规则必须固定同一 scope_id、输入水位、窗口配置、候选输入清单、映射 activation epoch 和风险
// epoch 比较". Each side's context is read from its own rows; only identical contexts are compared.
Task<void> compare(Sql& sql, const ShadowOptions& o, const std::string& shadow, bool mix) {
  SqlResult s = co_await sql.exec(
      "SELECT scope_id, source_run_id, input_watermark, input_manifest_set_digest, "
      "scope_context_version FROM shadow_run WHERE shadow_run_id = ?",
      shadow);
  if (!s.ok() || s.rows().empty()) co_return;
  const SqlRow& x = s.rows()[0];
  // The official side: the shadow's source run, or (mix) the scope's previous SEALED run.
  SqlResult off = co_await sql.exec(
      std::string("SELECT run_id, scope_id, input_watermark, input_manifest_set_digest, scope_context_version FROM "
                  "calculation_run WHERE scope_id = ? AND status = 'SEALED' AND ") +
          (mix ? "seq < (SELECT seq FROM calculation_run WHERE run_id = ?) ORDER BY seq DESC LIMIT 1" : "run_id = ?"),
      x[0].as_text(), x[1].as_text());
  if (!off.ok() || off.rows().empty()) co_return;
  const SqlRow& y = off.rows()[0];
  // scope|input watermark|manifest digest|context version, each side from its own row.
  const auto context = [](const SqlRow& r, size_t scope, size_t wm) {
    return r[scope].as_text() + "|" + std::to_string(r[wm].as_int()) + "|" + r[wm + 1].as_text() + "|" +
           std::to_string(r[wm + 2].as_int());
  };
  const std::string mine = context(x, 0, 2), theirs = context(y, 1, 2);
  int64_t overlap = -1;
  if (mine == theirs) {
    SqlResult a = co_await sql.exec("SELECT topic_id, score FROM shadow_candidate WHERE shadow_run_id = ?", shadow);
    SqlResult b = co_await sql.exec("SELECT topic_id, score FROM run_candidate WHERE run_id = ?", y[0].as_text());
    if (!a.ok() || !b.ok()) co_return;
    std::vector<std::pair<std::string, int64_t>> pa, pb;
    for (const SqlRow& r : a.rows()) pa.emplace_back(r[0].as_text(), r[1].as_int());
    for (const SqlRow& r : b.rows()) pb.emplace_back(r[0].as_text(), r[1].as_int());
    const std::set<std::string> ta = top_n(pa, o.top_n), tb = top_n(pb, o.top_n);
    overlap =
        static_cast<int64_t>(std::count_if(ta.begin(), ta.end(), [&](const std::string& t) { return tb.count(t); }));
  }
  co_await sql.exec(
      "INSERT INTO shadow_comparison (shadow_run_id, official_run_id, context_shadow, context_official, "
      "status, top_n_overlap) VALUES (?, ?, ?, ?, ?, ?)",
      shadow, y[0].as_text(), mine, theirs, std::string(overlap >= 0 ? "COMPARED" : "REFUSED"), overlap);
}

}  // namespace

Task<void> run_shadow(Runtime& rt, Sql& sql, ShadowOptions o) {
  bool mix_next = false;
  while (rt.clock().now_us() < o.stop_at_us) {
    co_await rt.clock().sleep_us(o.interval_us / 2 +
                                 static_cast<int64_t>(rt.random_u64() % static_cast<uint64_t>(o.interval_us)));
    const std::string scope = o.scopes[rt.random_u64() % o.scopes.size()];
    std::optional<std::string> shadow = co_await make_shadow_run(rt, sql, o, scope);
    if (!shadow) continue;
    co_await compare(sql, o, *shadow, o.mix && mix_next);
    mix_next = !mix_next;
  }
}

}  // namespace fl::ranking
