#include "impl/demo/counter.h"

#include <cmath>
#include <utility>

namespace fl::demo {

const std::vector<FixInfo>& demo_fixes() {
  static const std::vector<FixInfo> fixes = {
      {"DM-DEDUP-IDS",
       "demo: the store applies every request",
       {"DEMO-1"},
       "a retried or duplicated increment carries the same request id; apply it once"},
  };
  return fixes;
}

namespace {

Task<MessagePtr> store_inc(StoreState& state, Fixes fixes, MessagePtr request) {
  const IncRequest* inc = message_as<IncRequest>(request);
  IncReply reply;
  if (inc != nullptr) {
    ++state.requests_seen;
    const bool fresh = state.applied_ids.insert(inc->request_id).second;
    // spec applies whatever arrives; DM-DEDUP-IDS applies each request id once (DEMO-1).
    if (fresh || !fixes.has(Fix::kDedupIds)) ++state.counter;
    reply.applied = true;
  }
  co_return make_message(std::move(reply));
}

Task<MessagePtr> replica_inc(Rpc& rpc, int64_t store_timeout_us, MessagePtr request) {
  RpcResult forwarded = co_await rpc.call("store.inc", request, store_timeout_us);
  IncReply reply;
  if (forwarded.ok()) reply = *message_as<IncReply>(forwarded.reply);
  co_return make_message(std::move(reply));
}

int64_t next_gap_us(Runtime& rt, double rate_per_s) {
  // Exponential inter-arrival times from the process's deterministic stream.
  const double u = static_cast<double>(rt.random_u64() >> 11) * 0x1.0p-53;
  return static_cast<int64_t>(-std::log1p(-u) / rate_per_s * 1e6) + 1;
}

}  // namespace

Task<void> store_main(Runtime& rt, Rpc& rpc, StoreState& state, Fixes fixes) {
  (void)rt;
  rpc.serve("store.inc", [&state, fixes](MessagePtr request) { return store_inc(state, fixes, std::move(request)); });
  co_return;
}

Task<void> replica_main(Runtime& rt, Rpc& rpc, int64_t store_timeout_us) {
  (void)rt;
  rpc.serve("counter.inc", [&rpc, store_timeout_us](MessagePtr request) {
    return replica_inc(rpc, store_timeout_us, std::move(request));
  });
  co_return;
}

Task<void> client_main(Runtime& rt, Rpc& rpc, Recorder& history, ClientOptions options) {
  for (uint64_t n = 1;; ++n) {
    co_await rt.clock().sleep_us(next_gap_us(rt, options.rate_per_s));
    if (rt.clock().now_us() >= options.stop_at_local_us) co_return;
    IncRequest request{std::string(rt.process_name()) + "#" + std::to_string(rt.incarnation()) + "-" +
                       std::to_string(n)};
    const uint64_t op = history.invoke(rt.process_name(), "inc", request.request_id);
    MessagePtr message = make_message(request);
    Outcome outcome = Outcome::kFail;
    for (int attempt = 0; attempt < options.max_attempts; ++attempt) {
      RpcResult r = co_await rpc.call("counter.inc", message, options.timeout_us);
      if (r.ok() && message_as<IncReply>(r.reply)->applied) {
        outcome = Outcome::kOk;
        break;
      }
      // A timeout may have applied the increment: from now on the outcome is at best unknown.
      if (r.indeterminate() || r.ok()) outcome = Outcome::kInfo;
    }
    history.complete(op, outcome, "");
  }
}

}  // namespace fl::demo
