#include "harness/real/redis_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "harness/real/hiredis_client.h"

namespace fl::real {
namespace {

constexpr const char* kPackageHint =
    "redis-server binary not found; install the Debian package `redis-server` "
    "(apt-get install -y redis-server) or set FAULTLINE_REDIS_SERVER to its path";

bool executable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(path);
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string read_tail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > max_bytes) s = s.substr(s.size() - max_bytes);
  return s;
}

std::vector<std::string> server_args(const std::string& binary, const std::string& dir, const std::string& socket,
                                     const RedisServerOptions& o) {
  std::vector<std::string> a = {binary, "--port",      "0",  "--unixsocket", socket, "--unixsocketperm", "700", "--dir",
                                dir,    "--daemonize", "no", "--logfile",    "",     "--databases",      "16"};
  switch (o.persistence) {
    case RedisPersistence::kNone:
      a.insert(a.end(), {"--save", "", "--appendonly", "no"});
      break;
    case RedisPersistence::kAofEverysec:
      a.insert(a.end(), {"--save", "", "--appendonly", "yes", "--appendfsync", "everysec"});
      break;
    case RedisPersistence::kSnapshot:
      a.insert(a.end(), {"--save", "1 1", "--appendonly", "no"});
      break;
  }
  a.insert(a.end(), o.extra_args.begin(), o.extra_args.end());
  return a;
}

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(pid_t parent, const std::vector<char*>& argv, const char* log_path) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
  int fd = ::open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd >= 0) {
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
  }
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

// Directories of launchers that died without cleaning up (SIGKILL, crash) are removed by the
// next launcher: each directory names its owner in owner.pid.
void remove_orphaned_dirs(const std::string& parent) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("fl-redis-", 0) != 0 || !entry.is_directory(ec)) continue;
    std::ifstream owner(entry.path() / "owner.pid");
    pid_t pid = 0;
    if (!(owner >> pid) || pid <= 0 || pid == ::getpid() || process_alive(pid)) continue;
    std::filesystem::remove_all(entry.path(), ec);
  }
}

}  // namespace

std::string find_redis_server_binary(const std::string& hint) {
  if (!hint.empty()) {
    if (executable(hint)) return hint;
    throw RedisServerError(std::string(kPackageHint) + " (tried " + hint + ")");
  }
  if (const char* env = std::getenv("FAULTLINE_REDIS_SERVER"); env && executable(env)) return env;
#ifdef REDIS_SERVER_PATH
  if (executable(REDIS_SERVER_PATH)) return REDIS_SERVER_PATH;
#endif
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string d;
    while (std::getline(ss, d, ':')) dirs.push_back(d);
  }
  dirs.insert(dirs.end(), {"/usr/bin", "/usr/local/bin", "/usr/sbin"});
  for (const auto& d : dirs) {
    std::string candidate = d + "/redis-server";
    if (executable(candidate)) return candidate;
  }
  throw RedisServerError(kPackageHint);
}

RedisServer RedisServer::start(const RedisServerOptions& options) {
  RedisServer s;
  s.binary_ = find_redis_server_binary(options.binary_path);
  s.stop_timeout_ms_ = options.stop_timeout_ms;
  if (options.dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/fl-redis-XXXXXX";
    // A unix socket path is limited to 108 bytes; fall back to /tmp when TMPDIR is long.
    if (templ.size() + 16 > 100) templ = "/tmp/fl-redis-XXXXXX";
    remove_orphaned_dirs(std::filesystem::path(templ).parent_path().string());
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) {
      throw RedisServerError(std::string("mkdtemp failed: ") + std::strerror(errno));
    }
    s.dir_ = buf.data();
    s.owns_dir_ = true;
    std::ofstream(s.dir_ + "/owner.pid") << ::getpid() << "\n";
  } else {
    s.dir_ = options.dir;
    s.owns_dir_ = true;  // a restarted server owns the directory it inherited
  }
  s.socket_path_ = s.dir_ + "/redis.sock";
  s.log_path_ = s.dir_ + "/redis.log";
  ::unlink(s.socket_path_.c_str());

  std::vector<std::string> args = server_args(s.binary_, s.dir_, s.socket_path_, options);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    s.remove_dir();
    throw RedisServerError(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) exec_child(parent, argv, s.log_path_.c_str());
  s.pid_ = pid;

  // Wait for PING; a child that exits early (bad arguments, exec failure) ends the wait at once.
  const int64_t deadline_ms = now_ms() + options.startup_timeout_ms;
  std::string last_error = "no attempt";
  while (now_ms() < deadline_ms) {
    int status = 0;
    if (::waitpid(s.pid_, &status, WNOHANG) == s.pid_) {
      s.pid_ = -1;
      std::string log = read_tail(s.log_path_, 2000);
      s.remove_dir();
      throw RedisServerError("redis-server exited during startup (status " + std::to_string(status) + "): " + log);
    }
    RedisConnection conn = RedisConnection::unix_socket(s.socket_path_, /*timeout_ms=*/500);
    if (conn.connect(&last_error)) {
      RedisReply r = conn.command({"PING"});
      if (r.kind == RedisReply::Kind::kStatus && r.str == "PONG") return s;
      last_error = r.describe();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string log = read_tail(s.log_path_, 2000);
  s.reap_or_kill(0);
  s.remove_dir();
  throw RedisServerError("redis-server did not answer PING within " + std::to_string(options.startup_timeout_ms) +
                         " ms (" + last_error + "): " + log);
}

RedisServer::RedisServer(RedisServer&& o) noexcept { *this = std::move(o); }

RedisServer& RedisServer::operator=(RedisServer&& o) noexcept {
  if (this != &o) {
    stop();
    pid_ = std::exchange(o.pid_, -1);
    owns_dir_ = std::exchange(o.owns_dir_, false);
    keep_dir_ = o.keep_dir_;
    stop_timeout_ms_ = o.stop_timeout_ms_;
    binary_ = std::move(o.binary_);
    dir_ = std::move(o.dir_);
    socket_path_ = std::move(o.socket_path_);
    log_path_ = std::move(o.log_path_);
  }
  return *this;
}

RedisServer::~RedisServer() { stop(); }

void RedisServer::stop() {
  if (pid_ > 0) {
    // SHUTDOWN closes the connection without a reply on success; the reply is irrelevant.
    RedisConnection conn = RedisConnection::unix_socket(socket_path_, /*timeout_ms=*/1000);
    std::string ignored;
    if (conn.connect(&ignored)) (void)conn.command({"SHUTDOWN", "NOSAVE"});
    reap_or_kill(stop_timeout_ms_);
  }
  remove_dir();
}

void RedisServer::kill() { reap_or_kill(0); }

void RedisServer::reap_or_kill(int64_t timeout_ms) {
  if (pid_ <= 0) return;
  const int64_t deadline_ms = now_ms() + timeout_ms;
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      pid_ = -1;
      return;
    }
    if (now_ms() >= deadline_ms) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {}
  pid_ = -1;
}

void RedisServer::remove_dir() {
  if (!owns_dir_ || keep_dir_ || dir_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  owns_dir_ = false;
}

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  // Format: pid (comm) state ...; comm may contain spaces, so find the last ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  char state = line[close + 2];
  return state != 'Z' && state != 'X';
}

}  // namespace fl::real
