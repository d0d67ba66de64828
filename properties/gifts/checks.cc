#include "properties/gifts/checks.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>

#include "properties/common/fault_budget.h"
#include "properties/common/judge.h"
#include "properties/gifts/reach.h"

namespace fl::gifts::props {
namespace {

using fl::props::Judge;
using model::arg_int;
using model::parse_args;

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
      {"gift-outcome",
       {"GIFT-3"},
       "a retry gets the original outcome, never 重复请求 for an uncharged request (003:L55)"},
      {"gift-outbox", {"GIFT-4"}, "each order has exactly one outbox row, and every row ends SENT (003 §7)"},
      {"gift-delivery",
       {"GIFT-5"},
       "every viewer online throughout plays each charged gift's count exactly once (003 §1)"},
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
  Judge j("gift-charge-once", {"GIFT-1"},
          "per (user, requestId) at most one gift_order row, and initial - final balance = Σ order amounts");
  if (db_unreadable(run, j.v)) return j.v;
  for (const auto& kv_ : orders_by_request(run)) {
    const auto& key = kv_.first;
    const auto& rows = kv_.second;
    j.expect(rows.size() <= 1, [&] {
      return "user " + std::to_string(key.first) + " request " + key.second + ": " + std::to_string(rows.size()) +
             " orders";
    });
  }
  std::map<int64_t, int64_t> spent;
  for (const model::Order& o : run.orders) spent[o.user] += o.amount;
  for (const auto& kv_ : run.balances) {
    const auto& user = kv_.first;
    const auto& balance = kv_.second;
    const int64_t debited = run.params.initial_balance - balance;
    j.expect(debited == spent[user], [&] {
      return "user " + std::to_string(user) + ": wallet debited " + std::to_string(debited) + ", orders total " +
             std::to_string(spent[user]);
    });
  }
  return j.v;
}

// GIFT-2: the requests of one intent (the user's one click, or one double tap) make <= 1 order.
Verdict check_intent_once(const GiftsRun& run) {
  Judge j("gift-intent-once", {"GIFT-2"}, "the requests of one intent (a double tap) charge at most once");
  if (db_unreadable(run, j.v)) return j.v;
  std::map<std::pair<int64_t, std::string>, std::set<std::string>> requests;  // (user, intent) -> requests
  for (const HistoryOp* o : ops_named(run, "send")) {
    const auto a = parse_args(o->args);
    requests[{arg_int(a, "user"), a.count("intent") ? a.at("intent") : ""}].insert(a.count("req") ? a.at("req") : "");
  }
  const auto by_request = orders_by_request(run);
  for (const auto& kv_ : requests) {
    const auto& intent = kv_.first;
    const auto& reqs = kv_.second;
    size_t charges = 0;
    for (const std::string& r : reqs) {
      auto it = by_request.find({intent.first, r});
      if (it != by_request.end()) charges += it->second.size();
    }
    j.expect(charges <= 1, [&] {
      return "user " + std::to_string(intent.first) + " intent " + intent.second + ": " + std::to_string(reqs.size()) +
             " requests, " + std::to_string(charges) + " charges";
    });
  }
  return j.v;
}

// GIFT-3: answers match the request's fate; an indeterminate answer needs a fault that touched it:
// one the world tied to the request itself (a lost message, a broken call, an error reply or an I/O
// error of its own commands, its events held back), or a duration fault on the charge path (or at
// the sender) while it was open.
Verdict check_outcome(const GiftsRun& run) {
  Judge j("gift-outcome", {"GIFT-3"},
          "a charged request is answered with its order id, an uncharged one never ok nor 重复请求; "
          "indeterminate answers only under a fault that touched the request");
  if (db_unreadable(run, j.v)) return j.v;
  const auto by_request = orders_by_request(run);
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  for (const HistoryOp* o : ops_named(run, "send")) {
    if (o->complete_us < 0) continue;
    const auto a = parse_args(o->args);
    auto it = by_request.find({arg_int(a, "user"), a.count("req") ? a.at("req") : ""});
    const model::Order* order = it == by_request.end() ? nullptr : it->second.front();
    // No answer from the service (timeout, reset, nobody serving, or its own error): degraded.
    if (o->outcome == Outcome::kInfo || o->result == "error" || o->result == "unavailable") {
      std::vector<std::string> places = run.charge_path;
      places.push_back(o->process);
      std::optional<std::string> why = budget.touched(o->id);
      if (!why) why = budget.explain(places, o->invoke_us, o->complete_us);
      j.expect_or_excuse(false, why, "indeterminate answer",
                         [&] { return "indeterminate answer without a fault that touched it: " + describe(*o); });
    } else if (order != nullptr) {
      j.expect(o->result == "order=" + std::to_string(order->id), [&] {
        return "request charged as order " + std::to_string(order->id) + " but answered: " + describe(*o);
      });
    } else {
      j.expect(o->outcome != Outcome::kOk && o->result != "duplicate",
               [&] { return "request never charged but answered: " + describe(*o); });
    }
  }
  return j.v;
}

namespace {

// The msgId of a log record's value (`msgId|roomId|...`, impl's GiftMsg encoding of 003:L25-33).
std::string record_msg_id(const LogRecordObs& r) { return r.value.substr(0, r.value.find('|')); }

using Intervals = std::vector<std::pair<int64_t, int64_t>>;  // sorted, disjoint

Intervals intersect(const Intervals& x, const Intervals& y) {
  Intervals out;
  for (size_t i = 0, j = 0; i < x.size() && j < y.size();) {
    const int64_t a = std::max(x[i].first, y[j].first), b = std::min(x[i].second, y[j].second);
    if (a < b) out.push_back({a, b});
    (x[i].second < y[j].second ? i : j)++;
  }
  return out;
}

Intervals unite(Intervals x, const Intervals& y) {
  x.insert(x.end(), y.begin(), y.end());
  std::sort(x.begin(), x.end());
  Intervals out;
  for (const auto& [a, b] : x) {
    if (!out.empty() && a <= out.back().second) {
      out.back().second = std::max(out.back().second, b);
    } else {
      out.push_back({a, b});
    }
  }
  return out;
}

// When duration faults held `place` on the way to one of `peers` (the union of its spans): the
// place's own faults (a crash, a pause) and the link faults between it and one of `peers`; a clog
// of the DB's link to a gateway holds nothing the outbox needs (explore-hardened-store-errors seed
// 5466).
bool holds(const fl::props::FaultSpan& s, const std::string& place, const std::set<std::string>& peers) {
  return s.place == place && (s.peer.empty() || peers.count(s.peer) > 0);
}
Intervals held_at(const fl::props::FaultBudget& budget, const std::string& place, const std::set<std::string>& peers) {
  Intervals spans;
  for (const fl::props::FaultSpan& s : budget.spans()) {
    if (holds(s, place, peers)) spans.push_back({s.from_us, s.to_us});
  }
  return unite(std::move(spans), {});
}

// The latest-starting span among those held_at counts for `places` that lasts to `end_us`.
std::optional<std::string> held_at_end(const fl::props::FaultBudget& budget,
                                       const std::vector<std::pair<std::string, std::set<std::string>>>& places,
                                       int64_t end_us) {
  const fl::props::FaultSpan* best = nullptr;
  for (const fl::props::FaultSpan& s : budget.spans()) {
    if (s.to_us < end_us || (best != nullptr && s.from_us < best->from_us)) continue;
    for (const auto& [place, peers] : places) {
      if (holds(s, place, peers)) best = &s;
    }
  }
  if (best == nullptr) return std::nullopt;
  return best->what;
}

// A pending outbox row or an unresolved half message is re-driven by the gift services (the
// outbox poller, 003:L223; RocketMQ's check-back, 003:L225-231) through the log and the DB: it can
// stay unresolved at the end only while duration faults held its way out from `from_us` to the
// end, leaving no stretch of `retry_us` (a poll or a check-back scan, plus the timer slack) free.
// Its way out is held by the log or the DB, or by the gift services or their links to the log and
// the DB: every one of them for a row (each poller polls every row), or `any_replica` for a half
// (the broker sends each check-back to one checker of the group, round robin: every check of a
// half can go to the one held; explore-hardened-txmsg seed 13). Names the fault that lasted to the end.
std::optional<std::string> held_to_end(const GiftsRun& run, const fl::props::FaultBudget& budget, int64_t from_us,
                                       int64_t retry_us, bool any_replica) {
  std::vector<std::string> replicas;
  for (const std::string& p : run.charge_path) {
    if (p != "log" && p != "redis" && p != "db") replicas.push_back(p);
  }
  const std::set<std::string> stores = {"log", "db"};
  Intervals replicas_held = {{from_us, run.end_us}};
  if (any_replica) replicas_held.clear();
  for (const std::string& r : replicas) {
    const Intervals held = held_at(budget, r, stores);
    replicas_held = any_replica ? unite(replicas_held, held) : intersect(replicas_held, held);
  }
  const Intervals held = unite(unite(held_at(budget, "log", {}), held_at(budget, "db", {})), replicas_held);
  int64_t free_since = from_us;
  for (const auto& [a, b] : held) {
    if (b < from_us) continue;
    if (a - free_since >= retry_us) return std::nullopt;
    free_since = std::max(free_since, b);
  }
  if (free_since < run.end_us) return std::nullopt;  // free at the end
  std::vector<std::pair<std::string, std::set<std::string>>> places = {{"log", {}}, {"db", {}}};
  for (const std::string& r : replicas) places.emplace_back(r, stores);
  return held_at_end(budget, places, run.end_us);
}

// The last attempt to resolve outbox row `msg_id` (a poller's UPDATE to SENT, 003:L223) that the
// DB refused by an injected I/O error: each such attempt was stopped by its own fault, so the row's
// way out is judged from there on (explore-hardened-store-errors seed 8515: five attempts in a row
// failed by I/O errors, then a pause and a clog held both pollers until the end). -1: none.
int64_t last_attempt_failed_by_fault(const GiftsRun& run, const fl::props::FaultBudget& budget,
                                     const std::string& msg_id) {
  int64_t last_us = -1;
  for (const SqlCommit& c : run.commits) {
    if (c.ok) continue;
    const bool resolves_row = std::any_of(c.statements.begin(), c.statements.end(), [&](const SqlStatementObs& st) {
      return st.sql.rfind("UPDATE outbox_message", 0) == 0 && !st.params.empty() && st.params.back() == msg_id;
    });
    if (!resolves_row) continue;
    for (const auto* r : budget.instants({"db"}, c.time_us, c.time_us)) {
      if (std::string(sim::fault_kind_name(r->kind)) == "storage-error") last_us = std::max(last_us, c.time_us);
    }
  }
  return last_us;
}

// GIFT-4 under transactional messages (003:L225-231): the message table is the log itself. Each
// committed order's message reaches the log exactly once, and no message reaches it without its
// order (a half message whose local transaction rolled back is deleted, 003:L231).
Verdict check_txmsg(const GiftsRun& run) {
  Judge j("gift-outbox", {"GIFT-4"},
          "transactional messages: each gift_order's msg_id is in the log exactly once, and each log "
          "record's msg_id belongs to an order");
  Verdict& v = j.v;  // the per-order check below counts, then exempts or fails by branch
  if (db_unreadable(run, v)) return v;
  std::map<std::string, int> records;
  for (const LogRecordObs& r : run.log) ++records[record_msg_id(r)];
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  std::set<std::string> order_msgs;
  std::map<std::string, int64_t> commit_at;  // msgId -> its charge's commit
  for (const model::ChargedGift& g : charged_gifts(run)) commit_at[g.order.msg_id] = g.commit_us;
  for (const model::Order& o : run.orders) {
    order_msgs.insert(o.msg_id);
    ++v.checks;
    const int n = records[o.msg_id];
    const int64_t committed = commit_at.count(o.msg_id) ? commit_at.at(o.msg_id) : -1;
    if (n == 1) continue;
    // The broker (the log node, whose clock never goes back: a jump back freezes it) checks a half
    // back once it is old enough by that clock (RocketMQ's transactionTimeout plus one scan).
    const int64_t advance_us =
        committed < 0 ? run.end_us
                      : budget.monotonic_clock_us("log", run.end_us) - budget.monotonic_clock_us("log", committed);
    const std::optional<std::string> held =
        committed < 0 ? std::nullopt
                      : held_to_end(run, budget, committed + run.params.half_check_us - run.params.half_scan_us,
                                    run.params.half_scan_us + run.params.slack_ms * 1000, /*any_replica=*/true);
    if (n == 0 && held) {
      v.exempt("a half message unresolved while faults held every check-back until the end: " + *held);
    } else if (n == 0 && committed >= 0 && advance_us < run.params.half_check_us) {
      // An unresolved half is checked back once old enough by the broker's clock; a clock jump
      // back on the log kept it too young until the end (explore-hardened-txmsg seed 3740).
      v.exempt("a half message never old enough for a check-back: the log's clock advanced " + secs(advance_us) +
               " after its commit: " + budget.clock("log", committed, run.end_us).what);
    } else {
      fail_verdict(v,
                   "order " + std::to_string(o.id) + " (" + o.msg_id + ") has " + std::to_string(n) + " log records");
    }
  }
  for (const auto& kv_ : records) {
    const std::string& msg_id = kv_.first;
    j.expect(order_msgs.count(msg_id) > 0,
             [&] { return "log record " + msg_id + " has no order (its charge never committed)"; });
  }
  return j.v;
}

}  // namespace

// GIFT-4: order <-> outbox one to one; every outbox row SENT at the end.
Verdict check_outbox(const GiftsRun& run) {
  if (run.params.txmsg) return check_txmsg(run);
  Judge j("gift-outbox", {"GIFT-4"},
          "each gift_order has exactly one outbox_message (its msg_id), each outbox row belongs to an "
          "order, and every row is SENT at the end");
  if (db_unreadable(run, j.v)) return j.v;
  std::map<std::string, int> outbox_rows;
  for (const OutboxRow& r : run.outbox) ++outbox_rows[r.msg_id];
  std::set<std::string> order_msgs;
  for (const model::Order& o : run.orders) {
    order_msgs.insert(o.msg_id);
    j.expect(outbox_rows[o.msg_id] == 1, [&] {
      return "order " + std::to_string(o.id) + " (" + o.msg_id + ") has " + std::to_string(outbox_rows[o.msg_id]) +
             " outbox rows";
    });
  }
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  std::map<std::string, int64_t> commit_at;  // msgId -> its charge's commit
  for (const model::ChargedGift& g : charged_gifts(run)) commit_at[g.order.msg_id] = g.commit_us;
  for (const OutboxRow& r : run.outbox) {
    j.expect(order_msgs.count(r.msg_id) > 0,
             [&] { return "outbox row " + r.msg_id + " has no order (a second charge's message)"; });
    if (r.status == "SENT") continue;
    const int64_t committed = commit_at.count(r.msg_id) ? commit_at.at(r.msg_id) : -1;
    // Committed less than one poll (plus slack) before the end: the poller (003:L223, every 1 s)
    // may not have reached it yet; not yet due, as a gift still on its way (a retry chain that
    // faults stretched into the quiet tail: explore-hardened-store-errors seed 511, 0.27 s).
    const int64_t poll_us = (run.params.outbox_poll_ms + run.params.slack_ms) * 1000;
    if (committed >= 0 && run.end_us - committed < poll_us) {
      j.v.exempt("row committed " + secs(run.end_us - committed) + " before the end, within one poll: not yet due");
      continue;
    }
    const int64_t from_us = std::max(committed, last_attempt_failed_by_fault(run, budget, r.msg_id));
    const std::optional<std::string> held =
        committed < 0 ? std::nullopt : held_to_end(run, budget, from_us, poll_us, /*any_replica=*/false);
    exempt_or_fail(j.v, held, "row left " + r.status + " while faults held its way to the log until the end",
                   "outbox row " + r.msg_id + " still " + r.status + " at the end");
  }
  return j.v;
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

// What may be missing from a key's total, item by item: each item (a gift, or a batch whose copies
// were lost) is an exemption with its cause, and `count` the Σ giftCount they may remove.
struct Shortfall {
  struct Item {
    std::string reason;
    int64_t gift_count = 0;
  };
  int64_t count = 0;        // Σ gift_count
  std::vector<Item> items;  // one per gift that may be missing, in charge order
  void add(std::string reason, int64_t gift_count) {
    count += gift_count;
    items.push_back(Item{std::move(reason), gift_count});
  }
  void merge(const Shortfall& other) {
    for (const Item& it : other.items) add(it.reason, it.gift_count);
  }
  // Exempts the gifts whose allowance covers `missing` (the charged count less what arrived), one
  // per gift: an allowance a whole total never used excused nothing. A sum cannot say which gifts
  // are missing, so the first allowances, in charge order, stand for them.
  void exempt_used(Verdict& v, int64_t missing) const {
    for (size_t i = 0; i < items.size() && missing > 0; ++i) {
      v.exempt(items[i].reason);
      missing -= items[i].gift_count;
    }
  }
};

// The gifts whose count may be missing from what reached the viewers, per key, each with its
// cause: the 10 s expiry could have dropped it where it was judged (GiftReach::flight), its flight
// had not ended when the run did, or
// (`empty_rooms`) the room had no viewer at an instant when its batch could be pushed, so the
// batch pushed then reached nobody (explore-hardened seed 32, txmsg seed 5465).
std::map<model::GiftKey, Shortfall> shortfalls(const GiftReach& reach, const std::vector<model::ChargedGift>& gifts,
                                               bool empty_rooms) {
  std::map<model::GiftKey, Shortfall> out;
  for (const model::ChargedGift& g : gifts) {
    Shortfall& s = out[model::GiftKey{g.order.room, g.order.user, g.order.gift}];
    const Flight f = reach.flight(g);
    if (f.expiry) {
      s.add("gift may have expired on its way: " + *f.expiry, g.order.count);
      continue;
    }
    // Its batch could still be in its window or held when the run ended (a retry charged it 0.5 s
    // before the end: explore-hardened-txmsg seed 1237): not yet due, so not missing.
    if (f.to_us > reach.budget().end_us()) {
      s.add("gift still on its way when the run ended (logged " + secs(reach.budget().end_us() - f.append_us) +
                " before the end)",
            g.order.count);
      continue;
    }
    const std::optional<int64_t> empty =
        empty_rooms ? reach.unwatched_at(g.order.room, f.append_us, f.to_us) : std::nullopt;
    if (empty) {
      s.add("room " + g.order.room + " had no viewer at " + secs(*empty) + ", while the gift's batch could be pushed",
            g.order.count);
    }
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

std::map<model::GiftKey, Rollback> redis_rollback(const GiftsRun& run, const GiftReach& reach,
                                                  const std::vector<model::ChargedGift>& gifts) {
  std::map<model::GiftKey, Rollback> out;
  const std::vector<int64_t> crashes = reach.crashes("redis");  // only a crash loses what Redis held
  for (const model::ChargedGift& g : gifts) {
    const int64_t horizon =
        g.first_append_us < 0 ? run.end_us : g.first_append_us + (run.params.expiry_ms + run.params.window_ms) * 1000;
    for (int64_t t : crashes) {
      if (t < g.commit_us || t > horizon) continue;
      Rollback& r = out[model::GiftKey{g.order.room, g.order.user, g.order.gift}];
      r.count += g.order.count;
      ++r.gifts;
      if (r.fault.empty()) r.fault = "crash of redis at " + secs(t);
      break;
    }
  }
  return out;
}

// A crash of Redis in [from, to], described.
std::optional<std::string> redis_crash_in(const GiftReach& reach, int64_t from, int64_t to) {
  for (int64_t t : reach.crashes("redis")) {
    if (t >= from && t <= to) return "crash of redis at " + secs(t);
  }
  return std::nullopt;
}

// The distinct messages pushed into the rooms, as any viewer received them or, when none did, as
// the network lost their copies (a lost message's record names it): msgId -> (key, count of its
// first content). A msgId seen with a second content is a rolled-back window flushed again: only
// a Redis crash between the first content's flush (at most expiry + window before its first
// sighting) and this one explains it (explore-hardened seed 15699: AOF everysec lost a flush); its
// later content may then hold gifts that joined the restored window, whose counts the first content
// lacks (`reflushed`).
struct Pushed {
  std::map<std::string, std::pair<model::GiftKey, int64_t>> first;
  std::map<model::GiftKey, int64_t> reflushed;   // per key, Σ later contents a crash explains
  std::vector<std::string> excused;              // the crash of each explained second content
  std::vector<std::string> unexplained;          // msgIds with two contents no crash explains
  std::map<std::string, std::string> only_lost;  // msgId -> the loss of its copy, when no viewer got one
};

struct Sighting {
  int64_t time_us = 0;
  std::string msg;
  model::GiftKey key;
  int64_t count = 0;
  const LostCopy* lost = nullptr;  // a lost copy, or a delivery
};

std::vector<Sighting> sightings(const GiftsRun& run, const GiftReach& reach) {
  std::vector<Sighting> out;
  for (const HistoryOp& o : run.history) {
    if (o.op != "deliver") continue;
    const auto a = parse_args(o.args);
    out.push_back(
        Sighting{o.invoke_us, a.at("msg"), {a.at("room"), arg_int(a, "sender"), a.at("gift")}, arg_int(a, "count")});
  }
  for (const LostCopy& c : reach.lost_copies()) {
    out.push_back(Sighting{c.time_us, c.msg.msg_id, {c.msg.room, c.msg.sender, c.msg.gift}, c.msg.count, &c});
  }
  std::stable_sort(out.begin(), out.end(), [](const Sighting& a, const Sighting& b) { return a.time_us < b.time_us; });
  return out;
}

Pushed pushed_messages(const GiftsRun& run, const GiftReach& reach,
                       const std::map<model::GiftKey, Rollback>& rolled_back) {
  Pushed out;
  std::map<std::string, int64_t> first_seen;           // msgId -> its first sighting
  std::set<std::pair<std::string, int64_t>> contents;  // (msgId, count) already counted
  std::set<std::string> received;
  for (const Sighting& s : sightings(run, reach)) {
    if (s.lost == nullptr) received.insert(s.msg);
    if (s.lost != nullptr) out.only_lost.try_emplace(s.msg, s.lost->what);
    first_seen.try_emplace(s.msg, s.time_us);
    auto [it, inserted] = out.first.try_emplace(s.msg, s.key, s.count);
    if (inserted || it->second == std::make_pair(s.key, s.count) || !contents.insert({s.msg, s.count}).second) continue;
    const int64_t from = first_seen.at(s.msg) - (run.params.expiry_ms + run.params.window_ms) * 1000;
    const std::optional<std::string> crash =
        rolled_back.count(s.key) ? redis_crash_in(reach, from, s.time_us) : std::nullopt;
    if (crash) {
      out.reflushed[s.key] += s.count;
      out.excused.push_back(*crash);
    } else {
      out.unexplained.push_back(s.msg);
    }
  }
  for (const std::string& m : received) out.only_lost.erase(m);
  return out;
}

// A key's count `got` (pushed, or played by one viewer) against `want` charged: never more than
// charged plus what a rollback may repeat, never less than charged minus what the shortfall and a
// rollback (the gifts in flight across the crash, and re-flushed contents) may remove.
bool conserved(int64_t got, int64_t want, int64_t slack, const Rollback& rolled, int64_t reflushed) {
  return got <= want + rolled.count + reflushed && got >= want - slack - rolled.count - reflushed;
}

std::string rollback_note(const Rollback& r, int64_t reflushed) {
  if (r.gifts == 0 && reflushed == 0) return "";
  return " (" + std::to_string(r.count) + " in flight across a Redis crash, " + std::to_string(reflushed) +
         " re-flushed)";
}

// Judges one key's total against its charged count, exempting the allowances it used.
void judge_key(Judge& j, const std::string& who, const model::GiftKey& k, int64_t got, int64_t want,
               const Shortfall& shortfall, const Rollback& rolled, int64_t reflushed) {
  const bool within = conserved(got, want, shortfall.count, rolled, reflushed);
  if (within) shortfall.exempt_used(j.v, want - got);
  if (rolled.gifts > 0)
    j.v.exempt("gifts in flight across a Redis crash, combo state rolled back: " + rolled.fault, rolled.gifts);
  j.expect(within, [&] {
    return who + std::to_string(got) + " of " + model::describe(k) + ", charged " + std::to_string(want) +
           (shortfall.count ? " (" + std::to_string(shortfall.count) + " excusable)" : "") +
           rollback_note(rolled, reflushed);
  });
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

// The room the viewer was switching to at t_us: that of its last connect invoked at or before t_us,
// joined or not ("" if none). A switch begins when the viewer sets out for the other room (003:L193:
// it stops taking the room it leaves), not when the join succeeds (explore-hardened-txmsg seed
// 3344: a copy dropped as the viewer set out for room_1, whose joins failed for 1.4 s).
std::string switching_to_at(const std::vector<const HistoryOp*>& ops, int64_t t_us) {
  std::string room;
  for (const HistoryOp* o : ops) {
    if (o->op == "connect" && o->invoke_us <= t_us) room = parse_args(o->args)["room"];
  }
  return room;
}

// Whether `copy` (of room R, seq S) reached the viewer in a join of R without history (lastSeq=0)
// whose answer was seq >= S: the viewer's last connect invoked before the copy arrived.
bool below_fresh_baseline(const std::vector<const HistoryOp*>& ops, const HistoryOp& copy) {
  const HistoryOp* join = nullptr;
  for (const HistoryOp* o : ops) {
    if (o->op == "connect" && o->invoke_us <= copy.invoke_us) join = o;
  }
  if (join == nullptr || join->outcome != Outcome::kOk) return false;
  const auto j = parse_args(join->args), c = parse_args(copy.args);
  return arg_int(j, "lastSeq") == 0 && j.count("room") && c.count("room") && j.at("room") == c.at("room") &&
         arg_int(c, "seq") <= arg_int(parse_args(join->result), "seq");
}

// Why `copy`, dropped as below the expected seq, arrived late: a later seq of its room played
// before it arrived, in the same connection, after a fault refused a call of the push services that
// carried the copy's own msgId. Its seq was taken before the later one's, so only a delay after
// that could let the later one pass it; the refusal is that delay's cause, and the client's gap rule
// (GF-GAP-TIMEOUT plays the later seq after T_gap) and 003:L186 ("msg.seq < expectedSeq … 丢弃")
// then drop it (explore-hardened-store-errors seed 7063: the ZADD that re-armed its push was refused
// BUSY; the next seq played 3.4 s before it). nullopt: no such refusal, or nothing overtook it.
std::optional<std::string> overtaken_after_refusal(const GiftReach& reach, const std::vector<const HistoryOp*>& ops,
                                                   const HistoryOp& copy) {
  auto c = parse_args(copy.args);
  int64_t since_us = -1;  // the copy's connection: from the viewer's last connect before it arrived
  for (const HistoryOp* o : ops) {
    if (o->op == "connect" && o->invoke_us <= copy.invoke_us) since_us = o->invoke_us;
  }
  const HistoryOp* overtaker = nullptr;
  for (const HistoryOp* o : ops) {
    if (o->op != "deliver" || o->result != "played" || o->invoke_us < since_us || o->invoke_us >= copy.invoke_us)
      continue;
    auto a = parse_args(o->args);
    if (a["room"] == c["room"] && arg_int(a, "seq") > arg_int(c, "seq")) {
      overtaker = o;
      break;
    }
  }
  if (overtaker == nullptr) return std::nullopt;
  for (const GiftReach::Refusal& r : reach.refusals()) {
    if (r.time_us > overtaker->invoke_us) break;
    if (r.text.find(c["msg"]) != std::string::npos)
      return "its push refused before seq " + parse_args(overtaker->args)["seq"] + " overtook it: " + r.what;
  }
  return std::nullopt;
}

// Every msgId a viewer received is played by it at least once: a dropped copy is fine only when
// another copy played. A gap skipped after a fault on the push path may drop a late copy.
void check_received_played(const GiftsRun& run, const std::string& viewer, const std::vector<const HistoryOp*>& ops,
                           const GiftReach& reach, Verdict& v) {
  const fl::props::FaultBudget& budget = reach.budget();
  std::map<std::string, std::vector<const HistoryOp*>> unplayed;  // msgId -> its copies not played
  std::set<std::string> played;
  std::set<std::string> pending;  // a copy still buffered at the end: gift-play-order bounds its wait
  for (const HistoryOp* o : ops) {
    if (o->op != "deliver") continue;
    const std::string id = parse_args(o->args)["msg"];
    if (o->result == "played") played.insert(id);
    if (o->complete_us < 0) pending.insert(id);
    if (o->complete_us >= 0 && o->result != "played") unplayed[id].push_back(o);
  }
  std::set<std::string> received;
  for (const HistoryOp* o : ops) {
    if (o->op == "deliver") received.insert(parse_args(o->args)["msg"]);
  }
  v.checks += static_cast<int64_t>(received.size());  // one assertion per received msgId
  // A copy the seed's rules drop: the viewer switched rooms (003:L193 drops what it still held or
  // received of the room it left), or it joined without history after the copy was numbered
  // (003:L206 "直接返回当前…客户端从此开始接收": a copy numbered at or below the answered seq
  // is history, however fresh; GIFT-11 judges the seqs above it; explore-hardened-txmsg seed 546).
  auto seeds_rule = [&ops](const HistoryOp* o) {
    if (o->result == "dropped:left-room" && switching_to_at(ops, o->complete_us) != parse_args(o->args)["room"])
      return true;
    return dropped_below_expected(*o) && below_fresh_baseline(ops, *o);
  };
  for (const auto& [id, copies] : unplayed) {
    // A copy replaced in the buffer by another copy that is still buffered when the run ends
    // (explore-hardened seed 7649: two gateways forwarded one push 0.5 s before the end), or that
    // a rule of the seed dropped (explore-hardened-txmsg seed 1093: the replacing copy was dropped
    // by a room switch).
    if (played.count(id) || pending.count(id) || std::any_of(copies.begin(), copies.end(), seeds_rule)) continue;
    const HistoryOp* o = copies.front();
    std::vector<std::string> places = run.services;
    places.push_back(viewer);
    const int64_t from = o->invoke_us - (run.params.expiry_ms + run.params.window_ms) * 1000;
    std::optional<std::string> why = budget.explain(places, from, o->invoke_us);
    // A (re)connect of the viewer that a fault touched, the one it was in when the copy arrived or
    // a later one before the drop (its join or its answer lost, a broken call), moved its expected
    // seq under the copy (003:L206; explore-hardened seed 190: a join answer dropped on the link
    // left the viewer registered at one gateway, which forwarded the copy, while it joined through
    // the other, which answered the copy's seq).
    int64_t since_us = -1;  // the viewer's last connect before the copy arrived: its state then
    for (const HistoryOp* c : ops) {
      if (c->op == "connect" && c->invoke_us <= o->invoke_us) since_us = c->invoke_us;
    }
    for (const HistoryOp* c : ops) {
      if (why || c->op != "connect" || c->invoke_us < since_us || c->invoke_us > o->complete_us) continue;
      if (std::optional<std::string> f = budget.touched(c->id)) why = "its viewer's connect: " + *f;
    }
    if (!why && dropped_below_expected(*o)) why = overtaken_after_refusal(reach, ops, *o);
    exempt_or_fail(v, why, "received copy dropped after a fault on its path",
                   viewer + " received but never played: " + describe(*o));
  }
}

// The messages that never reached `viewer` (user `user`) because the network lost a copy on its
// way to it: per key, their counts, each an excused item (a loss excuses only the copy it hit).
std::map<model::GiftKey, Shortfall> lost_on_the_way(const GiftReach& reach, const std::string& viewer, int64_t user,
                                                    const std::vector<const HistoryOp*>& ops) {
  std::set<std::string> received;
  for (const HistoryOp* o : ops) {
    if (o->op == "deliver") received.insert(parse_args(o->args)["msg"]);
  }
  std::map<model::GiftKey, Shortfall> out;
  std::set<std::string> counted;
  for (const LostCopy& c : reach.lost_copies()) {
    if (!GiftReach::lost_for(c, viewer, user) || received.count(c.msg.msg_id) || !counted.insert(c.msg.msg_id).second)
      continue;
    out[model::GiftKey{c.msg.room, c.msg.sender, c.msg.gift}].add("copy lost on its way to " + viewer + ": " + c.what,
                                                                  c.msg.count);
  }
  return out;
}

// The user id the viewer joined with (its connects' `user=`).
int64_t viewer_user(const std::vector<const HistoryOp*>& ops) {
  for (const HistoryOp* o : ops) {
    if (o->op == "connect") return arg_int(parse_args(o->args), "user", -1);
  }
  return -1;
}

}  // namespace

// GIFT-5: each steady viewer plays, per (room, sender, gift), exactly the charged count, less what
// a cause that reached it excuses: the expiry (where the world shows it could apply), a copy lost
// on its way to this viewer, a Redis crash in the gifts' flight.
Verdict check_delivery(const GiftsRun& run) {
  Judge j("gift-delivery", {"GIFT-5"},
          "every viewer connected throughout plays Σ charged giftCount per (room, sender, gift), "
          "no more, and no less than what expiry, a lost copy or a Redis data loss excuses");
  if (db_unreadable(run, j.v)) return j.v;
  const GiftReach reach(run);
  const std::vector<model::ChargedGift> gifts = charged_gifts(run);
  const auto charged = model::totals(gifts);
  const auto expired = shortfalls(reach, gifts, /*empty_rooms=*/false);
  const auto rolled_back = redis_rollback(run, reach, gifts);
  const Pushed pushed = pushed_messages(run, reach, rolled_back);
  const int64_t first_send = first_send_us(run);
  for (const auto& [viewer, ops] : viewer_ops(run)) {
    check_received_played(run, viewer, ops, reach, j.v);
    std::string why;
    const std::string room = steady_room(run, ops, first_send, reach.budget(), &why);
    if (room.empty()) {
      j.v.exempt(why);
      continue;
    }
    const auto played = played_totals(ops);
    const auto lost = lost_on_the_way(reach, viewer, viewer_user(ops), ops);
    std::set<model::GiftKey> keys;
    for (const auto& [k, n] : charged) keys.insert(k);
    for (const auto& [k, n] : played) keys.insert(k);
    for (const model::GiftKey& k : keys) {
      if (std::get<0>(k) != room) continue;
      Shortfall s = expired.count(k) ? expired.at(k) : Shortfall{};
      if (lost.count(k)) s.merge(lost.at(k));
      judge_key(j, viewer + " played ", k, played.count(k) ? played.at(k) : 0, charged.count(k) ? charged.at(k) : 0, s,
                rolled_back.count(k) ? rolled_back.at(k) : Rollback{},
                pushed.reflushed.count(k) ? pushed.reflushed.at(k) : 0);
    }
  }
  return j.v;
}

// GIFT-6: the distinct messages pushed into a room (as any viewer received them, or the network
// lost their copies) carry, per key, the charged count: never more; less only by what a cause that
// reached the gifts excuses (the expiry, an empty room while their batch could be pushed, a Redis
// crash in their flight).
Verdict check_batch_conservation(const GiftsRun& run) {
  Judge j("gift-batch-conservation", {"GIFT-6"},
          "Σ giftCount over distinct pushed messages = Σ charged per (room, sender, gift); one msgId, one count");
  Verdict& v = j.v;
  if (db_unreadable(run, v)) return v;
  const GiftReach reach(run);
  const std::vector<model::ChargedGift> gifts = charged_gifts(run);
  const auto charged = model::totals(gifts);
  const auto excused = shortfalls(reach, gifts, /*empty_rooms=*/true);
  const auto rolled_back = redis_rollback(run, reach, gifts);
  const Pushed pushed = pushed_messages(run, reach, rolled_back);
  for (const std::string& crash : pushed.excused) v.exempt("a message re-flushed from a rolled-back window: " + crash);
  for (const std::string& id : pushed.unexplained) fail_verdict(v, "msgId " + id + " pushed with two contents");
  for (const auto& [id, loss] : pushed.only_lost) v.exempt("a batch seen only in copies the network lost: " + loss);
  std::map<model::GiftKey, int64_t> sums;
  for (const auto& [id, kc] : pushed.first) sums[kc.first] += kc.second;
  std::set<std::string> watched;  // rooms some viewer ever joined
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
      v.exempt("no viewer ever in room " + std::get<0>(k));
      continue;
    }
    judge_key(j, "pushed ", k, sums.count(k) ? sums.at(k) : 0, charged.count(k) ? charged.at(k) : 0,
              excused.count(k) ? excused.at(k) : Shortfall{}, rolled_back.count(k) ? rolled_back.at(k) : Rollback{},
              pushed.reflushed.count(k) ? pushed.reflushed.at(k) : 0);
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
  Judge j("gift-lock", {"GIFT-7"},
          "commands on gift:batch:count:* run inside a script or while their client holds "
          "gift:batch:{room}:{sender}:{gift} (lease by the Redis clock); only the holder deletes a lock");
  Verdict& v = j.v;                     // a script, or a command inside one, is a check that cannot fail
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
      auto h = held.find(key);
      j.expect(h == held.end() || h->second.client == c.client, [&] {
        return c.client + " deleted lock " + key + " held by " + h->second.client + " at " + secs(c.time_us);
      });
      held.erase(key);
    }
  }
  return j.v;
}

// GIFT-8: each msgId is played at most once per client.
Verdict check_play_once(const GiftsRun& run) {
  Judge j("gift-play-once", {"GIFT-8"}, "each msgId is played at most once per client");
  std::map<std::pair<std::string, std::string>, const HistoryOp*> first;
  for (const HistoryOp* o : ops_named(run, "deliver")) {
    if (o->result != "played") continue;
    const std::string id = parse_args(o->args)["msg"];
    const auto emplaced = first.try_emplace({o->process, id}, o);
    j.expect(emplaced.second,
             [&] { return "played twice: " + describe(*emplaced.first->second) + " and " + describe(*o); });
  }
  return j.v;
}

// GIFT-9: per client, plays in increasing seq; every received message is decided within T_gap.
Verdict check_play_order(const GiftsRun& run) {
  Judge j("gift-play-order", {"GIFT-9"},
          "per client, played seqs increase; each received message is played or dropped within T_gap");
  const int64_t t_gap_us = run.params.t_gap_ms * 1000;
  for (const auto& kv_ : viewer_ops(run)) {
    const std::string& viewer = kv_.first;
    const auto& ops = kv_.second;
    std::vector<const HistoryOp*> plays;
    for (const HistoryOp* o : ops) {
      if (o->op != "deliver") continue;
      const int64_t decided = o->complete_us < 0 ? run.end_us : o->complete_us;
      j.expect(decided - o->invoke_us <= t_gap_us, [&] {
        return viewer + " waited " + secs(decided - o->invoke_us) + " (T_gap " + secs(t_gap_us) + ") on " +
               describe(*o);
      });
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
      j.expect(arg_int(parse_args(o->args), "seq") > arg_int(parse_args(before->args), "seq"),
               [&] { return viewer + " played out of order: " + describe(*before) + " then " + describe(*o); });
    }
  }
  return j.v;
}

namespace {

// The gateways the viewer joined through by t_us: each keeps its userId -> connection mapping
// (003:L15) until a leave reaches it or it crashes, and a viewer that reconnects after a failed
// ping sends no leave (explore-hardened seed 1640: a copy forwarded by the gateway the viewer had
// left 20 s earlier, whose clock was 10 s behind). A connect left indeterminate by a fault that
// names it (its join or its answer lost, its call broken or held) may have joined as well: the
// viewer, not knowing, joins elsewhere and sends that gateway no leave (explore-hardened seed
// 19599: a join answer dropped on the viewer's link left it registered at gw-2, which forwarded a
// copy 12.1 s old as its clock, 4.8 s behind, read it 7.3 s old: 003:L199-200 reads the age on
// that server's own clock). An indeterminate connect no fault touched, or a refused one, joined
// nothing.
std::vector<std::string> joined_gateways_by(const std::vector<const HistoryOp*>& ops, int64_t t_us,
                                            const fl::props::FaultBudget& budget) {
  std::vector<std::string> out;
  for (const HistoryOp* o : ops) {
    if (o->op != "connect" || o->invoke_us > t_us) continue;
    if (o->outcome == Outcome::kOk || (o->outcome == Outcome::kInfo && budget.touched(o->id)))
      out.push_back(parse_args(o->args)["gw"]);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// One receipt's age against the expiry (003:L199-202). The age is the world's receipt time less
// the message's stamp, as the service reads it: a push point (a push service, or the gateway the
// viewer was joined through) let it pass when its own clock read it at most 10 s old, so a judging
// clock behind by d lets it through d older. The stamping node's offset cancels: both the service
// and this judge measure against the stamp itself. Past that bound (and the timer slack), only time
// the viewer's own link (or the viewer) was held by a fault then can have aged it.
void judge_age(Verdict& v, const GiftsRun& run, const GiftReach& reach, const std::string& viewer,
               const std::vector<const HistoryOp*>& ops, const HistoryOp& o) {
  ++v.checks;
  const auto a = parse_args(o.args);
  const int64_t age_us = o.invoke_us - arg_int(a, "ts") * 1000;
  const int64_t bound_us = (run.params.expiry_ms + run.params.slack_ms) * 1000;
  if (age_us <= bound_us) return;
  std::vector<std::string> judges = run.pushers;
  for (const std::string& gw : joined_gateways_by(ops, o.invoke_us, reach.budget())) judges.push_back(gw);
  const Skew judge = reach.skew(judges, o.invoke_us - age_us, o.invoke_us);
  const int64_t widened_us = bound_us + std::max<int64_t>(0, -judge.min_us);
  if (age_us <= widened_us) {
    v.exempt("age judged on a clock behind by up to " + secs(-judge.min_us) + ": " + judge.what);
    return;
  }
  const int64_t held_us = reach.budget().covered_us({viewer}, o.invoke_us - age_us, o.invoke_us);
  const std::optional<std::string> held = reach.budget().explain({viewer}, o.invoke_us - age_us, o.invoke_us);
  exempt_or_fail(v, held_us >= age_us - widened_us ? held : std::nullopt, "delivery held on the viewer's link",
                 "received " + secs(age_us) + " old (bound " + secs(widened_us) + "): " + describe(o));
}

}  // namespace

// GIFT-10: nothing older than 10 s reaches a client; a committed order is never removed.
Verdict check_expiry(const GiftsRun& run) {
  Judge j("gift-expiry", {"GIFT-10"},
          "no client receives a message older than 10 s (+ slack, + how far the judging clocks were "
          "behind); every committed order stays recorded");
  const GiftReach reach(run);
  for (const auto& [viewer, ops] : viewer_ops(run)) {
    for (const HistoryOp* o : ops) {
      if (o->op == "deliver") judge_age(j.v, run, reach, viewer, ops, *o);
    }
  }
  if (!run.db_read) return j.v;
  std::set<std::pair<int64_t, std::string>> rows;
  for (const model::Order& o : run.orders) rows.insert({o.user, o.request_id});
  for (const HistoryOp* o : ops_named(run, "send")) {
    if (o->outcome != Outcome::kOk) continue;
    const auto a = parse_args(o->args);
    const bool kept = rows.count({arg_int(a, "user"), a.at("req")}) > 0;
    j.expect_or_excuse(kept, kept ? std::nullopt : reach.budget().explain({"db"}, o->complete_us, run.end_us),
                       "charged order lost with the DB's unsynced writes",
                       [&] { return "answered charged but no order row remains: " + describe(*o); });
  }
  return j.v;
}

namespace {

// A Redis crash that may have rolled the room's seq counter back under `drop` (a delivery of
// room R with seq S dropped as below the expected seq): the counter had already handed out S or
// more (some viewer got another message of R with seq >= S before the drop), and Redis crashed
// after that first such delivery and before the drop. A crash before the counter reached S, or
// after the drop, cannot explain it.
std::optional<std::string> seq_rollback(const GiftsRun& run, const GiftReach& reach, const HistoryOp& drop) {
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
  return redis_crash_in(reach, reached_us, drop.invoke_us);
}

}  // namespace

// GIFT-11: after a (re)connect whose baseline is B (lastSeq, or the server's seq without history),
// no received message with seq > B is dropped as a duplicate unless its msgId was played.
Verdict check_reconnect(const GiftsRun& run) {
  Judge j("gift-reconnect", {"GIFT-11"},
          "after a (re)connect, no message with seq > lastSeq (or > the answered seq without history) "
          "is dropped as seq < expectedSeq unless already played");
  Verdict& v = j.v;  // a drop is counted, then passed over, exempted or failed by branch
  const GiftReach reach(run);
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
      if (!dropped_below_expected(*o) || played.count(a.at("msg"))) continue;
      exempt_or_fail(v, seq_rollback(run, reach, *o),
                     "the room's seq counter may have been rolled back by a Redis crash after it handed out this seq",
                     viewer + " dropped seq " + std::to_string(seq) + " > baseline " + std::to_string(baseline) + ": " +
                         describe(*o));
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
