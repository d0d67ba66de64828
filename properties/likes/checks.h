// The likes checkers: one per invariant family of docs/invariants.md (LIKE-1..LIKE-11) plus the
// degradation budget, each a pure function of a LikesRun (what the world observed) judged against
// model/likes and T(a) (properties/likes/truth.h). Evidence lists the history ops, server commands,
// commits and samples that show a violation (at most kVerdictEvidenceCap lines).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/likes/model.h"
#include "properties/common/fault_budget.h"
#include "properties/likes/run.h"
#include "properties/likes/truth.h"
#include "properties/verdict.h"

namespace fl::likes::props {

// Every checker, with its invariant ids and the seed section it comes from.
std::vector<PropertyInfo> likes_properties();

// The model of a run's history (like/unlike writes).
model::LikesModel build_model(const LikesRun& run);

// What several checkers derive from a run, derived once: the model, T(a)'s replay and the fault
// budget of the injected faults.
struct LikesFacts {
  explicit LikesFacts(const LikesRun& run)
      : model(build_model(run)), budget(run.faults, run.end_us), truth(run, budget) {
    for (const HistoryOp& h : run.history) by_id.emplace(h.id, &h);
  }
  model::LikesModel model;
  fl::props::FaultBudget budget;
  TruthTimeline truth;
  std::map<uint64_t, const HistoryOp*> by_id;  // the history by operation id
  // The operation with history id `id` (a fault record's cause); null when none (0: no operation).
  const HistoryOp* op(uint64_t id) const {
    auto it = by_id.find(id);
    return it == by_id.end() ? nullptr : it->second;
  }
};

Verdict check_uniqueness(const LikesRun& run, const LikesFacts& facts);          // LIKE-1
Verdict check_single_effect(const LikesRun& run, const LikesFacts& facts);       // LIKE-2
Verdict check_db_count(const LikesRun& run, const LikesFacts& facts);            // LIKE-3
Verdict check_cache_count(const LikesRun& run, const LikesFacts& facts);         // LIKE-4
Verdict check_non_negative(const LikesRun& run, const LikesFacts& facts);        // LIKE-5
Verdict check_durability(const LikesRun& run, const LikesFacts& facts);          // LIKE-6
Verdict check_per_user_order(const LikesRun& run, const LikesFacts& facts);      // LIKE-7
Verdict check_state_cache(const LikesRun& run, const LikesFacts& facts);         // LIKE-8
Verdict check_expiry_safety(const LikesRun& run, const LikesFacts& facts);       // LIKE-9
Verdict check_reconciliation(const LikesRun& run, const LikesFacts& facts);      // LIKE-10
Verdict check_idempotence(const LikesRun& run, const LikesFacts& facts);         // LIKE-11
Verdict check_degradation_budget(const LikesRun& run, const LikesFacts& facts);  // LIKE-6/8/9 budget

// Runs the named properties (empty = all). Unknown names give a failed verdict saying so.
std::vector<Verdict> check_likes(const LikesRun& run, const std::vector<std::string>& properties);

}  // namespace fl::likes::props
