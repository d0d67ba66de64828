#include "properties/likes/checks.h"
#include "properties/common/judge.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "properties/common/fault_budget.h"
#include "properties/likes/truth.h"
#include "sim/node_clock.h"

namespace fl::likes::props {
namespace {

using model::LikesModel;
using model::Possible;
using model::Range;

using fl::props::Judge;

// Every place a like/unlike/count/state request may pass: the client, any replica (the history does
// not say which one served it), Redis and the DB.
std::vector<std::string> path_of(const LikesRun& run, const std::string& client) {
  std::vector<std::string> out{client, "redis", "db"};
  out.insert(out.end(), run.replicas.begin(), run.replicas.end());
  return out;
}
std::vector<std::string> stores_and_replicas(const LikesRun& run) { return path_of(run, "redis"); }

// The Redis restart that opened the grace window over [s, e], for the exemption's reason.
std::string grace_reason(const LikesRun& run, const fl::props::FaultBudget& budget, int64_t s_us, int64_t e_us) {
  for (const auto& [from, to] : run.redis_grace) {
    if (s_us < to && e_us >= from) return budget.explain({"redis"}, from, to, 0).value_or("a Redis restart");
  }
  return "a Redis restart";
}

int64_t arg_value(const std::string& args, const std::string& key) {
  const std::string k = key + "=";
  size_t pos = args.find(k);
  if (pos == std::string::npos) return 0;
  return std::strtoll(args.c_str() + pos + k.size(), nullptr, 10);
}

bool is_write(const HistoryOp& h) { return h.op == "like" || h.op == "unlike"; }
bool definite(const HistoryOp& h) { return h.outcome == Outcome::kOk && h.complete_us >= 0; }
int64_t end_of(const HistoryOp& h) { return h.complete_us >= 0 ? h.complete_us : model::kNever; }

// Whether the row statement `c` may be the write of like/unlike `h`: same pair and direction, and
// the same request id when the statement binds one (times are the caller's to check).
bool may_write(const DbChange& c, const HistoryOp& h) {
  return is_write(h) && (h.op == "like") == (c.delta > 0) && arg_value(h.args, "asset") == c.asset &&
         arg_value(h.args, "user") == c.user && (!c.request_id || arg_value(h.args, "req") == *c.request_id);
}

std::string str_pair(const Pair& p) { return "asset=" + std::to_string(p.first) + " user=" + std::to_string(p.second); }

std::string opt(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("nil"); }

// The pair's possible values just before `h` took effect. `whole_request`: every attempt of h's
// request is left out (an effect attributed to a request came from one of its attempts);
// otherwise only h itself (an earlier attempt of a retried request may have landed before it).
// Each attempt is its own write: an attempt that timed out may still land at any later time (the
// service does not deduplicate attempts), and an acknowledged attempt took effect inside its own
// interval (swarm-hardened seed 10669 showed a service answering a retry with an earlier
// attempt's effect, which linearized before an unlike acknowledged before the retry was sent).
Possible pre_state(const LikesModel& m, const LikesRun& run, const HistoryOp& h, bool whole_request,
                   std::optional<std::pair<int64_t, int64_t>> at = std::nullopt) {
  const int64_t asset = arg_value(h.args, "asset");
  const int64_t user = arg_value(h.args, "user");
  const uint64_t req = static_cast<uint64_t>(arg_value(h.args, "req"));
  LikesModel reduced;
  for (const HistoryOp& o : run.history) {
    if (!is_write(o) || o.outcome == Outcome::kFail) continue;
    if (arg_value(o.args, "asset") != asset || arg_value(o.args, "user") != user) continue;
    if (o.id == h.id) continue;
    if (whole_request && static_cast<uint64_t>(arg_value(o.args, "req")) == req) continue;
    reduced.add(model::WriteOp{o.id, asset, user, o.op == "like", definite(o), o.invoke_us,
                               definite(o) ? o.complete_us : model::kNever, o.describe()});
  }
  (void)m;
  if (at) return reduced.possible_during(asset, user, at->first, at->second);
  return reduced.possible_during(asset, user, h.invoke_us, end_of(h));
}

// The last `n` like/unlike ops of h's pair invoked before h completed (evidence).
std::string pair_ops(const LikesRun& run, const HistoryOp& h, size_t n) {
  const int64_t asset = arg_value(h.args, "asset"), user = arg_value(h.args, "user");
  std::vector<const HistoryOp*> ops;
  for (const HistoryOp& o : run.history) {
    if (!is_write(o) || o.id == h.id || o.invoke_us > end_of(h)) continue;
    if (arg_value(o.args, "asset") == asset && arg_value(o.args, "user") == user) ops.push_back(&o);
  }
  std::string s;
  for (size_t i = ops.size() > n ? ops.size() - n : 0; i < ops.size(); ++i) s += " " + ops[i]->describe() + ";";
  return s;
}

// World time as the fault budget prints it ("12.345 s" since the epoch).
std::string seconds(int64_t t_us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(t_us - sim::kEpochUs) / 1e6);
  return buf;
}

// A fault record the budget returned, described as the budget describes faults, with what it hit
// (the message up to its first statement or 60 characters: enough to name the call).
template <typename Record>
std::string hit_text(const Record& f) {
  const std::string& peer = f.peer_process.empty() ? f.peer_node : f.peer_process;
  std::string s = std::string(sim::fault_kind_name(f.kind)) + " of " + (f.process.empty() ? f.node : f.process) +
                  (peer.empty() ? "" : "|" + peer) + " at " + seconds(f.time_us);
  if (!f.detail.empty()) s += " (" + f.detail + ")";
  if (f.cause != 0) s += " (operation #" + std::to_string(f.cause) + ")";
  if (!f.message.empty()) s += ": " + f.message.substr(0, std::min<size_t>(f.message.find(" | "), 60));
  return s;
}

// The DB crash at exactly t_us (TruthTimeline dates a lost commit at it), described; nullopt if
// none: only a power loss of the DB loses a commit, no other fault explains one.
std::optional<std::string> db_crash_at(const fl::props::FaultBudget& budget, int64_t t_us) {
  for (const auto& [down_us, up_us] : budget.downtimes("db")) {
    if (down_us == t_us) return "crash of db at " + seconds(t_us);
  }
  return std::nullopt;
}

// Whether the DB lost a commit of the pair (a power loss with synchronous below FULL; observed as
// a sample that disagrees with the committed rows) between an acknowledged write and [s, e]: the
// clients' history no longer decides the pair's state until its next acknowledged write. Returns
// the fault that explains it.
std::optional<std::string> lost_commit(const LikesRun& run, const LikesFacts& facts, const Pair& p, int64_t s_us,
                                       int64_t e_us) {
  const TruthTimeline& truth = facts.truth;
  int64_t from = 0;
  for (;;) {
    const std::optional<int64_t> lost = truth.lost_at(p, from);
    if (!lost || *lost > e_us) return std::nullopt;
    // The pair's first acknowledged write invoked after the loss re-decides it.
    int64_t until = model::kNever;
    for (const HistoryOp& h : run.history) {
      if ((h.op != "like" && h.op != "unlike") || h.outcome != Outcome::kOk || h.invoke_us < *lost) continue;
      if (arg_value(h.args, "asset") != p.first || arg_value(h.args, "user") != p.second) continue;
      until = std::min(until, h.complete_us);
    }
    if (s_us <= until) {
      // Only a crash of the DB explains a lost commit (TruthTimeline dates the loss at it); without
      // one the service lost the row. Another fault on the DB at that instant explains nothing.
      const std::optional<std::string> crash = db_crash_at(facts.budget, *lost);
      return crash ? std::optional<std::string>(*crash + " (commit lost)") : std::nullopt;
    }
    from = *lost + 1;
  }
}

// The DB crash that lost commits of the read asset at or before the read's end (the history no
// longer decides its count), described; nullopt if none.
std::optional<std::string> count_loss(const LikesFacts& facts, const HistoryOp& h) {
  const std::optional<int64_t> t = facts.truth.last_lost(arg_value(h.args, "asset"), 0, end_of(h));
  return t ? db_crash_at(facts.budget, *t) : std::nullopt;
}

// A sample is taken at one instant; a client read of the key at that instant takes at least a
// network round trip, so the model is asked over the millisecond before it.
constexpr int64_t kSampleSlackUs = 1000;

// The last few writes of the pair invoked before t (evidence).
std::string sample_ops(const LikesModel& m, const Pair& p, int64_t t_us) {
  std::vector<const model::WriteOp*> ops;
  for (const model::WriteOp& w : m.writes(p.first, p.second)) {
    if (w.invoke_us <= t_us) ops.push_back(&w);
  }
  std::string s;
  for (size_t i = ops.size() > 3 ? ops.size() - 3 : 0; i < ops.size(); ++i) s += " " + ops[i]->label + ";";
  return s;
}

}  // namespace

