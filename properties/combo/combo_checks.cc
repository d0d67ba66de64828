#include "properties/combo/combo_checks.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <map>
#include <set>
#include <tuple>

#include "sim/node_clock.h"
#include "impl/ports/assert.h"

namespace fl::combo {

namespace {

using model::combo::Fit;
using model::combo::FitOptions;
using model::combo::Key;
using model::combo::ObservedRecord;
using model::combo::Purchase;

constexpr size_t kMaxEvidence = 12;
constexpr int64_t kStreamNodeEntries = 100;     // Redis's stream-node-max-entries: MAXLEN ~ slack
constexpr int64_t kExplainSlackUs = 1'000'000;  // a fault up to 1 s before an operation explains it

struct Judge {
  Verdict v;
  Judge(std::string name, std::vector<std::string> ids, std::string assertion) {
    v.property = std::move(name);
    v.invariants = std::move(ids);
    v.assertion = std::move(assertion);
    v.passed = true;
  }
  void expect(bool ok, const std::function<std::string()>& why) {
    ++v.checks;
    if (ok) return;
    v.passed = false;
    if (v.evidence.size() < kMaxEvidence) v.evidence.push_back(why());
  }
};

std::string t(int64_t us) { return std::to_string((us - sim::kEpochUs) / 1000) + "ms"; }  // since the run began
std::string rec(const ContributionRecord& r) { return r.describe(); }

std::map<int64_t, const Purchase*> purchase_by_pid(const std::vector<Purchase>& ps) {
  std::map<int64_t, const Purchase*> m;
  for (const Purchase& p : ps) m[p.pid] = &p;
  return m;
}

// The earliest invocation of a purchase of `key` with `pid`: a DB power loss may hand a pid out
// again, to this key or another, so a pid alone does not name the purchase that opened a window.
std::optional<int64_t> earliest_lo(const std::vector<Purchase>& ps, const Key& key, int64_t pid) {
  std::optional<int64_t> lo;
  for (const Purchase& p : ps) {
    if (p.key == key && p.pid == pid) lo = std::min(lo.value_or(p.lo_us), p.lo_us);
  }
  return lo;
}

std::string describe_eviction(const ComboRun::RedisOutage& o) {
  return "eviction of " + o.evicted_key + " at " + t(o.down_us) + " (maxmemory)";
}

// The Redis restart that may have lost this interval's writes, described (nullopt: none).
// `while_down`: whether the interval may also fall inside the outage (a record published after the
// restart from restored state); a purchase made while Redis was down lost nothing, it failed.
// `key`: the windows at stake (an eviction touches its own key's windows only; nullptr: any).
std::optional<std::string> redis_loss(const ComboRun& run, int64_t from_us, int64_t to_us, bool while_down = true,
                                      const Key* key = nullptr) {
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

// An eviction of a key of `key`'s windows within [from_us, to_us], described (nullopt: none).
std::optional<std::string> eviction_in(const ComboRun& run, const Key& key, int64_t from_us, int64_t to_us) {
  for (const ComboRun::RedisOutage& o : run.redis_outages) {
    if (o.eviction() && o.touches(&key) && o.down_us >= from_us && loss_from_us(run, o) <= to_us) {
      return describe_eviction(o);
    }
  }
  return std::nullopt;
}

// The Redis loss that may have left a record of `key` (its id's purchase at `first_us`, published
// at `to_us`) built on partial or re-made state, described (nullopt: none): a restart within reach,
// or an eviction of its key from one window before `first_us` on, since a hash re-made after an
// eviction names a later member as its first (seed 259 of explore-hardened-eviction).
std::optional<std::string> record_state_loss(const ComboRun& run, const Key& key, int64_t first_us, int64_t to_us) {
  if (auto loss = redis_loss(run, first_us, to_us, true, &key)) return loss;
  return eviction_in(run, key, first_us - run.window_ms * 1000, to_us);
}

// Everything the window judges need for one key: its purchases (time intervals from the
// history) and the records observed for it. A purchase or record within reach of a Redis data
// loss is made optional / left out (COMBO-2's precondition), and counted as exempt.
struct KeyView {
  std::vector<Purchase> purchases;
  std::vector<ObservedRecord> records;  // published (with PUBLISH times)
  std::vector<const PublishObs*> publishes;
};

struct Views {
  std::map<Key, KeyView> keys;
  std::vector<std::pair<std::string, int64_t>> exempt;  // (reason, count)
  void exempt_one(const std::string& why) {
    for (auto& [r, n] : exempt) {
      if (r == why) {
        ++n;
        return;
      }
    }
    exempt.emplace_back(why, 1);
  }
};

// (key, pid) pairs the DB handed to two purchases of one key (see unjudge_pid_clashes); a pid
// reissued to another key is no clash: records carry their key.
std::set<std::pair<Key, int64_t>> key_pid_clashes(const ComboRun& run) {
  std::map<std::pair<Key, int64_t>, int> n;
  for (const Purchase& p : purchases_of(run)) ++n[{p.key, p.pid}];
  std::set<std::pair<Key, int64_t>> out;
  for (const auto& [kp, count] : n)
    if (count > 1) out.insert(kp);
  return out;
}

// A DB file left damaged by a power loss its storage settings do not protect against (SQLite
// keeps no integrity promise with synchronous=OFF, no journal, or a disk that lies about fsync):
// what the DB held is unknowable, and the service cannot finish what needs the DB (bind, flush).
std::optional<std::string> db_corruption(const ComboRun& run) {
  if (!run.db_corrupt || !run.db_may_corrupt || run.db_power_losses.empty()) return std::nullopt;
  return "DB file corrupt after the power loss of db at " + t(run.db_power_losses.back()) +
         " (the storage settings keep no integrity promise)";
}

// Whether the purchase of a row (by its client ref "<op>#<line>") ran its Redis step before its
// answer (redis_step_certain); a row without its call never did.
bool certain_step(const ComboRun& run, const std::string& client_ref) {
  const std::string ref = client_ref.substr(0, client_ref.find('#'));
  for (const PurchaseOp& op : run.ops) {
    if (op.ref == ref) return redis_step_certain(op);
  }
  return false;
}

// The DB power loss that may have taken a member of the window of `key` whose first row was
// created at `created_at_ms` (a lost row of the key within two windows of it, widened by the
// clock faults; rows carry the replicas' clock), so that the DB now shows the rest of it as a smaller window.
std::optional<std::string> lost_member(const ComboRun& run, const Key& key, int64_t created_at_ms) {
  // A window timed by a jumping or drifting clock near it spans that much more world time.
  const int64_t near_us = created_at_ms * 1000;
  const int64_t reach_ms =
      2 * run.window_ms +
      window_clock(run, near_us - 2 * run.window_ms * 1000, near_us + 2 * run.window_ms * 1000).error_us / 1000;
  for (const RowObs& r : run.lost_rows) {
    if (Key{r.row.activity_id, r.row.user_id, r.row.item_id} != key) continue;
    // ... or the lost row opened a window (published under its id) still open when this row came.
    const bool opened_it = r.row.created_at <= created_at_ms &&
                           std::any_of(run.publishes.begin(), run.publishes.end(), [&](const PublishObs& p) {
                             return p.record && p.record->id == r.row.id && key_of(*p.record) == key &&
                                    p.time_us / 1000 + reach_ms >= created_at_ms;
                           });
    // ... or its Redis step came later than its row (an alerted or indeterminate purchase's may
    // run whenever its call reaches Redis: seed 818 of explore-hardened-off, 6.7 s late).
    const bool stepped_near = r.redis_us >= 0 ? std::llabs(r.redis_us / 1000 - created_at_ms) <= reach_ms
                                              : r.row.created_at <= created_at_ms && !certain_step(run, r.client_ref);
    if (!opened_it && !stepped_near && std::llabs(r.row.created_at - created_at_ms) > reach_ms) continue;
    if (auto loss = db_loss_of(run, r.committed_us)) return loss;
  }
  return std::nullopt;
}

// A key where the DB handed one pid to two purchases (a power loss forgot the first row and
// AUTOINCREMENT's counter): around those purchases (2 windows either side) no window has a
// well-defined id. Its purchases there become optional, its records whose window may hold a
// clashing purchase are left out, and so are the purchases those records may hold (seed 1241 of
// explore-hardened-normal: a record published late, after the clash, was left out while its own
// purchases, long before the clash, stayed certain).
void unjudge_pid_clashes(KeyView& k, int64_t w_us, Views& v) {
  std::map<int64_t, int> n;
  for (const Purchase& p : k.purchases) ++n[p.pid];
  std::vector<std::pair<int64_t, int64_t>> clashes;  // [lo, hi] of the purchases sharing a pid
  for (const Purchase& p : k.purchases) {
    if (n[p.pid] > 1) clashes.emplace_back(p.lo_us, p.hi_us);
  }
  if (clashes.empty()) return;
  auto near = [&](int64_t from, int64_t to, int64_t margin) {
    return std::any_of(clashes.begin(), clashes.end(),
                       [&](const auto& c) { return from <= c.second + margin && to >= c.first - margin; });
  };
  auto make_optional = [&](Purchase& p, const char* why) {
    if (p.optional) return;
    p.optional = true;
    v.exempt_one(why);
  };
  for (Purchase& p : k.purchases) {
    if (near(p.lo_us, p.hi_us, 2 * w_us)) make_optional(p, "purchase near a pid the DB handed out twice in its key");
  }
  // The span a record's window may cover: from its first purchase (its id, when the DB handed it
  // out once) for one window, widened by clock faults, and never past its publish; otherwise the
  // 2 windows before its publish.
  auto span_of = [&](const ObservedRecord& r) -> std::pair<int64_t, int64_t> {
    if (n[r.id] == 1) {
      for (const Purchase& p : k.purchases) {
        if (p.pid == r.id) return {p.lo_us, std::min(r.publish_us, p.hi_us + w_us + r.slack_us)};
      }
    }
    return {r.publish_us - 2 * w_us, r.publish_us};
  };
  std::vector<ObservedRecord> kept;
  std::vector<std::pair<int64_t, int64_t>> dropped;  // spans of the records left out
  for (ObservedRecord& r : k.records) {
    const auto [from_us, to_us] = span_of(r);
    if (n[r.id] > 1 || near(from_us, to_us, 0)) {
      v.exempt_one("record near a pid the DB handed out twice in its key");
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
    if (const props::ClockReach c = window_clock(run, p.lo_us, p.hi_us); c.error_us > 0) {
      p.lo_us -= c.error_us;
      p.hi_us += c.error_us;
      v.exempt_one("purchase time widened by " + c.what);
    }
    v.keys[p.key].purchases.push_back(p);
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
      v.exempt_one("publish time widened by " + c.what);
    }
    if (auto loss = record_state_loss(run, k_of_r, from_us, p.time_us)) {
      v.exempt_one("record content unjudged, published near " + *loss);
      o.loose = true;
    } else {
      k.publishes.push_back(&p);
    }
    k.records.push_back(std::move(o));
  }
  for (auto& kv : v.keys) unjudge_pid_clashes(kv.second, w_us, v);
  return v;
}

void add_exemptions(Judge& j, const Views& v) {
  for (const auto& [why, n] : v.exempt) j.v.exempt(why, n);
}

// fit_windows for one key, with an evidence line when it fails.
struct KeyFit {
  Fit fit;
  std::string why;
};
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
  KeyFit f{model::combo::fit_windows(k.purchases, records, o), ""};
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
}

}  // namespace

// What the checkers share while check_combo runs them (ComboRun::memo): the views of the run's
// keys, and each key's fit of its published records with no options (COMBO-3's fit, which
// COMBO-4, -10, -11 and -13 also take as their gate).
struct ComboMemo {
  std::shared_ptr<const Views> views;
  std::map<Key, KeyFit> base_fits;
};

namespace {

// The run's views: the memo's while check_combo runs, else derived for this checker alone.
std::shared_ptr<const Views> shared_views(const ComboRun& run) {
  if (run.memo == nullptr) return std::make_shared<const Views>(views_of(run));
  if (run.memo->views == nullptr) run.memo->views = std::make_shared<const Views>(views_of(run));
  return run.memo->views;
}

// fit_key of `key`'s own published records with no options; `k` is its view in shared_views().
KeyFit base_fit(const ComboRun& run, const Key& key, const KeyView& k) {
  if (run.memo == nullptr) return fit_key(run, key, k, k.records, {});
  auto it = run.memo->base_fits.find(key);
  if (it == run.memo->base_fits.end()) it = run.memo->base_fits.emplace(key, fit_key(run, key, k, k.records, {})).first;
  return it->second;
}

}  // namespace

Verdict check_db_granularity(const ComboRun& run) {
  Judge j(
      "db-granularity", {"COMBO-1"},
      "each successful purchase line wrote exactly one row, failed ones none, no row without a call; ranking = Σ qty");
  if (!run.rows_known) {
    if (auto corrupt = db_corruption(run)) {
      j.v.exempt("purchases unjudged: " + *corrupt, static_cast<int64_t>(run.ops.size()));
      return j.v;
    }
    j.expect(false, [&] {
      return std::string("final activity_contributions state unknown (DB read-back failed") +
             (run.db_corrupt ? ": the file is corrupt with no power loss its settings allow to do that)" : ")");
    });
    return j.v;
  }
  std::map<std::string, int64_t> rows_per_ref;
  for (const RowObs& r : run.rows) rows_per_ref[r.client_ref.substr(0, r.client_ref.find('#'))]++;
  // A committed row missing at the end: only a power loss of the DB after its commit (synchronous
  // below FULL) may forget it; the purchase then counts as having written it.
  std::set<int64_t> lossy_activities;
  for (const RowObs& r : run.lost_rows) {
    const std::optional<std::string> loss = db_loss_of(run, r.committed_us);
    j.expect(loss.has_value(), [&] {
      return "row " + std::to_string(r.row.id) + " of " + r.client_ref + " committed at " + t(r.committed_us) +
             " is gone with no DB power loss to explain it";
    });
    if (!loss) continue;
    j.v.exempt("row committed, then lost by " + *loss);
    rows_per_ref[r.client_ref.substr(0, r.client_ref.find('#'))]++;
    lossy_activities.insert(r.row.activity_id);
  }
  std::set<std::string> refs;
  for (const PurchaseOp& op : run.ops) {
    refs.insert(op.ref);
    const int64_t n = rows_per_ref.count(op.ref) ? rows_per_ref[op.ref] : 0;
    if (op.result == PurchaseOp::Result::kOk) {
      j.expect(n == op.lines, [&] {
        return "ok purchase " + op.ref + " has " + std::to_string(n) + " rows, expected " + std::to_string(op.lines);
      });
    } else if (op.result == PurchaseOp::Result::kFail) {
      j.expect(n == 0, [&] { return "failed purchase " + op.ref + " left " + std::to_string(n) + " rows"; });
    } else {
      j.expect(n <= op.lines,
               [&] { return "indeterminate purchase " + op.ref + " has " + std::to_string(n) + " rows"; });
    }
  }
  for (const auto& entry : rows_per_ref) {
    const std::string& ref = entry.first;
    j.expect(refs.count(ref) == 1, [&] { return "row(s) of " + ref + " without any purchase call"; });
  }
  for (const RankingObs& r : run.rankings) {
    std::map<int64_t, int64_t> truth;
    for (const RowObs& row : run.rows) {
      if (row.row.activity_id == r.activity) truth[row.row.user_id] += row.row.quantity;
    }
    std::map<int64_t, int64_t> got(r.totals.begin(), r.totals.end());
    if (got != truth && lossy_activities.count(r.activity)) {
      j.v.exempt("ranking read while rows later lost to a DB power loss were there");
      continue;
    }
    j.expect(got == truth, [&] {
      return "ranking of activity " + std::to_string(r.activity) + " at " + t(r.time_us) +
             " differs from Σ qty of rows";
    });
  }
  return j.v;
}

Verdict check_quantity_conservation(const ComboRun& run) {
  Judge j("quantity-conservation", {"COMBO-2"},
          "per key, Σ published quantity = Σ purchased quantity (no loss, no double count)");
  if (!run.rows_known) return j.v;
  const std::shared_ptr<const Views> views = shared_views(run);
  const Views& v = *views;
  add_exemptions(j, v);
  for (const auto& kv : v.keys) {
    const Key& key = kv.first;
    const KeyView& k = kv.second;
    int64_t bought_all = 0, bought_certain = 0, published = 0;
    for (const Purchase& p : k.purchases) {
      bought_all += p.qty;
      if (!p.optional) bought_certain += p.qty;
    }
    int64_t published_strict = 0;  // records whose content is judged (not near a Redis data loss)
    for (const ObservedRecord& r : k.records) {
      published += r.quantity;
      if (!r.loose) published_strict += r.quantity;
    }
    j.expect(published_strict <= bought_all, [&] {
      return key.describe() + ": published " + std::to_string(published_strict) + " > purchased " +
             std::to_string(bought_all) + " (double count)";
    });
    j.expect(published >= bought_certain, [&] {
      return key.describe() + ": published " + std::to_string(published) + " < purchased " +
             std::to_string(bought_certain) + " (lost)";
    });
  }
  return j.v;
}

Verdict check_one_push_per_window(const ComboRun& run) {
  Judge j("one-push-per-window", {"COMBO-3"},
          "the published records fit the windows of the definition (000:L39): each record is one whole window "
          "(id = min pid, created_at of the first, quantity = combo_count = Σ qty), each window published once");
  if (!run.rows_known) return j.v;
  const std::shared_ptr<const Views> views = shared_views(run);
  const Views& v = *views;
  add_exemptions(j, v);
  for (const auto& kv : v.keys) {
    const Key& key = kv.first;
    const KeyView& k = kv.second;
    if (k.records.empty()) continue;
    judge_fit(j, base_fit(run, key, k));
    std::map<int64_t, int64_t> times;
    for (const PublishObs* p : k.publishes) {
      const ContributionRecord& r = *p->record;
      j.expect(r.quantity == r.combo_count, [&] { return "record " + rec(r) + " quantity != combo_count"; });
      j.expect(++times[r.id] == 1, [&] {
        return "window of first pid " + std::to_string(r.id) + " published again at " + t(p->time_us) + ": " + rec(r);
      });
    }
  }
  return j.v;
}

namespace {

// Whether an injected fault reached the run at all (COMBO-4's "without faults"): a duration fault
// that held something, an instant at any of its places, a key evicted, a clock it moved. A fault
// that touched nothing (a 0 ppm drift, a 0 ms jump or pause, an idle clog, a silent partition)
// leaves the run fault-free, and its bounds stand.
bool faults_reached(const ComboRun& run) {
  if (!run.faults.spans().empty()) return true;
  std::vector<std::string> places = run.service_places;
  places.push_back("gateway");
  for (const PurchaseOp& op : run.ops) places.push_back(op.process);
  if (!run.faults.instants(places, INT64_MIN, INT64_MAX).empty()) return true;
  if (std::any_of(run.redis_outages.begin(), run.redis_outages.end(), [](const auto& o) { return o.eviction(); }))
    return true;
  return std::any_of(places.begin(), places.end(), [&](const std::string& node) {
    const props::ClockReach c = run.faults.clock(node, sim::kEpochUs, run.end_us);
    return c.error_us > 0 || c.max_abs_offset_us > 0;
  });
}

}  // namespace

Verdict check_timeliness(const ComboRun& run) {
  Judge j("timeliness", {"COMBO-4"},
          "without faults a window is published by t_first + window + Δ; after one process crash by t_first + window + "
          "Δ_recover; "
          "under other faults by the end of the quiet tail");
  if (!run.rows_known) return j.v;
  const std::shared_ptr<const Views> views = shared_views(run);
  const Views& v = *views;
  add_exemptions(j, v);
  const bool bounded = !faults_reached(run) || run.single_crash;
  for (const auto& kv : v.keys) {
    const Key& key = kv.first;
    const KeyView& k = kv.second;
    if (!base_fit(run, key, k).fit.found) continue;  // COMBO-3's finding; nothing to time
    // Liveness: some assignment publishes every window holding a purchase the client saw succeed.
    FitOptions live;
    live.all_certain_published = true;
    KeyFit f = fit_key(run, key, k, k.records, live);
    if (!f.fit.found && !f.fit.inconclusive) f.why += ": a window holding a purchase answered ok was never published";
    judge_fit(j, f);
    if (!bounded || k.records.empty()) continue;
    FitOptions o;
    o.all_certain_published = true;
    o.late_us = (run.single_crash ? run.recover_slack_ms : run.timely_slack_ms) * 1000;
    KeyFit timed = fit_key(run, key, k, k.records, o);
    if (!timed.fit.found && !timed.fit.inconclusive)
      timed.why += " published by window end + " + std::to_string(*o.late_us / 1000) + " ms";
    judge_fit(j, timed);
  }
  return j.v;
}

Verdict check_no_early_or_split(const ComboRun& run) {
  Judge j("no-early-or-split", {"COMBO-5"},
          "some assignment of the purchases to windows has every record whole and published after its window ends");
  if (!run.rows_known) return j.v;
  const std::shared_ptr<const Views> views = shared_views(run);
  const Views& v = *views;
  add_exemptions(j, v);
  for (const auto& kv : v.keys) {
    const Key& key = kv.first;
    const KeyView& k = kv.second;
    if (k.records.empty()) continue;
    FitOptions o;
    o.early = true;
    KeyFit f = fit_key(run, key, k, k.records, o);
    if (!f.fit.found && !f.fit.inconclusive) f.why += " with every record published after its window ends";
    judge_fit(j, f);
  }
  return j.v;
}

Verdict check_entry_binding(const ComboRun& run) {
  Judge j("entry-window-binding", {"COMBO-6"},
          "at every sampled instant a window has at most one unacknowledged stream entry; processing an entry "
          "publishes only the state of the window it was created for");
  // Purchase times as the window judges see them (widened around clock faults of service nodes).
  const std::shared_ptr<const Views> views = shared_views(run);
  const Views& v = *views;
  std::vector<Purchase> ps;
  for (const auto& kv : v.keys) ps.insert(ps.end(), kv.second.purchases.begin(), kv.second.purchases.end());
  const auto by_pid = purchase_by_pid(ps);
  const std::set<int64_t> reused = reused_pids(run);
  const int64_t w_us = run.window_ms * 1000;
  auto first_of = [&](const EntryObs& e) -> const Purchase* {
    auto f = e.fields.find("first_id");
    if (f == e.fields.end()) return nullptr;
    try {
      const int64_t pid = std::stoll(f->second);
      if (reused.count(pid)) {
        j.v.exempt("stream entry whose first pid the DB handed out twice after a power loss");
        return nullptr;
      }
      auto it = by_pid.find(pid);
      return it == by_pid.end() ? nullptr : it->second;
    } catch (...) { return nullptr; }
  };
  // Clause 1 (000:L77 SET NX EX 3 "防重复入队"): two unacknowledged entries whose first purchases
  // certainly lie within one window of each other are two entries for one window.
  for (const UnackedSample& s : run.unacked) {
    std::map<Key, std::vector<std::pair<const EntryObs*, const Purchase*>>> by_key;
    for (const EntryObs& e : s.entries) {
      const Purchase* p = first_of(e);
      if (p != nullptr) by_key[p->key].emplace_back(&e, p);
    }
    for (const auto& kv : by_key) {
      const Key& key = kv.first;
      const auto& list = kv.second;
      if (redis_loss(run, s.time_us - 2 * w_us, s.time_us, true, &key)) {
        j.v.exempt("stream sample near a Redis restart or eviction (entries may be replayed)");
        continue;
      }
      std::string shared;
      for (size_t a = 0; a < list.size() && shared.empty(); ++a) {
        for (size_t b = a + 1; b < list.size(); ++b) {
          const Purchase& x = *list[a].second;
          const Purchase& y = *list[b].second;
          if (std::max(x.hi_us, y.hi_us) < std::min(x.lo_us, y.lo_us) + w_us) {
            // A restart or an eviction that lost the window's lock (000:L77) between the two
            // purchases let the second open another entry: the window ended there.
            if (auto loss = redis_loss(run, std::min(x.lo_us, y.lo_us), std::max(x.hi_us, y.hi_us), true, &key)) {
              j.v.exempt("two entries for one window across a lock loss: " + *loss);
              continue;
            }
            shared = list[a].first->id + " and " + list[b].first->id + " (first pids " + std::to_string(x.pid) + ", " +
                     std::to_string(y.pid) + ")";
            break;
          }
        }
      }
      j.expect(shared.empty(), [&] {
        return "at " + t(s.time_us) + " " + key.describe() +
               " has two unacknowledged entries for one window: " + shared;
      });
    }
  }
  // Clause 2: the record a processed entry published belongs to the entry's key and to a window
  // the entry's first purchase can share (their times are less than a window apart).
  std::map<std::string, const EntryObs*> entry_by_id;
  for (const EntryObs& e : run.entries) entry_by_id[e.id] = &e;
  for (const PublishObs& p : run.publishes) {
    if (!p.record || p.entry_id.empty()) continue;
    auto it = entry_by_id.find(p.entry_id);
    if (it == entry_by_id.end()) continue;
    const EntryObs& e = *it->second;
    const ContributionRecord& r = *p.record;
    auto field = [&](const char* f) {
      auto x = e.fields.find(f);
      return x == e.fields.end() ? std::string() : x->second;
    };
    j.expect(field("activity_id") == std::to_string(r.activity_id) && field("user_id") == std::to_string(r.user_id) &&
                 field("item_type") == r.item_type,
             [&] {
               return "entry " + e.id + " (a=" + field("activity_id") + ",u=" + field("user_id") + "," +
                      field("item_type") + ") published " + rec(r);
             });
    const Purchase* first = first_of(e);
    auto rp = reused.count(r.id) ? by_pid.end() : by_pid.find(r.id);
    if (first == nullptr || rp == by_pid.end()) continue;
    const Purchase& x = *first;
    const Purchase& y = *rp->second;
    if (redis_loss(run, std::min(x.lo_us, y.lo_us), p.time_us, true, &x.key)) {
      j.v.exempt("publish near a Redis restart or eviction (state may be stale)");
      continue;
    }
    const bool apart = y.lo_us >= x.hi_us + w_us || x.lo_us >= y.hi_us + w_us;
    j.expect(!apart, [&] {
      return "entry " + e.id + " created for first pid " + std::to_string(x.pid) +
             " published another window's state " + rec(r) + " at " + t(p.time_us);
    });
  }
  return j.v;
}

Verdict check_pel_drains(const ComboRun& run) {
  Judge j("pel-drains", {"COMBO-7"}, "once quiescent, XPENDING combo:stream:contributions combo-publishers = 0");
  if (!run.redis_known) return j.v;
  if (auto corrupt = db_corruption(run); corrupt && run.final_pending > 0) {
    j.v.exempt("entries left pending: the worker binds through the DB, and the " + *corrupt, run.final_pending);
    return j.v;
  }
  j.expect(run.final_pending <= 0,
           [&] { return "XPENDING = " + std::to_string(run.final_pending) + " at the end of the quiet tail"; });
  return j.v;
}

Verdict check_no_garbage(const ComboRun& run) {
  Judge j("no-garbage-records", {"COMBO-8"},
          "records have quantity >= 1, nickname/item_name/item_icon, an id that is a pid of their key; no pid "
          "re-published");
  const auto ps = purchases_of(run);
  const auto by_pid = purchase_by_pid(ps);
  const std::set<int64_t> reused = reused_pids(run);
  std::map<int64_t, int> seen;
  for (const PublishObs& p : run.publishes) {
    if (!p.record) continue;
    const ContributionRecord& r = *p.record;
    j.expect(r.quantity >= 1, [&] { return "record " + rec(r) + " has quantity < 1"; });
    j.expect(!r.nickname.empty() && !r.item_name.empty() && !r.item_icon.empty(),
             [&] { return "record " + rec(r) + " lacks nickname/item_name/item_icon"; });
    if (reused.count(r.id)) {
      j.v.exempt("record whose id the DB handed out twice after a power loss");
      continue;
    }
    if (run.rows_known) {
      auto it = by_pid.find(r.id);
      j.expect(it != by_pid.end() && it->second->key == key_of(r),
               [&] { return "record " + rec(r) + " id is no pid of its key"; });
    }
    if (++seen[r.id] > 1) {
      const Key key = key_of(r);
      if (auto loss = redis_loss(run, p.time_us - 30'000'000, p.time_us, true, &key)) {
        j.v.exempt("re-publish after " + *loss);
        continue;
      }
    }
    j.expect(seen[r.id] == 1,
             [&] { return "pid " + std::to_string(r.id) + " published again at " + t(p.time_us) + ": " + rec(r); });
  }
  return j.v;
}

Verdict check_ttl_hygiene(const ComboRun& run) {
  Judge j("ttl-hygiene", {"COMBO-9"},
          "combo:agg* keys never lack a TTL; at the end only the stream remains of combo:*");
  if (!run.redis_known) return j.v;
  j.v.checks += run.ttl_keys_sampled - static_cast<int64_t>(run.no_ttl_samples.size());
  for (const RedisKeyObs& k : run.no_ttl_samples) {
    j.expect(false, [&] { return k.key + " had TTL -1 at " + t(k.time_us); });
  }
  int64_t combo_keys = 0;
  const std::optional<std::string> corrupt = db_corruption(run);
  for (const RedisKeyObs& k : run.final_keys) {
    if (k.key.rfind("combo:", 0) != 0) continue;
    ++combo_keys;
    if (corrupt && k.key != "combo:stream:contributions" && k.ttl_ms >= 0) {
      j.v.exempt("window left unflushed at the end (it expires): the worker binds through the DB, and the " + *corrupt);
      continue;
    }
    j.expect(k.key == "combo:stream:contributions",
             [&] { return k.key + " remains at the end (TTL " + std::to_string(k.ttl_ms) + " ms)"; });
  }
  if (combo_keys == 0) ++j.v.checks;  // the final keyspace was examined and held no combo key
  return j.v;
}

Verdict check_stream_bounded(const ComboRun& run) {
  Judge j("stream-bounded", {"COMBO-9"},
          "the combo stream, the one combo:* key allowed to stay, never exceeds MAXLEN ~ (+1 node)");
  // 000:L497 "XAdd MAXLEN 不会无限增长": acking never removes entries, so only MAXLEN ~ bounds the
  // stream. It trims whole nodes of 100 entries: never more than MAXLEN + 100.
  if (!run.redis_known || run.unacked.empty()) return j.v;
  j.expect(run.stream_len_max <= run.stream_maxlen + kStreamNodeEntries, [&] {
    return "the stream grew to " + std::to_string(run.stream_len_max) + " entries (MAXLEN ~ " +
           std::to_string(run.stream_maxlen) + ")";
  });
  return j.v;
}

Verdict check_degradation(const ComboRun& run) {
  Judge j("degradation", {"COMBO-10"},
          "a purchase answered alerted, failed or indeterminate is explained by an injected fault on its path "
          "(client, replica, redis, db); one answered ok is pushed (000:L419), never silently dropped");
  for (const PurchaseOp& op : run.ops) {
    const bool degraded = op.alerted || op.result != PurchaseOp::Result::kOk;
    if (!degraded) continue;
    const int64_t to = op.complete_us >= 0 ? op.complete_us : run.end_us;
    // A fault that touched the purchase itself (lost its message, broke its call, refused or
    // failed one of its commands, held its events back), or one that held a place on its path
    // down while it ran. A clock fault is neither: it times windows, it does not fail a call.
    std::optional<std::string> why = run.faults.touched(op.id);
    if (!why) why = run.faults.explain(path_of(run, op), op.invoke_us, to, kExplainSlackUs);
    j.expect(why.has_value(), [&] {
      return "purchase " + op.ref + " [" + t(op.invoke_us) + ", " + t(to) + "] answered " +
             (op.alerted                               ? "alerted"
              : op.result == PurchaseOp::Result::kFail ? "failed"
                                                       : "indeterminate") +
             " with no injected fault on its path";
    });
    if (why) j.v.exempt("purchase answered degraded during: " + *why);
  }
  if (!run.rows_known) return j.v;
  const std::shared_ptr<const Views> views = shared_views(run);
  const Views& v = *views;
  for (const auto& kv : v.keys) {
    const Key& key = kv.first;
    const KeyView& k = kv.second;
    if (!base_fit(run, key, k).fit.found) continue;  // COMBO-3's finding
    FitOptions live;
    live.all_certain_published = true;
    KeyFit f = fit_key(run, key, k, k.records, live);
    if (!f.fit.found && !f.fit.inconclusive) f.why += ": a purchase answered ok (no alert) was never pushed";
    judge_fit(j, f);
  }
  return j.v;
}

// A lossy DB power loss between a window's first purchase (`from_us`) and `seen_us`: it may have
// undone any write that makes the window's rows pollable as one window (its binding, synced to a
// disk that lied: seeds 137 and 4969 of explore-hardened-lying-disk), described; nullopt: none.
std::optional<std::string> write_undone(const ComboRun& run, int64_t from_us, int64_t seen_us) {
  for (int64_t at : run.db_power_losses) {
    if (at >= from_us && at <= seen_us) return db_loss_of(run, at);
  }
  return std::nullopt;
}

namespace {

// Record id -> time of its last publish. A window's Redis state matters until it was last
// published: after that the record, not Redis, is what pages show.
std::map<int64_t, int64_t> last_publish_us(const ComboRun& run) {
  std::map<int64_t, int64_t> last;
  for (const PublishObs& p : run.publishes) {
    if (p.record) last[p.record->id] = p.time_us;
  }
  return last;
}

// The end of the span in which a Redis state loss can change what record `id` shows: its last
// publish, or `limit_us` (the observation's time) when it was not published by then.
int64_t published_by_us(const std::map<int64_t, int64_t>& last_publish, int64_t id, int64_t limit_us) {
  auto pub = last_publish.find(id);
  return pub == last_publish.end() ? limit_us : std::min(pub->second, limit_us);
}

}  // namespace

Verdict check_polling_merge(const ComboRun& run) {
  Judge j("polling-merge", {"COMBO-11"},
          "GetLatestContributions: one record per window, id = min pid, Σ qty of exactly that window, newest first, no "
          "nil, no duplicate");
  const std::shared_ptr<const Views> views = run.rows_known ? shared_views(run) : std::make_shared<const Views>();
  const Views& v = *views;
  const std::vector<Purchase> all = run.rows_known ? purchases_of(run) : std::vector<Purchase>{};
  const auto clashes = key_pid_clashes(run);
  std::map<std::tuple<Key, int64_t, int64_t, int64_t>, bool> judged;  // (key, id, qty, created) -> fits
  std::map<Key, bool> base_found;
  const std::map<int64_t, int64_t> last_publish = last_publish_us(run);
  for (const PollObs& poll : run.polls) {
    std::set<int64_t> ids;
    int64_t prev = INT64_MAX;
    for (size_t i = 0; i < poll.event.records.size(); ++i) {
      const auto& r = poll.event.records[i];
      j.expect(r.has_value(), [&] {
        return "poll by " + poll.event.client + " at " + t(poll.end_us) + ": nil entry at index " + std::to_string(i);
      });
      if (!r) continue;
      j.expect(ids.insert(r->id).second,
               [&] { return "poll at " + t(poll.end_us) + ": id " + std::to_string(r->id) + " twice"; });
      j.expect(r->id < prev, [&] { return "poll at " + t(poll.end_us) + ": not newest first at " + rec(*r); });
      prev = r->id;
      if (!run.rows_known) continue;
      if (clashes.count({key_of(*r), r->id})) {
        j.v.exempt("polled window whose id the DB handed out twice in its key after a power loss");
        continue;
      }
      if (auto loss = lost_member(run, key_of(*r), r->created_at)) {
        j.v.exempt("polled window that may have lost a row to a " + *loss);
        continue;
      }
      const std::optional<int64_t> from_us = earliest_lo(all, key_of(*r), r->id);
      if (auto loss = from_us ? write_undone(run, *from_us, poll.end_us) : std::nullopt) {
        j.v.exempt("polled window whose rows' later writes a DB " + *loss + " may have undone");
        continue;
      }
      // A window that lived through a Redis state loss (an eviction of its keys, a restart within
      // reach) is fitted loosely when published (views_of: only that a window holds its id); its
      // rows, bound to the window Redis named, are the same window and are fitted the same way
      // (explore-hardened-eviction seed 5472: the publish of window 84 was loose, its poll was
      // fitted exactly and failed).
      std::optional<std::string> state_loss;
      if (from_us) {
        state_loss = record_state_loss(run, key_of(*r), *from_us, published_by_us(last_publish, r->id, poll.end_us));
      }
      const Key key = key_of(*r);
      const auto cache_key = std::make_tuple(key, r->id, r->quantity, r->created_at);
      if (judged.count(cache_key)) continue;
      auto kit = v.keys.find(key);
      if (kit == v.keys.end()) {
        j.expect(false, [&] { return "poll record " + rec(*r) + " names no purchase of its key"; });
        judged[cache_key] = false;
        continue;
      }
      if (!base_found.count(key)) base_found[key] = base_fit(run, key, kit->second).fit.found;
      if (!base_found[key]) continue;  // the published records alone do not fit: COMBO-3's finding
      std::vector<ObservedRecord> records = kit->second.records;
      records.push_back(
          ObservedRecord{r->id, r->quantity, r->created_at, -1, "polled " + rec(*r) + " at " + t(poll.end_us)});
      if (state_loss) {
        records.back().loose = true;
        j.v.exempt("polled window content unjudged, near " + *state_loss);
      }
      const KeyFit f = fit_key(run, key, kit->second, records, {});
      judged[cache_key] = f.fit.found;
      judge_fit(j, f);
    }
  }
  add_exemptions(j, v);
  return j.v;
}

namespace {

// Laws (c), (d), (e), (g) of COMBO-12 on one (input, output) pair.
void pair_law_violations(const std::vector<ContributionRecord>& input, const std::vector<ContributionRecord>& output,
                         std::vector<std::string>& bad) {
  std::map<int64_t, std::pair<int64_t, int64_t>> key_of_id;                   // id -> (user,item) of the input copy
  std::map<std::pair<int64_t, int64_t>, std::map<int64_t, int64_t>> max_qty;  // key -> id -> max qty
  for (const ContributionRecord& r : input) {
    key_of_id[r.id] = {r.user_id, r.item_id};
    auto& m = max_qty[{r.user_id, r.item_id}][r.id];
    m = std::max(m, r.quantity);
  }
  std::map<std::pair<int64_t, int64_t>, int64_t> out_sum;
  std::set<int64_t> out_ids;
  std::vector<int64_t> order;
  for (const ContributionRecord& r : output) {
    auto it = key_of_id.find(r.id);
    if (it == key_of_id.end() || it->second != std::make_pair(r.user_id, r.item_id)) {
      bad.push_back("(c) merged across keys: output id " + std::to_string(r.id) + " (u" + std::to_string(r.user_id) +
                    ",i" + std::to_string(r.item_id) + ")");
    }
    out_sum[{r.user_id, r.item_id}] += r.quantity;
    if (!out_ids.insert(r.id).second) bad.push_back("(e) id " + std::to_string(r.id) + " kept twice");
    order.push_back(r.id);
  }
  for (const auto& [key, ids] : max_qty) {
    int64_t expect = 0;
    for (const auto& [id, q] : ids) expect += q;
    if (out_sum[key] != expect) {
      bad.push_back("(d)/(e) Σ quantity of (u" + std::to_string(key.first) + ",i" + std::to_string(key.second) +
                    ") over distinct ids " + std::to_string(expect) + " became " + std::to_string(out_sum[key]));
    }
  }
  std::map<int64_t, size_t> first_pos;
  for (size_t i = 0; i < input.size(); ++i) first_pos.emplace(input[i].id, i);
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    if (first_pos.count(order[i]) && first_pos.count(order[i + 1]) && first_pos[order[i]] > first_pos[order[i + 1]]) {
      bad.push_back("(g) order changed");
      break;
    }
  }
}

}  // namespace

