#include "properties/likes/truth.h"

#include <algorithm>
#include <deque>
#include <iterator>
#include <set>
#include <tuple>

namespace fl::likes::props {

TruthTimeline::TruthTimeline(const LikesRun& run)
    : TruthTimeline(run, fl::props::FaultBudget(run.faults, run.end_us)) {}

TruthTimeline::TruthTimeline(const LikesRun& run, const fl::props::FaultBudget& budget) {
  std::vector<int64_t> db_crashes;  // ascending
  for (const auto& [down_us, up_us] : budget.downtimes("db")) db_crashes.push_back(down_us);
  std::set<Pair> rows;
  std::map<int64_t, int64_t> t;     // asset -> T
  std::map<Pair, int64_t> changed;  // pair -> time of its last change in the replay
  // A commit of the pair was lost in a power loss of the DB: at its first crash after the pair's
  // last replayed change (the loss shows only later, in a sample taken after the DB came back or
  // in a commit that contradicts the replay, and the DB may have crashed again meanwhile). No
  // crash in between: dated at the observation itself (then no fault explains it).
  auto lost = [&](const Pair& p, int64_t seen_us) {
    const auto last = changed.find(p);
    const int64_t since = last == changed.end() ? 0 : last->second;
    const auto crash = std::lower_bound(db_crashes.begin(), db_crashes.end(), since);
    const int64_t dated_us = crash != db_crashes.end() && *crash <= seen_us ? *crash : seen_us;
    lost_[p].push_back(dated_us);
    unseen_losses_[p.first].emplace_back(dated_us, seen_us);
  };
  auto apply = [&](const DbChange& c) {
    if (!c.row || !c.applied) return;
    const Pair p{c.asset, c.user};
    const bool had = rows.count(p) > 0;
    if ((c.delta > 0) == had) {
      // The DB inserted a row the replay holds (or deleted one it lacks): it had lost the commit
      // that made them agree (swarm-hardened-none-normal seed 6095: a like re-inserted the row a
      // power loss had taken, before the next sample could show the loss).
      lost(p, c.time_us);
      rebases_.push_back(c.time_us);
      changed[p] = c.time_us;
      return;
    }
    if (c.delta > 0)
      rows.insert(p);
    else
      rows.erase(p);
    row_steps_[p].emplace_back(c.time_us, c.delta > 0);
    changed[p] = c.time_us;
    t[c.asset] += c.delta > 0 ? 1 : -1;
    set(c.asset, c.time_us, t[c.asset]);
  };
  // True when the sample's rows (pairs with n > 0) are exactly `rows`. Both are ordered by pair, so
  // one merge walk decides it without building the sample's set (the usual answer, every sample).
  auto same_rows = [&](const StoreSnapshot& s) {
    auto it = rows.begin();
    for (const auto& [pair, n] : s.db_rows) {
      if (n <= 0) continue;
      if (it == rows.end() || *it != pair) return false;
      ++it;
    }
    return it == rows.end();
  };
  auto rebase = [&](const StoreSnapshot& s) {
    if (!s.db_read || same_rows(s)) return;
    std::set<Pair> seen;
    for (const auto& [pair, n] : s.db_rows) {
      if (n > 0) seen.insert(pair);
    }
    rebases_.push_back(s.time_us);
    std::set<Pair> differ;
    std::set_symmetric_difference(rows.begin(), rows.end(), seen.begin(), seen.end(),
                                  std::inserter(differ, differ.end()));
    std::set<int64_t> assets;
    for (const Pair& p : differ) {
      lost(p, s.time_us);
      row_steps_[p].emplace_back(s.time_us, seen.count(p) > 0);
      changed[p] = s.time_us;
      assets.insert(p.first);
    }
    rows = seen;
    for (int64_t a : assets) {
      t[a] = s.rows_of(a);
      set(a, s.time_us, t[a]);
    }
  };
  // A sample re-bases after exactly the commits it saw: by the commit log's order, not by time
  // (swarm-hardened-none-normal seed 9710: a sample at the instant a paused DB resumed saw none of
  // the queued commits dated that instant; replaying them first made a loss without a crash, which
  // no fault explains, and hid the real loss of a later power loss).
  auto seen_by = [](const DbChange& c, const StoreSnapshot& s) {
    return s.db_seq ? c.seq <= *s.db_seq : c.time_us <= s.time_us;
  };
  size_t i = 0;
  std::vector<const StoreSnapshot*> samples;
  for (const StoreSnapshot& s : run.samples) samples.push_back(&s);
  samples.push_back(&run.final_state);
  for (const StoreSnapshot* s : samples) {
    for (; i < run.db_changes.size() && seen_by(run.db_changes[i], *s); ++i) apply(run.db_changes[i]);
    rebase(*s);
  }
  for (; i < run.db_changes.size(); ++i) apply(run.db_changes[i]);
}

// Every change is kept, several at one instant too: a DB resuming from a pause runs its queued
// requests at one instant, and a read among them sees the values in between (swarm-hardened seed
// 73: a warm-up read count 8 between a like and two unlikes that all ran at 9.256 s).
void TruthTimeline::set(int64_t asset, int64_t t_us, int64_t value) {
  auto& v = steps_[asset];
  if (!v.empty() && v.back().second == value) return;
  v.emplace_back(t_us, value);
}

bool TruthTimeline::row_held(const Pair& p, bool present, int64_t s_us, int64_t e_us) const {
  // Every state a change in [s, e] left (several at one instant too: a group commit runs many
  // requests at one instant), and the state before s unless a change at s ended it there (the
  // caller's s is often the instant of a commit that ended it).
  bool before = false;  // the table starts empty
  bool changed_at_s = false;
  auto it = row_steps_.find(p);
  if (it != row_steps_.end()) {
    for (const auto& [t_us, now_present] : it->second) {
      if (t_us < s_us) {
        before = now_present;
        continue;
      }
      if (t_us > e_us) break;
      if (t_us == s_us) changed_at_s = true;
      if (now_present == present) return true;
    }
  }
  return !changed_at_s && before == present;
}

int64_t TruthTimeline::at(int64_t asset, int64_t t_us) const {
  auto it = steps_.find(asset);
  if (it == steps_.end()) return 0;
  const auto& v = it->second;
  auto pos = std::upper_bound(v.begin(), v.end(), std::make_pair(t_us, INT64_MAX));
  return pos == v.begin() ? 0 : std::prev(pos)->second;
}

model::Range TruthTimeline::over(int64_t asset, int64_t s_us, int64_t e_us) const {
  // The value before s, then every step from s (those at s included: T(a) passed through them
  // at that instant) up to e (steps are in time order).
  const int64_t first = at(asset, s_us - 1);
  model::Range r{first, first};
  auto it = steps_.find(asset);
  if (it == steps_.end()) return r;
  const auto& v = it->second;
  for (auto p = std::lower_bound(v.begin(), v.end(), std::make_pair(s_us, INT64_MIN)); p != v.end() && p->first <= e_us;
       ++p) {
    r.lo = std::min(r.lo, p->second);
    r.hi = std::max(r.hi, p->second);
  }
  return r;
}

std::optional<int64_t> TruthTimeline::left_at(int64_t asset, int64_t value, int64_t t_us) const {
  auto it = steps_.find(asset);
  if (it == steps_.end()) return std::nullopt;
  const auto& v = it->second;
  // Newest first: each step at or before t, with the value it replaced (0 before the first).
  for (auto p = std::upper_bound(v.begin(), v.end(), std::make_pair(t_us, INT64_MAX)); p != v.begin();) {
    --p;
    const int64_t before = p == v.begin() ? 0 : std::prev(p)->second;
    if (before == value && p->second != value) return p->first;
  }
  return std::nullopt;
}

bool TruthTimeline::rebased(int64_t s_us, int64_t e_us) const {
  for (int64_t t : rebases_) {
    if (t >= s_us && t <= e_us) return true;
  }
  return false;
}

std::optional<int64_t> TruthTimeline::unseen_loss(int64_t asset, int64_t t_us) const {
  auto it = unseen_losses_.find(asset);
  if (it == unseen_losses_.end()) return std::nullopt;
  for (const auto& [dated_us, seen_us] : it->second) {
    if (dated_us <= t_us && t_us <= seen_us) return dated_us;
  }
  return std::nullopt;
}

std::optional<int64_t> TruthTimeline::lost_at(const Pair& p, int64_t s_us) const {
  auto it = lost_.find(p);
  if (it == lost_.end()) return std::nullopt;
  for (int64_t t : it->second) {
    if (t >= s_us) return t;
  }
  return std::nullopt;
}

std::optional<int64_t> TruthTimeline::last_lost(int64_t asset, int64_t s_us, int64_t e_us) const {
  std::optional<int64_t> out;
  for (const auto& [p, times] : lost_) {
    if (p.first != asset) continue;
    for (int64_t t : times) {
      if (t >= s_us && t <= e_us && (!out || t > *out)) out = t;
    }
  }
  return out;
}

std::vector<CounterChange> counter_changes(const LikesRun& run) {
  using Writer = std::tuple<std::string, int64_t, int64_t>;  // process, asset, direction
  std::map<Writer, std::deque<const DbChange*>> unpaid;      // applied row changes not yet paid
  std::map<Writer, const DbChange*> refused;                 // latest refused row change
  std::vector<CounterChange> out;
  // One commit record at a time: its row changes first (a transaction may update the counter
  // before it inserts or deletes the row).
  const auto& all = run.db_changes;
  for (size_t begin = 0; begin < all.size();) {
    size_t end = begin;
    while (end < all.size() && all[end].seq == all[begin].seq) ++end;
    for (size_t i = begin; i < end; ++i) {
      const DbChange& c = all[i];
      if (!c.row) continue;
      const Writer w{c.client, c.asset, c.delta};
      if (c.applied)
        unpaid[w].push_back(&c);
      else
        refused[w] = &c;
    }
    for (size_t i = begin; i < end; ++i) {
      const DbChange& c = all[i];
      if (c.row || !c.applied) continue;
      const Writer w{c.client, c.asset, c.delta};
      CounterChange cc;
      cc.counter = &c;
      // A row change of the same request pays first (a transaction writes both).
      auto& q = unpaid[w];
      for (auto it = q.rbegin(); it != q.rend(); ++it) {
        if ((*it)->seq == c.seq) {
          cc.row = *it;
          q.erase(std::next(it).base());
          break;
        }
      }
      if (cc.row == nullptr && !q.empty()) {
        cc.row = q.back();
        q.pop_back();
      }
      auto r = refused.find(w);
      if (r != refused.end()) cc.refused_row = r->second;
      out.push_back(cc);
    }
    begin = end;
  }
  return out;
}

std::vector<RedisDelta> redis_deltas(const LikesRun& run) {
  std::vector<RedisDelta> out;
  const auto& ws = run.redis_writes;
  for (size_t i = 0; i < ws.size(); ++i) {
    const RedisWrite& w = ws[i];
    if (!w.count) continue;
    int64_t d = 0;
    if (w.cmd == "INCR")
      d = 1;
    else if (w.cmd == "DECR")
      d = -1;
    else
      continue;
    RedisDelta rd;
    rd.write = &w;
    rd.delta = d;
    // The state-key write of the same asset executed right before it in the same request (the
    // seed's pipeline: SETNX then INCR, DEL then DECR).
    if (i > 0 && ws[i - 1].request == w.request && !ws[i - 1].count && ws[i - 1].asset == w.asset &&
        ws[i - 1].seq + 1 == w.seq) {
      rd.user = ws[i - 1].user;
      rd.state = &ws[i - 1];
    }
    out.push_back(rd);
  }
  return out;
}

}  // namespace fl::likes::props
