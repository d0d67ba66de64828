#include "impl/ranking/schema.h"

#include <bit>
#include <cstdint>

#include "impl/ports/digest.h"
#include "impl/ports/assert.h"

namespace fl::ranking {

namespace {

// 004:L146-155: window states with the evidence a purge needs, the late side output, the idle
// record of each partition (idle start and end, resume offset, late count), source completeness
// and the archive evidence saved before a purge.
const std::vector<std::string>& watermark_tables() {
  static const std::vector<std::string> kTables = {
      "CREATE TABLE IF NOT EXISTS window_state (keyed_partition INTEGER NOT NULL, scope_id TEXT NOT NULL, "
      "window_type TEXT NOT NULL, window_start INTEGER NOT NULL, window_end INTEGER NOT NULL, state TEXT NOT NULL, "
      "input_watermark INTEGER NOT NULL, offset_digest TEXT NOT NULL, final_versions TEXT NOT NULL, "
      "checkpoint_ref TEXT NOT NULL, reconciliation TEXT NOT NULL, "
      "PRIMARY KEY (keyed_partition, scope_id, window_type, window_start))",
      "CREATE TABLE IF NOT EXISTS late_side_output (keyed_partition INTEGER NOT NULL, keyed_offset INTEGER NOT NULL, "
      "window_type TEXT NOT NULL, event_id TEXT NOT NULL, scope_id TEXT NOT NULL, window_start INTEGER NOT NULL, "
      "window_state TEXT NOT NULL, watermark INTEGER NOT NULL, PRIMARY KEY (keyed_partition, keyed_offset, "
      "window_type))",
      "CREATE TABLE IF NOT EXISTS partition_idle (keyed_partition INTEGER NOT NULL, source TEXT NOT NULL, "
      "source_partition INTEGER NOT NULL, idle_start_us INTEGER NOT NULL, last_event_us INTEGER NOT NULL, "
      "last_source_offset INTEGER NOT NULL, idle_end_us INTEGER NOT NULL, resume_offset INTEGER NOT NULL, "
      "rejoin_us INTEGER NOT NULL, rejoin_offset INTEGER NOT NULL, rejoin_watermark INTEGER NOT NULL, "
      "late_count INTEGER NOT NULL, PRIMARY KEY (keyed_partition, source, source_partition, idle_start_us))",
      "CREATE TABLE IF NOT EXISTS source_status (keyed_partition INTEGER NOT NULL, source TEXT NOT NULL, "
      "complete INTEGER NOT NULL, at_us INTEGER NOT NULL, PRIMARY KEY (keyed_partition, source))",
      "CREATE TABLE IF NOT EXISTS window_archive (keyed_partition INTEGER NOT NULL, window_id TEXT NOT NULL, "
      "input_watermark INTEGER NOT NULL, offset_digest TEXT NOT NULL, final_versions TEXT NOT NULL, "
      "checkpoint_ref TEXT NOT NULL, reconciliation TEXT NOT NULL, PRIMARY KEY (keyed_partition, window_id))",
  };
  return kTables;
}

// §9.2-§9.3 (004:L204-240), with risk actions only: the context row carries the scope's risk_epoch,
// risk_model_version and the absorbed global_risk_epoch (on GLOBAL|ALL|ALL|ALL the authority,
// 004:L212); a snapshot records the risk context it was made under; actions are rows never updated
// nor deleted, indexed by scope_id + topic_id + effective_from (004:L104).
void add_risk_tables(std::vector<std::string>& tables) {
  for (std::string& t : tables) {
    if (t.find("TABLE IF NOT EXISTS ranking_scope_context") != std::string::npos ||
        t.find("TABLE IF NOT EXISTS ranking_snapshot (") != std::string::npos) {
      t.insert(t.rfind(')'),
               ", risk_epoch INTEGER NOT NULL DEFAULT 0, risk_model_version TEXT NOT NULL DEFAULT "
               "'risk-m1', global_risk_epoch INTEGER NOT NULL DEFAULT 0");
    }
    // 004:L210: a candidate keeps the risk context its risk verdict was computed under.
    if (t.find("TABLE IF NOT EXISTS run_candidate (") != std::string::npos) {
      t.insert(t.find(", PRIMARY KEY"),
               ", risk_ctx_version INTEGER, risk_epoch INTEGER, global_risk_epoch INTEGER, "
               "risk_verdict TEXT");
    }
  }
  tables.push_back(
      "CREATE TABLE IF NOT EXISTS risk_action (scope_id TEXT NOT NULL, topic_id TEXT NOT NULL, "
      "risk_action_version INTEGER NOT NULL, action_id TEXT NOT NULL, state TEXT NOT NULL, "
      "effective_from_us INTEGER NOT NULL, effective_until_us INTEGER NOT NULL, risk_epoch INTEGER NOT NULL, "
      "operator TEXT NOT NULL, PRIMARY KEY (scope_id, topic_id, risk_action_version))");
  tables.push_back(
      "CREATE INDEX IF NOT EXISTS risk_action_by_from ON risk_action (scope_id, topic_id, effective_from_us)");
}

// 004:L104: the context row also holds the active window configuration and mapping (with its
// activation epoch, 004:L86); a run is created under them and a snapshot carries them, because the
// publish transaction checks both against the context (004:L262-263) and the manifest keeps the
// window configuration (004:L220).
void add_scope_control_columns(std::vector<std::string>& tables) {
  static const char* kColumns =
      ", mapping_version TEXT NOT NULL DEFAULT 'map-v1', mapping_activation_epoch INTEGER "
      "NOT NULL DEFAULT 1, window_config_version TEXT NOT NULL DEFAULT 'wc-v1'";
  for (std::string& t : tables) {
    if (t.find("TABLE IF NOT EXISTS ranking_scope_context") != std::string::npos ||
        t.find("TABLE IF NOT EXISTS ranking_snapshot (") != std::string::npos) {
      t.insert(t.rfind(')'), kColumns);
    }
    if (t.find("TABLE IF NOT EXISTS calculation_run (") != std::string::npos) t.insert(t.find(", UNIQUE"), kColumns);
  }
}

// 004:L79-89: merge runs, one cutover row per affected scope and the shadow states; without a board
// the scope context row holds only what a merge moves (its mapping and activation epoch).
void add_merge_tables(std::vector<std::string>& tables, bool context) {
  if (context) {
    tables.push_back(
        "CREATE TABLE IF NOT EXISTS ranking_scope_context (scope_id TEXT PRIMARY KEY, version INTEGER NOT NULL, "
        "rule_version TEXT NOT NULL, rule_activation_epoch INTEGER NOT NULL, mapping_version TEXT NOT NULL "
        "DEFAULT 'map-v1', mapping_activation_epoch INTEGER NOT NULL DEFAULT 1, window_config_version TEXT NOT "
        "NULL DEFAULT 'wc-v1')");
  }
  // 004:L81: "每次合并建立不可复用的 merge_run_id，记录源话题、主话题、目标 mapping_version 和受影响范围".
  tables.push_back(
      "CREATE TABLE IF NOT EXISTS merge_run (merge_run_id TEXT PRIMARY KEY, source_topic TEXT NOT NULL, "
      "main_topic TEXT NOT NULL, mapping_version TEXT NOT NULL, scopes TEXT NOT NULL, state TEXT NOT NULL)");
  // 004:L81: per scope "期望的 scope context version、新的 mapping_activation_epoch、effective_watermark、
  // 交接向量、影子状态引用和交接状态".
  tables.push_back(
      "CREATE TABLE IF NOT EXISTS merge_scope_cutover (merge_run_id TEXT NOT NULL, scope_id TEXT NOT NULL, "
      "expected_ctx_version INTEGER NOT NULL, activation_epoch INTEGER NOT NULL, effective_watermark INTEGER NOT "
      "NULL, cutover_vector TEXT NOT NULL, shadow_ref TEXT NOT NULL, shadow_delivered INTEGER NOT NULL, state "
      "TEXT NOT NULL, PRIMARY KEY (merge_run_id, scope_id))");
  // 004:L89: the shadow under its idempotency key (the handover is by event, docs/systems/ranking.md).
  tables.push_back(
      "CREATE TABLE IF NOT EXISTS merge_shadow (merge_run_id TEXT NOT NULL, scope_id TEXT NOT NULL, topic_id TEXT "
      "NOT NULL, compensation_version INTEGER NOT NULL, records TEXT NOT NULL, record_count INTEGER NOT NULL, "
      "digest TEXT NOT NULL, PRIMARY KEY (merge_run_id, scope_id, topic_id, compensation_version))");
}

// 004:L253: "依据已审批的 degraded_policy_version 创建一个新 run，把“纳入分区集合、排除分区集合、适用 scope
// 和有效期”一起固化到降级策略及摘要中 ... 并写 data_completeness_status=DEGRADED".
void add_degraded_tables(std::vector<std::string>& tables) {
  for (std::string& t : tables) {
    if (t.find("TABLE IF NOT EXISTS calculation_run (") != std::string::npos) {
      t.insert(t.find(", UNIQUE"),
               ", degraded_policy_version TEXT, data_completeness_status TEXT NOT NULL DEFAULT 'FULL'");
    }
  }
  tables.push_back(
      "CREATE TABLE IF NOT EXISTS degraded_policy (policy_version TEXT PRIMARY KEY, scope_id TEXT NOT NULL, "
      "included_partitions TEXT NOT NULL, excluded_partitions TEXT NOT NULL, valid_from_us INTEGER NOT NULL, "
      "valid_until_us INTEGER NOT NULL, approval_status TEXT NOT NULL, policy_digest TEXT NOT NULL)");
}

}  // namespace

std::string degraded_policy_digest(const std::string& scope, const std::string& included, const std::string& excluded,
                                   int64_t valid_from_us, int64_t valid_until_us) {
  return fnv_hex(scope + "|" + included + "|" + excluded + "|" + std::to_string(valid_from_us) + "|" +
                 std::to_string(valid_until_us));
}

std::vector<std::string> degraded_policy_statements(const std::vector<std::string>& scopes, int candidate_partitions) {
  FL_ASSERT(candidate_partitions >= 1 && candidate_partitions <= 16);
  std::vector<std::string> out;
  const int64_t until = INT64_MAX;
  for (const std::string& scope : scopes) {
    for (uint32_t mask = 1; mask < (1u << candidate_partitions) - 1; ++mask) {
      if (2 * std::popcount(mask) > candidate_partitions) continue;  // at least half stays included
      std::string included, excluded;
      for (int p = 0; p < candidate_partitions; ++p) {
        std::string& set = (mask >> p) & 1u ? excluded : included;
        set += (set.empty() ? "" : ",") + std::to_string(p);
      }
      out.push_back("INSERT OR IGNORE INTO degraded_policy VALUES ('dp-1:" + scope + ":x" + excluded + "', '" + scope +
                    "', '" + included + "', '" + excluded + "', 0, " + std::to_string(until) + ", 'APPROVED', '" +
                    degraded_policy_digest(scope, included, excluded, 0, until) + "')");
    }
  }
  return out;
}

std::vector<std::string> sketch_schema_statements() {
  return {
      "CREATE TABLE IF NOT EXISTS topic_window_metric_sketch (aggregate_key TEXT NOT NULL, "
      "aggregation_generation INTEGER NOT NULL, aggregate_version INTEGER NOT NULL, raw_count INTEGER NOT NULL, "
      "sketch TEXT NOT NULL, distinct_estimate INTEGER NOT NULL, merged_shards TEXT NOT NULL, "
      "PRIMARY KEY (aggregate_key, aggregation_generation, aggregate_version))",
      "CREATE TABLE IF NOT EXISTS topic_window_metric_shard (shard_key TEXT NOT NULL, aggregate_key TEXT NOT NULL, "
      "salt INTEGER NOT NULL, aggregation_generation INTEGER NOT NULL, shard_version INTEGER NOT NULL, "
      "topic_id TEXT NOT NULL, scope_id TEXT NOT NULL, window_type TEXT NOT NULL, window_start INTEGER NOT NULL, "
      "metric_type TEXT NOT NULL, raw_count INTEGER NOT NULL, sketch TEXT NOT NULL, distinct_estimate INTEGER NOT "
      "NULL, "
      "PRIMARY KEY (shard_key, aggregation_generation, shard_version))",
  };
}

std::vector<std::string> schema_statements(const SchemaOptions& o) {
  std::vector<std::string> part1 = {
      // 004:L119: the business fact and its outbox row, one transaction.
      "CREATE TABLE IF NOT EXISTS business_fact (event_id TEXT PRIMARY KEY, producer TEXT NOT NULL, "
      "created_at INTEGER NOT NULL)",
      "CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, "
      "payload TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL)",
      // 004:L203: contract rejects keep their reason and the payload.
      "CREATE TABLE IF NOT EXISTS ingest_reject (id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT, "
      "reason TEXT NOT NULL, payload TEXT NOT NULL, at INTEGER NOT NULL)",
      // 004:L78: low-confidence and unmapped terms wait in a candidate-term queue.
      "CREATE TABLE IF NOT EXISTS candidate_term (source_partition INTEGER NOT NULL, source_offset INTEGER NOT NULL, "
      "term TEXT NOT NULL, reason TEXT NOT NULL, PRIMARY KEY (source_partition, source_offset))",
      // 004:L92: an immutable cut of the offsets a version has read.
      "CREATE TABLE IF NOT EXISTS source_offset_cut (cut_id TEXT PRIMARY KEY, keyed_partition INTEGER NOT NULL, "
      "next_offset INTEGER NOT NULL, generation INTEGER NOT NULL)",
      // 004:L98: the head, unique by the five-field key, holding the generation and version pointer.
      "CREATE TABLE IF NOT EXISTS topic_window_metric (aggregate_key TEXT PRIMARY KEY, topic_id TEXT NOT NULL, "
      "scope_id TEXT NOT NULL, window_type TEXT NOT NULL, window_start INTEGER NOT NULL, metric_type TEXT NOT NULL, "
      "active_generation INTEGER NOT NULL, current_aggregate_version INTEGER NOT NULL, "
      "UNIQUE (topic_id, scope_id, window_type, window_start, metric_type))",
      // 004:L98, L319: immutable versions, unique by (aggregate_key, generation, version).
      "CREATE TABLE IF NOT EXISTS topic_window_metric_version (aggregate_key TEXT NOT NULL, "
      "aggregation_generation INTEGER NOT NULL, aggregate_version INTEGER NOT NULL, raw_count INTEGER NOT NULL, "
      "effective_value INTEGER NOT NULL, suspicious_count INTEGER NOT NULL, risk_adjusted_value INTEGER NOT NULL, "
      "input_watermark INTEGER NOT NULL, source_offset_cut_ref TEXT NOT NULL, value_digest TEXT NOT NULL, "
      "PRIMARY KEY (aggregate_key, aggregation_generation, aggregate_version))",
      // 004:L319: window state has checkpoints with source offsets.
      "CREATE TABLE IF NOT EXISTS agg_checkpoint (keyed_partition INTEGER PRIMARY KEY, generation INTEGER NOT NULL, "
      "next_offset INTEGER NOT NULL, state TEXT NOT NULL, digest TEXT NOT NULL)",
      // The previous checkpoints, so a corrupted one falls back to the last consistent (004:L320).
      "CREATE TABLE IF NOT EXISTS agg_checkpoint_history (keyed_partition INTEGER NOT NULL, next_offset INTEGER NOT "
      "NULL, "
      "generation INTEGER NOT NULL, state TEXT NOT NULL, digest TEXT NOT NULL, "
      "PRIMARY KEY (keyed_partition, next_offset, generation))",
  };
  if (o.watermarks) part1.insert(part1.end(), watermark_tables().begin(), watermark_tables().end());
  if (o.incremental_checkpoints) {
    // The whole state the deltas start from (agg_checkpoint.state stays empty: the row is small).
    part1.push_back(
        "CREATE TABLE IF NOT EXISTS agg_checkpoint_base (keyed_partition INTEGER PRIMARY KEY, "
        "state TEXT NOT NULL)");
    // What each flush changed since the row's base, in order (seq from 1 after each base), with
    // the row's digest after it (the chain a load and a recovery verify delta by delta).
    part1.push_back(
        "CREATE TABLE IF NOT EXISTS agg_checkpoint_delta (keyed_partition INTEGER NOT NULL, "
        "seq INTEGER NOT NULL, next_offset INTEGER NOT NULL, delta TEXT NOT NULL, digest TEXT NOT NULL, "
        "PRIMARY KEY (keyed_partition, seq))");
  }
  if (o.merges) add_merge_tables(part1, !o.board);
  if (!o.board) return part1;
  const std::vector<std::string> part2 = {
      // Part 2 (004:L99-104, L245-255): calculation runs with their frozen source-offset vector and
      // expected partitions, the partitions' immutable local Top K objects, the frozen input
      // manifest, candidates, snapshots, the scope control context and the publish pointer.
      "CREATE TABLE IF NOT EXISTS calculation_run (run_id TEXT PRIMARY KEY, scope_id TEXT NOT NULL, status TEXT NOT "
      "NULL, "
      "seq INTEGER NOT NULL, source_offset_vector TEXT NOT NULL, input_watermark INTEGER NOT NULL, "
      "expected_partition_count INTEGER NOT NULL, expected_partition_set_digest TEXT NOT NULL, "
      "partition_result_set_digest TEXT, input_manifest_count INTEGER, input_manifest_set_digest TEXT, "
      "candidate_count INTEGER, candidate_set_digest TEXT, scope_context_version INTEGER NOT NULL, "
      "rule_version TEXT NOT NULL, rule_activation_epoch INTEGER NOT NULL, UNIQUE (scope_id, seq))",
      // 004:L99: one PENDING row per expected candidate partition at run creation; the cut never changes.
      "CREATE TABLE IF NOT EXISTS run_partition_cut (run_id TEXT NOT NULL, candidate_partition_id INTEGER NOT NULL, "
      "expected_source_cut_ref TEXT NOT NULL, status TEXT NOT NULL, topk_object_ref TEXT, topk_item_count INTEGER, "
      "topk_digest TEXT, PRIMARY KEY (run_id, candidate_partition_id))",
      "CREATE TABLE IF NOT EXISTS partition_topk_object (ref TEXT PRIMARY KEY, content TEXT NOT NULL)",
      // 004:L100: each entry ends CANDIDATE or REJECTED with a reason.
      "CREATE TABLE IF NOT EXISTS run_input_manifest (run_id TEXT NOT NULL, topic_id TEXT NOT NULL, "
      "input_manifest_id TEXT NOT NULL, manifest_digest TEXT NOT NULL, items TEXT NOT NULL, score INTEGER NOT NULL, "
      "disposition TEXT NOT NULL, reason TEXT, PRIMARY KEY (run_id, topic_id))",
      // 004:L101: candidates isolated by scope_id + calculation_run_id + topic_id.
      "CREATE TABLE IF NOT EXISTS run_candidate (scope_id TEXT NOT NULL, run_id TEXT NOT NULL, topic_id TEXT NOT NULL, "
      "score INTEGER NOT NULL, input_manifest_id TEXT NOT NULL, candidate_revision INTEGER NOT NULL, "
      "PRIMARY KEY (scope_id, run_id, topic_id))",
      // 004:L101: "数据库拒绝对SEALEDrun 新增、更新或删除候选".
      "CREATE TRIGGER IF NOT EXISTS run_candidate_sealed_insert BEFORE INSERT ON run_candidate WHEN "
      "(SELECT status FROM calculation_run WHERE run_id = NEW.run_id) = 'SEALED' BEGIN SELECT RAISE(ABORT, 'run "
      "SEALED'); END",
      "CREATE TRIGGER IF NOT EXISTS run_candidate_sealed_update BEFORE UPDATE ON run_candidate WHEN "
      "(SELECT status FROM calculation_run WHERE run_id = OLD.run_id) = 'SEALED' BEGIN SELECT RAISE(ABORT, 'run "
      "SEALED'); END",
      "CREATE TRIGGER IF NOT EXISTS run_candidate_sealed_delete BEFORE DELETE ON run_candidate WHEN "
      "(SELECT status FROM calculation_run WHERE run_id = OLD.run_id) = 'SEALED' BEGIN SELECT RAISE(ABORT, 'run "
      "SEALED'); END",
      // 004:L255: PREPARED -> READY -> PUBLISHED | REJECTED; 004:L102-103: items unique by rank and topic.
      "CREATE TABLE IF NOT EXISTS ranking_snapshot (snapshot_id TEXT PRIMARY KEY, scope_id TEXT NOT NULL, "
      "run_id TEXT NOT NULL, status TEXT NOT NULL, input_watermark INTEGER NOT NULL, input_manifest_count INTEGER NOT "
      "NULL, "
      "input_manifest_set_digest TEXT NOT NULL, candidate_count INTEGER NOT NULL, candidate_set_digest TEXT NOT NULL, "
      "publication_epoch INTEGER, scope_context_version INTEGER NOT NULL, rule_version TEXT NOT NULL, "
      "rule_activation_epoch INTEGER NOT NULL)",
      "CREATE TABLE IF NOT EXISTS ranking_snapshot_item (snapshot_id TEXT NOT NULL, rank_no INTEGER NOT NULL, "
      "topic_id TEXT NOT NULL, score INTEGER NOT NULL, input_manifest_id TEXT NOT NULL, PRIMARY KEY (snapshot_id, "
      "rank_no), "
      "UNIQUE (snapshot_id, topic_id))",
      // 004:L104: one context row and one authoritative pointer per scope.
      "CREATE TABLE IF NOT EXISTS ranking_scope_context (scope_id TEXT PRIMARY KEY, version INTEGER NOT NULL, "
      "rule_version TEXT NOT NULL, rule_activation_epoch INTEGER NOT NULL)",
      "CREATE TABLE IF NOT EXISTS ranking_publish_pointer (scope_id TEXT PRIMARY KEY, snapshot_id TEXT NOT NULL, "
      "version INTEGER NOT NULL, publication_epoch INTEGER NOT NULL, input_watermark INTEGER NOT NULL)",
  };
  part1.insert(part1.end(), part2.begin(), part2.end());
  if (o.risk) add_risk_tables(part1);
  if (o.scope_control) add_scope_control_columns(part1);
  if (o.degraded) add_degraded_tables(part1);
  if (o.replay) {
    // 004:L101: replay runs live in their own namespace, apart from the official calculation_run;
    // one reaches the pointer only with a promotion authorization (004:L265, L325; `promotion`).
    part1.push_back(
        "CREATE TABLE IF NOT EXISTS replay_run (run_id TEXT PRIMARY KEY, scope_id TEXT NOT NULL, "
        "source_run_id TEXT NOT NULL, status TEXT NOT NULL)");
  }
  if (o.promotion) {
    // 004:L325: "必须创建 promotion 授权，明确审批人、目标 scope_id、输入水位范围、输入清单摘要、规则/映射/风险
    // activation epoch、有效期、期望 scope context version 和期望指针版本".
    part1.push_back(
        "CREATE TABLE IF NOT EXISTS promotion_authorization (auth_id TEXT PRIMARY KEY, approver TEXT NOT "
        "NULL, scope_id TEXT NOT NULL, replay_run_id TEXT NOT NULL, watermark_from INTEGER NOT NULL, "
        "watermark_to INTEGER NOT NULL, manifest_digest TEXT NOT NULL, rule_epoch INTEGER NOT NULL, "
        "mapping_epoch INTEGER NOT NULL, risk_epoch INTEGER NOT NULL, valid_from_us INTEGER NOT NULL, "
        "valid_until_us INTEGER NOT NULL, expected_ctx_version INTEGER NOT NULL, expected_pointer_version "
        "INTEGER NOT NULL, status TEXT NOT NULL)");
  }
  if (o.shadow) {
    // 004:L101: shadow runs in their own namespace, carrying the input manifest and the three
    // activation epochs; 004:L302-303: comparisons fixed on one context.
    part1.push_back(
        "CREATE TABLE IF NOT EXISTS shadow_run (shadow_run_id TEXT PRIMARY KEY, scope_id TEXT NOT NULL, "
        "source_run_id TEXT NOT NULL, shadow_rule_version TEXT NOT NULL, shadow_entry_score INTEGER NOT "
        "NULL, input_watermark INTEGER NOT NULL, input_manifest_set_digest TEXT NOT NULL, "
        "scope_context_version INTEGER NOT NULL, rule_activation_epoch INTEGER NOT NULL, "
        "mapping_activation_epoch INTEGER NOT NULL, risk_epoch INTEGER NOT NULL)");
    part1.push_back(
        "CREATE TABLE IF NOT EXISTS shadow_candidate (shadow_run_id TEXT NOT NULL, topic_id TEXT NOT NULL, "
        "score INTEGER NOT NULL, input_manifest_id TEXT NOT NULL, PRIMARY KEY (shadow_run_id, topic_id))");
    part1.push_back(
        "CREATE TABLE IF NOT EXISTS shadow_comparison (id INTEGER PRIMARY KEY AUTOINCREMENT, shadow_run_id "
        "TEXT NOT NULL, official_run_id TEXT NOT NULL, context_shadow TEXT NOT NULL, context_official TEXT "
        "NOT NULL, status TEXT NOT NULL, top_n_overlap INTEGER NOT NULL)");
  }
  if (o.reconcile) {
    // 004:L404: the report keeps the compared contexts, the differences and the conclusion.
    part1.push_back(
        "CREATE TABLE IF NOT EXISTS reconciliation_report (id INTEGER PRIMARY KEY AUTOINCREMENT, scope_id "
        "TEXT NOT NULL, snapshot_a TEXT NOT NULL, snapshot_b TEXT NOT NULL, context_a TEXT NOT NULL, "
        "context_b TEXT NOT NULL, status TEXT NOT NULL, detail TEXT NOT NULL, at_us INTEGER NOT NULL)");
  }
  if (o.reconcile_layers) {
    // 004:L403-404: layers 1 and 2 keep the sample range, the source-offset digest, the differences
    // and the conclusion, with both frozen contexts and how far each log was read.
    part1.push_back(
        "CREATE TABLE IF NOT EXISTS reconciliation_layer_report (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "layer INTEGER NOT NULL, scope_id TEXT NOT NULL, snapshot_id TEXT NOT NULL, run_id TEXT NOT NULL, "
        "context_a TEXT NOT NULL, context_b TEXT NOT NULL, status TEXT NOT NULL, sample TEXT NOT NULL, "
        "read_ends TEXT NOT NULL, offset_digest TEXT NOT NULL, detail TEXT NOT NULL, at_us INTEGER NOT NULL)");
  }
  return part1;
}

}  // namespace fl::ranking