std::vector<std::string> merge_law_violations(const MergeFn& merge, const std::vector<ContributionRecord>& input) {
  std::vector<std::string> bad;
  JsArray x = to_js(input);
  JsArray y;
  try {
    y = merge(x);
  } catch (const std::exception& e) { return {std::string("(a) threw: ") + e.what()}; }
  if (snapshot(x) != input) bad.push_back("(b) mutated its input");
  for (const JsRecordPtr& r : y) {
    if (!r) bad.push_back("(c) produced a null");
  }
  pair_law_violations(input, snapshot(y), bad);
  try {  // (f) idempotence
    JsArray z = merge(to_js(snapshot(y)));
    if (snapshot(z) != snapshot(y)) bad.push_back("(f) m(m(x)) != m(x)");
  } catch (const std::exception& e) { bad.push_back(std::string("(f)/(a) second application threw: ") + e.what()); }
  return bad;
}

std::vector<std::string> observed_merge_violations(const MergeCall& call) {
  if (!call.error.empty()) return {"(a) threw: " + call.error};
  for (bool null : call.input_null) {
    if (null) return {};  // laws are stated for arrays of well-formed records
  }
  std::vector<std::string> bad;
  if (call.input_after != call.input) bad.push_back("(b) mutated its input");
  pair_law_violations(call.input, call.output, bad);
  return bad;
}

