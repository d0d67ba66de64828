// HiredisSide: the real-mode side of the Redis differential suite (properties/redis/redis_diff.h):
// anything speaking RESP2 through hiredis — a real redis-server (harness/real) or `faultline
// redis-serve` (harness/resp) — with kClients connections. It lives in harness/ because it
// drives real processes over sockets; properties/ stays free of harness/.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/real/hiredis_client.h"
#include "properties/redis/redis_diff.h"

namespace fl::redis_diff {

class HiredisSide final : public Side {
 public:
  // `make_connection` returns a fresh unconnected connection to the server under test.
  HiredisSide(std::string name, std::function<real::RedisConnection()> make_connection);
  std::string name() const override { return name_; }
  void reset() override;
  void begin(int client, const std::vector<std::string>& argv) override;
  RedisReply finish(int client) override;
  std::vector<RedisPubSubMessage> take_messages(int client, int64_t wait_ms) override;

 private:
  // Reads the next reply of `client`, setting aside pub/sub pushes that arrive first.
  RedisReply read(int client);
  RedisReply read_subscription_replies(int client, const std::vector<std::string>& argv);

  std::string name_;
  std::function<real::RedisConnection()> make_connection_;
  std::vector<real::RedisConnection> conns_;
  std::optional<std::vector<std::string>> pending_[kClients];
  bool send_failed_[kClients] = {};
  std::set<std::string> subscribed_[kClients];
  std::vector<RedisPubSubMessage> inbox_[kClients];
};

}  // namespace fl::redis_diff
