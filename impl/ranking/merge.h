// Topic merges of seed 004 §3.3 (004:L79-89): a merge run moves a source topic's events onto a main
// topic, one MERGE_SCOPE_CUTOVER per affected scope. Ownership of every event is decided by the
// pre-normalization log's coordinates alone: in a scope whose cutover is ACTIVE, a source-topic
// event at (p, o) belongs to the new chain (the main topic) iff o >= cutover_next_offset[p]
// (004:L84); event time never decides it (004:L88).
//
// The merge process ("merger") drives each run through, per scope:
//   PREPARED     the run and its cutover rows, with the expected scope context version and the
//                new mapping_activation_epoch (004:L81), in one transaction;
//   BARRIER      the handover vector, read from the stable log's ends (004:L83-84); normalizers
//                hold every source-topic record at or past it in that scope until the cutover ends
//                (the pause at the barrier, 004:L85);
//   SHADOW_READY the shadow state: the source topic's keyed copies in that scope, re-keyed onto the
//                main topic (event ids, actors, contents and source offsets, 004:L85), stored under
//                the idempotency key of 004:L89 with its digest;
//   ACTIVE       the scope's CAS (004:L86): one transaction checks the context version and the full
//                vector and epoch, advances mapping_activation_epoch, registers the run's mapping
//                version and marks the cutover ACTIVE; a refused CAS leaves the scope on the old
//                mapping (ABORTED). After it the shadow is handed to the main topic's aggregator as
//                keyed copies (idempotent by their source coordinates), then marked delivered.
// The parent run is COMPLETED only when every scope cutover is terminal and delivered (004:L86).
// After a crash the merger resumes every RUNNING run from its durable rows.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "impl/ports/log.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"
#include "impl/ranking/contract.h"
#include "impl/ranking/fixes.h"

namespace fl::ranking {

// cutover_next_offset per stable-log partition, as stored: "p:o,p:o" in partition order.
using HandoverVector = std::map<int32_t, int64_t>;
std::string encode_vector(const HandoverVector& v);
HandoverVector decode_vector(const std::string& text);  // {} for malformed text

// 004:L84: whether the stable record (p, o) is the new mapping's under `v` (a partition the vector
// does not name had no record at the barrier: all of it is new).
bool owned_by_new_chain(const HandoverVector& v, int32_t partition, int64_t offset);

struct Cutover {
  std::string merge_run_id, source_topic, main_topic, state;
  HandoverVector next_offset;
  int64_t epoch = 0;  // the mapping_activation_epoch the CAS installs
};

// A scope's mapping as its context row and cutover rows hold it.
struct ScopeMapping {
  std::string mapping_version = "map-v1";
  int64_t epoch = 1;
  std::vector<Cutover> cutovers;  // BARRIER, SHADOW_READY and ACTIVE ones
};
using MergeView = std::map<std::string, ScopeMapping>;  // by scope_id

// Reads the context and cutover rows of `scope` (every scope with a context row when empty) in one
// statement; nullopt when the DB did not answer. A scope without a context row is absent.
Task<std::optional<MergeView>> read_merge_view(Sql& sql, const std::string& scope = "");

// Where a record of `topic` at stable (p, o) goes in a scope: the main topic of an ACTIVE cutover
// whose vector gives it to the new chain, else `topic`; `held` is set when a cutover of that topic
// is still pending and the record is at or past its vector (it waits for the cutover's end).
std::string owner_topic(const ScopeMapping& m, const std::string& topic, int32_t partition, int64_t offset, bool* held);

struct MergeOptions {
  BoardConfig cfg;
  RankFixes fixes = RankFixes::spec();
  std::vector<std::string> scopes;  // the scopes a merge may cover
  int topics = 20;
  int max_merges = 2;       // merge runs in a scenario
  int max_scopes = 3;       // scopes per merge run (at least 1)
  int64_t interval_us = 0;  // mean gap between merge runs (0: none)
  int64_t stop_at_us = 0;   // no new run after this (unfinished ones are still driven)
  int64_t session_timeout_us = 6'000'000;
};

// Draws merge runs at random moments on random scopes and drives every RUNNING run to its end;
// never returns.
Task<void> run_merger(Runtime& rt, Sql& sql, Log& log, MergeOptions o);

}  // namespace fl::ranking