std::string RedisWrite::describe() const {
  std::string s = "redis#" + std::to_string(seq) + " t=" + std::to_string(time_us) + " " + client + " " + cmd + " " +
                  (count ? "asset:like_count:" + std::to_string(asset)
                         : "asset:like:" + std::to_string(asset) + ":" + std::to_string(user));
  s += after ? " -> " + std::to_string(*after) : std::string(" -> (none)");
  if (!changed) s += " (no change)";
  return s;
}

std::string DbChange::describe() const {
  std::string s = "db#" + std::to_string(seq) + " t=" + std::to_string(time_us) + " " + client + " ";
  s += row ? (delta > 0 ? "INSERT asset_likes " : "DELETE asset_likes ")
           : (delta > 0 ? "like_count+1 " : "like_count-1 ");
  s += "asset=" + std::to_string(asset);
  if (user != 0) s += " user=" + std::to_string(user);
  s += applied ? " applied" : " (changed nothing)";
  return s;
}

std::vector<PropertyInfo> likes_properties() {
  return {
      {"like-uniqueness",
       {"LIKE-1"},
       "at most one asset_likes row per (asset,user) (002:L62 uk_asset_likes_user_asset)"},
      {"like-single-effect",
       {"LIKE-2"},
       "concurrent/retried likes of a pair move the Redis count (INCR/DECR at the server) by net +-1 at most and the "
       "DB counter only with a row (002 3.1)"},
      {"like-db-count", {"LIKE-3"}, "assets.like_count = rows once async writes drained (002 3.1 step 4, 4.2)"},
      {"like-cache-count",
       {"LIKE-4"},
       "GET asset:like_count:a is nil or T(a) after quiescence and one reconciliation (002 6.1-6.2)"},
      {"like-non-negative", {"LIKE-5"}, "Redis and DB counts are never negative (002 3.2, 4.2)"},
      {"like-durability",
       {"LIKE-6"},
       "every acknowledged like/unlike reaches asset_likes, even if the replica dies (002 3.1 step 3-4)"},
      {"like-per-user-order",
       {"LIKE-7"},
       "the final row presence is the state after the user's last acknowledged op (002 1.2)"},
      {"like-state-cache",
       {"LIKE-8"},
       "asset:like:a:u agrees with the truth; a cached 0 never blocks a like; fills never overwrite newer values (002 "
       "3.4)"},
      {"like-expiry-safety",
       {"LIKE-9"},
       "expiry or loss of Redis keys never double counts, makes a count jump, or blocks an unlike (002 2.2.2, 6.3)"},
      {"like-reconciliation",
       {"LIKE-10"},
       "a count write outside a like/unlike (fill, warm-up, sync, consistency check) never moves the Redis count "
       "farther from T(a) (002 4.3, 6.2)"},
      {"like-idempotence",
       {"LIKE-11"},
       "a like of a liked asset / unlike of a not-liked one changes no counter (002 1.2)"},
      {"like-degradation-budget",
       {"LIKE-6", "LIKE-8", "LIKE-9"},
       "every like/unlike/read answered failed or indeterminate overlaps an injected fault on its path (002 6.3)"},
  };
}

model::LikesModel build_model(const LikesRun& run) {
  LikesModel m;
  for (const HistoryOp& h : run.history) {
    if (!is_write(h) || h.outcome == Outcome::kFail) continue;
    m.add(model::WriteOp{h.id, arg_value(h.args, "asset"), arg_value(h.args, "user"), h.op == "like", definite(h),
                         h.invoke_us, definite(h) ? h.complete_us : model::kNever, h.describe()});
  }
  return m;
}

// LIKE-1: the unique key holds in every sample and at the end.
Verdict check_uniqueness(const LikesRun& run, const LikesFacts&) {
  Judge j("like-uniqueness", {"LIKE-1"}, "every (asset,user) has at most one asset_likes row, at every sample");
  auto judge = [&](const StoreSnapshot& s) {
    for (const auto& kv_ : s.db_rows) {
      const auto& pair = kv_.first;
      const auto& rows = kv_.second;
      j.expect(rows <= 1, [&] {
        return "t=" + std::to_string(s.time_us) + " " + str_pair(pair) + " has " + std::to_string(rows) + " rows";
      });
    }
  };
  for (const StoreSnapshot& s : run.samples) judge(s);
  judge(run.final_state);
  return j.v;
}

// LIKE-2, from what the servers executed: per pair, the INCR/DECRs of the count that came with a
// write of the pair's state key sum to -1..1 at every step (a restart of Redis starts over: what it
// lost is not counted), and every committed like_count change is paid for by a row change of its
// writer (a like whose INSERT inserted nothing must not add 1).
Verdict check_single_effect(const LikesRun& run, const LikesFacts&) {
  Judge j("like-single-effect", {"LIKE-2"},
          "per (asset,user), the running sum of INCR/DECRs executed with the pair's state key stays within [-1, 1]; "
          "every committed like_count change comes with a row change");
  std::map<Pair, int64_t> sum;
  uint32_t incarnation = 0;
  for (const RedisDelta& d : redis_deltas(run)) {
    if (d.write->incarnation != incarnation) {
      sum.clear();
      incarnation = d.write->incarnation;
    }
    if (!d.user) continue;
    const Pair p{d.write->asset, *d.user};
    const int64_t s = sum[p] += d.delta;
    j.expect(s >= -1 && s <= 1, [&] {
      return "Redis count of " + str_pair(p) + " moved to net " + std::to_string(s) + " by " + d.write->describe() +
             " (with " + d.state->describe() + ")";
    });
  }
  for (const CounterChange& c : counter_changes(run)) {
    j.expect(c.row != nullptr, [&] {
      return c.counter->describe() + " with no row change of its writer" +
             (c.refused_row ? "; its row write: " + c.refused_row->describe() : std::string());
    });
  }
  return j.v;
}