Verdict check_merge_algebra(const ComboRun& run) {
  Judge j("merge-algebra", {"COMBO-12"}, "mergeComboRecords obeys laws (a)-(e), (g) on every call the front ends made");
  // (f) needs a second application the pages never make: the RapidCheck suite
  // (combo_merge_rc_test.cc) checks it on the functions themselves.
  const std::set<int64_t> reused = reused_pids(run);
  for (const UiObs& u : run.ui) {
    for (const MergeCall& call : u.event.merges) {
      // The laws assume an id names one window (a DB id); a power loss that made the DB hand
      // an id out twice can give the page two windows (keys) of one id: such a call is left unjudged.
      std::map<int64_t, Key> key_of_id;
      bool twice = false;
      for (const ContributionRecord& r : call.input) {
        auto [it, fresh] = key_of_id.emplace(r.id, key_of(r));
        twice = twice || (!fresh && !(it->second == key_of(r)) && reused.count(r.id) > 0);
      }
      if (twice) {
        j.v.exempt("merge of a window whose id the DB handed out twice after a power loss");
        continue;
      }
      const std::vector<std::string> bad = observed_merge_violations(call);
      j.expect(bad.empty(), [&] {
        std::string all;
        for (const std::string& b : bad) all += (all.empty() ? "" : "; ") + b;
        return u.event.client + " " + u.event.cause + " at " + t(u.time_us) + ": " + all;
      });
    }
  }
  return j.v;
}

