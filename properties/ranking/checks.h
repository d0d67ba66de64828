// The ranking checkers of part 1, one per invariant family (docs/invariants.md).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "properties/common/judge.h"
#include "properties/ranking/run.h"
#include "properties/verdict.h"

namespace fl::ranking::props {

std::vector<PropertyInfo> ranking_properties();
std::vector<Verdict> check_ranking(const RankingRun& run, const std::vector<std::string>& properties);

Verdict check_ingest_durable(const RankingRun& run);     // RANK-39
Verdict check_scope_canonical(const RankingRun& run);    // RANK-1
Verdict check_full_key(const RankingRun& run);           // RANK-3
Verdict check_event_idempotence(const RankingRun& run);  // RANK-4, RANK-5
Verdict check_version_immutable(const RankingRun& run);  // RANK-11
Verdict check_head_fence(const RankingRun& run);         // RANK-12
Verdict check_offset_continuity(const RankingRun& run);  // RANK-41
Verdict check_normalization(const RankingRun& run);      // RANK-31

// sketch_checks.cc: HyperLogLog sketches and salted shards (004:L158, L177, L179); only with `hll`.
Verdict check_distinct_sketch(const RankingRun& run);  // RANK-5
// rank-full-key's part for salted shards (RANK-3): shard rows carry their key, merges are on it.
void check_shard_keys(const RankingRun& run, fl::props::Judge& j);

// A merge cutover's CAS on a context row (004:L86; impl/ranking/merge.h): it installs `mapping` at
// `epoch` on `scope` and moves the version by one. nullopt for any other statement.
struct MergeCas {
  std::string scope, mapping;
  int64_t epoch = 0;
};
std::optional<MergeCas> merge_cas(const SqlStatementObs& s);

// The version rows by "<aggregate_key>/g<generation>/v<version>" (what a head points to).
std::map<std::string, const VersionRow*> versions_by_triple(const RankingRun& run);

// merge_checks.cc: topic merges (004:L79-89); judged only when the scenario merges topics.
Verdict check_merge_ownership(const RankingRun& run);  // RANK-32, RANK-33, RANK-35
Verdict check_merge_cutover(const RankingRun& run);    // RANK-34
// The ACTIVE scope cutovers the DB holds, as the model reads them.
std::vector<model::MergeCutover> active_cutovers(const RankingRun& run);
// The model's value of every full key from the accepted events (model::expected_values), each event
// counted in the topics the ACTIVE cutovers give it, the late side output's events excluded.
std::map<std::string, model::Value> expected_values_of(const RankingRun& run);
// The topics `scope` merged away at or before mapping epoch `mapping_epoch` (the sources of its
// ACTIVE cutovers with an activation epoch not above it): what a run or snapshot made under that
// epoch must not list (004:L89).
std::set<std::string> merged_away(const RankingRun& run, const std::string& scope, int64_t mapping_epoch);
// The topic a keyed copy of `topic` may carry in `scope`: the main topic of its ACTIVE cutover, else
// `topic` itself.
std::string merged_topic(const RankingRun& run, const std::string& topic, const std::string& scope);

// §6.3 (watermark_checks.cc); judged only when the scenario has watermarks (params.enabled).
Verdict check_watermark(const RankingRun& run);         // RANK-7
Verdict check_idle_recovery(const RankingRun& run);     // RANK-8
Verdict check_window_lifecycle(const RankingRun& run);  // RANK-9
Verdict check_dedup_purge(const RankingRun& run);       // RANK-6
// "eventId#scope_id#window_type" of the events every copy of which went to the late side output.
std::set<std::string> late_events(const RankingRun& run);

// The order of committed run transitions: run -> index in run.commits of the commit that moved it
// to BUILDING / SEALED (board_checks.cc; the risk judges read it too).
struct RunTimeline {
  std::map<std::string, size_t> building, sealed;
};
RunTimeline run_timeline(const RankingRun& run);

// Part 2 (board_checks.cc); judged only when the scenario has a board (params.scopes non-empty).
Verdict check_run_partitions(const RankingRun& run);   // RANK-15, RANK-16
Verdict check_manifest_frozen(const RankingRun& run);  // RANK-14, RANK-17
Verdict check_run_seal(const RankingRun& run);         // RANK-18
Verdict check_publish_fence(const RankingRun& run);    // RANK-22, RANK-23, RANK-36
Verdict check_pointer_cache(const RankingRun& run);    // RANK-24
Verdict check_control_epochs(const RankingRun& run);   // RANK-21, RANK-22
// gate_checks.cc: the completeness gate needs a board and watermarks, replay isolation a board.
Verdict check_completeness_gate(const RankingRun& run);  // RANK-10
Verdict check_replay_isolation(const RankingRun& run);   // RANK-25
Verdict check_scope_isolation(const RankingRun& run);    // RANK-2
Verdict check_candidate_cache(const RankingRun& run);    // RANK-40, RANK-14
Verdict check_reconciliation(const RankingRun& run);     // RANK-38
// Layers 1 and 2 of check_reconciliation; `context`: snapshot -> its frozen context.
void check_layer_reports(const RankingRun& run, const std::map<std::string, std::string>& context, fl::props::Judge& j);
// risk_checks.cc: risk actions and epochs, publishing under the risk context, the denylist.
Verdict check_risk_actions(const RankingRun& run);     // RANK-26, RANK-27, RANK-29
Verdict check_risk_publish(const RankingRun& run);     // RANK-22, RANK-26
Verdict check_emergency_block(const RankingRun& run);  // RANK-28, RANK-26
Verdict check_risk_response(const RankingRun& run);    // RANK-19, RANK-21
// The scope whose RANKING_SCOPE_CONTEXT.version a committed statement moved, or "" if it moved none
// (004:L104, L256: rule, mapping, window-configuration and risk control transactions all move it).
std::string context_version_move(const SqlStatementObs& s);

// The window head a committed statement moves, or "" if it moves none: an UPDATE of
// topic_window_metric, with five parameters a switch to a new generation (the writer's fencing
// token, 004:L97-98), with four a version bump within one.
std::string head_key_moved(const SqlStatementObs& s);

// The official run whose candidates a run's snapshot holds: a replay run's source run (004:L101),
// else the run itself.
std::string source_run_of(const BoardObs& b, const std::string& run_id);
// `s` cut at every `sep` as the DB's text rows are written ("a;b" -> a, b; a trailing separator
// adds no empty field).
std::vector<std::string> split(const std::string& s, char sep);

// The value of `name=` in a client's recorded answer ("snap=<id> deny=<a>/<b> items=... src=..."),
// "" when absent.
std::string result_field(const std::string& r, const std::string& name);
// Per PUBLISHED snapshot, the topics blocked in its scope or globally when its publish committed
// (replayed from the commit log); empty without risk actions.
std::map<std::string, std::set<std::string>> blocked_at_publish(const RankingRun& run);

}  // namespace fl::ranking::props
