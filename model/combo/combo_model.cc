#include "model/combo/combo_model.h"

#include <algorithm>
#include <set>

namespace fl::model::combo {

std::string Key::describe() const {
  return "(a=" + std::to_string(activity) + ",u=" + std::to_string(user) + ",item=" + std::to_string(item_id) + ")";
}

namespace {

// A strict record names its window's first row by id AND created_at: a DB power loss (synchronous
// NORMAL/OFF) hands a forgotten pid out again, and only created_at tells the two rows apart.
using FirstRow = std::pair<int64_t, int64_t>;  // (pid, created_at_ms)

struct Group {
  std::vector<size_t> members;  // indices into the sorted purchases
  int64_t min_lo = INT64_MAX, max_lo = INT64_MIN, min_hi = INT64_MAX;
  int64_t min_pid = INT64_MAX, qty = 0;
  // created_at of every member holding min_pid: a window holding a forgotten row and its pid's
  // reissue may be named by either (the service keeps whichever reached Redis first).
  std::vector<int64_t> first_created;
};

class Search {
 public:
  Search(const std::vector<Purchase>& purchases, const std::vector<ObservedRecord>& records, const FitOptions& o)
      : ps_(purchases), recs_(records), o_(o), w_(o.window_ms * 1000) {
    std::sort(ps_.begin(), ps_.end(),
              [](const Purchase& a, const Purchase& b) { return std::tie(a.lo_us, a.pid) < std::tie(b.lo_us, b.pid); });
    for (size_t i = 0; i < recs_.size(); ++i) {
      // A loose record only shows that the window holding its id was published.
      if (recs_[i].loose)
        loose_.emplace(recs_[i].id, static_cast<int>(i));
      else
        by_first_[{recs_[i].id, recs_[i].created_at_ms}].push_back(static_cast<int>(i));
    }
  }

  Fit run() {
    Fit fit;
    std::set<int64_t> pids;
    std::set<FirstRow> rows;
    for (const Purchase& p : ps_) {
      pids.insert(p.pid);
      rows.insert({p.pid, p.created_at_ms});
    }
    for (const ObservedRecord& r : recs_) {
      if (!pids.count(r.id)) return fit;  // a record whose id is no purchase of the key
    }
    for (const auto& [first, indices] : by_first_) {
      if (!rows.count(first)) return fit;  // a record whose first row is no purchase of the key
    }
    fit.found = dfs(0);
    fit.inconclusive = !fit.found && steps_ > o_.budget;
    if (fit.found) fill(fit);
    return fit;
  }

 private:
  // The feasible opening times of `g`; closed groups also honour their records' publish times.
  std::pair<int64_t, int64_t> range(const Group& g, bool closed) const {
    int64_t lo = std::max(g.min_lo, g.max_lo - w_ + 1), hi = g.min_hi;
    if (!closed) return {lo, hi};
    for (int ri : records_of(g)) {
      const ObservedRecord& r = recs_[ri];
      if (r.publish_us < 0) continue;
      if (o_.early) hi = std::min(hi, r.publish_us + r.slack_us - w_);
      if (o_.late_us) lo = std::max(lo, r.publish_us - r.slack_us - w_ - *o_.late_us);
    }
    return {lo, hi};
  }

  // The strict records naming g's first row.
  std::vector<int> records_of(const Group& g) const {
    std::vector<int> out;
    for (int64_t created : g.first_created) {
      auto it = by_first_.find({g.min_pid, created});
      if (it != by_first_.end()) out.insert(out.end(), it->second.begin(), it->second.end());
    }
    return out;
  }

  bool names_a_record(const Purchase& p) const { return by_first_.count({p.pid, p.created_at_ms}) > 0; }

  // Conditions that can only get worse as members join (min pid only decreases, Σ only grows).
  bool records_allow(const Group& g, bool closed) const {
    for (size_t m : g.members) {
      if (ps_[m].pid != g.min_pid && names_a_record(ps_[m])) return false;  // a record's first row not first
    }
    const std::vector<int> named = records_of(g);
    if (named.empty()) {
      if (!closed || !o_.all_certain_published) return true;
      bool certain = false, loosely_published = false;
      for (size_t m : g.members) {
        certain = certain || !ps_[m].optional;
        loosely_published = loosely_published || loose_.count(ps_[m].pid);
      }
      return !certain || loosely_published;  // else: a window the client saw succeed, never published
    }
    for (int ri : named) {
      const ObservedRecord& r = recs_[ri];
      if (g.qty > r.quantity) return false;
      if (closed && g.qty != r.quantity) return false;
    }
    return true;
  }

  // Why the window after a group may open before window_ms after the group's.
  enum class End { kFull, kCut, kJump };

  // The earliest time the window after `g` (opened in [lo, hi]) may open: window_ms after lo, or
  // at a Redis data loss inside the window that may have taken its lock and that all of g's
  // members may precede (FitOptions::cuts), or, when a clock that times it jumped forward while it
  // was open, window_ms after the earliest its members allow it to have opened, not before the
  // jump (FitOptions::jumps; `jump`: which).
  int64_t next_open(const Group& g, int64_t lo, int64_t hi, End* why = nullptr, size_t* jump = nullptr) const {
    int64_t next = lo + w_;
    End end = End::kFull;
    for (const FitOptions::Cut& c : o_.cuts) {
      if (c.at_us > lo && c.at_us < next && hi >= c.from_us && g.max_lo < c.at_us) {
        next = c.at_us;
        end = End::kCut;
      }
    }
    for (size_t i = 0; i < o_.jumps.size(); ++i) {
      const FitOptions::Jump& j = o_.jumps[i];
      if (j.by_us <= 0 || j.at_us <= lo || j.at_us >= lo + w_) continue;  // not open at the jump
      const int64_t opened = std::max(g.min_lo, lo - j.by_us);            // at most by_us before lo
      const int64_t at = std::max(j.at_us, opened + w_);
      if (at < next && g.max_lo < at) {
        next = at;
        end = End::kJump;
        if (jump != nullptr) *jump = i;
      }
    }
    if (why != nullptr) *why = end;
    return next;
  }

