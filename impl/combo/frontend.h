// The front end of seed 000 §5, ported to C++ with JavaScript's semantics.
//
// JavaScript records are objects shared by reference: `[...records]` copies the array, not the
// objects, and mergeComboRecords mutates the objects it merges into. The port keeps that:
// a record is a shared_ptr<JsRecord>, copied arrays share pointees, and the spec merge mutates
// them. Accessing a property of `undefined`/`null` throws a TypeError in JS; the port throws
// JsTypeError at the same places.
//
// - merge_combo_records_spec: §5.2 line by line (reverse walk, indexByKey kept across splice,
//   |Δcreated_at| <= 3000, id = min, in-place mutation).
// - merge_combo_records_dedup (CB-FE-DEDUP-MERGE): de-duplicates by id (the server already merged
//   windows) at the first occurrence's position, never mutates its input; with CB-FE-KEEP-LARGER
//   the copy with the larger quantity wins.
// - ContributionView: records.value plus the WS handler (§5.3 onWsMessage) and the polling
//   handler (§5.3 fetchLatest) of one page, bounded by kMaxRecords (slice(-5) in §1.3); it runs
//   mergeComboRecords through its Screen (probe.h) when it has one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "impl/combo/record.h"
#include "impl/combo/fixes.h"

namespace fl::combo {

inline constexpr int64_t kComboWindowMs = 3000;
inline constexpr size_t kMaxRecords = 5;

struct JsTypeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using JsRecord = ContributionRecord;
using JsRecordPtr = std::shared_ptr<JsRecord>;
using JsArray = std::vector<JsRecordPtr>;  // a null element is JS `null`

JsArray merge_combo_records_spec(const JsArray& records);
JsArray merge_combo_records_dedup(const JsArray& records, bool keep_larger);
JsArray merge_combo_records(const Fixes& fixes, const JsArray& records);

// Deep copy (to snapshot a UI state: later mutations must not change a recorded snapshot).
std::vector<ContributionRecord> snapshot(const JsArray& records);
JsArray to_js(const std::vector<ContributionRecord>& records);

class Screen;  // probe.h

class ContributionView {
 public:
  // `screen`: where mergeComboRecords runs (Screen::run_merge); null: called directly.
  ContributionView(Fixes fixes, int64_t activity_id, Screen* screen = nullptr)
      : fixes_(fixes), activity_id_(activity_id), screen_(screen) {}

  // useContributionRealtime.js onWsMessage. May throw JsTypeError (spec).
  void on_ws_message(const std::optional<Payload>& payload);
  // useContributionPolling.js fetchLatest after the response arrived; `list` is the response's
  // records, newest first (std::nullopt elements are JSON nulls). May throw JsTypeError (spec).
  void on_poll_response(const std::vector<std::optional<ContributionRecord>>& list);

  const JsArray& records() const { return records_; }
  std::vector<ContributionRecord> displayed() const { return snapshot(records_); }
  int64_t activity_id() const { return activity_id_; }

 private:
  int64_t highest_id() const;
  JsArray merge(const JsArray& input);

  void keep_bounded(JsArray merged, bool from_ws);

  Fixes fixes_;
  int64_t activity_id_;
  Screen* screen_;
  JsArray records_;
  int64_t latest_timestamp_ = 0;
  int64_t latest_id_ = 0;
};

// GetLatestContributions' in-memory merge (seed §4.6) over rows already read from SQL.
struct ContributionRow {
  int64_t id = 0;
  int64_t activity_id = 0;
  int64_t user_id = 0;
  int64_t star_id = 0;
  int64_t item_id = 0;
  std::string item_type, item_name, item_icon, nickname, avatar_url;
  int64_t quantity = 0;
  int64_t created_at = 0;
  std::optional<int64_t> window_id;  // CB-POLL-BY-WINDOW: the window the server bound
};

// spec: `rows` ordered created_at DESC (as its SQL returns them); returns len(rows) slots, the
// ones not starting a group left nil, exactly as `records[i] = ...; i = j` does.
std::vector<std::optional<ContributionRecord>> merge_latest_spec(const std::vector<ContributionRow>& rows);
// CB-POLL-BY-WINDOW (COMBO-11): one record per server-bound window (window_id, or the row itself
// when the window is unknown), id = min pid, quantity = Σ, newest window first, no nils.
std::vector<std::optional<ContributionRecord>> merge_latest_by_window(const std::vector<ContributionRow>& rows);

}  // namespace fl::combo
