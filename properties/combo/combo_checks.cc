#include "properties/combo/combo_checks.h"

#include <algorithm>
#include <map>
#include <set>

namespace fl::combo {

namespace {

using model::combo::Assignment;
using model::combo::Certainty;
using model::combo::Group;
using model::combo::Purchase;

constexpr size_t kMaxEvidence = 12;
constexpr int64_t kStreamNodeEntries = 100;  // Redis's stream-node-max-entries: MAXLEN ~ slack

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

std::string t(int64_t us) { return std::to_string(us / 1000) + "ms"; }
std::string rec(const ContributionRecord& r) { return r.describe(); }

std::map<int64_t, const Purchase*> purchase_by_pid(const std::vector<Purchase>& ps) {
  std::map<int64_t, const Purchase*> m;
  for (const Purchase& p : ps) m[p.pid] = &p;
  return m;
}

int64_t min_lo(const Group& g, const std::map<int64_t, const Purchase*>& by_pid) {
  int64_t best = INT64_MAX;
  for (int64_t pid : g.pids) best = std::min(best, by_pid.at(pid)->lo_us);
  return best;
}
int64_t min_hi(const Group& g, const std::map<int64_t, const Purchase*>& by_pid) {
  int64_t best = INT64_MAX;
  for (int64_t pid : g.pids) best = std::min(best, by_pid.at(pid)->hi_us);
  return best;
}

// Groups that got at least one definite record (by group index).
std::map<size_t, std::vector<const PublishObs*>> records_by_group(const ComboRun& run, const Assignment& a) {
  std::map<size_t, std::vector<const PublishObs*>> m;
  for (const PublishObs* p : definite_publishes(run)) {
    auto it = a.group_of_pid.find(p->record->id);
    if (it != a.group_of_pid.end()) m[it->second].push_back(p);
  }
  return m;
}

// Σ qty of rows of `key` the server never bound to a window and whose purchase is uncertain,
// near `around_us`: the server may have counted them in any window of the key then.
int64_t unbound_slack(const std::vector<Purchase>& ps, const model::combo::Key& key, int64_t around_us) {
  int64_t slack = 0;
  for (const Purchase& p : ps) {
    if (p.key == key && !p.window_id && p.certainty == Certainty::kUncertain &&
        p.lo_us < around_us + 15'000'000 && p.lo_us > around_us - 15'000'000) {
      slack += p.qty;
    }
  }
  return slack;
}

bool hardened_binding(const std::vector<Purchase>& ps) {
  for (const Purchase& p : ps) if (p.window_id) return true;
  return false;
}

}  // namespace

Verdict check_db_granularity(const ComboRun& run) {
  Judge j("db-granularity", {"COMBO-1"},
          "each successful purchase line wrote exactly one row, failed ones none, no row without a call; ranking = Σ qty");
  if (!run.rows_known) {
    j.expect(false, [] { return std::string("final activity_contributions state unknown (DB dump failed)"); });
    return j.v;
  }
  std::map<std::string, int64_t> rows_per_ref;
  for (const RowObs& r : run.rows) rows_per_ref[r.client_ref.substr(0, r.client_ref.find('#'))]++;
  std::set<std::string> refs;
  for (const PurchaseOp& op : run.ops) {
    refs.insert(op.ref);
    const int64_t n = rows_per_ref.count(op.ref) ? rows_per_ref[op.ref] : 0;
    if (op.result == PurchaseOp::Result::kOk) {
      j.expect(n == op.lines, [&] { return "ok purchase " + op.ref + " has " + std::to_string(n) + " rows, expected " + std::to_string(op.lines); });
    } else if (op.result == PurchaseOp::Result::kFail) {
      j.expect(n == 0, [&] { return "failed purchase " + op.ref + " left " + std::to_string(n) + " rows"; });
    } else {
      j.expect(n <= op.lines, [&] { return "indeterminate purchase " + op.ref + " has " + std::to_string(n) + " rows"; });
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
    j.expect(got == truth, [&] { return "ranking of activity " + std::to_string(r.activity) + " at " + t(r.time_us) + " differs from Σ qty of rows"; });
  }
  return j.v;
}

Verdict check_quantity_conservation(const ComboRun& run) {
  Judge j("quantity-conservation", {"COMBO-2"},
          "per key, Σ published quantity = Σ purchased quantity (no loss, no double count)");
  std::map<model::combo::Key, int64_t> bought_ok, bought_all, pub_definite, pub_maybe;
  std::set<model::combo::Key> exempt;
  for (const Purchase& p : purchases_of(run)) {
    const int64_t to = p.hi_us == INT64_MAX ? run.end_us : p.hi_us + (run.window_ms + 2000) * 1000;
    if (touched_by_redis_loss(run, p.lo_us, to)) exempt.insert(p.key);
    bought_all[p.key] += p.qty;
    if (p.certainty == Certainty::kOk) bought_ok[p.key] += p.qty;
  }
  // A record published again after a Redis restart that may have lost the first publish's own
  // effects (DEL, marker, ack: AOF everysec loses up to aof_loss_ms) is not a double count the
  // invariant forbids (COMBO-2 holds for restarts "that do not lose Redis data"); count each
  // record id once when its earlier publish was exposed to such a loss. Every other repeat counts.
  std::map<int64_t, bool> exposed_publish;  // record id -> an earlier publish of it was exposed
  for (const PublishObs& p : run.publishes) {
    if (!p.record) continue;
    auto seen = exposed_publish.find(p.record->id);
    const bool exposed = touched_by_redis_loss(run, p.begin_us, p.end_us);
    if (seen != exposed_publish.end() && seen->second) {
      seen->second = exposed;
      continue;
    }
    exposed_publish[p.record->id] = exposed;
    (p.definite ? pub_definite : pub_maybe)[key_of(*p.record)] += p.record->quantity;
  }
  std::set<model::combo::Key> keys;
  for (auto* m : {&bought_all, &pub_definite, &pub_maybe}) for (auto& [k, v] : *m) keys.insert(k);
  for (const auto& k : keys) {
    if (exempt.count(k)) continue;
    j.expect(pub_definite[k] <= bought_all[k], [&] {
      return k.describe() + ": published " + std::to_string(pub_definite[k]) + " > purchased " + std::to_string(bought_all[k]) + " (double count)";
    });
    {
      j.expect(pub_definite[k] + pub_maybe[k] >= bought_ok[k], [&] {
        return k.describe() + ": published " + std::to_string(pub_definite[k]) + (pub_maybe[k] ? "(+" + std::to_string(pub_maybe[k]) + " maybe)" : "") +
               " < purchased " + std::to_string(bought_ok[k]) + " (lost)";
      });
    }
  }
  return j.v;
}

Verdict check_one_push_per_window(const ComboRun& run) {
  Judge j("one-push-per-window", {"COMBO-3"},
          "each window yields one record: id = min pid, created_at of the first, quantity = combo_count = Σ qty");
  const Assignment a = assignment_of(run);
  const auto ps = purchases_of(run);
  const bool binding = hardened_binding(ps);
  for (const auto& entry : records_by_group(run, a)) {
    const Group& g = a.groups[entry.first];
    const int64_t slack = binding ? unbound_slack(ps, g.key, g.first_lo_us) : 0;
    const auto& pubs = entry.second;
    if (!touched_by_redis_loss(run, g.first_lo_us, pubs.back()->end_us)) j.expect(pubs.size() == 1, [&] { return "window " + g.label + " " + g.key.describe() + " published " + std::to_string(pubs.size()) + " times"; });
    const bool lossy = touched_by_redis_loss(run, g.first_lo_us, pubs.back()->end_us);
    for (const PublishObs* p : pubs) {
      const ContributionRecord& r = *p->record;
      if (lossy) continue;  // Redis may have forgotten part of this window (see ComboRun)
      j.expect(key_of(r) == g.key, [&] { return "record " + rec(r) + " names a row of " + g.key.describe(); });
      j.expect(r.id == g.min_pid, [&] { return "record " + rec(r) + " id != min pid " + std::to_string(g.min_pid); });
      j.expect(r.quantity == r.combo_count, [&] { return "record " + rec(r) + " quantity != combo_count"; });
      j.expect(r.quantity >= g.qty_ok && r.quantity <= g.qty_all + slack, [&] {
        return "record " + rec(r) + " quantity not Σ of its window {" + std::to_string(g.pids.size()) + " rows, Σ=" + std::to_string(g.qty_all) + "}";
      });
      j.expect(r.created_at == g.first_created_at_ms, [&] { return "record " + rec(r) + " created_at != first row's " + std::to_string(g.first_created_at_ms); });
    }
  }
  return j.v;
}

Verdict check_timeliness(const ComboRun& run) {
  Judge j("timeliness", {"COMBO-4"},
          "without faults a window is published by t_first + window + Δ; after one process crash by t_first + window + Δ_recover; "
          "under other faults by the end of the quiet tail");
  const Assignment a = assignment_of(run);
  const auto by_pid_v = purchases_of(run);
  const auto by_pid = purchase_by_pid(by_pid_v);
  const auto pubs = records_by_group(run, a);
  for (size_t gi = 0; gi < a.groups.size(); ++gi) {
    const Group& g = a.groups[gi];
    if (g.qty_ok == 0) continue;  // nothing certain in it
    auto it = pubs.find(gi);
    if (it == pubs.end()) {
      if (!touched_by_redis_loss(run, g.first_lo_us, run.end_us)) j.expect(false, [&] { return "window " + g.label + " " + g.key.describe() + " never published"; });
      continue;
    }
    // COMBO-4: Δ without faults; Δ_recover when the only fault was one crashed (and restarted)
    // process; under any other fault only "eventually" (the liveness clause above).
    if (run.faults_injected && !run.single_crash) continue;
    const int64_t slack_ms = run.single_crash ? run.recover_slack_ms : run.timely_slack_ms;
    const int64_t deadline_us = min_hi(g, by_pid) + (run.window_ms + slack_ms) * 1000;
    for (const PublishObs* p : it->second) {
      j.expect(p->begin_us <= deadline_us, [&] { return "record " + rec(*p->record) + " published at " + t(p->begin_us) + " > deadline " + t(deadline_us); });
    }
  }
  return j.v;
}

Verdict check_no_early_or_split(const ComboRun& run) {
  Judge j("no-early-or-split", {"COMBO-5"},
          "no record before its window ends; purchases certainly inside one window are never split");
  const Assignment a = assignment_of(run);
  const auto ps = purchases_of(run);
  const auto by_pid = purchase_by_pid(ps);
  for (const auto& [gi, pubs] : records_by_group(run, a)) {
    const Group& g = a.groups[gi];
    const int64_t window_end_lo_us = min_lo(g, by_pid) + run.window_ms * 1000;
    for (const PublishObs* p : pubs) {
      j.expect(p->end_us >= window_end_lo_us, [&] {
        return "record " + rec(*p->record) + " published by " + t(p->end_us) + ", before its window could end (" + t(window_end_lo_us) + ")";
      });
    }
  }
  const auto published = records_by_group(run, a);
  for (size_t i = 0; i + 1 < a.groups.size(); ++i) {
    const Group& g1 = a.groups[i];
    const Group& g2 = a.groups[i + 1];
    if (!(g1.key == g2.key)) continue;
    if (!published.count(i) || !published.count(i + 1)) continue;  // a split needs two records
    // Each window opened at a time T in [min lo, min hi] of its purchases. A split is certain
    // only when every feasible pair of opening times is closer than one window.
    const int64_t g2_first_us = min_hi(g2, by_pid);
    const int64_t g1_start_us = min_lo(g1, by_pid);
    const bool certainly_close = g2_first_us < g1_start_us + run.window_ms * 1000 &&
                                 min_hi(g1, by_pid) < min_lo(g2, by_pid) + run.window_ms * 1000;
    const bool lossy = touched_by_redis_loss(run, g1_start_us, g2_first_us == INT64_MAX ? run.end_us : g2_first_us);
    if (lossy) continue;  // a lock lost with Redis's data reopens a window legitimately
    j.expect(!certainly_close, [&] {
      return g1.key.describe() + ": window " + g2.label + " started at " + t(g2_first_us) + ", inside window " + g1.label + " opened at " + t(g1_start_us) + " (split)";
    });
  }
  return j.v;
}

Verdict check_entry_binding(const ComboRun& run) {
  Judge j("entry-window-binding", {"COMBO-6"},
          "at every sampled instant a live window has at most one unacknowledged entry; processing an entry "
          "publishes only the state of the window it was created for");
  // "At any instant, each key has at most one unacknowledged stream entry for its current window":
  // sampled every 100 ms from the Redis node's memory (harness adapter).
  j.v.checks += run.unacked_samples_taken;
  for (const UnackedObs& o : run.unacked_shared) {
    j.expect(false, [&] {
      std::string ids;
      for (const std::string& id : o.entry_ids) ids += (ids.empty() ? "" : ", ") + id;
      return "at " + t(o.time_us) + " " + std::to_string(o.entry_ids.size()) + " unacknowledged entries (" + ids +
             ") for the live window " + o.window_state;
    });
  }
  const auto ps = purchases_of(run);
  const auto by_pid = purchase_by_pid(ps);
  for (const PublishObs* p : definite_publishes(run)) {
    const PublishEvent& e = p->event;
    if (e.entry_id.empty()) continue;  // fallback publish, no entry
    const ContributionRecord& r = *p->record;
    j.expect(r.activity_id == e.entry_activity_id && r.user_id == e.entry_user_id && r.item_type == e.entry_item_type, [&] {
      return "entry " + e.entry_id + " (a=" + std::to_string(e.entry_activity_id) + ",u=" + std::to_string(e.entry_user_id) + "," + e.entry_item_type + ") published " + rec(r);
    });
    if (e.entry_window_id > 0) {
      auto it = by_pid.find(r.id);
      const bool bound = it != by_pid.end() && (!it->second->window_id || *it->second->window_id == e.entry_window_id);
      j.expect(bound, [&] { return "entry " + e.entry_id + " of window " + std::to_string(e.entry_window_id) + " published " + rec(r); });
    } else {
      j.expect(r.id == e.entry_first_id, [&] {
        return "entry " + e.entry_id + " created for first_id " + std::to_string(e.entry_first_id) + " published another window's state " + rec(r);
      });
    }
  }
  return j.v;
}

Verdict check_pel_drains(const ComboRun& run) {
  Judge j("pel-drains", {"COMBO-7"}, "once quiescent, XPENDING combo:stream:contributions combo-publishers = 0");
  if (!run.redis_known) return j.v;
  j.expect(run.final_pending <= 0, [&] { return "XPENDING = " + std::to_string(run.final_pending) + " at the end of the quiet tail"; });
  return j.v;
}

Verdict check_no_garbage(const ComboRun& run) {
  Judge j("no-garbage-records", {"COMBO-8"},
          "records have quantity >= 1, nickname/item_name/item_icon, an id that is a purchase's pid; no pid re-published");
  const auto ps = purchases_of(run);
  const auto by_pid = purchase_by_pid(ps);
  std::map<int64_t, int> seen;
  for (const PublishObs* p : definite_publishes(run)) {
    const ContributionRecord& r = *p->record;
    j.expect(r.quantity >= 1, [&] { return "record " + rec(r) + " has quantity < 1"; });
    j.expect(!r.nickname.empty() && !r.item_name.empty() && !r.item_icon.empty(), [&] { return "record " + rec(r) + " lacks nickname/item_name/item_icon"; });
    if (run.rows_known) j.expect(by_pid.count(r.id) == 1, [&] { return "record " + rec(r) + " id is no purchase's pid"; });
    if (++seen[r.id] > 1 && touched_by_redis_loss(run, p->begin_us - 30'000'000, p->end_us)) continue;
    j.expect(seen[r.id] == 1, [&] { return "pid " + std::to_string(r.id) + " published again: " + rec(r); });
  }
  return j.v;
}

Verdict check_ttl_hygiene(const ComboRun& run) {
  Judge j("ttl-hygiene", {"COMBO-9"}, "combo:agg* keys never lack a TTL; at the end only the stream remains of combo:*");
  for (const RedisKeyObs& k : run.no_ttl_samples) {
    j.expect(false, [&] { return k.key + " had TTL -1 at " + t(k.time_us); });
  }
  for (const RedisKeyObs& k : run.final_keys) {
    if (k.key.rfind("combo:", 0) != 0 || k.key == "combo:stream:contributions") continue;
    j.expect(false, [&] { return k.key + " remains at the end (TTL " + std::to_string(k.ttl_ms) + " ms)"; });
  }
  return j.v;
}

Verdict check_stream_bounded(const ComboRun& run) {
  Judge j("stream-bounded", {"COMBO-9"}, "the combo stream, the one combo:* key allowed to stay, never exceeds MAXLEN ~ (+1 node)");
  // §9.1 "XAdd MAXLEN 不会无限增长": acking never removes entries, so only MAXLEN ~ bounds the stream.
  // It trims whole nodes of 100 entries, so the stream never holds more than MAXLEN + 100.
  if (run.stream_maxlen <= 0) return j.v;
  j.expect(run.stream_len_max <= run.stream_maxlen + kStreamNodeEntries, [&] {
    return "the stream grew to " + std::to_string(run.stream_len_max) + " entries (MAXLEN ~ " + std::to_string(run.stream_maxlen) + ")";
  });
  return j.v;
}

Verdict check_degradation(const ComboRun& run) {
  Judge j("degradation", {"COMBO-10"},
          "a purchase whose Redis step failed is still pushed, or fails explicitly (alert); never silently dropped");
  const Assignment a = assignment_of(run);
  const auto pubs = records_by_group(run, a);
  std::map<std::string, const PurchaseOp*> op_by_ref;
  for (const PurchaseOp& op : run.ops) op_by_ref[op.ref] = &op;
  std::map<int64_t, const RowObs*> row_by_pid;
  for (const RowObs& r : run.rows) row_by_pid[r.row.id] = &r;
  std::set<int64_t> done;
  for (const auto& entry : run.degraded) {
    const int64_t pid = entry.first;
    const std::string& what = entry.second;
    if (!done.insert(pid).second) continue;
    auto rit = row_by_pid.find(pid);
    if (rit == row_by_pid.end()) continue;
    auto oit = op_by_ref.find(rit->second->client_ref.substr(0, rit->second->client_ref.find('#')));
    if (oit == op_by_ref.end() || oit->second->result != PurchaseOp::Result::kOk || oit->second->alerted) continue;
    auto git = a.group_of_pid.find(pid);
    const bool pushed = git != a.group_of_pid.end() && pubs.count(git->second) > 0;
    j.expect(pushed, [&] { return "pid " + std::to_string(pid) + " answered ok, Redis failed (" + what + "), never pushed, no alert"; });
  }
  return j.v;
}

Verdict check_polling_merge(const ComboRun& run) {
  Judge j("polling-merge", {"COMBO-11"},
          "GetLatestContributions: one record per window, id = min pid, Σ qty of exactly that window, newest first, no nil, no duplicate");
  const Assignment a = assignment_of(run);
  const auto ps = purchases_of(run);
  const auto by_pid = purchase_by_pid(ps);
  for (const PollObs& poll : run.polls) {
    std::set<int64_t> ids;
    int64_t prev = INT64_MAX;
    for (size_t i = 0; i < poll.event.records.size(); ++i) {
      const auto& r = poll.event.records[i];
      j.expect(r.has_value(), [&] { return "poll by " + poll.event.client + " at " + t(poll.end_us) + ": nil entry at index " + std::to_string(i); });
      if (!r) continue;
      j.expect(ids.insert(r->id).second, [&] { return "poll at " + t(poll.end_us) + ": id " + std::to_string(r->id) + " twice"; });
      j.expect(r->id < prev, [&] { return "poll at " + t(poll.end_us) + ": not newest first at " + rec(*r); });
      prev = r->id;
      if (!run.rows_known) continue;
      const Group* g = a.group_of(r->id);
      j.expect(g != nullptr, [&] { return "poll record " + rec(*r) + " id is no pid"; });
      if (g == nullptr) continue;
      j.expect(r->quantity <= g->qty_all, [&] {
        return "poll record " + rec(*r) + " sums more than its window " + g->label + " (Σ=" + std::to_string(g->qty_all) + "): rows of different windows merged";
      });
      bool earlier_visible = false;
      for (int64_t pid : g->pids) {
        const Purchase* q = by_pid.at(pid);
        if (pid < r->id && q->hi_us < poll.begin_us && (q->window_id || q->certainty == Certainty::kOk)) earlier_visible = true;
      }
      j.expect(!earlier_visible, [&] { return "poll record " + rec(*r) + " id is not its window's first pid " + std::to_string(g->min_pid); });
    }
  }
  return j.v;
}

std::vector<std::string> merge_law_violations(const MergeFn& merge, const std::vector<ContributionRecord>& input) {
  std::vector<std::string> bad;
  JsArray x = to_js(input);
  JsArray y;
  try {
    y = merge(x);
  } catch (const std::exception& e) {
    return {std::string("(a) threw: ") + e.what()};
  }
  if (snapshot(x) != input) bad.push_back("(b) mutated its input");
  std::map<int64_t, std::pair<int64_t, int64_t>> key_of_id;  // id -> (user,item) of the input copy
  std::map<std::pair<int64_t, int64_t>, std::map<int64_t, int64_t>> max_qty;  // key -> id -> max qty
  std::map<int64_t, std::set<int64_t>> qty_copies;
  for (const ContributionRecord& r : input) {
    key_of_id[r.id] = {r.user_id, r.item_id};
    auto& m = max_qty[{r.user_id, r.item_id}][r.id];
    m = std::max(m, r.quantity);
    qty_copies[r.id].insert(r.quantity);
  }
  std::map<std::pair<int64_t, int64_t>, int64_t> out_sum;
  std::set<int64_t> out_ids;
  std::vector<int64_t> order;
  for (const JsRecordPtr& r : y) {
    if (!r) { bad.push_back("(c) produced a null"); continue; }
    auto it = key_of_id.find(r->id);
    if (it == key_of_id.end() || it->second != std::make_pair(r->user_id, r->item_id)) {
      bad.push_back("(c) merged across keys: output id " + std::to_string(r->id) + " (u" + std::to_string(r->user_id) + ",i" + std::to_string(r->item_id) + ")");
    }
    out_sum[{r->user_id, r->item_id}] += r->quantity;
    if (!out_ids.insert(r->id).second) bad.push_back("(e) id " + std::to_string(r->id) + " kept twice");
    order.push_back(r->id);
  }
  for (const auto& [key, ids] : max_qty) {
    int64_t expect = 0;
    for (const auto& [id, q] : ids) expect += q;
    if (out_sum[key] != expect) {
      bad.push_back("(d)/(e) Σ quantity of (u" + std::to_string(key.first) + ",i" + std::to_string(key.second) + ") over distinct ids " +
                    std::to_string(expect) + " became " + std::to_string(out_sum[key]));
    }
  }
  // (f) idempotence.
  try {
    JsArray z = merge(to_js(snapshot(y)));
    if (snapshot(z) != snapshot(y)) bad.push_back("(f) m(m(x)) != m(x)");
  } catch (const std::exception& e) {
    bad.push_back(std::string("(f)/(a) second application threw: ") + e.what());
  }
  // (g) surviving ids keep their relative input order (first occurrences).
  std::map<int64_t, size_t> first_pos;
  for (size_t i = 0; i < input.size(); ++i) first_pos.emplace(input[i].id, i);
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    if (first_pos.count(order[i]) && first_pos.count(order[i + 1]) && first_pos[order[i]] > first_pos[order[i + 1]]) {
      bad.push_back("(g) order changed");
      break;
    }
  }
  return bad;
}

Verdict check_merge_algebra(const ComboRun& run) {
  Judge j("merge-algebra", {"COMBO-12"}, "mergeComboRecords obeys laws (a)-(g) on every input the run gave it");
  const MergeFn merge = [&run](const JsArray& x) { return merge_combo_records(run.variant, x); };
  for (const UiObs& u : run.ui) {
    for (const std::vector<ContributionRecord>& input : u.event.merge_inputs) {
      for (const std::string& law : merge_law_violations(merge, input)) {
        j.expect(false, [&] { return u.event.client + " " + u.event.cause + " at " + t(u.time_us) + ": " + law; });
      }
      ++j.v.checks;
    }
  }
  return j.v;
}

Verdict check_ui_convergence(const ComboRun& run) {
  Judge j("ui-convergence", {"COMBO-13"},
          "after all pushes and polls, each displayed item is one whole window: id = first_id, quantity = Σ qty");
  if (!run.rows_known) return j.v;
  const Assignment a = assignment_of(run);
  const auto pubs = records_by_group(run, a);
  std::map<std::string, const UiObs*> last;
  for (const UiObs& u : run.ui) last[u.event.client] = &u;
  for (const auto& entry : last) {
    const std::string& client = entry.first;
    const UiObs* u = entry.second;
    std::set<size_t> groups_seen;
    for (const ContributionRecord& r : u->event.after) {
      auto it = a.group_of_pid.find(r.id);
      j.expect(it != a.group_of_pid.end(), [&] { return client + " shows " + rec(r) + ": id is no pid"; });
      if (it == a.group_of_pid.end()) continue;
      const Group& g = a.groups[it->second];
      j.expect(groups_seen.insert(it->second).second, [&] { return client + " shows window " + g.label + " twice"; });
      // The UI can only be as whole as the window's record: where Redis may have lost part of the
      // window (COMBO-2/3 exempt it, see ComboRun::redis_outages) its content is not judged.
      auto pit = pubs.find(it->second);
      const int64_t last_pub_us = pit == pubs.end() ? run.end_us : pit->second.back()->end_us;
      if (touched_by_redis_loss(run, g.first_lo_us, last_pub_us)) continue;
      j.expect(r.id == g.min_pid && r.quantity >= g.qty_ok && r.quantity <= g.qty_all, [&] {
        return client + " finally shows " + rec(r) + " for window " + g.label + " (first " + std::to_string(g.min_pid) + ", Σ=" + std::to_string(g.qty_all) + ")";
      });
    }
  }
  return j.v;
}

Verdict check_no_wrongful_drop(const ComboRun& run) {
  Judge j("no-wrongful-drop", {"COMBO-14"},
          "a WS record is discarded only if the same id with the same or larger quantity is displayed");
  for (const UiObs& u : run.ui) {
    if (u.event.cause != "ws" || !u.event.incoming) continue;
    const ContributionRecord& r = *u.event.incoming;
    if (r.activity_id != u.event.activity_id) continue;
    auto shows = [&](const std::vector<ContributionRecord>& list) {
      for (const ContributionRecord& x : list) if (x.id == r.id && x.quantity >= r.quantity) return true;
      return false;
    };
    if (shows(u.event.after) || shows(u.event.before)) continue;
    bool truncated = u.event.after.size() >= kMaxRecords;
    for (const ContributionRecord& x : u.event.after) truncated = truncated && x.id > r.id;
    j.expect(truncated, [&] { return u.event.client + " at " + t(u.time_us) + " dropped WS " + rec(r) + (u.event.error.empty() ? "" : " (" + u.event.error + ")"); });
  }
  return j.v;
}

Verdict check_activity_isolation(const ComboRun& run) {
  Judge j("activity-isolation", {"COMBO-15"}, "a record on act:{A}:contributions aggregates only purchases of activity A");
  const Assignment a = assignment_of(run);
  const auto ps = purchases_of(run);
  for (const PublishObs* p : definite_publishes(run)) {
    const ContributionRecord& r = *p->record;
    const std::optional<int64_t> channel_activity = activity_of_channel(p->event.channel);
    j.expect(channel_activity && *channel_activity == r.activity_id, [&] { return "record " + rec(r) + " on " + p->event.channel; });
    const Group* g = a.group_of(r.id);
    if (g == nullptr) continue;
    if (touched_by_redis_loss(run, g->first_lo_us, p->end_us)) continue;  // see ComboRun::redis_outages
    const int64_t slack = hardened_binding(ps) ? unbound_slack(ps, g->key, g->first_lo_us) : 0;
    j.expect(g->key.activity == r.activity_id && r.quantity <= g->qty_all + slack, [&] {
      return "record " + rec(r) + " on " + p->event.channel + " counts " + std::to_string(r.quantity) + " but activity " + std::to_string(r.activity_id) +
             "'s window has Σ=" + std::to_string(g->qty_all);
    });
  }
  return j.v;
}

Verdict check_bounded_list(const ComboRun& run) {
  Judge j("bounded-list", {"COMBO-16"}, "records.length <= MAX_RECORDS and truncation drops the oldest");
  const Assignment a = run.rows_known ? assignment_of(run) : Assignment{};
  auto group = [&](int64_t id) -> int64_t {
    auto it = a.group_of_pid.find(id);
    return it == a.group_of_pid.end() ? -1 - id : static_cast<int64_t>(it->second);
  };
  for (const UiObs& u : run.ui) {
    j.expect(u.event.after.size() <= kMaxRecords, [&] { return u.event.client + " shows " + std::to_string(u.event.after.size()) + " items"; });
    std::vector<ContributionRecord> candidates = u.event.before;
    if (u.event.incoming && u.event.incoming->activity_id == u.event.activity_id) candidates.push_back(*u.event.incoming);
    for (const auto& r : u.event.poll_records) if (r) candidates.push_back(*r);
    std::set<int64_t> kept_groups;
    int64_t oldest_kept = INT64_MAX;
    for (const ContributionRecord& r : u.event.after) {
      kept_groups.insert(group(r.id));
      oldest_kept = std::min(oldest_kept, r.id);
    }
    if (u.event.after.size() < kMaxRecords) continue;
    for (const ContributionRecord& r : candidates) {
      if (kept_groups.count(group(r.id))) continue;
      j.expect(r.id < oldest_kept, [&] { return u.event.client + " at " + t(u.time_us) + " dropped newer " + rec(r) + " but kept older id " + std::to_string(oldest_kept); });
    }
  }
  return j.v;
}

const std::vector<ComboProperty>& combo_properties() {
  static const std::vector<ComboProperty> props = {
      {{"db-granularity", {"COMBO-1"}, "one activity_contributions row per purchase; ranking = Σ qty (§1.4, §7.2)"}, check_db_granularity},
      {{"quantity-conservation", {"COMBO-2"}, "Σ pushed quantity = Σ purchased per key (§1.4 可靠性)"}, check_quantity_conservation},
      {{"one-push-per-window", {"COMBO-3"}, "one record per window with first_id and Σ qty (§1.4 推送约束)"}, check_one_push_per_window},
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
      {{"ui-convergence", {"COMBO-13"}, "one UI item per burst with Σ qty (§1.4 用户感知, §9.3)"}, check_ui_convergence},
      {{"no-wrongful-drop", {"COMBO-14"}, "the id > highestId filter never loses a record (§5.4)"}, check_no_wrongful_drop},
      {{"activity-isolation", {"COMBO-15"}, "records aggregate one activity only (§6 跨 activity)"}, check_activity_isolation},
      {{"bounded-list", {"COMBO-16"}, "at most MAX_RECORDS, oldest dropped (§1.3 slice(-5))"}, check_bounded_list},
  };
  return props;
}

}  // namespace fl::combo
