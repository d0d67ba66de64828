#include "properties/likes/checks.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace fl::likes::props {
namespace {

using model::LikesModel;
using model::Possible;
using model::Range;

struct Judge {
  Verdict v;
  Judge(std::string property, std::vector<std::string> ids, std::string assertion) {
    v.property = std::move(property);
    v.invariants = std::move(ids);
    v.assertion = std::move(assertion);
    v.passed = true;
  }
  void check(bool ok, const std::function<std::string()>& evidence) {
    ++v.checks;
    if (ok) return;
    v.passed = false;
    if (v.evidence.size() < kMaxEvidence) v.evidence.push_back(evidence());
  }
};

int64_t arg_value(const std::string& args, const std::string& key) {
  const std::string k = key + "=";
  size_t pos = args.find(k);
  if (pos == std::string::npos) return 0;
  return std::strtoll(args.c_str() + pos + k.size(), nullptr, 10);
}

bool is_write(const HistoryOp& h) { return h.op == "like" || h.op == "unlike"; }
bool definite(const HistoryOp& h) { return h.outcome == Outcome::kOk && h.complete_us >= 0; }
int64_t end_of(const HistoryOp& h) { return h.complete_us >= 0 ? h.complete_us : model::kNever; }

std::string str_pair(const Pair& p) {
  return "asset=" + std::to_string(p.first) + " user=" + std::to_string(p.second);
}

std::string opt(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("nil"); }

// Ops by request id (a retried request shares its id), for pre-state questions.
std::map<uint64_t, std::vector<const HistoryOp*>> by_request(const LikesRun& run) {
  std::map<uint64_t, std::vector<const HistoryOp*>> out;
  for (const HistoryOp& h : run.history) {
    if (is_write(h)) out[static_cast<uint64_t>(arg_value(h.args, "req"))].push_back(&h);
  }
  return out;
}

// The pair's possible values just before `h` took effect. `whole_request`: every attempt of h's
// request is left out (an effect attributed to a request came from one of its attempts);
// otherwise only h itself (an earlier attempt of a retried request may have landed before it).
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

}  // namespace

std::vector<PropertyInfo> likes_properties() {
  return {
      {"like-uniqueness", {"LIKE-1"}, "at most one asset_likes row per (asset,user) (002:L67 uk_asset_likes_user_asset)"},
      {"like-single-effect", {"LIKE-2"}, "concurrent/retried likes change the Redis count by +1 at most per pair (002 3.1)"},
      {"like-db-count", {"LIKE-3"}, "assets.like_count = rows once async writes drained (002 3.1 step 4, 4.2)"},
      {"like-cache-count", {"LIKE-4"}, "GET asset:like_count:a is nil or T(a) after quiescence and one reconciliation (002 6.1-6.2)"},
      {"like-non-negative", {"LIKE-5"}, "Redis and DB counts are never negative (002 3.2, 4.2)"},
      {"like-durability", {"LIKE-6"}, "every acknowledged like/unlike reaches asset_likes, even if the replica dies (002 3.1 step 3-4)"},
      {"like-per-user-order", {"LIKE-7"}, "the final row presence is the state after the user's last acknowledged op (002 1.2)"},
      {"like-state-cache", {"LIKE-8"}, "asset:like:a:u agrees with the truth; a cached 0 never blocks a like; fills never overwrite newer values (002 3.4)"},
      {"like-expiry-safety", {"LIKE-9"}, "expiry or loss of Redis keys never double counts, makes a count jump, or blocks an unlike (002 2.2.2, 6.3)"},
      {"like-reconciliation", {"LIKE-10"}, "warm-up/sync/consistency writes never move a count away from the truth (002 4.3, 6.2)"},
      {"like-idempotence", {"LIKE-11"}, "a like of a liked asset / unlike of a not-liked one changes no counter (002 1.2)"},
  };
}

model::LikesModel build_model(const LikesRun& run) {
  LikesModel m;
  for (const HistoryOp& h : run.history) {
    if (!is_write(h) || h.outcome == Outcome::kFail) continue;
    m.add(model::WriteOp{h.id, arg_value(h.args, "asset"), arg_value(h.args, "user"), h.op == "like",
                         definite(h), h.invoke_us, definite(h) ? h.complete_us : model::kNever, h.describe()});
  }
  return m;
}

