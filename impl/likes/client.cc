#include "impl/likes/client.h"
#include "impl/ports/assert.h"

#include <cmath>

namespace fl::likes {

std::string request_args(const LikeRequest& r) {
  std::string s = "asset=" + std::to_string(r.asset);
  if (r.op != Op::kCount) s += " user=" + std::to_string(r.user);
  s += " req=" + std::to_string(r.request_id);
  return s;
}

LikesClient::LikesClient(Runtime& runtime, Rpc& rpc, Recorder& recorder, ClientConfig config)
    : runtime_(runtime), rpc_(rpc), recorder_(recorder), config_(std::move(config)) {
  FL_ASSERT(!config_.users.empty());
  FL_ASSERT(config_.asset_count >= 1);
  FL_ASSERT(config_.rate_per_s > 0);
}

double LikesClient::uniform() {
  // 53 random bits -> [0, 1).
  return static_cast<double>(runtime_.random_u64() >> 11) * (1.0 / 9007199254740992.0);
}

LikeRequest LikesClient::next_request() {
  LikeRequest r;
  const double total = config_.like_weight + config_.unlike_weight + config_.count_weight + config_.state_weight;
  double x = uniform() * total;
  if ((x -= config_.like_weight) < 0)
    r.op = Op::kLike;
  else if ((x -= config_.unlike_weight) < 0)
    r.op = Op::kUnlike;
  else if ((x -= config_.count_weight) < 0)
    r.op = Op::kCount;
  else
    r.op = Op::kState;
  r.asset = 1 + static_cast<int64_t>(runtime_.random_u64() % static_cast<uint64_t>(config_.asset_count));
  r.user = config_.users[runtime_.random_u64() % config_.users.size()];
  r.star = config_.star;
  r.request_id = next_request_id();
  return r;
}

// Request ids are unique per client incarnation: process name is part of the history anyway.
uint64_t LikesClient::next_request_id() {
  return (config_.client_id << 48) + (static_cast<uint64_t>(runtime_.incarnation()) << 40) + next_request_++;
}

Task<void> LikesClient::view_then_tap(std::shared_ptr<LikesClient> self, LikeRequest tap, int64_t gap_us) {
  LikeRequest state = tap;
  state.op = Op::kState;
  state.request_id = self->next_request_id();
  LikeRequest count = tap;
  count.op = Op::kCount;
  count.request_id = self->next_request_id();
  self->runtime_.spawn("view-state", perform(self, state));
  self->runtime_.spawn("view-count", perform(self, count));
  co_await self->runtime_.clock().sleep_us(gap_us);
  co_await perform(self, tap);
}

Task<void> LikesClient::run(std::shared_ptr<LikesClient> self) {
  if (self->config_.start_delay_us > 0) co_await self->runtime_.clock().sleep_us(self->config_.start_delay_us);
  for (;;) {
    const double gap_s = -std::log(1.0 - self->uniform()) / self->config_.rate_per_s;
    co_await self->runtime_.clock().sleep_us(static_cast<int64_t>(gap_s * 1e6) + 1);
    if (self->config_.stop && *self->config_.stop) co_return;
    LikeRequest r = self->next_request();
    const bool write = r.op == Op::kLike || r.op == Op::kUnlike;
    if (write && self->config_.view_probability > 0 && self->uniform() < self->config_.view_probability) {
      const double gap_us = -std::log(1.0 - self->uniform()) * static_cast<double>(self->config_.view_gap_us);
      self->runtime_.spawn("view", view_then_tap(self, r, static_cast<int64_t>(gap_us) + 1));
      continue;
    }
    const ClientConfig& c = self->config_;
    if (write && c.boundary_probability > 0 && !c.boundary_gaps_ms.empty() &&
        self->uniform() < c.boundary_probability) {
      const int64_t gap_ms = c.boundary_gaps_ms[static_cast<size_t>(self->uniform() * c.boundary_gaps_ms.size()) %
                                                c.boundary_gaps_ms.size()];
      self->runtime_.spawn("boundary", boundary_pair(self, r, gap_ms));
      continue;
    }
    if (write && self->uniform() < self->config_.double_tap_probability) {
      LikeRequest second = r;
      second.request_id = self->next_request_id();
      self->runtime_.spawn("double-tap", perform(self, second));
    }
    self->runtime_.spawn("op", perform(self, r));
  }
}

Task<void> LikesClient::boundary_pair(std::shared_ptr<LikesClient> self, LikeRequest first, int64_t gap_ms) {
  self->runtime_.spawn("op", perform(self, first));
  co_await self->runtime_.clock().sleep_us(gap_ms * 1000);
  if (self->config_.stop && *self->config_.stop) co_return;
  static constexpr Op kFollowUps[] = {Op::kLike, Op::kUnlike, Op::kState};
  LikeRequest next = first;
  next.op = kFollowUps[static_cast<size_t>(self->uniform() * 3) % 3];
  next.request_id = self->next_request_id();
  co_await perform(self, next);
}

Task<void> LikesClient::perform(std::shared_ptr<LikesClient> self, LikeRequest request) {
  for (int attempt = 0; attempt <= self->config_.max_retries; ++attempt) {
    const uint64_t id =
        self->recorder_.invoke(self->runtime_.process_name(), op_name(request.op), request_args(request));
    RpcResult res = co_await self->rpc_.call(kService, make_message(request), self->config_.timeout_us);
    if (res.status == RpcStatus::kUnavailable) {
      self->recorder_.complete(id, Outcome::kFail, "unavailable");
      co_return;
    }
    if (res.indeterminate()) {
      self->recorder_.complete(id, Outcome::kInfo, rpc_status_name(res.status));
      co_await self->runtime_.clock().sleep_us(self->config_.retry_delay_us);
      continue;  // retry the same request id
    }
    const LikeReply* reply = message_as<LikeReply>(res.reply);
    if (reply == nullptr) {
      self->recorder_.complete(id, Outcome::kInfo, "bad reply");
      co_return;
    }
    switch (reply->status) {
      case ReplyStatus::kOk:
        if (request.op == Op::kCount)
          self->recorder_.complete(id, Outcome::kOk, "count=" + std::to_string(reply->value));
        else if (request.op == Op::kState)
          self->recorder_.complete(id, Outcome::kOk, "state=" + std::to_string(reply->value));
        else
          self->recorder_.complete(id, Outcome::kOk, "ok");
        break;
      case ReplyStatus::kAlready:
        self->recorder_.complete(id, Outcome::kOk, "already");
        break;
      case ReplyStatus::kFailed:
        self->recorder_.complete(id, Outcome::kFail, reply->detail);
        break;
      case ReplyStatus::kUnknown:
        self->recorder_.complete(id, Outcome::kInfo, reply->detail);
        break;
    }
    co_return;
  }
}

}  // namespace fl::likes
