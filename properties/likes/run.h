// LikesRun: everything the likes checkers read about one finished run, as plain data — the client
// history, the effect log of the replicas, periodic samples of Redis and the DB taken during the
// run, the final state after the quiescent tail, and the windows after Redis restarts.
// The harness adapter (harness/systems/likes.cc) fills it; tests build it by hand.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "impl/likes/messages.h"
#include "impl/ports/history.h"

namespace fl::likes::props {

using Pair = std::pair<int64_t, int64_t>;  // (asset, user)

struct HistoryOp {
  uint64_t id = 0;
  std::string process;
  std::string op;      // like | unlike | count | state
  std::string args;    // "asset=A user=U req=R"
  int64_t invoke_us = 0;
  int64_t complete_us = -1;  // -1: never completed (read as info)
  Outcome outcome = Outcome::kInfo;
  std::string result;  // ok | already | count=N | state=S | error text
  std::string describe() const;
};

struct EffectRecord {
  Effect effect;
  int64_t start_us = 0;   // world time the write was sent
  int64_t end_us = 0;     // world time its reply was seen
  std::string process;
};

struct StoreSnapshot {
  int64_t time_us = 0;
  bool redis_up = true;
  std::map<int64_t, std::optional<int64_t>> redis_count;  // per asset; nullopt = nil
  std::map<Pair, std::string> redis_state;                 // present state keys only
  bool db_read = true;                                     // false: the DB could not be read
  std::map<int64_t, int64_t> db_like_count;                // assets.like_count
  std::map<Pair, int64_t> db_rows;                         // asset_likes rows per pair
  int64_t rows_of(int64_t asset) const;
};

struct LikesRun {
  std::vector<HistoryOp> history;
  std::vector<EffectRecord> effects;
  std::vector<StoreSnapshot> samples;  // during the run
  StoreSnapshot final_state;           // after the quiescent tail
  // [start, end) windows in which cached values may be stale because Redis restarted (from the
  // restart until the system could repair the cache for one reconciliation period, see
  // GraceTracker). Reads and samples inside are not judged.
  std::vector<std::pair<int64_t, int64_t>> redis_grace;
  bool in_grace(int64_t s_us, int64_t e_us) const;
};

// Computes LikesRun::redis_grace from the sampler's observations.
//
// A Redis restart may roll cached values back (AOF everysec, snapshots): values acknowledged
// just before the crash are gone, and only a repair — a reconciliation pass, which reads the DB
// and writes Redis — brings them back. The invariants allow that staleness for one
// reconciliation period (INVARIANTS LIKE-4 "after one reconciliation period"), but a period can
// only repair when a repair is possible: Redis and the DB both up and reachable from a live
// replica. So a window opens at the sample before a restart is seen and closes only after
// `repair_us` (a reconciliation period plus its timeouts) of continuous repairable samples;
// another restart while a window is open extends it. A cache that stays stale after such a
// stretch is still judged (and fails).
class GraceTracker {
 public:
  explicit GraceTracker(int64_t repair_us, int64_t start_us = 0);
  // One sample at now_us: `restarted` = Redis restarted since the previous sample;
  // `repairable` = Redis, the DB and at least one replica are up and connected right now.
  // REQUIRES: now_us does not decrease.
  void on_sample(int64_t now_us, bool restarted, bool repairable);
  // The closed windows, plus the open one (if any) up to end_us.
  std::vector<std::pair<int64_t, int64_t>> windows(int64_t end_us) const;

 private:
  int64_t repair_us_;
  int64_t last_sample_us_;
  std::optional<int64_t> open_start_us_;
  std::optional<int64_t> repairable_since_us_;
  std::vector<std::pair<int64_t, int64_t>> closed_;
};

}  // namespace fl::likes::props