// LIKE-3.
Verdict check_db_count(const LikesRun& run, const LikesFacts&) {
  Judge j("like-db-count", {"LIKE-3"}, "at the end, assets.like_count(a) = number of asset_likes rows of a");
  const StoreSnapshot& f = run.final_state;
  j.expect(f.db_read, [] { return std::string("the final DB state could not be read"); });
  for (const auto& kv_ : f.db_like_count) {
    const auto& asset = kv_.first;
    const auto& count = kv_.second;
    const int64_t rows = f.rows_of(asset);
    j.expect(count == rows, [&] {
      return "asset=" + std::to_string(asset) + " like_count=" + std::to_string(count) +
             " but rows=" + std::to_string(rows);
    });
  }
  return j.v;
}

// LIKE-4.
Verdict check_cache_count(const LikesRun& run, const LikesFacts&) {
  Judge j("like-cache-count", {"LIKE-4"}, "at the end, GET asset:like_count:a is nil or the row count T(a)");
  const StoreSnapshot& f = run.final_state;
  for (const auto& kv_ : f.redis_count) {
    const auto& asset = kv_.first;
    const auto& value = kv_.second;
    if (!value) continue;
    const int64_t rows = f.rows_of(asset);
    j.expect(*value == rows, [&] {
      return "asset=" + std::to_string(asset) + " Redis count " + std::to_string(*value) +
             " but T=" + std::to_string(rows);
    });
  }
  return j.v;
}

// LIKE-5.
Verdict check_non_negative(const LikesRun& run, const LikesFacts&) {
  Judge j("like-non-negative", {"LIKE-5"}, "Redis and DB counts, and count query answers, are >= 0 at every sample");
  auto judge = [&](const StoreSnapshot& s) {
    for (const auto& kv_ : s.redis_count) {
      const auto& asset = kv_.first;
      const auto& value = kv_.second;
      j.expect(!value || *value >= 0, [&] {
        return "t=" + std::to_string(s.time_us) + " asset=" + std::to_string(asset) + " Redis count " + opt(value);
      });
    }
    for (const auto& kv_ : s.db_like_count) {
      const auto& asset = kv_.first;
      const auto& value = kv_.second;
      j.expect(value >= 0, [&] {
        return "t=" + std::to_string(s.time_us) + " asset=" + std::to_string(asset) + " DB like_count " +
               std::to_string(value);
      });
    }
  };
  for (const StoreSnapshot& s : run.samples) judge(s);
  judge(run.final_state);
  for (const HistoryOp& h : run.history) {
    if (h.op != "count" || h.outcome != Outcome::kOk) continue;
    j.expect(arg_value(h.result, "count") >= 0, [&] { return h.describe(); });
  }
  return j.v;
}

// LIKE-6: a pair whose final state is forced by an acknowledged op shows that op's effect.
Verdict check_durability(const LikesRun& run, const LikesFacts& facts) {
  const LikesModel& m = facts.model;
  Judge j(
      "like-durability", {"LIKE-6"},
      "for every pair whose last acknowledged op decides the state, asset_likes has the row iff that op was a like");
  const StoreSnapshot& f = run.final_state;
  for (const Pair& pair : m.pairs()) {
    const Possible p = m.possible_final(pair.first, pair.second);
    if (!(p.only(true) || p.only(false))) continue;
    if (auto lost = lost_commit(run, facts, pair, model::kNever - 1, model::kNever - 1)) {
      j.v.exempt("pair whose row " + *lost);
      continue;
    }
    auto it = f.db_rows.find(pair);
    const bool present = it != f.db_rows.end() && it->second > 0;
    j.expect(p.allows(present), [&] {
      std::string s = str_pair(pair) + ": acknowledged state " + (p.liked ? "liked" : "not liked") +
                      " but the row is " + (present ? "present" : "absent") + "; deciding op(s):";
      for (const model::WriteOp* w : m.final_candidates(pair.first, pair.second)) s += " " + w->label;
      return s;
    });
  }
  return j.v;
}

// LIKE-7: pairs with both likes and unlikes end in a state some linearization allows.
Verdict check_per_user_order(const LikesRun& run, const LikesFacts& facts) {
  const LikesModel& m = facts.model;
  Judge j(
      "like-per-user-order", {"LIKE-7"},
      "for a user's likes and unlikes of one asset, the final row presence is a state the last acknowledged ops allow");
  const StoreSnapshot& f = run.final_state;
  for (const Pair& pair : m.pairs()) {
    bool likes = false, unlikes = false;
    for (const model::WriteOp& w : m.writes(pair.first, pair.second)) (w.like ? likes : unlikes) = true;
    if (!(likes && unlikes)) continue;
    if (auto lost = lost_commit(run, facts, pair, model::kNever - 1, model::kNever - 1)) {
      j.v.exempt("pair whose row " + *lost);
      continue;
    }
    const Possible p = m.possible_final(pair.first, pair.second);
    auto it = f.db_rows.find(pair);
    const bool present = it != f.db_rows.end() && it->second > 0;
    j.expect(p.allows(present), [&] {
      std::string s =
          str_pair(pair) + ": row " + (present ? "present" : "absent") + ", allowed " + p.describe() + "; ops:";
      const auto& ws = m.writes(pair.first, pair.second);
      for (size_t i = ws.size() > 4 ? ws.size() - 4 : 0; i < ws.size(); ++i) s += " " + ws[i].label + ";";
      return s;
    });
  }
  return j.v;
}

// LIKE-8.
namespace {

// The like/unlike requests answered ok, per pair, for LIKE-8's "the key equals the truth" beyond what
// the clients' intervals decide (with TruthTimeline::row_held, the commit order): when each one's
// transaction ran at the earliest.
class AckedWrites {
 public:
  explicit AckedWrites(const LikesRun& run) {
    std::map<Pair, std::vector<const DbChange*>> statements;  // row statements of committed requests
    for (const DbChange& c : run.db_changes) {
      if (c.row && !c.failed) statements[{c.asset, c.user}].push_back(&c);
    }
    for (const HistoryOp& h : run.history) {
      if (!is_write(h) || !definite(h)) continue;
      const Pair p{arg_value(h.args, "asset"), arg_value(h.args, "user")};
      acked_[p].push_back(Acked{&h, earliest_transaction_us(h, statements[p])});
    }
    for (auto& [pair, ops] : acked_) {
      std::sort(ops.begin(), ops.end(),
                [](const Acked& a, const Acked& b) { return a.op->complete_us < b.op->complete_us; });
    }
  }
  struct Acked {
    const HistoryOp* op = nullptr;
    int64_t from_us = 0;  // its transaction ran at or after this
  };
  // Of the pair's requests answered ok before t, the one whose transaction ran latest, at the
  // earliest (nullopt: none).
  std::optional<Acked> last_before(const Pair& p, int64_t t_us) const {
    auto it = acked_.find(p);
    if (it == acked_.end()) return std::nullopt;
    std::optional<Acked> best;
    for (const Acked& a : it->second) {
      if (a.op->complete_us >= t_us) break;
      if (!best || a.from_us > best->from_us) best = a;
    }
    return best;
  }
  // Whether a like (liked) or unlike of the pair was invoked within [s, e]: a write of its state in
  // that span may be its own (a design that writes the cache before the DB, 002:L218-L223).
  bool requested_within(const LikesRun& run, const Pair& p, bool liked, int64_t s_us, int64_t e_us) const {
    for (const HistoryOp& h : run.history) {
      if (!is_write(h) || (h.op == "like") != liked || h.invoke_us < s_us || h.invoke_us > e_us) continue;
      if (arg_value(h.args, "asset") == p.first && arg_value(h.args, "user") == p.second) return true;
    }
    return false;
  }

