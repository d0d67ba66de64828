#include "properties/gifts/checks.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>

#include "properties/common/fault_budget.h"
#include "sim/node_clock.h"

namespace fl::gifts::props {
namespace {

using model::arg_int;
using model::parse_args;

// Run time (from the simulation's epoch) or a duration, in seconds.
std::string secs(int64_t us) {
  if (us >= sim::kEpochUs) us -= sim::kEpochUs;
  char b[32];
  std::snprintf(b, sizeof b, "%.3f s", static_cast<double>(us) / 1e6);
  return b;
}


// A questionable outcome is exempted when an injected fault explains it (`why`), else it fails.
void exempt_or_fail(Verdict& v, const std::optional<std::string>& why, const std::string& exemption,
                    std::string failure) {
  if (why) {
    v.exempt(exemption + ": " + *why);
  } else {
    fail_verdict(v, std::move(failure));
  }
}

std::string describe(const HistoryOp& o) {
  return o.process + " " + o.op + " " + o.args + " @" + secs(o.invoke_us) + " -> " +
         (o.complete_us < 0 ? std::string("(open)") : o.result + " @" + secs(o.complete_us));
}

// (user, request) -> its order rows.
std::map<std::pair<int64_t, std::string>, std::vector<const model::Order*>> orders_by_request(const GiftsRun& run) {
  std::map<std::pair<int64_t, std::string>, std::vector<const model::Order*>> out;
  for (const model::Order& o : run.orders) out[{o.user, o.request_id}].push_back(&o);
  return out;
}

std::vector<const HistoryOp*> ops_named(const GiftsRun& run, const std::string& op) {
  std::vector<const HistoryOp*> out;
  for (const HistoryOp& o : run.history) {
    if (o.op == op) out.push_back(&o);
  }
  return out;
}

// The viewers' connect and deliver operations, per process, in invocation order.
std::map<std::string, std::vector<const HistoryOp*>> viewer_ops(const GiftsRun& run) {
  std::map<std::string, std::vector<const HistoryOp*>> out;
  for (const HistoryOp& o : run.history) {
    if (o.op == "connect" || o.op == "deliver") out[o.process].push_back(&o);
  }
  return out;
}

// A link fault (clog, partition, lost message) touching `viewer` over [from, to].
std::optional<std::string> last_hop_delay(const GiftsRun& run, const std::string& viewer, int64_t from_us, int64_t to_us) {
  for (const sim::FaultRecord& f : run.faults) {
    const bool link = f.kind == sim::FaultKind::kClog || f.kind == sim::FaultKind::kPartition ||
                      f.kind == sim::FaultKind::kMessageLost;
    const bool touches = f.process == viewer || f.peer_process == viewer || f.node == viewer || f.peer_node == viewer;
    const int64_t end = f.kind == sim::FaultKind::kPartition ? run.end_us : f.time_us + f.duration_us;
    if (link && touches && f.time_us <= to_us && end >= from_us) return f.describe();
  }
  return std::nullopt;
}

bool dropped_below_expected(const HistoryOp& o) { return o.result == "dropped:seq-below-expected"; }

bool db_unreadable(const GiftsRun& run, Verdict& v) {
  if (run.db_read) return false;
  fail_verdict(v, "the DB could not be read back after the run");
  return true;
}

}  // namespace

std::vector<PropertyInfo> gifts_properties() {
  return {
      {"gift-charge-once", {"GIFT-1"}, "at most one debit and one gift_order per (user, requestId) (003 §2)"},
      {"gift-intent-once", {"GIFT-2"}, "a double tap (one intent, 003:L41) is at most one charge"},
      {"gift-outcome", {"GIFT-3"}, "a retry gets the original outcome, never 重复请求 for an uncharged request (003:L55)"},
      {"gift-outbox", {"GIFT-4"}, "each order has exactly one outbox row, and every row ends SENT (003 §7)"},
      {"gift-delivery", {"GIFT-5"}, "every viewer online throughout plays each charged gift's count exactly once (003 §1)"},
      {"gift-batch-conservation", {"GIFT-6"}, "Σ pushed batch counts = Σ charged per (room, sender, gift) (003 §4)"},
      {"gift-lock", {"GIFT-7"}, "the combo read-modify-flush runs under the lock or atomically (003:L113-133)"},
      {"gift-play-once", {"GIFT-8"}, "each msgId is played at most once per client (003 §3)"},
      {"gift-play-order", {"GIFT-9"}, "plays in increasing seq; a received message plays within T_gap (003 §5)"},
      {"gift-expiry", {"GIFT-10"}, "no client receives a message older than 10 s; expiry keeps the order (003 §6)"},
      {"gift-reconnect", {"GIFT-11"}, "after (re)connecting, nothing following the baseline seq is dropped (003:L206)"},
  };
}

// GIFT-1: one row per (user, request) and each wallet debited exactly by its orders.
Verdict check_charge_once(const GiftsRun& run) {
  Verdict v = passing_verdict("gift-charge-once", {"GIFT-1"},
                   "per (user, requestId) at most one gift_order row, and initial - final balance = Σ order amounts");
  if (db_unreadable(run, v)) return v;
  for (const auto& [key, rows] : orders_by_request(run)) {
    ++v.checks;
    if (rows.size() > 1) fail_verdict(v, "user " + std::to_string(key.first) + " request " + key.second + ": " +
                                     std::to_string(rows.size()) + " orders");
  }
  std::map<int64_t, int64_t> spent;
  for (const model::Order& o : run.orders) spent[o.user] += o.amount;
  for (const auto& [user, balance] : run.balances) {
    ++v.checks;
    const int64_t debited = run.params.initial_balance - balance;
    if (debited != spent[user]) {
      fail_verdict(v, "user " + std::to_string(user) + ": wallet debited " + std::to_string(debited) + ", orders total " +
                  std::to_string(spent[user]));
    }
  }
  return v;
}

// GIFT-2: the requests of one intent (the user's one click, or one double tap) make <= 1 order.
Verdict check_intent_once(const GiftsRun& run) {
  Verdict v = passing_verdict("gift-intent-once", {"GIFT-2"}, "the requests of one intent (a double tap) charge at most once");
  if (db_unreadable(run, v)) return v;
  std::map<std::pair<int64_t, std::string>, std::set<std::string>> requests;  // (user, intent) -> requests
  for (const HistoryOp* o : ops_named(run, "send")) {
    const auto a = parse_args(o->args);
    requests[{arg_int(a, "user"), a.count("intent") ? a.at("intent") : ""}].insert(a.count("req") ? a.at("req") : "");
  }
  const auto by_request = orders_by_request(run);
  for (const auto& [intent, reqs] : requests) {
    size_t charges = 0;
    for (const std::string& r : reqs) {
      auto it = by_request.find({intent.first, r});
      if (it != by_request.end()) charges += it->second.size();
    }
    ++v.checks;
    if (charges > 1) {
      fail_verdict(v, "user " + std::to_string(intent.first) + " intent " + intent.second + ": " + std::to_string(reqs.size()) +
                  " requests, " + std::to_string(charges) + " charges");
    }
  }
  return v;
}

// GIFT-3: answers match the request's fate; indeterminate answers need a fault to explain them.
Verdict check_outcome(const GiftsRun& run) {
  Verdict v = passing_verdict("gift-outcome", {"GIFT-3"},
                   "a charged request is answered with its order id, an uncharged one never ok nor 重复请求; "
                   "indeterminate answers only under a fault");
  if (db_unreadable(run, v)) return v;
  const auto by_request = orders_by_request(run);
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  for (const HistoryOp* o : ops_named(run, "send")) {
    if (o->complete_us < 0) continue;
    const auto a = parse_args(o->args);
    auto it = by_request.find({arg_int(a, "user"), a.count("req") ? a.at("req") : ""});
    const model::Order* order = it == by_request.end() ? nullptr : it->second.front();
    ++v.checks;
    // No answer from the service (timeout, reset, nobody serving, or its own error): degraded.
    if (o->outcome == Outcome::kInfo || o->result == "error" || o->result == "unavailable") {
      std::vector<std::string> places = run.charge_path;
      places.push_back(o->process);
      exempt_or_fail(v, budget.explain(places, o->invoke_us, o->complete_us, 500'000), "indeterminate answer",
                   "indeterminate answer without any fault: " + describe(*o));
    } else if (order != nullptr && o->result != "order=" + std::to_string(order->id)) {
      fail_verdict(v, "request charged as order " + std::to_string(order->id) + " but answered: " + describe(*o));
    } else if (order == nullptr && (o->outcome == Outcome::kOk || o->result == "duplicate")) {
      fail_verdict(v, "request never charged but answered: " + describe(*o));
    }
  }
  return v;
}

namespace {

// The msgId of a log record's value (`msgId|roomId|...`, impl's GiftMsg encoding of 003:L25-33).
std::string record_msg_id(const LogRecordObs& r) { return r.value.substr(0, r.value.find('|')); }

// How far the broker's clock (the log node's, which never goes back: a jump back freezes it)
// advanced over [from, to] of world time, under the clock jumps the swarm injected on the log.
// nullopt when a drift hit the log node (not modelled here).
std::optional<int64_t> broker_clock_advance(const GiftsRun& run, int64_t from_us, int64_t to_us) {
  std::vector<std::pair<int64_t, int64_t>> jumps;  // (world time, delta)
  for (const sim::FaultRecord& f : run.faults) {
    if (f.node != "log" && f.process != "log") continue;
    if (f.kind == sim::FaultKind::kClockDrift) return std::nullopt;
    if (f.kind == sim::FaultKind::kClockJump) jumps.push_back({f.time_us, f.value});
  }
  auto broker_at = [&](int64_t t) {  // running max of world time + the jumps so far
    int64_t offset = 0, best = INT64_MIN;
    for (const auto& [at, delta] : jumps) {
      if (at > t) break;
      best = std::max(best, at + offset);  // the clock just before this jump
      offset += delta;
    }
    return std::max(best, t + offset);
  };
  return broker_at(to_us) - broker_at(from_us);
}

// GIFT-4 under transactional messages (003:L225-231): the message table is the log itself. Each
// committed order's message reaches the log exactly once, and no message reaches it without its
// order (a half message whose local transaction rolled back is deleted, 003:L231).
Verdict check_txmsg(const GiftsRun& run) {
  Verdict v = passing_verdict("gift-outbox", {"GIFT-4"},
                   "transactional messages: each gift_order's msg_id is in the log exactly once, and each log "
                   "record's msg_id belongs to an order");
  if (db_unreadable(run, v)) return v;
  std::map<std::string, int> records;
  for (const LogRecordObs& r : run.log) ++records[record_msg_id(r)];
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  // A fault still active at the end (a long pause of every gift service) can hold a half unresolved.
  const std::optional<std::string> lingering = budget.explain(run.charge_path, run.end_us - 1000, run.end_us);
  std::set<std::string> order_msgs;
  std::map<std::string, int64_t> commit_at;  // msgId -> its charge's commit
  for (const model::ChargedGift& g : charged_gifts(run)) commit_at[g.order.msg_id] = g.commit_us;
  for (const model::Order& o : run.orders) {
    order_msgs.insert(o.msg_id);
    ++v.checks;
    const int n = records[o.msg_id];
    const int64_t committed = commit_at.count(o.msg_id) ? commit_at.at(o.msg_id) : -1;
    const std::optional<int64_t> advance = committed < 0 ? std::nullopt : broker_clock_advance(run, committed, run.end_us);
    if (n == 0 && lingering) {
      v.exempt("order " + std::to_string(o.id) + "'s half message unresolved while a fault lasts past the end: " +
               *lingering);
    } else if (n == 0 && advance && *advance < run.params.half_check_us) {
      // An unresolved half is checked back once old enough by the broker's clock; a clock jump
      // back on the log kept it too young until the end (explore-hardened-txmsg seed 3740).
      v.exempt("order " + std::to_string(o.id) + "'s half message never old enough for a check-back: the log's clock "
               "advanced " + secs(*advance) + " after its commit (clock jumps on the log)");
    } else if (n != 1) {
      fail_verdict(v, "order " + std::to_string(o.id) + " (" + o.msg_id + ") has " + std::to_string(n) + " log records");
    }
  }
  for (const auto& [msg_id, n] : records) {
    ++v.checks;
    if (!order_msgs.count(msg_id)) fail_verdict(v, "log record " + msg_id + " has no order (its charge never committed)");
  }
  return v;
}

}  // namespace

// GIFT-4: order <-> outbox one to one; every outbox row SENT at the end.
Verdict check_outbox(const GiftsRun& run) {
  if (run.params.txmsg) return check_txmsg(run);
  Verdict v = passing_verdict("gift-outbox", {"GIFT-4"},
                   "each gift_order has exactly one outbox_message (its msg_id), each outbox row belongs to an "
                   "order, and every row is SENT at the end");
  if (db_unreadable(run, v)) return v;
  std::map<std::string, int> outbox_rows;
  for (const OutboxRow& r : run.outbox) ++outbox_rows[r.msg_id];
  std::set<std::string> order_msgs;
  for (const model::Order& o : run.orders) {
    order_msgs.insert(o.msg_id);
    ++v.checks;
    if (outbox_rows[o.msg_id] != 1) {
      fail_verdict(v, "order " + std::to_string(o.id) + " (" + o.msg_id + ") has " + std::to_string(outbox_rows[o.msg_id]) +
                  " outbox rows");
    }
  }
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  // A fault still active when the run ends (a long pause or clog) can hold a row PENDING.
  const std::optional<std::string> lingering = budget.explain(run.services, run.end_us - 1000, run.end_us);
  for (const OutboxRow& r : run.outbox) {
    ++v.checks;
    if (!order_msgs.count(r.msg_id)) fail_verdict(v, "outbox row " + r.msg_id + " has no order (a second charge's message)");
    if (r.status == "SENT") continue;
    if (lingering) {
      v.exempt("row left " + r.status + " while a fault lasts past the end: " + *lingering);
    } else {
      fail_verdict(v, "outbox row " + r.msg_id + " still " + r.status + " at the end");
    }
  }
  return v;
}

namespace {

// A viewer judged for delivery: one connection from before the first send to the end, untouched
// by faults. Returns its room, or "" (with the exemption reason in *why).
std::string steady_room(const GiftsRun& run, const std::vector<const HistoryOp*>& ops, int64_t first_send_us,
                        const fl::props::FaultBudget& budget, std::string* why) {
  std::vector<const HistoryOp*> connects;
  for (const HistoryOp* o : ops) {
    if (o->op == "connect") connects.push_back(o);
  }
  if (connects.size() != 1 || connects[0]->outcome != Outcome::kOk || connects[0]->complete_us > first_send_us) {
    *why = "viewer reconnected or joined after the first send (judged by gift-reconnect)";
    return "";
  }
  const auto a = parse_args(connects[0]->args);
  std::vector<std::string> places{connects[0]->process, a.count("gw") ? a.at("gw") : ""};
  if (std::optional<std::string> f = budget.explain(places, connects[0]->complete_us, run.end_us)) {
    *why = "viewer or its gateway faulted: " + *f;
    return "";
  }
  return a.count("room") ? a.at("room") : "";
}

// A clock fault on the process that stamped the gift or on a service that judged its age, before
// the gift could have been pushed: the 10 s expiry (003:L199-202) compares two clocks, so the skew
// may drop a fresh gift.
bool clock_skewed(const GiftsRun& run, const model::ChargedGift& g, int64_t horizon_us) {
  for (const sim::FaultRecord& f : run.faults) {
    if (f.kind != sim::FaultKind::kClockJump && f.kind != sim::FaultKind::kClockDrift) continue;
    if (f.time_us > horizon_us) continue;
    const std::string& where = f.process.empty() ? f.node : f.process;  // clock faults hit a node
    const bool service = std::find(run.services.begin(), run.services.end(), where) != run.services.end();
    if (where == g.creator || service) return true;
  }
  return false;
}

// A fault on the push path (push instances, the log, Redis, gateways) while the gift was between
// its commit and the latest time it could still be pushed fresh: the delay may age it past the
// 10 s expiry, which then drops it legitimately (GIFT-5's explicit expiry policy).
// Only a long hold counts: the faults' time on those processes, clipped to the gift's flight,
// must reach kHeldUs (a consumer-group rebalance after it can stretch that to the 10 s expiry).
constexpr int64_t kHeldUs = 3'000'000;
bool delayed(const GiftsRun& run, const fl::props::FaultBudget& budget, const model::ChargedGift& g) {
  if (g.commit_us < 0) return true;
  const int64_t born = g.sent_us >= 0 ? g.sent_us : g.commit_us;  // the message's stamp is after it
  const int64_t until = born + (run.params.expiry_ms + run.params.window_ms) * 1000;
  int64_t held = 0;
  std::set<int64_t> instants;  // a fault is a span of its process and of its node: count it once
  for (const fl::props::FaultSpan& f : budget.spans()) {
    if (std::find(run.services.begin(), run.services.end(), f.place) == run.services.end()) continue;
    if (f.to_us <= f.from_us && !instants.insert(f.from_us).second) continue;
    // A refused request (a storage error, an error reply) is an instant, but its caller waits
    // out a back-off the seed does not give before it tries again: it holds the gift for the
    // scenario's timer slack (explore-hardened seed 7816: three push attempts of one batch refused
    // by DB I/O errors and a 1.2 s DB outage between them aged it past the 10 s expiry).
    const int64_t to_us = f.to_us > f.from_us ? f.to_us : f.from_us + run.params.slack_ms * 1000;
    held += std::max<int64_t>(0, std::min(to_us, until) - std::max(f.from_us, born));
  }
  return held >= kHeldUs;
}

// Every gateway faulted while the gift could be pushed: its batch may have reached no viewer
// (a viewer that reconnects gets no history, 003:L206), so what was pushed is not observable.
bool unobservable(const GiftsRun& run, const fl::props::FaultBudget& budget, const model::ChargedGift& g) {
  if (run.gateways.empty() || g.commit_us < 0) return false;
  const int64_t born = g.sent_us >= 0 ? g.sent_us : g.commit_us;
  const int64_t until = born + (run.params.expiry_ms + run.params.window_ms) * 1000;
  for (const std::string& gw : run.gateways) {
    if (!budget.explain({gw}, born, until)) return false;
  }
  return true;
}

// Who was in `room` when: a viewer is in the room of a successful connect from its completion to
// its next connect's invocation (viewers switch rooms, 003:L193) or the crash of its gateway.
struct Presence {
  std::string viewer;
  int64_t from_us = 0, to_us = 0;
};

std::vector<Presence> room_presence(const GiftsRun& run, const std::string& room) {
  std::vector<Presence> out;
  for (const auto& [viewer, ops] : viewer_ops(run)) {
    for (size_t i = 0; i < ops.size(); ++i) {
      const HistoryOp* c = ops[i];
      if (c->op != "connect" || c->outcome != Outcome::kOk || parse_args(c->args)["room"] != room) continue;
      int64_t until = run.end_us;
      for (size_t j = i + 1; j < ops.size(); ++j) {
        if (ops[j]->op == "connect") {
          until = ops[j]->invoke_us;
          break;
        }
      }
      // ... or to a crash of the gateway it joined through, which dropped its connection
      // (explore-hardened-txmsg seed 5465: a batch pushed 0.3 s after gw-2 crashed, before its
      // viewers had reconnected through gw-1, reached nobody).
      const std::string gw = parse_args(c->args)["gw"];
      for (const sim::FaultRecord& f : run.faults) {
        const bool crash = f.kind == sim::FaultKind::kCrash && !gw.empty() && (f.process == gw || f.node == gw);
        if (crash && f.time_us >= c->complete_us && f.time_us < until) until = f.time_us;
      }
      out.push_back(Presence{viewer, c->complete_us, until});
    }
  }
  return out;
}

// The room had no joined viewer at some instant of [from, to]: a batch pushed then reached
// nobody, so what was pushed is not observable.
bool room_unwatched(const GiftsRun& run, const std::string& room, int64_t from_us, int64_t to_us) {
  std::vector<std::pair<int64_t, int64_t>> watched;
  for (const Presence& p : room_presence(run, room)) watched.push_back({p.from_us, p.to_us});
  std::sort(watched.begin(), watched.end());
  int64_t covered = from_us;
  for (const auto& [a, b] : watched) {
    if (a > covered) break;
    covered = std::max(covered, b);
  }
  return covered < to_us;
}

// At some instant of [from, to] every viewer then in the room had its last hop faulted (a message
// to it lost, a clog or partition touching it, within kBlindUs): a batch pushed at that instant may
// have reached no viewer, so what was pushed is not observable (explore-hardened seeds 7530, 7949:
// the room's one viewer lost the only copy of a batch to the gateway link's 1% loss).
constexpr int64_t kBlindUs = 100'000;
bool copies_lost(const GiftsRun& run, const std::string& room, int64_t from_us, int64_t to_us) {
  const std::vector<Presence> presence = room_presence(run, room);
  for (const sim::FaultRecord& f : run.faults) {
    if (f.time_us < from_us || f.time_us > to_us) continue;
    bool present = false, blind = true;
    for (const Presence& p : presence) {
      if (p.from_us > f.time_us || p.to_us < f.time_us) continue;
      present = true;
      blind = blind && last_hop_delay(run, p.viewer, f.time_us - kBlindUs, f.time_us + kBlindUs).has_value();
    }
    if (present && blind) return true;
  }
  return false;
}

// Gifts an allowed cause may have removed: late enough for the 10 s expiry, or written while a
// Redis restart could lose the combo state.
std::map<model::GiftKey, int64_t> excusable(const GiftsRun& run, const std::vector<model::ChargedGift>& gifts) {
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  std::map<model::GiftKey, int64_t> out;
  for (const model::ChargedGift& g : gifts) {
    const int64_t horizon = g.first_append_us < 0 ? run.end_us : g.first_append_us + (run.params.expiry_ms + run.params.window_ms) * 1000;
    const bool late = model::expiry_may_drop(g, run.params.expiry_ms * 1000, run.params.window_ms * 1000);
    const int64_t born = g.sent_us >= 0 ? g.sent_us : g.commit_us;
    const bool unwatched = g.commit_us >= 0 && (room_unwatched(run, g.order.room, born, horizon) ||
                                                 copies_lost(run, g.order.room, born, horizon));
    if (late || clock_skewed(run, g, horizon) || delayed(run, budget, g) || unobservable(run, budget, g) || unwatched) out[model::GiftKey{g.order.room, g.order.user, g.order.gift}] += g.order.count;
  }
  return out;
}

// The gifts of one key whose combo state (Redis) a Redis crash could have rolled back: the crash
// fell in the gift's flight (commit to the last instant it could still be pushed). Only their
// counts may be lost or repeated (AOF everysec loses up to a second of writes; hardened does not
// make the combo state durable beyond Redis); the key's other gifts are judged as usual.
struct Rollback {
  int64_t count = 0;  // Σ giftCount of the gifts in flight across a crash
  int64_t gifts = 0;  // how many
  std::string fault;  // the first such crash, described
};

std::map<model::GiftKey, Rollback> redis_rollback(const GiftsRun& run, const std::vector<model::ChargedGift>& gifts) {
  std::map<model::GiftKey, Rollback> out;
  for (const model::ChargedGift& g : gifts) {
    const int64_t horizon = g.first_append_us < 0 ? run.end_us
                                                  : g.first_append_us + (run.params.expiry_ms + run.params.window_ms) * 1000;
    for (const sim::FaultRecord& f : run.faults) {
      // Only a crash loses what Redis held in memory (pauses, clogs and partitions do not).
      const bool redis_crash = f.kind == sim::FaultKind::kCrash && (f.process == "redis" || f.node == "redis");
      if (!redis_crash || f.time_us < g.commit_us || f.time_us > horizon) continue;
      Rollback& r = out[model::GiftKey{g.order.room, g.order.user, g.order.gift}];
      r.count += g.order.count;
      ++r.gifts;
      if (r.fault.empty()) r.fault = f.describe();
      break;
    }
  }
  return out;
}

// A crash of Redis (only a crash loses what it held) in [from, to], described.
std::optional<std::string> redis_crash_in(const GiftsRun& run, int64_t from, int64_t to) {
  for (const sim::FaultRecord& f : run.faults) {
    const bool redis_crash = f.kind == sim::FaultKind::kCrash && (f.process == "redis" || f.node == "redis");
    if (redis_crash && f.time_us >= from && f.time_us <= to) return f.describe();
  }
  return std::nullopt;
}

// The distinct messages pushed into the rooms, as any viewer received them: msgId -> (key, count of
// its first content). A msgId received with a second content is a rolled-back window flushed
// again: only a Redis crash between the first content's flush (at most expiry + window before its
// first delivery) and this delivery explains it (explore-hardened seed 15699: AOF everysec lost a
// flush); its later content may then hold gifts that joined the restored window, whose counts the
// first content lacks (`reflushed`).
struct Pushed {
  std::map<std::string, std::pair<model::GiftKey, int64_t>> first;
  std::map<model::GiftKey, int64_t> reflushed;   // per key, Σ later contents a crash explains
  std::vector<std::string> excused;               // the crash of each explained second content
  std::vector<std::string> unexplained;           // msgIds with two contents no crash explains
};

Pushed pushed_messages(const GiftsRun& run, const std::map<model::GiftKey, Rollback>& rolled_back) {
  Pushed out;
  std::map<std::string, int64_t> first_seen;  // msgId -> its first delivery
  std::set<std::pair<std::string, int64_t>> contents;  // (msgId, count) already counted
  for (const HistoryOp* o : ops_named(run, "deliver")) {
    const auto a = parse_args(o->args);
    const model::GiftKey k{a.at("room"), arg_int(a, "sender"), a.at("gift")};
    const int64_t count = arg_int(a, "count");
    first_seen.try_emplace(a.at("msg"), o->invoke_us);
    auto [it, inserted] = out.first.try_emplace(a.at("msg"), k, count);
    if (inserted || it->second == std::make_pair(k, count) || !contents.insert({a.at("msg"), count}).second) continue;
    const int64_t from = first_seen.at(a.at("msg")) - (run.params.expiry_ms + run.params.window_ms) * 1000;
    const std::optional<std::string> crash = rolled_back.count(k) ? redis_crash_in(run, from, o->invoke_us) : std::nullopt;
    if (crash) {
      out.reflushed[k] += count;
      out.excused.push_back(*crash);
    } else {
      out.unexplained.push_back(a.at("msg"));
    }
  }
  return out;
}

// A key's count `got` (pushed, or played by one viewer) against `want` charged: never more than
// charged plus what a rollback may repeat, never less than charged minus what expiry (`slack`) and
// a rollback (the gifts in flight across the crash, and re-flushed contents) may remove.
bool conserved(int64_t got, int64_t want, int64_t slack, const Rollback& rolled, int64_t reflushed) {
  return got <= want + rolled.count + reflushed && got >= want - slack - rolled.count - reflushed;
}

std::string rollback_note(const Rollback& r, int64_t reflushed) {
  if (r.gifts == 0 && reflushed == 0) return "";
  return " (" + std::to_string(r.count) + " in flight across a Redis crash, " + std::to_string(reflushed) +
         " re-flushed)";
}

// Σ count per key of what `ops` played (deliver ops completed "played").
std::map<model::GiftKey, int64_t> played_totals(const std::vector<const HistoryOp*>& ops) {
  std::map<model::GiftKey, int64_t> out;
  for (const HistoryOp* o : ops) {
    if (o->op != "deliver" || o->result != "played") continue;
    const auto a = parse_args(o->args);
    out[model::GiftKey{a.at("room"), arg_int(a, "sender"), a.at("gift")}] += arg_int(a, "count");
  }
  return out;
}

int64_t first_send_us(const GiftsRun& run) {
  int64_t t = run.end_us;
  for (const HistoryOp* o : ops_named(run, "send")) t = std::min(t, o->invoke_us);
  return t;
}

}  // namespace

namespace {

// The room of the viewer's last successful connect invoked at or before t_us ("" if none).
std::string joined_room_at(const std::vector<const HistoryOp*>& ops, int64_t t_us) {
  std::string room;
  for (const HistoryOp* o : ops) {
    if (o->op == "connect" && o->invoke_us <= t_us && o->outcome == Outcome::kOk) room = parse_args(o->args)["room"];
  }
  return room;
}

// Every msgId a viewer received is played by it at least once: a dropped copy is fine only when
// another copy played. A gap skipped after a fault on the push path may drop a late copy.
void check_received_played(const GiftsRun& run, const std::string& viewer, const std::vector<const HistoryOp*>& ops,
                           const fl::props::FaultBudget& budget, Verdict& v) {
  std::map<std::string, const HistoryOp*> unplayed;
  std::set<std::string> played;
  std::set<std::string> pending;  // a copy still buffered at the end: gift-play-order bounds its wait
  for (const HistoryOp* o : ops) {
    if (o->op != "deliver") continue;
    const std::string id = parse_args(o->args)["msg"];
    if (o->result == "played") played.insert(id);
    if (o->complete_us < 0) pending.insert(id);
    if (o->complete_us >= 0 && o->result != "played") unplayed.try_emplace(id, o);
  }
  std::set<std::string> received;
  for (const HistoryOp* o : ops) {
    if (o->op == "deliver") received.insert(parse_args(o->args)["msg"]);
  }
  v.checks += static_cast<int64_t>(received.size());  // one assertion per received msgId
  for (const auto& [id, o] : unplayed) {
    // A copy replaced in the buffer by another copy that is still buffered when the run ends
    // (explore-hardened seed 7649: two gateways forwarded one push 0.5 s before the end).
    if (played.count(id) || pending.count(id)) continue;
    // A room switch (003:L193) drops what the viewer still held or received of the room it left.
    if (o->result == "dropped:left-room" && joined_room_at(ops, o->complete_us) != parse_args(o->args)["room"]) continue;
    std::vector<std::string> places = run.services;
    places.push_back(viewer);
    const int64_t from = o->invoke_us - (run.params.expiry_ms + run.params.window_ms) * 1000;
    exempt_or_fail(v, budget.explain(places, from, o->invoke_us), "received copy dropped after a fault on its path",
                   viewer + " received but never played: " + describe(*o));
  }
}

}  // namespace

// GIFT-5: each steady viewer plays, per (room, sender, gift), exactly the charged count (less
// what expiry or a Redis data loss may excuse).
Verdict check_delivery(const GiftsRun& run) {
  Verdict v = passing_verdict("gift-delivery", {"GIFT-5"},
                   "every viewer connected throughout plays Σ charged giftCount per (room, sender, gift), "
                   "no more, and no less than what expiry or a Redis data loss excuses");
  if (db_unreadable(run, v)) return v;
  const std::vector<model::ChargedGift> gifts = charged_gifts(run);
  const auto charged = model::totals(gifts);
  const auto excused = excusable(run, gifts);
  const auto rolled_back = redis_rollback(run, gifts);
  const Pushed pushed = pushed_messages(run, rolled_back);
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  const int64_t first_send = first_send_us(run);
  for (const auto& [viewer, ops] : viewer_ops(run)) {
    check_received_played(run, viewer, ops, budget, v);
    std::string why;
    const std::string room = steady_room(run, ops, first_send, budget, &why);
    if (room.empty()) {
      v.exempt(why);
      continue;
    }
    const auto played = played_totals(ops);
    std::set<model::GiftKey> keys;
    for (const auto& [k, n] : charged) keys.insert(k);
    for (const auto& [k, n] : played) keys.insert(k);
    for (const model::GiftKey& k : keys) {
      if (std::get<0>(k) != room) continue;
      ++v.checks;
      const int64_t want = charged.count(k) ? charged.at(k) : 0;
      const int64_t got = played.count(k) ? played.at(k) : 0;
      const int64_t slack = excused.count(k) ? excused.at(k) : 0;
      const Rollback rolled = rolled_back.count(k) ? rolled_back.at(k) : Rollback{};
      const int64_t reflushed = pushed.reflushed.count(k) ? pushed.reflushed.at(k) : 0;
      if (!conserved(got, want, slack, rolled, reflushed)) {
        fail_verdict(v, viewer + " played " + std::to_string(got) + " of " + model::describe(k) + ", charged " +
                    std::to_string(want) + (slack ? " (" + std::to_string(slack) + " excusable)" : "") +
                    rollback_note(rolled, reflushed));
      } else if (got > want || got < want - slack) {  // within the band only through the rollback
        v.exempt("gifts in flight across a crash, combo state rolled back: " + rolled.fault, rolled.gifts);
      }
    }
  }
  return v;
}

// GIFT-6: the distinct messages pushed into a room (as any viewer received them) carry, per key,
// the charged count: never more; less only by what expiry or a Redis data loss excuses.
Verdict check_batch_conservation(const GiftsRun& run) {
  Verdict v = passing_verdict("gift-batch-conservation", {"GIFT-6"},
                   "Σ giftCount over distinct pushed messages = Σ charged per (room, sender, gift); one msgId, one count");
  if (db_unreadable(run, v)) return v;
  const std::vector<model::ChargedGift> gifts = charged_gifts(run);
  const auto charged = model::totals(gifts);
  const auto excused = excusable(run, gifts);
  const auto rolled_back = redis_rollback(run, gifts);
  const Pushed pushed = pushed_messages(run, rolled_back);
  for (const std::string& crash : pushed.excused) v.exempt("a message re-flushed from a rolled-back window: " + crash);
  for (const std::string& id : pushed.unexplained) fail_verdict(v, "msgId " + id + " pushed with two contents");
  std::map<model::GiftKey, int64_t> sums;
  for (const auto& [id, kc] : pushed.first) sums[kc.first] += kc.second;
  std::set<std::string> watched;  // rooms with a viewer connected at the end
  for (const auto& [viewer, ops] : viewer_ops(run)) {
    for (const HistoryOp* o : ops) {
      if (o->op == "connect" && o->outcome == Outcome::kOk) watched.insert(parse_args(o->args)["room"]);
    }
  }
  std::set<model::GiftKey> keys;
  for (const auto& [k, n] : charged) keys.insert(k);
  for (const auto& [k, n] : sums) keys.insert(k);
  for (const model::GiftKey& k : keys) {
    if (!watched.count(std::get<0>(k))) {
      v.exempt("no viewer in room " + std::get<0>(k));
      continue;
    }
    ++v.checks;
    const int64_t want = charged.count(k) ? charged.at(k) : 0;
    const int64_t got = sums.count(k) ? sums.at(k) : 0;
    const int64_t slack = excused.count(k) ? excused.at(k) : 0;
    const Rollback rolled = rolled_back.count(k) ? rolled_back.at(k) : Rollback{};
    const int64_t reflushed = pushed.reflushed.count(k) ? pushed.reflushed.at(k) : 0;
    if (!conserved(got, want, slack, rolled, reflushed)) {
      fail_verdict(v, model::describe(k) + ": pushed " + std::to_string(got) + ", charged " + std::to_string(want) +
                  (slack ? " (" + std::to_string(slack) + " excusable)" : "") + rollback_note(rolled, reflushed));
    } else if (got > want || got < want - slack) {  // within the band only through the rollback
      v.exempt("gifts in flight across a crash, combo state rolled back: " + rolled.fault, rolled.gifts);
    }
  }
  return v;
}

namespace {

// The holder of one Redisson lock key as the Redis command log shows it.
struct Holding {
  std::string client;
  int64_t until_ms = 0;  // node clock
  uint32_t incarnation = 0;
};

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

}  // namespace

// GIFT-7: every command a client runs on a combo count key outside a script happens while that
// client holds the matching lock (003:L113: gift:batch:{room}:{sender}:{gift}); scripts are atomic.
Verdict check_lock(const GiftsRun& run) {
  Verdict v = passing_verdict("gift-lock", {"GIFT-7"},
                   "commands on gift:batch:count:* run inside a script or while their client holds "
                   "gift:batch:{room}:{sender}:{gift} (lease by the Redis clock); only the holder deletes a lock");
  std::map<std::string, Holding> held;  // lock key -> holder
  for (size_t i = 0; i < run.redis.size(); ++i) {
    const RedisCommand& c = run.redis[i];
    if (c.argv.size() < 2) continue;
    const std::string& cmd = c.argv[0];
    const std::string& key = c.argv[1];
    if (c.depth == 0 && (cmd == "EVALSHA" || cmd == "EVAL")) {
      ++v.checks;  // a script runs atomically: whatever combo state it touches is read-modify-flushed at once
      continue;
    }
    auto it = held.find(key);
    if (it != held.end() && (it->second.incarnation != c.incarnation || c.node_ms >= it->second.until_ms)) {
      held.erase(it);  // lease ran out, or Redis restarted
    }
    if (starts_with(key, "gift:batch:count:")) {
      ++v.checks;
      if (c.depth == 1) continue;  // atomic with its script
      const std::string lock = "gift:batch:" + key.substr(std::string("gift:batch:count:").size());
      auto h = held.find(lock);
      if (h != held.end() && (h->second.incarnation != c.incarnation || c.node_ms >= h->second.until_ms)) {
        held.erase(h);
        h = held.end();
      }
      if (h == held.end() || h->second.client != c.client) {
        fail_verdict(v, c.client + " ran " + cmd + " " + key + " at " + secs(c.time_us) + " without holding " + lock +
                    (h == held.end() ? " (nobody holds it)" : " (held by " + h->second.client + ")"));
      }
      continue;
    }
    if (!starts_with(key, "gift:batch:")) continue;
    // Lock keys: Redisson's hash (HINCRBY owner 1 + PEXPIRE lease) or a plain SET NX PX / DEL.
    if (cmd == "HINCRBY" && c.argv.size() >= 4 && c.argv[3] == "1") {
      held[key] = Holding{c.client, INT64_MAX, c.incarnation};  // no TTL until its PEXPIRE
    } else if (cmd == "SET" && c.argv.size() >= 5 && c.argv[3] == "PX") {
      held[key] = Holding{c.client, c.node_ms + std::stoll(c.argv[4]), c.incarnation};  // 003:L148
    } else if (cmd == "PEXPIRE" && c.argv.size() >= 3) {
      auto h = held.find(key);
      if (h != held.end()) h->second.until_ms = c.node_ms + std::stoll(c.argv[2]);
    } else if (cmd == "DEL") {
      ++v.checks;
      auto h = held.find(key);
      if (h != held.end() && h->second.client != c.client) {
        fail_verdict(v, c.client + " deleted lock " + key + " held by " + h->second.client + " at " + secs(c.time_us));
      }
      held.erase(key);
    }
  }
  return v;
}

// GIFT-8: each msgId is played at most once per client.
Verdict check_play_once(const GiftsRun& run) {
  Verdict v = passing_verdict("gift-play-once", {"GIFT-8"}, "each msgId is played at most once per client");
  std::map<std::pair<std::string, std::string>, const HistoryOp*> first;
  for (const HistoryOp* o : ops_named(run, "deliver")) {
    if (o->result != "played") continue;
    ++v.checks;
    const std::string id = parse_args(o->args)["msg"];
    auto [it, inserted] = first.try_emplace({o->process, id}, o);
    if (!inserted) fail_verdict(v, "played twice: " + describe(*it->second) + " and " + describe(*o));
  }
  return v;
}

// GIFT-9: per client, plays in increasing seq; every received message is decided within T_gap.
Verdict check_play_order(const GiftsRun& run) {
  Verdict v = passing_verdict("gift-play-order", {"GIFT-9"},
                   "per client, played seqs increase; each received message is played or dropped within T_gap");
  const int64_t t_gap_us = run.params.t_gap_ms * 1000;
  for (const auto& [viewer, ops] : viewer_ops(run)) {
    std::vector<const HistoryOp*> plays;
    for (const HistoryOp* o : ops) {
      if (o->op != "deliver") continue;
      ++v.checks;
      const int64_t decided = o->complete_us < 0 ? run.end_us : o->complete_us;
      if (decided - o->invoke_us > t_gap_us) {
        fail_verdict(v, viewer + " waited " + secs(decided - o->invoke_us) + " (T_gap " + secs(t_gap_us) + ") on " + describe(*o));
      }
      if (o->result == "played") plays.push_back(o);
    }
    // Plays of one instant (a drained buffer) have no observable order among themselves: they
    // count as played in seq order.
    std::stable_sort(plays.begin(), plays.end(), [](const HistoryOp* a, const HistoryOp* b) {
      if (a->complete_us != b->complete_us) return a->complete_us < b->complete_us;
      return arg_int(parse_args(a->args), "seq") < arg_int(parse_args(b->args), "seq");
    });
    // seq is per room (003:L173): a viewer that switched rooms is judged per room.
    std::map<std::string, const HistoryOp*> previous;  // room -> last play
    for (const HistoryOp* o : plays) {
      const std::string room = parse_args(o->args)["room"];
      const HistoryOp* before = previous[room];
      previous[room] = o;
      if (before == nullptr) continue;
      ++v.checks;
      if (arg_int(parse_args(o->args), "seq") <= arg_int(parse_args(before->args), "seq")) {
        fail_verdict(v, viewer + " played out of order: " + describe(*before) + " then " + describe(*o));
      }
    }
  }
  return v;
}


// GIFT-10: nothing older than 10 s reaches a client; a committed order is never removed.
Verdict check_expiry(const GiftsRun& run) {
  Verdict v = passing_verdict("gift-expiry", {"GIFT-10"},
                   "no client receives a message older than 10 s (+ slack); every committed order stays recorded");
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  bool clock_fault = false;
  for (const sim::FaultRecord& f : run.faults) {
    clock_fault = clock_fault || f.kind == sim::FaultKind::kClockJump || f.kind == sim::FaultKind::kClockDrift;
  }
  const int64_t bound_us = (run.params.expiry_ms + run.params.slack_ms) * 1000;
  for (const HistoryOp* o : ops_named(run, "deliver")) {
    if (clock_fault) {
      v.exempt("message age unjudgeable: a clock fault skewed the timestamps");
      continue;
    }
    ++v.checks;
    const int64_t age_us = o->invoke_us - arg_int(parse_args(o->args), "ts") * 1000;
    if (age_us <= bound_us) continue;
    // Past the last server hop (a gateway forwards at once) only the link to the viewer can age
    // it: a clog, partition or loss touching the viewer explains it; a paused server does not.
    exempt_or_fail(v, last_hop_delay(run, o->process, o->invoke_us - age_us + bound_us, o->invoke_us), "delivery delayed on the last hop",
                   "received " + secs(age_us) + " old: " + describe(*o));
  }
  if (!run.db_read) return v;
  std::set<std::pair<int64_t, std::string>> rows;
  for (const model::Order& o : run.orders) rows.insert({o.user, o.request_id});
  for (const HistoryOp* o : ops_named(run, "send")) {
    if (o->outcome != Outcome::kOk) continue;
    const auto a = parse_args(o->args);
    ++v.checks;
    if (!rows.count({arg_int(a, "user"), a.at("req")})) {
      exempt_or_fail(v, budget.explain({"db"}, o->complete_us, run.end_us), "charged order lost with the DB's unsynced writes",
                   "answered charged but no order row remains: " + describe(*o));
    }
  }
  return v;
}

namespace {

// A Redis crash that may have rolled the room's seq counter back under `drop` (a delivery of
// room R with seq S dropped as below the expected seq): the counter had already handed out S or
// more (some viewer got another message of R with seq >= S before the drop), and Redis crashed
// after that first such delivery and before the drop. A crash before the counter reached S, or
// after the drop, cannot explain it.
std::optional<std::string> seq_rollback(const GiftsRun& run, const HistoryOp& drop) {
  auto d = parse_args(drop.args);
  const int64_t seq = arg_int(d, "seq");
  int64_t reached_us = -1;  // when a viewer first got another message of the room with seq >= S
  for (const HistoryOp& o : run.history) {
    if (o.op != "deliver" || o.invoke_us >= drop.invoke_us) continue;
    auto a = parse_args(o.args);
    if (a["room"] != d["room"] || a["msg"] == d["msg"] || arg_int(a, "seq") < seq) continue;
    if (reached_us < 0 || o.invoke_us < reached_us) reached_us = o.invoke_us;
  }
  if (reached_us < 0) return std::nullopt;
  for (const sim::FaultRecord& f : run.faults) {
    const bool redis = f.process == "redis" || f.node == "redis";
    if (f.kind == sim::FaultKind::kCrash && redis && f.time_us >= reached_us && f.time_us <= drop.invoke_us) {
      return f.describe();
    }
  }
  return std::nullopt;
}

}  // namespace

// GIFT-11: after a (re)connect whose baseline is B (lastSeq, or the server's seq without history),
// no received message with seq > B is dropped as a duplicate unless its msgId was played.
Verdict check_reconnect(const GiftsRun& run) {
  Verdict v = passing_verdict("gift-reconnect", {"GIFT-11"},
                   "after a (re)connect, no message with seq > lastSeq (or > the answered seq without history) "
                   "is dropped as seq < expectedSeq unless already played");
  for (const auto& [viewer, ops] : viewer_ops(run)) {
    int64_t baseline = -1;
    int64_t played_since = -1;  // the highest seq played since the last connect
    std::set<std::string> played;
    std::vector<const HistoryOp*> by_decision(ops.begin(), ops.end());
    std::stable_sort(by_decision.begin(), by_decision.end(), [](const HistoryOp* a, const HistoryOp* b) {
      const int64_t ta = a->op == "connect" || a->complete_us < 0 ? a->invoke_us : a->complete_us;
      const int64_t tb = b->op == "connect" || b->complete_us < 0 ? b->invoke_us : b->complete_us;
      return ta < tb;
    });
    for (const HistoryOp* o : by_decision) {
      if (o->op == "connect") {
        if (o->outcome != Outcome::kOk) continue;
        const int64_t last = arg_int(parse_args(o->args), "lastSeq");
        baseline = last > 0 ? last : arg_int(parse_args(o->result), "seq");
        played_since = -1;
        continue;
      }
      const auto a = parse_args(o->args);
      const int64_t seq = arg_int(a, "seq");
      if (o->result == "played") {
        played.insert(a.at("msg"));
        played_since = std::max(played_since, seq);
      }
      if (baseline < 0) continue;
      ++v.checks;
      // A drop below a seq the client played since (a gap it skipped, GIFT-9) is not the reset's.
      if (seq <= baseline || seq <= played_since) continue;
      if (dropped_below_expected(*o) && !played.count(a.at("msg")) && seq_rollback(run, *o)) {
        v.exempt("the room's seq counter may have been rolled back by a Redis crash after it handed out this seq");
      } else if (dropped_below_expected(*o) && !played.count(a.at("msg"))) {
        fail_verdict(v, viewer + " dropped seq " + std::to_string(arg_int(a, "seq")) + " > baseline " +
                    std::to_string(baseline) + ": " + describe(*o));
      }
    }
  }
  return v;
}

std::vector<Verdict> check_gifts(const GiftsRun& run, const std::vector<std::string>& properties) {
  std::vector<Verdict> out;
  for (const std::string& p : properties) {
    if (p == "gift-charge-once") out.push_back(check_charge_once(run));
    if (p == "gift-intent-once") out.push_back(check_intent_once(run));
    if (p == "gift-outcome") out.push_back(check_outcome(run));
    if (p == "gift-outbox") out.push_back(check_outbox(run));
    if (p == "gift-delivery") out.push_back(check_delivery(run));
    if (p == "gift-batch-conservation") out.push_back(check_batch_conservation(run));
    if (p == "gift-lock") out.push_back(check_lock(run));
    if (p == "gift-play-once") out.push_back(check_play_once(run));
    if (p == "gift-play-order") out.push_back(check_play_order(run));
    if (p == "gift-expiry") out.push_back(check_expiry(run));
    if (p == "gift-reconnect") out.push_back(check_reconnect(run));
  }
  return out;
}

}  // namespace fl::gifts::props
