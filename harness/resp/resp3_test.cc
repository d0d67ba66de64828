// RESP3 (HELLO 3) as redis-serve writes it, compared byte for byte with a real redis-server (the
// binary CMake found) on the same commands: maps, sets, doubles, nulls, WITHSCORES pairs,
// XREAD's map, verbatim text and pub/sub pushes. Commands whose reply text is time- or
// process-dependent (INFO, CLIENT INFO, HELLO's id) are compared by type only.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/real/redis_server.h"
#include "harness/resp/resp.h"
#include "harness/resp/served_engine_testing.h"

namespace fl::resp {
namespace {

// A raw RESP connection: sends argv as a multi-bulk and returns each reply's exact bytes.
class RawConnection {
 public:
  explicit RawConnection(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      throw std::runtime_error("connect " + path);
    }
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  void send(const std::vector<std::string>& argv) {
    std::string out = "*" + std::to_string(argv.size()) + "\r\n";
    for (const auto& a : argv) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    for (size_t sent = 0; sent < out.size();) {
      const ssize_t n = ::write(fd_, out.data() + sent, out.size() - sent);
      if (n <= 0) throw std::runtime_error("write");
      sent += static_cast<size_t>(n);
    }
  }
  // The bytes of the next complete reply.
  std::string read_raw() {
    for (;;) {
      size_t used = 0;
      RedisReply r;
      if (!buf_.empty() && decode_reply(buf_, &used, &r)) {
        std::string raw = buf_.substr(0, used);
        buf_.erase(0, used);
        return raw;
      }
      char tmp[4096];
      const ssize_t n = ::read(fd_, tmp, sizeof tmp);
      if (n <= 0) throw std::runtime_error("read: connection closed or timed out");
      buf_.append(tmp, static_cast<size_t>(n));
    }
  }
  std::string call(const std::vector<std::string>& argv) {
    send(argv);
    return read_raw();
  }

 private:
  int fd_ = -1;
  std::string buf_;
};

std::string printable(const std::string& raw) {
  std::string out;
  for (char ch : raw) {
    if (ch == '\r')
      out += "\\r";
    else if (ch == '\n')
      out += "\\n";
    else
      out += ch;
  }
  return out;
}

// One real redis-server and one redis-serve engine, each with a RESP3 connection.
class Resp3VsReal : public ::testing::Test {
 protected:
  void SetUp() override {
    real::RedisServerOptions o;
    o.binary_path = REDIS_SERVER_PATH;
    real_ = std::make_unique<real::RedisServer>(real::RedisServer::start(o));
    real_conn_ = std::make_unique<RawConnection>(real_->socket_path());
    sim_conn_ = std::make_unique<RawConnection>(sim_.socket_path());
    for (RawConnection* c : {real_conn_.get(), sim_conn_.get()}) {
      const std::string hello = c->call({"HELLO", "3"});
      ASSERT_EQ(hello.substr(0, 4), "%7\r\n") << printable(hello);
    }
  }
  void TearDown() override {
    real_conn_.reset();
    if (real_) real_->stop();
  }
  // Runs argv on both and expects the same bytes.
  void same(const std::vector<std::string>& argv) {
    const std::string want = real_conn_->call(argv);
    const std::string got = sim_conn_->call(argv);
    EXPECT_EQ(printable(got), printable(want)) << "command: " << argv[0] << (argv.size() > 1 ? " " + argv[1] : "");
  }
  // Runs argv on both and expects the same first byte (the RESP3 type).
  void same_type(const std::vector<std::string>& argv) {
    const std::string want = real_conn_->call(argv);
    const std::string got = sim_conn_->call(argv);
    ASSERT_FALSE(want.empty());
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got[0], want[0]) << argv[0] << ": " << printable(got) << " vs " << printable(want);
  }
  // With notify-keyspace-events `flags` on both servers and a connection to each subscribed to
  // `pattern`, runs `commands` on both (SPOP's members come in Redis's random order: its reply's
  // type only), then expects the next `events` deliveries byte for byte.
  void same_events(const std::string& flags, const std::string& pattern,
                   const std::vector<std::vector<std::string>>& commands, int events) {
    RawConnection real_sub(real_->socket_path());
    RawConnection sim_sub(sim_.socket_path());
    same({"CONFIG", "SET", "notify-keyspace-events", flags});
    EXPECT_EQ(printable(sim_sub.call({"PSUBSCRIBE", pattern})), printable(real_sub.call({"PSUBSCRIBE", pattern})));
    for (const auto& command : commands) {
      if (command[0] == "SPOP") {
        same_type(command);
      } else {
        same(command);
      }
    }
    for (int i = 0; i < events; ++i) {
      EXPECT_EQ(printable(sim_sub.read_raw()), printable(real_sub.read_raw())) << "event " << i;
    }
  }

