#include "properties/combo/combo_behaviours.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace fl::combo {

namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kClaimIdleUs = 5000 * kUs;   // the claim idle time the behaviour is measured against
constexpr int64_t kBoundarySlackUs = 5 * kUs;  // "a window apart": within 5 ms of the window length

using Names = std::set<std::string>;

std::vector<std::string> replicas_of(const ComboRun& run) {
  std::vector<std::string> out;
  for (const std::string& p : run.service_places) {
    if (p != "redis" && p != "db") out.push_back(p);
  }
  return out;
}

void client_answers(const ComboRun& run, Names& out) {
  for (const PurchaseOp& op : run.ops) {
    if (op.alerted) out.insert("purchase answered alerted");
    if (op.result == PurchaseOp::Result::kInfo) out.insert("purchase answered indeterminate");
  }
}

void store_losses(const ComboRun& run, Names& out) {
  if (!reused_pids(run).empty()) out.insert("pid reused after a DB power loss");
  for (const ComboRun::RedisOutage& o : run.redis_outages) {
    if (o.eviction()) {
      if (!o.scope.empty()) out.insert("key evicted from a window");
      continue;
    }
    const int64_t from_us = loss_from_us(run, o);
    for (const UnackedSample& s : run.unacked) {
      if (s.time_us >= from_us && s.time_us <= o.down_us && !s.entries.empty()) {
        out.insert("Redis restart with a window pending");
        break;
      }
    }
  }
}

// From the keyspace samples (every 100 ms): how long each entry stayed unacked, and whether a
// worker was down or paused while some entry was.
void stream_backlog(const ComboRun& run, Names& out) {
  std::map<std::string, std::pair<int64_t, int64_t>> seen;  // entry id -> first, last sample
  const std::vector<std::string> workers = replicas_of(run);
  int64_t prev_us = -1;
  for (const UnackedSample& s : run.unacked) {
    for (const EntryObs& e : s.entries) {
      auto [it, fresh] = seen.try_emplace(e.id, s.time_us, s.time_us);
      if (!fresh) it->second.second = s.time_us;
    }
    if (!s.entries.empty() && prev_us >= 0 && !workers.empty() &&
        run.faults.covered_us(workers, prev_us, s.time_us) > 0) {
      out.insert("window pending while a worker was down or paused");
    }
    prev_us = s.time_us;
  }
  for (const auto& [id, span] : seen) {
    if (span.second - span.first > kClaimIdleUs) {
      out.insert("stream entry unacked longer than the claim idle");
      break;
    }
  }
}

void pushes(const ComboRun& run, Names& out) {
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, int> by_record;  // (activity, user, item, id)
  for (const PublishObs& p : run.publishes) {
    if (!p.record) continue;
    const ContributionRecord& r = *p.record;
    if (++by_record[{r.activity_id, r.user_id, r.item_id, r.id}] == 2) out.insert("window published twice");
  }
  const std::vector<std::pair<int64_t, int64_t>> db_down = run.faults.downtimes("db");
  const int64_t w_us = run.window_ms * kUs;
  for (const EntryObs& e : run.entries) {
    const int64_t close_us = e.time_us + w_us;
    for (const auto& [down_us, up_us] : db_down) {
      if (down_us <= close_us + w_us && up_us >= close_us) out.insert("DB down when a window closed");
    }
    if (window_clock(run, e.time_us, close_us).error_us > 0) out.insert("window timed by a moved clock");
  }
}

// Rows Redis counted at a known instant (RowObs::redis_us), by key.
void click_timing(const ComboRun& run, Names& out) {
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<int64_t>> by_key;
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, int64_t>>> by_user_item;  // -> (at, activity)
  for (const RowObs& r : run.rows) {
    if (r.redis_us < 0) continue;
    by_key[{r.row.activity_id, r.row.user_id, r.row.item_id}].push_back(r.redis_us);
    by_user_item[{r.row.user_id, r.row.item_id}].emplace_back(r.redis_us, r.row.activity_id);
  }
  const int64_t w_us = run.window_ms * kUs;
  for (auto& [key, times] : by_key) {
    std::sort(times.begin(), times.end());
    for (size_t i = 0; i < times.size(); ++i) {
      for (size_t j = i + 1; j < times.size() && times[j] - times[i] <= w_us + kBoundarySlackUs; ++j) {
        if (times[j] - times[i] >= w_us - kBoundarySlackUs) out.insert("clicks of one key a window apart");
      }
    }
  }
  for (auto& [ui, clicks] : by_user_item) {
    std::sort(clicks.begin(), clicks.end());
    for (size_t i = 0; i + 1 < clicks.size(); ++i) {
      if (clicks[i + 1].second != clicks[i].second && clicks[i + 1].first - clicks[i].first < w_us) {
        out.insert("one user and item in two activities at once");
      }
    }
  }
}

void pages(const ComboRun& run, Names& out) {
  for (const UiObs& u : run.ui) {
    if (u.event.cause != "" && u.event.before.size() >= kMaxRecords) out.insert("page list full when a window arrived");
    for (const MergeCall& m : u.event.merges) {
      std::map<int64_t, int64_t> qty_by_id;
      for (const ContributionRecord& r : m.input) {
        auto [it, fresh] = qty_by_id.try_emplace(r.id, r.quantity);
        if (!fresh && it->second != r.quantity) out.insert("page merged two copies of one window");
      }
    }
  }
}

}  // namespace

std::vector<std::string> combo_behaviours(const ComboRun& run) {
  Names out;
  client_answers(run, out);
  store_losses(run, out);
  stream_backlog(run, out);
  pushes(run, out);
  click_timing(run, out);
  pages(run, out);
  return {out.begin(), out.end()};
}

}  // namespace fl::combo
