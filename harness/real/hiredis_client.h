// RedisConnection: a synchronous hiredis 0.14 (RESP2) connection to a real Redis server, or to
// anything that speaks RESP2 (`faultline redis-serve`).
//
// Contract
// - Constructing a connection does not connect; connect() does (and reports why it failed).
//   command()/pipeline() connect lazily, so a connection broken by an I/O error reconnects on
//   the next call (a fresh Redis connection: subscriptions and MULTI state are gone).
// - Every outcome is a value: a Redis error is RedisReply::Kind::kError; a transport failure is
//   Kind::kTransportError, with `indeterminate` = true when the command may have been sent (and
//   therefore may have executed) before the failure, false when it certainly was not.
// - RESP2 through hiredis 0.14 cannot tell a nil multi-bulk (`*-1`) from a nil bulk (`$-1`):
//   both arrive as Kind::kNil.
// - Opening the first connection sets SIGPIPE to SIG_IGN for the process (a write to a closed
//   socket must be an error value, not a dead process).
// - Not thread-safe: one connection per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "impl/ports/redis.h"
#include "impl/ports/redis_reply.h"
#include "impl/ports/redis_script.h"

struct redisContext;
struct redisReply;

namespace fl::real {

// Converts one hiredis reply (recursively) into a RedisReply. `r` may be null (transport error).
RedisReply from_hiredis(const redisReply* r);

class RedisConnection {
 public:
  static RedisConnection unix_socket(std::string path, int64_t timeout_ms = 5'000);
  static RedisConnection tcp(std::string host, int port, int64_t timeout_ms = 5'000);

  RedisConnection(RedisConnection&&) noexcept;
  RedisConnection& operator=(RedisConnection&&) noexcept;
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;
  ~RedisConnection();

  // Connects (or reconnects). Returns false and sets *error (if given) on failure.
  bool connect(std::string* error = nullptr);
  bool connected() const;
  void close();

  // Sends one command and waits for its reply.
  RedisReply command(const std::vector<std::string>& argv);
  // Sends all commands in one write, then reads one reply per command, in order. After a
  // transport failure the remaining replies are transport errors too.
  std::vector<RedisReply> pipeline(const std::vector<std::vector<std::string>>& commands);
  // Sends without reading (for SUBSCRIBE-style flows); read_reply() reads the next reply/push.
  bool send(const std::vector<std::string>& argv);
  RedisReply read_reply();
  // Waits up to timeout_ms (0: just checks) for one reply/push. Returns false when none arrived;
  // true with *reply set otherwise (a transport error when the connection broke).
  bool try_read_reply(int64_t timeout_ms, RedisReply* reply);

  // Changes the socket read/write timeout (0 = block forever).
  void set_timeout_ms(int64_t timeout_ms);
  int64_t timeout_ms() const { return timeout_ms_; }
  const std::string& endpoint() const { return endpoint_; }

 private:
  RedisConnection() = default;
  bool ensure_connected(std::string* error);
  RedisReply broken(const std::string& what, bool indeterminate);

  redisContext* ctx_ = nullptr;
  bool is_unix_ = true;
  std::string path_or_host_;
  int port_ = 0;
  int64_t timeout_ms_ = 5'000;
  std::string endpoint_;
};

// RealRedis: the Redis port (impl/ports/redis.h) over hiredis, for real mode.
//
// Contract (in addition to the port's)
// - Commands run synchronously inside the awaiting Task (the coroutine completes without
//   suspending): real mode has one executor thread, and blocking it for a round trip is the
//   honest cost model. XREADGROUP BLOCK blocks the thread for up to its timeout (the socket
//   timeout is raised for that call).
// - pipeline(): one write, then one read per command; if any reply is a transport error, every
//   reply of the batch becomes that error (the port's contract).
// - script(name, ...): EVALSHA <sha1> and, on NOSCRIPT, EVAL <lua> with the text from the
//   registry; an unknown name replies "ERR faultline: unknown script '<name>'".
// - subscribe(): a dedicated connection per subscription. Messages are delivered by
//   poll_subscriptions(), which the real-mode executor calls from its loop (so handlers never
//   run concurrently with tasks). A broken connection runs on_broken once.
class RealRedis final : public Redis {
 public:
  // `make_connection` returns a fresh (unconnected) connection to the server each time it is
  // called (the command connection, then one per subscription).
  RealRedis(std::function<RedisConnection()> make_connection, std::shared_ptr<const ScriptRegistry> scripts);
  static std::unique_ptr<RealRedis> unix_socket(const std::string& path, std::shared_ptr<const ScriptRegistry> scripts,
                                                int64_t timeout_ms = 5'000);
  static std::unique_ptr<RealRedis> tcp(const std::string& host, int port,
                                        std::shared_ptr<const ScriptRegistry> scripts, int64_t timeout_ms = 5'000);
  ~RealRedis() override;

  Task<RedisReply> command(std::vector<std::string> argv) override;
  Task<std::vector<RedisReply>> pipeline(std::vector<std::vector<std::string>> cmds) override;
  Task<RedisReply> script(std::string_view name, std::vector<std::string> keys, std::vector<std::string> args) override;
  Task<RedisSubscribeResult> subscribe(std::vector<std::string> channels, RedisSubscriptionHandlers handlers) override;

  // Delivers pub/sub messages that arrived, waiting up to timeout_ms for the first one when
  // there is none. Returns how many messages were delivered.
  size_t poll_subscriptions(int64_t timeout_ms);

  // Synchronous forms (what the Task versions do), for harness code that is not a coroutine.
  RedisReply command_sync(const std::vector<std::string>& argv);
  std::vector<RedisReply> pipeline_sync(const std::vector<std::vector<std::string>>& cmds);
  RedisReply script_sync(std::string_view name, const std::vector<std::string>& keys,
                         const std::vector<std::string>& args);

 private:
  class Subscription;
  struct Subscribers;
  std::function<RedisConnection()> make_connection_;
  std::shared_ptr<const ScriptRegistry> scripts_;
  RedisConnection conn_;
  int64_t timeout_ms_;
  std::shared_ptr<Subscribers> subscribers_;
};

// The BLOCK argument of an XREADGROUP/XREAD argv in ms (nullopt when absent or malformed).
std::optional<int64_t> block_timeout_ms(const std::vector<std::string>& argv);

}  // namespace fl::real