 private:
  // The earliest committed statement within h's interval that may be its row write (same pair and
  // direction, its request id when the statement binds one): h's transaction, if it wrote the DB
  // before answering, is one of them. Otherwise h's invocation.
  static int64_t earliest_transaction_us(const HistoryOp& h, const std::vector<const DbChange*>& statements) {
    for (const DbChange* c : statements) {  // in commit order
      if (c->time_us < h.invoke_us) continue;
      if (c->time_us > h.complete_us) break;
      if (may_write(*c, h)) return c->time_us;
    }
    return h.invoke_us;
  }
  std::map<Pair, std::vector<Acked>> acked_;
};

}  // namespace

Verdict check_state_cache(const LikesRun& run, const LikesFacts& facts) {
  const LikesModel& m = facts.model;
  Judge j("like-state-cache", {"LIKE-8"},
          "final and sampled state keys equal the truth; no like answered 'already' when certainly not liked; state "
          "reads and fills agree with the model; no state write reverts an acknowledged like/unlike (commit order)");
  const StoreSnapshot& f = run.final_state;
  const fl::props::FaultBudget& budget = facts.budget;
  const AckedWrites acked_writes(run);
  for (const auto& kv_ : f.redis_state) {
    const auto& pair = kv_.first;
    const auto& value = kv_.second;
    auto it = f.db_rows.find(pair);
    const bool present = it != f.db_rows.end() && it->second > 0;
    const bool cached_liked = value == "1";
    const Possible p = m.possible_final(pair.first, pair.second);
    const bool model_void = lost_commit(run, facts, pair, model::kNever - 1, model::kNever - 1).has_value();
    j.expect(cached_liked == present && (model_void || p.allows(cached_liked)), [&] {
      return "final asset:like:" + std::to_string(pair.first) + ":" + std::to_string(pair.second) + " = \"" + value +
             "\" but row " + (present ? "present" : "absent") + ", model " + p.describe();
    });
  }
  for (const HistoryOp& h : run.history) {
    if (h.outcome != Outcome::kOk) continue;
    if (h.op == "like" && h.result == "already") {
      const Possible pre = pre_state(m, run, h, false);
      j.expect(pre.liked, [&] {
        return "like answered 'already' though certainly not liked: " + h.describe() +
               "; earlier ops of the pair:" + pair_ops(run, h, 4);
      });
    }
    if (h.op == "state" && run.in_grace(h.invoke_us, end_of(h))) {
      j.v.exempt("state read after " + grace_reason(run, budget, h.invoke_us, end_of(h)));
    } else if (h.op == "state") {
      const int64_t a = arg_value(h.args, "asset"), u = arg_value(h.args, "user");
      if (auto lost = lost_commit(run, facts, {a, u}, h.invoke_us, end_of(h))) {
        j.v.exempt("state read of a pair whose row " + *lost);
        continue;
      }
      const Possible p = m.possible_during(a, u, h.invoke_us, end_of(h));
      const bool liked = arg_value(h.result, "state") == 1;
      j.expect(p.allows(liked), [&] { return "state read " + h.describe() + " but model " + p.describe(); });
    }
  }
  // LIKE-8 "whenever the key is present": every sampled state key agrees with the model at the
  // sample (judged as a read of the key at that instant would be: a state read answers the cached
  // value; same exemptions). A fill that overwrote a concurrent like or unlike shows here for as
  // long as its stale value stays, not only when a client happens to read it.
  for (const StoreSnapshot& s : run.samples) {
    if (!s.redis_up) continue;
    if (run.in_grace(s.time_us, s.time_us)) {  // every key of the sample, for the same reason
      const std::string reason = "sampled state key after " + grace_reason(run, budget, s.time_us, s.time_us);
      if (!s.redis_state.empty()) j.v.exempt(reason, static_cast<int64_t>(s.redis_state.size()));
      continue;
    }
    for (const auto& kv : s.redis_state) {
      const Pair& pair = kv.first;
      const std::string& value = kv.second;
      if (auto lost = lost_commit(run, facts, pair, s.time_us, s.time_us)) {
        j.v.exempt("sampled state key of a pair whose row " + *lost);
        continue;
      }
      const Possible p = m.possible_during(pair.first, pair.second, s.time_us - kSampleSlackUs, s.time_us);
      j.expect(p.allows(value == "1"), [&] {
        return "t=" + std::to_string(s.time_us) + " sampled asset:like:" + std::to_string(pair.first) + ":" +
               std::to_string(pair.second) + " = \"" + value + "\" but model " + p.describe() +
               "; ops:" + sample_ops(m, pair, s.time_us);
      });
    }
  }
  // Every value the server wrote into a state key agrees with the truth at that instant (a fill
  // never overwrites a concurrent like or unlike).
  for (const RedisWrite& w : run.redis_writes) {
    if (w.count || !w.changed || !w.after) continue;
    if (run.in_grace(w.time_us, w.time_us)) {
      j.v.exempt("state write after " + grace_reason(run, budget, w.time_us, w.time_us));
      continue;
    }
    if (auto lost = lost_commit(run, facts, {w.asset, w.user}, w.time_us, w.time_us)) {
      j.v.exempt("state write of a pair whose row " + *lost);
      continue;
    }
    const Possible p = m.possible_during(w.asset, w.user, w.time_us, w.time_us);
    j.expect(p.allows(*w.after == 1), [&] { return "stale state write " + w.describe() + ", model " + p.describe(); });
    // The model lets an unanswered request take effect at any time after its invocation; the
    // commit log says when it did. Once a like/unlike was answered ok, the value it made visible
    // came from its transaction or a later one, so a later write of the state key carries its
    // state, a state the row held at some instant since that transaction, or one a like/unlike
    // invoked since then asked for: an older one (a fill, sync or apply that read the DB before,
    // held back until after the answer) reverts an acknowledged write. No fault excuses it beyond
    // the exemptions above (a Redis restart's grace window, a DB power loss of the pair's
    // commits): an evicted key is a cache miss, not licence to write an older state.
    const Pair pair{w.asset, w.user};
    if (const std::optional<AckedWrites::Acked> acked = acked_writes.last_before(pair, w.time_us)) {
      const bool liked = *w.after == 1;
      // Its own state (the one its transaction found or made: ok answers only that) is one of them.
      const bool reverts = liked != (acked->op->op == "like") &&
                           !facts.truth.row_held(pair, liked, acked->from_us, w.time_us) &&
                           !acked_writes.requested_within(run, pair, liked, acked->from_us, w.time_us);
      j.expect(!reverts, [&] {
        return "state write " + w.describe() + " reverts " + acked->op->describe() + ": the row was " +
               (liked ? "absent" : "present") + " throughout since " + seconds(acked->from_us) +
               " (that request's transaction, at the earliest)";
      });
    }
  }
  return j.v;
}

