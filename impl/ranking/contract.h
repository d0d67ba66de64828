// The event contract of 004:L122-139 and the keys every later stage carries: the canonical
// scope_id (004:L16-19), the scope expansion of the board configuration (004:L142), the windows
// (004:L160-165), the metrics (004:L167-177) and the full aggregation key (004:L143).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/ports/digest.h"  // fnv_hex

namespace fl::ranking {

// One business event as the producers send it (004:L122-139). A field the producer left out is
// absent from `fields`; the validator, not the parser, decides what is missing.
struct Event {
  std::map<std::string, std::string> fields;  // eventId, eventType, eventTime (ms), receivedAt (ms), ...
  std::string get(const std::string& k) const;
  bool has(const std::string& k) const { return fields.count(k) > 0; }
  std::string encode() const;
  static Event decode(const std::string& text);
};

// The §6.1 field names. scopeDimensions are channelId, regionId, language (each optional).
const std::vector<std::string>& required_fields();

// The board configuration: which dimension values exist, which services own which event types,
// the validation tolerances and the window lengths. The seed leaves all of them to the product
// (004:L14, L166); docs/systems/ranking.md lists the choices.
struct BoardConfig {
  std::vector<std::string> channels = {"local-news", "technology", "sports"};
  std::vector<std::string> regions = {"CN-SH", "CN-BJ"};
  std::vector<std::string> languages = {"zh-CN", "en-US"};
  int64_t max_future_ms = 60'000;  // eventTime later than receivedAt by more: impossible
  int64_t max_age_ms = 3'600'000;  // eventTime older than receivedAt by more: impossible
  std::map<std::string, int64_t> windows = {{"short", 10'000}, {"medium", 60'000}, {"long", 600'000}};
  int scope_rule_version = 1;
  int suspicious_repeats = 3;  // an actor with more events than this in one key is suspicious
};

// `s` cut at every `sep` (a trailing empty field dropped), as the ranking's text rows are written.
std::vector<std::string> split(const std::string& s, char sep);
// The same fields as views into `s`, into `out` (cleared first): no copies.
void split_views(std::string_view s, char sep, std::vector<std::string_view>& out);

// The owning service of an event type (a forged source is any other); "" for an unknown type.
std::string owner_of(const std::string& event_type);
// The metrics an event type feeds (004:L167-177): metric type -> what is counted distinct
// ("actor" or "content").
std::vector<std::pair<std::string, std::string>> metrics_of(const std::string& event_type);

// scope_id = canonical(scope_type, channel_id, region_id, language) (004:L16): fixed field order,
// a missing dimension is the explicit ALL (004:L19); nullopt for an invalid combination.
std::optional<std::string> canonical_scope(const std::string& type, const std::string& channel,
                                           const std::string& region, const std::string& language);
// The scopes one event derives under the board configuration (004:L142); empty if its dimensions
// are invalid (never a fallback to the global scope).
std::vector<std::string> expand_scopes(const BoardConfig& cfg, const Event& e);

// The start of the window of `size_ms` that holds `event_ms` (floor division: windows tile the time
// line, negative times included; 004:L160-165).
int64_t window_start_of(int64_t event_ms, int64_t size_ms);

// The idempotency record of one keyed copy (a keyed-log Event). Spec: 004:L87's source_partition +
// source_offset + scope_id; RK-DEDUP-EVENT-ID (`by_event_id`): source + event_id (004:L98), so the
// same event at two offsets is one event. The aggregators and the reconciler both count by it.
std::string idempotency_record(const Event& keyed_copy, bool by_event_id);

// The full aggregation key topic_id + scope_id + window_type + window_start + metric_type (004:L143).
struct AggKey {
  std::string topic_id, scope_id, window_type;
  int64_t window_start_ms = 0;
  std::string metric_type;
  std::string str() const;
  auto operator<=>(const AggKey&) const = default;
};

// The value layers kept apart (004:L204-209).
struct AggValue {
  int64_t raw_count = 0;       // events applied
  int64_t effective = 0;       // distinct actors (or contents)
  int64_t suspicious = 0;      // actors above the repeat threshold
  int64_t risk_adjusted = 0;   // effective - suspicious
  std::string digest() const;  // value digest stored with every version (004:L98)
  bool operator==(const AggValue&) const = default;
};

}  // namespace fl::ranking
