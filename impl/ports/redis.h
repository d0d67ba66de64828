// Redis: the asynchronous Redis client port that all service code uses (`co_await redis.…`).
//
// Implementations: the simulated client (sim/redis/client.h, over the simulated network to a
// simulated Redis node) and the hiredis client (harness/real/, to a real redis-server).
//
// Contract
// - Every outcome is a value (impl/ports/redis_reply.h). A Redis error (WRONGTYPE, syntax, ...)
//   is RedisReply::Kind::kError. A transport failure is Kind::kTransportError with
//   `indeterminate` true when the command may have executed (timeout, reset after sending) and
//   false when it certainly did not (nothing to connect to). Nothing here throws for Redis or
//   transport reasons.
// - command(argv): one command, e.g. {"HINCRBY", "h", "f", "1"}. Executes atomically on the
//   server. Reply shapes are RESP2's: nil bulk = kNil, nil multi-bulk = kNilArray.
// - pipeline(cmds): sends all commands at once and returns one reply per command, in order.
//   The commands run in order on one connection; other clients' commands may interleave between
//   them (the simulated Redis runs the batch back to back, one of the allowed interleavings).
//   MULTI/EXEC (and DISCARD) are only supported inside ONE pipeline() call, which holds the
//   connection for the transaction (see transaction() below). On a transport failure every
//   reply of the batch is that transport error.
// - script(name, keys, args): runs the script registered under `name` in the ScriptRegistry the
//   client was built with (impl/ports/redis_script.h): EVALSHA, falling back to EVAL on NOSCRIPT.
//   An unknown name replies kError "ERR faultline: unknown script '<name>'".
// - subscribe(channels, handlers): SUBSCRIBE on a dedicated connection. Pub/sub is at most once:
//   a message published while the subscriber is disconnected, partitioned, crashed, or before the
//   subscription is confirmed, may be missed and is never redelivered. handlers.on_message runs
//   for each message received while the returned subscription is alive; handlers.on_broken runs
//   at most once, when the client learns the subscription is gone (connection reset, server
//   restart, failed health check), after which no message is delivered. Destroying the
//   RedisSubscription unsubscribes (best effort) and guarantees no handler runs afterwards.
//   Handlers run on the subscribing process's executor, never concurrently with its tasks; they
//   must not block (spawn a task for asynchronous work).
// - Not thread-safe; one Redis object belongs to one process.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/ports/redis_reply.h"
#include "impl/ports/task.h"

namespace fl {

struct RedisPubSubMessage {
  std::string channel;
  std::string payload;
  std::string describe() const { return channel + ": " + payload; }
};

struct RedisSubscriptionHandlers {
  std::function<void(const RedisPubSubMessage&)> on_message;
  std::function<void(std::string_view reason)> on_broken;  // may be empty
};

// A live subscription. Destroying it unsubscribes; no handler runs after destruction.
class RedisSubscription {
 public:
  virtual ~RedisSubscription() = default;
  // False once broken (on_broken has run or is about to run) or unsubscribed.
  virtual bool active() const = 0;
  // The channels subscribed to, in the order given to subscribe().
  virtual const std::vector<std::string>& channels() const = 0;
};

struct RedisSubscribeResult {
  // The SUBSCRIBE reply: an array of {"subscribe", channel, count} confirmations, or an error /
  // transport error (then `subscription` is null).
  RedisReply reply;
  std::unique_ptr<RedisSubscription> subscription;
  bool ok() const { return subscription != nullptr; }
};

class Redis {
 public:
  virtual ~Redis() = default;

