// What the ranking judges see of a finished run: world observations only (the producers' history,
// the records and offsets of the two logs, the DB read back from its VFS, the SQL server's commit
// log, the world's fault log) and the scenario's constants. Never impl/'s state, the variant or the
// fix set.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "impl/ports/history.h"
#include "model/ranking/model.h"
#include "sim/fault_log.h"

namespace fl::ranking::props {

struct EmitOp {  // one producer `emit`: the event it recorded and whether its fact committed
  std::string process;
  std::string payload;
  int64_t invoke_us = 0;
  Outcome outcome = Outcome::kInfo;
  uint64_t id = 0;           // its history id (the cause fault records name)
  int64_t complete_us = -1;  // -1: never completed (its producer died with it)
};

struct LogRecordObs {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  std::string value;
  int64_t append_us = 0;  // the broker's append time

  // The record's fields, model::parse_event(value). Half a dozen checkers read every record, so
  // the parse is kept, with the text it came from: a record whose value changed is parsed again.
  const std::map<std::string, std::string>& fields() const {
    if (!parse_cache.done || parse_cache.source != value) parse_cache = Parsed{value, model::parse_event(value), true};
    return parse_cache.fields;
  }

  struct Parsed {  // a cache of fields(), never an observation of its own
    std::string source;
    std::map<std::string, std::string> fields;
    bool done = false;
  };
  mutable Parsed parse_cache;
};

struct HeadRow {
  std::string aggregate_key, topic_id, scope_id, window_type;
  int64_t window_start = 0;
  std::string metric_type;
  int64_t generation = 0, version = 0;
};

struct VersionRow {
  std::string aggregate_key;
  int64_t generation = 0, version = 0;
  model::Value value;
  std::string cut_ref, digest;
};

// A statement's SQL text, shared by every statement with the same text: a run commits a few
// dozen distinct texts some 200,000 times per 4,000 events (37 MB as copies). Reads as the
// std::string it holds.
class SqlText {
 public:
  SqlText() : SqlText(std::string()) {}
  SqlText(std::string text) : text_(std::make_shared<const std::string>(std::move(text))) {}
  SqlText(const char* text) : SqlText(std::string(text)) {}
  operator const std::string&() const { return *text_; }
  operator std::string_view() const { return *text_; }
  const std::string& str() const { return *text_; }
  size_t size() const { return text_->size(); }
  char operator[](size_t i) const { return (*text_)[i]; }
  std::string substr(size_t pos, size_t n = std::string::npos) const { return text_->substr(pos, n); }
  size_t find(std::string_view what, size_t pos = 0) const { return text_->find(what, pos); }
  size_t rfind(std::string_view what, size_t pos = std::string::npos) const { return text_->rfind(what, pos); }
  int compare(size_t pos, size_t n, std::string_view what) const { return text_->compare(pos, n, what); }
  bool operator==(const SqlText& other) const { return *text_ == *other.text_; }

