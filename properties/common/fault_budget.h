// FaultBudget: the judges' one answer to "which injected faults touched this, and by how much?".
// Built from the world's fault log (sim/fault_log.h) only, never from what the service under test
// says about itself. Judges read faults through it and nowhere else (a test greps properties/).
//
// Reach: a fault excuses an outcome only where it touched it, and only as far as it can reach.
// - Durations (explain, covered_us): a fault that held a place for a while.
//     crash .. restart of a process        the process and its node, until the restart (or the end)
//     pause of a process for d > 0         the process and its node over [t, t + d]
//     partition of a link                  both ends, [t, heal], only if it lost a message: a
//                                          partition of nodes that never talk reaches nothing
//     clog of a link for d                 both ends, [t, t + d], only if it held a message back
//   A 0 ms pause, an idle clog and a silent partition are in no span.
// - Instants (instant_in): at the processes they name, at their instant: a lost message (sender
//   and receiver), a broken or refused call (caller and server), a reset, an error reply of Redis,
//   an I/O error of the storage, a late duplicate (client and server).
// - Operations (touched, held_us): a record that names an operation as its cause (a lost message,
//   a broken call, an error reply, an I/O error of one of its statements, its events held by a pause
//   or its messages by a clog, a late copy of its request) touched that operation and only it.
// - Clocks (clock_offset_us, clock_error_us): jumps and drifts move a node's clock and nothing
//   else; they are never spans. A drift of p ppm moves the clock by |p| x elapsed, a jump by its
//   size from its instant on: 0 ppm and 0 ms move nothing.
// - Keys: an eviction touches its key only (eviction_place).
// Deterministic; the query paths allocate nothing but the returned descriptions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/fault_log.h"

namespace fl::props {

struct FaultSpan {
  std::string place;  // node or process name the fault touches
  int64_t from_us = 0;
  int64_t to_us = 0;  // inclusive; from_us == to_us for an instant
  std::string what;   // e.g. "crash of replica-1 at 5.210 s"
  std::string peer;   // a link's span: the node at its other end ("" for a process's own fault)
};

// A node's clock over a world interval: how far it is from world time, and what moved it.
struct ClockReach {
  int64_t max_abs_offset_us = 0;  // max |local - world| over the interval
  int64_t error_us = 0;           // max |offset(t) - offset(s)| over s, t in the interval: how much a
                                  // duration measured on this clock inside it can be off
  int64_t min_offset_us = 0;      // the least and the greatest local - world over the interval (a
  int64_t max_offset_us = 0;      // clock behind makes what it stamps or judges look older or younger)
  int64_t max_fall_us = 0;        // the most the offset fell from an earlier to a later instant of the
                                  // interval (a jump back, a slow drift): how much longer in world time
                                  // a duration measured on this clock inside it can last
  std::string what;               // the jumps and drifts that moved it ("" when none did)
};

class FaultBudget {
 public:
  FaultBudget() = default;
  // `end_us`: the run's end; faults never healed last until then.
  FaultBudget(const sim::FaultLog& log, int64_t end_us);

  // Of the duration faults touching any of `places` whose span meets [from - slack, to], the one
  // that started last, described; nullopt when none does (a fault-free run explains nothing).
  std::optional<std::string> explain(const std::vector<std::string>& places, int64_t from_us, int64_t to_us,
                                     int64_t slack_us = 0) const;
  // How much of [from, to] the duration faults touching `places` cover (their union, clipped).
  int64_t covered_us(const std::vector<std::string>& places, int64_t from_us, int64_t to_us) const;
  // The first instant fault touching any of `places` within [from, to], described.
  std::optional<std::string> instant_in(const std::vector<std::string>& places, int64_t from_us, int64_t to_us) const;
  // The instant faults touching any of `places` within [from, to] (their records), in time order.
  std::vector<const sim::FaultRecord*> instants(const std::vector<std::string>& places, int64_t from_us,
                                                int64_t to_us) const;
  // The first record that names operation `op` (a history id) as its cause, described.
  std::optional<std::string> touched(uint64_t op) const;
  // How long the operation's events or messages were held back by pauses and clogs, in all.
  int64_t held_us(uint64_t op) const;
  // Every record that names operation `op` as its cause, in time order (empty for 0): for a judge
  // that must know which of them hit a given message or when (touched() names only the first).
  std::vector<const sim::FaultRecord*> naming(uint64_t op) const;
  // `node`'s clock over [from, to] (see ClockReach).
  ClockReach clock(const std::string& node, int64_t from_us, int64_t to_us) const;
  // local - world on `node` at world time t.
  int64_t clock_offset_us(const std::string& node, int64_t t_us) const;
  // `node`'s clock at world time t as a reader that never lets it go back sees it (a broker's or a
  // timer's clock: a jump back freezes it until the clock catches up): the largest local time at or
  // before t. A fault-free node reads t.
  int64_t monotonic_clock_us(const std::string& node, int64_t t_us) const;
  // The crashes of `process`, as (down, up) in world time (up: its restart, or the run's end).
  std::vector<std::pair<int64_t, int64_t>> downtimes(const std::string& process) const;
  // The records of one kind, in time order (for judges that weigh one kind of fault by its own
  // rule, e.g. evictions by key).
  std::vector<const sim::FaultRecord*> records(sim::FaultKind kind) const;

  // The Redis nodes' refusal windows (an injected -BUSY or -LOADING refuses every command for a
  // while, -OOM or -READONLY every write), as spans at the Redis process, in time order. Not among
  // spans(): a judge adds them where the outcome it weighs needed Redis to accept writes.
  const std::vector<FaultSpan>& refusal_windows() const { return refusal_windows_; }

  // The place an eviction of `key` touches (pass it to instant_in to excuse the loss of that key).
  static std::string eviction_place(const std::string& key) { return "evicted:" + key; }
  // True when the world injected any fault at all (a fault-free run explains nothing).
  bool any() const { return !log_.empty(); }
  const std::vector<FaultSpan>& spans() const { return spans_; }
  int64_t end_us() const { return end_us_; }

 private:
  void add_span(const std::string& place, int64_t from_us, int64_t to_us, const std::string& what,
                const std::string& peer = "");
  void add_instant(const std::string& place, size_t record);
  void build_spans(int64_t end_us);
  bool link_hit(const std::string& a, const std::string& b, int64_t from_us, int64_t to_us, sim::FaultKind kind,
                const char* detail) const;
  void index();
  static bool touches(const std::string& place, const std::vector<std::string>& places);

  sim::FaultLog log_;
  int64_t end_us_ = 0;
  std::vector<FaultSpan> spans_;  // durations, sorted by from_us (stable)
  std::vector<FaultSpan> refusal_windows_;
  // Instants: (place, record index), in time order.
  std::vector<std::pair<std::string, size_t>> instants_;
  std::map<uint64_t, std::vector<size_t>> by_cause_;                       // operation -> its records
  std::map<std::string, std::vector<size_t>, std::less<>> clock_records_;  // node -> its jumps and drifts
  // The spans of each place, as indices into spans_ (ascending), and the longest of them: explain
  // looks at the places it is asked about, newest first, and stops where no older span can reach.
  struct PlaceSpans {
    std::vector<size_t> spans;
    int64_t longest_us = 0;
  };
  std::map<std::string, PlaceSpans, std::less<>> by_place_;
};

}  // namespace fl::props