namespace {

// The shortest window [t - W, t] with `healthy_us` of it free of the duration faults at `places`:
// a bound of healthy_us, widened by every fault that held those places inside it, for as long as
// it did.
int64_t held_window_us(const fl::props::FaultBudget& budget, const std::vector<std::string>& places, int64_t healthy_us,
                       int64_t t_us) {
  auto free_us = [&](int64_t w_us) { return w_us - budget.covered_us(places, t_us - w_us, t_us); };
  int64_t lo = healthy_us, hi = healthy_us + budget.covered_us(places, 0, t_us);
  while (lo < hi) {  // free_us is non-decreasing in the window: the least W with free_us(W) >= healthy
    const int64_t mid = lo + (hi - lo) / 2;
    if (free_us(mid) >= healthy_us)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// How much the clocks of `nodes` may stretch a bound of `bound_us` that ends at t and is measured
// on them: the most any of them moved over the window (FaultBudget::clock: a drift by its ppm times
// the elapsed time, a jump by its size), the window widened by that much again until it stops
// growing (a jump's effect lasts its size). Clocks no fault moved stretch nothing.
int64_t clock_stretch_us(const fl::props::FaultBudget& budget, const std::vector<std::string>& nodes, int64_t bound_us,
                         int64_t t_us) {
  int64_t stretch = 0;
  for (int round = 0; round < 8; ++round) {
    int64_t next = 0;
    for (const std::string& n : nodes) next = std::max(next, budget.clock(n, t_us - bound_us - stretch, t_us).error_us);
    if (next <= stretch) break;
    stretch = next;
  }
  return stretch;
}

// Whether a fault record's message names a write of the count of `asset`: a command of Redis, or
// a request to it, that writes the seed's key asset:like_count:A (002:L84) or a key named after it
// for that asset (asset:like_count_<x>:A: a repair's version or lease, whose refusal refuses the
// repair). A GET or MGET writes nothing.
bool names_count_write(const std::string& message, int64_t asset) {
  const std::string family = "asset:like_count", tail = ":" + std::to_string(asset);
  for (size_t pos = message.find(family); pos != std::string::npos; pos = message.find(family, pos + 1)) {
    size_t end = pos + family.size();
    while (end < message.size() && (std::islower(static_cast<unsigned char>(message[end])) || message[end] == '_'))
      ++end;
    if (message.compare(end, tail.size(), tail) != 0) continue;
    end += tail.size();
    if (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) continue;
    if (pos >= 4 && message.compare(pos - 4, 4, "GET ") == 0) continue;
    return true;
  }
  return false;
}

// A fault that hit a DB transaction that changed the count of `asset` at t (a row change of the
// asset committed then): a record naming the transaction's cause (a replica's committer sends all
// its transactions under one cause, FaultBudget::naming) at its replica or the DB, from one SQL
// timeout before the commit (the call that carried it, or the one ahead of it; a held message
// counts until it was delivered) up to `until`. Such a hit kept the cache update that follows a
// commit from happening: a clog that delivers the transaction after its caller gave up, a lost or
// broken reply.
std::optional<std::string> hit_on_commit(const LikesRun& run, const fl::props::FaultBudget& budget, int64_t asset,
                                         int64_t t_us, int64_t until_us) {
  auto c = std::partition_point(run.db_changes.begin(), run.db_changes.end(),
                                [&](const DbChange& x) { return x.time_us < t_us; });
  for (; c != run.db_changes.end() && c->time_us == t_us; ++c) {
    if (!c->row || !c->applied || c->asset != asset || c->cause == 0) continue;
    for (const auto* f : budget.naming(c->cause)) {
      const bool on_path =
          f->process == c->client || f->peer_process == c->client || f->process == "db" || f->peer_process == "db";
      const int64_t held_us = f->detail == "clog" || f->detail == "pause" ? f->value : 0;
      if (on_path && f->time_us <= until_us && f->time_us + held_us >= t_us - run.timing.sql_timeout_us) {
        return hit_text(*f) + " (hit the DB transaction that changed the count at " + seconds(t_us) + ")";
      }
    }
  }
  return std::nullopt;
}

// Why the cached count `value` of `asset` may still be stale at sample time s, though T(a) left it
// more than one request's lag before (nullopt: nothing excuses it). On a healthy path a like/unlike
// updates the cache before its reply; after a fault kept it from doing so, the cache is repaired
// within one reconciliation: the sync job's next pass (002:L358, every sync_interval), its DB read
// and Redis write within their timeouts, after one request's lag. That bound is measured on the
// replicas' and stores' clocks, so a clock fault stretches it by as far as it moved them; a duration
// fault on the stores or replicas (a crash, a pause, a partition that lost messages, a clog that
// held them) stretches it by as long as it held them. Only a fault since the count went stale (when
// T(a) left the value) can have kept it:
//  - a duration fault in that time, when the whole staleness fits in the stretched bound;
//  - an instant fault that hit a write of that count in that time (an error reply to, or a lost or
//    broken request of, a command that names the key; a record that names a like/unlike of the
//    asset), no longer than the stretched bound before the sample;
//  - a fault that hit the DB transaction that made it stale (hit_on_commit), when the whole
//    staleness fits in the stretched bound;
//  - a power loss of the DB that took commits of the asset (TruthTimeline dates the loss at the
//    crash), until the stretched bound after the DB's restart.
std::optional<std::string> stale_count_excuse(const LikesRun& run, const LikesFacts& facts, int64_t asset,
                                              int64_t value, int64_t s_us) {
  const Timing& tm = run.timing;
  const fl::props::FaultBudget& budget = facts.budget;
  const std::vector<std::string> places = stores_and_replicas(run);
  int64_t reach_us = tm.lag_us() + tm.sync_interval_us + tm.repair_window_us();
  reach_us += clock_stretch_us(budget, places, reach_us, s_us);
  const int64_t window_us = held_window_us(budget, places, reach_us, s_us);
  const std::optional<int64_t> stale_since = facts.truth.left_at(asset, value, s_us - tm.lag_us());
  if (stale_since && s_us - *stale_since <= window_us) {
    if (auto f = budget.explain(places, *stale_since, s_us, 0)) return f;
    if (auto f = hit_on_commit(run, budget, asset, *stale_since, s_us)) return f;
  }
  // A power loss of the DB that took commits of the asset: from its restart the DB serves the
  // count without them while the cache holds the one it lost, until a repair.
  for (const auto& [down_us, up_us] : budget.downtimes("db")) {
    if (down_us <= s_us && up_us >= s_us - window_us && facts.truth.any_lost(asset, down_us, down_us)) {
      return "crash of db at " + seconds(down_us) + " (commits of the asset lost)";
    }
  }
  const int64_t from_us = stale_since ? std::max(*stale_since, s_us - window_us) : s_us - window_us;
  for (const auto* f : budget.instants(places, from_us, s_us)) {
    if (names_count_write(f->message, asset)) return hit_text(*f);
    const HistoryOp* op = facts.op(f->cause);
    if (op != nullptr && is_write(*op) && arg_value(op->args, "asset") == asset) return hit_text(*f);
  }
  return std::nullopt;
}

}  // namespace

// LIKE-9: at every sample, the Redis count is a value T(a) (the row count) takes within the lag of
// one request with its retries; count reads agree with the model of the history; no unlike is
// answered "not liked" while certainly liked. Samples after a Redis restart, until a repair had
// time (GraceTracker), or while a fault since the count went stale explains it (stale_count_excuse)
// are exempted.
Verdict check_expiry_safety(const LikesRun& run, const LikesFacts& facts) {
  const LikesModel& m = facts.model;
  Judge j("like-expiry-safety", {"LIKE-9"},
          "the Redis count is within T(a)'s values over [t - lag, t + lag] at every sample; count reads within the "
          "model's range; no unlike answered 'not liked' while certainly liked");
  const TruthTimeline& truth = facts.truth;
  const fl::props::FaultBudget& budget = facts.budget;
  const int64_t lag = run.timing.lag_us();
  for (const StoreSnapshot& s : run.samples) {
    if (!s.redis_up) continue;
    if (run.in_grace(s.time_us, s.time_us)) {
      j.v.exempt("sample after " + grace_reason(run, budget, s.time_us, s.time_us));
      continue;
    }
    for (const auto& kv : s.redis_count) {
      const int64_t asset = kv.first;
      const std::optional<int64_t>& value = kv.second;
      if (!value) continue;
      const Range r = truth.over(asset, s.time_us - lag, s.time_us + lag);
      const bool ok = r.contains(*value);
      const auto fault = ok ? std::nullopt : stale_count_excuse(run, facts, asset, *value, s.time_us);
      j.expect_or_exempt(ok, fault, "sample", [&] {
        return "t=" + std::to_string(s.time_us) + " asset=" + std::to_string(asset) + " Redis count " +
               std::to_string(*value) + " but T(a) was " + r.describe() + " within " + std::to_string(lag) + " us";
      });
    }
  }
  for (const HistoryOp& h : run.history) {
    if (h.outcome != Outcome::kOk) continue;
    if (h.op == "unlike" && h.result == "already") {
      const Possible pre = pre_state(m, run, h, false);
      j.expect(pre.not_liked, [&] {
        return "unlike answered 'not liked' though certainly liked: " + h.describe() +
               "; earlier ops of the pair:" + pair_ops(run, h, 4);
      });
    }
    if (h.op == "count" && run.in_grace(h.invoke_us, end_of(h))) {
      j.v.exempt("count read after " + grace_reason(run, budget, h.invoke_us, end_of(h)));
    } else if (h.op == "count" && count_loss(facts, h)) {
      j.v.exempt("count read of an asset after " + *count_loss(facts, h) + " lost commits");
    } else if (h.op == "count") {
      const Range r = m.count_range(arg_value(h.args, "asset"), h.invoke_us, end_of(h));
      const int64_t v = arg_value(h.result, "count");
      j.expect(r.contains(v), [&] { return "count read " + h.describe() + " outside model " + r.describe(); });
    }
  }
  return j.v;
}

namespace {

// How old the DB value a count write of a repair (or fill) carries may be. On a healthy path its DB
// read and its Redis write each answer within their timeouts (Timing::repair_window_us); a duration
// fault on its path (the writing replica, the DB, Redis) held it for as long as the fault lasted, and
// a clock fault of that replica stretches its timeouts by as far as it moved the clock. `fault`
// names what widened the window (nullopt: nothing did).
struct RepairReach {
  int64_t window_us = 0;
  std::optional<std::string> fault;
};
RepairReach repair_reach(const LikesRun& run, const fl::props::FaultBudget& budget, const RedisWrite& w) {
  const std::vector<std::string> path{w.client, "redis", "db"};
  const int64_t base_us = run.timing.repair_window_us();
  RepairReach r{base_us, std::nullopt};
  int64_t stretch_us = 0;
  for (int round = 0; round < 8; ++round) {
    r.window_us = held_window_us(budget, path, base_us + stretch_us, w.time_us);
    const int64_t next_us = budget.clock(w.client, w.time_us - r.window_us, w.time_us).error_us;
    if (next_us <= stretch_us) break;
    stretch_us = next_us;
  }
  if (r.window_us == base_us) return r;
  r.fault = budget.explain(path, w.time_us - r.window_us, w.time_us, 0);
  if (!r.fault) r.fault = budget.clock(w.client, w.time_us - r.window_us, w.time_us).what;
  return r;
}

}  // namespace

// LIKE-10: a write of an absolute count in a request that names no state key (a fill, warm-up,
// sync, consistency check or reconciliation; like/unlike requests name the pair's state key too)
// never moves the Redis count farther from T(a) at that instant. The value it replaced is followed
// through the command log; after a Redis restart or an expiry it is unknown until the next write
// (such writes are exempted, naming the restart).
Verdict check_reconciliation(const LikesRun& run, const LikesFacts& facts) {
  Judge j(
      "like-reconciliation", {"LIKE-10"},
      "|written - T(a)| <= |replaced - T(a)|, or written is a value T(a) took while the repair ran, for every count "
      "write of a request that names no state key");
  const TruthTimeline& truth = facts.truth;
  const fl::props::FaultBudget& budget = facts.budget;
  struct Known {
    std::optional<int64_t> value;
    std::optional<int64_t> expires_ms;
    uint32_t incarnation = 0;
    bool known = true;  // the initial keyspace is empty
  };
  std::map<int64_t, Known> cur;
  for (const RedisWrite& w : run.redis_writes) {
    if (!w.count) continue;
    Known& k = cur[w.asset];
    if (k.incarnation != w.incarnation) { k = Known{std::nullopt, std::nullopt, w.incarnation, false}; }
    if (k.expires_ms && w.node_ms >= *k.expires_ms) k = Known{std::nullopt, std::nullopt, w.incarnation, true};
    const bool absolute = w.cmd == "SET" && w.changed && w.after;
    if (absolute && !w.request_names_state) {
      {
        // The value must not be farther from T(a) than the one it replaced, or be a value T(a)
        // took while the repair ran (its DB read and Redis write, within their timeouts: a
        // concurrent like may commit in between, and its own versioned write follows). Onto a
        // missing key only the latter applies.
        const int64_t t = truth.at(w.asset, w.time_us);
        const Range recent = truth.over(w.asset, w.time_us - run.timing.repair_window_us(), w.time_us);
        // (After a Redis restart the replaced value is unknown: only the latter applies.)
        const bool closer = k.known && k.value && std::llabs(*w.after - t) <= std::llabs(*k.value - t);
        const bool ok = closer || recent.contains(*w.after);
        std::optional<std::string> fault;
        if (const auto loss = ok ? std::nullopt : truth.unseen_loss(w.asset, w.time_us)) {
          // The DB lost commits of the asset (a power loss) and the replay does not know it yet: the
          // repair may have read the DB without them.
          if (auto crash = db_crash_at(budget, *loss)) fault = *crash + " (commits lost)";
        }
        if (!ok && !fault) {
          const RepairReach reach = repair_reach(run, budget, w);
          if (reach.fault && truth.over(w.asset, w.time_us - reach.window_us, w.time_us).contains(*w.after)) {
            fault = reach.fault;
          }
        }
        j.expect_or_exempt(ok, fault, "count write", [&] {
          return w.describe() + " replaced " + (k.value ? std::to_string(*k.value) : std::string("nothing")) +
                 " while T(a)=" + std::to_string(t) + ", " + recent.describe() + " within " +
                 std::to_string(run.timing.repair_window_us()) + " us";
        });
      }
    }
    if (w.cmd == "SET" && w.changed) {
      k.value = w.after;
      k.expires_ms = w.ttl_ms ? std::optional<int64_t>(w.node_ms + *w.ttl_ms) : std::nullopt;
      k.known = true;
    } else if ((w.cmd == "INCR" || w.cmd == "DECR") && k.known) {
      k.value = w.after;
    } else if (w.cmd == "DEL" && w.changed) {
      k.value.reset();
      k.known = true;
    }
  }
  return j.v;
}

// LIKE-11, from what the servers executed: an INCR/DECR of the count that came with the pair's
// state key, while the pair was certainly already in the requested state (per the history, the
// requests that may have sent it — invoked before it and not answered before it — left out), and a
// committed like_count change whose writer's row write changed nothing (the pair already was in
// that state at the DB) are counter changes by an idempotent request.
Verdict check_idempotence(const LikesRun& run, const LikesFacts& facts) {
  const LikesModel& m = facts.model;
  Judge j("like-idempotence", {"LIKE-11"},
          "no INCR/DECR with the pair's state key while the pair was certainly in the requested state; no committed "
          "like_count change whose row write changed nothing");
  for (const RedisDelta& d : redis_deltas(run)) {
    if (!d.user) continue;
    const bool like = d.delta > 0;
    const int64_t t = d.write->time_us;
    // The ops that may have sent it.
    std::vector<const HistoryOp*> senders;
    for (const HistoryOp& h : run.history) {
      if (h.op != (like ? "like" : "unlike") || h.outcome == Outcome::kFail) continue;
      if (arg_value(h.args, "asset") != d.write->asset || arg_value(h.args, "user") != *d.user) continue;
      if (h.invoke_us <= t && t <= end_of(h)) senders.push_back(&h);
    }
    if (senders.empty()) continue;
    bool some_sender_legit = false;
    for (const HistoryOp* h : senders) {
      if (!pre_state(m, run, *h, true, std::make_pair(t, t)).only(like)) some_sender_legit = true;
    }
    j.expect(some_sender_legit, [&] {
      return d.write->describe() + " though the pair was certainly " + (like ? "liked" : "not liked") + ": " +
             senders.front()->describe() + "; earlier ops of the pair:" + pair_ops(run, *senders.front(), 4);
    });
  }
  for (const CounterChange& c : counter_changes(run)) {
    const bool idempotent = c.row == nullptr && c.refused_row != nullptr;
    j.expect(!idempotent, [&] {
      return c.counter->describe() + " after its writer's row write changed nothing: " + c.refused_row->describe();
    });
  }
  return j.v;
}

namespace {

// A request of the app: its client process and request id (every attempt carries the same id).
using RequestKey = std::pair<std::string, int64_t>;
RequestKey request_of(const HistoryOp& h) { return {h.process, arg_value(h.args, "req")}; }

// The like/unlike ops whose write a DB row statement `c` may be: same pair and direction, the same
// request id when the statement binds one, and in flight at some instant of [from, to].
std::vector<const HistoryOp*> writers_of(const LikesRun& run, const DbChange& c, int64_t from_us, int64_t to_us) {
  std::vector<const HistoryOp*> out;
  for (const HistoryOp& h : run.history) {
    if (h.invoke_us <= to_us && end_of(h) >= from_us && may_write(c, h)) out.push_back(&h);
  }
  return out;
}

// Whether a request the network recorded (a fault record's message: the transaction's statements
// with their bound values, "[3, 1002, 282574488338435]") binds `value` as one of its parameters.
bool binds_value(const std::string& message, int64_t value) {
  const std::string v = std::to_string(value);
  for (size_t pos = message.find(v); pos != std::string::npos; pos = message.find(v, pos + 1)) {
    const char before = pos == 0 ? '\0' : message[pos - 1];
    const size_t end = pos + v.size();
    const char after = end < message.size() ? message[end] : '\0';
    if ((before == '[' || before == ' ') && (after == ',' || after == ']')) return true;
  }
  return false;
}

// The request number a recorded SQL request carries on the wire ("sql: sql txn replica-2#87 | ..."
// -> 87; sim/storage/sql_wire.h describe()), 0 when it names none (a reply).
uint64_t wire_seq(const std::string& message) {
  const size_t txn = message.find("sql txn ");
  const size_t hash = txn == std::string::npos ? std::string::npos : message.find('#', txn);
  if (hash == std::string::npos) return 0;
  uint64_t seq = 0;
  for (size_t i = hash + 1; i < message.size() && message[i] >= '0' && message[i] <= '9'; ++i) {
    seq = seq * 10 + static_cast<uint64_t>(message[i] - '0');
  }
  return seq;
}

// When the committer that a fault hit at `hit_us` (the replica's SQL transaction under `cause`) was
// free again, at the latest: its next transaction under that cause committed, its replica crashed
// (the committer died with it; the crash is a fault of its own from then on), or a later fault on
// that cause's transactions (its call broken by a DB crash, its next one refused). nullopt: none
// happened, and how long it was held is unknown.
std::optional<int64_t> committer_free_us(const LikesRun& run, const fl::props::FaultBudget& budget, int64_t hit_us,
                                         uint64_t cause, const std::string& replica,
                                         std::vector<DbChange>::const_iterator next) {
  std::optional<int64_t> out;
  if (next != run.db_changes.end()) out = next->time_us;
  for (const auto& [down_us, up_us] : budget.downtimes(replica)) {
    if (down_us > hit_us && down_us < out.value_or(run.end_us + 1)) {
      out = down_us;
      break;
    }
  }
  for (const auto* g : budget.instants(run.replicas, hit_us, out.value_or(run.end_us))) {
    if (g->time_us <= hit_us || g->cause != cause || !g->message.starts_with("sql: sql txn ")) continue;
    if (g->process != replica && g->peer_process != replica) continue;
    return g->time_us;
  }
  return out;
}

// The requests a fault reached through a replica's group commit (impl/likes/service.cc: the writes
// of many requests go to the DB in one transaction, sent under the cause of the request that
// started the committer, and the requests that arrive meanwhile wait for it), each with that fault.
// The fault log names only that one cause; which writes a transaction carried is the world's record
// too: the SQL server's commit log (each write's row statement, with its pair and, when the
// statement binds one, its request id; the client and the cause of the transaction).
//  - A fault that failed the transaction (an I/O error naming its cause at that instant) touched
//    every write in it.
//  - A fault that refused, lost or broke a transaction's request, or lost its reply, hit every
//    write the request carried: the writes in flight then whose request ids its statements bind
//    (the message the network recorded; a refused transaction never reached the commit log). The
//    requests of a failed batch are answered failed or indeterminate (002:L238-L241, one attempt).
//  - A fault that lost (or broke) a transaction's request or reply held the replica's committer
//    until the call ended: the writes that queued meanwhile went in the committer's next
//    transaction (same client, same cause), held from the fault until that transaction ran — a
//    hold on their path, like a pause, that touched each request in flight during it. The seed
//    batches writes behind a buffer (002:L237 "可以批量处理", L352-L353 "缓冲写入压力 / 批量写入数据库"),
//    so a queued write waits for the batch ahead of it. (swarm-hardened-impatient seed 283: a like
//    waited 196 ms of its app's 200 behind a call a partition lost; its write ran 4 ms before the
//    app gave up, too late for the reply.)
std::map<RequestKey, std::string> group_commit_faults(const LikesRun& run, const fl::props::FaultBudget& budget) {
  std::map<RequestKey, std::string> out;
  for (const DbChange& c : run.db_changes) {
    if (!c.failed || !c.row || c.cause == 0) continue;
    for (const auto* f : budget.instants({"db"}, c.time_us, c.time_us)) {
      if (f->cause != c.cause) continue;
      for (const HistoryOp* h : writers_of(run, c, c.time_us, c.time_us)) {
        out.emplace(request_of(*h), hit_text(*f) + " (it failed the DB transaction that carried this write)");
      }
    }
  }
  for (const auto* f : budget.instants(run.replicas, 0, run.end_us)) {
    const bool sql_txn = f->message.starts_with("sql: sql txn ") || f->message.starts_with("sql: sql reply ");
    if (!sql_txn || f->cause == 0) continue;
    if (f->message.starts_with("sql: sql txn ")) {
      for (const HistoryOp& h : run.history) {
        if (!is_write(h) || h.invoke_us > f->time_us || end_of(h) < f->time_us) continue;
        const int64_t req = arg_value(h.args, "req");
        if (req != 0 && binds_value(f->message, req)) {
          out.emplace(request_of(h), hit_text(*f) + " (it hit the DB transaction that carried this write)");
        }
      }
    }
    const bool caller_first = std::find(run.replicas.begin(), run.replicas.end(), f->process) != run.replicas.end();
    const std::string& replica = caller_first ? f->process : f->peer_process;
    // The committer's next transaction: the first one of the same replica and cause after the hit
    // (the commit log is in execution order, so in time order) that the replica sent after the
    // one the fault hit (a higher request number on the wire): a DB that was paused executes
    // the committer's earlier transactions late (swarm-hardened-seed-ttls seed 15850).
    const uint64_t hit_seq = wire_seq(f->message);
    auto after = std::partition_point(run.db_changes.begin(), run.db_changes.end(),
                                      [&](const DbChange& c) { return c.time_us <= f->time_us; });
    auto next = std::find_if(after, run.db_changes.end(), [&](const DbChange& c) {
      return c.row && c.client == replica && c.cause == f->cause && c.request_seq > hit_seq;
    });
    // A write the network delivered to that replica while its committer was held queued behind
    // it, whether or not its write ever reached the DB (swarm-hardened-impatient seed 10096: a
    // DB crash broke the held call, and the writes queued behind it were failed unsent).
    if (const std::optional<int64_t> free_us = committer_free_us(run, budget, f->time_us, f->cause, replica, next)) {
      for (const HistoryOp& h : run.history) {
        if (!is_write(h)) continue;
        for (const auto& [at_us, server] : h.delivered) {
          if (server != replica || at_us < f->time_us || at_us > *free_us) continue;
          out.emplace(request_of(h), hit_text(*f) + " (held " + replica + "'s group commit until " + seconds(*free_us) +
                                         "; this write reached " + replica + " at " + seconds(at_us) +
                                         " and waited behind it)");
        }
      }
    }
    for (auto c = next; c != run.db_changes.end() && c->seq == next->seq; ++c) {
      if (!c->row) continue;
      for (const HistoryOp* h : writers_of(run, *c, f->time_us, c->time_us)) {
        out.emplace(request_of(*h), hit_text(*f) + " (held " + replica +
                                        "'s group commit, in which this write waited, until " + seconds(c->time_us) +
                                        ")");
      }
    }
  }
  return out;
}

// While the DB could not open its database (an injected I/O error at its boot: the only I/O the DB
// does for no request, so its error names no operation) it serves nothing; it serves again at the
// latest when it executes its next request (the commit log). These windows, each with that error:
// a request answered failed or indeterminate meanwhile is the seed's "数据库写入失败" (002:L403-L405),
// and the network records no refusal for it while no DB process has ever served (sim/network.cc).

std::vector<fl::props::FaultSpan> db_open_failures(const LikesRun& run, const fl::props::FaultBudget& budget) {
  std::vector<fl::props::FaultSpan> out;
  for (const auto* f : budget.instants({"db"}, 0, run.end_us)) {
    if (f->cause != 0 || std::string_view(sim::fault_kind_name(f->kind)) != "storage-error") continue;
    auto next = std::upper_bound(run.db_executed_us.begin(), run.db_executed_us.end(), f->time_us);
    const int64_t until_us = next == run.db_executed_us.end() ? run.end_us : *next;
    out.push_back(fl::props::FaultSpan{"db", f->time_us, until_us, hit_text(*f) + " (the DB could not open)"});
  }
  return out;
}

}  // namespace

// The degradation budget (issue 10, issue 42): a like/unlike/count/state answered failed or
// indeterminate (or never answered) is allowed only where an injected fault touched it: a record
// that names one of its request's attempts (a lost request or reply, a broken call, an error reply
// of Redis to its command, its events held by a pause or a clog), a fault that reached it through
// its replica's group commit (group_commit_faults), a duration fault on its path (the client, a
// replica, Redis, the DB: a crash until the restart, a pause, a partition that lost a message, a
// clog that held one) while the request ran, from its first attempt to this one's end, or the DB
// failing to open meanwhile (db_open_failures). A fault reaches only as far as it lasted: no slack.
// A fault-free run allows none.
Verdict check_degradation_budget(const LikesRun& run, const LikesFacts& facts) {
  Judge j("like-degradation-budget", {"LIKE-6", "LIKE-8", "LIKE-9"},
          "every operation answered failed or indeterminate was touched by an injected fault: one that names its "
          "request, reached it through its replica's group commit, or held its path while it ran");
  const fl::props::FaultBudget& budget = facts.budget;
  // A retry is the same request (the app resends its request id): its answer may carry what a
  // fault did to an earlier attempt (a retry of a write the DB took while the reply was lost is
  // answered "applied before", indeterminate), so the request is judged from its first attempt,
  // and a fault that touched any of its attempts touched it.
  std::map<RequestKey, std::vector<const HistoryOp*>> attempts;
  for (const HistoryOp& h : run.history) {
    if (arg_value(h.args, "req") != 0) attempts[request_of(h)].push_back(&h);
  }
  const std::map<RequestKey, std::string> batched = group_commit_faults(run, budget);
  const std::vector<fl::props::FaultSpan> db_down = db_open_failures(run, budget);
  auto touched = [&](const HistoryOp& h) -> std::optional<std::string> {
    if (arg_value(h.args, "req") == 0) return budget.touched(h.id);
    for (const HistoryOp* a : attempts.at(request_of(h))) {
      if (auto f = budget.touched(a->id)) return f;
    }
    auto it = batched.find(request_of(h));
    if (it != batched.end()) return it->second;
    return std::nullopt;
  };
  for (const HistoryOp& h : run.history) {
    if (h.outcome == Outcome::kOk) {
      j.expect(true, [] { return std::string(); });
      continue;
    }
    const int64_t end = h.complete_us >= 0 ? h.complete_us : run.end_us;
    const int64_t req = arg_value(h.args, "req");
    int64_t from_us = h.invoke_us;
    if (req != 0) {
      for (const HistoryOp* a : attempts.at(request_of(h))) from_us = std::min(from_us, a->invoke_us);
    }
    std::optional<std::string> fault = touched(h);
    if (!fault) fault = budget.explain(path_of(run, h.process), from_us, end, 0);
    for (const fl::props::FaultSpan& d : db_down) {
      if (!fault && d.from_us <= end && d.to_us >= from_us) fault = d.what;
    }
    j.expect_or_exempt(false, fault, std::string(h.op) + (h.outcome == Outcome::kFail ? " failed" : " indeterminate"),
                       [&] { return "degraded without a fault: " + h.describe(); });
  }
  return j.v;
}

std::vector<Verdict> check_likes(const LikesRun& run, const std::vector<std::string>& properties) {
  const LikesFacts facts(run);
  using Fn = Verdict (*)(const LikesRun&, const LikesFacts&);
  const std::map<std::string, Fn> table{
      {"like-uniqueness", check_uniqueness},
      {"like-single-effect", check_single_effect},
      {"like-db-count", check_db_count},
      {"like-cache-count", check_cache_count},
      {"like-non-negative", check_non_negative},
      {"like-durability", check_durability},
      {"like-per-user-order", check_per_user_order},
      {"like-state-cache", check_state_cache},
      {"like-expiry-safety", check_expiry_safety},
      {"like-reconciliation", check_reconciliation},
      {"like-idempotence", check_idempotence},
      {"like-degradation-budget", check_degradation_budget},
  };
  std::vector<std::string> names = properties;
  if (names.empty()) {
    for (const PropertyInfo& p : likes_properties()) names.push_back(p.name);
  }
  std::vector<Verdict> out;
  for (const std::string& name : names) {
    auto it = table.find(name);
    if (it == table.end()) {
      Verdict v;
      v.property = name;
      v.assertion = "known property";
      v.evidence.push_back("unknown likes property '" + name + "'");
      out.push_back(v);
      continue;
    }
    out.push_back(it->second(run, facts));
  }
  return out;
}

}  // namespace fl::likes::props
