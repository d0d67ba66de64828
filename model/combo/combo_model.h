// The combo reference model (INVARIANTS.md, COMBO): from the purchases a run made, the windows
// they form and the one record each window must produce. Independent of impl/combo: it knows
// the definition of a window, not how any variant computes one.
//
// Definitions
// - Key = (activity, user, item_id). A purchase is known by its DB row id (pid).
// - A purchase's real time is uncertain: it happened somewhere in [lo_us, hi_us] (the client's
//   invocation and completion; hi_us = INT64_MAX when the client never learnt the outcome).
// - assigned_groups(): the partition the SERVER chose, as evidenced by the run: purchases carrying
//   a window id (recorded by the server) are grouped by it; the others are attributed to the
//   published record of their key with the largest id <= their pid (ids are first pids and pids
//   grow with time) when the server recorded no membership for that record's window, or stay
//   alone (a server that records every member of a published window left them out of it).
// - intended_windows(): the definition itself, for purchases with certain times: a window opens
//   at the first purchase f of a key not inside an open window and holds every purchase of the
//   key with t < t_f + window_ms. Used where the run's timing is certain.
// - expected_record(): id = min pid, quantity = combo_count = Σ qty, created_at of the min pid.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fl::model::combo {

struct Key {
  int64_t activity = 0, user = 0, item_id = 0;
  auto operator<=>(const Key&) const = default;
  std::string describe() const;
};

enum class Certainty : uint8_t { kOk, kUncertain };  // kUncertain: info, or push alerted

struct Purchase {
  int64_t pid = 0;
  Key key;
  int64_t qty = 0;
  int64_t created_at_ms = 0;
  int64_t lo_us = 0, hi_us = INT64_MAX;
  Certainty certainty = Certainty::kOk;
  std::optional<int64_t> window_id;  // the server's assignment, when it recorded one
};

struct Group {
  Key key;
  std::string label;               // "w:<window>" | "r:<record id>" | "p:<pid>"
  std::vector<int64_t> pids;       // ascending
  int64_t min_pid = 0;
  int64_t qty_ok = 0;              // Σ qty of certain purchases
  int64_t qty_all = 0;             // Σ qty of all purchases
  int64_t first_created_at_ms = 0;
  int64_t first_lo_us = 0, first_hi_us = 0;
};

struct Assignment {
  std::vector<Group> groups;                 // sorted by (key, min_pid)
  std::map<int64_t, size_t> group_of_pid;    // pid -> index in groups
  const Group* group_of(int64_t pid) const {
    auto it = group_of_pid.find(pid);
    return it == group_of_pid.end() ? nullptr : &groups[it->second];
  }
};

// `record_ids` = ids of records published for each key (any order, duplicates allowed).
// `window_of_record` = the window a publisher said a record closed (record id -> window id),
// when it said so: evidence of the server's assignment like a row's window id.
Assignment assigned_groups(const std::vector<Purchase>& purchases, const std::map<Key, std::vector<int64_t>>& record_ids,
                           const std::map<int64_t, int64_t>& window_of_record = {});

// Windows per the definition, over purchases ordered by lo_us (their earliest possible time).
std::vector<std::vector<int64_t>> intended_windows(const std::vector<Purchase>& purchases, int64_t window_ms);

}  // namespace fl::model::combo
