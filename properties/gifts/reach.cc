#include "properties/gifts/reach.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "sim/node_clock.h"

namespace fl::gifts::props {
namespace {

using model::parse_args;

// The whole of `s` as a decimal integer.
bool to_i64(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtoll(s.c_str(), &end, 10);
  return end == s.c_str() + s.size();
}

// `s`'s fields between `sep`s (an empty field where two meet).
std::vector<std::string> fields(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t at = s.find(sep); at != std::string::npos; from = at + 1, at = s.find(sep, from)) {
    out.push_back(s.substr(from, at - from));
  }
  out.push_back(s.substr(from));
  return out;
}

// The failed SQL request of a push service at t (the world's commit log names its caller and its
// statements), rendered: what a storage error at t refused.
std::string failed_sql_text(const GiftsRun& run, const std::vector<std::string>& pushers, int64_t t) {
  std::string out;
  for (const SqlCommit& c : run.commits) {
    if (c.time_us != t || c.ok || std::find(pushers.begin(), pushers.end(), c.client) == pushers.end()) continue;
    out += c.client + ":";
    for (const SqlStatementObs& s : c.statements) {
      for (const std::string& p : s.params) out += " " + p;
    }
  }
  return out;
}

// Calls of the push services that the world refused or lost, with what they carried: a lost
// message or a broken call names its ends and its message, a Redis error reply the client and the
// command it refused, a storage error the SQL request that failed at its instant.
std::vector<GiftReach::Refusal> push_refusals(const GiftsRun& run, const fl::props::FaultBudget& budget) {
  auto pusher = [&run](const std::string& p) {
    return std::find(run.pushers.begin(), run.pushers.end(), p) != run.pushers.end();
  };
  std::vector<std::string> places = run.pushers;
  places.insert(places.end(), {"redis", "db"});
  std::vector<GiftReach::Refusal> out;
  for (const auto* r : budget.instants(places, 0, run.end_us)) {
    if (wire_gift(r->message)) continue;  // a lost push to a gateway: a lost copy, not a refusal
    std::string text;
    if (pusher(r->process) || pusher(r->peer_process)) {
      text = r->message;
    } else if (r->process == "redis" && pusher(r->message.substr(0, r->message.find(':')))) {
      text = r->message;
    } else if (r->process == "db") {
      text = failed_sql_text(run, run.pushers, r->time_us);
    }
    if (!text.empty()) out.push_back(GiftReach::Refusal{r->time_us, std::move(text), r->describe()});
  }
  return out;
}

bool on(const std::vector<std::string>& path, const std::string& place) {
  return std::find(path.begin(), path.end(), place) != path.end();
}

// How much of [from, to] duration faults held `path`: a process's own outage or pause at a place
// on it, or a link fault with both ends on it (a partition of a gift service and the DB holds no
// push); and the latest of them, described.
std::pair<int64_t, std::string> path_held(const std::vector<fl::props::FaultSpan>& spans,
                                          const std::vector<std::string>& path, int64_t from_us, int64_t to_us) {
  int64_t covered = 0, reach = from_us;
  std::string latest;
  for (const fl::props::FaultSpan& s : spans) {  // in start order
    if (s.from_us > to_us) break;
    if (!on(path, s.place) || (!s.peer.empty() && !on(path, s.peer)) || s.to_us < from_us) continue;
    latest = s.what;
    const int64_t a = std::max(s.from_us, reach), b = std::min(s.to_us, to_us);
    if (a >= b) continue;
    covered += b - a;
    reach = b;
  }
  return {covered, latest};
}

}  // namespace

std::string secs(int64_t us) {
  if (us >= sim::kEpochUs) us -= sim::kEpochUs;
  char b[32];
  std::snprintf(b, sizeof b, "%.3f s", static_cast<double>(us) / 1e6);
  return b;
}

std::map<std::string, std::vector<const HistoryOp*>> viewer_ops(const GiftsRun& run) {
  std::map<std::string, std::vector<const HistoryOp*>> out;
  for (const HistoryOp& o : run.history) {
    if (o.op == "connect" || o.op == "deliver") out[o.process].push_back(&o);
  }
  return out;
}

