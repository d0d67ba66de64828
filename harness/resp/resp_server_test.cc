#include "harness/resp/resp_server.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "harness/real/hiredis_client.h"
#include "harness/resp/served_engine_testing.h"

namespace fl::resp {
namespace {

using real::RedisConnection;

TEST(RespServer, ServesCommandsAndPipelines) {
  ServedEngine s;
  RedisConnection c = s.connect();
  EXPECT_EQ(c.command({"PING"}), RedisReply::status("PONG"));
  EXPECT_EQ(c.command({"SET", "k", std::string("bin\0\r\n", 6)}), RedisReply::ok());
  EXPECT_EQ(c.command({"GET", "k"}), RedisReply::bulk(std::string("bin\0\r\n", 6)));
  EXPECT_EQ(c.command({"HGET", "k", "f"}),
            RedisReply::error("WRONGTYPE Operation against a key holding the wrong kind of value"));
  std::vector<RedisReply> replies = c.pipeline({{"INCR", "n"}, {"INCR", "n"}, {"GET", "n"}, {"GET", "none"}});
  ASSERT_EQ(replies.size(), 4u);
  EXPECT_EQ(replies[1], RedisReply::integer_of(2));
  EXPECT_EQ(replies[2], RedisReply::bulk("2"));
  EXPECT_EQ(replies[3], RedisReply::nil());
}

TEST(RespServer, MultiExecPerConnection) {
  ServedEngine s;
  RedisConnection a = s.connect();
  RedisConnection b = s.connect();
  EXPECT_EQ(a.command({"MULTI"}), RedisReply::ok());
  EXPECT_EQ(a.command({"INCR", "n"}), RedisReply::status("QUEUED"));
  EXPECT_EQ(b.command({"GET", "n"}), RedisReply::nil());  // not yet executed
  RedisReply exec = a.command({"EXEC"});
  EXPECT_EQ(exec, RedisReply::array({RedisReply::integer_of(1)}));
  EXPECT_EQ(b.command({"GET", "n"}), RedisReply::bulk("1"));
}

// A script that runs past busy-reply-threshold (lua-time-limit) leaves the server serving other
// clients as Redis 7.0 does: -BUSY for all but the allow-busy commands (MULTI is, so a queued
// command refused -BUSY aborts the EXEC), SCRIPT KILL ends a script that has not written and its
// caller gets "Script killed by user"; one that has written is UNKILLABLE (stopping the server ends it).
TEST(RespServer, BusyScriptAnswersBusyUntilScriptKill) {
  const std::string busy = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
  ServedEngine s;
  RedisConnection a = s.connect();
  RedisConnection b = s.connect();
  RedisConnection c = s.connect();
  EXPECT_EQ(a.command({"CONFIG", "SET", "lua-time-limit", "10"}), RedisReply::ok());
  EXPECT_EQ(a.command({"CONFIG", "GET", "busy-reply-threshold"}),
            RedisReply::array({RedisReply::bulk("busy-reply-threshold"), RedisReply::bulk("10")}));
  EXPECT_EQ(b.command({"SCRIPT", "KILL"}), RedisReply::error("NOTBUSY No scripts in execution right now."));
  ASSERT_TRUE(a.send({"EVAL", "while true do end", "0"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(b.command({"GET", "x"}), RedisReply::error(busy));
  EXPECT_EQ(b.command({"MULTI"}), RedisReply::ok());
  EXPECT_EQ(b.command({"INCR", "x"}), RedisReply::error(busy));
  EXPECT_EQ(c.command({"FUNCTION", "KILL"}), RedisReply::error(busy));  // an EVAL is busy, not a function
  EXPECT_EQ(c.command({"SCRIPT", "KILL"}), RedisReply::ok());
  EXPECT_EQ(a.read_reply(), RedisReply::error("ERR Script killed by user with SCRIPT KILL... script: "
                                              "694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7, on @user_script:1."));
  EXPECT_EQ(b.command({"EXEC"}), RedisReply::error("EXECABORT Transaction discarded because of previous errors."));
  EXPECT_EQ(b.command({"GET", "x"}), RedisReply::nil());

  ASSERT_TRUE(a.send({"EVAL", "redis.call('SET', 'x', '1') while true do end", "0"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(c.command({"SCRIPT", "KILL"}),
            RedisReply::error("UNKILLABLE Sorry the script already executed write commands against the dataset. You "
                              "can either wait the script termination or kill the server in a hard way using the "
                              "SHUTDOWN NOSAVE command."));
}

TEST(RespServer, PubSubPushesMessagesAsSeparateReplies) {
  ServedEngine s;
  RedisConnection sub = s.connect();
  RedisConnection pub = s.connect();
  ASSERT_TRUE(sub.send({"SUBSCRIBE", "a", "b"}));
  EXPECT_EQ(sub.read_reply(),
            RedisReply::array({RedisReply::bulk("subscribe"), RedisReply::bulk("a"), RedisReply::integer_of(1)}));
  EXPECT_EQ(sub.read_reply(),
            RedisReply::array({RedisReply::bulk("subscribe"), RedisReply::bulk("b"), RedisReply::integer_of(2)}));
  EXPECT_EQ(pub.command({"PUBLISH", "b", "hello"}), RedisReply::integer_of(1));
  EXPECT_EQ(sub.read_reply(),
            RedisReply::array({RedisReply::bulk("message"), RedisReply::bulk("b"), RedisReply::bulk("hello")}));
  EXPECT_EQ(pub.command({"PUBLISH", "zzz", "x"}), RedisReply::integer_of(0));
}

TEST(RespServer, PatternSubscribersGetPmessagesAndCount) {
  ServedEngine s;
  RedisConnection sub = s.connect();
  RedisConnection pub = s.connect();
  ASSERT_TRUE(sub.send({"PSUBSCRIBE", "news.*"}));
  EXPECT_EQ(sub.read_reply(),
            RedisReply::array({RedisReply::bulk("psubscribe"), RedisReply::bulk("news.*"), RedisReply::integer_of(1)}));
  ASSERT_TRUE(sub.send({"SUBSCRIBE", "news.art"}));
  EXPECT_EQ(sub.read_reply(), RedisReply::array({RedisReply::bulk("subscribe"), RedisReply::bulk("news.art"),
                                                 RedisReply::integer_of(2)}));
  // One message per subscription that matches: the channel's, then the pattern's.
  EXPECT_EQ(pub.command({"PUBLISH", "news.art", "m"}), RedisReply::integer_of(2));
  EXPECT_EQ(sub.read_reply(),
            RedisReply::array({RedisReply::bulk("message"), RedisReply::bulk("news.art"), RedisReply::bulk("m")}));
  EXPECT_EQ(sub.read_reply(), RedisReply::array({RedisReply::bulk("pmessage"), RedisReply::bulk("news.*"),
                                                 RedisReply::bulk("news.art"), RedisReply::bulk("m")}));
  EXPECT_EQ(pub.command({"PUBSUB", "NUMPAT"}), RedisReply::integer_of(1));
  EXPECT_EQ(pub.command({"PUBLISH", "sport", "x"}), RedisReply::integer_of(0));
  ASSERT_TRUE(sub.send({"PUNSUBSCRIBE"}));
  EXPECT_EQ(sub.read_reply(), RedisReply::array({RedisReply::bulk("punsubscribe"), RedisReply::bulk("news.*"),
                                                 RedisReply::integer_of(1)}));
  EXPECT_EQ(pub.command({"PUBSUB", "NUMPAT"}), RedisReply::integer_of(0));
}

TEST(RespServer, KeyspaceNotificationsReachPatternSubscribers) {
  ServedEngine s;
  RedisConnection sub = s.connect();
  RedisConnection c = s.connect();
  ASSERT_EQ(c.command({"CONFIG", "SET", "notify-keyspace-events", "KEl"}), RedisReply::ok());
  ASSERT_TRUE(sub.send({"PSUBSCRIBE", "*"}));
  EXPECT_EQ(sub.read_reply().elements.at(0), RedisReply::bulk("psubscribe"));
  EXPECT_EQ(c.command({"SET", "foo", "bar"}), RedisReply::ok());  // a string event: masked
  EXPECT_EQ(c.command({"RPUSH", "l", "a"}), RedisReply::integer_of(1));
  auto pmessage = [](const char* channel, const char* payload) {
    return RedisReply::array(
        {RedisReply::bulk("pmessage"), RedisReply::bulk("*"), RedisReply::bulk(channel), RedisReply::bulk(payload)});
  };
  EXPECT_EQ(sub.read_reply(), pmessage("__keyspace@0__:l", "rpush"));
  EXPECT_EQ(sub.read_reply(), pmessage("__keyevent@0__:rpush", "l"));
  ASSERT_EQ(c.command({"CONFIG", "SET", "notify-keyspace-events", "Eg"}), RedisReply::ok());
  EXPECT_EQ(c.command({"DEL", "foo"}), RedisReply::integer_of(1));
  EXPECT_EQ(sub.read_reply(), pmessage("__keyevent@0__:del", "foo"));
}

TEST(RespServer, ClientReplyOffSilencesRepliesButNotPushes) {
  ServedEngine s;
  RedisConnection c = s.connect();
  RedisConnection pub = s.connect();
  ASSERT_TRUE(c.send({"CLIENT", "REPLY", "SKIP"}));
  ASSERT_TRUE(c.send({"SET", "k", "1"}));  // its OK is skipped
  EXPECT_EQ(c.command({"GET", "k"}), RedisReply::bulk("1"));
  ASSERT_TRUE(c.send({"CLIENT", "REPLY", "OFF"}));
  ASSERT_TRUE(c.send({"SET", "k", "2"}));
  ASSERT_TRUE(c.send({"SUBSCRIBE", "ch"}));  // confirmations are pushes: still sent
  EXPECT_EQ(c.read_reply(),
            RedisReply::array({RedisReply::bulk("subscribe"), RedisReply::bulk("ch"), RedisReply::integer_of(1)}));
  EXPECT_EQ(pub.command({"PUBLISH", "ch", "m"}), RedisReply::integer_of(1));
  EXPECT_EQ(c.read_reply(),
            RedisReply::array({RedisReply::bulk("message"), RedisReply::bulk("ch"), RedisReply::bulk("m")}));
  EXPECT_EQ(pub.command({"GET", "k"}), RedisReply::bulk("2"));
}

TEST(RespServer, BlockedSortedSetPopIsWokenByZaddAndRename) {
  ServedEngine s;
  RedisConnection reader = s.connect();
  RedisConnection writer = s.connect();
  ASSERT_TRUE(reader.send({"BZPOPMIN", "z", "2"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(writer.command({"ZADD", "z", "3", "m"}), RedisReply::integer_of(1));
  EXPECT_EQ(reader.read_reply(),
            RedisReply::array({RedisReply::bulk("z"), RedisReply::bulk("m"), RedisReply::bulk("3")}));
  ASSERT_TRUE(reader.send({"BLPOP", "l", "2"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(writer.command({"RPUSH", "other", "a", "b"}), RedisReply::integer_of(2));
  EXPECT_EQ(writer.command({"RENAME", "other", "l"}), RedisReply::ok());  // dbAdd signals the key
  EXPECT_EQ(reader.read_reply(), RedisReply::array({RedisReply::bulk("l"), RedisReply::bulk("a")}));
}

TEST(RespServer, BlockedReadIsWokenByAnotherConnectionsXadd) {
  ServedEngine s;
  RedisConnection reader = s.connect();
  RedisConnection writer = s.connect();
  ASSERT_EQ(writer.command({"XGROUP", "CREATE", "st", "g", "$", "MKSTREAM"}), RedisReply::ok());
  ASSERT_TRUE(reader.send({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "2000", "STREAMS", "st", ">"}));
  ASSERT_TRUE(reader.send({"PING"}));  // pipelined behind the blocked read
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  RedisReply id = writer.command({"XADD", "st", "5-1", "f", "v"});
  EXPECT_EQ(id, RedisReply::bulk("5-1"));
  RedisReply r = reader.read_reply();
  ASSERT_EQ(r.kind, RedisReply::Kind::kArray) << r.describe();
  EXPECT_EQ(r.describe(), "[[\"st\", [[\"5-1\", [\"f\", \"v\"]]]]]");
  EXPECT_EQ(reader.read_reply(), RedisReply::status("PONG"));
}

TEST(RespServer, BlockedReadgroupLearnsItsStreamOrGroupIsGone) {
  ServedEngine s;
  RedisConnection reader = s.connect();
  RedisConnection writer = s.connect();
  ASSERT_EQ(writer.command({"XGROUP", "CREATE", "st", "g", "$", "MKSTREAM"}), RedisReply::ok());
  ASSERT_TRUE(reader.send({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "st", ">"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(writer.command({"XGROUP", "DESTROY", "st", "g"}), RedisReply::integer_of(1));
  EXPECT_EQ(reader.read_reply(),
            RedisReply::error("NOGROUP the consumer group this client was blocked on no longer exists"));
  ASSERT_EQ(writer.command({"XGROUP", "CREATE", "st", "g", "$"}), RedisReply::ok());
  ASSERT_TRUE(reader.send({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "st", ">"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(writer.command({"FLUSHALL"}), RedisReply::ok());
  EXPECT_EQ(reader.read_reply(), RedisReply::error("UNBLOCKED the stream key no longer exists"));
}

// Commands from different connections run in the order their bytes came, as Redis's event loop
// runs them, also when both wait for the same round: a reader that blocks on a stream and then,
// from an older connection, a DEL of it (Redis's "Blocking XREADGROUP: key deleted"). The server
// is polled by hand so that both commands are read in one round; poll(2) listed them by session.
TEST(RespServer, CommandsOfOneRoundRunInArrivalOrder) {
  char templ[] = "/tmp/fl-resp-XXXXXX";
  const std::string dir = ::mkdtemp(templ);
  RespServerOptions o;
  o.unix_path = dir + "/resp.sock";
  RespServer server(o);
  std::string error;
  ASSERT_TRUE(server.listen(&error)) << error;
  RedisConnection older = RedisConnection::unix_socket(o.unix_path, 3'000);  // the lower session id
  RedisConnection reader = RedisConnection::unix_socket(o.unix_path, 3'000);
  ASSERT_TRUE(older.send({"XADD", "st", "1-1", "f", "v"}));  // connects (hiredis connects at first use)
  ASSERT_TRUE(older.send({"XGROUP", "CREATE", "st", "g", "$"}));
  ASSERT_TRUE(reader.send({"PING"}));
  for (int i = 0; i < 3; ++i) server.poll_once(0);
  EXPECT_EQ(older.read_reply(), RedisReply::bulk("1-1"));
  EXPECT_EQ(older.read_reply(), RedisReply::ok());
  EXPECT_EQ(reader.read_reply(), RedisReply::status("PONG"));
  // A served loop polls again as soon as a socket is woken (here: by the clients' reads above).
  server.poll_once(0);
  ASSERT_TRUE(reader.send({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "st", ">"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(older.send({"DEL", "st"}));
  for (int i = 0; i < 3; ++i) server.poll_once(0);
  EXPECT_EQ(older.read_reply(), RedisReply::integer_of(1));
  EXPECT_EQ(reader.read_reply(), RedisReply::error("UNBLOCKED the stream key no longer exists"));
  std::filesystem::remove_all(dir);
}

TEST(RespServer, ClientUnblockEndsABlockedPopAsATimeoutOrAnError) {
  ServedEngine s;
  RedisConnection reader = s.connect();
  RedisConnection admin = s.connect();
  const RedisReply id = reader.command({"CLIENT", "ID"});
  ASSERT_EQ(id.kind, RedisReply::Kind::kInteger);
  const std::string reader_id = std::to_string(id.integer);
  EXPECT_EQ(admin.command({"CLIENT", "UNBLOCK", reader_id}), RedisReply::integer_of(0));  // not blocked
  ASSERT_TRUE(reader.send({"BLPOP", "l", "0"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(admin.command({"CLIENT", "UNBLOCK", reader_id, "BOGUS"}),
            RedisReply::error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"));
  EXPECT_EQ(admin.command({"CLIENT", "UNBLOCK", reader_id}), RedisReply::integer_of(1));
  EXPECT_TRUE(reader.read_reply().is_nil());  // the timeout's null reply
  ASSERT_TRUE(reader.send({"BLPOP", "l", "0"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(admin.command({"CLIENT", "UNBLOCK", reader_id, "ERROR"}), RedisReply::integer_of(1));
  EXPECT_EQ(reader.read_reply().describe(), "(error) UNBLOCKED client unblocked via CLIENT UNBLOCK");
}

TEST(RespServer, BlockedReadTimesOutWithNil) {
  ServedEngine s;
  RedisConnection c = s.connect();
  ASSERT_EQ(c.command({"XGROUP", "CREATE", "st", "g", "$", "MKSTREAM"}), RedisReply::ok());
  auto start = std::chrono::steady_clock::now();
  RedisReply r = c.command({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "100", "STREAMS", "st", ">"});
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.is_nil()) << r.describe();
  EXPECT_GE(waited, std::chrono::milliseconds(95));
  EXPECT_LT(waited, std::chrono::milliseconds(1500));
}

TEST(RespServer, TtlsRunOnTheWallClock) {
  ServedEngine s;
  RedisConnection c = s.connect();
  EXPECT_EQ(c.command({"SET", "k", "v", "PX", "50"}), RedisReply::ok());
  RedisReply pttl = c.command({"PTTL", "k"});
  EXPECT_GT(pttl.integer, 0);
  EXPECT_LE(pttl.integer, 50);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_EQ(c.command({"GET", "k"}), RedisReply::nil());
}

TEST(RespServer, ActiveExpiryRunsOnTicks) {
  RespServerOptions o;
  o.tick_interval_ms = 10;
  ServedEngine s(std::move(o));
  RedisConnection c = s.connect();
  EXPECT_EQ(c.command({"SET", "k", "v", "PX", "20"}), RedisReply::ok());
  EXPECT_EQ(c.command({"DBSIZE"}), RedisReply::integer_of(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // DBSIZE counts keys not yet reclaimed: 0 proves the cron deleted it without a lookup.
  EXPECT_EQ(c.command({"DBSIZE"}), RedisReply::integer_of(0));
}

TEST(RespServer, ProtocolErrorRepliesAndCloses) {
  ServedEngine s;
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", s.socket_path().c_str());
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string bad = "PING\r\n*1\r\n+x\r\n";
  ASSERT_EQ(::write(fd, bad.data(), bad.size()), static_cast<ssize_t>(bad.size()));
  std::string got;
  char buf[256];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  ::close(fd);
  EXPECT_EQ(got, "+PONG\r\n-ERR Protocol error: expected '$', got '+'\r\n");
}

TEST(RespServer, InlineCommandsAndQuit) {
  ServedEngine s;
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", s.socket_path().c_str());
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string wire = "SET greeting \"hello world\"\r\nGET greeting\r\nQUIT\r\nPING\r\n";
  ASSERT_EQ(::write(fd, wire.data(), wire.size()), static_cast<ssize_t>(wire.size()));
  std::string got;
  char buf[256];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  ::close(fd);
  EXPECT_EQ(got, "+OK\r\n$11\r\nhello world\r\n+OK\r\n");  // nothing after QUIT
}

TEST(RespServer, TcpPortAndRedisCli) {
  RespServerOptions o;
  o.tcp_port = 0;
  RespServer server(std::move(o));
  std::string error;
  ASSERT_TRUE(server.listen(&error)) << error;
  ASSERT_GT(server.port(), 0);
  std::thread t([&] { server.serve(); });
  RedisConnection c = RedisConnection::tcp("127.0.0.1", server.port());
  EXPECT_EQ(c.command({"SET", "k", "from-hiredis"}), RedisReply::ok());
  if (::access("/usr/bin/redis-cli", X_OK) == 0) {
    std::string cmd = "/usr/bin/redis-cli -p " + std::to_string(server.port()) + " GET k";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    char line[128] = {};
    ASSERT_NE(std::fgets(line, sizeof line, p), nullptr);
    ::pclose(p);
    EXPECT_EQ(std::string(line), "from-hiredis\n");
  }
  server.request_stop();
  t.join();
}

TEST(RespServer, RunRedisServeFailsWhenItCannotListen) {
  RespServerOptions o;
  o.unix_path = "/nonexistent-dir/x.sock";
  EXPECT_EQ(run_redis_serve(std::move(o)), 1);
}

}  // namespace
}  // namespace fl::resp
