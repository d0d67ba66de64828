// ClientObserver: what the front ends of the combo system received and displayed (the world's
// view at the clients: each poll response, each UI state after a push or a poll, and each
// mergeComboRecords call the page made). Service code (replicas, workers) reports nothing: the
// judges read what Redis and the DB executed and what the clients saw, never a service's own
// account. It observes; it never changes behaviour.
//
// Times are not passed in: mark() returns a token the observer maps to its own notion of "now"
// (world time in simulation), so impl code never reads a global clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "impl/combo/frontend.h"
#include "impl/combo/record.h"

namespace fl::combo {

struct UiEvent {
  std::string client;
  int64_t activity_id = 0;
  std::string cause;                          // "ws" | "poll"
  std::optional<ContributionRecord> incoming; // the WS record
  std::vector<std::optional<ContributionRecord>> poll_records;  // the poll response
  std::vector<ContributionRecord> before, after;
  std::string error;                          // a JS TypeError thrown by the handler
  std::vector<MergeCall> merges;              // mergeComboRecords calls of this update
};

struct PollEvent {
  std::string client;
  int64_t activity_id = 0;
  uint64_t begin_mark = 0;
  std::vector<std::optional<ContributionRecord>> records;
};

class ClientObserver {
 public:
  virtual ~ClientObserver() = default;
  virtual uint64_t mark() = 0;
  // By value: the front end hands its event over (no copy of the records it carries).
  virtual void ui_changed(UiEvent e) = 0;
  virtual void poll_returned(PollEvent e) = 0;
};

}  // namespace fl::combo
