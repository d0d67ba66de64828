// The aggregation worker of seed 004 part 1 (004:L98, L142-143, L158, L167-179, L204-209, L319-320):
// consumes the log keyed by topic_id + scope_id, keeps per full aggregation key the applied
// idempotency records, the actors and contents, and on every flush appends immutable
// TOPIC_WINDOW_METRIC_VERSION rows, advances each head with the double CAS on
// (active_generation, current_aggregate_version) and stores the partition's checkpoint with its
// source offset, in one transaction; consumer offsets are committed after it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "impl/ports/log.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"
#include "impl/ranking/contract.h"
#include "impl/ranking/fixes.h"
#include "impl/ranking/watermark.h"

namespace fl::ranking {

struct AggregatorOptions {
  BoardConfig cfg;
  RankFixes fixes = RankFixes::spec();
  int64_t out_of_orderness_ms = 2000;  // configured_out_of_orderness (004:L148)
  int64_t session_timeout_us = 6'000'000;
  WatermarkOptions wm;  // watermarks, idle partitions and window states (004:L146-155); off: part 1 as before
};

struct KeyState {
  AggKey key;
  int64_t generation = 1;
  int64_t version = 0;
  std::set<std::string> applied;               // idempotency records
  std::map<std::string, int64_t> actors;       // actor -> events
  std::set<std::string> contents;
  bool dirty = false;
  bool counts_content = false;
  AggValue value(int suspicious_repeats) const;
};

struct PartitionState {
  int64_t generation = 1;         // the aggregation generation this state writes (004:L319-320)
  int64_t next_offset = 0;        // first offset not in the state
  int64_t max_event_time_ms = 0;
  std::map<std::string, KeyState> keys;  // by AggKey::str()
  WatermarkState wm;                     // empty unless watermarks are on
  // The DB checkpoint row this state was loaded from or last written as (not encoded).
  bool persisted = false;
  int64_t stored_next_offset = 0, stored_generation = 0;
  std::string stored_digest;  // its digest: with watermarks a flush may leave the offset where it was
  std::string encode() const;
  static PartitionState decode(const std::string& text);
};

Task<void> run_aggregator(Runtime& rt, Sql& sql, Log& log, AggregatorOptions o);

}  // namespace fl::ranking