Verdict check_ui_convergence(const ComboRun& run) {
  Judge j("ui-convergence", {"COMBO-13"},
          "after all pushes and polls, each displayed item is one whole window of the definition (id = first_id, "
          "quantity = Σ qty) that fits together with the published records, and no window is shown twice");
  if (!run.rows_known) return j.v;
  const std::shared_ptr<const Views> views = shared_views(run);
  const Views& v = *views;
  add_exemptions(j, v);
  const auto clashes = key_pid_clashes(run);
  std::map<std::string, const UiObs*> last;
  for (const UiObs& u : run.ui) last[u.event.client] = &u;
  const std::map<int64_t, int64_t> last_publish = last_publish_us(run);
  for (const auto& [client, u] : last) {
    std::map<Key, std::vector<ObservedRecord>> shown;
    for (const ContributionRecord& r : u->event.after) {
      if (clashes.count({key_of(r), r.id})) {
        j.v.exempt("displayed window whose id the DB handed out twice in its key after a power loss");
        continue;
      }
      if (auto loss = lost_member(run, key_of(r), r.created_at)) {
        j.v.exempt("displayed window that may have lost a row to a " + *loss);
        continue;
      }
      // A window Redis may have forgotten part of (a restart losing acked writes) can be
      // re-published as another, partial window: what the page shows of it is not judged.
      auto kit = v.keys.find(key_of(r));
      const std::optional<int64_t> first =
          kit == v.keys.end() ? std::nullopt : earliest_lo(kit->second.purchases, key_of(r), r.id);
      if (first.has_value()) {
        if (auto loss = record_state_loss(run, key_of(r), *first, published_by_us(last_publish, r.id, run.end_us))) {
          j.v.exempt("displayed window near " + *loss);
          continue;
        }
      }
      shown[key_of(r)].push_back(ObservedRecord{r.id, r.quantity, r.created_at, -1, client + " shows " + rec(r)});
    }
    for (const auto& kv : shown) {
      const Key& key = kv.first;
      const std::vector<ObservedRecord>& items = kv.second;
      auto kit = v.keys.find(key);
      j.expect(kit != v.keys.end(), [&] { return items.front().what + ": no purchase of its key"; });
      if (kit == v.keys.end()) continue;
      if (!base_fit(run, key, kit->second).fit.found) continue;  // COMBO-3's finding
      std::vector<ObservedRecord> records = kit->second.records;
      records.insert(records.end(), items.begin(), items.end());
      judge_fit(j, fit_key(run, key, kit->second, records, {}));
    }
  }
  return j.v;
}

