// The DB schema of seed 004 part 1 (004:L96-104): business facts and their outbox, ingest
// rejects, the candidate-term queue, source-offset cuts, the window head TOPIC_WINDOW_METRIC and
// the immutable TOPIC_WINDOW_METRIC_VERSION rows, and the aggregation checkpoints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fl::ranking {

// Which tables a scenario's DB has. Each feature's tables and columns exist only in scenarios that
// use it, so the other scenarios keep their DB layout and traces.
struct SchemaOptions {
  // Part 2 (runs, manifests, candidates, snapshots, context, pointer); without it part 1 only.
  bool board = false;
  bool watermarks = false;  // §6.3: window states, late side output, idle partitions, completeness, purges
  bool incremental_checkpoints = false;  // agg_checkpoint_delta (AggregatorOptions::incremental_checkpoints)
  bool replay = false;                   // the replay namespace (replay_run) of the unauthorized replay
  bool reconcile = false;                // reconciliation_report
  bool reconcile_layers = false;         // reconciliation_layer_report (layers 1 and 2)
  bool risk = false;                     // §9.2-§9.3: risk actions and the context's risk epochs
  // The context's mapping and window configuration (mapping_version, mapping_activation_epoch,
  // window_config_version), pinned by every run and snapshot.
  bool scope_control = false;
  // Approved degraded policies (degraded_policy) and, on each run, the policy it was created under
  // and its data_completeness_status (004:L253).
  bool degraded = false;
  bool promotion = false;  // promotion authorizations of replay runs (promotion_authorization, 004:L325)
  bool shadow = false;     // shadow rule runs, their candidates and comparisons (shadow.h)
  bool merges = false;     // topic merges (merge.h): merge_run, merge_scope_cutover, merge_shadow
};

std::vector<std::string> schema_statements(const SchemaOptions& o);

// The approved degraded policies an operator has put in place before the run (004:L253): for each
// board scope and each set X of at most half the candidate partitions (up to 16 partitions),
// "dp-1:<scope>:x<X>" excludes X and includes the rest, valid from 0 for ever, with its digest
// over (scope, included, excluded, validity).
std::vector<std::string> degraded_policy_statements(const std::vector<std::string>& scopes, int candidate_partitions);

// The digest a degraded policy row carries: of "scope|included|excluded|valid_from_us|valid_until_us".
std::string degraded_policy_digest(const std::string& scope, const std::string& included, const std::string& excluded,
                                   int64_t valid_from_us, int64_t valid_until_us);

// 004:L177, L179 (scenario param `hll`): the sketch row of every version (same version triple,
// never updated) and, with salting, the immutable rows of the salted shards it merged.
std::vector<std::string> sketch_schema_statements();

inline constexpr const char* kStableTopic = "stable_events";  // pre-normalization log (004:L141)
inline constexpr const char* kKeyedTopic = "keyed_events";    // by topic_id + scope_id (004:L158)

}  // namespace fl::ranking