  ServedEngine sim_;
  std::unique_ptr<real::RedisServer> real_;
  std::unique_ptr<RawConnection> real_conn_, sim_conn_;
};

TEST_F(Resp3VsReal, NullsMapsSetsAndScalars) {
  same({"GET", "missing"});
  same({"SET", "k", "v"});
  same({"GET", "k"});
  same({"INCR", "n"});
  same({"HSET", "h", "a", "1", "b", "2"});
  same({"HGETALL", "h"});
  same({"HGETALL", "missing"});
  same({"SADD", "s", "1", "2", "3"});
  same({"SADD", "t", "2", "3", "4"});
  same({"SMEMBERS", "s"});
  same({"SINTER", "s", "t"});
  same({"SUNION", "s", "t"});
  same({"SDIFF", "s", "t"});
  same({"CONFIG", "GET", "maxmemory-policy"});
  same({"SINTERSTORE", "u", "s", "t"});
  same({"SMEMBERS", "u"});
  same({"SDIFF", "missing", "s"});
  same({"HGET", "k", "f"});  // WRONGTYPE, unchanged
  same({"HELLO", "4"});
}

TEST_F(Resp3VsReal, SortedSetsAnswerDoublesAndPairs) {
  same({"ZADD", "z", "1", "a", "2.5", "b", "-3", "c"});
  same({"ZSCORE", "z", "b"});
  same({"ZSCORE", "z", "nope"});
  same({"ZINCRBY", "z", "1", "a"});
  same({"ZMSCORE", "z", "a", "nope", "c"});
  same({"ZADD", "z", "INCR", "0.5", "a"});
  same({"ZRANGE", "z", "0", "-1"});
  same({"ZRANGE", "z", "0", "-1", "WITHSCORES"});
  same({"ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES"});
  same({"ZREVRANGE", "z", "0", "-1", "WITHSCORES"});
  same({"ZADD", "y", "10", "a"});
  same({"ZUNION", "2", "z", "y", "WITHSCORES"});
  same({"ZINTER", "2", "z", "y", "WITHSCORES"});
  same({"ZDIFF", "2", "z", "y", "WITHSCORES"});
  same({"ZPOPMIN", "z"});
  same({"ZPOPMAX", "z", "2"});
  same({"ZPOPMIN", "z", "5"});
  same({"ZADD", "w", "1e300", "big", "inf", "top"});
  same({"ZRANGE", "w", "0", "-1", "WITHSCORES"});
}

TEST_F(Resp3VsReal, StreamsReadAsMaps) {
  same({"XADD", "st", "1-1", "f", "v"});
  same({"XADD", "st", "1-2", "g", "w"});
  same({"XREAD", "COUNT", "10", "STREAMS", "st", "0"});
  same({"XREAD", "STREAMS", "st", "$"});
  same({"XGROUP", "CREATE", "st", "grp", "0"});
  same({"XREADGROUP", "GROUP", "grp", "c", "COUNT", "1", "STREAMS", "st", ">"});
  same({"XINFO", "GROUPS", "st"});
  same({"XRANGE", "st", "-", "+"});
  same({"XREAD", "STREAMS", "st", ">"});
  same({"XREAD", "GROUP", "g", "c", "STREAMS", "st", "0"});
  same({"XREAD", "STREAMS", "st"});
}

TEST_F(Resp3VsReal, BlockedXreadWaitsForEntriesAfterDollar) {
  same({"XADD", "bs", "5-1", "f", "v"});
  real_conn_->send({"XREAD", "BLOCK", "3000", "STREAMS", "bs", "$"});
  sim_conn_->send({"XREAD", "BLOCK", "3000", "STREAMS", "bs", "$"});
  RawConnection real_writer(real_->socket_path());
  RawConnection sim_writer(sim_.socket_path());
  EXPECT_EQ(printable(sim_writer.call({"XADD", "bs", "6-1", "g", "w"})),
            printable(real_writer.call({"XADD", "bs", "6-1", "g", "w"})));
  EXPECT_EQ(printable(sim_conn_->read_raw()), printable(real_conn_->read_raw()));
  same({"XREAD", "BLOCK", "50", "STREAMS", "bs", "$"});  // times out: null
}

// SWAPDB wakes a reader blocked on a stream of a swapped database when the stream swapped in has
// entries after the one it waits for (Redis 7.0 dbSwapDatabases -> scanDatabaseForReadyKeys).
TEST_F(Resp3VsReal, SwapdbWakesABlockedReader) {
  for (RawConnection* c : {real_conn_.get(), sim_conn_.get()})
    c->send({"XREAD", "BLOCK", "3000", "STREAMS", "sw", "0"});
  RawConnection real_writer(real_->socket_path());
  RawConnection sim_writer(sim_.socket_path());
  for (const std::vector<std::string>& argv :
       std::vector<std::vector<std::string>>{{"SELECT", "1"}, {"XADD", "sw", "3-1", "f", "v"}, {"SWAPDB", "0", "1"}}) {
    EXPECT_EQ(printable(sim_writer.call(argv)), printable(real_writer.call(argv))) << argv[0];
  }
  EXPECT_EQ(printable(sim_conn_->read_raw()), printable(real_conn_->read_raw()));
}

TEST_F(Resp3VsReal, TransactionsShapeEachReply) {
  same({"HSET", "h", "a", "1"});
  same({"ZADD", "z", "2", "m"});
  same({"MULTI"});
  same({"HGETALL", "h"});
  same({"ZSCORE", "z", "m"});
  same({"GET", "missing"});
  same({"EXEC"});
}

TEST_F(Resp3VsReal, VerbatimTextAndBackToResp2) {
  same_type({"INFO", "keyspace"});
  same_type({"CLIENT", "INFO"});
  same_type({"CLIENT", "LIST"});
  same_type({"HELLO", "2"});  // a map: *14 in RESP2 now
  same({"GET", "missing"});   // $-1 again
  same({"HGETALL", "missing"});
}

// A script's redis.setresp(3) makes its redis.call()s answer RESP3 values ({map=...}, {set=...},
// {double=...}, nil, booleans); its returned tables of those forms, and its booleans under RESP3,
// reach a RESP3 caller as RESP3 types and a RESP2 caller flattened.
TEST_F(Resp3VsReal, ScriptsChooseTheirProtocol) {
  const std::vector<std::vector<std::string>> scripts = {
      {"EVAL", "redis.setresp(3) return redis.call('hgetall', KEYS[1])", "1", "h"},
      {"EVAL", "redis.setresp(2) return redis.call('hgetall', KEYS[1])", "1", "h"},
      {"EVAL", "redis.setresp(3) local r = redis.call('hgetall', KEYS[1]) return r.map.a", "1", "h"},
      {"EVAL", "redis.setresp(3) local r = redis.call('smembers', 's') return r.set['2'] and 1 or 0", "0"},
      {"EVAL", "redis.setresp(3) return redis.call('zscore', 'z', 'm').double * 2", "0"},
      {"EVAL", "redis.setresp(3) return redis.call('zscore', 'z', 'm')", "0"},
      {"EVAL", "redis.setresp(3) return redis.call('get', 'missing') == nil", "0"},
      {"EVAL", "redis.setresp(3) return {true, false}", "0"},
      {"EVAL", "return {true, false}", "0"},
      {"EVAL", "return {double=3.5}", "0"},
      {"EVAL", "return {big_number='12345678901234567890'}", "0"},
      {"EVAL", "return {map={a=1}}", "0"},
      {"EVAL", "return {set={x=true}}", "0"},
      {"EVAL", "return {verbatim_string={format='txt', string='hi'}}", "0"},
      {"EVAL", "redis.setresp(4)", "0"},
      {"EVAL", "redis.setresp()", "0"},
  };
  same({"HSET", "h", "a", "1"});
  same({"SADD", "s", "2"});
  same({"ZADD", "z", "2.5", "m"});
  for (const auto& script : scripts) same(script);
  same_type({"HELLO", "2"});
  for (const auto& script : scripts) same(script);
}

// Every command that empties a collection deletes its key and sends the generic `del` event:
// the same events, in the same order, as a real server's (class g only: the per-type events
// of SPOP, SMOVE, the sorted-set pops and ZREMRANGEBY* are not all sent yet).
TEST_F(Resp3VsReal, EmptiedCollectionsSendDel) {
  const std::vector<std::vector<std::string>> commands = {
      {"SADD", "s", "a"},
      {"SREM", "s", "a"},
      {"SADD", "s", "a", "b"},
      {"SPOP", "s", "2"},
      {"SADD", "s2", "a"},
      {"SMOVE", "s2", "s3", "a"},
      {"ZADD", "z", "1", "a"},
      {"ZPOPMIN", "z"},
      {"ZADD", "z", "1", "a"},
      {"ZREM", "z", "a"},
      {"ZADD", "z", "1", "a", "2", "b"},
      {"ZREMRANGEBYSCORE", "z", "0", "5"},
      {"ZADD", "z", "1", "a"},
      {"ZMPOP", "1", "z", "MIN"},
      {"HSET", "h", "f", "v"},
      {"HDEL", "h", "f"},
      {"RPUSH", "l", "a"},
      {"LPOP", "l"},
      {"DEL", "s3"},
  };
  same_events("Eg", "__keyevent@*", commands, 10);  // one del per emptied key, and DEL's
}

TEST_F(Resp3VsReal, NewKeysSendNew) {
  const std::vector<std::vector<std::string>> commands = {
      {"SET", "foo", "bar"}, {"SET", "foo", "baz"},   {"SET", "bar", "bar"},       {"RPUSH", "l", "a"},
      {"RPUSH", "l", "b"},   {"HSET", "h", "f", "v"}, {"SADD", "s", "a"},          {"ZADD", "z", "1", "a"},
      {"INCR", "n"},         {"APPEND", "ap", "x"},   {"SETRANGE", "r", "2", "x"},
  };
  // new and set, set, new and set, new and rpush, rpush, then new and one event for each other
  same_events("E$lshzn", "__keyevent@*", commands, 20);
}

TEST_F(Resp3VsReal, WritesSendTheirEvents) {
  const std::vector<std::vector<std::string>> commands = {
      {"SETEX", "a", "100", "1"},   {"PSETEX", "b", "100000", "2"},
      {"MSET", "c", "3", "d", "4"}, {"GETSET", "c", "5"},
      {"APPEND", "c", "6"},         {"INCRBYFLOAT", "d", "1.5"},
      {"SETRANGE", "d", "0", "9"},  {"HINCRBYFLOAT", "h", "f", "2"},
      {"SADD", "s", "m"},           {"SMOVE", "s", "t", "m"},
      {"COPY", "t", "u"},           {"RENAME", "u", "v"},
      {"MOVE", "v", "3"},           {"MSETNX", "e", "1"},
  };
  // Two deliveries (keyspace and keyevent) per event: set+expire twice, set twice, set, append,
  // incrbyfloat, setrange, hincrbyfloat, sadd, srem+del+sadd, copy_to, rename_from+rename_to,
  // move_from+move_to, set.
  same_events("KEA", "__key*@*", commands, 2 * 21);
}

TEST_F(Resp3VsReal, PubSubUsesPushes) {
  same({"SUBSCRIBE", "ch1", "ch2"});
  EXPECT_EQ(printable(sim_conn_->read_raw()), printable(real_conn_->read_raw()));  // ch2's confirmation
  RawConnection real_pub(real_->socket_path());
  RawConnection sim_pub(sim_.socket_path());
  EXPECT_EQ(printable(sim_pub.call({"PUBLISH", "ch2", "hello"})),
            printable(real_pub.call({"PUBLISH", "ch2", "hello"})));
  EXPECT_EQ(printable(sim_conn_->read_raw()), printable(real_conn_->read_raw()));
}

}  // namespace
}  // namespace fl::resp
