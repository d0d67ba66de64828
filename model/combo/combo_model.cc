#include "model/combo/combo_model.h"

#include <algorithm>
#include <set>

namespace fl::model::combo {

std::string Key::describe() const {
  return "(a=" + std::to_string(activity) + ",u=" + std::to_string(user) + ",item=" + std::to_string(item_id) + ")";
}

Assignment assigned_groups(const std::vector<Purchase>& purchases, const std::map<Key, std::vector<int64_t>>& record_ids,
                           const std::map<int64_t, int64_t>& window_of_record) {
  // A row without a recorded window joins the window of the record of its key with the largest
  // id <= its pid (ids are first pids; pids grow with time): that record's recorded window when
  // its first row has one, else the record itself.
  std::map<int64_t, int64_t> window_of_pid(window_of_record.begin(), window_of_record.end());
  std::set<int64_t> window_ids;
  for (const Purchase& p : purchases) {
    if (p.window_id) {
      window_of_pid[p.pid] = *p.window_id;
      window_ids.insert(*p.window_id);
    }
  }
  std::map<std::pair<Key, std::string>, std::vector<const Purchase*>> buckets;
  for (const Purchase& p : purchases) {
    std::string label;
    auto said = window_of_record.find(p.pid);
    if (!p.window_id && said != window_of_record.end()) {
      label = "w:" + std::to_string(said->second);
    } else if (p.window_id) {
      label = "w:" + std::to_string(*p.window_id);
    } else {
      int64_t best = -1;
      auto it = record_ids.find(p.key);
      if (it != record_ids.end()) {
        for (int64_t id : it->second) {
          if (id <= p.pid && id > best) best = id;
        }
      }
      // A record whose window the server recorded (rows carrying its window id) has a known
      // membership: a row that is not among its members belongs to no published window and
      // stays alone. Only a record with no recorded membership (spec) takes rows by pid order.
      const bool recorded = window_of_pid.count(best) > 0 || window_ids.count(best) > 0;
      label = best < 0 || recorded ? "p:" + std::to_string(p.pid) : "r:" + std::to_string(best);
    }
    buckets[{p.key, label}].push_back(&p);
  }
  Assignment a;
  for (auto& [k, members] : buckets) {
    std::sort(members.begin(), members.end(), [](const Purchase* x, const Purchase* y) { return x->pid < y->pid; });
    Group g;
    g.key = k.first;
    g.label = k.second;
    g.min_pid = members.front()->pid;
    g.first_created_at_ms = members.front()->created_at_ms;
    g.first_lo_us = members.front()->lo_us;
    g.first_hi_us = members.front()->hi_us;
    for (const Purchase* p : members) {
      g.pids.push_back(p->pid);
      g.qty_all += p->qty;
      if (p->certainty == Certainty::kOk) g.qty_ok += p->qty;
    }
    a.groups.push_back(std::move(g));
  }
  std::sort(a.groups.begin(), a.groups.end(),
            [](const Group& x, const Group& y) { return std::tie(x.key, x.min_pid) < std::tie(y.key, y.min_pid); });
  for (size_t i = 0; i < a.groups.size(); ++i) {
    for (int64_t pid : a.groups[i].pids) a.group_of_pid[pid] = i;
  }
  return a;
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
