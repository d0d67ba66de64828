// RespServer: the simulated Redis (sim/redis Engine) served over RESP2 or RESP3 in real time, so that
// redis-cli, hiredis and any Redis client can talk to it (`faultline redis-serve`).
//
// Contract
// - listen() binds a unix socket (options.unix_path) and/or a TCP port on options.tcp_host
//   (options.tcp_port; 0 picks a free port, see port()). serve() then runs a single-threaded
//   poll() loop until request_stop() is called or a stop fd becomes readable.
// - Each connection gets its own engine Session. Commands run one at a time, atomically, in the
//   order their bytes were read; the engine's clock is options.now_ms (default: the wall clock,
//   ms since the Unix epoch), so TTLs and stream ids behave as on a real server.
// - Replies are written in RESP2, or in RESP3 after the connection's HELLO 3 (then pub/sub
//   confirmations and messages are pushes, `>`). Pub/sub: each (un)subscribe confirmation is its own reply and
//   published messages are pushed as ["message", channel, payload]. XREADGROUP ... BLOCK parks
//   the connection (its later commands wait behind it, as in Redis) until an XADD to one of its
//   keys (re-executed then) or its timeout (nil multi-bulk). The engine's tick() (active expiry)
//   runs every options.tick_interval_ms. A script running past busy-reply-threshold (CONFIG SET
//   lua-time-limit) lets the other clients in: -BUSY for all but Redis's allow-busy commands,
//   SCRIPT KILL / FUNCTION KILL end it (Engine::set_script_hook); stopping the server ends it
//   too. QUIT replies +OK and closes; a protocol error replies
//   "-ERR Protocol error: ..." and closes.
// - request_stop() is the only method that may be called from another thread (or a signal
//   handler: it only writes to a pipe). The destructor closes every socket and unlinks the unix
//   socket file it created.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/resp/resp.h"
#include "sim/redis/engine.h"

namespace fl::resp {

struct RespServerOptions {
  std::string unix_path;  // empty: no unix socket
  int tcp_port = -1;      // < 0: no TCP; 0: any free port
  std::string tcp_host = "127.0.0.1";
  sim::redis::EngineOptions engine;  // scripts, persistence knobs
  int64_t tick_interval_ms = 100;    // Redis's hz 10
  std::function<int64_t()> now_ms;   // empty: wall clock (ms since the Unix epoch)
};

class RespServer {
 public:
  explicit RespServer(RespServerOptions options);
  ~RespServer();
  RespServer(const RespServer&) = delete;
  RespServer& operator=(const RespServer&) = delete;

  // Binds and listens. Returns false and sets *error on failure (address in use, bad path...).
  bool listen(std::string* error);
  // The bound TCP port (after listen with tcp_port >= 0), else -1.
  int port() const { return bound_port_; }
  const std::string& unix_path() const { return options_.unix_path; }

  // Runs until request_stop() or a stop fd is readable.
  void serve();
  // One poll() round: waits up to timeout_ms for activity, handles it, runs due timers.
  void poll_once(int timeout_ms);
  // Thread- and async-signal-safe.
  void request_stop();
  // serve() also stops when `fd` becomes readable (e.g. a signalfd). The fd stays the caller's.
  void add_stop_fd(int fd) { stop_fds_.push_back(fd); }
  bool stopping() const { return stopping_; }

  size_t client_count() const { return clients_.size(); }
  uint64_t commands_executed() const { return commands_; }
  // The engine; touch it only while serve() is not running on another thread.
  sim::redis::Engine& engine() { return engine_; }
  // SCRIPT LOADs every script of the engine's registry (EngineOptions::scripts), so clients can
  // EVALSHA them at once; returns "name sha1" per script, in name order. A server restart (none
  // here) would forget them, as Redis's script cache does.
  std::vector<std::string> preload_scripts();

 private:
  struct Client {
    int fd = -1;
    sim::redis::Session session;
    RequestParser parser;
    std::string out;
    bool close_after_write = false;
    bool closed = false;
    std::optional<std::vector<std::string>> blocked_argv;  // a parked XREADGROUP BLOCK
    int64_t blocked_deadline_ms = 0;                       // 0: no timeout
    // CLIENT REPLY: OFF silences every reply, SKIP the next command's (skipping: this one's).
    bool reply_off = false, skip_next = false, skipping = false;
  };

  int64_t now_ms() const;
  // One poll() of the listening sockets and every client but skip_session (0: none): accepts,
  // reads and runs commands, writes replies.
  void poll_fds(int timeout_ms, uint64_t skip_session);
  // Reads every client with bytes waiting but skip_session, in the order the bytes came.
  void read_ready_clients(uint64_t skip_session);
  // The engine's script hook: once the running script has taken busy-reply-threshold ms, serves
  // the other clients (they get -BUSY but for SCRIPT KILL, MULTI, ...: Engine::set_script_hook).
  void serve_while_script_runs();
  void accept_clients(int listen_fd);
  void read_client(Client& c);
  void write_client(Client& c);
  // Runs buffered commands of `c` until it blocks, needs more bytes or closes.
  void process_client(Client& c);
  void run_command(Client& c, const std::vector<std::string>& argv);
  void write_reply(Client& c, const std::vector<std::string>& argv, const RedisReply& reply);
  void client_reply(Client& c, const std::vector<std::string>& argv);
  void client_unblock(Client& c, const std::vector<std::string>& argv);
  // Ends `c`'s blocked command with `reply` and runs what it pipelined behind it.
  void unblock(Client& c, const RedisReply& reply);
  // Drains pub/sub deliveries and wakes readers blocked on signaled keys.
  void after_command();
  void wake_blocked(const std::vector<std::string>& keys);
  void expire_blocked();
  void close_client(Client& c);
  void reap_closed();

  RespServerOptions options_;
  sim::redis::Engine engine_;
  int unix_fd_ = -1;
  int tcp_fd_ = -1;
  int bound_port_ = -1;
  bool created_unix_file_ = false;
  int wake_pipe_[2] = {-1, -1};
  int clients_epoll_fd_ = -1;  // every open client's socket, for reads in arrival order
  std::vector<int> stop_fds_;
  std::atomic<bool> stopping_{false};  // request_stop may come from another thread
  uint64_t next_session_id_ = 1;
  uint64_t commands_ = 0;
  int64_t next_tick_ms_ = 0;
  std::map<uint64_t, std::unique_ptr<Client>> clients_;  // by session id
  std::vector<uint64_t> blocked_order_;                  // FIFO of parked sessions
  bool in_after_command_ = false;
  uint64_t running_session_ = 0;  // the client whose command is executing (0: none)
  int64_t running_since_ms_ = 0;  // when it started
  bool serving_busy_ = false;     // inside serve_while_script_runs
};

// The serving half of `faultline redis-serve` (harness/redis_serve_cmd.cc parses its flags):
// listens as `o` says and serves until SIGINT/SIGTERM. Returns 0 on a clean stop, 1 when the
// server cannot listen.
int run_redis_serve(RespServerOptions o);
// Usage text for the subcommand.
const char* redis_serve_usage();

}  // namespace fl::resp
