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

#include "impl/ports/hll.h"
#include "impl/ports/log.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"
#include "impl/ranking/contract.h"
#include "impl/ranking/fixes.h"
#include "impl/ranking/merge.h"
#include "impl/ranking/watermark.h"

namespace fl::ranking {

// 004:L177, L179, L158: a HyperLogLog sketch of each key's distinct elements next to the exact sets,
// and hot topics pre-aggregated in salted local shards merged only on the full key. Off: part 1 as
// before (same checkpoints, statements and traces).
struct SketchOptions {
  bool enabled = false;       // a sketch row with every version (topic_window_metric_sketch)
  int64_t hot_threshold = 0;  // keyed records of a topic_id + scope_id after which it is hot; 0: no salting
  int salts = 4;              // salted shards of a hot topic (salt 1..salts; 0 is the unsalted shard)
};

struct AggregatorOptions {
  BoardConfig cfg;
  RankFixes fixes = RankFixes::spec();
  int64_t out_of_orderness_ms = 2000;  // configured_out_of_orderness (004:L148)
  int64_t session_timeout_us = 6'000'000;
  WatermarkOptions wm;  // watermarks, idle partitions and window states (004:L146-155); off: part 1 as before
  SketchOptions sketch;
  // 004:L319 asks for checkpoints of the window state with its source offsets, not how they are
  // written. Off (part 1 as before): every flush writes the partition's whole state. On: a flush
  // appends what it changed (agg_checkpoint_delta) and chains the row's digest over it; the
  // whole state is written again (a base, also kept in agg_checkpoint_history) only when the
  // deltas since the last base outgrow it, so the bytes written stay proportional to the
  // changes. Recovery falls back to the bases in the history, as before.
  bool incremental_checkpoints = false;
  // Topic merges (merge.h): every poll reads the scopes' mapping epochs and cutovers; a copy with an
  // older epoch than its scope's is re-routed by its source coordinates instead of applied (004:L87).
  bool merges = false;
};

// One salted local partial of a full key (004:L179: "局部结果携带 shard ... 和局部版本"): the events
// its salt took and the sketch of their distinct elements, versioned on its own.
struct Shard {
  int64_t raw = 0;
  Hll sketch;
  int64_t version = 0;
  bool dirty = false;
};

struct KeyState {
  AggKey key;
  int64_t generation = 1;
  int64_t version = 0;
  std::set<std::string> applied;          // idempotency records
  std::map<std::string, int64_t> actors;  // actor -> events
  std::set<std::string> contents;
  bool dirty = false;
  bool counts_content = false;
  std::map<int, Shard> shards;  // salt -> partial; only with sketches (salt 0: not salted)
  // With incremental checkpoints: the A, C and T lines (as PartitionState::decode reads them)
  // of what apply added since the last committed flush; a delta writes them after the key's
  // K line. Not state: never encoded, emptied by mark_flushed.
  std::string fresh_lines;
  AggValue value(int suspicious_repeats) const;
  void mark_flushed();  // after a committed flush: dirty versions (the key's, its shards') advance

