// Client: the Redis port (impl/ports/redis.h) for a simulated Process, over its Rpc to a
// simulated Redis Server (sim/redis/server.h).
//
// Contract
// - Each command(), pipeline() or script() is ONE Rpc call with timeout_us (a blocking
//   XREADGROUP gets its BLOCK time added, a blocking list pop its timeout). Transport outcomes become replies:
//     kTimeout / kReset -> RedisReply::transport_error(<status>, /*indeterminate=*/true)
//     kUnavailable      -> RedisReply::transport_error("unavailable", false)
//   For a pipeline, every reply of the batch is that transport error.
// - script(name, ...) sends EVALSHA of the registered script's SHA1 and, on NOSCRIPT, EVAL with
//   its Lua text (two calls), as redis-py does.
// - subscribe() registers a one-way receiver `<service>.push.<process>` on the process, sends a
//   kSubscribe request, and health-checks the subscription every check_interval_us; a failed or
//   negative check (server restarted, connection reset, partition) breaks it: on_broken runs once
//   and no message is delivered afterwards.
// - The Client must outlive every task using it and belongs to the process it was built for;
//   after that process crashes, build a new one in the next incarnation's boot code.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "impl/ports/redis.h"
#include "impl/ports/redis_script.h"
#include "sim/redis/protocol.h"
#include "sim/world.h"

namespace fl::sim::redis {

struct ClientOptions {
  std::string service = "redis";
  int64_t timeout_us = 1'000'000;
  int64_t check_interval_us = 1'000'000;          // pub/sub health check period
  std::shared_ptr<const ScriptRegistry> scripts;  // for script(); may be null
};

class Client final : public fl::Redis {
 public:
  Client(Process& process, ClientOptions options);
  ~Client() override;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Task<RedisReply> command(std::vector<std::string> argv) override;
  Task<std::vector<RedisReply>> pipeline(std::vector<std::vector<std::string>> cmds) override;
  Task<RedisReply> script(std::string_view name, std::vector<std::string> keys, std::vector<std::string> args) override;
  Task<RedisSubscribeResult> subscribe(std::vector<std::string> channels, RedisSubscriptionHandlers handlers) override;

  const ClientOptions& options() const { return options_; }

 private:
  class Subscription;
  struct SubState;
  Task<std::vector<RedisReply>> send(RedisRequest request, size_t expected_replies, int64_t extra_timeout_us);
  void on_push(const MessagePtr& message);
  Task<void> health_check(std::shared_ptr<SubState> state);

  Process& process_;
  ClientOptions options_;
  std::string push_service_;
  std::map<uint64_t, std::shared_ptr<SubState>> subs_;  // live subscriptions by id
  std::shared_ptr<bool> alive_;                         // false once the Client is destroyed (for detached tasks)
};

}  // namespace fl::sim::redis
