// The DB schema of seed 004 part 1 (004:L96-104): business facts and their outbox, ingest
// rejects, the candidate-term queue, source-offset cuts, the window head TOPIC_WINDOW_METRIC and
// the immutable TOPIC_WINDOW_METRIC_VERSION rows, and the aggregation checkpoints.
#pragma once

#include <string>
#include <vector>

namespace fl::ranking {

// Part 1's tables; with `board`, also part 2's (runs, manifests, candidates, snapshots, context,
// pointer), so part-1 scenarios keep their traces; with `watermarks`, the §6.3 tables (window
// states, the late side output, idle partitions, source completeness, purge evidence).
// `replay`: the replay namespace (replay_run), only in scenarios with the unauthorized replay, so
// other scenarios keep their DB layout and traces.
// `reconcile`: the reconciliation reports (reconciliation_report), likewise.
// `scope_control`: the context's mapping and window configuration (mapping_version,
// mapping_activation_epoch, window_config_version), pinned by every run and snapshot; only in
// scenarios with mapping switches or window-configuration changes, likewise.
std::vector<std::string> schema_statements(bool board, bool watermarks = false, bool replay = false,
                                           bool reconcile = false, bool risk = false, bool scope_control = false);

// 004:L177, L179 (scenario param `hll`): the sketch row of every version (same version triple,
// never updated) and, with salting, the immutable rows of the salted shards it merged.
std::vector<std::string> sketch_schema_statements();

inline constexpr const char* kStableTopic = "stable_events";  // pre-normalization log (004:L141)
inline constexpr const char* kKeyedTopic = "keyed_events";    // by topic_id + scope_id (004:L158)

}  // namespace fl::ranking
