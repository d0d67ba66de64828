#include "properties/common/fault_budget.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>

#include "sim/node_clock.h"
#include "impl/ports/assert.h"

namespace fl::props {

namespace {

using sim::FaultKind;
using sim::FaultRecord;

std::string at_text(int64_t time_us) {
  char buf[48];
  std::snprintf(buf, sizeof buf, " at %.3f s", static_cast<double>(time_us - sim::kEpochUs) / 1e6);
  return buf;
}

std::string who(const FaultRecord& r) { return r.process.empty() ? r.node : r.process; }

std::string describe(const FaultRecord& r) {
  const std::string peer = r.peer_process.empty() ? r.peer_node : r.peer_process;
  std::string out = std::string(sim::fault_kind_name(r.kind)) + " of " + (peer.empty() ? who(r) : who(r) + "|" + peer) +
                    at_text(r.time_us);
  if (r.kind == FaultKind::kEviction) out += " (key " + r.detail + ")";
  if (r.kind == FaultKind::kClockDrift) out += " (" + std::to_string(r.value) + " ppm)";
  if (r.kind == FaultKind::kClockJump) out += " (" + std::to_string(r.value / 1000) + " ms)";
  if (r.kind == FaultKind::kDelayed) out += " (" + r.detail + ", " + std::to_string(r.value / 1000) + " ms)";
  if (r.kind == FaultKind::kRedisError && r.duration_us > 0) {
    out += " (" + r.detail + ", " + std::to_string(r.duration_us / 1000) + " ms)";
  }
  if ((r.kind == FaultKind::kMessageLost || r.kind == FaultKind::kCallBroken) && !r.detail.empty()) {
    out += " (" + r.detail + ")";
  }
  return out;
}

bool is_instant(FaultKind k) {
  switch (k) {
    case FaultKind::kMessageLost:
    case FaultKind::kCallBroken:
    case FaultKind::kReset:
    case FaultKind::kStorageError:
    case FaultKind::kRedisError:
    case FaultKind::kLateDuplicate:
      return true;
    default:
      return false;
  }
}

bool ends_with(const std::string& s, const char* suffix) {
  const std::string x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

}  // namespace

void FaultBudget::add_span(const std::string& place, int64_t from_us, int64_t to_us, const std::string& what,
                           const std::string& peer) {
  if (place.empty()) return;
  FL_ASSERT(from_us <= to_us);
  spans_.push_back(FaultSpan{place, from_us, to_us, what, peer});
}

void FaultBudget::add_instant(const std::string& place, size_t record) {
  if (place.empty()) return;
  for (auto it = instants_.rbegin(); it != instants_.rend() && it->second == record; ++it) {
    if (it->first == place) return;  // a node named as its process: once
  }
  instants_.emplace_back(place, record);
}

// Whether a link fault between nodes a and b hit a message in [from, to]: a loss ("partition") or
// a hold ("clog") the network recorded there. `b` empty: any peer.
bool FaultBudget::link_hit(const std::string& a, const std::string& b, int64_t from_us, int64_t to_us, FaultKind kind,
                           const char* detail) const {
  for (const FaultRecord& r : log_) {
    if (r.time_us < from_us) continue;
    if (r.time_us > to_us) break;
    if (r.kind != kind || !ends_with(r.detail, detail)) continue;
    const bool forward = r.node == a && (b.empty() || r.peer_node == b);
    const bool backward = r.peer_node == a && (b.empty() || r.node == b);
    if (forward || backward) return true;
  }
  return false;
}

FaultBudget::FaultBudget(const sim::FaultLog& log, int64_t end_us) : log_(log), end_us_(end_us) {
  build_spans(end_us);
  for (size_t i = 0; i < log_.size(); ++i) {
    const FaultRecord& r = log_[i];
    if (r.cause != 0) by_cause_[r.cause].push_back(i);
    if (r.kind == FaultKind::kClockJump || r.kind == FaultKind::kClockDrift) clock_records_[r.node].push_back(i);
    if (r.kind == FaultKind::kEviction) add_instant(eviction_place(r.detail), i);
    if (r.kind == FaultKind::kRedisError && r.duration_us > 0) {  // a refusal window, not one command
      refusal_windows_.push_back(FaultSpan{r.process, r.time_us, r.time_us + r.duration_us, describe(r)});
      continue;
    }
    if (!is_instant(r.kind)) continue;
    add_instant(r.process, i);
    add_instant(r.node, i);
    add_instant(r.peer_process, i);
    add_instant(r.peer_node, i);
  }
  std::stable_sort(spans_.begin(), spans_.end(),
                   [](const FaultSpan& a, const FaultSpan& b) { return a.from_us < b.from_us; });
  index();
}

void FaultBudget::build_spans(int64_t end_us) {
  std::map<std::string, std::pair<int64_t, std::string>> down;  // process -> (since, what)
  std::map<std::string, std::string> node_of;
  struct Cut {
    int64_t since_us;
    std::string what;
  };
  using Link = std::pair<std::string, std::string>;
  std::map<Link, Cut> partitioned;
  auto close_link = [&](const Link& link, int64_t t) {
    auto it = partitioned.find(link);
    if (it == partitioned.end()) return;
    if (link_hit(link.first, link.second, it->second.since_us, t, FaultKind::kMessageLost, "partition")) {
      add_span(link.first, it->second.since_us, t, it->second.what, link.second);
      add_span(link.second, it->second.since_us, t, it->second.what, link.first);
    }
    partitioned.erase(it);
  };
  auto close_down = [&](const std::string& process, int64_t t) {
    auto it = down.find(process);
    if (it == down.end()) return;
    add_span(process, it->second.first, t, it->second.second);
    if (node_of[process] != process) add_span(node_of[process], it->second.first, t, it->second.second);
    down.erase(it);
  };
  for (const FaultRecord& r : log_) {
    const std::string what = describe(r);
    switch (r.kind) {
      case FaultKind::kCrash:
        node_of[r.process] = r.node;
        down.emplace(r.process, std::make_pair(r.time_us, what));
        break;
      case FaultKind::kRestart:
        close_down(r.process, r.time_us);
        break;
      case FaultKind::kPause:
        if (r.duration_us <= 0) break;  // held nothing
        add_span(r.process, r.time_us, r.time_us + r.duration_us, what);
        if (r.node != r.process) add_span(r.node, r.time_us, r.time_us + r.duration_us, what);
        break;
      case FaultKind::kPartition:
        partitioned.emplace(Link{std::min(r.node, r.peer_node), std::max(r.node, r.peer_node)}, Cut{r.time_us, what});
        break;
      case FaultKind::kHeal:
        if (r.node.empty()) {
          while (!partitioned.empty()) close_link(partitioned.begin()->first, r.time_us);
        } else {
          close_link(Link{std::min(r.node, r.peer_node), std::max(r.node, r.peer_node)}, r.time_us);
        }
        break;
      case FaultKind::kClog:
        if (link_hit(r.node, r.peer_node, r.time_us, r.time_us + r.duration_us, FaultKind::kDelayed, "clog")) {
          add_span(r.node, r.time_us, r.time_us + r.duration_us, what, r.peer_node);
          add_span(r.peer_node, r.time_us, r.time_us + r.duration_us, what, r.node);
        }
        break;
      default:
        break;  // instants, clocks, causes: indexed apart
    }
  }
  while (!down.empty()) close_down(down.begin()->first, end_us);
  while (!partitioned.empty()) close_link(partitioned.begin()->first, end_us);
}

void FaultBudget::index() {
  for (size_t i = 0; i < spans_.size(); ++i) {
    PlaceSpans& p = by_place_[spans_[i].place];
    p.spans.push_back(i);
    p.longest_us = std::max(p.longest_us, spans_[i].to_us - spans_[i].from_us);
  }
}

std::optional<std::string> FaultBudget::explain(const std::vector<std::string>& places, int64_t from_us, int64_t to_us,
                                                int64_t slack_us) const {
  const int64_t lo = from_us - slack_us;
  // The latest-starting fault that touches the outcome names it: a crash long healed may also
  // "touch" a late outcome through the slack, but a fault nearer to it is the likelier cause.
  // Of the spans that meet [lo, to_us] at any of `places`, the last in start order: per place, the
  // newest span starting by to_us that reaches lo (none older can once a span starts more than the
  // place's longest span before lo).
  std::optional<size_t> latest;
  for (const std::string& place : places) {
    auto it = by_place_.find(place);
    if (it == by_place_.end()) continue;
    const std::vector<size_t>& idx = it->second.spans;
    auto end =
        std::upper_bound(idx.begin(), idx.end(), to_us, [this](int64_t t, size_t i) { return t < spans_[i].from_us; });
    for (auto k = end; k != idx.begin();) {
      const FaultSpan& s = spans_[*--k];
      if (s.from_us < lo - it->second.longest_us) break;
      if (s.to_us >= lo) {
        if (!latest || *k > *latest) latest = *k;
        break;
      }
    }
  }
  if (!latest) return std::nullopt;
  return spans_[*latest].what;
}

bool FaultBudget::touches(const std::string& place, const std::vector<std::string>& places) {
  return std::find(places.begin(), places.end(), place) != places.end();
}

// Walks spans_ in start order, so the union of the clipped intervals needs no sorting and nothing
// is allocated; stops at the first span that starts after `to_us`.
int64_t FaultBudget::covered_us(const std::vector<std::string>& places, int64_t from_us, int64_t to_us) const {
  int64_t covered = 0, reach = from_us;
  for (const FaultSpan& s : spans_) {
    if (s.from_us > to_us) break;
    if (!touches(s.place, places)) continue;
    const int64_t a = std::max(s.from_us, reach), b = std::min(s.to_us, to_us);
    if (a >= b) continue;
    covered += b - a;
    reach = b;
  }
  return covered;
}

std::vector<const sim::FaultRecord*> FaultBudget::instants(const std::vector<std::string>& places, int64_t from_us,
                                                           int64_t to_us) const {
  std::vector<const sim::FaultRecord*> out;
  auto first = std::lower_bound(
      instants_.begin(), instants_.end(), from_us,
      [this](const std::pair<std::string, size_t>& e, int64_t t) { return log_[e.second].time_us < t; });
  for (auto it = first; it != instants_.end() && log_[it->second].time_us <= to_us; ++it) {
    if (!touches(it->first, places)) continue;
    if (!out.empty() && out.back() == &log_[it->second]) continue;
    out.push_back(&log_[it->second]);
  }
  return out;
}

std::optional<std::string> FaultBudget::instant_in(const std::vector<std::string>& places, int64_t from_us,
                                                   int64_t to_us) const {
  const std::vector<const sim::FaultRecord*> hit = instants(places, from_us, to_us);
  if (hit.empty()) return std::nullopt;
  return describe(*hit.front());
}

std::optional<std::string> FaultBudget::touched(uint64_t op) const {
  auto it = by_cause_.find(op);
  if (op == 0 || it == by_cause_.end()) return std::nullopt;
  return describe(log_[it->second.front()]) + " (operation #" + std::to_string(op) + ")";
}

std::vector<const sim::FaultRecord*> FaultBudget::naming(uint64_t op) const {
  std::vector<const sim::FaultRecord*> out;
  auto it = by_cause_.find(op);
  if (op == 0 || it == by_cause_.end()) return out;
  for (size_t i : it->second) out.push_back(&log_[i]);
  return out;
}

int64_t FaultBudget::held_us(uint64_t op) const {
  auto it = by_cause_.find(op);
  if (op == 0 || it == by_cause_.end()) return 0;
  int64_t held = 0;
  for (size_t i : it->second) {
    if (log_[i].kind == FaultKind::kDelayed) held += log_[i].value;
  }
  return held;
}

int64_t FaultBudget::clock_offset_us(const std::string& node, int64_t t_us) const {
  sim::NodeClock c;  // replays the node's jumps and drifts as the world applied them
  auto it = clock_records_.find(node);
  if (it == clock_records_.end()) return 0;
  for (size_t i : it->second) {
    const FaultRecord& r = log_[i];
    if (r.time_us > t_us) break;
    if (r.kind == FaultKind::kClockJump) c.jump(r.value);
    if (r.kind == FaultKind::kClockDrift) c.set_drift(r.time_us, r.value);
  }
  return c.local_us(t_us) - t_us;
}

// Local time rises between the node's clock records (a drift changes its rate by parts per
// million, it never stops it): its largest value up to t is at t or just before one of those records.
int64_t FaultBudget::monotonic_clock_us(const std::string& node, int64_t t_us) const {
  int64_t best = t_us + clock_offset_us(node, t_us);
  auto it = clock_records_.find(node);
  if (it == clock_records_.end()) return best;
  for (size_t i : it->second) {
    const int64_t at = log_[i].time_us;
    if (at > t_us) break;
    best = std::max(best, at - 1 + clock_offset_us(node, at - 1));
  }
  return best;
}

ClockReach FaultBudget::clock(const std::string& node, int64_t from_us, int64_t to_us) const {
  // The offset is piecewise linear in world time: its extremes over [from, to] are at the ends and
  // just before and after each jump or drift change inside.
  std::vector<int64_t> at = {from_us, to_us};
  ClockReach reach;
  auto it = clock_records_.find(node);
  if (it == clock_records_.end()) return reach;
  for (size_t i : it->second) {
    const FaultRecord& r = log_[i];
    if (r.time_us > to_us) break;
    const bool moves = r.value != 0;
    if (r.time_us >= from_us) {
      at.push_back(r.time_us);
      if (r.time_us > from_us) at.push_back(r.time_us - 1);
    }
    if (moves && (r.kind == FaultKind::kClockDrift || r.time_us >= from_us)) {
      reach.what += (reach.what.empty() ? "" : ", ") + describe(r);
    }
  }
  std::sort(at.begin(), at.end());
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int64_t t : at) {
    const int64_t o = clock_offset_us(node, std::clamp(t, from_us, to_us));
    if (hi != INT64_MIN) reach.max_fall_us = std::max(reach.max_fall_us, hi - o);  // hi: the greatest so far
    lo = std::min(lo, o);
    hi = std::max(hi, o);
    reach.max_abs_offset_us = std::max<int64_t>(reach.max_abs_offset_us, std::llabs(o));
  }
  reach.error_us = hi - lo;
  reach.min_offset_us = lo;
  reach.max_offset_us = hi;
  if (reach.max_abs_offset_us == 0 && reach.error_us == 0) reach.what.clear();
  return reach;
}

std::vector<std::pair<int64_t, int64_t>> FaultBudget::downtimes(const std::string& process) const {
  std::vector<std::pair<int64_t, int64_t>> out;
  std::optional<int64_t> since;
  for (const FaultRecord& r : log_) {
    if (r.process != process) continue;
    if (r.kind == FaultKind::kCrash && !since) since = r.time_us;
    if (r.kind == FaultKind::kRestart && since) {
      out.emplace_back(*since, r.time_us);
      since.reset();
    }
  }
  if (since) out.emplace_back(*since, end_us_);
  return out;
}

std::vector<const sim::FaultRecord*> FaultBudget::records(FaultKind kind) const {
  std::vector<const sim::FaultRecord*> out;
  for (const FaultRecord& r : log_) {
    if (r.kind == kind) out.push_back(&r);
  }
  return out;
}

}  // namespace fl::props
