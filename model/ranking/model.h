// Reference model of seed 004 part 1: from the accepted events alone (the records of the
// pre-normalization log), what every full aggregation key topic_id + scope_id + window_type +
// window_start + metric_type (004:L143) must hold. Written from the seed, not from impl/ranking.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fl::ranking::model {

// `k=v` pairs separated by 0x1f (the wire format of the event contract, 004:L122-139).
std::map<std::string, std::string> parse_event(const std::string& text);

// The scenario's constants: board dimensions, topic count, windows, the repeat threshold.
struct Config {
  std::vector<std::string> channels = {"local-news", "technology", "sports"};
  std::vector<std::string> regions = {"CN-SH", "CN-BJ"};
  std::vector<std::string> languages = {"zh-CN", "en-US"};
  std::map<std::string, int64_t> windows = {{"short", 10'000}, {"medium", 60'000}, {"long", 600'000}};
  int topics = 20;
  int suspicious_repeats = 3;
  int64_t max_future_ms = 60'000;
  int64_t max_age_ms = 3'600'000;
};

// 004:L16-19: GLOBAL|ALL|ALL|zh-CN, CHANNEL|technology|CN|zh-CN; nullopt if not canonical.
bool is_canonical_scope(const std::string& scope_id, const Config& cfg);
// The scopes an event with these dimensions belongs to (global, language, region, channel).
std::vector<std::string> scopes_of(const std::map<std::string, std::string>& e, const Config& cfg);
// The main topic of a hint under mapping version 1, or "" (low confidence, unmapped: 004:L78).
std::string main_topic(const std::string& hint, const Config& cfg);
// Why the contract rejects an event (004:L203 first layer), "" if it is valid (replays aside).
std::string contract_violation(const std::map<std::string, std::string>& e, const Config& cfg);

struct Value {
  int64_t raw_count = 0, effective = 0, suspicious = 0, risk_adjusted = 0;
  bool operator==(const Value&) const = default;
  std::string describe() const;
};

// The metrics an event type feeds (004:L167-177), each with whether it counts distinct contents
// (true) or distinct actors (false).
std::vector<std::pair<std::string, bool>> metrics_of(const std::string& event_type);

// 004:L79-89: a scope cutover whose CAS committed (ACTIVE): in `scope`, an event of `source` at
// stable (p, o) is the main topic's; it stays on `source` too iff o < next_offset[p] (the old
// mapping's baseline, which the main topic takes over through the shadow state), and never when
// o >= next_offset[p] (004:L84, L88: whatever its event time). A partition the vector does not
// name had no record at the barrier.
struct MergeCutover {
  std::string source, main, scope;
  std::map<int32_t, int64_t> next_offset;
};

// An accepted event with its coordinates in the pre-normalization log.
struct SourcedEvent {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string payload;
};

// The topics an event of `topic` at (p, o) counts in, in `scope`, under `cutovers`.
std::vector<std::string> owning_topics(const std::string& topic, const std::string& scope, int32_t partition,
                                       int64_t offset, const std::vector<MergeCutover>& cutovers);

// expected_values with merges: each event counts in the topics owning_topics gives it.
std::map<std::string, Value> expected_values(const std::vector<SourcedEvent>& accepted, const Config& cfg,
                                             const std::set<std::string>& late,
                                             const std::vector<MergeCutover>& cutovers);

// "topic#scope#window_type#window_start#metric" -> its value from the distinct accepted events.
// `late` names "eventId#scope_id#window_type" an event never counts in (every copy of it went to
// the late side output of that window, 004:L154).
std::map<std::string, Value> expected_values(const std::vector<std::string>& accepted_payloads, const Config& cfg,
                                             const std::set<std::string>& late = {});
// The same keys' distinct elements: the actors of an actor metric, the contents of content_count
// (what effective counts, 004:L167-177), from which a judge builds the expected sketch.
std::map<std::string, std::set<std::string>> expected_distinct(const std::vector<std::string>& accepted_payloads,
                                                               const Config& cfg,
                                                               const std::set<std::string>& late = {});

}  // namespace fl::ranking::model