Verdict check_no_wrongful_drop(const ComboRun& run) {
  Judge j("no-wrongful-drop", {"COMBO-14"},
          "a WS record is discarded only if the same id with the same or larger quantity is displayed");
  const std::set<int64_t> reused = reused_pids(run);
  for (const UiObs& u : run.ui) {
    if (u.event.cause != "ws" || !u.event.incoming) continue;
    const ContributionRecord& r = *u.event.incoming;
    if (r.activity_id != u.event.activity_id) continue;
    // The page tells windows apart by id (000:L340-368); when a power loss made the DB hand the id
    // out twice, a displayed window of another key holds it, and no page can keep both (as in
    // merge-algebra). Seed 3 of explore-hardened-off.
    bool clash = false;
    for (const ContributionRecord& x : u.event.before) clash = clash || (x.id == r.id && !(key_of(x) == key_of(r)));
    if (clash && reused.count(r.id)) {
      j.v.exempt("WS record whose id a displayed window of another key holds (the DB handed it out twice)");
      continue;
    }
    auto shows = [&](const std::vector<ContributionRecord>& list) {
      for (const ContributionRecord& x : list)
        if (x.id == r.id && x.quantity >= r.quantity) return true;
      return false;
    };
    const bool kept = shows(u.event.after) || shows(u.event.before);
    bool truncated = u.event.after.size() >= kMaxRecords;
    for (const ContributionRecord& x : u.event.after) truncated = truncated && x.id > r.id;
    j.expect(kept || truncated, [&] { return u.event.client + " at " + t(u.time_us) + " dropped WS " + rec(r); });
  }
  return j.v;
}

