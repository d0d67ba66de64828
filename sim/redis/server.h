// Server: a simulated Redis node. It serves an Rpc service on a simulated Process and executes
// every request with an Engine (sim/redis/engine.h), atomically, in the order the requests'
// handlers run (arrival order), with the node's LOCAL clock as Redis's clock, so clock skew
// between services and Redis is observable.
//
// Contract
// - The Server object is the node's memory and disk: it outlives process crashes. Boot the
//   process with boot_fn() (or call run(p) from your own BootFn). Every boot after the first is a
//   restart after a crash: the engine first recovers what its persistence mode kept
//   (Engine::recover), and parked requests and subscriptions of the dead incarnation are gone.
// - A kCommands request runs its commands back to back on one fresh Session; MULTI/EXEC work
//   inside it. XREADGROUP ... BLOCK that must wait parks the request: it is answered when an XADD
//   makes one of its keys ready (re-executed then), or with nil-array when BLOCK ms of the
//   node's clock have passed (BLOCK 0 waits forever). A request parks only as the last command
//   of its batch; a blocking command earlier in a batch is answered nil-array without waiting.
// - Every cron_interval_ms of the node's clock, a cron task runs Engine::tick (active expiry,
//   AOF fsync, snapshots).
// - Pub/sub: a subscription belongs to (subscriber process, incarnation, connection epoch).
//   PUBLISH pushes RedisPush one-way messages with Network::send_to; a subscriber that crashed,
//   restarted or had its connections reset is dropped (lazily, at the next publish or check) and
//   misses the message; a partitioned one loses it in the network. At most once, no redelivery.
//   A reset of the server's own connections drops every subscription.
// - Error-reply faults (World::apply_component_fault on the Redis process): "redis-oom",
//   "redis-loading", "redis-busy", "redis-readonly" make the node refuse commands for the
//   fault's duration as Redis does when it is out of memory under noeviction (denyoom commands),
//   loading its data after a restart ("redis-loading" crashes and restarts the process first;
//   everything but CMD_LOADING commands), running a long script (everything), or demoted to a
//   replica by a failover (writes); then it recovers. Every refused command is recorded in the
//   world's fault log (FaultKind::kRedisError, value = the Refusal) and in the command log.
// - Every key maxmemory evicts is in the world's fault log (FaultKind::kEviction, detail = the
//   key, value = its database): the command log has only the commands clients sent, and an
//   eviction is no command of theirs.
#pragma once

#include <coroutine>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "sim/redis/engine.h"
#include "sim/redis/protocol.h"
#include "sim/world.h"

namespace fl::sim::redis {

struct ServerOptions {
  std::string service = "redis";  // the Rpc service name served
  EngineOptions engine;
  int64_t cron_interval_ms = 100;  // Redis's hz 10
  bool keep_command_log = true;    // keep command_log() (the judges' view of Redis)
};

// One command the server executed, as the world observed it at the Redis node: the judges' view
// of what Redis did, never what the calling service says it did. Also folded into the trace
// (TraceKind::kObserve).
struct CommandRecord {
  uint64_t seq = 0;          // execution order at this server
  int64_t time_us = 0;       // world time
  int64_t node_ms = 0;       // the Redis node's clock (TTLs and stream ids use it)
  std::string client;        // the calling process
  uint32_t incarnation = 0;  // of the Redis process (a restart may have lost earlier writes)
  int depth = 0;             // 0: as the client sent it; 1: run by EXEC or a script (logged first)
  uint64_t cause = 0;        // the client operation the command works for (World::current_cause)
  std::vector<std::string> argv;
  RedisReply reply;
};

// The command log. A deque: appending never moves the records already logged (a vector would,
// on every growth, for a log of one record per command).
using CommandLog = std::deque<CommandRecord>;

struct ServerStats {
  uint64_t requests = 0;
  uint64_t parked = 0;
  uint64_t woken = 0;
  uint64_t block_timeouts = 0;
  uint64_t pushes = 0;
  uint64_t pushes_dropped = 0;  // subscriber gone
  uint64_t boots = 0;
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The boot function of the Redis process: registers the service, starts the cron task.
  BootFn boot_fn();
  Task<void> run(Process& p);

  Engine& engine() { return engine_; }
  const ServerOptions& options() const { return options_; }
  const ServerStats& stats() const { return stats_; }
  size_t parked_requests() const { return parked_.size(); }
  size_t subscriptions() const { return subscribers_.size(); }
  // Every command executed so far (with keep_command_log), in execution order.
  const CommandLog& command_log() const { return command_log_; }

 private:
  struct Parked;
  struct Subscriber {
    uint32_t process = 0;
    uint32_t incarnation = 0;
    uint64_t epoch = 0;
    std::string push_service;
    Session session;
  };
  Task<MessagePtr> handle(MessagePtr request);
  Task<RedisResponse> run_commands(const RedisRequest& req);
  RedisResponse subscribe(const RedisRequest& req);
  RedisResponse unsubscribe(const RedisRequest& req);
  RedisResponse check(const RedisRequest& req);
  void note_access(World& world, const Engine::ObservedCommand& c);
  bool subscriber_alive(const Subscriber& s) const;
  void after_command();
  void wake_parked(const std::vector<std::string>& keys);
  // Forgets a parked request and keeps INFO blocked_clients equal to the parked count.
  void unpark(std::map<uint64_t, std::shared_ptr<Parked>>::iterator it);
  void push_deliveries();
  Task<void> cron();
  int64_t now_ms() const;
  bool apply_fault(std::string_view kind, int64_t duration_us);

  ServerOptions options_;
  Engine engine_;
  Process* process_ = nullptr;
  uint32_t incarnation_ = 0;
  uint64_t server_epoch_ = 0;
  uint64_t next_park_id_ = 1;
  uint64_t refusal_generation_ = 0;                     // the window a scheduled end of refusal belongs to
  std::map<uint64_t, std::shared_ptr<Parked>> parked_;  // park order
  std::map<uint64_t, Subscriber> subscribers_;          // by subscription id (= session id)
  ServerStats stats_;
  std::string current_client_;  // the client whose request is executing (command log)
  CommandLog command_log_;
  void log_command(const Engine::ObservedCommand& c);
  void log_eviction(int db, const std::string& key);
  sim::FaultRecord fault_here(sim::FaultKind kind) const;
};

}  // namespace fl::sim::redis
