#include "impl/toy/visits.h"

#include <cmath>
#include <utility>

#include "impl/toy/scripts.h"

namespace fl::toy {

const std::vector<FixInfo>& toy_fixes() {
  static const std::vector<FixInfo> fixes = {
      {"TOY-DEDUP",
       "docs/systems/toy.md §spec: web INCRs toy:visits for every visit that arrives",
       {"TOY-1"},
       "a retried or duplicated visit carries the same request id; record it with SET NX and count it once"},
  };
  return fixes;
}

std::string VisitReply::describe() const {
  switch (status) {
    case Status::kCounted:
      return "visit-counted " + std::to_string(count);
    case Status::kNotCounted:
      return "visit-not-counted";
    case Status::kUnknown:
      return "visit-unknown";
  }
  return "visit-?";
}

namespace {

// Redis's answer as a visit's reply: a count, certainly nothing, or maybe counted.
VisitReply reply_of(const RedisReply& r) {
  VisitReply reply;
  if (r.kind == RedisReply::Kind::kInteger) {
    reply.status = VisitReply::Status::kCounted;
    reply.count = r.integer;
  } else if (r.kind == RedisReply::Kind::kTransportError && r.indeterminate) {
    reply.status = VisitReply::Status::kUnknown;
  }
  return reply;
}

Task<MessagePtr> count_visit(Redis& redis, Fixes fixes, MessagePtr request) {
  const VisitRequest* visit = message_as<VisitRequest>(request);
  if (visit == nullptr) co_return make_message(VisitReply{});
  // spec counts whatever arrives; TOY-DEDUP counts each request id once (TOY-1).
  if (!fixes.has(Fix::kDedup)) co_return make_message(reply_of(co_await redis.command({"INCR", kCounterKey})));
  const RedisReply r =
      co_await redis.script(kVisitScript, {kCounterKey, seen_key(visit->request_id)}, {visit->request_id});
  co_return make_message(reply_of(r));
}

int64_t next_gap_us(Runtime& rt, double rate_per_s) {
  // Exponential inter-arrival times from the process's deterministic stream.
  const double u = static_cast<double>(rt.random_u64() >> 11) * 0x1.0p-53;
  return static_cast<int64_t>(-std::log1p(-u) / rate_per_s * 1e6) + 1;
}

// One visit, retried with the same request id until a web process answers it counted.
Task<Outcome> visit_with_retries(Rpc& rpc, const std::string& request_id, const ClientOptions& options) {
  MessagePtr message = make_message(VisitRequest{request_id});
  Outcome outcome = Outcome::kFail;
  for (int attempt = 0; attempt < options.max_attempts; ++attempt) {
    const RpcResult r = co_await rpc.call(kVisitService, message, options.timeout_us);
    const VisitReply* reply = r.ok() ? message_as<VisitReply>(r.reply) : nullptr;
    if (reply != nullptr && reply->status == VisitReply::Status::kCounted) co_return Outcome::kOk;
    // No answer, or Redis's answer lost on the way to web: it may have counted. From now on the
    // outcome is at best unknown.
    if (r.indeterminate() || (reply != nullptr && reply->status == VisitReply::Status::kUnknown)) {
      outcome = Outcome::kInfo;
    }
  }
  co_return outcome;
}

}  // namespace

Task<void> web_main(Runtime& rt, Rpc& rpc, Redis& redis, WebOptions options) {
  rpc.serve(kVisitService, [&redis, fixes = options.fixes](MessagePtr request) {
    return count_visit(redis, fixes, std::move(request));
  });
  // Keeps the caller's frame (and `redis`) alive while the process lives.
  for (;;) co_await rt.clock().sleep_us(3'600'000'000);
}

Task<void> client_main(Runtime& rt, Rpc& rpc, Recorder& history, ClientOptions options) {
  for (uint64_t n = 1;; ++n) {
    co_await rt.clock().sleep_us(next_gap_us(rt, options.rate_per_s));
    if (rt.clock().now_us() >= options.stop_at_local_us) co_return;
    const std::string request_id =
        std::string(rt.process_name()) + "#" + std::to_string(rt.incarnation()) + "-" + std::to_string(n);
    const uint64_t op = history.invoke(rt.process_name(), "visit", request_id);
    const Outcome outcome = co_await visit_with_retries(rpc, request_id, options);
    history.complete(op, outcome, "");
  }
}

}  // namespace fl::toy
