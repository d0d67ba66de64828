// How far the injected faults reach on the gifts' way, as the gifts judges weigh them. Every
// question goes to a FaultBudget (properties/common/fault_budget.h), and each answer is bounded by
// what the fault could do there:
// - a pause, an outage, a clog that held a message, a partition that lost one: it holds what passes
//   through its places for its duration, a link's only when both its ends are on the way; a crash
//   of a push service holds the log partitions it consumed until the log's group evicts it (the
//   session timeout by the broker's clock), even when it restarts sooner;
// - a refused call of a push service (an error reply, an I/O error, a lost request or reply, a
//   broken call) that carried a message of the gift's combo key: its caller tries again, which
//   holds what it carried for at most the scenario's timer slack;
// - a clock jump or drift: it moves the ages a node stamps or judges by the node's clock offset,
//   in its direction, never more (FaultBudget::clock);
// - a lost message: it excuses the copy it lost, which its record names (the message's text);
// - a room without viewers: it hides only the batches that could be pushed at those instants.
// Deterministic; ordered containers only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/gifts/model.h"
#include "properties/common/fault_budget.h"
#include "properties/gifts/run.h"

namespace fl::gifts::props {

// A gift message as the network carried it (003:L25-33 in impl's wire form
// `msgId|roomId|senderId|giftId|giftCount|timestamp|seq`; a push to a gateway adds ` to u1 u2`).
struct WireGift {
  std::string msg_id, room, gift;
  int64_t sender = 0, count = 0, ts_ms = 0, seq = 0;
  std::vector<int64_t> users;  // a push to a gateway: the users it was for
};
// The gift message a fault record names ("service: text"), or nullopt when it names another.
std::optional<WireGift> wire_gift(const std::string& message);

// A copy of a pushed gift message that the network lost before it reached a viewer.
struct LostCopy {
  int64_t time_us = 0;
  std::string to;  // the process it was for: a gateway (a push) or a viewer (a forward)
  WireGift msg;
  std::string what;  // the loss, described
};

// One charged gift between the log and the viewers.
struct Flight {
  int64_t born_us = 0;     // the invocation of the attempt that charged it: its message is stamped later
  int64_t append_us = -1;  // its first append to the log; -1: it never reached the log
  int64_t to_us = 0;       // the latest a push point could push it (past it every judge sees it expired)
  int64_t held_us = 0;     // how long faults on its push path held it before to_us
  std::string held_by;     // the latest of those faults, described ("" when none)
  // Why the 10 s expiry (003:L199-202) may have dropped it where it was judged; nullopt when the
  // world shows it could not have.
  std::optional<std::string> expiry;
};

// Who was in a room when: from a successful connect's completion to the viewer's next connect's
// invocation (viewers switch rooms, 003:L193), or to the crash of the gateway it joined through.
struct Presence {
  std::string viewer;
  std::string gateway;
  int64_t from_us = 0, to_us = 0;
};

// A node set's clock offsets over an interval (FaultBudget::clock): the least and the greatest
// local - world among them, and what moved them.
struct Skew {
  int64_t min_us = 0, max_us = 0;
  std::string what;
};

class GiftReach {
 public:
  // A call of a push service that the world refused or lost, and the text of what it carried.
  struct Refusal {
    int64_t time_us = 0;
    std::string text;
    std::string what;
  };

  explicit GiftReach(const GiftsRun& run);

  const fl::props::FaultBudget& budget() const { return budget_; }

  // The gift's flight after the log. Without faults a push service reads it at once and a combo
  // window holding it closes within the window (003:L105) and the push path's ticks: normal =
  // window + push_tick after its append. Faults on its push path (the push services, the log, Redis, the DB, the
  // gateways of its room's viewers) hold it by the time they cover from append - normal on, and
  // each refused call that carried a message of its combo key by the timer slack. The expiry may
  // drop it iff it can still be unjudged when its age, on the stamping clock (the gift service that
  // charged it, 003:L31, or a push service that stamped a batch holding it) and a judging clock (a
  // push service, a gateway of its room), can pass the expiry.
  Flight flight(const model::ChargedGift& g) const;

  // The clock offsets of `nodes` over [from, to].
  Skew skew(const std::vector<std::string>& nodes, int64_t from_us, int64_t to_us) const;

  const std::vector<LostCopy>& lost_copies() const { return lost_; }
  // The push services' calls the world refused or lost, in time order.
  const std::vector<Refusal>& refusals() const { return refusals_; }
  // Whether `copy` was on its way to `viewer` (user id `user`): to it, or to a gateway for it.
  static bool lost_for(const LostCopy& copy, const std::string& viewer, int64_t user);

  const std::vector<Presence>& presence(const std::string& room) const;
  // The first instant of [from, to] at which no viewer was in `room`; nullopt if there was none.
  std::optional<int64_t> unwatched_at(const std::string& room, int64_t from_us, int64_t to_us) const;

  // The crash instants of `process`, in time order.
  std::vector<int64_t> crashes(const std::string& process) const;

 private:
  void collect_lost_copies();
  void collect_spans();
  void collect_presence();
  int64_t evicted_at(int64_t down_us) const;
  // How long faults on `path` and refusals of g's key held g within [from, to].
  int64_t held(const model::ChargedGift& g, const std::vector<std::string>& path, int64_t from_us, int64_t to_us) const;
  // The latest a push point can hold g, starting from `start`, faults included, capped at `cap`.
  int64_t reach_until(const model::ChargedGift& g, const std::vector<std::string>& path, int64_t from_us,
                      int64_t start_us, int64_t cap_us) const;

  const GiftsRun& run_;
  fl::props::FaultBudget budget_;
  std::vector<LostCopy> lost_;
  std::vector<Refusal> refusals_;
  // The budget's spans, and each push service's crash stretched to its eviction from the log's
  // consumer group (its partitions wait until then), in start order.
  std::vector<fl::props::FaultSpan> spans_;
  std::map<model::GiftKey, std::vector<std::string>> key_msgs_;  // combo key -> its orders' msgIds
  std::map<std::string, std::vector<Presence>> presence_;        // room -> who was in it when
};

// The viewers' connect and deliver operations, per process, in invocation order.
std::map<std::string, std::vector<const HistoryOp*>> viewer_ops(const GiftsRun& run);

// Run time (from the simulation's epoch) or a duration, in seconds.
std::string secs(int64_t us);

}  // namespace fl::gifts::props
