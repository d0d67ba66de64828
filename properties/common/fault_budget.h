// FaultBudget: the judges' answer to "could an injected fault explain this degraded, alerted or
// indeterminate outcome?". Built from the world's fault log (sim/fault_log.h), never from what the
// service under test says about itself.
//
// Contract
// - A fault *touches* a place (a node or process name) over an interval:
//     crash .. restart of a process            down (until the restart, or the end of the run)
//     pause of a process                       [t, t + duration]
//     partition of a link                      [t, heal of that link or heal-all] on both ends
//     clog of a link                           [t, t + duration] on both ends
//     reset, clock jump, storage or Redis error, a lost message: the instant t (lost message: at
//     both the sender and the receiver)
//     clock drift                              from t to the end of the run
//     eviction of a key by Redis's maxmemory     the instant t, at eviction_place(key) only: an
//                                              eviction explains the loss of that key and of no
//                                              other, and no outcome of the node as a whole
//     late duplicate of a request              the instant the copy was sent, at the client and
//                                              the server it went to: an indeterminate answer
//                                              there is excusable (a server cannot tell which
//                                              copy came first), a wrong result never is (the
//                                              safety judges do not ask the budget about them)
// - explain(places, from, to, slack) returns, of the faults touching any of `places` whose
//   interval meets [from - slack, to], the one that started last, described for the verdict's
//   exemption reason; nullopt when none does (then the outcome is unexplained: a fault-free run
//   explains nothing). Whether an outcome is explained does not depend on which fault is named.
// - covered_us(places, from, to) returns how much of [from, to] the faults touching any of
//   `places` cover (the length of the union of their intervals clipped to it; an instant covers
//   nothing): a delay is explained by faults only as far as they lasted.
// - instant_in(places, from, to) returns the first instant fault (a lost message, a reset, an error)
//   touching any of `places` within [from, to], described; nullopt when none.
// - Deterministic; no allocation on the query path besides the returned description.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/fault_log.h"

namespace fl::props {

struct FaultSpan {
  std::string place;        // node or process name the fault touches
  int64_t from_us = 0;
  int64_t to_us = 0;        // inclusive
  std::string what;         // e.g. "crash of replica-1 at 5.210 s"
};

class FaultBudget {
 public:
  FaultBudget() = default;
  // `end_us`: the run's end; faults never healed last until then.
  FaultBudget(const sim::FaultLog& log, int64_t end_us);

  std::optional<std::string> explain(const std::vector<std::string>& places, int64_t from_us, int64_t to_us,
                                     int64_t slack_us = 0) const;
  int64_t covered_us(const std::vector<std::string>& places, int64_t from_us, int64_t to_us) const;
  std::optional<std::string> instant_in(const std::vector<std::string>& places, int64_t from_us, int64_t to_us) const;
  // The place an eviction of `key` touches (pass it to explain to excuse the loss of that key).
  static std::string eviction_place(const std::string& key) { return "evicted:" + key; }
  // True when the world injected any fault at all.
  bool any() const { return !spans_.empty(); }
  const std::vector<FaultSpan>& spans() const { return spans_; }

 private:
  void add(const std::string& place, int64_t from_us, int64_t to_us, const std::string& what);
  static bool touches(const FaultSpan& s, const std::vector<std::string>& places);
  void index();
  std::vector<FaultSpan> spans_;  // sorted by from_us (stable)
  // The spans of each place, as indices into spans_ (ascending), and the longest of them: explain
  // looks at the places it is asked about, newest first, and stops where no older span can reach.
  struct PlaceSpans {
    std::vector<size_t> spans;
    int64_t longest_us = 0;
  };
  std::map<std::string, PlaceSpans, std::less<>> by_place_;
};

}  // namespace fl::props
