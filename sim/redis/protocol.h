// The simulated Redis wire protocol: what sim/redis/client.cc sends to sim/redis/server.cc over
// the simulated network (one Rpc call per request), and the pub/sub pushes back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/ports/redis_reply.h"

namespace fl::sim::redis {

struct RedisRequest {
  enum class Kind : uint8_t {
    kCommands,     // run `commands` in order on one fresh session (a pipeline; MULTI/EXEC inside)
    kSubscribe,    // SUBSCRIBE `commands[0]` args for subscription `subscription_id`
    kUnsubscribe,  // drop subscription `subscription_id`
    kCheck,        // health check: is subscription `subscription_id` still alive?
  };
  Kind kind = Kind::kCommands;
  std::string client;  // the calling process's name (the server's command log)
  std::vector<std::vector<std::string>> commands;
  uint64_t subscription_id = 0;
  std::string subscriber_process;  // kSubscribe: the process pushes go to
  uint32_t subscriber_incarnation = 0;
  uint64_t subscriber_epoch = 0;  // its connection epoch when subscribing
  std::string push_service;       // kSubscribe: the one-way service it receives pushes on
  std::string describe() const;
};

struct RedisResponse {
  std::vector<RedisReply> replies;  // kCommands: one per command; others: one
  std::string describe() const;
};

struct RedisPush {
  uint64_t subscription_id = 0;
  std::string channel;
  std::string payload;
  std::string describe() const;
};

// argv rendered for traces: `SET k v`, arguments longer than 64 bytes elided.
std::string describe_argv(const std::vector<std::string>& argv);

}  // namespace fl::sim::redis
