// Probe: what the combo processes tell an observer (the harness in simulation, a log in real
// mode) besides the operation history. It observes; it never changes behaviour.
//
// Times are not passed in: mark() returns a token the observer maps to its own notion of "now"
// (world time in simulation), so impl code never reads a global clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "impl/combo/record.h"

namespace fl::combo {

enum class PublishOutcome : uint8_t { kOk, kMaybe, kFailed };

struct PublishEvent {
  std::string process;
  uint64_t begin_mark = 0;         // mark() taken right before the attempt
  std::string entry_id;            // stream entry that led to this publish ("" for fallbacks)
  int64_t entry_first_id = 0;      // first_id field of the entry
  int64_t entry_window_id = 0;     // hardened: window_id field of the entry (0 in spec)
  int64_t entry_activity_id = 0;
  int64_t entry_user_id = 0;
  std::string entry_item_type;
  std::string channel;
  std::string payload;             // what was published (empty when unknown)
  PublishOutcome outcome = PublishOutcome::kOk;
};

struct UiEvent {
  std::string client;
  int64_t activity_id = 0;
  std::string cause;                          // "ws" | "poll"
  std::optional<ContributionRecord> incoming; // the WS record
  std::vector<std::optional<ContributionRecord>> poll_records;  // the poll response
  std::vector<ContributionRecord> before, after;
  std::string error;                          // a JS TypeError thrown by the handler
  std::vector<std::vector<ContributionRecord>> merge_inputs;  // arrays given to mergeComboRecords
};

struct PollEvent {
  std::string client;
  int64_t activity_id = 0;
  uint64_t begin_mark = 0;
  std::vector<std::optional<ContributionRecord>> records;
};

class Probe {
 public:
  virtual ~Probe() = default;
  virtual uint64_t mark() = 0;
  // A Redis command of the purchase path for row `pid` failed (any variant; spec ignores it).
  virtual void redis_degraded(const std::string& process, int64_t pid, const std::string& what) = 0;
  virtual void published(const PublishEvent& e) = 0;
  virtual void gateway_received(const std::string& channel, const std::string& payload) = 0;
  virtual void ui_changed(const UiEvent& e) = 0;
  virtual void poll_returned(const PollEvent& e) = 0;
};

}  // namespace fl::combo
