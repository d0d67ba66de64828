#include "properties/likes/likes_behaviours.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "properties/common/fault_budget.h"
#include "properties/likes/truth.h"

namespace fl::likes::props {

namespace {

using Names = std::set<std::string>;

// The value of `key=` in a history op's args ("asset=A user=U req=R"), or nullopt.
std::optional<int64_t> arg_of(const std::string& args, const std::string& key) {
  const std::string needle = key + "=";
  size_t pos = args.find(needle);
  while (pos != std::string::npos && pos > 0 && args[pos - 1] != ' ') pos = args.find(needle, pos + 1);
  if (pos == std::string::npos) return std::nullopt;
  return std::strtoll(args.c_str() + pos + needle.size(), nullptr, 10);
}

bool is_write(const HistoryOp& h) { return h.op == "like" || h.op == "unlike"; }

// When the op stopped being in flight: its completion, or the run's end when it never completed.
int64_t end_of(const LikesRun& run, const HistoryOp& h) { return h.complete_us >= 0 ? h.complete_us : run.end_us; }

Pair pair_of(const HistoryOp& h) { return {arg_of(h.args, "asset").value_or(0), arg_of(h.args, "user").value_or(0)}; }

// The like/unlike ops by pair, each pair's in invocation order.
std::map<Pair, std::vector<const HistoryOp*>> writes_by_pair(const LikesRun& run) {
  std::map<Pair, std::vector<const HistoryOp*>> out;
  for (const HistoryOp& h : run.history) {
    if (is_write(h)) out[pair_of(h)].push_back(&h);
  }
  for (auto& [pair, ops] : out) {
    std::stable_sort(ops.begin(), ops.end(),
                     [](const HistoryOp* a, const HistoryOp* b) { return a->invoke_us < b->invoke_us; });
  }
  return out;
}

void client_answers(const LikesRun& run, Names& out) {
  std::set<std::pair<std::string, std::string>> attempts;  // (process, args): args carry the request id
  for (const HistoryOp& h : run.history) {
    if (!is_write(h)) continue;
    if (h.outcome == Outcome::kInfo) out.insert("like or unlike answered indeterminate");
    if (!attempts.emplace(h.process, h.args).second) out.insert("request retried with its id");
  }
}

// Two writes of one pair in flight together, of different requests (a request's attempts follow
// each other).
void concurrent_writes(const LikesRun& run, const std::map<Pair, std::vector<const HistoryOp*>>& by_pair, Names& out) {
  for (const auto& [pair, ops] : by_pair) {
    for (size_t i = 0; i < ops.size(); ++i) {
      for (size_t j = i + 1; j < ops.size() && ops[j]->invoke_us <= end_of(run, *ops[i]); ++j) {
        if (ops[i]->process == ops[j]->process && ops[i]->args == ops[j]->args) continue;
        out.insert(ops[i]->op == ops[j]->op ? "one pair written twice at once" : "like and unlike of one pair at once");
      }
    }
  }
}

// The last sample at or before t (nullptr: none).
const StoreSnapshot* sample_before(const LikesRun& run, int64_t t_us) {
  auto it = std::upper_bound(run.samples.begin(), run.samples.end(), t_us,
                             [](int64_t t, const StoreSnapshot& s) { return t < s.time_us; });
  return it == run.samples.begin() ? nullptr : &*std::prev(it);
}

void count_reads(const LikesRun& run, Names& out) {
  for (const HistoryOp& h : run.history) {
    if (h.op != "count") continue;
    const StoreSnapshot* s = sample_before(run, h.invoke_us);
    if (s == nullptr || !s->redis_up) continue;
    auto it = s->redis_count.find(arg_of(h.args, "asset").value_or(0));
    if (it == s->redis_count.end() || !it->second) {
      out.insert("count read while Redis held no count");
      return;
    }
  }
}

// A row statement bound to a request id that arrived after every attempt of that request was
// answered.
void late_writes(const LikesRun& run, Names& out) {
  std::map<int64_t, int64_t> answered_us;  // request id -> when its last attempt ended
  for (const HistoryOp& h : run.history) {
    const std::optional<int64_t> req = arg_of(h.args, "req");
    if (!is_write(h) || !req) continue;
    int64_t& last = answered_us.try_emplace(*req, 0).first->second;
    last = h.complete_us < 0 ? run.end_us + 1 : std::max(last, h.complete_us);
  }
  for (const DbChange& c : run.db_changes) {
    if (c.failed) out.insert("DB failed a write transaction");
    if (!c.row || !c.request_id) continue;
    auto it = answered_us.find(*c.request_id);
    if (it != answered_us.end() && c.time_us > it->second)
      out.insert("write reached the DB after its request was answered");
  }
}

void store_faults(const LikesRun& run, const fl::props::FaultBudget& budget, Names& out) {
  for (const auto& [down_us, up_us] : budget.downtimes("redis")) {
    const StoreSnapshot* s = sample_before(run, down_us);
    if (s == nullptr || !s->redis_up) continue;
    const bool counts =
        std::any_of(s->redis_count.begin(), s->redis_count.end(), [](const auto& kv) { return kv.second.has_value(); });
    if (counts || !s->redis_state.empty()) out.insert("Redis restart with keys cached");
  }
  std::vector<std::string> nodes = run.replicas;
  nodes.insert(nodes.end(), {"redis", "db"});
  for (const std::string& node : nodes) {
    if (budget.clock(node, 0, run.end_us).error_us > 0) out.insert("clock moved on a service node");
  }
  if (TruthTimeline(run, budget).rebased(0, run.end_us)) out.insert("DB lost commits in a power loss");
}

void replica_crashes(const LikesRun& run, const fl::props::FaultBudget& budget, Names& out) {
  for (const std::string& replica : run.replicas) {
    for (const auto& [down_us, up_us] : budget.downtimes(replica)) {
      for (const HistoryOp& h : run.history) {
        if (is_write(h) && h.invoke_us <= down_us && down_us <= end_of(run, h)) {
          out.insert("replica crashed with a write in flight");
          return;
        }
      }
    }
  }
}

// What each Redis request (RedisWrite::request) wrote: a count key, a state key.
struct RequestKeys {
  bool count = false;
  bool state = false;
};

std::map<uint64_t, RequestKeys> request_keys(const LikesRun& run) {
  std::map<uint64_t, RequestKeys> out;
  for (const RedisWrite& w : run.redis_writes) (w.count ? out[w.request].count : out[w.request].state) = true;
  return out;
}

bool is_set(const RedisWrite& w) { return w.changed && (w.cmd == "SET" || w.cmd == "SETNX"); }

bool write_in_flight(const LikesRun& run, const std::map<Pair, std::vector<const HistoryOp*>>& by_pair,
                     const RedisWrite& w) {
  for (auto it = by_pair.lower_bound({w.asset, std::numeric_limits<int64_t>::min()});
       it != by_pair.end() && it->first.first == w.asset; ++it) {
    if (!w.count && it->first.second != w.user) continue;
    for (const HistoryOp* h : it->second) {
      if (h->invoke_us <= w.time_us && w.time_us <= end_of(run, *h)) return true;
    }
  }
  return false;
}

// Fills and repairs: absolute writes of a count by a request that names no state key (as LIKE-10
// reads them), of a state by a request that writes no count (a like/unlike writes both).
void racing_fills(const LikesRun& run, const std::map<Pair, std::vector<const HistoryOp*>>& by_pair,
                  const std::map<uint64_t, RequestKeys>& requests, Names& out) {
  for (const RedisWrite& w : run.redis_writes) {
    if (!is_set(w)) continue;
    const bool fill = w.count ? !w.request_names_state : !requests.at(w.request).count;
    if (!fill || !write_in_flight(run, by_pair, w)) continue;
    out.insert(w.count ? "count fill or repair while a write of the asset was in flight"
                       : "state fill or repair while a write of the pair was in flight");
  }
}

// A key's value as the command log left it: known while the same Redis incarnation holds it,
// before its TTL on the Redis node's clock.
struct Cached {
  std::optional<int64_t> value;
  uint32_t incarnation = 0;
  int64_t time_us = 0;
  int64_t expires_node_ms = -1;  // -1: no TTL
  // (An eviction ends it too: the caller asks the fault budget.)
  bool known(const RedisWrite& w) const {
    return value && incarnation == w.incarnation && (expires_node_ms < 0 || w.node_ms < expires_node_ms);
  }
  void update(const RedisWrite& w) {
    if (!w.changed) return;
    value = w.after;
    incarnation = w.incarnation;
    time_us = w.time_us;
    if (w.cmd == "SET" || w.cmd == "SETNX") expires_node_ms = w.ttl_ms ? w.node_ms + *w.ttl_ms : -1;
  }
};

std::string key_of(const RedisWrite& w) {
  return w.count ? "asset:like_count:" + std::to_string(w.asset)
                 : "asset:like:" + std::to_string(w.asset) + ":" + std::to_string(w.user);
}

void cache_history(const LikesRun& run, const fl::props::FaultBudget& budget,
                   const std::map<uint64_t, RequestKeys>& requests, Names& out) {
  std::map<std::string, Cached> cached;
  for (const RedisWrite& w : run.redis_writes) {
    const std::string key = key_of(w);
    auto [it, fresh] = cached.try_emplace(key);
    Cached& c = it->second;
    if (fresh && budget.instant_in({fl::props::FaultBudget::eviction_place(key)}, 0, run.end_us)) {
      out.insert("state or count key evicted");
    }
    const bool repair = is_set(w) && w.count && !w.request_names_state;
    if (repair && c.known(w) && w.after != c.value &&
        !budget.instant_in({fl::props::FaultBudget::eviction_place(key)}, c.time_us, w.time_us)) {
      out.insert("repair rewrote a drifted count");
    }
    if (is_set(w) && !w.count && !requests.at(w.request).count && c.value && c.incarnation == w.incarnation &&
        c.expires_node_ms >= 0 && w.node_ms >= c.expires_node_ms) {
      out.insert("state key refilled after it expired");
    }
    c.update(w);
  }
}

}  // namespace

std::vector<std::string> likes_behaviours(const LikesRun& run) {
  Names out;
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  const std::map<Pair, std::vector<const HistoryOp*>> by_pair = writes_by_pair(run);
  const std::map<uint64_t, RequestKeys> requests = request_keys(run);
  client_answers(run, out);
  concurrent_writes(run, by_pair, out);
  count_reads(run, out);
  late_writes(run, out);
  store_faults(run, budget, out);
  replica_crashes(run, budget, out);
  racing_fills(run, by_pair, requests, out);
  cache_history(run, budget, requests, out);
  return {out.begin(), out.end()};
}

}  // namespace fl::likes::props
