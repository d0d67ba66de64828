// RedisServer: a real `redis-server` child process, owned by the test or benchmark that started it.
//
// Contract
// - start() creates a fresh temporary directory (mkdtemp under $TMPDIR or /tmp), forks and execs
//   the redis-server binary listening only on a unix socket inside that directory (`--port 0`),
//   with persistence disabled (`--save "" --appendonly no`) unless options say otherwise, and
//   returns once the server answers PING. On failure it throws RedisServerError; no child and no
//   directory survive a failed start.
// - The child sets PR_SET_PDEATHSIG(SIGKILL) before exec, so it dies when the thread that forked
//   it exits (a test process killed by SIGKILL, a crash, a timeout). Start servers from a thread
//   that outlives them (the main thread in tests and benchmarks).
// - stop() sends `SHUTDOWN NOSAVE`, waits (waitpid) up to `stop_timeout_ms`, then SIGKILLs and
//   reaps. It then removes the temporary directory. Idempotent. The destructor calls stop(), so a
//   failing test (ASSERT returns, an exception unwinds) stops the server too.
// - kill() is SIGKILL + reap, for crash tests; the directory (and any AOF/RDB file) is kept until
//   stop() or destruction so a restart on the same directory can observe what survived.
// - A missing binary raises an error naming the Debian package (`apt-get install redis-server`).
// - The directory records its owner (owner.pid); start() removes fl-redis-* directories whose
//   owner is dead, so a SIGKILLed test leaves nothing behind for long.
// - Not thread-safe; move-only (the destructor of a moved-from object does nothing).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fl::real {

class RedisServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a crash of the server loses, mirroring the simulated Redis persistence modes.
enum class RedisPersistence : uint8_t { kNone, kAofEverysec, kSnapshot };

struct RedisServerOptions {
  // Path of the redis-server binary. Empty: $FAULTLINE_REDIS_SERVER, then the path CMake found at
  // configure time (REDIS_SERVER_PATH), then a search of $PATH, /usr/bin and /usr/local/bin.
  std::string binary_path;
  RedisPersistence persistence = RedisPersistence::kNone;
  // Appended after the generated arguments (later arguments override earlier ones in Redis).
  std::vector<std::string> extra_args;
  // An existing directory to run in (a restart after kill()); empty: a fresh temporary one.
  std::string dir;
  int64_t startup_timeout_ms = 10'000;
  int64_t stop_timeout_ms = 5'000;
};

// Returns the path of a usable redis-server binary or throws RedisServerError naming the package.
std::string find_redis_server_binary(const std::string& hint);

class RedisServer {
 public:
  // Starts a server and waits until it answers PING. Throws RedisServerError.
  static RedisServer start(const RedisServerOptions& options = {});

  RedisServer(RedisServer&& other) noexcept;
  RedisServer& operator=(RedisServer&& other) noexcept;
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  ~RedisServer();

  // Graceful stop (SHUTDOWN NOSAVE, waitpid, SIGKILL fallback) and removal of the directory.
  void stop();
  // SIGKILL + reap; keeps the directory. A later start() with options.dir = dir() restarts.
  void kill();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const std::string& socket_path() const { return socket_path_; }
  const std::string& dir() const { return dir_; }
  const std::string& log_path() const { return log_path_; }
  const std::string& binary_path() const { return binary_; }
  // Keep the directory after stop() (for a restart in tests that own cleanup).
  void keep_dir(bool keep) { keep_dir_ = keep; }

 private:
  RedisServer() = default;
  void reap_or_kill(int64_t timeout_ms);
  void remove_dir();

  pid_t pid_ = -1;
  bool owns_dir_ = false;
  bool keep_dir_ = false;
  int64_t stop_timeout_ms_ = 5'000;
  std::string binary_;
  std::string dir_;
  std::string socket_path_;
  std::string log_path_;
};

// True if `pid` names a live, non-zombie process (reads /proc/<pid>/stat). For tests.
bool process_alive(pid_t pid);

}  // namespace fl::real
