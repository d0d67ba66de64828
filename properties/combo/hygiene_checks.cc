// The hygiene and degradation checkers (COMBO-7..10, COMBO-15): the stream, the keys, each
// published record, and degraded purchase answers.
#include "properties/combo/hygiene_checks.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "properties/combo/judge_support.h"

namespace fl::combo {

using namespace detail;  // the judges' shared helpers and model names (judge_support.h)

namespace {

constexpr int64_t kStreamNodeEntries = 100;     // Redis's stream-node-max-entries: MAXLEN ~ slack
constexpr int64_t kExplainSlackUs = 1'000'000;  // a fault up to 1 s before an operation explains it

}  // namespace

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
  std::set<Key> widened_keys;  // keys whose clock widenings this property counted
  for (const auto& kv : v.keys) {
    const Key& key = kv.first;
    const KeyView& k = kv.second;
    if (!base_fit(run, key, k).fit.found) continue;  // COMBO-3's finding
    FitOptions live;
    live.all_certain_published = true;
    KeyFit f = fit_key(run, key, k, k.records, live);
    if (!f.fit.found && !f.fit.inconclusive) f.why += ": a purchase answered ok (no alert) was never pushed";
    judge_view_fit(j, run, key, k, k.records, live, f, widened_keys);
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

}  // namespace fl::combo