// LIKE-1: the unique key holds in every sample and at the end.
Verdict check_uniqueness(const LikesRun& run, const LikesModel&) {
  Judge j("like-uniqueness", {"LIKE-1"}, "every (asset,user) has at most one asset_likes row, at every sample");
  auto judge = [&](const StoreSnapshot& s) {
    for (const auto& kv_ : s.db_rows) {
    const auto& pair = kv_.first;
    const auto& rows = kv_.second;
      j.check(rows <= 1, [&] {
        return "t=" + std::to_string(s.time_us) + " " + str_pair(pair) + " has " + std::to_string(rows) + " rows";
      });
    }
  };
  for (const StoreSnapshot& s : run.samples) judge(s);
  judge(run.final_state);
  return j.v;
}

// LIKE-2: per pair, the certain Redis count deltas never sum above 1 (or below -1): two likes of
// one pair (double tap, retry) counted twice.
Verdict check_single_effect(const LikesRun& run, const LikesModel&) {
  Judge j("like-single-effect", {"LIKE-2"},
          "per (asset,user), the running sum of Redis count deltas stays within [-1, 1] and the DB's net delta within [0, 1]");
  std::map<Pair, std::vector<const EffectRecord*>> redis, db;
  std::set<Pair> uncertain_redis, uncertain_db;
  // An intent without an outcome (the writer died waiting) is an unknown effect.
  std::map<std::tuple<std::string, uint64_t, int, std::string, int64_t, int64_t>, int> open_intents;
  for (const EffectRecord& e : run.effects) {
    const Effect& f = e.effect;
    if (f.kind != EffectKind::kRedisCountDelta && f.kind != EffectKind::kDbCountDelta) continue;
    auto key = std::make_tuple(e.process, f.request_id, static_cast<int>(f.kind), f.source, f.asset, f.user);
    open_intents[key] += f.intent ? 1 : -1;
    if (f.intent) continue;
    const Pair p{f.asset, f.user};
    const bool is_redis = f.kind == EffectKind::kRedisCountDelta;
    if (f.certain) (is_redis ? redis : db)[p].push_back(&e);
    else (is_redis ? uncertain_redis : uncertain_db).insert(p);
  }
  for (const auto& kv : open_intents) {
    if (kv.second <= 0) continue;
    const Pair p{std::get<4>(kv.first), std::get<5>(kv.first)};
    (std::get<2>(kv.first) == static_cast<int>(EffectKind::kRedisCountDelta) ? uncertain_redis : uncertain_db).insert(p);
  }
  for (const auto& kv_ : redis) {
    const auto& pair = kv_.first;
    const auto& list = kv_.second;
    if (uncertain_redis.count(pair)) continue;
    int64_t sum = 0;
    for (const EffectRecord* e : list) {
      sum += e->effect.value;
      j.check(sum <= 1 && sum >= -1, [&] {
        return "Redis count of " + str_pair(pair) + " moved to net " + std::to_string(sum) + " by " +
               e->effect.describe() + " at t=" + std::to_string(e->start_us);
      });
    }
  }
  for (const auto& kv_ : db) {
    const auto& pair = kv_.first;
    const auto& list = kv_.second;
    if (uncertain_db.count(pair)) continue;
    int64_t sum = 0;
    for (const EffectRecord* e : list) sum += e->effect.value;
    j.check(sum == 0 || sum == 1, [&] {
      std::string s = "DB like_count of " + str_pair(pair) + " changed by net " + std::to_string(sum) + " over " +
                      std::to_string(list.size()) + " effects:";
      for (size_t i = list.size() > 8 ? list.size() - 8 : 0; i < list.size(); ++i) {
        s += " [" + list[i]->process + " t=" + std::to_string(list[i]->start_us) + " " + list[i]->effect.describe() + "]";
      }
      return s;
    });
  }
  return j.v;
}