Verdict check_activity_isolation(const ComboRun& run) {
  Judge j("activity-isolation", {"COMBO-15"},
          "a record on act:{A}:contributions aggregates only purchases of activity A");
  const std::shared_ptr<const Views> views = shared_views(run);  // purchase times widened around clock faults
  const Views& v = *views;
  std::vector<Purchase> ps;
  for (const auto& kv : v.keys) ps.insert(ps.end(), kv.second.purchases.begin(), kv.second.purchases.end());
  const auto by_pid = purchase_by_pid(ps);
  const std::set<int64_t> reused = reused_pids(run);
  const int64_t w_us = run.window_ms * 1000;
  for (const PublishObs& p : run.publishes) {
    if (!p.record) continue;
    const ContributionRecord& r = *p.record;
    const std::optional<int64_t> channel_activity = activity_of_channel(p.channel);
    j.expect(channel_activity && *channel_activity == r.activity_id,
             [&] { return "record " + rec(r) + " on " + p.channel; });
    if (!run.rows_known) continue;
    if (reused.count(r.id)) {
      j.v.exempt("record whose id the DB handed out twice after a power loss");
      continue;
    }
    auto first = by_pid.find(r.id);
    if (first == by_pid.end()) continue;  // COMBO-8's finding
    if (auto loss = redis_loss(run, first->second->lo_us - w_us, p.time_us, true, &first->second->key)) {
      j.v.exempt("record published near " + *loss);
      continue;
    }
    // Σ qty of the purchases of (A, user, item) that could share the first purchase's window.
    int64_t could = 0;
    for (const Purchase& q : ps) {
      if (q.key == key_of(r) && q.hi_us > first->second->lo_us - w_us && q.lo_us < first->second->hi_us + w_us)
        could += q.qty;
    }
    j.expect(first->second->key.activity == r.activity_id && r.quantity <= could, [&] {
      return "record " + rec(r) + " on " + p.channel + " counts " + std::to_string(r.quantity) + " but activity " +
             std::to_string(r.activity_id) + " has Σ=" + std::to_string(could) + " around its first purchase";
    });
  }
  return j.v;
}