  virtual Task<RedisReply> command(std::vector<std::string> argv) = 0;
  virtual Task<std::vector<RedisReply>> pipeline(std::vector<std::vector<std::string>> cmds) = 0;
  virtual Task<RedisReply> script(std::string_view name, std::vector<std::string> keys,
                                  std::vector<std::string> args) = 0;
  virtual Task<RedisSubscribeResult> subscribe(std::vector<std::string> channels,
                                               RedisSubscriptionHandlers handlers) = 0;
};

// ---- Typed helpers: thin argv builders over command(). The Redis object must outlive the task.

inline Task<RedisReply> redis_get(Redis& r, std::string key) { return r.command({"GET", std::move(key)}); }
inline Task<RedisReply> redis_set(Redis& r, std::string key, std::string value) {
  return r.command({"SET", std::move(key), std::move(value)});
}
// SET key value PX ttl_ms [NX]: a lease/lock acquisition. Replies +OK or nil (NX lost).
inline Task<RedisReply> redis_set_px(Redis& r, std::string key, std::string value, int64_t ttl_ms, bool nx) {
  std::vector<std::string> argv{"SET", std::move(key), std::move(value), "PX", std::to_string(ttl_ms)};
  if (nx) argv.push_back("NX");
  return r.command(std::move(argv));
}
inline Task<RedisReply> redis_del(Redis& r, std::string key) { return r.command({"DEL", std::move(key)}); }
inline Task<RedisReply> redis_incrby(Redis& r, std::string key, int64_t delta) {
  return r.command({"INCRBY", std::move(key), std::to_string(delta)});
}
inline Task<RedisReply> redis_expire(Redis& r, std::string key, int64_t ttl_s) {
  return r.command({"EXPIRE", std::move(key), std::to_string(ttl_s)});
}
inline Task<RedisReply> redis_pexpire(Redis& r, std::string key, int64_t ttl_ms) {
  return r.command({"PEXPIRE", std::move(key), std::to_string(ttl_ms)});
}
inline Task<RedisReply> redis_hget(Redis& r, std::string key, std::string field) {
  return r.command({"HGET", std::move(key), std::move(field)});
}
inline Task<RedisReply> redis_hset(Redis& r, std::string key, std::string field, std::string value) {
  return r.command({"HSET", std::move(key), std::move(field), std::move(value)});
}
inline Task<RedisReply> redis_hincrby(Redis& r, std::string key, std::string field, int64_t delta) {
  return r.command({"HINCRBY", std::move(key), std::move(field), std::to_string(delta)});
}
inline Task<RedisReply> redis_hgetall(Redis& r, std::string key) { return r.command({"HGETALL", std::move(key)}); }
inline Task<RedisReply> redis_sadd(Redis& r, std::string key, std::string member) {
  return r.command({"SADD", std::move(key), std::move(member)});
}
inline Task<RedisReply> redis_smembers(Redis& r, std::string key) { return r.command({"SMEMBERS", std::move(key)}); }
inline Task<RedisReply> redis_zincrby(Redis& r, std::string key, std::string delta, std::string member) {
  return r.command({"ZINCRBY", std::move(key), std::move(delta), std::move(member)});
}
inline Task<RedisReply> redis_publish(Redis& r, std::string channel, std::string payload) {
  return r.command({"PUBLISH", std::move(channel), std::move(payload)});
}
// XADD key [MAXLEN ~ n] * field value ...
Task<RedisReply> redis_xadd(Redis& r, std::string key, std::vector<std::pair<std::string, std::string>> fields,
                            std::optional<int64_t> approx_maxlen = std::nullopt);
// XREADGROUP GROUP group consumer [COUNT count] [BLOCK block_ms] STREAMS key id
Task<RedisReply> redis_xreadgroup(Redis& r, std::string group, std::string consumer, std::string key, std::string id,
                                  int64_t count, std::optional<int64_t> block_ms);
inline Task<RedisReply> redis_xack(Redis& r, std::string key, std::string group, std::string id) {
  return r.command({"XACK", std::move(key), std::move(group), std::move(id)});
}

// MULTI; cmds...; EXEC as one pipeline. Returns EXEC's reply (an array of the commands' replies,
// or an EXECABORT error), or the transport error.
Task<RedisReply> redis_transaction(Redis& r, std::vector<std::vector<std::string>> cmds);

// Reply accessors for the common shapes. Each returns nullopt when the reply has another shape.
std::optional<int64_t> reply_integer(const RedisReply& r);
// A bulk or status string.
std::optional<std::string> reply_string(const RedisReply& r);
// An integer, or a bulk string holding an integer (as GET of a counter returns).
std::optional<int64_t> reply_as_int64(const RedisReply& r);

}  // namespace fl
