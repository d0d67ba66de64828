// ContributionRecord and the push payload of the combo system (seed 000 §4.3), with the JSON
// codec the worker, the gateway and the front end share.
//
// Contract
// - encode_payload() renders {"activity_id":A,"type":"contributions_response","record":{...}}
//   with a fixed field order (deterministic bytes). decode_payload() accepts any JSON object of
//   that shape (fields in any order, unknown fields ignored); it returns nullopt on malformed
//   input instead of throwing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fl::combo {

struct ContributionRecord {
  int64_t id = 0;           // first_id: the DB row id of the window's first purchase
  int64_t activity_id = 0;  // not in the pb record; carried for isolation checks (payload has it)
  int64_t user_id = 0;
  std::string nickname;
  std::string avatar_url;
  int64_t star_id = 0;
  int64_t item_id = 0;
  std::string item_type;
  std::string item_name;
  std::string item_icon;
  int64_t quantity = 0;
  int64_t combo_count = 0;
  int64_t created_at = 0;  // ms since the Unix epoch, as the writing replica's clock read it
  bool operator==(const ContributionRecord&) const = default;
  std::string describe() const;  // "id=12 a=1 u=3 item=2 qty=3 combo=3 at=..."
  // describe()'s text appended to `out` (every poll reply describes its records: no temporaries).
  void append_description(std::string& out) const;
};

struct Payload {
  int64_t activity_id = 0;
  std::string type;
  std::optional<ContributionRecord> record;
};

std::string encode_record_json(const ContributionRecord& r);
std::string encode_payload(int64_t activity_id, const ContributionRecord& r);
std::optional<Payload> decode_payload(const std::string& json);

// "act:{activityId}:contributions"
std::string channel_of(int64_t activity_id);
// The activity id of such a channel name, or nullopt.
std::optional<int64_t> activity_of_channel(const std::string& channel);

}  // namespace fl::combo
