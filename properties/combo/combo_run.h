// ComboRun: everything a finished combo run offers its checkers, as plain data.
//
// Times are world microseconds. A publish happened somewhere in [begin_us, end_us]; a purchase in
// [invoke_us, complete_us]. Built by the harness adapter (harness/systems/combo.cc) from the
// history, the probe, and the final Redis and SQL state; tests build it by hand.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "impl/combo/frontend.h"
#include "impl/combo/probe.h"
#include "impl/combo/record.h"
#include "model/combo/combo_model.h"

namespace fl::combo {

struct PurchaseOp {                    // one PurchaseItem / BatchPurchaseItem call
  std::string ref;
  int64_t activity = 0, user = 0;
  int64_t lines = 1;
  enum class Result : uint8_t { kOk, kFail, kInfo } result = Result::kInfo;
  bool alerted = false;
  int64_t invoke_us = 0, complete_us = -1;
};

struct RowObs {
  ContributionRow row;
  std::string client_ref;              // "<op ref>#<line>"
};

struct PublishObs {
  PublishEvent event;
  int64_t begin_us = 0, end_us = 0;
  std::optional<ContributionRecord> record;  // decoded payload
  bool definite = false;               // outcome ok, or the gateway received the payload
};

struct UiObs {
  UiEvent event;
  int64_t time_us = 0;
};

struct PollObs {
  PollEvent event;
  int64_t begin_us = 0, end_us = 0;
};

struct RankingObs {
  int64_t activity = 0;
  int64_t time_us = 0;
  std::vector<std::pair<int64_t, int64_t>> totals;
};

struct RedisKeyObs {
  std::string key;
  int64_t ttl_ms = -1;                 // -1: no TTL
  int64_t time_us = 0;
};

// COMBO-6 sampled: the unacknowledged stream entries (pending in the group, or not yet
// delivered) that, at one instant, would all process the same live window state.
struct UnackedObs {
  int64_t time_us = 0;
  std::string window_state;             // the live Redis key holding the window's state
  std::vector<std::string> entry_ids;   // >= 2 entries bound to it
};

struct ComboRun {
  Variant variant = Variant::kSpec;
  int64_t window_ms = 3000;
  int64_t timely_slack_ms = 1000;      // Δ of COMBO-4 without faults
  bool faults_injected = false;
  // The run's only fault was one service process crashing and restarting (a crash point):
  // COMBO-4's second clause applies, publish by t_first + window + recover_slack_ms.
  bool single_crash = false;
  int64_t recover_slack_ms = 10'000;   // Δ_recover of COMBO-4
  bool redis_lost_data = false;        // the Redis process restarted (persistence may lose writes)
  // When Redis was down or restarting ([from, to] world us, observed by sampling). Writes acked
  // up to aof_loss_ms before a crash may be lost (AOF everysec), so windows alive then are exempt
  // from the exact-quantity checks (COMBO-2's precondition: "does not lose Redis data").
  std::vector<std::pair<int64_t, int64_t>> redis_outages;
  int64_t aof_loss_ms = 2000;
  int64_t end_us = 0;

  std::vector<PurchaseOp> ops;
  bool rows_known = false;
  std::vector<RowObs> rows;            // final activity_contributions
  std::vector<PublishObs> publishes;
  std::vector<std::pair<int64_t, std::string>> degraded;  // (pid, what)
  std::vector<UiObs> ui;
  std::vector<PollObs> polls;
  std::vector<RankingObs> rankings;
  bool redis_known = false;
  std::vector<RedisKeyObs> final_keys;  // every live key at the end
  std::vector<RedisKeyObs> no_ttl_samples;  // combo:agg* keys seen with TTL -1 during the run
  int64_t final_pending = -1;          // XPENDING count at the end (-1 unknown)
  int64_t unacked_samples_taken = 0;   // COMBO-6 samples of the stream (every 100 ms)
  int64_t stream_maxlen = 0;           // XADD MAXLEN ~ the services use (0: unknown)
  int64_t stream_len_max = 0;          // longest the stream was at any sample
  std::vector<UnackedObs> unacked_shared;  // samples where >= 2 unacked entries shared a window
};

// Derived views shared by the checkers.
std::vector<model::combo::Purchase> purchases_of(const ComboRun& run);
// Definite records with their publish events.
std::vector<const PublishObs*> definite_publishes(const ComboRun& run);
model::combo::Assignment assignment_of(const ComboRun& run);
model::combo::Key key_of(const ContributionRecord& r);
// True when [from_us, to_us] comes within aof_loss_ms before (or during) a Redis outage.
bool touched_by_redis_loss(const ComboRun& run, int64_t from_us, int64_t to_us);

}  // namespace fl::combo
