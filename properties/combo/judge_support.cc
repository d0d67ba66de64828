// The helpers of judge_support.h, and how the views of a run are derived (views_of).
#include "properties/combo/judge_support.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "impl/ports/assert.h"
#include "sim/node_clock.h"

namespace fl::combo::detail {

std::string t(int64_t us) { return std::to_string((us - sim::kEpochUs) / 1000) + "ms"; }  // since the run began
std::string rec(const ContributionRecord& r) { return r.describe(); }

std::map<int64_t, const Purchase*> purchase_by_pid(const std::vector<Purchase>& ps) {
  std::map<int64_t, const Purchase*> m;
  for (const Purchase& p : ps) m[p.pid] = &p;
  return m;
}

std::optional<int64_t> earliest_lo(const std::vector<Purchase>& ps, const Key& key, int64_t pid) {
  std::optional<int64_t> lo;
  for (const Purchase& p : ps) {
    if (p.key == key && p.pid == pid) lo = std::min(lo.value_or(p.lo_us), p.lo_us);
  }
  return lo;
}

namespace {

std::string describe_eviction(const ComboRun::RedisOutage& o) {
  return "eviction of " + o.evicted_key + " at " + t(o.down_us) + " (maxmemory)";
}

}  // namespace

std::optional<std::string> redis_loss(const ComboRun& run, int64_t from_us, int64_t to_us, bool while_down,
                                      const Key* key) {
  for (const ComboRun::RedisOutage& o : run.redis_outages) {
    if (!o.touches(key)) continue;
    if (from_us <= (while_down ? o.up_us : o.down_us) && to_us >= loss_from_us(run, o)) {
      if (o.eviction()) return describe_eviction(o);
      return "Redis down " + t(o.down_us) + ".." + t(o.up_us) + " (a restart may lose acked writes" +
             (o.stalled_us > 0 ? " since " + t(loss_from_us(run, o)) + ": no fsync while paused or clock back" : "") +
             ")";
    }
  }
  return std::nullopt;
}

std::optional<std::string> eviction_in(const ComboRun& run, const Key& key, int64_t from_us, int64_t to_us) {
  for (const ComboRun::RedisOutage& o : run.redis_outages) {
    if (o.eviction() && o.touches(&key) && o.down_us >= from_us && loss_from_us(run, o) <= to_us) {
      return describe_eviction(o);
    }
  }
  return std::nullopt;
}

std::optional<std::string> record_state_loss(const ComboRun& run, const Key& key, int64_t first_us, int64_t to_us) {
  if (auto loss = redis_loss(run, first_us, to_us, true, &key)) return loss;
  return eviction_in(run, key, first_us - run.window_ms * 1000, to_us);
}

std::optional<std::string> db_corruption(const ComboRun& run) {
  if (!run.db_corrupt || !run.db_may_corrupt || run.db_power_losses.empty()) return std::nullopt;
  return "DB file corrupt after the power loss of db at " + t(run.db_power_losses.back()) +
         " (the storage settings keep no integrity promise)";
}

namespace {

// A purchase is known by its pid AND created_at: a DB power loss (synchronous NORMAL/OFF) forgets
// rows with AUTOINCREMENT's counter and hands their pids out again, and a record names its window's
// first row by both (000:L131, L254: first_id with first_created_at), so a reissued pid alone blurs
// nothing and is judged (the fits pair records with rows by both). Only where the DB handed one
// pid to two purchases of a key in the same millisecond are the two rows one to an observer: around
// those purchases (2 windows either side) no window has a well-defined id. Its purchases there
// become optional, its records whose window may hold a clashing purchase are left out, and so are
// the purchases those records may hold (seed 1241 of explore-hardened-normal: a record published
// late, after the clash, was left out while its own purchases, long before the clash, stayed
// certain).
void unjudge_pid_clashes(KeyView& k, int64_t w_us, Views& v) {
  std::map<std::pair<int64_t, int64_t>, int> n;  // (pid, created_at_ms) -> purchases
  for (const Purchase& p : k.purchases) ++n[{p.pid, p.created_at_ms}];
  std::vector<std::pair<int64_t, int64_t>> clashes;  // [lo, hi] of the purchases sharing a pid
  for (const Purchase& p : k.purchases) {
    if (n[{p.pid, p.created_at_ms}] > 1) clashes.emplace_back(p.lo_us, p.hi_us);
  }
  if (clashes.empty()) return;
  auto near = [&](int64_t from, int64_t to, int64_t margin) {
    return std::any_of(clashes.begin(), clashes.end(),
                       [&](const auto& c) { return from <= c.second + margin && to >= c.first - margin; });
  };
  auto make_optional = [&](Purchase& p, const char* why) {
    if (p.optional) return;
    p.optional = true;
    v.clash_exempt_one(why);
  };
  for (Purchase& p : k.purchases) {
    if (near(p.lo_us, p.hi_us, 2 * w_us)) make_optional(p, "purchase near a pid the DB handed out twice in its key");
  }
  // The span a record's window may cover: from its first purchase (its id, when the DB handed it
  // out once) for one window, widened by clock faults, and never past its publish; otherwise the
  // 2 windows before its publish.
  auto span_of = [&](const ObservedRecord& r) -> std::pair<int64_t, int64_t> {
    if (n[{r.id, r.created_at_ms}] == 1) {
      for (const Purchase& p : k.purchases) {
        if (p.pid == r.id && p.created_at_ms == r.created_at_ms)
          return {p.lo_us, std::min(r.publish_us, p.hi_us + w_us + r.slack_us)};
      }
    }
    return {r.publish_us - 2 * w_us, r.publish_us};
  };
  std::vector<ObservedRecord> kept;
  std::vector<std::pair<int64_t, int64_t>> dropped;  // spans of the records left out
  for (ObservedRecord& r : k.records) {
    const auto [from_us, to_us] = span_of(r);
    if (n[{r.id, r.created_at_ms}] > 1 || near(from_us, to_us, 0)) {
      v.clash_exempt_one("record near a pid the DB handed out twice in its key");
      dropped.emplace_back(from_us, to_us);
      continue;
    }
    kept.push_back(std::move(r));
  }
  k.records = std::move(kept);
  for (Purchase& p : k.purchases) {
    for (const auto& [from_us, to_us] : dropped) {
      if (p.lo_us <= to_us && p.hi_us >= from_us)
        make_optional(p, "purchase of a record left out near a pid the DB handed out twice");
    }
  }
  std::erase_if(k.publishes, [&](const PublishObs* p) {
    return std::none_of(k.records.begin(), k.records.end(),
                        [&](const ObservedRecord& r) { return r.id == p->record->id && r.publish_us == p->time_us; });
  });
}

// The purchase that opened the window of a stream entry (nullptr: none known). The entry names
// it by pid and created_at (000:L147-148): the pair is unique even where a DB power loss handed
// the pid out again, to this user too (seed 61 of explore-hardened-off); the activity and user
// fields pick otherwise.
const Purchase* opener_of(const EntryObs& e, const std::multimap<int64_t, const Purchase*>& by_pid) {
  auto f = e.fields.find("first_id");
  if (f == e.fields.end()) return nullptr;
  char* end = nullptr;
  const long long pid = std::strtoll(f->second.c_str(), &end, 10);
  if (f->second.empty() || *end != '\0') return nullptr;
  const Purchase* first = nullptr;
  int best = -1;
  auto a = e.fields.find("activity_id"), u = e.fields.find("user_id");
  auto c = e.fields.find("first_created_at");
  auto [from, to] = by_pid.equal_range(pid);
  for (auto it = from; it != to; ++it) {
    const Purchase& p = *it->second;
    const bool same_user = a != e.fields.end() && u != e.fields.end() && a->second == std::to_string(p.key.activity) &&
                           u->second == std::to_string(p.key.user);
    const bool same_row = same_user && c != e.fields.end() && c->second == std::to_string(p.created_at_ms);
    const int score = same_row ? 2 : same_user ? 1 : 0;
    if (score > best) {
      best = score;
      first = &p;
    }
  }
  return first;
}

Views views_of(const ComboRun& run) {
  Views v;
  const int64_t w_us = run.window_ms * 1000;
  const std::vector<Purchase> all = purchases_of(run);
  // pid -> purchases (a DB power loss may hand one pid out twice: the entry's own activity and
  // user fields, 000:L81, pick among them).
  std::multimap<int64_t, const Purchase*> by_pid;
  for (const Purchase& p : all) by_pid.emplace(p.pid, &p);
  // Windows still pending in the stream (unacknowledged entries, by the seed's first_id field)
  // at the last sample before each loss of their Redis state, however old: a restart of a Redis
  // without persistence, or an eviction of one of their keys (seed 3 of
  // explore-hardened-eviction: a window held back by a busy Redis lost its hash 8.5 s after its
  // first purchase).
  std::vector<std::pair<const ComboRun::RedisOutage*, std::map<Key, int64_t>>>
      pending_at_crash;  // key -> earliest first lo
  for (const auto& outage : run.redis_outages) {
    if (!outage.eviction() && !run.redis_loses_all) continue;
    std::map<Key, int64_t> keys;
    const UnackedSample* last = nullptr;
    for (const UnackedSample& u : run.unacked)
      if (u.time_us < outage.down_us) last = &u;
    std::vector<const EntryObs*> pending;
    int64_t since_us = INT64_MIN;
    if (last != nullptr) {
      for (const EntryObs& e : last->entries) pending.push_back(&e);
      since_us = last->time_us;
    }
    // ... and those added since that sample (no sample is taken while Redis is paused: seed 835
    // of explore-hardened-eviction lost a hash at the first command after a 5 s pause).
    for (const EntryObs& e : run.entries) {
      if (e.time_us >= since_us && e.time_us < outage.down_us) pending.push_back(&e);
    }
    for (const EntryObs* e : pending) {
      const Purchase* first = opener_of(*e, by_pid);
      if (first == nullptr) continue;
      auto k = keys.find(first->key);
      if (k == keys.end() || first->lo_us < k->second) keys[first->key] = first->lo_us;
    }
    pending_at_crash.emplace_back(&outage, std::move(keys));
  }
  for (Purchase p : all) {
    int64_t alive_until = p.hi_us + w_us + 2'000'000;
    for (const auto& [outage, keys] : pending_at_crash) {
      if (!outage->touches(&p.key)) continue;
      const int64_t down = outage->down_us;
      auto k = keys.find(p.key);
      if (down >= p.lo_us && k != keys.end() && k->second <= p.hi_us) alive_until = std::max(alive_until, down);
    }
    if (auto loss = redis_loss(run, p.lo_us, alive_until, false, &p.key); loss && !p.optional) {
      p.optional = true;
      v.exempt_one("purchase whose Redis step may be lost: " + *loss);
    }
    // Its window may have been timed that much shorter or longer by a clock fault within reach.
    KeyView& k = v.keys[p.key];
    int64_t widen_us = 0;
    if (const props::ClockReach c = window_clock(run, p.lo_us, p.hi_us); c.error_us > 0) {
      widen_us = c.error_us;
      p.lo_us -= c.error_us;
      p.hi_us += c.error_us;
      k.widened.push_back("purchase time widened by " + c.what);
    }
    k.purchases.push_back(p);
    k.purchase_widen_us.push_back(widen_us);
  }
  for (const PublishObs& p : run.publishes) {
    if (!p.record) continue;
    const ContributionRecord& r = *p.record;
    // The record's window lived from its first purchase to its publish.
    const Key k_of_r = key_of(r);
    const int64_t from_us = earliest_lo(all, k_of_r, r.id).value_or(p.time_us - 2 * w_us);
    KeyView& k = v.keys[k_of_r];
    ObservedRecord o{r.id, r.quantity, r.created_at, p.time_us, "published " + rec(r) + " at " + t(p.time_us)};
    if (const props::ClockReach c = window_clock(run, p.time_us - w_us, p.time_us); c.error_us > 0) {
      o.slack_us = c.error_us;  // its window may have been timed that much shorter or longer
    }
    if (auto loss = record_state_loss(run, k_of_r, from_us, p.time_us)) {
      v.exempt_one("record content unjudged, published near " + *loss);
      o.loose = true;
    } else {
      k.publishes.push_back(&p);
    }
    k.records.push_back(std::move(o));
  }
  for (auto& kv : v.keys) {
    KeyView::Totals& sum = kv.second.totals;
    for (const Purchase& p : kv.second.purchases) {
      sum.bought_all += p.qty;
      if (!p.optional) sum.bought_certain += p.qty;
    }
    for (const ObservedRecord& r : kv.second.records) {
      sum.published += r.quantity;
      if (!r.loose) sum.published_strict += r.quantity;
    }
    unjudge_pid_clashes(kv.second, w_us, v);
    // The widened publish times of the records the clash rule kept.
    for (const ObservedRecord& r : kv.second.records) {
      if (r.slack_us > 0)
        kv.second.widened.push_back("publish time widened by " +
                                    window_clock(run, r.publish_us - w_us, r.publish_us).what);
    }
  }
  return v;
}

}  // namespace

void add_exemptions(Judge& j, const Views& v, bool with_clashes) {
  for (const auto& [why, n] : v.exempt) j.v.exempt(why, n);
  if (!with_clashes) return;
  for (const auto& [why, n] : v.clash_exempt) j.v.exempt(why, n);
}

KeyFit fit_key(const ComboRun& run, const Key& key, const KeyView& k, const std::vector<ObservedRecord>& records,
               FitOptions o) {
  o.window_ms = run.window_ms;
  // A restart that loses data may take a window's lock with it: the window ends at the crash.
  // Without persistence it loses every lock, however old; otherwise those written in its reach.
  for (const ComboRun::RedisOutage& outage : run.redis_outages) {
    if (!outage.touches(&key)) continue;
    if (outage.eviction()) {
      // An eviction takes the lock however old, in the middle of a command stream: purchases
      // Redis timed in the same millisecond (RowObs::redis_us is floored) may fall on either side.
      const int64_t ms_us = outage.down_us / 1000 * 1000;
      o.cuts.push_back(FitOptions::Cut{INT64_MIN, ms_us});
      o.cuts.push_back(FitOptions::Cut{INT64_MIN, ms_us + 1000});
      continue;
    }
    const int64_t from_us = run.redis_loses_all ? INT64_MIN : loss_from_us(run, outage);
    o.cuts.push_back(FitOptions::Cut{from_us, outage.down_us});
  }
  // A clock that times windows jumping forward by J ends the window open then up to J early (a
  // lock's TTL, 000:L77 "SET NX EX 3", runs out on Redis's clock; the seed's expire_at_ms, L83,
  // L138, on a replica's): the next window may open from there, and every later one, timed by the
  // same clock again, lasts window_ms (seed 5820 of explore-hardened). A jump back, or one of 0
  // ms, ends none early.
  std::vector<std::string> jumps;
  for (const ForwardJump& jump : forward_clock_jumps(run)) {
    o.jumps.push_back(FitOptions::Jump{jump.at_us, jump.by_us});
    jumps.push_back(jump.what);
  }
  KeyFit f{model::combo::fit_windows(k.purchases, records, o), "", std::move(jumps)};
  if (f.fit.found || f.fit.inconclusive) return f;
  std::string list;
  for (const ObservedRecord& r : records) list += (list.empty() ? "" : "; ") + r.what;
  f.why = key.describe() + ": no assignment of its " + std::to_string(k.purchases.size()) +
          " purchases (times from the clients) to 3 s windows explains {" + list + "}";
  return f;
}

void judge_fit(Judge& j, const KeyFit& f) {
  if (f.fit.inconclusive) {
    j.v.exempt("window search exceeded its step budget (key left unjudged)");
    return;
  }
  j.expect(f.fit.found, [&] { return f.why; });
  if (f.fit.found && f.fit.cut_windows > 0) {
    j.v.exempt("window ended early by a Redis restart that lost its lock", f.fit.cut_windows);
  }
  if (!f.fit.found) return;
  for (size_t i : f.fit.jump_ends) j.v.exempt("window ended early by " + f.jumps.at(i) + " of a clock timing it");
}

KeyView unwidened(const KeyView& k) {
  FL_ASSERT(k.purchase_widen_us.size() == k.purchases.size());
  KeyView n = k;
  for (size_t i = 0; i < n.purchases.size(); ++i) {
    n.purchases[i].lo_us += n.purchase_widen_us[i];
    n.purchases[i].hi_us -= n.purchase_widen_us[i];
    n.purchase_widen_us[i] = 0;
  }
  n.records = unwidened(std::move(n.records));
  n.widened.clear();
  return n;
}

std::vector<ObservedRecord> unwidened(std::vector<ObservedRecord> records) {
  for (ObservedRecord& r : records) r.slack_us = 0;
  return records;
}

void judge_view_fit(Judge& j, const ComboRun& run, const Key& key, const KeyView& k,
                    const std::vector<ObservedRecord>& records, const FitOptions& o, const KeyFit& f,
                    std::set<Key>& counted) {
  judge_fit(j, f);
  if (!f.fit.found || k.widened.empty() || counted.count(key)) return;
  if (fit_key(run, key, unwidened(k), unwidened(records), o).fit.found) return;
  counted.insert(key);
  const std::set<std::string> reasons(k.widened.begin(), k.widened.end());
  for (const std::string& why : reasons) j.v.exempt(why);
}

std::shared_ptr<const Views> shared_views(const ComboRun& run) {
  if (run.memo == nullptr) return std::make_shared<const Views>(views_of(run));
  if (run.memo->views == nullptr) run.memo->views = std::make_shared<const Views>(views_of(run));
  return run.memo->views;
}

KeyFit base_fit(const ComboRun& run, const Key& key, const KeyView& k) {
  if (run.memo == nullptr) return fit_key(run, key, k, k.records, {});
  auto it = run.memo->base_fits.find(key);
  if (it == run.memo->base_fits.end()) it = run.memo->base_fits.emplace(key, fit_key(run, key, k, k.records, {})).first;
  return it->second;
}

}  // namespace fl::combo::detail
