// The gateway (gateway/socket/activity_socket.go: Redis Pub/Sub -> WebSocket) and the front-end
// page (support-activity/index.vue with its composables) as simulated processes.
//
// Contract
// - gateway_main subscribes to act:{A}:contributions for every configured activity, accepts
//   ConnectMessage on kGatewayService and pushes each message (one-way WsPush) to every client
//   connected to that activity. Connections are volatile: clients re-send ConnectMessage every
//   connect_interval_ms. A broken subscription is re-established. Never returns.
// - frontend_main clicks (bursts of purchases, each click its own concurrent request, recorded in
//   the history as `purchase`), receives pushes, polls GetLatestContributions, and keeps a
//   ContributionView, which it renders on its Screen (probe.h) after each push and each poll
//   response it handles, and whose mergeComboRecords runs on it. It reports nothing about itself.
//   It stops clicking at stop_clicking_local_ms and calls GetContributionRanking once at
//   ranking_local_ms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/combo/probe.h"
#include "impl/combo/fixes.h"
#include "impl/ports/history.h"
#include "impl/ports/redis.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"

namespace fl::combo {

struct GatewayOptions {
  std::vector<int64_t> activities = {1};
  int64_t resubscribe_delay_ms = 200;
};

Task<void> gateway_main(Runtime& rt, Rpc& rpc, Redis& redis, GatewayOptions options);

struct ClientOptions {
  Fixes fixes = Fixes::spec();
  int64_t user_id = 1;
  int64_t activity_id = 1;          // the page this client shows and buys on
  std::vector<std::string> items;   // item types this user clicks (empty: all)
  double bursts_per_s = 0.2;        // mean burst arrivals
  int64_t max_clicks = 4;           // clicks per burst: 1..max
  int64_t click_gap_max_ms = 1200;  // gap between clicks of a burst: 50..max
  double batch_probability = 0.1;   // a burst sent as one BatchPurchaseItem
  // Exact boundaries (issue 16): this share of bursts is two clicks, the second exactly one of
  // boundary_gaps_ms after the first (the test harness's critical durations and their
  // neighbours, -1/0/+1 ms, on the client's clock). 0 draws nothing (runs stay as they were).
  double boundary_probability = 0;
  std::vector<int64_t> boundary_gaps_ms;
  int64_t poll_interval_ms = 2000;
  int64_t connect_interval_ms = 2000;
  int64_t rpc_timeout_ms = 2000;
  int64_t start_clicking_local_ms = 0;  // absolute: random bursts start once the service is up
  int64_t stop_clicking_local_ms = 0;   // absolute, on the client's clock
  int64_t ranking_local_ms = 0;         // absolute; 0 = never
  // Scripted clicks instead of random bursts: (offset from boot ms, item type, quantity).
  struct Click {
    int64_t at_ms;
    std::string item_type;
    int64_t quantity;
  };
  std::vector<Click> script;
};

Task<void> frontend_main(Runtime& rt, Rpc& rpc, Recorder& history, Screen* screen, ClientOptions options);

// The service name a client receives its pushes on.
std::string push_service_of(std::string_view client_name);

}  // namespace fl::combo
