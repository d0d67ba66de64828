// Rpc messages of the combo system: the activity service's API, the gateway's socket, pushes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "impl/combo/record.h"

namespace fl::combo {

inline constexpr const char* kActivityService = "activity";
inline constexpr const char* kGatewayService = "gateway";

struct PurchaseLine {
  std::string item_type;
  int64_t quantity = 1;
};

// PurchaseItem (one line) and BatchPurchaseItem (several lines) share this request.
struct PurchaseRequest {
  std::string client_ref;  // instrumentation only: stored in the row so checkers can join
  int64_t activity_id = 0;
  int64_t user_id = 0;
  int64_t star_id = 1;
  bool batch = false;
  std::vector<PurchaseLine> lines;
  std::string describe() const;
};

struct PurchaseReply {
  bool ok = false;
  bool db_not_applied = false;  // !ok and the row certainly was not written
  bool alerted = false;         // hardened: the push could not be secured; alert raised (COMBO-10)
  std::string error;
  std::vector<int64_t> pids;
  std::string describe() const;
};

struct LatestRequest {
  int64_t activity_id = 0;
  std::string describe() const { return "latest a=" + std::to_string(activity_id); }
};

struct LatestReply {
  bool ok = false;
  std::string error;
  std::vector<std::optional<ContributionRecord>> records;  // newest first; nullopt = JSON null
  std::string describe() const;
};

struct RankingRequest {
  int64_t activity_id = 0;
  std::string describe() const { return "ranking a=" + std::to_string(activity_id); }
};

struct RankingReply {
  bool ok = false;
  std::vector<std::pair<int64_t, int64_t>> totals;  // (user_id, Σ quantity), largest first
  std::string describe() const;
};

// A front end opening (or refreshing) its WebSocket on the gateway.
struct ConnectMessage {
  int64_t activity_id = 0;
  std::string client_service;  // where the gateway pushes
  std::string describe() const { return "connect a=" + std::to_string(activity_id) + " " + client_service; }
};

struct WsPush {
  std::string payload;
  std::string describe() const { return "ws " + payload; }
};

}  // namespace fl::combo