std::optional<WireGift> wire_gift(const std::string& message) {
  const size_t colon = message.find(": ");
  if (colon == std::string::npos) return std::nullopt;
  std::string text = message.substr(colon + 2);
  WireGift m;
  const size_t to = text.find(" to");
  if (to != std::string::npos) {
    for (const std::string& u : fields(text.substr(to + 3), ' ')) {
      int64_t user = 0;
      if (to_i64(u, &user)) m.users.push_back(user);
    }
    text.resize(to);
  }
  const std::vector<std::string> f = fields(text, '|');
  if (f.size() != 7) return std::nullopt;
  m.msg_id = f[0];
  m.room = f[1];
  m.gift = f[3];
  if (!to_i64(f[2], &m.sender) || !to_i64(f[4], &m.count) || !to_i64(f[5], &m.ts_ms) || !to_i64(f[6], &m.seq)) {
    return std::nullopt;
  }
  return m;
}

GiftReach::GiftReach(const GiftsRun& run) : run_(run), budget_(run.faults, run.end_us) {
  collect_lost_copies();
  refusals_ = push_refusals(run, budget_);
  collect_spans();
  for (const model::Order& o : run.orders) key_msgs_[model::GiftKey{o.room, o.user, o.gift}].push_back(o.msg_id);
  collect_presence();
}

// Every lost copy of a gift message on its way to the viewers: a push to a gateway, or a gateway's
// forward to a viewer (both name the process they were for).
void GiftReach::collect_lost_copies() {
  for (const auto* r : budget_.instants(run_.gateways, 0, run_.end_us)) {
    if (r->detail.rfind("reply", 0) == 0) continue;
    const std::optional<WireGift> m = wire_gift(r->message);
    if (!m || r->peer_process.empty()) continue;
    lost_.push_back(LostCopy{r->time_us, r->peer_process, *m, r->describe()});
  }
}

// The budget's spans, Redis's refusal windows (a push needs Redis: the room's online users are
// there, 003:L19, and so are hardened's claims, windows and dedup keys, all written per push; a
// gift held past 10 s is dropped, 003:L197-L202), and each push service's crash stretched to its
// eviction from the log's group.
void GiftReach::collect_spans() {
  spans_ = budget_.spans();
  for (const fl::props::FaultSpan& w : budget_.refusal_windows()) spans_.push_back(w);
  for (const std::string& p : run_.pushers) {
    for (const auto& [down, up] : budget_.downtimes(p)) {
      const int64_t evicted = evicted_at(down);
      if (evicted <= up) continue;
      spans_.push_back(fl::props::FaultSpan{
          p, down, evicted,
          "crash of " + p + " at " + secs(down) + ", evicted from the log's group at " + secs(evicted)});
    }
  }
  std::stable_sort(spans_.begin(), spans_.end(),
                   [](const fl::props::FaultSpan& a, const fl::props::FaultSpan& b) { return a.from_us < b.from_us; });
}

void GiftReach::collect_presence() {
  for (const auto& [viewer, ops] : viewer_ops(run_)) {
    for (size_t i = 0; i < ops.size(); ++i) {
      const HistoryOp* c = ops[i];
      if (c->op != "connect" || c->outcome != Outcome::kOk) continue;
      const auto a = parse_args(c->args);
      int64_t until = run_.end_us;
      for (size_t j = i + 1; j < ops.size(); ++j) {
        if (ops[j]->op == "connect") {
          until = ops[j]->invoke_us;
          break;
        }
      }
      // ... or to a crash of the gateway it joined through, which dropped its connection
      // (explore-hardened-txmsg seed 5465: a batch pushed 0.3 s after gw-2 crashed, before its
      // viewers had reconnected through gw-1, reached nobody).
      const std::string gw = a.count("gw") ? a.at("gw") : "";
      for (int64_t t : gw.empty() ? std::vector<int64_t>{} : crashes(gw)) {
        if (t >= c->complete_us && t < until) until = t;
      }
      presence_[a.count("room") ? a.at("room") : ""].push_back(Presence{viewer, gw, c->complete_us, until});
    }
  }
}

