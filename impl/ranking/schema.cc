#include "impl/ranking/schema.h"

namespace fl::ranking {

std::vector<std::string> schema_statements() {
  return {
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
      "CREATE TABLE IF NOT EXISTS agg_checkpoint_history (keyed_partition INTEGER NOT NULL, next_offset INTEGER NOT NULL, "
      "generation INTEGER NOT NULL, state TEXT NOT NULL, digest TEXT NOT NULL, "
      "PRIMARY KEY (keyed_partition, next_offset, generation))",
  };
}

}  // namespace fl::ranking
