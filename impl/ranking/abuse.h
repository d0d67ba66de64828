// The three layers against abuse of seed 004 §9.1 (004:L203) and the four values they leave per
// window and candidate (§9.2, L204-211), for one topic's events of one window:
//   layer 1: malformed, forged and replayed events are received (raw) but never counted;
//   layer 2: an actor's short-term repeats count once (effective = distinct actors), and actors
//            sharing one device or one IP beyond a limit are suspicious;
//   layer 3: new accounts acting in the same short interval in numbers, and one content digest
//            posted by many accounts (a similar-content matrix), are suspicious.
// adjusted = effective - suspicious is what scoring reads; the raw and suspicious values stay, so a
// reader can explain why a loud topic did not rank (L211). Abnormal regions and the forwarding
// graph (the rest of L203) need data the events here do not carry: not modelled.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "impl/ranking/scoring.h"

namespace fl::ranking {

// One behaviour event as the aggregation sees it (the contract's fields that matter here, L122-140).
struct BehaviourEvent {
  int64_t at_ms = 0;
  std::string event_id;  // a second event with the same id is a replay (layer 1)
  std::string topic_id;
  Signal signal = Signal::kSearch;
  std::string actor, device, ip;
  int64_t account_age_days = 0;
  std::string content_digest;  // "" for signals without content
  bool well_formed = true;     // false: a missing field, an impossible time or a forged source
  bool operator==(const BehaviourEvent&) const = default;
};

struct AbuseOptions {
  int64_t actors_per_device_max = 3;  // more actors on one device in one window: all suspicious
  int64_t actors_per_ip_max = 20;
  int64_t new_account_age_days = 2;       // at most this old: a new account
  int64_t sync_interval_ms = 2000;        // new accounts acting in the same interval ...
  int64_t sync_accounts_min = 8;          // ... at least this many: synchronized
  int64_t same_content_accounts_min = 5;  // one content digest from at least this many accounts
  bool operator==(const AbuseOptions&) const = default;
};

// The four values per signal of one topic's events in one window (L206-209). The events may come
// in any order; the result does not depend on it.
std::array<WindowValues, kSignals> window_values(const std::vector<BehaviourEvent>& events, const AbuseOptions& o);

}  // namespace fl::ranking
