#include "harness/real/redis_server.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "harness/real/hiredis_client.h"

namespace fl::real {
namespace {

using Kind = RedisReply::Kind;

RedisServerOptions test_options() {
  RedisServerOptions o;
  o.binary_path = REDIS_SERVER_PATH;
  return o;
}

// Waits (bounded) until `pid` is no longer a live process.
bool eventually_dead(pid_t pid, int64_t timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return !process_alive(pid);
}

TEST(RedisServer, StartsPingsAndStops) {
  RedisServer server = RedisServer::start(test_options());
  ASSERT_TRUE(server.running());
  const pid_t pid = server.pid();
  const std::string dir = server.dir();
  EXPECT_TRUE(process_alive(pid));
  EXPECT_TRUE(std::filesystem::exists(server.socket_path()));

  RedisConnection conn = RedisConnection::unix_socket(server.socket_path());
  RedisReply pong = conn.command({"PING"});
  EXPECT_EQ(pong, RedisReply::status("PONG"));
  EXPECT_EQ(conn.command({"SET", "k", "v"}), RedisReply::ok());
  EXPECT_EQ(conn.command({"GET", "k"}), RedisReply::bulk("v"));
  // Persistence is off: no save points, no AOF.
  RedisReply save = conn.command({"CONFIG", "GET", "save"});
  ASSERT_EQ(save.kind, Kind::kArray);
  ASSERT_EQ(save.elements.size(), 2u);
  EXPECT_EQ(save.elements[1], RedisReply::bulk(""));
  RedisReply aof = conn.command({"CONFIG", "GET", "appendonly"});
  ASSERT_EQ(aof.elements.size(), 2u);
  EXPECT_EQ(aof.elements[1], RedisReply::bulk("no"));

  server.stop();
  EXPECT_FALSE(server.running());
  EXPECT_FALSE(process_alive(pid));
  EXPECT_EQ(::kill(pid, 0), -1);  // reaped, not a zombie
  EXPECT_FALSE(std::filesystem::exists(dir));
  server.stop();  // idempotent
}

TEST(RedisServer, DestructorStopsTheServer) {
  pid_t pid = -1;
  std::string dir;
  {
    RedisServer server = RedisServer::start(test_options());
    pid = server.pid();
    dir = server.dir();
    ASSERT_TRUE(process_alive(pid));
  }
  EXPECT_FALSE(process_alive(pid));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(RedisServer, MoveTransfersOwnership) {
  RedisServer a = RedisServer::start(test_options());
  const pid_t pid = a.pid();
  RedisServer b = std::move(a);
  EXPECT_FALSE(a.running());  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(b.pid(), pid);
  EXPECT_TRUE(process_alive(pid));
  b.stop();
  EXPECT_FALSE(process_alive(pid));
}

TEST(RedisServer, DiesWithItsParentProcess) {
  // A child process starts a server, reports its pid, and is SIGKILLed (as a killed test would
  // be): PR_SET_PDEATHSIG must take the server down with it.
  // The orphan's directory lives under a private TMPDIR: ctest runs other tests' start() in
  // parallel, and each sweeps dead owners' directories from its own parent directory.
  char private_tmp[] = "/tmp/fl-pdeath-XXXXXX";
  ASSERT_NE(::mkdtemp(private_tmp), nullptr);
  ASSERT_EQ(::setenv("TMPDIR", private_tmp, 1), 0);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    try {
      RedisServer server = RedisServer::start(test_options());
      pid_t server_pid = server.pid();
      (void)!::write(fds[1], &server_pid, sizeof server_pid);
      ::pause();  // wait to be killed
    } catch (...) {}
    ::_exit(1);
  }
  ::close(fds[1]);
  pid_t server_pid = -1;
  ASSERT_EQ(::read(fds[0], &server_pid, sizeof server_pid), static_cast<ssize_t>(sizeof server_pid));
  ::close(fds[0]);
  ASSERT_TRUE(process_alive(server_pid));
  const std::string orphan_dir = "/proc/" + std::to_string(server_pid) + "/cwd";
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::read_symlink(orphan_dir, ec);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(eventually_dead(server_pid, 5'000)) << "orphaned redis-server pid " << server_pid;
  // Its directory is left behind by the killed launcher; the next start() sweeps it.
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_TRUE(std::filesystem::exists(dir)) << dir;
  RedisServer next = RedisServer::start(test_options());
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir << " was not swept";
  next.stop();
  std::filesystem::remove_all(private_tmp, ec);
}

TEST(RedisServer, KillThenRestartOnTheSameDirectoryKeepsAofWrites) {
  RedisServerOptions o = test_options();
  o.persistence = RedisPersistence::kAofEverysec;
  o.extra_args = {"--appendfsync", "always"};  // make the test independent of the 1 s flush
  RedisServer first = RedisServer::start(o);
  {
    RedisConnection conn = RedisConnection::unix_socket(first.socket_path());
    ASSERT_EQ(conn.command({"SET", "durable", "1"}), RedisReply::ok());
  }
  const pid_t first_pid = first.pid();
  first.kill();
  EXPECT_FALSE(process_alive(first_pid));
  ASSERT_TRUE(std::filesystem::exists(first.dir()));

  o.dir = first.dir();
  first.keep_dir(true);  // the restarted server owns and removes it
  RedisServer second = RedisServer::start(o);
  RedisConnection conn = RedisConnection::unix_socket(second.socket_path());
  EXPECT_EQ(conn.command({"GET", "durable"}), RedisReply::bulk("1"));
}

TEST(RedisServer, MissingBinaryNamesThePackage) {
  RedisServerOptions o;
  o.binary_path = "/nonexistent/redis-server";
  try {
    (void)RedisServer::start(o);
    FAIL() << "expected RedisServerError";
  } catch (const RedisServerError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("apt-get install"), std::string::npos) << what;
    EXPECT_NE(what.find("redis-server"), std::string::npos) << what;
  }
}

TEST(RedisServer, BadArgumentsFailFastWithTheLog) {
  RedisServerOptions o = test_options();
  o.extra_args = {"--no-such-option", "1"};
  try {
    (void)RedisServer::start(o);
    FAIL() << "expected RedisServerError";
  } catch (const RedisServerError& e) {
    EXPECT_NE(std::string(e.what()).find("exited during startup"), std::string::npos) << e.what();
  }
}

TEST(RedisConnection, RepliesErrorsPipelinesAndTransportFailures) {
  RedisServer server = RedisServer::start(test_options());
  RedisConnection conn = RedisConnection::unix_socket(server.socket_path());
  EXPECT_EQ(conn.command({"GET", "missing"}), RedisReply::nil());
  EXPECT_EQ(conn.command({"INCR", "n"}), RedisReply::integer_of(1));
  RedisReply err = conn.command({"HGET", "n", "f"});
  EXPECT_TRUE(err.is_error());
  EXPECT_EQ(err.str, "WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(conn.command({"SET", "bin", std::string("a\0b\r\n", 5)}), RedisReply::ok());
  EXPECT_EQ(conn.command({"GET", "bin"}), RedisReply::bulk(std::string("a\0b\r\n", 5)));

  std::vector<RedisReply> replies = conn.pipeline({{"RPUSH", "l", "a", "b"}, {"LRANGE", "l", "0", "-1"}, {"BOGUS"}});
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[0], RedisReply::integer_of(2));
  EXPECT_EQ(replies[1], RedisReply::array({RedisReply::bulk("a"), RedisReply::bulk("b")}));
  EXPECT_TRUE(replies[2].is_error());

  // A nil multi-bulk reaches us as nil (RESP2 through hiredis 0.14).
  EXPECT_EQ(conn.command({"WATCH", "n"}), RedisReply::ok());
  RedisConnection other = RedisConnection::unix_socket(server.socket_path());
  EXPECT_EQ(other.command({"INCR", "n"}), RedisReply::integer_of(2));
  EXPECT_EQ(conn.command({"MULTI"}), RedisReply::ok());
  EXPECT_EQ(conn.command({"INCR", "n"}), RedisReply::status("QUEUED"));
  EXPECT_EQ(conn.command({"EXEC"}), RedisReply::nil());

  const std::string socket = server.socket_path();
  server.stop();
  RedisReply gone = conn.command({"PING"});
  EXPECT_TRUE(gone.is_transport_error()) << gone.describe();
  RedisConnection never = RedisConnection::unix_socket(socket);
  RedisReply refused = never.command({"PING"});
  EXPECT_TRUE(refused.is_transport_error());
  EXPECT_FALSE(refused.indeterminate);  // never sent
}

}  // namespace
}  // namespace fl::real
