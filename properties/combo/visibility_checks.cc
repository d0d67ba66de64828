// The visibility checkers (COMBO-11, COMBO-13): polls, displayed items, published -> seen.
#include "properties/combo/visibility_checks.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "properties/combo/judge_support.h"

namespace fl::combo {

using namespace detail;  // the judges' shared helpers and model names (judge_support.h)

namespace {

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

// Whether the purchase of a row (by its client ref "<op>#<line>") ran its Redis step before its
// answer (redis_step_certain); a row without its call never did.
bool certain_step(const ComboRun& run, const std::string& client_ref) {
  const std::string ref = client_ref.substr(0, client_ref.find('#'));
  for (const PurchaseOp& op : run.ops) {
    if (op.ref == ref) return redis_step_certain(op);
  }
  return false;
}

// Whether a lost row committed at `committed_us` (world time) lies within two windows of when the
// purchase of `key` whose row is `id` ran (the clients' interval, widened by the clock faults
// near it). Rows' created_at carry the clock of the replica that wrote them, so two rows stamped
// by clocks a jump apart compare wrongly (seeds 12929 and 16881 of explore-hardened-lying-disk: a
// replica 8.2 s ahead stamped the surviving member, the lost one was stamped 2.9 s earlier in
// world time but 11.1 s earlier by the clocks).
bool near_in_world(const ComboRun& run, const std::vector<Purchase>& purchases, const Key& key, int64_t id,
                   int64_t committed_us) {
  if (committed_us < 0) return false;
  const int64_t w2_us = 2 * run.window_ms * 1000;
  for (const Purchase& p : purchases) {
    if (p.key != key || p.pid != id) continue;
    const int64_t reach_us = w2_us + window_clock(run, p.lo_us - w2_us, p.hi_us + w2_us).error_us;
    if (committed_us >= p.lo_us - reach_us && committed_us <= p.hi_us + reach_us) return true;
  }
  return false;
}

// The DB power loss that may have taken a member of the window of `key` whose first row, `id`,
// was created at `created_at_ms` (a lost row of the key within two windows of it, in the clocks'
// time widened by the clock faults or in world time: near_in_world), so that the DB now shows the
// rest of it as a smaller window.
std::optional<std::string> lost_member(const ComboRun& run, const std::vector<Purchase>& purchases, const Key& key,
                                       int64_t id, int64_t created_at_ms) {
  // A window timed by a jumping or drifting clock near it spans that much more world time.
  // Computed at the first lost row of the key (most keys lost none): the clocks' budget is the
  // judge's most expensive read.
  std::optional<int64_t> reach;
  for (const RowObs& r : run.lost_rows) {
    if (Key{r.row.activity_id, r.row.user_id, r.row.item_id} != key) continue;
    if (!reach) {
      const int64_t near_us = created_at_ms * 1000;
      reach = 2 * run.window_ms +
              window_clock(run, near_us - 2 * run.window_ms * 1000, near_us + 2 * run.window_ms * 1000).error_us / 1000;
    }
    const int64_t reach_ms = *reach;
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
    if (!opened_it && !stepped_near && std::llabs(r.row.created_at - created_at_ms) > reach_ms &&
        !near_in_world(run, purchases, key, id, r.committed_us)) {
      continue;
    }
    if (auto loss = db_loss_of(run, r.committed_us)) return loss;
  }
  return std::nullopt;
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

}  // namespace

Verdict check_polling_merge(const ComboRun& run) {
  Judge j("polling-merge", {"COMBO-11"},
          "GetLatestContributions: one record per window, id = min pid, Σ qty of exactly that window, newest first, no "
          "nil, no duplicate");
  const std::shared_ptr<const Views> views = run.rows_known ? shared_views(run) : std::make_shared<const Views>();
  const Views& v = *views;
  std::set<Key> widened_keys;  // keys whose clock widenings this property counted
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
      if (auto loss = lost_member(run, all, key_of(*r), r->id, r->created_at)) {
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
      judge_view_fit(j, run, key, kit->second, records, {}, f, widened_keys);
    }
  }
  add_exemptions(j, v);
  return j.v;
}

Verdict check_ui_convergence(const ComboRun& run) {
  Judge j("ui-convergence", {"COMBO-13"},
          "after all pushes and polls, each displayed item is one whole window of the definition (id = first_id, "
          "quantity = Σ qty) that fits together with the published records, and no window is shown twice");
  if (!run.rows_known) return j.v;
  const std::shared_ptr<const Views> views = shared_views(run);
  const Views& v = *views;
  std::set<Key> widened_keys;  // keys whose clock widenings this property counted
  add_exemptions(j, v);
  const auto clashes = key_pid_clashes(run);
  const std::vector<Purchase> purchases = purchases_of(run);
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
      if (auto loss = lost_member(run, purchases, key_of(r), r.id, r.created_at)) {
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
      judge_view_fit(j, run, key, kit->second, records, {}, fit_key(run, key, kit->second, records, {}), widened_keys);
    }
  }
  return j.v;
}

// Completeness of what was published (issue 16): a record the worker published reaches users —
// 000:L39 "前端只看到 1 条 UI 项", L284 the polling path as the WS path's fallback — so each
// published window id is, at some time after its first PUBLISH, displayed by a front end or
// returned by a poll, unless newer windows pushed it off the page first (a full poll of only
// newer windows), the DB lost its rows, or no front end of its activity exists.
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
    if (auto loss = lost_member(run, purchases, key_of(r), id, r.created_at)) {
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

}  // namespace fl::combo