// LIKE-3.
Verdict check_db_count(const LikesRun& run, const LikesModel&) {
  Judge j("like-db-count", {"LIKE-3"}, "at the end, assets.like_count(a) = number of asset_likes rows of a");
  const StoreSnapshot& f = run.final_state;
  j.check(f.db_read, [] { return std::string("the final DB state could not be read"); });
  for (const auto& kv_ : f.db_like_count) {
    const auto& asset = kv_.first;
    const auto& count = kv_.second;
    const int64_t rows = f.rows_of(asset);
    j.check(count == rows, [&] {
      return "asset=" + std::to_string(asset) + " like_count=" + std::to_string(count) + " but rows=" + std::to_string(rows);
    });
  }
  return j.v;
}

// LIKE-4.
Verdict check_cache_count(const LikesRun& run, const LikesModel&) {
  Judge j("like-cache-count", {"LIKE-4"}, "at the end, GET asset:like_count:a is nil or the row count T(a)");
  const StoreSnapshot& f = run.final_state;
  for (const auto& kv_ : f.redis_count) {
    const auto& asset = kv_.first;
    const auto& value = kv_.second;
    if (!value) continue;
    const int64_t rows = f.rows_of(asset);
    j.check(*value == rows, [&] {
      return "asset=" + std::to_string(asset) + " Redis count " + std::to_string(*value) + " but T=" + std::to_string(rows);
    });
  }
  return j.v;
}

// LIKE-5.
Verdict check_non_negative(const LikesRun& run, const LikesModel&) {
  Judge j("like-non-negative", {"LIKE-5"}, "Redis and DB counts, and count query answers, are >= 0 at every sample");
  auto judge = [&](const StoreSnapshot& s) {
    for (const auto& kv_ : s.redis_count) {
    const auto& asset = kv_.first;
    const auto& value = kv_.second;
      j.check(!value || *value >= 0, [&] {
        return "t=" + std::to_string(s.time_us) + " asset=" + std::to_string(asset) + " Redis count " + opt(value);
      });
    }
    for (const auto& kv_ : s.db_like_count) {
    const auto& asset = kv_.first;
    const auto& value = kv_.second;
      j.check(value >= 0, [&] {
        return "t=" + std::to_string(s.time_us) + " asset=" + std::to_string(asset) + " DB like_count " + std::to_string(value);
      });
    }
  };
  for (const StoreSnapshot& s : run.samples) judge(s);
  judge(run.final_state);
  for (const HistoryOp& h : run.history) {
    if (h.op != "count" || h.outcome != Outcome::kOk) continue;
    j.check(arg_value(h.result, "count") >= 0, [&] { return h.describe(); });
  }
  return j.v;
}

// LIKE-6: a pair whose final state is forced by an acknowledged op shows that op's effect.
Verdict check_durability(const LikesRun& run, const LikesModel& m) {
  Judge j("like-durability", {"LIKE-6"},
          "for every pair whose last acknowledged op decides the state, asset_likes has the row iff that op was a like");
  const StoreSnapshot& f = run.final_state;
  for (const Pair& pair : m.pairs()) {
    const Possible p = m.possible_final(pair.first, pair.second);
    if (!(p.only(true) || p.only(false))) continue;
    auto it = f.db_rows.find(pair);
    const bool present = it != f.db_rows.end() && it->second > 0;
    j.check(p.allows(present), [&] {
      std::string s = str_pair(pair) + ": acknowledged state " + (p.liked ? "liked" : "not liked") + " but the row is " +
                      (present ? "present" : "absent") + "; deciding op(s):";
      for (const model::WriteOp* w : m.final_candidates(pair.first, pair.second)) s += " " + w->label;
      return s;
    });
  }
  return j.v;
}