Verdict check_bounded_list(const ComboRun& run) {
  Judge j("bounded-list", {"COMBO-16"}, "records.length <= MAX_RECORDS and truncation drops the oldest");
  for (const UiObs& u : run.ui) {
    j.expect(u.event.after.size() <= kMaxRecords,
             [&] { return u.event.client + " shows " + std::to_string(u.event.after.size()) + " items"; });
    std::vector<ContributionRecord> candidates = u.event.before;
    if (u.event.incoming && u.event.incoming->activity_id == u.event.activity_id)
      candidates.push_back(*u.event.incoming);
    for (const auto& r : u.event.poll_records)
      if (r) candidates.push_back(*r);
    int64_t oldest_kept = INT64_MAX;
    for (const ContributionRecord& r : u.event.after) oldest_kept = std::min(oldest_kept, r.id);
    // A candidate is kept when an item shows it, or may have absorbed it (same user and item
    // within 3 s: the seed's merge, 000:L355).
    auto kept = [&](const ContributionRecord& c) {
      for (const ContributionRecord& r : u.event.after) {
        if (r.id == c.id || (r.user_id == c.user_id && r.item_id == c.item_id &&
                             std::llabs(r.created_at - c.created_at) <= run.window_ms))
          return true;
      }
      return false;
    };
    if (u.event.after.size() < kMaxRecords) continue;
    for (const ContributionRecord& r : candidates) {
      if (kept(r)) continue;
      j.expect(r.id < oldest_kept, [&] {
        return u.event.client + " at " + t(u.time_us) + " dropped newer " + rec(r) + " but kept older id " +
               std::to_string(oldest_kept);
      });
    }
  }
  return j.v;
}

namespace {

// Where users look: every id some front end showed (a UI state after a push or a poll) or a poll
// returned, with the times it was seen (what the clients observed; nothing the service says).
std::map<int64_t, std::vector<int64_t>> sightings(const ComboRun& run) {
  std::map<int64_t, std::vector<int64_t>> seen;
  for (const UiObs& u : run.ui) {
    for (const ContributionRecord& r : u.event.after) seen[r.id].push_back(u.time_us);
  }
  for (const PollObs& p : run.polls) {
    for (const auto& r : p.event.records)
      if (r) seen[r->id].push_back(p.end_us);
  }
  return seen;
}

// Where a published window stands in a page of whole windows, which is cut by each window's opener
// (the newest windows first): the pid of the row whose purchase added the stream entry its first
// publish processed (EntryObs::opener_pid, from the commands' and commits' causes), else the
// record's id. A window's record shows its smallest pid, which is not its opener's when a member
// reached Redis late (a paused Redis: seed 10815 of explore-hardened-store-faults, the window
// opened by pid 23 holding pid 2 showed as "id=2"). Never the service's window bookkeeping.
using PagePositions = std::map<int64_t, int64_t>;  // record id -> its window's opener pid
PagePositions page_positions(const ComboRun& run) {
  std::map<std::string, int64_t> opener_of_entry;
  for (const EntryObs& e : run.entries) {
    if (e.opener_pid >= 0) opener_of_entry.emplace(e.id, e.opener_pid);
  }
  PagePositions out;
  for (const PublishObs& p : run.publishes) {
    if (!p.record || out.count(p.record->id)) continue;
    auto it = opener_of_entry.find(p.entry_id);
    if (it != opener_of_entry.end()) out[p.record->id] = it->second;
  }
  return out;
}
int64_t page_position(const PagePositions& positions, int64_t id) {
  auto it = positions.find(id);
  return it == positions.end() ? id : it->second;
}

// True when a poll of `activity` that began after `from_us` came back full (as many records as
// the longest poll answer of the run) with only windows newer than `id`'s: `id` had left the page.
bool superseded(const ComboRun& run, const PagePositions& positions, int64_t activity, int64_t id, int64_t from_us,
                size_t full) {
  const int64_t position = page_position(positions, id);
  for (const PollObs& p : run.polls) {
    if (p.event.activity_id != activity || p.begin_us < from_us || p.event.records.empty() ||
        p.event.records.size() < full) {
      continue;
    }
    bool newer = true;
    for (const auto& r : p.event.records) newer = newer && r && page_position(positions, r->id) > position;
    if (newer) return true;
  }
  return false;
}

}  // namespace