// A consumer that crashed at `down` keeps its partitions until the log's group evicts it: when the
// broker's clock (the log node's, which never goes back: a jump back freezes it) has advanced the
// session timeout past `down` (Kafka's session.timeout.ms; sim/log/broker.h). The run's end if never.
int64_t GiftReach::evicted_at(int64_t down_us) const {
  const int64_t due = budget_.monotonic_clock_us("log", down_us) + run_.params.consumer_session_us;
  if (budget_.monotonic_clock_us("log", run_.end_us) < due) return run_.end_us;
  int64_t lo = down_us, hi = run_.end_us;  // the broker's clock is below `due` at lo, not at hi
  while (hi - lo > 1000) {
    const int64_t mid = lo + (hi - lo) / 2;
    (budget_.monotonic_clock_us("log", mid) < due ? lo : hi) = mid;
  }
  return hi;
}

// The refused calls in [from, to] that carried a message of g's key (a batch of its combo key
// carries the msgId of a gift of that key, 003:L113) each held it until its caller tried again:
// at most the timer slack. Plus the time duration faults covered `path` in [from, to].
int64_t GiftReach::held(const model::ChargedGift& g, const std::vector<std::string>& path, int64_t from_us,
                        int64_t to_us) const {
  const auto msgs = key_msgs_.find(model::GiftKey{g.order.room, g.order.user, g.order.gift});
  int64_t refused = 0;
  for (const Refusal& r : refusals_) {
    if (r.time_us < from_us || r.time_us > to_us || msgs == key_msgs_.end()) continue;
    refused += std::any_of(msgs->second.begin(), msgs->second.end(),
                           [&](const std::string& m) { return r.text.find(m) != std::string::npos; });
  }
  return path_held(spans_, path, from_us, to_us).first + refused * run_.params.slack_ms * 1000;
}

// start + what held it from `from` on, again with the longer stretch, until it meets nothing more
// or reaches the cap.
int64_t GiftReach::reach_until(const model::ChargedGift& g, const std::vector<std::string>& path, int64_t from_us,
                               int64_t start_us, int64_t cap_us) const {
  int64_t t = start_us;
  while (t < cap_us) {
    const int64_t next = start_us + held(g, path, from_us, t);
    if (next <= t) break;
    t = next;
  }
  return std::min(t, cap_us);
}

namespace {

// The clock faults of several Skew::what lists ("a, b"), each named once, in first-seen order.
std::string join_distinct(const std::vector<std::string>& lists) {
  std::vector<std::string> seen;
  std::string out;
  for (const std::string& list : lists) {
    size_t at = 0;
    while (at < list.size()) {
      const size_t end = std::min(list.find(", ", at), list.size());
      const std::string item = list.substr(at, end - at);
      at = end + 2;
      if (item.empty() || std::find(seen.begin(), seen.end(), item) != seen.end()) continue;
      seen.push_back(item);
      out += (out.empty() ? "" : ", ") + item;
    }
  }
  return out;
}

}  // namespace

Skew GiftReach::skew(const std::vector<std::string>& nodes, int64_t from_us, int64_t to_us) const {
  Skew out;
  for (const std::string& n : nodes) {
    const fl::props::ClockReach c = budget_.clock(n, from_us, std::max(from_us, to_us));
    out.min_us = std::min(out.min_us, c.min_offset_us);
    out.max_us = std::max(out.max_us, c.max_offset_us);
    if (!c.what.empty()) out.what += (out.what.empty() ? "" : ", ") + c.what;
  }
  return out;
}

