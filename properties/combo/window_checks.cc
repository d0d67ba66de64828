// The window and store checkers (COMBO-1..6): rows per purchase, quantities, and the published
// records fitted to windows (once, whole, in time, bound to their stream entry).
#include "properties/combo/window_checks.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "properties/combo/judge_support.h"
#include "sim/node_clock.h"

namespace fl::combo {

using namespace detail;  // the judges' shared helpers and model names (judge_support.h)

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
  // Totals: a pid the DB handed out twice (after a power loss) blurs which window holds which
  // purchase, not the key's sums (a purchase whose row the DB forgot still reached Redis).
  add_exemptions(j, v, /*with_clashes=*/false);
  for (const auto& kv : v.keys) {
    const Key& key = kv.first;
    const KeyView::Totals& sum = kv.second.totals;
    j.expect(sum.published_strict <= sum.bought_all, [&] {
      return key.describe() + ": published " + std::to_string(sum.published_strict) + " > purchased " +
             std::to_string(sum.bought_all) + " (double count)";
    });
    j.expect(sum.published >= sum.bought_certain, [&] {
      return key.describe() + ": published " + std::to_string(sum.published) + " < purchased " +
             std::to_string(sum.bought_certain) + " (lost)";
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
  std::set<Key> widened_keys;  // keys whose clock widenings this property counted
  add_exemptions(j, v);
  for (const auto& kv : v.keys) {
    const Key& key = kv.first;
    const KeyView& k = kv.second;
    if (k.records.empty()) continue;
    judge_view_fit(j, run, key, k, k.records, {}, base_fit(run, key, k), widened_keys);
    // A window is its first row, (id, created_at): a reissued pid opens another window.
    std::map<std::pair<int64_t, int64_t>, int64_t> times;
    for (const PublishObs* p : k.publishes) {
      const ContributionRecord& r = *p->record;
      j.expect(r.quantity == r.combo_count, [&] { return "record " + rec(r) + " quantity != combo_count"; });
      j.expect(++times[{r.id, r.created_at}] == 1, [&] {
        return "window of first pid " + std::to_string(r.id) + " published again at " + t(p->time_us) + ": " + rec(r);
      });
    }
  }
  return j.v;
}

Verdict check_timeliness(const ComboRun& run) {
  Judge j("timeliness", {"COMBO-4"},
          "without faults a window is published by t_first + window + Δ; after one process crash by t_first + window + "
          "Δ_recover; "
          "under other faults by the end of the quiet tail");
  if (!run.rows_known) return j.v;
  const std::shared_ptr<const Views> views = shared_views(run);
  const Views& v = *views;
  std::set<Key> widened_keys;  // keys whose clock widenings this property counted
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
    judge_view_fit(j, run, key, k, k.records, live, f, widened_keys);
    if (!bounded || k.records.empty()) continue;
    FitOptions o;
    o.all_certain_published = true;
    o.late_us = (run.single_crash ? run.recover_slack_ms : run.timely_slack_ms) * 1000;
    KeyFit timed = fit_key(run, key, k, k.records, o);
    if (!timed.fit.found && !timed.fit.inconclusive)
      timed.why += " published by window end + " + std::to_string(*o.late_us / 1000) + " ms";
    judge_view_fit(j, run, key, k, k.records, o, timed, widened_keys);
  }
  return j.v;
}

Verdict check_no_early_or_split(const ComboRun& run) {
  Judge j("no-early-or-split", {"COMBO-5"},
          "some assignment of the purchases to windows has every record whole and published after its window ends");
  if (!run.rows_known) return j.v;
  const std::shared_ptr<const Views> views = shared_views(run);
  const Views& v = *views;
  std::set<Key> widened_keys;  // keys whose clock widenings this property counted
  add_exemptions(j, v);
  for (const auto& kv : v.keys) {
    const Key& key = kv.first;
    const KeyView& k = kv.second;
    if (k.records.empty()) continue;
    FitOptions o;
    o.early = true;
    KeyFit f = fit_key(run, key, k, k.records, o);
    if (!f.fit.found && !f.fit.inconclusive) f.why += " with every record published after its window ends";
    judge_view_fit(j, run, key, k, k.records, o, f, widened_keys);
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

}  // namespace fl::combo
