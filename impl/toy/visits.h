// The toy visit counter: the worked example of adding a system (docs/adding-a-system.md,
// docs/systems/toy.md). Clients record visits; web processes count them in Redis.
//
// Topology: clients -> web-N ("toy.visit", RPC) -> redis. A client sends visit(request_id) and,
// when the answer does not come (timeout, reset) or says the count is unknown, sends the same
// request id again, up to max_attempts times.
//   spec      web counts every visit that arrives: INCR toy:visits. A retried visit whose first
//             answer was lost, or a duplicated request, is counted twice.
//   hardened  spec plus one named fix, TOY-DEDUP: web runs the toy_visit script
//             (impl/toy/scripts.h), which records the request id with SET NX and INCRs only for
//             a new one (protects TOY-1: each request id counted once).
//
// Contract
// - Service code reaches the world only through the ports (Runtime, Rpc, Redis, Recorder).
// - A visit is recorded in the history as op "visit" with args = its request id: kOk when a web
//   process answered it counted, kInfo when it may have been counted (no answer, or Redis's
//   answer to web was lost), kFail only when every attempt was certainly not counted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/ports/fixes.h"
#include "impl/ports/history.h"
#include "impl/ports/redis.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/task.h"

namespace fl::toy {

// The toy's named fixes (impl/ports/fixes.h); toy_fixes()[i] describes value i.
enum class Fix : uint8_t { kDedup };
using Fixes = FixSet<Fix>;
const std::vector<FixInfo>& toy_fixes();

inline constexpr const char* kVisitService = "toy.visit";

struct VisitRequest {
  std::string request_id;
  std::string describe() const { return "visit " + request_id; }
};

struct VisitReply {
  enum class Status : uint8_t { kCounted, kNotCounted, kUnknown };
  Status status = Status::kNotCounted;
  int64_t count = 0;  // the counter after the visit (kCounted only)
  std::string describe() const;
};

struct WebOptions {
  Fixes fixes = Fixes::spec();
};

struct ClientOptions {
  double rate_per_s = 5;
  int64_t timeout_us = 200'000;  // one attempt's patience
  int max_attempts = 5;
  int64_t stop_at_local_us = 0;  // no new visit at or after this local time
};

// Serves kVisitService with `redis` until the process dies. `redis` must outlive the task.
Task<void> web_main(Runtime& rt, Rpc& rpc, Redis& redis, WebOptions options);
// Sends visits at exponential gaps until stop_at_local_us, recording each in `history`.
Task<void> client_main(Runtime& rt, Rpc& rpc, Recorder& history, ClientOptions options);

}  // namespace fl::toy
