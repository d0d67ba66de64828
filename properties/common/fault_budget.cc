#include "properties/common/fault_budget.h"

#include "sim/node_clock.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <map>
#include <utility>

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

}  // namespace

void FaultBudget::add(const std::string& place, int64_t from_us, int64_t to_us, const std::string& what) {
  if (place.empty()) return;
  assert(from_us <= to_us);
  spans_.push_back(FaultSpan{place, from_us, to_us, what});
}

FaultBudget::FaultBudget(const sim::FaultLog& log, int64_t end_us) {
  std::map<std::string, std::pair<int64_t, std::string>> down;  // process -> (since, what)
  using Link = std::pair<std::string, std::string>;
  std::map<Link, std::pair<int64_t, std::string>> partitioned;
  auto close_link = [&](const Link& link, int64_t t) {
    auto it = partitioned.find(link);
    if (it == partitioned.end()) return;
    add(link.first, it->second.first, t, it->second.second);
    add(link.second, it->second.first, t, it->second.second);
    partitioned.erase(it);
  };
  for (const FaultRecord& r : log) {
    const std::string what = std::string(sim::fault_kind_name(r.kind)) + " of " +
                             (r.peer_node.empty() ? who(r) : who(r) + "|" + (r.peer_process.empty() ? r.peer_node : r.peer_process)) +
                             at_text(r.time_us);
    switch (r.kind) {
      case FaultKind::kCrash:
        down.emplace(r.process, std::make_pair(r.time_us, what));
        break;
      case FaultKind::kRestart: {
        auto it = down.find(r.process);
        if (it != down.end()) {
          add(r.process, it->second.first, r.time_us, it->second.second);
          add(r.node, it->second.first, r.time_us, it->second.second);
          down.erase(it);
        }
        break;
      }
      case FaultKind::kPause:
        add(r.process, r.time_us, r.time_us + r.duration_us, what);
        add(r.node, r.time_us, r.time_us + r.duration_us, what);
        break;
      case FaultKind::kPartition:
        partitioned.emplace(Link{std::min(r.node, r.peer_node), std::max(r.node, r.peer_node)},
                            std::make_pair(r.time_us, what));
        break;
      case FaultKind::kHeal:
        if (r.node.empty()) {
          while (!partitioned.empty()) close_link(partitioned.begin()->first, r.time_us);
        } else {
          close_link(Link{std::min(r.node, r.peer_node), std::max(r.node, r.peer_node)}, r.time_us);
        }
        break;
      case FaultKind::kClog:
        add(r.node, r.time_us, r.time_us + r.duration_us, what);
        add(r.peer_node, r.time_us, r.time_us + r.duration_us, what);
        break;
      case FaultKind::kClockDrift:
        add(r.node, r.time_us, end_us, what);
        break;
      case FaultKind::kMessageLost:
        add(r.process, r.time_us, r.time_us, what);
        add(r.peer_process, r.time_us, r.time_us, what);
        add(r.node, r.time_us, r.time_us, what);
        add(r.peer_node, r.time_us, r.time_us, what);
        break;
      case FaultKind::kReset:
      case FaultKind::kClockJump:
      case FaultKind::kStorageError:
      case FaultKind::kRedisError:
        add(r.process, r.time_us, r.time_us, what);
        add(r.node, r.time_us, r.time_us, what);
        break;
      case FaultKind::kEviction:
        add(eviction_place(r.detail), r.time_us, r.time_us, what + " (key " + r.detail + ")");
        break;
      case FaultKind::kLateDuplicate:
        add(r.process, r.time_us, r.time_us, what);
        add(r.peer_process, r.time_us, r.time_us, what);
        break;
    }
  }
  for (const auto& [process, since] : down) add(process, since.first, end_us, since.second);
  while (!partitioned.empty()) close_link(partitioned.begin()->first, end_us);
  std::stable_sort(spans_.begin(), spans_.end(),
                   [](const FaultSpan& a, const FaultSpan& b) { return a.from_us < b.from_us; });
  index();
}

void FaultBudget::index() {
  for (size_t i = 0; i < spans_.size(); ++i) {
    PlaceSpans& p = by_place_[spans_[i].place];
    p.spans.push_back(i);
    p.longest_us = std::max(p.longest_us, spans_[i].to_us - spans_[i].from_us);
  }
}

std::optional<std::string> FaultBudget::explain(const std::vector<std::string>& places, int64_t from_us,
                                                int64_t to_us, int64_t slack_us) const {
  const int64_t lo = from_us - slack_us;
  // The latest-starting fault that touches the outcome names it: a clock drift from the first
  // second or a crash long healed also "touch" a late outcome, but a fault nearer to it is the
  // likelier cause and the better evidence.
  // Of the spans that meet [lo, to_us] at any of `places`, the last in start order: per place, the
  // newest span starting by to_us that reaches lo (none older can once a span starts more than the
  // place's longest span before lo).
  std::optional<size_t> latest;
  for (const std::string& place : places) {
    auto it = by_place_.find(place);
    if (it == by_place_.end()) continue;
    const std::vector<size_t>& idx = it->second.spans;
    auto end = std::upper_bound(idx.begin(), idx.end(), to_us,
                                [this](int64_t t, size_t i) { return t < spans_[i].from_us; });
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

// Both walk spans_ in start order, so the union of the clipped intervals needs no sorting and
// nothing is allocated; both stop at the first span that starts after `to_us`.
bool FaultBudget::touches(const FaultSpan& s, const std::vector<std::string>& places) {
  return std::find(places.begin(), places.end(), s.place) != places.end();
}

int64_t FaultBudget::covered_us(const std::vector<std::string>& places, int64_t from_us, int64_t to_us) const {
  int64_t covered = 0, reach = from_us;
  for (const FaultSpan& s : spans_) {
    if (s.from_us > to_us) break;
    if (!touches(s, places)) continue;
    const int64_t a = std::max(s.from_us, reach), b = std::min(s.to_us, to_us);
    if (a >= b) continue;
    covered += b - a;
    reach = b;
  }
  return covered;
}

std::optional<std::string> FaultBudget::instant_in(const std::vector<std::string>& places, int64_t from_us,
                                                   int64_t to_us) const {
  for (const FaultSpan& s : spans_) {
    if (s.from_us > to_us) break;
    if (s.from_us == s.to_us && s.from_us >= from_us && touches(s, places)) return s.what;
  }
  return std::nullopt;
}

}  // namespace fl::props
