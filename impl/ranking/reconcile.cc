#include "impl/ranking/reconcile.h"

#include <optional>

#include "impl/ranking/publisher.h"

namespace fl::ranking {
namespace {

// 004:L392-399: the frozen comparison context of a snapshot, from its run.
Task<std::optional<std::string>> context_of(Sql& sql, const std::string& snapshot_id) {
  SqlResult r = co_await sql.exec(
      "SELECT s.scope_id, r.input_watermark, r.expected_partition_set_digest, r.partition_result_set_digest, "
      "r.input_manifest_set_digest, r.rule_version, r.rule_activation_epoch, r.run_id FROM ranking_snapshot s JOIN "
      "calculation_run r ON r.run_id = s.run_id WHERE s.snapshot_id = ?",
      snapshot_id);
  if (!r.ok() || r.rows().empty()) co_return std::nullopt;
  const SqlRow& row = r.rows()[0];
  co_return row[0].as_text() + "|" + std::to_string(row[1].as_int()) + "|" + row[2].as_text() + "|" + row[3].as_text() +
      "|" + row[4].as_text() + "|" + row[5].as_text() + "|" + std::to_string(row[6].as_int()) + "|" + row[7].as_text();
}

// Side B: what Redis serves for `scope` (its pointer's snapshot id and the cached items), or in a
// mixed round another scope's served snapshot or an older PUBLISHED snapshot of this scope.
struct Served {
  std::string scope, snapshot_id, items;
};

Task<std::optional<Served>> served(Sql& sql, Redis& redis, const std::string& scope) {
  RedisReply p = co_await redis.command({"GET", pointer_key(scope)});
  if (p.kind != RedisReply::Kind::kBulk) co_return std::nullopt;
  const std::string id = p.str.substr(p.str.find('|') + 1);
  RedisReply items = co_await redis.command({"GET", snapshot_key(scope, id)});
  if (items.kind != RedisReply::Kind::kBulk) co_return std::nullopt;
  (void)sql;
  co_return Served{scope, id, items.str};
}

Task<std::optional<Served>> older_published(Sql& sql, const std::string& scope, const std::string& current) {
  SqlResult r = co_await sql.exec("SELECT snapshot_id FROM ranking_snapshot WHERE scope_id = ? AND status = 'PUBLISHED' "
                                  "AND snapshot_id <> ? ORDER BY publication_epoch DESC LIMIT 1", scope, current);
  if (!r.ok() || r.rows().empty()) co_return std::nullopt;
  SqlResult items = co_await sql.exec("SELECT rank_no, topic_id, score FROM ranking_snapshot_item WHERE snapshot_id = ? "
                                      "ORDER BY rank_no", r.rows()[0][0].as_text());
  if (!items.ok()) co_return std::nullopt;
  std::string text;
  for (const SqlRow& i : items.rows()) {
    text += (text.empty() ? "" : ";") + std::to_string(i[0].as_int()) + ":" + i[1].as_text() + ":" +
            std::to_string(i[2].as_int());
  }
  co_return Served{scope, r.rows()[0][0].as_text(), text};
}

Task<void> reconcile_scope(Sql& sql, Redis& redis, const ReconcileOptions& o, const std::string& scope, int64_t round,
                           int64_t now_us) {
  SqlResult ptr = co_await sql.exec("SELECT snapshot_id FROM ranking_publish_pointer WHERE scope_id = ?", scope);
  if (!ptr.ok() || ptr.rows().empty() || ptr.rows()[0][0].as_text().empty()) co_return;
  const std::string a = ptr.rows()[0][0].as_text();
  std::string other = scope;
  for (const std::string& s : o.scopes) {
    if (s != scope) other = s;
  }
  std::optional<Served> b;
  if (o.mix && round % 4 == 1) b = co_await served(sql, redis, other);
  else if (o.mix && round % 4 == 3) b = co_await older_published(sql, scope, a);
  else b = co_await served(sql, redis, scope);
  if (!b) co_return;
  std::optional<std::string> ctx_a = co_await context_of(sql, a), ctx_b = co_await context_of(sql, b->snapshot_id);
  if (!ctx_a || !ctx_b) co_return;
  std::string status = "REFUSED", detail;
  // 004:L404: "不固定上述上下文时，数量差异可能只是比较了不同水位或规则，不能据此判断数据损坏".
  if (*ctx_a == *ctx_b) {
    SqlResult items = co_await sql.exec("SELECT rank_no, topic_id, score FROM ranking_snapshot_item WHERE snapshot_id = ? "
                                        "ORDER BY rank_no", a);
    if (!items.ok()) co_return;
    std::string text;
    for (const SqlRow& i : items.rows()) {
      text += (text.empty() ? "" : ";") + std::to_string(i[0].as_int()) + ":" + i[1].as_text() + ":" +
              std::to_string(i[2].as_int());
    }
    status = text == b->items ? "MATCH" : "DIFF";
    if (status == "DIFF") detail = text + " vs " + b->items;
  }
  co_await sql.exec("INSERT INTO reconciliation_report (scope_id, snapshot_a, snapshot_b, context_a, context_b, status, "
                    "detail, at_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    scope, a, b->snapshot_id, *ctx_a, *ctx_b, status, detail, now_us);
}

}  // namespace

Task<void> run_reconciler(Runtime& rt, Sql& sql, Redis& redis, ReconcileOptions o) {
  for (int64_t round = 0;; ++round) {
    co_await rt.clock().sleep_us(o.interval_us);
    for (const std::string& scope : o.scopes) co_await reconcile_scope(sql, redis, o, scope, round, rt.clock().now_us());
  }
}

}  // namespace fl::ranking