// Completeness of what was published (issue 16): a record the worker published reaches users —
// 000:L39 "前端只看到 1 条 UI 项", L284 the polling path as the WS path's fallback — so each
// published window id is, at some time after its first PUBLISH, displayed by a front end or
// returned by a poll, unless newer windows pushed it off the page first (a full poll of only
// newer windows), the DB lost its rows, or no front end of its activity exists.
// The Redis restart between a window's first purchase and a publish that came after it came back
// (the publish ran on state the restart restored), described; nullopt: none.
std::optional<std::string> restored_before(const ComboRun& run, int64_t window_from_us, int64_t publish_us) {
  for (const ComboRun::RedisOutage& o : run.redis_outages) {
    if (o.eviction()) continue;  // nothing restored: see eviction_in
    if (window_from_us <= o.down_us && publish_us >= o.up_us) {
      return "Redis down " + t(o.down_us) + ".." + t(o.up_us);
    }
  }
  return std::nullopt;
}

Verdict check_published_visible(const ComboRun& run) {
  Judge j("published-visible", {"COMBO-13"},
          "every published window id is eventually displayed by a front end or returned by a poll, unless "
          "newer windows filled the page first");
  const auto seen = sightings(run);
  const PagePositions positions = page_positions(run);
  std::set<int64_t> activities_with_clients;
  size_t full = 0;
  for (const PollObs& p : run.polls) {
    activities_with_clients.insert(p.event.activity_id);
    full = std::max(full, p.event.records.size());
  }
  for (const UiObs& u : run.ui) activities_with_clients.insert(u.event.activity_id);
  const std::set<int64_t> reused = reused_pids(run);
  const std::vector<Purchase> purchases = purchases_of(run);
  std::map<int64_t, const PublishObs*> first;  // id -> its first PUBLISH
  for (const PublishObs& p : run.publishes) {
    if (p.record) first.emplace(p.record->id, &p);
  }
  for (const auto& entry : first) {
    const int64_t id = entry.first;
    const PublishObs* p = entry.second;
    const ContributionRecord& r = *p->record;
    const int64_t activity = activity_of_channel(p->channel).value_or(r.activity_id);
    if (!activities_with_clients.count(activity)) {
      j.v.exempt("record published to an activity no front end watches");
      continue;
    }
    if (reused.count(id)) {
      j.v.exempt("record whose id the DB handed out twice after a power loss");
      continue;
    }
    auto it = seen.find(id);
    const bool visible = it != seen.end() && std::any_of(it->second.begin(), it->second.end(),
                                                         [&](int64_t at) { return at >= p->time_us; });
    if (visible) {
      ++j.v.checks;
      continue;
    }
    if (superseded(run, positions, activity, id, p->time_us, full)) {
      j.v.exempt("record pushed off the page by newer windows before a poll saw it");
      continue;
    }
    if (auto loss = lost_member(run, key_of(r), r.created_at)) {
      j.v.exempt("record whose rows may have been lost to a " + *loss);
      continue;
    }
    // Published after a Redis restart from state it restored, for a window older than the crash
    // (seed 3703 of explore-hardened-snapshot: the snapshot held the window's hash as it was
    // before most members joined; the first publish had shown and bound the whole window, the
    // second names a later member): its id may name a part of a window the DB shows whole.
    const int64_t window_from_us =
        earliest_lo(purchases, key_of(r), id).value_or(p->time_us - 2 * run.window_ms * 1000);
    std::optional<std::string> restart = restored_before(run, window_from_us, p->time_us);
    // ... or from what an eviction left or re-made of its state (as in views_of).
    if (!restart) restart = eviction_in(run, key_of(r), window_from_us - run.window_ms * 1000, p->time_us);
    if (restart) {
      j.v.exempt("record published from state a Redis restart restored (" + *restart + ")");
      continue;
    }
    // Such a storage voids what the poll can show; the push still counts.
    if (auto loss = write_undone(run, window_from_us, run.end_us)) {
      j.v.exempt("record whose rows' later writes a DB " + *loss + " may have undone");
      continue;
    }
    j.expect(false, [&] {
      return "record " + rec(r) + " published on " + p->channel + " at " + t(p->time_us) +
             " never displayed nor polled afterwards";
    });
  }
  return j.v;
}

std::vector<Verdict> check_combo(const ComboRun& run, const std::vector<std::string>& properties) {
  FL_ASSERT(run.memo == nullptr);  // one check_combo at a time per run
  run.memo = std::make_shared<ComboMemo>();
  std::vector<Verdict> out;
  for (const ComboProperty& p : combo_properties()) {
    if (std::find(properties.begin(), properties.end(), p.info.name) == properties.end()) continue;
    out.push_back(p.check(run));
  }
  run.memo.reset();
  return out;
}

const std::vector<ComboProperty>& combo_properties() {
  static const std::vector<ComboProperty> props = {
      {{"db-granularity", {"COMBO-1"}, "one activity_contributions row per purchase; ranking = Σ qty (§1.4, §7.2)"},
       check_db_granularity},
      {{"quantity-conservation", {"COMBO-2"}, "Σ pushed quantity = Σ purchased per key (§1.4 可靠性)"},
       check_quantity_conservation},
      {{"one-push-per-window", {"COMBO-3"}, "one record per window with first_id and Σ qty (§1.4 推送约束)"},
       check_one_push_per_window},
      {{"timeliness", {"COMBO-4"}, "publish at window end + Δ (§3 expire_at_ms)"}, check_timeliness},
      {{"no-early-or-split", {"COMBO-5"}, "never before the window ends, never split (§6)"}, check_no_early_or_split},
      {{"entry-window-binding", {"COMBO-6"}, "an entry publishes only its own window (§4.3)"}, check_entry_binding},
      {{"pel-drains", {"COMBO-7"}, "pending list empty once quiescent (§6 XAUTOCLAIM)"}, check_pel_drains},
      {{"no-garbage-records", {"COMBO-8"}, "no empty or re-published records (§6 empty hash)"}, check_no_garbage},
      {{"ttl-hygiene", {"COMBO-9"}, "combo keys always expire (§3 TTLs)"}, check_ttl_hygiene},
      {{"stream-bounded", {"COMBO-9"}, "XADD MAXLEN ~ keeps the stream bounded (§9.1)"}, check_stream_bounded},
      {{"degradation", {"COMBO-10"}, "Redis failure degrades to an immediate push (§6)"}, check_degradation},
      {{"polling-merge", {"COMBO-11"}, "GetLatestContributions merges by window (§4.6)"}, check_polling_merge},
      {{"merge-algebra", {"COMBO-12"}, "mergeComboRecords laws (§5.2)"}, check_merge_algebra},
      {{"ui-convergence", {"COMBO-13"}, "one UI item per burst with Σ qty (§1.4 用户感知, §9.3)"},
       check_ui_convergence},
      {{"no-wrongful-drop", {"COMBO-14"}, "the id > highestId filter never loses a record (§5.4)"},
       check_no_wrongful_drop},
      {{"activity-isolation", {"COMBO-15"}, "records aggregate one activity only (§6 跨 activity)"},
       check_activity_isolation},
      {{"bounded-list", {"COMBO-16"}, "at most MAX_RECORDS, oldest dropped (§1.3 slice(-5))"}, check_bounded_list},
      {{"published-visible",
        {"COMBO-13"},
        "every published record is eventually displayed or polled (§1.4 用户感知, §4.6)"},
       check_published_visible},
  };
  return props;
}

}  // namespace fl::combo
