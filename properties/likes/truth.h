// What the world observed, in the forms the likes checkers judge with:
//   TruthTimeline  T(a) = the number of asset_likes rows of a (INVARIANTS LIKE), as a step function
//                  of world time: the SQL server's committed row changes replayed from the empty
//                  table, re-based on every DB sample read back from the VFS, after the commits that
//                  sample saw (a commit the DB later lost, with synchronous NORMAL/OFF and a power
//                  loss, leaves the replay there).
//   counter_changes  every committed assets.like_count change, attributed to the row change that
//                  pays for it: one in the same request, else the most recent unpaid one of the same
//                  writer (process), asset and direction (the seed writes row and counter in two
//                  requests, 002:L238 and L245).
//   redis_deltas   every INCR/DECR of a count key, attributed to the (asset,user) whose state key
//                  the same request wrote (the seed pipelines SETNX+INCR, 002:L220-L223).
// Pure functions of a LikesRun; deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "model/likes/model.h"
#include "properties/common/fault_budget.h"
#include "properties/likes/run.h"

namespace fl::likes::props {

class TruthTimeline {
 public:
  // The DB's crashes (a power loss dates a lost commit) come from `budget`, built from run.faults.
  TruthTimeline(const LikesRun& run, const fl::props::FaultBudget& budget);
  explicit TruthTimeline(const LikesRun& run);  // builds that budget itself
  // T(a) at t (after every change at or before t).
  int64_t at(int64_t asset, int64_t t_us) const;
  // The values T(a) takes over [s, e], every value it passed through included (a DB resuming from a
  // pause commits many changes at one instant).
  model::Range over(int64_t asset, int64_t s_us, int64_t e_us) const;
  // The latest time at or before t at which T(a) changed from `value` to another value (when a
  // cached `value` became stale); nullopt when T(a) never held `value` before t.
  std::optional<int64_t> left_at(int64_t asset, int64_t value, int64_t t_us) const;
  // Whether the pair's asset_likes row was `present` at some instant of [s, e] (the replay, re-based
  // like T(a); unseen_loss says when it may not know yet): a state some change in [s, e] left, or
  // the state before s unless a change at s itself ended it.
  bool row_held(const Pair& p, bool present, int64_t s_us, int64_t e_us) const;
  // Whether the replay had to be re-based on a sample in [s, e] (the DB lost commits).
  bool rebased(int64_t s_us, int64_t e_us) const;
  // The first re-base after which the pair's row differs from the replay (a commit of it lost),
  // at or after s; nullopt when none.
  std::optional<int64_t> lost_at(const Pair& p, int64_t s_us) const;
  bool any_lost(int64_t asset, int64_t s_us, int64_t e_us) const { return last_lost(asset, s_us, e_us).has_value(); }
  // A loss of a commit of the asset dated at or before t and not yet seen at t (the replay still
  // holds the lost commit there: T(a) is unknown until the re-base), as its date; nullopt if none.
  std::optional<int64_t> unseen_loss(int64_t asset, int64_t t_us) const;
  // The latest loss of a commit of the asset dated in [s, e]; nullopt when none.
  std::optional<int64_t> last_lost(int64_t asset, int64_t s_us, int64_t e_us) const;

 private:
  void set(int64_t asset, int64_t t_us, int64_t value);
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> steps_;  // asset -> (time, T) ascending
  std::map<Pair, std::vector<std::pair<int64_t, bool>>> row_steps_;    // pair -> (time, row present after)
  std::vector<int64_t> rebases_;
  std::map<Pair, std::vector<int64_t>> lost_;                                  // pair -> re-base times that changed it
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> unseen_losses_;  // asset -> (dated, seen)
};

struct CounterChange {
  const DbChange* counter = nullptr;
  const DbChange* row = nullptr;          // the row change that pays for it; null: none does
  const DbChange* refused_row = nullptr;  // the same writer's latest refused row change (evidence)
  int64_t user() const { return row ? row->user : (refused_row ? refused_row->user : 0); }
};
std::vector<CounterChange> counter_changes(const LikesRun& run);

struct RedisDelta {
  const RedisWrite* write = nullptr;
  int64_t delta = 0;
  std::optional<int64_t> user;        // the state key written in the same request
  const RedisWrite* state = nullptr;  // that write
};
std::vector<RedisDelta> redis_deltas(const LikesRun& run);

}  // namespace fl::likes::props
