// The combo reference model (INVARIANTS.md, COMBO): the windows a run's purchases form by the
// definition (000:L39, L81, L302), judged from what the clients saw. Independent of impl/combo:
// it knows the definition of a window, never how a service chose one.
//
// Definitions
// - Key = (activity, user, item_id). A purchase is known by its DB row id (pid).
// - A purchase's real time t is uncertain: it happened somewhere in [lo_us, hi_us] (the client's
//   invocation and completion; hi_us = the run's end when the client never learnt the outcome).
//   An `optional` purchase (answered alerted or indeterminate) may never have reached Redis: the
//   search may leave it out of every window.
// - A window opens at the first purchase f of a key not inside an open window and holds every
//   purchase of the key with t < t_f + window_ms. Windows of a key are therefore a partition of
//   its purchases into groups with opening times T_1 < T_2 < ... where T_{j+1} >= T_j + window_ms
//   and every member m of group j has t_m in [T_j, T_j + window_ms). A Redis data loss at L
//   (FitOptions::cuts) may end a window early: if T_j < L < T_j + window_ms and every member
//   of group j has t_m < L, then T_{j+1} >= L suffices. A clock that times windows jumping
//   forward by J at tj while group j is open (FitOptions::jumps) may end it J early: T_{j+1} >=
//   max(tj, min lo of its members + window_ms) suffices. For a fixed group, the
//   feasible T form one interval: [max(min lo, max lo - window_ms + 1us), min hi].
// - fit_windows() searches (backtracking, per key) for times in the intervals whose windows
//   explain every observed record: a record (id, quantity, created_at) matches a window when
//   id = min pid, quantity = Σ qty and created_at = the first row's. A record is paired with its
//   first row by (id, created_at): a DB power loss may hand a pid out again, to the same key too. With `publish_us` and the
//   early/late bounds, a record must also have been published in [T + window, T + window + late].
//   Windows without a record are allowed (loss is judged by quantity, not here).
// - intended_windows(): the definition applied to purchases taken at their earliest time lo_us.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fl::model::combo {

struct Key {
  int64_t activity = 0, user = 0, item_id = 0;
  auto operator<=>(const Key&) const = default;
  std::string describe() const;
};

struct Purchase {
  int64_t pid = 0;
  Key key;
  int64_t qty = 0;
  int64_t created_at_ms = 0;
  int64_t lo_us = 0, hi_us = INT64_MAX;
  bool optional = false;  // may have missed Redis (answered alerted / indeterminate)
};

// A record some observer saw for a key: published on the channel, displayed, or polled.
struct ObservedRecord {
  int64_t id = 0, quantity = 0, created_at_ms = 0;
  int64_t publish_us = -1;  // when Redis executed its PUBLISH (-1: not a publish, no timing)
  std::string what;         // for evidence
  // Loose: evidence only that the window holding its id was published; its content, time and
  // whether its id is the window's first are not judged (e.g. a record of a window that lived
  // through a Redis data loss, re-published from partly restored state).
  bool loose = false;
  int64_t slack_us = 0;  // the publish time may be this far off (a clock fault timed its window)
};

struct FitOptions {
  int64_t window_ms = 3000;
  bool early = false;                  // a record's publish is >= its window's end
  std::optional<int64_t> late_us;      // a record's publish is <= window end + late
  bool all_certain_published = false;  // every window holding a non-optional purchase has a record
  // Redis data losses (a restart that may lose acknowledged writes): a window open at `at_us`
  // whose lock was written at or after `from_us` (within the loss's reach) may end there, its lock
  // gone with the data, and the next window of the key may open at any later time, not only
  // window_ms after the first.
  struct Cut {
    int64_t from_us = 0, at_us = 0;
  };
  std::vector<Cut> cuts;
  // Forward jumps of a clock that may time windows (a lock's TTL on Redis's clock): a jump by
  // `by_us` at `at_us` ends the window open then up to by_us early, never before at_us. Purchase
  // times near the jump are widened by its size (the caller); a window opened after it lasts the
  // full window again. So the window open at the jump may end at the earliest time its members
  // allow it to have opened (min lo, widened) + window_ms, not only window_ms after the opening
  // the window before it forces; the next window may open from there.
  struct Jump {
    int64_t at_us = 0, by_us = 0;
  };
  std::vector<Jump> jumps;
  int64_t budget = 200'000;  // search steps before giving up (inconclusive)
};

struct Window {
  std::vector<int64_t> pids;  // ascending
  int64_t min_pid = 0, qty = 0;
  int64_t t_lo_us = 0, t_hi_us = 0;  // feasible opening times
  int record = -1;                   // index of the matched record, -1: none
};

struct Fit {
  bool found = false;
  bool inconclusive = false;      // budget exhausted before an answer
  std::vector<Window> windows;    // the first consistent assignment found (time order)
  std::vector<int64_t> absent;    // optional purchases left out of every window
  int cut_windows = 0;            // windows the assignment ends early at a Redis data loss
  std::vector<size_t> jump_ends;  // per window the assignment ends early at a forward clock jump: the
                                  // index of that jump in FitOptions::jumps
};

// `purchases` and `records` of ONE key.
Fit fit_windows(const std::vector<Purchase>& purchases, const std::vector<ObservedRecord>& records,
                const FitOptions& o);

// Windows per the definition, over purchases ordered by lo_us (their earliest possible time).
std::vector<std::vector<int64_t>> intended_windows(const std::vector<Purchase>& purchases, int64_t window_ms);

}  // namespace fl::model::combo