Flight GiftReach::flight(const model::ChargedGift& g) const {
  Flight f;
  f.born_us = g.attempt_us >= 0 ? g.attempt_us : g.commit_us;
  f.append_us = g.first_append_us;
  if (f.append_us < 0) {
    f.expiry = "it never reached the log (gift-outbox judges that)";
    return f;
  }
  const int64_t expiry_us = run_.params.expiry_ms * 1000;
  const int64_t normal_us = (run_.params.window_ms + run_.params.push_tick_ms) * 1000;
  const int64_t from_us = f.append_us - normal_us;  // a window it joined opened no earlier
  // Its path: the push services (any may consume or claim it), the log, Redis, the DB (the push
  // ledger), and the gateways its room's viewers were joined through.
  std::vector<std::string> gateways;
  for (const Presence& p : presence(g.order.room)) {
    if (p.to_us >= from_us && p.from_us <= f.born_us + expiry_us && !p.gateway.empty()) gateways.push_back(p.gateway);
  }
  std::sort(gateways.begin(), gateways.end());
  gateways.erase(std::unique(gateways.begin(), gateways.end()), gateways.end());
  std::vector<std::string> path = run_.pushers;
  path.insert(path.end(), {"log", "redis", "db"});
  path.insert(path.end(), gateways.begin(), gateways.end());
  std::vector<std::string> judges = run_.pushers;
  judges.insert(judges.end(), gateways.begin(), gateways.end());
  // Judged age = (t + judge's offset) - (stamp time + stamper's offset): a judging clock ahead or a
  // stamping clock behind makes it look older, the reverse younger.
  const Skew judge = skew(judges, from_us, f.born_us + expiry_us);
  Skew stamp = skew({g.creator}, f.born_us, std::max(f.born_us, g.commit_us));
  const Skew batcher = skew(run_.pushers, from_us, f.born_us + expiry_us);
  stamp.min_us = std::min(stamp.min_us, batcher.min_us);
  stamp.max_us = std::max(stamp.max_us, batcher.max_us);
  const int64_t older_us = std::max<int64_t>(0, judge.max_us) + std::max<int64_t>(0, -stamp.min_us);
  const int64_t younger_us = std::max<int64_t>(0, -judge.min_us) + std::max<int64_t>(0, stamp.max_us);
  // A combo window closes by the clock of the push service that holds it (003:L105, 3 s): that clock
  // going back (a jump, a slow drift) while the window is open keeps it open longer in world time,
  // by as much as the clock can be off over the flight (explore-hardened-txmsg seed 8255: push-2's
  // clock went back 2.1 s under an open window, whose batch then waited on a clogged DB link).
  int64_t stretch_us = 0;
  for (const std::string& p : run_.pushers) {
    stretch_us = std::max(stretch_us, budget_.clock(p, from_us, f.born_us + expiry_us).max_fall_us);
  }
  const int64_t start_us = f.append_us + normal_us + stretch_us;
  f.to_us = reach_until(g, path, from_us, start_us, f.born_us + expiry_us + younger_us);
  f.held_us = held(g, path, from_us, f.to_us);
  f.held_by = path_held(spans_, path, from_us, f.to_us).second;
  if (f.held_by.empty() && f.held_us > 0) f.held_by = "refused calls of its key";
  // The expiry may drop it iff it can still be unjudged when a judge may first see it expired.
  const int64_t expires_us = f.born_us + expiry_us - older_us;
  if (reach_until(g, path, from_us, start_us, expires_us) < expires_us) return f;
  std::string why = "logged " + secs(f.append_us - f.born_us) + " after its request";
  if (stretch_us > 0) why += ", its window kept open up to " + secs(stretch_us) + " longer by a push clock going back";
  if (f.held_us > 0) why += ", held up to " + secs(f.held_us) + " on its push path (" + f.held_by + ")";
  if (older_us > 0) {
    why += ", clocks make it look " + secs(older_us) + " older (" +
           join_distinct({judge.what, stamp.what, batcher.what}) + ")";
  }
  f.expiry = why;
  return f;
}

bool GiftReach::lost_for(const LostCopy& copy, const std::string& viewer, int64_t user) {
  return copy.to == viewer || std::find(copy.msg.users.begin(), copy.msg.users.end(), user) != copy.msg.users.end();
}

std::vector<int64_t> GiftReach::crashes(const std::string& process) const {
  std::vector<int64_t> out;
  for (const auto& [down, up] : budget_.downtimes(process)) out.push_back(down);
  return out;
}

const std::vector<Presence>& GiftReach::presence(const std::string& room) const {
  static const std::vector<Presence> kNobody;
  auto it = presence_.find(room);
  return it == presence_.end() ? kNobody : it->second;
}

std::optional<int64_t> GiftReach::unwatched_at(const std::string& room, int64_t from_us, int64_t to_us) const {
  std::vector<std::pair<int64_t, int64_t>> watched;
  for (const Presence& p : presence(room)) watched.push_back({p.from_us, p.to_us});
  std::sort(watched.begin(), watched.end());
  int64_t covered = from_us;
  for (const auto& [a, b] : watched) {
    if (a > covered) break;
    covered = std::max(covered, b);
  }
  if (covered >= to_us) return std::nullopt;
  return covered;
}

}  // namespace fl::gifts::props