// LIKE-7: pairs with both likes and unlikes end in a state some linearization allows.
Verdict check_per_user_order(const LikesRun& run, const LikesModel& m) {
  Judge j("like-per-user-order", {"LIKE-7"},
          "for a user's likes and unlikes of one asset, the final row presence is a state the last acknowledged ops allow");
  const StoreSnapshot& f = run.final_state;
  for (const Pair& pair : m.pairs()) {
    bool likes = false, unlikes = false;
    for (const model::WriteOp& w : m.writes(pair.first, pair.second)) (w.like ? likes : unlikes) = true;
    if (!(likes && unlikes)) continue;
    const Possible p = m.possible_final(pair.first, pair.second);
    auto it = f.db_rows.find(pair);
    const bool present = it != f.db_rows.end() && it->second > 0;
    j.check(p.allows(present), [&] {
      std::string s = str_pair(pair) + ": row " + (present ? "present" : "absent") + ", allowed " + p.describe() + "; ops:";
      const auto& ws = m.writes(pair.first, pair.second);
      for (size_t i = ws.size() > 4 ? ws.size() - 4 : 0; i < ws.size(); ++i) s += " " + ws[i].label + ";";
      return s;
    });
  }
  return j.v;
}

// LIKE-8.
Verdict check_state_cache(const LikesRun& run, const LikesModel& m) {
  Judge j("like-state-cache", {"LIKE-8"},
          "final state keys equal the truth; no like answered 'already' when certainly not liked; state reads and "
          "fills agree with the model");
  const StoreSnapshot& f = run.final_state;
  for (const auto& kv_ : f.redis_state) {
    const auto& pair = kv_.first;
    const auto& value = kv_.second;
    auto it = f.db_rows.find(pair);
    const bool present = it != f.db_rows.end() && it->second > 0;
    const bool cached_liked = value == "1";
    const Possible p = m.possible_final(pair.first, pair.second);
    j.check(cached_liked == present && p.allows(cached_liked), [&] {
      return "final asset:like:" + std::to_string(pair.first) + ":" + std::to_string(pair.second) + " = \"" + value +
             "\" but row " + (present ? "present" : "absent") + ", model " + p.describe();
    });
  }
  for (const HistoryOp& h : run.history) {
    if (h.outcome != Outcome::kOk) continue;
    if (h.op == "like" && h.result == "already") {
      const Possible pre = pre_state(m, run, h, false);
      j.check(pre.liked, [&] {
        return "like answered 'already' though certainly not liked: " + h.describe() + "; earlier ops of the pair:" +
               pair_ops(run, h, 4);
      });
    }
    if (h.op == "state" && !run.in_grace(h.invoke_us, end_of(h))) {
      const int64_t a = arg_value(h.args, "asset"), u = arg_value(h.args, "user");
      const Possible p = m.possible_during(a, u, h.invoke_us, end_of(h));
      const bool liked = arg_value(h.result, "state") == 1;
      j.check(p.allows(liked), [&] { return "state read " + h.describe() + " but model " + p.describe(); });
    }
  }
  for (const EffectRecord& e : run.effects) {
    if (e.effect.source != "fill" || !e.effect.certain) continue;
    if (run.in_grace(e.start_us, e.end_us)) continue;
    if (e.effect.kind == EffectKind::kRedisStateWrite) {
      const Possible p = m.possible_during(e.effect.asset, e.effect.user, e.start_us, e.end_us);
      j.check(p.allows(e.effect.value == 1), [&] { return "stale state fill " + e.effect.describe() + ", model " + p.describe(); });
    } else if (e.effect.kind == EffectKind::kRedisCountWrite) {
      const Range r = m.count_range(e.effect.asset, e.start_us, e.end_us);
      j.check(r.contains(e.effect.value), [&] { return "stale count fill " + e.effect.describe() + ", model " + r.describe(); });
    }
  }
  return j.v;
}

