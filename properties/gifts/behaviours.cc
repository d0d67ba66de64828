#include "properties/gifts/behaviours.h"

#include <algorithm>
#include <map>
#include <set>

#include "properties/gifts/reach.h"

namespace fl::gifts::props {

namespace {

using model::arg_int;
using model::parse_args;
using Names = std::set<std::string>;

constexpr int64_t kMs = 1000;
constexpr int64_t kTapWindowUs = 200 * kMs;     // 003:L41's double tap, the window the fix uses
constexpr int64_t kDedupTtlUs = 10'000 * kMs;   // 003:L54
constexpr int64_t kLateAppendUs = 6'000 * kMs;  // a half's check timeout; several outbox polls
constexpr int64_t kClaimLeaseUs = 2'000 * kMs;  // a claimed batch returns after it (docs/systems/gifts.md)
constexpr int64_t kNearExpiryUs = 8'000 * kMs;  // within 2 s of the 10 s expiry (003:L200)
constexpr int64_t kComboThreshold = 10;         // 003:L125

bool member_of(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string msg_id_of(const LogRecordObs& r) { return r.value.substr(0, r.value.find('|')); }

// The senders' side: answers, taps and retries of one request.
void sends(const GiftsRun& run, Names& out) {
  std::map<std::pair<int64_t, std::string>, std::vector<int64_t>> by_intent;   // (user, intent) -> invokes
  std::map<std::pair<int64_t, std::string>, std::vector<int64_t>> by_request;  // (user, req) -> invokes
  for (const HistoryOp& o : run.history) {
    if (o.op != "send") continue;
    if (o.outcome == Outcome::kInfo || o.result == "error" || o.result == "unavailable") {
      out.insert("gift answered indeterminate");
    }
    const auto a = parse_args(o.args);
    const int64_t user = arg_int(a, "user");
    by_intent[{user, a.count("intent") ? a.at("intent") : ""}].push_back(o.invoke_us);
    by_request[{user, a.count("req") ? a.at("req") : ""}].push_back(o.invoke_us);
  }
  for (auto& [intent, times] : by_intent) {
    std::sort(times.begin(), times.end());
    for (size_t i = 0; i + 1 < times.size(); ++i) {
      if (times[i + 1] - times[i] < kTapWindowUs) out.insert("double tap within 200 ms");
    }
  }
  for (const auto& [request, times] : by_request) {
    const auto [first, last] = std::minmax_element(times.begin(), times.end());
    if (*last - *first > kDedupTtlUs) out.insert("request retried after the 10 s dedup TTL");
  }
}

// What the DB saw of the charges: two INSERTs of one request, check-backs, the DB held meanwhile.
void charges(const GiftsRun& run, Names& out) {
  std::map<std::pair<std::string, std::string>, int> inserts;  // (user, req) -> gift_order INSERTs
  for (const SqlCommit& c : run.commits) {
    for (const SqlStatementObs& s : c.statements) {
      const bool order_insert = s.sql.rfind("INSERT", 0) == 0 && s.sql.find("gift_order") != std::string::npos;
      if (order_insert && s.params.size() >= 2 && ++inserts[{s.params[0], s.params[1]}] == 2) {
        out.insert("one request reached the DB twice");
      }
      // The broker's check-back (003:L229) reads the order, or fences the local transaction.
      if (s.sql.rfind("SELECT id FROM gift_order WHERE msg_id", 0) == 0 ||
          (s.sql.find("gift_tx") != std::string::npos && s.sql.find("'ROLLBACK'") != std::string::npos)) {
        out.insert("half message checked back");
      }
    }
  }
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  for (const HistoryOp& o : run.history) {
    if (o.op != "send") continue;
    const int64_t to_us = o.complete_us < 0 ? run.end_us : o.complete_us;
    if (budget.covered_us({"db"}, o.invoke_us, to_us) > 0) out.insert("DB held while a gift was charged");
  }
}

// The log and the combo windows: late or repeated appends, repeated adds, full batches.
void log_and_windows(const GiftsRun& run, Names& out) {
  std::map<std::string, int> appends;
  for (const LogRecordObs& r : run.log) {
    if (++appends[msg_id_of(r)] == 2) out.insert("gift appended to the log twice");
  }
  for (const model::ChargedGift& g : charged_gifts(run)) {
    if (g.commit_us >= 0 && g.first_append_us - g.commit_us >= kLateAppendUs) {
      out.insert("gift appended 6 s or more after its commit");
    }
  }
  // The combo add checks a msgId's member key first (GF-COMBO-ATOMIC's idempotence): two checks of
  // one key are two adds of one message.
  std::map<std::string, int> member_checks;
  for (const RedisCommand& c : run.redis) {
    if (c.argv.size() >= 2 && c.argv[0] == "EXISTS" && c.argv[1].rfind("gift:member:", 0) == 0 &&
        ++member_checks[c.argv[1]] == 2) {
      out.insert("gift reached the combo window twice");
    }
  }
}

// Faults on the way from the log to the viewers while gifts were on it.
void push_path(const GiftsRun& run, const GiftReach& reach, Names& out) {
  const fl::props::FaultBudget& budget = reach.budget();
  const int64_t window_us = (run.params.window_ms + run.params.push_tick_ms) * kMs;
  const int64_t flight_us = (run.params.expiry_ms + run.params.window_ms) * kMs;
  const std::vector<std::pair<int64_t, int64_t>> redis_down = budget.downtimes("redis");
  for (const model::ChargedGift& g : charged_gifts(run)) {
    if (g.first_append_us < 0) continue;
    for (const auto& [down_us, up_us] : redis_down) {
      if (down_us >= g.first_append_us && down_us <= g.first_append_us + flight_us) {
        out.insert("Redis restart with a gift in flight");
      }
    }
    if (!run.pushers.empty() && budget.covered_us(run.pushers, g.first_append_us, g.first_append_us + window_us) > 0) {
      out.insert("push service down or paused with a gift in flight");
    }
  }
  for (const fl::props::FaultSpan& span : budget.spans()) {
    if (span.peer.empty() && member_of(run.pushers, span.place) && span.to_us - span.from_us >= kClaimLeaseUs) {
      out.insert("push service held past the claim lease");
    }
  }
  std::vector<std::string> push_points = run.pushers;
  push_points.insert(push_points.end(), run.gateways.begin(), run.gateways.end());
  for (const std::string& node : push_points) {
    if (budget.clock(node, 0, run.end_us).max_abs_offset_us > 0) out.insert("push point clock moved");
  }
  if (!reach.lost_copies().empty()) out.insert("pushed copy lost on the network");
  for (const LostCopy& c : reach.lost_copies()) {
    if (c.msg.count >= kComboThreshold) out.insert("batch of 10 or more gifts pushed");
  }
}

// What each viewer received and how it joined.
void viewers(const GiftsRun& run, Names& out) {
  for (const auto& [viewer, ops] : viewer_ops(run)) {
    std::set<std::string> received, rooms;
    std::map<std::string, int64_t> last_seq;  // room -> seq of the last receipt
    for (const HistoryOp* o : ops) {
      auto a = parse_args(o->args);
      if (o->op == "connect") {
        rooms.insert(a["room"]);
        const int64_t last = arg_int(a, "lastSeq");
        if (o->outcome == Outcome::kOk && last > 0 && arg_int(parse_args(o->result), "seq") > last) {
          out.insert("viewer rejoined behind its room");
        }
        continue;
      }
      if (!received.insert(a["msg"]).second) out.insert("viewer received one message twice");
      const int64_t seq = arg_int(a, "seq");
      auto [it, fresh] = last_seq.try_emplace(a["room"], seq);
      if (!fresh && seq < it->second) out.insert("viewer received seqs out of order");
      it->second = seq;
      if (o->invoke_us - arg_int(a, "ts") * kMs > kNearExpiryUs) out.insert("message received more than 8 s old");
      if (arg_int(a, "count") >= kComboThreshold) out.insert("batch of 10 or more gifts pushed");
    }
    if (rooms.size() > 1) out.insert("viewer switched rooms");
  }
}

}  // namespace

std::vector<std::string> gifts_behaviours(const GiftsRun& run) {
  Names out;
  sends(run, out);
  charges(run, out);
  log_and_windows(run, out);
  const GiftReach reach(run);
  push_path(run, reach, out);
  viewers(run, out);
  return {out.begin(), out.end()};
}

}  // namespace fl::gifts::props
