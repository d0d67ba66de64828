// Real clients against `faultline redis-serve` (issue 14): the redis-cli binary of the installed
// Redis, and hiredis's connection handshake (HELLO, SELECT, CLIENT SETNAME) side by side with a
// real redis-server that the test starts and always stops.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "harness/real/hiredis_client.h"
#include "harness/real/redis_server.h"
#include "harness/resp/resp_server.h"
#include "impl/likes/scripts.h"

namespace fl {
namespace {

namespace fs = std::filesystem;

std::string redis_cli() { return (fs::path(REDIS_SERVER_PATH).parent_path() / "redis-cli").string(); }

// Runs a shell command, returns its stdout.
std::string sh(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf;
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  ::pclose(p);
  return out;
}

// `faultline redis-serve` as a child process on a unix socket, stopped by SIGTERM in the
// destructor (and killed if it does not stop).
class ServeProcess {
 public:
  explicit ServeProcess(std::vector<std::string> extra) {
    char templ[] = "/tmp/fl-cli-XXXXXX";
    dir_ = ::mkdtemp(templ);
    socket_ = dir_ + "/serve.sock";
    std::vector<std::string> args = {std::string(FAULTLINE_BINARY_DIR) + "/faultline", "redis-serve", "--socket",
                                     socket_};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::freopen("/dev/null", "w", stdout);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    for (int i = 0; i < 200 && !fs::exists(socket_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      for (int i = 0; i < 200 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (::waitpid(pid_, &status, WNOHANG) == 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
      }
    }
    fs::remove_all(dir_);
  }
  std::string cli(const std::string& args) const { return sh(redis_cli() + " -s " + socket_ + " " + args + " 2>&1"); }
  const std::string& socket() const { return socket_; }

 private:
  std::string dir_, socket_;
  pid_t pid_ = -1;
};

TEST(RedisCli, TalksToRedisServe) {
  ServeProcess serve({});
  ASSERT_TRUE(fs::exists(serve.socket()));
  EXPECT_EQ(serve.cli("PING"), "PONG\n");
  EXPECT_EQ(serve.cli("-n 3 SET k v"), "OK\n");
  EXPECT_EQ(serve.cli("-n 3 GET k"), "v\n");
  EXPECT_EQ(serve.cli("GET k"), "\n");  // database 0 has no k
  EXPECT_NE(serve.cli("INFO keyspace").find("db3:keys=1,expires=0"), std::string::npos);
  EXPECT_NE(serve.cli("INFO server").find("redis_version:7.0.15"), std::string::npos);
  // Lines piped on stdin run on one connection: SELECT holds for the next ones.
  EXPECT_EQ(sh("printf 'SELECT 5\\nSET a b\\nCLIENT SETNAME cli\\nCLIENT GETNAME\\nDBSIZE\\n' | " + redis_cli() +
               " -s " + serve.socket()),
            "OK\nOK\nOK\ncli\n1\n");
  EXPECT_EQ(serve.cli("-n 5 --scan"), "a\n");  // redis-cli's SCAN loop
  EXPECT_EQ(serve.cli("CONFIG GET maxmemory-policy"), "maxmemory-policy\nnoeviction\n");
  EXPECT_EQ(serve.cli("OBJECT ENCODING nosuch"), "\n");
  EXPECT_EQ(serve.cli("-n 3 OBJECT ENCODING k"), "embstr\n");
  EXPECT_EQ(serve.cli("SELECT 16"), "ERR DB index is out of range\n\n");
  EXPECT_NE(serve.cli("DEBUG SLEEP 0").find("ERR faultline: DEBUG is not supported"), std::string::npos);
  EXPECT_EQ(serve.cli("FUNCTION LOAD x"), "ERR Missing library metadata\n\n");
  // The data-type surface as redis-cli prints it (nested replies, lag, a nil map value).
  EXPECT_EQ(serve.cli("ZADD z 0 a 0 b 0 c"), "3\n");
  EXPECT_EQ(serve.cli("ZRANGE z '(a' + BYLEX"), "b\nc\n");
  EXPECT_EQ(serve.cli("ZUNION 2 z z WITHSCORES"), "a\n0\nb\n0\nc\n0\n");
  EXPECT_EQ(serve.cli("XGROUP CREATE x g 0 MKSTREAM"), "OK\n");
  EXPECT_EQ(serve.cli("XINFO GROUPS x"),
            "name\ng\nconsumers\n0\npending\n0\nlast-delivered-id\n0-0\n"
            "entries-read\n\nlag\n0\n");
  EXPECT_EQ(serve.cli("SET s ohmytext"), "OK\n");
  EXPECT_EQ(serve.cli("LCS s s LEN"), "8\n");
}

// redis-cli -3 prints RESP3's types ((double), maps as `1# key => value`, (nil) for `_`): the
// same text from redis-serve as from a real redis-server.
TEST(RedisCli, Resp3OutputMatchesARealServer) {
  real::RedisServerOptions o;
  o.binary_path = REDIS_SERVER_PATH;
  real::RedisServer server = real::RedisServer::start(o);
  ServeProcess serve({});
  ASSERT_TRUE(fs::exists(serve.socket()));
  auto both = [&](const std::string& args) {
    const std::string cli = redis_cli() + " -3 --no-raw -s ";
    return std::make_pair(sh(cli + serve.socket() + " " + args + " 2>&1"),
                          sh(cli + server.socket_path() + " " + args + " 2>&1"));
  };
  for (const char* args : {"HSET h a 1 b 2", "HGETALL h", "ZADD z 1.5 m 2 n", "ZSCORE z m", "ZSCORE z nope",
                           "ZRANGE z 0 -1 WITHSCORES", "SADD s 1 2 3", "SMEMBERS s", "GET missing", "XADD x 1-1 f v",
                           "XREAD STREAMS x 0", "CONFIG GET maxmemory-policy", "ZPOPMIN z"}) {
    const auto [sim, real] = both(args);
    EXPECT_EQ(sim, real) << args;
  }
  EXPECT_EQ(both("ZSCORE z n").first, "(double) 2\n");
  server.stop();
}

TEST(RedisCli, RedisServeLoadsASystemsScripts) {
  const auto registry = likes::likes_scripts();
  const std::string name = registry->names().front();
  const std::string sha = registry->sha1_of(name);
  {
    ServeProcess serve({"--scripts", "likes"});
    EXPECT_EQ(serve.cli("SCRIPT EXISTS " + sha), "1\n");  // loaded at the start: EVALSHA works at once
    EXPECT_EQ(serve.cli("SCRIPT FLUSH"), "OK\n");
    EXPECT_EQ(serve.cli("SCRIPT EXISTS " + sha), "0\n");
    // redis-cli -x takes the last argument from stdin: the script's Lua text, unchanged.
    const fs::path lua = fs::temp_directory_path() / ("fl-lua-" + std::to_string(::getpid()));
    {
      std::FILE* f = std::fopen(lua.c_str(), "w");
      std::fputs(registry->by_name(name)->lua.c_str(), f);
      std::fclose(f);
    }
    EXPECT_EQ(sh(redis_cli() + " -s " + serve.socket() + " -x SCRIPT LOAD < " + lua.string()), sha + "\n");
    EXPECT_EQ(serve.cli("SCRIPT EXISTS " + sha), "1\n");
    fs::remove(lua);
  }
  ServeProcess plain({});
  EXPECT_EQ(sh(redis_cli() + " -s " + plain.socket() + " EVAL 'return 1' 0"), "1\n");  // Lua
  ServeProcess bad({"--scripts", "nosuch"});
  EXPECT_FALSE(fs::exists(bad.socket()));
}

// The handshake a client library makes, through hiredis, against a real server and redis-serve:
// the same shape of answers.
std::vector<std::string> handshake(real::RedisConnection& c) {
  std::vector<std::string> seen;
  RedisReply hello = c.command({"HELLO", "2", "SETNAME", "app"});
  seen.push_back(std::to_string(hello.elements.size()));
  int64_t hello_id = -1;
  for (size_t i = 0; i + 1 < hello.elements.size(); i += 2) {
    const std::string& k = hello.elements[i].str;
    const RedisReply& v = hello.elements[i + 1];
    if (k == "id")
      hello_id = v.integer;
    else
      seen.push_back(k + "=" + (v.kind == RedisReply::Kind::kInteger ? std::to_string(v.integer) : v.describe()));
  }
  seen.push_back(c.command({"CLIENT", "GETNAME"}).describe());
  seen.push_back(c.command({"SELECT", "5"}).describe());
  seen.push_back(c.command({"CLIENT", "SETNAME", "app-2"}).describe());
  seen.push_back(c.command({"CLIENT", "GETNAME"}).describe());
  const RedisReply id = c.command({"CLIENT", "ID"});
  seen.push_back(id.integer == hello_id && id.integer > 0 ? "id matches HELLO" : "id " + id.describe());
  const std::string info = c.command({"CLIENT", "INFO"}).str;
  seen.push_back(info.find("name=app-2 ") != std::string::npos && info.find(" db=5 ") != std::string::npos
                     ? "CLIENT INFO ok"
                     : info);
  const std::string list = c.command({"CLIENT", "LIST"}).str;
  seen.push_back(list.find("id=" + std::to_string(hello_id) + " ") != std::string::npos &&
                         list.find("name=app-2 ") != std::string::npos
                     ? "CLIENT LIST ok"
                     : list);
  seen.push_back(c.command({"SET", "k", "v"}).describe());
  seen.push_back(c.command({"DBSIZE"}).describe());
  seen.push_back(c.command({"HELLO", "3"}).is_error() ? "HELLO 3 refused" : "HELLO 3 accepted");
  return seen;
}

TEST(HiredisHandshake, RedisServeAnswersAsRedisDoes) {
  real::RedisServerOptions o;
  o.binary_path = REDIS_SERVER_PATH;
  real::RedisServer server = real::RedisServer::start(o);
  real::RedisConnection real_conn = real::RedisConnection::unix_socket(server.socket_path());

  char templ[] = "/tmp/fl-hs-XXXXXX";
  const std::string dir = ::mkdtemp(templ);
  resp::RespServerOptions ro;
  ro.unix_path = dir + "/resp.sock";
  resp::RespServer served(std::move(ro));
  std::string error;
  ASSERT_TRUE(served.listen(&error)) << error;
  std::thread loop([&] { served.serve(); });
  std::vector<std::string> sim_seen;
  {
    real::RedisConnection sim_conn = real::RedisConnection::unix_socket(served.unix_path());
    sim_seen = handshake(sim_conn);
  }
  served.request_stop();
  loop.join();
  fs::remove_all(dir);

  std::vector<std::string> real_seen = handshake(real_conn);
  ASSERT_EQ(real_seen.back(), "HELLO 3 accepted");  // both switch to RESP3
  EXPECT_EQ(sim_seen, real_seen);
  EXPECT_EQ(sim_seen.front(), "14");  // seven HELLO fields
}

}  // namespace
}  // namespace fl