// LIKE-9.
Verdict check_expiry_safety(const LikesRun& run, const LikesModel& m) {
  Judge j("like-expiry-safety", {"LIKE-9"},
          "the Redis count stays within the model's range at every sample and count read; no unlike answered "
          "'not liked' while certainly liked");
  for (const StoreSnapshot& s : run.samples) {
    if (!s.redis_up || run.in_grace(s.time_us, s.time_us)) continue;
    for (const auto& kv_ : s.redis_count) {
    const auto& asset = kv_.first;
    const auto& value = kv_.second;
      if (!value) continue;
      const Range r = m.count_range(asset, s.time_us, s.time_us);
      j.check(r.contains(*value), [&] {
        return "t=" + std::to_string(s.time_us) + " asset=" + std::to_string(asset) + " Redis count " +
               std::to_string(*value) + " outside model " + r.describe() + " (rows " + std::to_string(s.rows_of(asset)) + ")";
      });
    }
  }
  for (const HistoryOp& h : run.history) {
    if (h.outcome != Outcome::kOk) continue;
    if (h.op == "unlike" && h.result == "already") {
      const Possible pre = pre_state(m, run, h, false);
      j.check(pre.not_liked, [&] {
        return "unlike answered 'not liked' though certainly liked: " + h.describe() + "; earlier ops of the pair:" +
               pair_ops(run, h, 4);
      });
    }
    if (h.op == "count" && !run.in_grace(h.invoke_us, end_of(h))) {
      const Range r = m.count_range(arg_value(h.args, "asset"), h.invoke_us, end_of(h));
      const int64_t v = arg_value(h.result, "count");
      j.check(r.contains(v), [&] { return "count read " + h.describe() + " outside model " + r.describe(); });
    }
  }
  return j.v;
}

// LIKE-10.
Verdict check_reconciliation(const LikesRun& run, const LikesModel& m) {
  Judge j("like-reconciliation", {"LIKE-10"},
          "every warm-up/sync/consistency/reconcile write of a count lies within the model's range while it runs");
  for (const EffectRecord& e : run.effects) {
    const std::string& src = e.effect.source;
    if (src != "warmup" && src != "sync" && src != "consistency" && src != "reconcile") continue;
    if (e.effect.kind != EffectKind::kRedisCountWrite || !e.effect.certain) continue;
    const Range r = m.count_range(e.effect.asset, e.start_us, e.end_us);
    j.check(r.contains(e.effect.value), [&] {
      return "t=" + std::to_string(e.start_us) + " " + e.effect.describe() + " outside model " + r.describe();
    });
  }
  return j.v;
}

// LIKE-11.
Verdict check_idempotence(const LikesRun& run, const LikesModel& m) {
  Judge j("like-idempotence", {"LIKE-11"},
          "no counter change is made by a like of a certainly-liked pair or an unlike of a certainly-not-liked pair");
  auto requests = by_request(run);
  for (const EffectRecord& e : run.effects) {
    if (e.effect.kind != EffectKind::kRedisCountDelta && e.effect.kind != EffectKind::kDbCountDelta) continue;
    if (!e.effect.certain || e.effect.request_id == 0 || e.effect.value == 0) continue;  // 0: no change
    auto it = requests.find(e.effect.request_id);
    if (it == requests.end() || it->second.empty()) continue;
    const HistoryOp& h = *it->second.front();
    const bool like = e.effect.value > 0;
    // The pair's state when the effect happened (an indeterminate request may land late).
    const Possible pre = pre_state(m, run, h, true, std::make_pair(e.start_us, e.end_us));
    j.check(!pre.only(like), [&] {
      return e.effect.describe() + " though the pair was certainly " + (like ? "liked" : "not liked") + ": " +
             h.describe() + "; earlier ops of the pair:" + pair_ops(run, h, 4);
    });
  }
  return j.v;
}

std::vector<Verdict> check_likes(const LikesRun& run, const std::vector<std::string>& properties) {
  const LikesModel m = build_model(run);
  using Fn = Verdict (*)(const LikesRun&, const LikesModel&);
  const std::map<std::string, Fn> table{
      {"like-uniqueness", check_uniqueness},      {"like-single-effect", check_single_effect},
      {"like-db-count", check_db_count},          {"like-cache-count", check_cache_count},
      {"like-non-negative", check_non_negative},  {"like-durability", check_durability},
      {"like-per-user-order", check_per_user_order}, {"like-state-cache", check_state_cache},
      {"like-expiry-safety", check_expiry_safety}, {"like-reconciliation", check_reconciliation},
      {"like-idempotence", check_idempotence},
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
    out.push_back(it->second(run, m));
  }
  return out;
}

}  // namespace fl::likes::props