 private:
  std::shared_ptr<const std::string> text_;  // never null
};

struct SqlStatementObs {
  SqlText sql;
  std::vector<std::string> params;  // rendered: integers in decimal, text as is
  int64_t changes = 0;              // rows it changed (committed transactions only)
};
struct SqlCommit {
  int64_t time_us = 0;
  bool ok = false;
  std::string client;
  std::vector<SqlStatementObs> statements;
  // The server answered an I/O error at the COMMIT itself: the WAL frames may have been written
  // and a crash's recovery may make the transaction durable (SQLite commits in WAL mode by
  // appending its frames, then syncing; a failed sync leaves them pending). Its statements' change
  // counts are unknown (0 here); whether it applied shows only in what followed.
  bool in_doubt = false;
  // The server rolled the transaction back because a statement's expected change or row was
  // missing (a CAS or a guard that did not hold) or it broke a constraint (a version row that
  // exists): that statement's index; -1 otherwise.
  int refused_index = -1;
};

// ---- Part 2: runs, snapshots, the publish pointer and its Redis cache (004:L99-104, L245-266).

// The board constants the scenario fixes (what each run and snapshot must contain depends on them).
struct BoardParams {
  std::vector<std::string> scopes;
  int candidate_partitions = 4;
  int top_k = 8;                     // local Top K per partition
  int top_n = 5;                     // items per snapshot
  int64_t entry_score = 2;           // entries below it are REJECTED
  std::string window_type = "long";  // score rule v1: sum of risk-adjusted values of these windows
  bool risk = false;                 // the scenario has risk actions (§9.2-§9.3)
  // How long after effective_until a block may stay current (expiry schedulers run; else never).
  int64_t expiry_bound_us = INT64_MAX / 4;
  // 004:L237: the maximum safe TTL: how long a committed block may still be shown by any response.
  int64_t max_safe_ttl_us = INT64_MAX / 4;
  // The longest a publisher's step after its publish commit may last without a fault (004:L266: the
  // Redis pointer is a cache written after the DB's commit): its calls' timeouts, the commit's reply
  // and the snapshot's read (SQL), the snapshot's SET and the pointer script (Redis). The harness's
  // client constants.
  int64_t publish_step_us = 2 * 500'000 + 2 * 300'000;
  bool risk_service = false;    // entries at the entry score are checked by the risk service
  int risk_suspicious_mod = 4;  // risk model risk-m1: t_i suspicious when i % N == 0
  // Scope control (mapping switches, window-configuration changes; 004:L86, L104, L220, L262-263):
  // runs and snapshots carry the context's mapping and window configuration.
  bool scope_control = false;
  std::map<std::string, std::string> window_types;     // window_config_version -> the window type it scores
  std::string initial_mapping, initial_window_config;  // a context row's values when it is created
};

struct OffsetCutRow {  // SOURCE_OFFSET_CUT
  int32_t partition = 0;
  int64_t next_offset = 0, generation = 0;
};

struct RunRow {  // CALCULATION_RUN; absent numbers read as -1, absent texts as ""
  std::string run_id, scope_id, status, vector;
  int64_t seq = 0, watermark = 0, expected_count = 0;
  std::string expected_digest, result_digest;
  int64_t manifest_count = -1;
  std::string manifest_digest;
  int64_t candidate_count = -1;
  std::string candidate_digest;
  int64_t ctx_version = 0;  // the scope context the run was created under
  std::string rule_version;
  int64_t rule_epoch = 0;
  std::string mapping_version;  // scope control only ("" otherwise)
  int64_t mapping_epoch = 0;
  std::string window_config;
  std::string degraded_policy;  // degraded runs only: degraded_policy_version ("" otherwise)
  std::string completeness;     // data_completeness_status with degraded runs ("" without them)
};

struct DegradedPolicyRow {                                   // DEGRADED_POLICY (004:L253), read back
  std::string policy_version, scope_id, included, excluded;  // partitions, ','-joined
  int64_t valid_from_us = 0, valid_until_us = 0;
  std::string approval, digest;
};

struct PromotionRow {  // PROMOTION_AUTHORIZATION (004:L325), read back
  std::string auth_id, scope_id, replay_run_id;
  int64_t watermark_from = 0, watermark_to = 0;
  std::string manifest_digest;
  int64_t rule_epoch = 0, mapping_epoch = 0, risk_epoch = 0, valid_from_us = 0, valid_until_us = 0;
  int64_t expected_ctx_version = 0, expected_pointer_version = 0;
  std::string status;
};

struct ShadowRunRow {  // SHADOW_RUN (004:L101), read back
  std::string shadow_run_id, scope_id, source_run_id, rule_version;
  int64_t entry_score = 0, watermark = 0;
  std::string manifest_digest;
  int64_t ctx_version = 0, rule_epoch = 0;
};

struct ShadowCandidateRow {  // SHADOW_CANDIDATE
  std::string shadow_run_id, topic_id;
  int64_t score = 0;
};

struct ShadowComparisonRow {  // SHADOW_COMPARISON (004:L302-303)
  std::string shadow_run_id, official_run_id, context_shadow, context_official, status;
  int64_t overlap = -1;
};

struct ContextRow {  // RANKING_SCOPE_CONTEXT
  std::string scope_id;
  int64_t version = 0;
  std::string rule_version;
  int64_t rule_epoch = 0;
  std::string mapping_version;  // scope control only ("" otherwise)
  int64_t mapping_epoch = 0;
  std::string window_config;
};

struct CutRow {  // RUN_PARTITION_CUT
  std::string run_id;
  int64_t partition = 0;
  std::string ref, status, object_ref;
  int64_t item_count = -1;
  std::string digest;
};

struct ManifestRow {  // RUN_INPUT_MANIFEST
  std::string run_id, topic_id, manifest_id, manifest_digest, items;
  int64_t score = 0;
  std::string disposition, reason;
};

struct CandidateRow {
  std::string scope_id, run_id, topic_id;
  int64_t score = 0;
  std::string manifest_id;
  int64_t revision = 0;
};

struct SnapshotRow {
  std::string snapshot_id, scope_id, run_id, status;
  int64_t watermark = 0, manifest_count = 0;
  std::string manifest_digest;
  int64_t candidate_count = 0;
  std::string candidate_digest;
  int64_t epoch = -1;
  int64_t ctx_version = 0;
  std::string rule_version;
  int64_t rule_epoch = 0;
  std::string mapping_version;  // scope control only ("" otherwise)
  int64_t mapping_epoch = 0;
  std::string window_config;
};

struct SnapshotItemRow {
  std::string snapshot_id;
  int64_t rank_no = 0;
  std::string topic_id;
  int64_t score = 0;
  std::string manifest_id;
};

struct PointerRow {  // RANKING_PUBLISH_POINTER
  std::string scope_id, snapshot_id;
  int64_t version = 0, epoch = 0, watermark = 0;
};

struct ReconciliationRow {                                                     // RECONCILIATION_REPORT (004:L392-404)
  std::string scope_id, snapshot_a, snapshot_b, context_a, context_b, status;  // MATCH, DIFF or REFUSED
};

// RECONCILIATION_LAYER_REPORT (004:L393-404): layer 1 (CONTINUOUS, GAP) or 2 (MATCH, DIFF), or
// REFUSED, against the run of the snapshot the DB pointer named. A context is the snapshot's frozen
// context (as in RECONCILIATION_REPORT) then "|" and a source-offset vector. `sample`: layer 1
// "<source partition>:0-<last>" per source partition; layer 2 "<aggregate_key>,<g>,<v>,<cut_ref>"
// per window version recomputed; ';'-joined. `read_ends`: how far the reconciler says it read each
// log, "k<partition>:<end>,...;s<partition>:<end>,..."; `at_us`: its at_us column. The judge takes
// neither as what was read (the broker's served reads say that): both only identify the row's
// INSERT in the commit log.
struct LayerReportRow {
  int layer = 0;
  std::string scope_id, snapshot_id, run_id, context_a, context_b, status, sample, detail, read_ends;
  int64_t at_us = 0;
};

// A poll the log broker answered with records (sim/log/server.h ServedRead), as the broker served
// it: when (world time), to which process (the world's name for the caller), in which consumer
// group, and the offsets [from, to) of each partition of the keyed or the stable log it returned.
struct ServedReadObs {
  struct Range {
    bool keyed = false;  // the keyed log; else the pre-normalization (stable) log
    int32_t partition = 0;
    int64_t from = 0, to = 0;
  };
  int64_t time_us = 0;
  std::string process, group;
  std::vector<Range> ranges;
};

struct ReplayRunRow {  // REPLAY_RUN: a replay run in its own namespace (004:L101)
  std::string run_id, scope_id, source_run_id;
};

struct RedisWrite {  // a write the Redis server executed (inside a script too)
  int64_t time_us = 0;
  std::string client;
  std::vector<std::string> argv;
  bool ok = true;  // false: it replied an error (a RENAME of a missing key)
};

// ---- Risk actions, epochs, expiry and the emergency denylist (004:L204-240).

struct RiskActionRow {  // RISK_ACTION, never updated nor deleted
  std::string scope_id, topic_id;
  int64_t version = 0;
  std::string action_id, state;  // BLOCK, LIFTED or EXPIRED
  int64_t from_us = 0, until_us = 0, epoch = 0;
};

struct ViewOp {               // one query-layer view (history op `view`)
  std::string process, args;  // args "scope=<scope_id>"
  int64_t invoke_us = 0, complete_us = -1;
  Outcome outcome = Outcome::kInfo;
  std::string result;  // "snap=<id> deny=<scope epoch>/<global epoch> items=<t,...>"
};

struct RiskObs {
  bool enabled = false;
  std::vector<RiskActionRow> actions;                                  // read back
  std::map<std::string, std::pair<int64_t, int64_t>> context_epochs;   // scope -> (risk_epoch, global_risk_epoch)
  std::map<std::string, std::pair<int64_t, int64_t>> snapshot_epochs;  // snapshot -> (risk_epoch, global_risk_epoch)
  std::vector<ViewOp> views;
};

struct BoardObs {
  BoardParams params;
  std::map<std::string, OffsetCutRow> offset_cuts;  // by cut_id
  std::vector<RunRow> runs;
  std::vector<CutRow> cuts;
  std::map<std::string, std::string> topk_objects;  // ref -> content
  std::vector<ManifestRow> manifest;
  std::vector<CandidateRow> candidates;
  std::vector<SnapshotRow> snapshots;
  std::vector<SnapshotItemRow> items;
  std::vector<PointerRow> pointers;
  std::vector<ContextRow> contexts;
  std::vector<ReplayRunRow> replay_runs;
  std::vector<ReconciliationRow> reconciliations;
  std::vector<LayerReportRow> layer_reports;  // with reconcile_layers only
  std::vector<ServedReadObs> log_reads;       // with reconcile_layers only: every poll served, in order
  std::vector<DegradedPolicyRow> policies;    // with degraded runs only
  std::vector<PromotionRow> promotions;       // with promote_replays only
  std::vector<ShadowRunRow> shadow_runs;      // with shadow runs only
  std::vector<ShadowCandidateRow> shadow_candidates;
  std::vector<ShadowComparisonRow> shadow_comparisons;
  std::vector<RedisWrite> redis_writes;          // SET/DEL of ranking:* keys, in execution order
  std::map<std::string, std::string> redis_end;  // ranking:* string keys at the server at the end
  std::vector<int64_t> redis_losses;             // times Redis lost its data (crash without persistence)
  bool redis_observed = false;
  RiskObs risk;
};

// ---- Watermarks, idle partitions and window states (004:L146-155), when the scenario has them.

// The scenario's §6.3 constants (what the design may do depends on them).
struct WatermarkParams {
  bool enabled = false;
  int64_t out_of_orderness_ms = 2000;
  int64_t allowed_lateness_ms = 20'000;
  int64_t idle_timeout_us = 3'000'000;
  int64_t max_replay_range_ms = 30'000;  // the longest automatic replay
  int64_t redelivery_window_ms = 6'000;  // the longest message redelivery
  // 004:L155: dedup retention is at least the largest of the three.
  int64_t retention_ms() const { return std::max({allowed_lateness_ms, max_replay_range_ms, redelivery_window_ms}); }
};

struct WindowArchiveRow {  // WINDOW_ARCHIVE: the evidence saved before a purge
  int32_t partition = 0;
  std::string window_id, offset_digest, final_versions, checkpoint_ref, reconciliation;
  int64_t watermark = 0;
};

struct IdleRow {  // PARTITION_IDLE: one idle period of a source partition in a keyed partition
  int32_t partition = 0;
  std::string source;
  int64_t source_partition = 0, idle_start_us = 0, last_event_us = 0, last_source_offset = 0;
  int64_t idle_end_us = -1, resume_offset = -1, rejoin_us = -1, rejoin_offset = -1, rejoin_watermark = -1;
  int64_t late_count = 0;
};

struct SideOutputRow {  // LATE_SIDE_OUTPUT
  int32_t partition = 0;
  int64_t offset = 0;
  std::string window_type, event_id, scope_id;
  int64_t window_start = 0;
  std::string window_state;
  int64_t watermark = 0;
};

struct WatermarkObs {
  WatermarkParams params;
  std::vector<IdleRow> idle;                                    // read back
  std::vector<SideOutputRow> side;                              // read back
  std::vector<WindowArchiveRow> archive;                        // read back
  std::map<std::pair<int32_t, std::string>, int64_t> complete;  // (keyed partition, source) -> complete flag
};

// ---- HyperLogLog sketches and salted hot-topic shards (004:L158, L177, L179), when the scenario has them.

struct SketchRow {  // TOPIC_WINDOW_METRIC_SKETCH: one per version triple
  std::string aggregate_key;
  int64_t generation = 0, version = 0, raw_count = 0;
  std::string sketch;  // impl/ports/hll.h's encoding
  int64_t estimate = 0;
  std::string merged_shards;  // "<shard_key>@<shard_version>", ','-joined ("" without salting)
};

struct ShardRow {  // TOPIC_WINDOW_METRIC_SHARD: one salted local partial, immutable
  std::string shard_key, aggregate_key;
  int64_t salt = 0, generation = 0, version = 0;
  std::string topic_id, scope_id, window_type;
  int64_t window_start = 0;
  std::string metric_type;
  int64_t raw_count = 0;
  std::string sketch;
  int64_t estimate = 0;
};

struct SketchObs {
  bool enabled = false;             // the scenario keeps sketches (param hll)
  bool salted = false;              // and salts hot topics (param hot_topic_threshold > 0)
  std::vector<SketchRow> sketches;  // read back
  std::vector<ShardRow> shards;     // read back
};

// ---- Topic merges (004:L79-89), read back from the DB at the end.
struct MergeRunRow {  // MERGE_RUN
  std::string merge_run_id, source_topic, main_topic, mapping_version, scopes, state;
};
struct CutoverRow {  // MERGE_SCOPE_CUTOVER
  std::string merge_run_id, scope_id;
  int64_t expected_ctx_version = 0, activation_epoch = 0;
  std::string vector;  // cutover_next_offset, "p:o,..."
  bool delivered = false;
  std::string state;
};
struct MergeObs {
  bool enabled = false;         // the scenario merges topics (param merges)
  std::string initial_mapping;  // a context row's mapping before any merge (the scenario's constant)
  std::vector<MergeRunRow> runs;
  std::vector<CutoverRow> cutovers;
  // RANKING_SCOPE_CONTEXT at the end: scope -> (mapping_version, mapping_activation_epoch).
  std::map<std::string, std::pair<std::string, int64_t>> contexts;
};

struct RankingRun {
  model::Config config;
  std::vector<EmitOp> emits;
  std::vector<LogRecordObs> stable, keyed;  // the pre-normalization log and the keyed log
  std::map<int32_t, int64_t> keyed_end;     // keyed partition -> log end offset
  bool db_read = false;
  std::vector<std::pair<std::string, std::string>> outbox;   // (event_id, status)
  std::vector<std::pair<std::string, std::string>> rejects;  // (payload, reason)
  std::vector<std::pair<int32_t, int64_t>> candidate_terms;  // stable (partition, offset)
  std::vector<HeadRow> heads;
  std::vector<VersionRow> versions;
  std::map<int32_t, int64_t> checkpoints;  // keyed partition -> next_offset
  std::vector<SqlCommit> commits;
  sim::FaultLog faults;
  int64_t end_us = 0;
  std::vector<std::string> chain;  // every process of the chain (for fault explanations)
  BoardObs board;
  WatermarkObs wm;
  SketchObs sketch;
  MergeObs merges;
};

// The value digest the seed stores with each version (004:L98), recomputed by the judge.
std::string value_digest(const model::Value& v);
// The digest the DB's digests use (FNV-1a 64, hex), and the seed's set digest over lines in a
// stable (sorted) order (004:L100, L247, L249).
std::string text_digest(const std::string& s);
std::string set_digest(std::vector<std::string> lines);

}  // namespace fl::ranking::props