  bool feasible(int64_t next_lo) const {
    int64_t earliest = INT64_MIN / 2;
    for (const Group& g : groups_) {
      const bool closed = next_lo == INT64_MAX || g.min_hi + w_ <= next_lo;
      if (!records_allow(g, closed)) return false;
      auto [lo, hi] = range(g, closed);
      lo = std::max(lo, earliest);
      if (lo > hi) return false;
      earliest = next_open(g, lo, hi);
    }
    return true;
  }

  static void add(Group& g, const Purchase& p, size_t i) {
    g.members.push_back(i);
    g.min_lo = std::min(g.min_lo, p.lo_us);
    g.max_lo = std::max(g.max_lo, p.lo_us);
    g.min_hi = std::min(g.min_hi, p.hi_us);
    g.qty += p.qty;
    if (p.pid < g.min_pid) {
      g.min_pid = p.pid;
      g.first_created.clear();
    }
    if (p.pid == g.min_pid) g.first_created.push_back(p.created_at_ms);
  }

  bool dfs(size_t i) {
    if (++steps_ > o_.budget) return false;
    const int64_t next_lo = i < ps_.size() ? ps_[i].lo_us : INT64_MAX;
    if (!feasible(next_lo)) return false;
    if (i == ps_.size()) return all_records_matched();
    const Purchase& p = ps_[i];
    // Join an existing window (the latest first), open a new one (at the end first), or stay out.
    for (size_t k = groups_.size(); k-- > 0;) {
      const Group saved = groups_[k];
      add(groups_[k], p, i);
      if (dfs(i + 1)) return true;
      groups_[k] = saved;
      if (steps_ > o_.budget) return false;
    }
    for (size_t pos = groups_.size() + 1; pos-- > 0;) {
      Group g;
      add(g, p, i);
      groups_.insert(groups_.begin() + static_cast<int64_t>(pos), g);
      if (dfs(i + 1)) return true;
      groups_.erase(groups_.begin() + static_cast<int64_t>(pos));
      if (steps_ > o_.budget) return false;
    }
    if (p.optional && !names_a_record(p) && !loose_.count(p.pid)) {
      absent_.push_back(i);
      if (dfs(i + 1)) return true;
      absent_.pop_back();
    }
    return false;
  }

  bool all_records_matched() const {
    std::set<FirstRow> firsts;
    for (const Group& g : groups_) {
      for (int64_t created : g.first_created) firsts.insert({g.min_pid, created});
    }
    for (const auto& entry : by_first_) {
      if (!firsts.count(entry.first)) return false;
    }
    return true;
  }

  void fill(Fit& fit) const {
    int64_t earliest = INT64_MIN / 2;
    End ended = End::kFull;  // how the window before ended
    size_t jump = 0;
    for (const Group& g : groups_) {
      Window w;
      for (size_t m : g.members) w.pids.push_back(ps_[m].pid);
      std::sort(w.pids.begin(), w.pids.end());
      w.min_pid = g.min_pid;
      w.qty = g.qty;
      auto [lo, hi] = range(g, true);
      w.t_lo_us = std::max(lo, earliest);
      w.t_hi_us = hi;
      if (!fit.windows.empty() && w.t_lo_us < fit.windows.back().t_lo_us + w_) {
        if (ended == End::kJump)
          fit.jump_ends.push_back(jump);
        else
          ++fit.cut_windows;
      }
      earliest = next_open(g, w.t_lo_us, w.t_hi_us, &ended, &jump);
      if (const std::vector<int> named = records_of(g); !named.empty()) w.record = named.front();
      for (size_t m : g.members) {
        auto l = loose_.find(ps_[m].pid);
        if (w.record < 0 && l != loose_.end()) w.record = l->second;
      }
      fit.windows.push_back(std::move(w));
    }
    for (size_t i : absent_) fit.absent.push_back(ps_[i].pid);
  }

  std::vector<Purchase> ps_;
  const std::vector<ObservedRecord>& recs_;
  FitOptions o_;
  int64_t w_;
  std::map<FirstRow, std::vector<int>> by_first_;  // strict records by their first row
  std::map<int64_t, int> loose_;                   // loose records: id -> index
  std::vector<Group> groups_;
  std::vector<size_t> absent_;
  int64_t steps_ = 0;
};

}  // namespace

Fit fit_windows(const std::vector<Purchase>& purchases, const std::vector<ObservedRecord>& records,
                const FitOptions& o) {
  return Search(purchases, records, o).run();
}

std::vector<std::vector<int64_t>> intended_windows(const std::vector<Purchase>& purchases, int64_t window_ms) {
  std::map<Key, std::vector<const Purchase*>> by_key;
  for (const Purchase& p : purchases) by_key[p.key].push_back(&p);
  std::vector<std::vector<int64_t>> out;
  for (auto& [key, list] : by_key) {
    std::sort(list.begin(), list.end(), [](const Purchase* x, const Purchase* y) {
      return std::tie(x->lo_us, x->pid) < std::tie(y->lo_us, y->pid);
    });
    int64_t open_until_us = INT64_MIN;
    for (const Purchase* p : list) {
      if (p->lo_us >= open_until_us) {
        out.push_back({});
        open_until_us = p->lo_us + window_ms * 1000;
      }
      out.back().push_back(p->pid);
    }
  }
  return out;
}

}  // namespace fl::model::combo
