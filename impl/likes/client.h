// LikesClient: a user's app (002 section 1.2): likes, unlikes, double-taps, retries on timeouts,
// reads counts and like states, and records every attempt in the history (Jepsen style).
//
// History format (properties/likes and model/likes parse it):
//   op     "like" | "unlike" | "count" | "state"
//   args   "asset=A user=U req=R" (count: "asset=A req=R")
//   result like/unlike: "ok" | "already"; count: "count=N"; state: "state=0|1"; else the error.
//   Outcome kOk: the reply said done or already; kFail: certainly not executed; kInfo: unknown.
// A retried request keeps its request id and is recorded as a new operation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "impl/likes/messages.h"
#include "impl/ports/history.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/task.h"

namespace fl::likes {

struct ClientConfig {
  int64_t asset_count = 4;     // assets 1..asset_count
  std::vector<int64_t> users;  // the users this app acts for (may overlap other clients')
  int64_t star = 1;
  uint64_t client_id = 0;  // < 2^16; makes request ids unique across clients
  double rate_per_s = 5;   // mean op arrivals per second (exponential gaps)
  // Op mix (weights).
  double like_weight = 4, unlike_weight = 3, count_weight = 2, state_weight = 2;
  double double_tap_probability = 0.15;  // a like/unlike sent twice at once
  // The asset page: the app fetches the pair's state (and the count) when it shows the button and
  // does not wait for them; the user's tap follows after an exponential think time of mean
  // view_gap_us. A like/unlike comes from such a page view with this probability.
  double view_probability = 0;
  int64_t view_gap_us = 100'000;
  // Exact boundaries (issue 16): with this probability a like/unlike is followed, on the same
  // (asset, user), by another op (like, unlike or a state read, drawn) exactly one of
  // boundary_gaps_ms later by the app's clock: the scenario's critical durations (the state TTL,
  // the sync interval, the timeouts) and their neighbours, -1 ms, 0, +1 ms.
  double boundary_probability = 0;
  std::vector<int64_t> boundary_gaps_ms;
  int max_retries = 2;  // resend the same request after a timeout/reset
  int64_t timeout_us = 500'000;
  int64_t retry_delay_us = 100'000;
  std::shared_ptr<const bool> stop;  // set by the harness: stop issuing new operations
  int64_t start_delay_us = 0;        // the app opens after the backend booted (not a fault)
};

class LikesClient {
 public:
  // `recorder` must outlive every task of the client.
  LikesClient(Runtime& runtime, Rpc& rpc, Recorder& recorder, ClientConfig config);

  // Issues operations until *config.stop becomes true (each op in its own detached task).
  static Task<void> run(std::shared_ptr<LikesClient> self);
  // One logical operation with its retries.
  static Task<void> perform(std::shared_ptr<LikesClient> self, LikeRequest request);
  // `first`, then a follow-up op on its pair exactly `gap_ms` later (exact boundaries).
  static Task<void> boundary_pair(std::shared_ptr<LikesClient> self, LikeRequest first, int64_t gap_ms);
  // A page view: state and count reads of the pair, then the tap `gap_us` later.
  static Task<void> view_then_tap(std::shared_ptr<LikesClient> self, LikeRequest tap, int64_t gap_us);

 private:
  double uniform();
  LikeRequest next_request();
  uint64_t next_request_id();

  Runtime& runtime_;
  Rpc& rpc_;
  Recorder& recorder_;
  ClientConfig config_;
  uint64_t next_request_ = 1;
};

// History helpers shared with the model and the checkers.
std::string request_args(const LikeRequest& r);

}  // namespace fl::likes