  // This key's lines of PartitionState::encode_flushed, kept with what they were rendered from.
  // Every flush writes every key (004:L319), and most keys are clean at a flush, so their lines
  // are rendered once, not once per flush. A cache, never state: decode does not read it. Only
  // apply changes applied, actors, contents or a shard's partial, always adding an applied
  // record; the versions, the generation and the dirty flags are part of the stamp.
  struct FlushedLines {
    int64_t generation = -1;
    int64_t version = -1;  // as the flush writes it: version + dirty
    size_t applied = 0;
    bool counts_content = false;
    uint64_t shards = 0;  // every shard's salt, version as flushed and raw count, mixed
    std::string text;
  };
  mutable FlushedLines flushed_lines;
};

// 004:L158, L179: the shards of one full key combined: raw counts add (an event is in exactly one
// shard), sketches merge by register max, exact distinct counts are never added.
struct MergedShards {
  int64_t raw = 0;
  Hll sketch;
  std::string names;  // "<aggregate_key>~<salt>@<shard_version>" of each shard, ','-joined
};
MergedShards merge_shards(const KeyState& k, const std::string& aggregate_key, bool named);

// Whether PartitionState::encode_flushed keeps each key's rendered lines for the next call.
enum class KeptLines { kKeep, kDrop };

struct PartitionState {
  int64_t generation = 1;   // the aggregation generation this state writes (004:L319-320)
  int64_t next_offset = 0;  // first offset not in the state
  int64_t max_event_time_ms = 0;
  std::map<std::string, KeyState> keys;  // by AggKey::str()
  // The names of the keys whose `dirty` flag is set, in keys' order: an index, so that a flush
  // visits the keys it versions, not every key of the partition (004:L98; the state holds every
  // key of the open windows). Never encoded: decode leaves every key clean. Maintained by
  // set_dirty and mark_flushed below; check_dirty_index asserts it.
  std::set<std::string> dirty_keys;
  // With incremental checkpoints, what the next delta must also carry: keys a purge removed
  // and hot-topic counters that moved since the last committed flush.
  std::set<std::string> erased_keys, changed_topics;
  std::map<std::string, int64_t> topic_records;  // topic_id|scope_id -> keyed records (hot topics; sketches)
  WatermarkState wm;                             // empty unless watermarks are on
  // The DB checkpoint row this state was loaded from or last written as (not encoded).
  bool persisted = false;
  int64_t stored_next_offset = 0, stored_generation = 0;
  std::string stored_digest;  // its digest: with watermarks a flush may leave the offset where it was
  // With incremental checkpoints, the row's base and the deltas after it: the base's next_offset
  // and size, how many deltas follow it and their total size.
  int64_t base_offset = 0;
  size_t base_bytes = 0, delta_count = 0, delta_bytes = 0;
  // Applies one keyed record to key `name` (in keys) as 004:L143 counts it: its idempotency
  // record, actor and content, and marks the key dirty; false, changing nothing, when the record
  // is already applied (idempotent). With `fresh`, also keeps the lines a delta carries for it
  // (KeyState::fresh_lines).
  bool apply_record(const std::string& name, KeyState& k, const std::string& record, const std::string& actor,
                    const std::string& content, bool fresh);
  // Marks key `name` (in keys) dirty: a flush appends its next version.
  void set_dirty(const std::string& name, KeyState& k);
  // After a committed flush: every dirty key's versions advance (KeyState::mark_flushed).
  void mark_flushed();
  // Rebuilds dirty_keys from the keys' flags (after a change that sets or clears many of them).
  void reindex_dirty();
  // Debug builds: dirty_keys names exactly the dirty keys.
  void check_dirty_index() const;
  std::string encode() const;
  // encode() of this state after a committed flush up to `next`: next_offset = `next` and every
  // dirty version advanced (KeyState::mark_flushed); pending watermark rows are never encoded.
  // kKeep keeps each key's lines for the next call (KeyState::flushed_lines: fast when flushes
  // are frequent and most keys clean, at the cost of the state's text in memory); kDrop renders
  // them and keeps nothing. The text is the same either way.
  std::string encode_flushed(int64_t next, KeptLines lines = KeptLines::kKeep) const;
  // What a committed flush up to `next` changes, as lines decode_into applies on top of the state
  // before it: the N line, a D line per erased key, each dirty key's K line (flushed), fresh lines
  // and shards, the moved H lines, and the watermark state (its lines only ever replace entries).
  std::string encode_delta(int64_t next) const;
  static PartitionState decode(const std::string& text);
  // Applies a checkpoint text (a whole state, or a delta) on top of `s`.
  static void decode_into(PartitionState& s, const std::string& text);
};

Task<void> run_aggregator(Runtime& rt, Sql& sql, Log& log, AggregatorOptions o);

}  // namespace fl::ranking
