#include "impl/ranking/abuse.h"

#include <map>
#include <set>

#include "impl/ports/assert.h"

namespace fl::ranking {

namespace {

// Layer 1 (L203): the events that may count, each replayed event id once.
std::vector<const BehaviourEvent*> admitted(const std::vector<BehaviourEvent>& events) {
  std::set<std::string> ids;
  std::vector<const BehaviourEvent*> out;
  for (const BehaviourEvent& e : events) {
    if (!e.well_formed) continue;
    if (!e.event_id.empty() && !ids.insert(e.event_id).second) continue;
    out.push_back(&e);
  }
  return out;
}

// Adds every actor of a group with at least `min` distinct actors to `flagged`.
void flag_crowds(const std::map<std::string, std::set<std::string>>& actors_by_key, int64_t min,
                 std::set<std::string>* flagged) {
  for (const auto& [key, actors] : actors_by_key) {
    if (key.empty() || static_cast<int64_t>(actors.size()) < min) continue;
    flagged->insert(actors.begin(), actors.end());
  }
}

// Layers 2 and 3 (L203): the actors whose events are suspicious in this window.
std::set<std::string> suspicious_actors(const std::vector<const BehaviourEvent*>& events, const AbuseOptions& o) {
  std::map<std::string, std::set<std::string>> by_device, by_ip, by_sync_interval, by_content;
  for (const BehaviourEvent* e : events) {
    by_device[e->device].insert(e->actor);
    by_ip[e->ip].insert(e->actor);
    if (e->account_age_days <= o.new_account_age_days) {
      by_sync_interval[std::to_string(e->at_ms / o.sync_interval_ms)].insert(e->actor);
    }
    by_content[e->content_digest].insert(e->actor);
  }
  std::set<std::string> flagged;
  flag_crowds(by_device, o.actors_per_device_max + 1, &flagged);
  flag_crowds(by_ip, o.actors_per_ip_max + 1, &flagged);
  flag_crowds(by_sync_interval, o.sync_accounts_min, &flagged);
  flag_crowds(by_content, o.same_content_accounts_min, &flagged);
  return flagged;
}

}  // namespace

std::array<WindowValues, kSignals> window_values(const std::vector<BehaviourEvent>& events, const AbuseOptions& o) {
  FL_ASSERT(o.sync_interval_ms > 0);
  std::array<WindowValues, kSignals> out{};
  for (const BehaviourEvent& e : events) ++out[static_cast<int>(e.signal)].raw;
  const std::vector<const BehaviourEvent*> kept = admitted(events);
  const std::set<std::string> flagged = suspicious_actors(kept, o);
  std::array<std::set<std::string>, kSignals> actors;
  for (const BehaviourEvent* e : kept) actors[static_cast<int>(e->signal)].insert(e->actor);
  for (int s = 0; s < kSignals; ++s) {
    out[s].effective = static_cast<int64_t>(actors[s].size());
    for (const std::string& a : actors[s]) out[s].suspicious += flagged.count(a) ? 1 : 0;
    out[s].adjusted = out[s].effective - out[s].suspicious;
    FL_ASSERT(out[s].adjusted >= 0 && out[s].effective <= out[s].raw);
  }
  return out;
}

}  // namespace fl::ranking
