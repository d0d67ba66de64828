// Engine unit tests per command family. Expected replies and error strings were checked against
// redis-server 7.0.15 (see also engine_vs_real_test.cc, which replays a corpus against it).
#include "sim/redis/engine.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace fl::sim::redis {
namespace {

constexpr int64_t kT0 = 1'767'225'600'000;  // ms

class EngineTest : public ::testing::Test {
 protected:
  // Runs one command at time `now` and renders its reply.
  std::string run(std::initializer_list<std::string> argv) { return engine.execute(session, argv, now).describe(); }
  RedisReply raw(std::initializer_list<std::string> argv) { return engine.execute(session, argv, now); }

  Engine engine;
  Session session;
  int64_t now = kT0;
};

TEST_F(EngineTest, StringsSetGetAndOptions) {
  EXPECT_EQ(run({"GET", "k"}), "(nil)");
  EXPECT_EQ(run({"SET", "k", "v"}), "+OK");
  EXPECT_EQ(run({"GET", "k"}), "\"v\"");
  EXPECT_EQ(run({"SET", "k", "w", "NX"}), "(nil)");
  EXPECT_EQ(run({"SET", "k", "w", "XX", "GET"}), "\"v\"");
  EXPECT_EQ(run({"SET", "n", "w", "XX"}), "(nil)");
  EXPECT_EQ(run({"SET", "k", "1", "nx", "xx"}), "(error) ERR syntax error");
  EXPECT_EQ(run({"SET", "k", "1", "EX", "0"}), "(error) ERR invalid expire time in 'set' command");
  EXPECT_EQ(run({"SET", "k", "1", "EX", "abc"}), "(error) ERR value is not an integer or out of range");
  EXPECT_EQ(run({"SET", "k", "1", "PX", "100", "EX", "1"}), "(error) ERR syntax error");
  EXPECT_EQ(run({"SETNX", "k", "x"}), "(integer) 0");
  EXPECT_EQ(run({"SETNX", "k2", "x"}), "(integer) 1");
  EXPECT_EQ(run({"MGET", "k", "nope", "k2"}), "[\"w\", (nil), \"x\"]");
  EXPECT_EQ(run({"GET"}), "(error) ERR wrong number of arguments for 'get' command");
}

// Issue 45 part 5: a client's input never crashes the engine. SETRANGE with an offset near
// INT64_MAX overflowed offset + length and the engine threw std::length_error.
TEST_F(EngineTest, SetrangeAtInt64BoundariesAnswersWithoutThrowing) {
  const std::string too_big = "(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)";
  EXPECT_EQ(run({"SETRANGE", "k", "9223372036854775807", "A"}), too_big);
  EXPECT_EQ(run({"EXISTS", "k"}), "(integer) 0");
  EXPECT_EQ(run({"SET", "k", "hello"}), "+OK");
  EXPECT_EQ(run({"SETRANGE", "k", "9223372036854775807", "A"}), too_big);
  EXPECT_EQ(run({"SETRANGE", "k", "9223372036854775806", "xy"}), too_big);
  EXPECT_EQ(run({"SETRANGE", "k", "536870911", "xy"}), too_big);
  EXPECT_EQ(run({"SETRANGE", "k", "-9223372036854775808", "A"}), "(error) ERR offset is out of range");
  EXPECT_EQ(run({"SETRANGE", "k", "9223372036854775808", "A"}), "(error) ERR value is not an integer or out of range");
  EXPECT_EQ(run({"SETRANGE", "k", "9223372036854775807", ""}), "(integer) 5");
  EXPECT_EQ(run({"GET", "k"}), "\"hello\"");
}

TEST_F(EngineTest, CountersFollowString2llAndOverflowRules) {
  EXPECT_EQ(run({"INCR", "c"}), "(integer) 1");
  EXPECT_EQ(run({"INCRBY", "c", "41"}), "(integer) 42");
  EXPECT_EQ(run({"DECR", "c"}), "(integer) 41");
  EXPECT_EQ(run({"DECRBY", "c", "50"}), "(integer) -9");
  EXPECT_EQ(run({"INCRBY", "c", "+1"}), "(error) ERR value is not an integer or out of range");
  EXPECT_EQ(run({"INCRBY", "c", "01"}), "(error) ERR value is not an integer or out of range");
  EXPECT_EQ(run({"SET", "s", "x"}), "+OK");
  EXPECT_EQ(run({"INCR", "s"}), "(error) ERR value is not an integer or out of range");
  EXPECT_EQ(run({"SET", "m", "9223372036854775807"}), "+OK");
  EXPECT_EQ(run({"INCR", "m"}), "(error) ERR increment or decrement would overflow");
  EXPECT_EQ(run({"DECRBY", "m", "-9223372036854775808"}), "(error) ERR decrement would overflow");
  EXPECT_EQ(run({"HSET", "h", "f", "v"}), "(integer) 1");
  EXPECT_EQ(run({"INCR", "h"}), "(error) WRONGTYPE Operation against a key holding the wrong kind of value");
}

TEST_F(EngineTest, KeysDelExistsTypeAndUnknownCommands) {
  run({"SET", "a", "1"});
  run({"SADD", "s", "x"});
  EXPECT_EQ(run({"EXISTS", "a", "a", "s", "z"}), "(integer) 3");
  EXPECT_EQ(run({"TYPE", "a"}), "+string");
  EXPECT_EQ(run({"TYPE", "s"}), "+set");
  EXPECT_EQ(run({"TYPE", "z"}), "+none");
  EXPECT_EQ(run({"DBSIZE"}), "(integer) 2");
  EXPECT_EQ(run({"DEL", "a", "s", "z"}), "(integer) 2");
  EXPECT_EQ(run({"foo", "bar", "baz"}), "(error) ERR unknown command 'foo', with args beginning with: 'bar' 'baz' ");
  EXPECT_EQ(run({"PING"}), "+PONG");
  EXPECT_EQ(run({"PING", "hi"}), "\"hi\"");
  EXPECT_EQ(run({"FLUSHALL"}), "+OK");
}

TEST_F(EngineTest, TtlsUseTheGivenClockWithLazyExpiry) {
  EXPECT_EQ(run({"SET", "k", "v", "PX", "1500"}), "+OK");
  EXPECT_EQ(run({"PTTL", "k"}), "(integer) 1500");
  EXPECT_EQ(run({"TTL", "k"}), "(integer) 2");  // rounded like Redis: (1500 + 500) / 1000
  EXPECT_EQ(run({"TTL", "none"}), "(integer) -2");
  run({"SET", "p", "v"});
  EXPECT_EQ(run({"TTL", "p"}), "(integer) -1");
  EXPECT_EQ(run({"EXPIRE", "p", "10", "XX"}), "(integer) 0");
  EXPECT_EQ(run({"EXPIRE", "p", "10", "NX"}), "(integer) 1");
  EXPECT_EQ(run({"EXPIRE", "p", "5", "GT"}), "(integer) 0");
  EXPECT_EQ(run({"EXPIRE", "p", "5", "LT"}), "(integer) 1");
  EXPECT_EQ(run({"EXPIRE", "p", "5", "NX", "XX"}),
            "(error) ERR NX and XX, GT or LT options at the same time are not compatible");
  EXPECT_EQ(run({"EXPIRE", "p", "10", "foo"}), "(error) ERR Unsupported option foo");
  EXPECT_EQ(run({"PERSIST", "p"}), "(integer) 1");
  EXPECT_EQ(run({"PERSIST", "p"}), "(integer) 0");
  run({"INCR", "k"});  // "v" is not an integer: an error, and no change to the TTL
  now += 1499;
  EXPECT_EQ(run({"GET", "k"}), "\"v\"");
  now += 1;
  EXPECT_EQ(run({"GET", "k"}), "(nil)");
  EXPECT_EQ(engine.stats().expired_lazy, 1u);
  EXPECT_EQ(run({"PEXPIRE", "p", "-1"}), "(integer) 1");  // in the past: deleted
  EXPECT_EQ(run({"EXISTS", "p"}), "(integer) 0");
  // KEEPTTL keeps, a plain SET clears.
  run({"SET", "t", "1", "EX", "100"});
  run({"SET", "t", "2", "KEEPTTL"});
  EXPECT_EQ(run({"TTL", "t"}), "(integer) 100");
  run({"SET", "t", "3"});
  EXPECT_EQ(run({"TTL", "t"}), "(integer) -1");
}

TEST_F(EngineTest, ActiveExpiryReclaimsKeysNobodyReads) {
  for (int i = 0; i < 100; ++i) run({"SET", "k" + std::to_string(i), "v", "PX", "10"});
  run({"SET", "keep", "v"});
  EXPECT_EQ(run({"DBSIZE"}), "(integer) 101");
  now += 20;
  EXPECT_EQ(run({"DBSIZE"}), "(integer) 101");  // DBSIZE counts unreclaimed keys, as Redis does
  size_t reclaimed = 0;
  for (int cycle = 0; cycle < 10 && reclaimed < 100; ++cycle) reclaimed += engine.active_expire_cycle(now);
  EXPECT_EQ(reclaimed, 100u);
  EXPECT_EQ(run({"DBSIZE"}), "(integer) 1");
}

TEST_F(EngineTest, Hashes) {
  EXPECT_EQ(run({"HSET", "h", "b", "2", "a", "1"}), "(integer) 2");
  EXPECT_EQ(run({"HSET", "h", "a", "9"}), "(integer) 0");
  EXPECT_EQ(run({"HSET", "h", "a"}), "(error) ERR wrong number of arguments for 'hset' command");
  EXPECT_EQ(run({"HSETNX", "h", "a", "x"}), "(integer) 0");
  EXPECT_EQ(run({"HGET", "h", "a"}), "\"9\"");
  EXPECT_EQ(run({"HGETALL", "h"}), "[\"a\", \"9\", \"b\", \"2\"]");
  EXPECT_EQ(run({"HINCRBY", "h", "a", "1"}), "(integer) 10");
  EXPECT_EQ(run({"HSET", "h", "s", "x"}), "(integer) 1");
  EXPECT_EQ(run({"HINCRBY", "h", "s", "1"}), "(error) ERR hash value is not an integer");
  EXPECT_EQ(run({"HINCRBY", "h", "a", "x"}), "(error) ERR value is not an integer or out of range");
  EXPECT_EQ(run({"HLEN", "h"}), "(integer) 3");
  EXPECT_EQ(run({"HDEL", "h", "a", "b", "s", "zz"}), "(integer) 3");
  EXPECT_EQ(run({"EXISTS", "h"}), "(integer) 0");  // the last field takes the key with it
}

TEST_F(EngineTest, Sets) {
  EXPECT_EQ(run({"SADD", "s", "b", "a", "b"}), "(integer) 2");
  EXPECT_EQ(run({"SISMEMBER", "s", "a"}), "(integer) 1");
  EXPECT_EQ(run({"SMEMBERS", "s"}), "[\"a\", \"b\"]");
  EXPECT_EQ(run({"SCARD", "s"}), "(integer) 2");
  EXPECT_EQ(run({"SREM", "s", "a", "b", "c"}), "(integer) 2");
  EXPECT_EQ(run({"SMEMBERS", "s"}), "[]");
}

TEST_F(EngineTest, SortedSets) {
  EXPECT_EQ(run({"ZADD", "z", "1.1", "a"}), "(integer) 1");
  EXPECT_EQ(run({"ZSCORE", "z", "a"}), "\"1.1000000000000001\"");
  EXPECT_EQ(run({"ZADD", "z", "2", "b", "2", "c", "-inf", "d"}), "(integer) 3");
  EXPECT_EQ(run({"ZRANGE", "z", "0", "-1", "WITHSCORES"}),
            "[\"d\", \"-inf\", \"a\", \"1.1000000000000001\", \"b\", \"2\", \"c\", \"2\"]");
  EXPECT_EQ(run({"ZREVRANGE", "z", "0", "1"}), "[\"c\", \"b\"]");
  EXPECT_EQ(run({"ZRANGE", "z", "(1.1", "2", "BYSCORE", "LIMIT", "1", "5"}), "[\"c\"]");
  EXPECT_EQ(run({"ZADD", "z", "nan", "x"}), "(error) ERR value is not a valid float");
  EXPECT_EQ(run({"ZINCRBY", "z", "1e400", "a"}), "(error) ERR value is not a valid float");
  EXPECT_EQ(run({"ZINCRBY", "z", "+inf", "d"}), "(error) ERR resulting score is not a number (NaN)");
  EXPECT_EQ(run({"ZADD", "z", "XX", "NX", "1", "a"}),
            "(error) ERR XX and NX options at the same time are not compatible");
  EXPECT_EQ(run({"ZADD", "z", "GT", "CH", "0", "b", "5", "c"}), "(integer) 1");
  EXPECT_EQ(run({"ZADD", "z", "INCR", "2", "b"}), "\"4\"");
  EXPECT_EQ(run({"ZADD", "z", "NX", "INCR", "2", "b"}), "(nil)");
  EXPECT_EQ(run({"ZADD", "z", "NX", "1"}), "(error) ERR syntax error");
  EXPECT_EQ(run({"ZREM", "z", "a", "q"}), "(integer) 1");
  EXPECT_EQ(run({"ZCARD", "z"}), "(integer) 3");
  EXPECT_EQ(run({"ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"}),
            "(error) ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
}

TEST_F(EngineTest, MultiExecQueuesAndAbortsOnQueueingErrors) {
  EXPECT_EQ(run({"EXEC"}), "(error) ERR EXEC without MULTI");
  EXPECT_EQ(run({"MULTI"}), "+OK");
  EXPECT_EQ(run({"MULTI"}), "(error) ERR MULTI calls can not be nested");
  EXPECT_EQ(run({"INCR", "c"}), "+QUEUED");
  EXPECT_EQ(run({"HSET", "c", "f", "v"}), "+QUEUED");
  EXPECT_EQ(run({"INCR", "c"}), "+QUEUED");
  EXPECT_EQ(run({"EXEC"}),
            "[(integer) 1, (error) WRONGTYPE Operation against a key holding the wrong kind of value, (integer) 2]");
  EXPECT_EQ(run({"MULTI"}), "+OK");
  EXPECT_EQ(run({"INCR", "c"}), "+QUEUED");
  EXPECT_EQ(run({"SET", "x"}), "(error) ERR wrong number of arguments for 'set' command");
  EXPECT_EQ(run({"EXEC"}), "(error) EXECABORT Transaction discarded because of previous errors.");
  EXPECT_EQ(run({"GET", "c"}), "\"2\"");
  EXPECT_EQ(run({"MULTI"}), "+OK");
  EXPECT_EQ(run({"INCR", "c"}), "+QUEUED");
  EXPECT_EQ(run({"DISCARD"}), "+OK");
  EXPECT_EQ(run({"GET", "c"}), "\"2\"");
}

TEST_F(EngineTest, StreamsAddRangeDelAndIds) {
  EXPECT_EQ(run({"XADD", "s", "5", "a", "b"}), "\"5-0\"");
  EXPECT_EQ(run({"XADD", "s", "5-*", "a", "b"}), "\"5-1\"");
  EXPECT_EQ(run({"XADD", "s", "4-1", "a", "b"}),
            "(error) ERR The ID specified in XADD is equal or smaller than the target stream top item");
  EXPECT_EQ(run({"XADD", "s", "6-abc", "a", "b"}),
            "(error) ERR Invalid stream ID specified as stream command argument");
  EXPECT_EQ(run({"XADD", "s", "0-0", "a", "b"}), "(error) ERR The ID specified in XADD must be greater than 0-0");
  EXPECT_EQ(run({"XADD", "s", "*", "a"}), "(error) ERR wrong number of arguments for 'xadd' command");
  EXPECT_EQ(run({"XADD", "s", "*", "f", "v"}), "\"" + std::to_string(now) + "-0\"");
  EXPECT_EQ(run({"XADD", "s", "*", "f", "v"}), "\"" + std::to_string(now) + "-1\"");
  EXPECT_EQ(run({"XLEN", "s"}), "(integer) 4");
  EXPECT_EQ(run({"XRANGE", "s", "-", "+", "COUNT", "2"}), "[[\"5-0\", [\"a\", \"b\"]], [\"5-1\", [\"a\", \"b\"]]]");
  EXPECT_EQ(run({"XRANGE", "s", "(5-0", "5"}), "[[\"5-1\", [\"a\", \"b\"]]]");
  EXPECT_EQ(run({"XRANGE", "s", "-", "+", "COUNT", "0"}), "(nil-array)");
  EXPECT_EQ(run({"XRANGE", "s", "(-", "+"}), "(error) ERR Invalid stream ID specified as stream command argument");
  EXPECT_EQ(run({"XREVRANGE", "s", "5-1", "-"}), "[[\"5-1\", [\"a\", \"b\"]], [\"5-0\", [\"a\", \"b\"]]]");
  EXPECT_EQ(run({"XDEL", "s", "5-0", "5-0", "9-9"}), "(integer) 1");
  EXPECT_EQ(run({"XLEN", "s"}), "(integer) 3");
  EXPECT_EQ(run({"XADD", "s", "MAXLEN", "=", "2", "LIMIT", "5", "*", "a", "b"}),
            "(error) ERR syntax error, LIMIT cannot be used without the special ~ option");
  EXPECT_EQ(run({"XADD", "nos", "NOMKSTREAM", "*", "a", "b"}), "(nil)");
}

TEST_F(EngineTest, StreamTrimmingExactAndApproximateByNodes) {
  for (int i = 1; i <= 150; ++i) run({"XADD", "s", std::to_string(i), "f", "v"});
  // ~ removes whole 100-entry nodes only: trimming to 60 cannot drop the first node (100 live).
  EXPECT_EQ(run({"XADD", "s", "MAXLEN", "~", "60", "151", "f", "v"}), "\"151-0\"");
  EXPECT_EQ(run({"XLEN", "s"}), "(integer) 151");
  // To 50 it can: the first node goes, 51 entries stay.
  EXPECT_EQ(run({"XADD", "s", "MAXLEN", "~", "50", "152", "f", "v"}), "\"152-0\"");
  EXPECT_EQ(run({"XLEN", "s"}), "(integer) 52");
  EXPECT_EQ(run({"XADD", "s", "MAXLEN", "=", "10", "153", "f", "v"}), "\"153-0\"");
  EXPECT_EQ(run({"XLEN", "s"}), "(integer) 10");
  EXPECT_EQ(run({"XRANGE", "s", "-", "-"}), "[]");
  EXPECT_EQ(run({"XRANGE", "s", "-", "+", "COUNT", "1"}), "[[\"144-0\", [\"f\", \"v\"]]]");
  EXPECT_EQ(run({"XADD", "s", "MINID", "=", "150", "154", "f", "v"}), "\"154-0\"");
  EXPECT_EQ(run({"XLEN", "s"}), "(integer) 5");
}

TEST_F(EngineTest, ConsumerGroupsReadAckPendingClaim) {
  EXPECT_EQ(run({"XGROUP", "CREATE", "s", "g", "$"}),
            "(error) ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use "
            "the MKSTREAM option to create an empty stream automatically.");
  EXPECT_EQ(run({"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"}), "+OK");
  EXPECT_EQ(run({"XGROUP", "CREATE", "s", "g", "$"}), "(error) BUSYGROUP Consumer Group name already exists");
  EXPECT_EQ(run({"XGROUP", "foo"}), "(error) ERR unknown subcommand 'foo'. Try XGROUP HELP.");
  EXPECT_EQ(run({"XGROUP", "CREATE", "s"}), "(error) ERR wrong number of arguments for 'xgroup|create' command");
  EXPECT_EQ(run({"XPENDING", "s", "g"}), "[(integer) 0, (nil), (nil), (nil-array)]");
  EXPECT_EQ(run({"XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"}), "(nil-array)");
  EXPECT_EQ(run({"XREADGROUP", "GROUP", "x", "c1", "STREAMS", "s", ">"}),
            "(error) NOGROUP No such key 's' or consumer group 'x' in XREADGROUP with GROUP option");
  run({"XADD", "s", "1", "a", "1"});
  run({"XADD", "s", "2", "a", "2"});
  run({"XADD", "s", "3", "a", "3"});
  EXPECT_EQ(run({"XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">"}),
            "[[\"s\", [[\"1-0\", [\"a\", \"1\"]], [\"2-0\", [\"a\", \"2\"]]]]]");
  EXPECT_EQ(run({"XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"}), "[[\"s\", [[\"3-0\", [\"a\", \"3\"]]]]]");
  EXPECT_EQ(run({"XPENDING", "s", "g"}), "[(integer) 3, \"1-0\", \"3-0\", [[\"c1\", \"2\"], [\"c2\", \"1\"]]]");
  now += 100;
  // History read: c1's pending entries after 0; bumps their delivery count.
  EXPECT_EQ(run({"XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "0"}),
            "[[\"s\", [[\"1-0\", [\"a\", \"1\"]], [\"2-0\", [\"a\", \"2\"]]]]]");
  EXPECT_EQ(run({"XPENDING", "s", "g", "-", "+", "10"}),
            "[[\"1-0\", \"c1\", (integer) 0, (integer) 2], [\"2-0\", \"c1\", (integer) 0, (integer) 2], "
            "[\"3-0\", \"c2\", (integer) 100, (integer) 1]]");
  EXPECT_EQ(run({"XPENDING", "s", "g", "IDLE", "50", "-", "+", "10", "c2"}),
            "[[\"3-0\", \"c2\", (integer) 100, (integer) 1]]");
  EXPECT_EQ(run({"XACK", "s", "g", "1-0", "9-0"}), "(integer) 1");
  EXPECT_EQ(run({"XACK", "s", "g", "bad"}), "(error) ERR Invalid stream ID specified as stream command argument");
  EXPECT_EQ(run({"XCLAIM", "s", "g", "c3", "50", "2-0", "3-0"}), "[[\"3-0\", [\"a\", \"3\"]]]");
  EXPECT_EQ(run({"XCLAIM", "s", "g", "c3", "x", "2-0"}), "(error) ERR Invalid min-idle-time argument for XCLAIM");
  EXPECT_EQ(run({"XCLAIM", "s", "g", "c3", "0", "2-0", "JUSTID", "foo"}),
            "(error) ERR Unrecognized XCLAIM option 'foo'");
  // An entry deleted from the stream leaves the PEL when claimed (7.0's third element).
  run({"XDEL", "s", "2-0"});
  now += 100;
  EXPECT_EQ(run({"XAUTOCLAIM", "s", "g", "c4", "50", "0", "COUNT", "10"}),
            "[\"0-0\", [[\"3-0\", [\"a\", \"3\"]]], [\"2-0\"]]");
  EXPECT_EQ(run({"XAUTOCLAIM", "s", "g", "c4", "0", "0", "COUNT", "0"}), "(error) ERR COUNT must be > 0");
  EXPECT_EQ(run({"XPENDING", "s", "g", "-", "+", "10"}), "[[\"3-0\", \"c4\", (integer) 0, (integer) 3]]");
}

TEST_F(EngineTest, XAutoClaimCursorStopsAfterCount) {
  run({"XGROUP", "CREATE", "s", "g", "0", "MKSTREAM"});
  for (int i = 1; i <= 5; ++i) run({"XADD", "s", std::to_string(i), "f", "v"});
  run({"XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">"});
  EXPECT_EQ(run({"XAUTOCLAIM", "s", "g", "b", "0", "-", "COUNT", "2", "JUSTID"}), "[\"3-0\", [\"1-0\", \"2-0\"], []]");
  EXPECT_EQ(run({"XAUTOCLAIM", "s", "g", "b", "0", "3-0", "COUNT", "3", "JUSTID"}),
            "[\"0-0\", [\"3-0\", \"4-0\", \"5-0\"], []]");
}

TEST_F(EngineTest, BlockingReadGroupReportsWouldBlockAndKeysSignal) {
  run({"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"});
  RedisReply r = raw({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "500", "STREAMS", "s", ">"});
  EXPECT_EQ(r.kind, RedisReply::Kind::kNilArray);
  ASSERT_TRUE(session.blocked.has_value());
  EXPECT_EQ(session.blocked->timeout_ms, 500);
  EXPECT_EQ(session.blocked->keys, std::vector<std::string>{"s"});
  EXPECT_TRUE(engine.take_signaled_keys().empty());
  Session other;
  engine.execute(other, {"XADD", "s", "7", "f", "v"}, now);
  EXPECT_EQ(engine.take_signaled_keys(), std::vector<std::string>{"s"});
  // Re-executing the parked command now answers.
  EXPECT_EQ(run({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "500", "STREAMS", "s", ">"}),
            "[[\"s\", [[\"7-0\", [\"f\", \"v\"]]]]]");
  EXPECT_FALSE(session.blocked.has_value());
  // Inside MULTI a blocking read never blocks.
  run({"MULTI"});
  run({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"});
  EXPECT_EQ(run({"EXEC"}), "[(nil-array)]");
  EXPECT_FALSE(session.blocked.has_value());
  EXPECT_EQ(run({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "-1", "STREAMS", "s", ">"}),
            "(error) ERR timeout is negative");
}

TEST_F(EngineTest, PubSubRoutesToSubscribedSessionsOnly) {
  Session sub;
  sub.id = 7;
  EXPECT_EQ(engine.execute(sub, {"SUBSCRIBE", "a", "b"}, now).describe(),
            "[[\"subscribe\", \"a\", (integer) 1], [\"subscribe\", \"b\", (integer) 2]]");
  EXPECT_EQ(engine.execute(sub, {"GET", "x"}, now).describe(),
            "(error) ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
            "allowed in this context");
  EXPECT_EQ(engine.execute(sub, {"PING"}, now).describe(), "[\"pong\", \"\"]");
  EXPECT_EQ(run({"PUBLISH", "a", "hello"}), "(integer) 1");
  EXPECT_EQ(run({"PUBLISH", "c", "nobody"}), "(integer) 0");
  auto d = engine.take_deliveries();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].session_id, 7u);
  EXPECT_EQ(d[0].channel, "a");
  EXPECT_EQ(d[0].payload, "hello");
  EXPECT_EQ(engine.execute(sub, {"UNSUBSCRIBE"}, now).describe(),
            "[[\"unsubscribe\", \"a\", (integer) 1], [\"unsubscribe\", \"b\", (integer) 0]]");
  EXPECT_EQ(run({"PUBLISH", "a", "late"}), "(integer) 0");
  engine.execute(sub, {"SUBSCRIBE", "a"}, now);
  engine.close_session(sub);
  EXPECT_EQ(run({"PUBLISH", "a", "gone"}), "(integer) 0");
}

TEST_F(EngineTest, PublishObserverSeesEveryPublishWithOrWithoutSubscribers) {
  std::vector<std::string> seen;
  engine.set_publish_observer(
      [&](const std::string& ch, const std::string& payload) { seen.push_back(ch + "=" + payload); });
  Session sub;
  sub.id = 9;
  engine.execute(sub, {"SUBSCRIBE", "a"}, now);
  EXPECT_EQ(run({"PUBLISH", "a", "one"}), "(integer) 1");
  EXPECT_EQ(run({"PUBLISH", "b", "nobody"}), "(integer) 0");
  run({"MULTI"});
  run({"PUBLISH", "b", "queued"});
  EXPECT_TRUE(seen.size() == 2u);  // queued, not executed yet
  run({"EXEC"});
  EXPECT_EQ(seen, (std::vector<std::string>{"a=one", "b=nobody", "b=queued"}));
}

std::shared_ptr<const ScriptRegistry> counter_scripts() {
  auto reg = std::make_shared<ScriptRegistry>();
  reg->add(RedisScript{"incr_capped",
                       "local v = redis.call('INCR', KEYS[1])\n"
                       "if v > tonumber(ARGV[1]) then redis.call('DECR', KEYS[1]) return 0 end\nreturn v\n"});
  return reg;
}

TEST(EngineScriptTest, EvalRunsTheScriptAndLoadsItForEvalsha) {
  const std::shared_ptr<const ScriptRegistry> scripts = counter_scripts();
  Engine engine;
  Session s;
  const RedisScript* script = scripts->by_name("incr_capped");
  const std::string sha = scripts->sha1_of("incr_capped");
  EXPECT_EQ(engine.execute(s, {"EVALSHA", sha, "1", "c", "2"}, kT0).describe(),
            "(error) NOSCRIPT No matching script. Please use EVAL.");
  EXPECT_EQ(engine.execute(s, {"EVAL", script->lua, "1", "c", "2"}, kT0).describe(), "(integer) 1");
  EXPECT_EQ(engine.execute(s, {"EVALSHA", sha, "1", "c", "2"}, kT0).describe(), "(integer) 2");
  EXPECT_EQ(engine.execute(s, {"EVALSHA", sha, "1", "c", "2"}, kT0).describe(), "(integer) 0");
  EXPECT_EQ(engine.execute(s, {"GET", "c"}, kT0).describe(), "\"2\"");
  EXPECT_EQ(engine.execute(s, {"EVAL", "return 1", "0"}, kT0).describe(), "(integer) 1");
  EXPECT_EQ(engine.execute(s, {"EVALSHA", sha, "5", "c"}, kT0).describe(),
            "(error) ERR Number of keys can't be greater than number of args");
  EXPECT_EQ(engine.execute(s, {"SCRIPT", "EXISTS", sha, "abc"}, kT0).describe(), "[(integer) 1, (integer) 0]");
  EXPECT_EQ(engine.execute(s, {"SCRIPT", "FLUSH"}, kT0).describe(), "+OK");
  EXPECT_EQ(engine.execute(s, {"SCRIPT", "LOAD", script->lua}, kT0).describe(), "\"" + sha + "\"");
}

// EVAL_RO of a script that writes: its first write is refused (Redis 7.0's error), nothing is
// written, and the next EVAL of the same text may write again.
TEST(EngineScriptTest, EvalRoRefusesAScriptsWrites) {
  const std::shared_ptr<const ScriptRegistry> scripts = counter_scripts();
  Engine engine;
  Session s;
  const RedisScript* script = scripts->by_name("incr_capped");
  const std::string sha = scripts->sha1_of("incr_capped");
  const std::string refused =
      "(error) ERR Write commands are not allowed from read-only scripts. script: " + sha + ", on @user_script:1.";
  EXPECT_EQ(engine.execute(s, {"EVAL_RO", script->lua, "1", "c", "2"}, kT0).describe(), refused);
  EXPECT_EQ(engine.execute(s, {"EXISTS", "c"}, kT0).describe(), "(integer) 0");
  EXPECT_EQ(engine.execute(s, {"EVALSHA_RO", sha, "1", "c", "2"}, kT0).describe(), refused);
  EXPECT_EQ(engine.execute(s, {"EVALSHA", sha, "1", "c", "2"}, kT0).describe(), "(integer) 1");
  EXPECT_EQ(engine.execute(s, {"EVAL_RO", "return redis.call('GET', KEYS[1])", "1", "c"}, kT0).describe(), "\"1\"");
}

// Scripts no system registered run in Lua (lua_script.h; engine_vs_real_test.cc compares their
// replies with redis-server 7.0.15). What a real server cannot show: a script never hangs the
// world or crashes the engine, and math.random is the engine's own deterministic state.
TEST_F(EngineTest, ALuaScriptThatNeverEndsEndsWithAnError) {
  const std::string reply = run({"EVAL", "while true do end", "0"});
  EXPECT_NE(reply.find("ran past 200000000 instructions"), std::string::npos) << reply;
  EXPECT_EQ(run({"EVAL", "return 1", "0"}), "(integer) 1");  // the engine goes on
}

TEST_F(EngineTest, ALuaErrorWhoseMetamethodsRaiseIsAnErrorReply) {
  const std::string raising =
      "setmetatable({}, {__index = function() error('again') end, __tostring = function() "
      "error('again') end})";
  EXPECT_EQ(run({"EVAL", "error(" + raising + ")", "0"}).rfind("(error) ", 0), 0u);
  EXPECT_EQ(run({"EVAL", "return " + raising, "0"}), "[]");  // raw reads: an empty array
  EXPECT_EQ(run({"EVAL", "return redis.call('SET', KEYS[1], ARGV[1])", "1", "k", "v"}), "+OK");
  EXPECT_EQ(run({"GET", "k"}), "\"v\"");
}

TEST(LuaScriptTest, MathRandomIsTheServersRand48FromEachStart) {
  const std::vector<std::string> draw = {"EVAL", "return math.random(2147483647)", "0"};
  Engine a, b;
  Session s;
  // redis-server 7.0.15's first three draws after a start (rand.c's initial state, no reseed).
  for (const char* want : {"(integer) 851401619", "(integer) 1804928588", "(integer) 758783492"}) {
    EXPECT_EQ(a.execute(s, draw, kT0).describe(), want);
  }
  EXPECT_EQ(b.execute(s, draw, kT0).describe(), "(integer) 851401619");  // another server: its own state
  a.recover(kT0);                                                        // a restart starts the sequence again
  EXPECT_EQ(a.execute(s, draw, kT0).describe(), "(integer) 851401619");
}

TEST(Sha1Test, KnownVectors) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_hex("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
  EXPECT_EQ(sha1_hex(std::string(1000, 'a')), "291e9a6c66994949b57ba5e650361e98fc36b1ba");
}

// ---- Persistence: what a crash loses.

struct CrashCase {
  PersistenceMode mode;
  std::vector<std::string> survivors;  // of keys k0 (t=0), k1 (t=1.5 s), k2 (t=2.2 s); crash at 2.3 s
};

class PersistenceTest : public ::testing::TestWithParam<CrashCase> {};

TEST_P(PersistenceTest, CrashLosesWhatTheModeSays) {
  EngineOptions options;
  options.persistence = GetParam().mode;
  options.snapshot_interval_ms = 2000;
  Engine engine(options);
  Session s;
  int64_t t = kT0;
  engine.tick(t);  // persistence clock starts
  engine.execute(s, {"SET", "k0", "v"}, t);
  for (int step = 1; step <= 23; ++step) {
    t = kT0 + step * 100;
    if (step == 15) engine.execute(s, {"SET", "k1", "v"}, t);
    if (step == 22) engine.execute(s, {"SET", "k2", "v"}, t);
    engine.tick(t);
  }
  engine.recover(t + 5000);
  std::vector<std::string> keys;
  for (const auto& [k, e] : engine.keyspace().entries()) keys.push_back(k);
  EXPECT_EQ(keys, GetParam().survivors) << persistence_mode_name(GetParam().mode);
}

INSTANTIATE_TEST_SUITE_P(Modes, PersistenceTest,
                         ::testing::Values(CrashCase{PersistenceMode::kNone, {}},
                                           // fsyncs at 1 s and 2 s: k0 and k1 are durable, k2 (2.2 s) is lost.
                                           CrashCase{PersistenceMode::kAofEverysec, {"k0", "k1"}},
                                           // the snapshot at 2 s holds k0 and k1; k2 came after it.
                                           CrashCase{PersistenceMode::kSnapshot, {"k0", "k1"}}));

TEST(PersistenceTest2, SnapshotLosesEverythingSinceTheLastSnapshotAndAofReplaysStreams) {
  EngineOptions options;
  options.persistence = PersistenceMode::kSnapshot;
  options.snapshot_interval_ms = 10'000;
  Engine snap(options);
  Session s;
  snap.tick(kT0);
  snap.execute(s, {"SET", "a", "1"}, kT0 + 1);
  snap.tick(kT0 + 9000);
  snap.recover(kT0 + 9500);
  EXPECT_EQ(snap.keyspace().size(), 0u);  // no snapshot had been taken yet

  options.persistence = PersistenceMode::kAofEverysec;
  Engine aof(options);
  aof.tick(kT0);
  aof.execute(s, {"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"}, kT0 + 1);
  aof.execute(s, {"XADD", "s", "*", "f", "v"}, kT0 + 2);
  aof.execute(s, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"}, kT0 + 3);
  aof.execute(s, {"SET", "t", "v", "PX", "5000"}, kT0 + 4);
  aof.tick(kT0 + 1000);
  aof.execute(s, {"XACK", "s", "g", std::to_string(kT0 + 2) + "-0"}, kT0 + 1001);  // lost
  aof.recover(kT0 + 1500);
  Session s2;
  EXPECT_EQ(
      aof.execute(s2, {"XPENDING", "s", "g"}, kT0 + 1500).describe(),
      "[(integer) 1, \"" + std::to_string(kT0 + 2) + "-0\", \"" + std::to_string(kT0 + 2) + "-0\", [[\"c\", \"1\"]]]");
  EXPECT_EQ(aof.execute(s2, {"PTTL", "t"}, kT0 + 1500).describe(), "(integer) 3504");
}

// An expiry reaches the AOF as a DEL, as in Redis: a key that expired and was deleted before the
// last fsync stays deleted after a restart, even when the node's clock went back meanwhile (the
// key's absolute deadline would otherwise lie in the future again).
TEST(PersistenceTest2, AnExpiryIsJournaledSoAClockGoingBackDoesNotResurrectTheKey) {
  EngineOptions options;
  options.persistence = PersistenceMode::kAofEverysec;
  for (bool lazy : {true, false}) {
    Engine aof(options);
    Session s;
    aof.tick(kT0);
    aof.execute(s, {"SET", "lock", "w", "PX", "300"}, kT0 + 1);
    if (lazy) {
      EXPECT_EQ(aof.execute(s, {"GET", "lock"}, kT0 + 400).describe(), "(nil)");
    } else {
      EXPECT_EQ(aof.active_expire_cycle(kT0 + 400), 1u);
    }
    aof.tick(kT0 + 1000);     // fsync
    aof.recover(kT0 - 5000);  // the clock went back 6 s
    Session s2;
    EXPECT_EQ(aof.execute(s2, {"GET", "lock"}, kT0 - 5000).describe(), "(nil)") << (lazy ? "lazy" : "active");
  }
  // The expiry's DEL was lost (a crash before the fsync); the restart drops the expired key and
  // journals that too, so a second restart after the clock went back does not restore it.
  Engine aof(options);
  Session s;
  aof.tick(kT0);
  aof.execute(s, {"SET", "lock", "w", "PX", "300"}, kT0 + 1);
  aof.tick(kT0 + 1000);     // the SET is durable
  aof.recover(kT0 + 1500);  // expired meanwhile: dropped
  aof.tick(kT0 + 2600);     // fsync
  aof.recover(kT0 - 5000);  // the clock went back 6.5 s
  Session s2;
  EXPECT_EQ(aof.execute(s2, {"GET", "lock"}, kT0 - 5000).describe(), "(nil)");
}

// The fsynced writes reach the durable copy when a crash needs it (or when many have gathered),
// not at every fsync: the copy a restart loads is the same either way, and replaying a journaled
// DEL of a key that expired counts no second expiry.
TEST(PersistenceTest2, TheDurableCopyIsEveryFsyncedWriteHoweverLateItIsReplayed) {
  EngineOptions options;
  options.persistence = PersistenceMode::kAofEverysec;
  Engine aof(options);
  Session s;
  aof.tick(kT0);
  aof.execute(s, {"SET", "lock", "w", "PX", "300"}, kT0 + 1);
  EXPECT_EQ(aof.execute(s, {"GET", "lock"}, kT0 + 400).describe(), "(nil)");  // expires (live)
  EXPECT_EQ(aof.stats().expired_lazy, 1u);
  // More than one batch of writes (Engine::kMaxSyncedWrites is 65,536), across several fsyncs,
  // each key overwritten and every third one deleted.
  int64_t t = kT0 + 500;
  for (int i = 0; i < 70'000; ++i) {
    const std::string key = "k" + std::to_string(i % 5'000);
    aof.execute(s, {"SET", key, std::to_string(i)}, t);
    if (i % 3 == 0) aof.execute(s, {"DEL", key}, t);
    if (i % 20'000 == 19'999) aof.tick(t += 1'000);  // an fsync
  }
  aof.tick(t += 1'000);                         // the last fsync: every write above is durable
  aof.execute(s, {"SET", "lost", "v"}, t + 1);  // after it: lost in the crash
  std::map<std::string, std::string> before;
  for (const auto& [k, e] : aof.keyspace().entries()) {
    if (k != "lost") before[k] = std::get<std::string>(e.value);
  }
  aof.recover(t + 500);
  std::map<std::string, std::string> after;
  for (const auto& [k, e] : aof.keyspace().entries()) after[k] = std::get<std::string>(e.value);
  EXPECT_EQ(after, before);
  // Key j's last write is at i = 65,000 + j, a DEL when that is a multiple of 3 (j % 3 == 1).
  EXPECT_EQ(after.size(), 3'333u);
  EXPECT_EQ(aof.stats().expired_lazy, 1u);  // the replayed DEL of `lock` expired nothing new
}

}  // namespace
}  // namespace fl::sim::redis

// ---- Issue 14/16: databases, SCAN, eviction and refusals (engine_test2 section).
namespace fl::sim::redis {
namespace {

std::vector<std::string> keys_of(const Engine& e, int db = 0) {
  std::vector<std::string> out;
  for (const auto& [k, v] : e.keyspace(db).entries()) out.push_back(k);
  return out;
}

TEST_F(EngineTest, DatabasesAreSeparateAndPersistWithTheirIndex) {
  EngineOptions o;
  o.persistence = PersistenceMode::kAofEverysec;
  Engine aof(o);
  Session s;
  aof.tick(kT0);
  aof.execute(s, {"SELECT", "4"}, kT0);
  aof.execute(s, {"SET", "k", "four"}, kT0);
  aof.execute(s, {"SWAPDB", "4", "5"}, kT0);
  aof.execute(s, {"SELECT", "0"}, kT0);
  aof.execute(s, {"SET", "k", "zero"}, kT0);
  aof.tick(kT0 + 1500);  // fsync
  aof.recover(kT0 + 2000);
  EXPECT_EQ(keys_of(aof, 0), std::vector<std::string>{"k"});
  EXPECT_TRUE(keys_of(aof, 4).empty());
  EXPECT_EQ(std::get<std::string>(aof.keyspace(5).entries().at("k").value), "four");
}

TEST_F(EngineTest, ScanReturnsEveryKeyPresentThroughoutExactlyOnce) {
  for (int i = 0; i < 50; ++i) run({"SET", "k" + std::to_string(i), "v"});
  std::vector<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    RedisReply r = raw({"SCAN", cursor, "COUNT", "7"});
    cursor = r.elements[0].str;
    for (const auto& e : r.elements[1].elements) seen.push_back(e.str);
    // Keys come and go between calls.
    run({"DEL", "k" + std::to_string(calls)});
    run({"SET", "new" + std::to_string(calls), "v"});
    ++calls;
  } while (cursor != "0" && calls < 100);
  EXPECT_LT(calls, 100);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end()) << "a key came back twice";
  for (int i = calls; i < 50; ++i) {
    EXPECT_TRUE(std::binary_search(seen.begin(), seen.end(), "k" + std::to_string(i))) << i;
  }
}

// Runs `argv` on a fresh engine whose random stream starts from `seed`, one session, at kT0.
std::vector<RedisReply> run_seeded(uint64_t seed, const std::vector<std::vector<std::string>>& argv) {
  EngineOptions o;
  o.random_seed = seed;
  Engine e(o);
  Session s;
  std::vector<RedisReply> out;
  for (const auto& a : argv) out.push_back(e.execute(s, a, kT0));
  return out;
}

TEST_F(EngineTest, RandomKeyIsDeterministicForASeed) {
  auto draws = [](uint64_t seed) {
    std::vector<std::vector<std::string>> argv;
    for (int i = 0; i < 20; ++i) argv.push_back({"SET", "k" + std::to_string(i), "v"});
    for (int i = 0; i < 10; ++i) argv.push_back({"RANDOMKEY"});
    const std::vector<RedisReply> replies = run_seeded(seed, argv);
    std::string out;
    for (size_t i = 20; i < replies.size(); ++i) out += replies[i].str + ",";
    return out;
  };
  EXPECT_EQ(draws(1), draws(1));
  EXPECT_NE(draws(1), draws(2));
  EXPECT_EQ(run({"RANDOMKEY"}), "(nil)");
}

// HRANDFIELD draws from the engine's random stream: the same seed replays the same answers,
// every field drawn belongs to the hash, a positive count draws distinct fields.
TEST_F(EngineTest, HrandfieldIsDeterministicForASeedAndDrawsMembers) {
  auto draws = [](uint64_t seed) {
    std::vector<std::vector<std::string>> argv;
    for (int i = 0; i < 10; ++i) argv.push_back({"HSET", "h", "f" + std::to_string(i), "v" + std::to_string(i)});
    argv.push_back({"HRANDFIELD", "h"});
    argv.push_back({"HRANDFIELD", "h", "4"});
    argv.push_back({"HRANDFIELD", "h", "-6", "WITHVALUES"});
    std::vector<RedisReply> replies = run_seeded(seed, argv);
    return std::vector<RedisReply>(replies.end() - 3, replies.end());
  };
  const auto a = draws(1);
  EXPECT_EQ(a, draws(1));
  EXPECT_NE(a, draws(2));
  ASSERT_EQ(a[0].kind, RedisReply::Kind::kBulk);
  EXPECT_EQ(a[0].str.rfind("f", 0), 0u);
  ASSERT_EQ(a[1].elements.size(), 4u);
  std::set<std::string> distinct;
  for (const auto& f : a[1].elements) distinct.insert(f.str);
  EXPECT_EQ(distinct.size(), 4u);
  ASSERT_EQ(a[2].elements.size(), 12u);
  for (size_t i = 0; i < 12; i += 2) EXPECT_EQ("v" + a[2].elements[i].str.substr(1), a[2].elements[i + 1].str);
}

// XINFO's clock readings (the differential suite zeroes them): idle = now - seen time, and
// FULL reports the seen and delivery times themselves.
TEST_F(EngineTest, XinfoReportsIdleAndSeenTimes) {
  EXPECT_EQ(run({"XADD", "x", "1-1", "f", "v"}), "\"1-1\"");
  EXPECT_EQ(run({"XGROUP", "CREATE", "x", "g", "0"}), "+OK");
  EXPECT_EQ(run({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"}), "[[\"x\", [[\"1-1\", [\"f\", \"v\"]]]]]");
  now += 250;
  EXPECT_EQ(run({"XINFO", "CONSUMERS", "x", "g"}),
            "[[\"name\", \"c\", \"pending\", (integer) 1, \"idle\", (integer) 250]]");
  const RedisReply full = raw({"XINFO", "STREAM", "x", "FULL"});
  const std::string t0 = std::to_string(kT0);
  EXPECT_NE(full.describe().find("\"seen-time\", (integer) " + t0), std::string::npos) << full.describe();
  EXPECT_NE(full.describe().find("[\"1-1\", \"c\", (integer) " + t0 + ", (integer) 1]"), std::string::npos);
}

// Fills 10 keys of ~10 KB (the odd ones with a TTL, key i expiring sooner for larger i), then
// sets maxmemory so that about three must go; returns what survived.
std::vector<std::string> survivors(const std::string& policy, uint64_t seed,
                                   const std::vector<std::string>& touched = {}) {
  EngineOptions o;
  o.random_seed = seed;
  Engine e(o);
  Session s;
  // The policy first: Redis tracks LFU counters only under an LFU policy.
  e.execute(s, {"CONFIG", "SET", "maxmemory-policy", policy}, kT0);
  // Ten samples of ten keys: the pool sees every key, so LRU/LFU are exact here (with the
  // default five, a round samples a contiguous run from a random start and may miss the best).
  e.execute(s, {"CONFIG", "SET", "maxmemory-samples", "10"}, kT0);
  const std::string big(10'000, 'v');
  for (int i = 0; i < 10; ++i) {
    const std::string k = "k" + std::to_string(i);
    if (i % 2)
      e.execute(s, {"SET", k, big, "PX", std::to_string(100'000 - i * 1000)}, kT0);
    else
      e.execute(s, {"SET", k, big}, kT0);
  }
  for (const auto& k : touched) {
    for (int n = 0; n < 20; ++n) e.execute(s, {"GET", k}, kT0 + 5000);
  }
  const int64_t used = e.used_memory();
  e.execute(s, {"CONFIG", "SET", "maxmemory", std::to_string(used - 25'000)}, kT0 + 10'000);
  return keys_of(e);
}

TEST_F(EngineTest, EvictionPoliciesPickTheirVictims) {
  using V = std::vector<std::string>;
  // volatile-ttl: the three keys with a TTL that expire first (k9, k7, k5).
  EXPECT_EQ(survivors("volatile-ttl", 1), (V{"k0", "k1", "k2", "k3", "k4", "k6", "k8"}));
  // volatile-*: keys without a TTL are never evicted.
  for (const char* p : {"volatile-lru", "volatile-lfu", "volatile-random"}) {
    const V left = survivors(p, 1);
    EXPECT_EQ(left.size(), 7u) << p;
    for (const char* k : {"k0", "k2", "k4", "k6", "k8"}) {
      EXPECT_NE(std::find(left.begin(), left.end(), k), left.end()) << p << " evicted " << k;
    }
  }
  // allkeys-*: keys without a TTL are evictable too; LRU keeps what was read recently, LFU what
  // was read often.
  const V lru = survivors("allkeys-lru", 1, {"k0", "k1", "k2", "k3", "k4", "k5", "k6"});
  EXPECT_EQ(lru, (V{"k0", "k1", "k2", "k3", "k4", "k5", "k6"}));
  const V lfu = survivors("allkeys-lfu", 1, {"k3", "k4", "k5", "k6", "k7", "k8", "k9"});
  EXPECT_EQ(lfu, (V{"k3", "k4", "k5", "k6", "k7", "k8", "k9"}));
  const V random = survivors("allkeys-random", 1);
  EXPECT_EQ(random.size(), 7u);
  EXPECT_EQ(random, survivors("allkeys-random", 1));  // the seed decides
  bool differs = false;
  for (uint64_t seed = 2; seed < 10 && !differs; ++seed) differs = survivors("allkeys-random", seed) != random;
  EXPECT_TRUE(differs);
  // noeviction keeps everything and refuses denyoom writes.
  EXPECT_EQ(survivors("noeviction", 1).size(), 10u);
}

TEST_F(EngineTest, RefusalsAnswerAsRedisAndLiftWhenCleared) {
  run({"SET", "k", "v"});
  engine.set_refusal(Refusal::kReadonly);
  EXPECT_EQ(run({"SET", "k", "w"}), "(error) READONLY You can't write against a read only replica.");
  EXPECT_EQ(run({"GET", "k"}), "\"v\"");
  engine.set_refusal(Refusal::kOom);
  EXPECT_EQ(run({"SET", "k", "w"}), "(error) OOM command not allowed when used memory > 'maxmemory'.");
  EXPECT_EQ(run({"DEL", "k"}), "(integer) 1");
  engine.set_refusal(Refusal::kLoading);
  EXPECT_EQ(run({"GET", "k"}), "(error) LOADING Redis is loading the dataset in memory");
  EXPECT_EQ(run({"PING"}), "(error) LOADING Redis is loading the dataset in memory");
  EXPECT_NE(run({"INFO", "persistence"}).find("loading:1"), std::string::npos);
  engine.set_refusal(Refusal::kBusy);
  EXPECT_EQ(run({"GET", "k"}),
            "(error) BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
  EXPECT_EQ(run({"MULTI"}),
            "(error) BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
  engine.set_refusal(Refusal::kNone);
  EXPECT_EQ(run({"SET", "k", "w"}), "+OK");
  EXPECT_EQ(engine.stats().refused, 6u);
}

}  // namespace
}  // namespace fl::sim::redis

namespace fl::sim::redis {
namespace {

// scriptVerifyOOM: under OOM a script's first denyoom call is refused (the script has not
// written yet); once it has written (a DEL), its later denyoom calls run, so no script is left
// half done by OOM.
TEST(EngineScriptTest, OomRefusesAScriptOnlyBeforeItsFirstWrite) {
  auto reg = std::make_shared<ScriptRegistry>();
  reg->add(RedisScript{"del_then_set", "redis.call('DEL', KEYS[1])\nreturn redis.call('SET', KEYS[1], ARGV[1])\n"});
  reg->add(RedisScript{"set_only", "return redis.call('SET', KEYS[1], ARGV[1])\n"});
  Engine engine;
  Session s;
  engine.set_refusal(Refusal::kOom);
  EXPECT_EQ(engine.execute(s, {"EVAL", reg->by_name("set_only")->lua, "1", "k", "v"}, kT0).describe(),
            "(error) OOM command not allowed when used memory > 'maxmemory'. script: " + reg->sha1_of("set_only") +
                ", on @user_script:1.");
  EXPECT_EQ(engine.execute(s, {"EVAL", reg->by_name("del_then_set")->lua, "1", "k", "v"}, kT0).describe(), "+OK");
  engine.set_refusal(Refusal::kReadonly);
  EXPECT_EQ(engine.execute(s, {"EVAL", reg->by_name("del_then_set")->lua, "1", "k", "w"}, kT0).describe(),
            "(error) READONLY You can't write against a read only replica. script: " + reg->sha1_of("del_then_set") +
                ", on @user_script:1.");
  EXPECT_EQ(engine.execute(s, {"GET", "k"}, kT0).describe(), "\"v\"");
}

// A "#!lua" line declares the script's flags (evalGetCommandFlags): without allow-oom or
// no-writes the script is refused -OOM before it runs; allow-oom lets its writes past OOM;
// no-writes runs it read-only, and needs no memory either.
TEST(EngineScriptTest, ShebangFlagsGateTheScriptBeforeItRuns) {
  Engine engine;
  Session s;
  engine.set_refusal(Refusal::kOom);
  EXPECT_EQ(engine.execute(s, {"EVAL", "#!lua\nreturn redis.call('SET', 'k', 'v')", "0"}, kT0).describe(),
            "(error) OOM command not allowed when used memory > 'maxmemory'.");
  EXPECT_EQ(
      engine.execute(s, {"EVAL", "#!lua flags=allow-oom\nreturn redis.call('SET', 'k', 'v')", "0"}, kT0).describe(),
      "+OK");
  EXPECT_EQ(engine.execute(s, {"EVAL", "#!lua flags=no-writes\nreturn redis.call('GET', 'k')", "0"}, kT0).describe(),
            "\"v\"");
  engine.set_refusal(Refusal::kReadonly);  // a demoted master refuses a script that may write
  EXPECT_EQ(engine.execute(s, {"EVAL", "#!lua flags=allow-oom\nreturn 1", "0"}, kT0).describe(),
            "(error) READONLY You can't write against a read only replica.");
  EXPECT_EQ(engine.execute(s, {"EVAL", "#!lua flags=no-writes\nreturn 1", "0"}, kT0).describe(), "(integer) 1");
}

}  // namespace
}  // namespace fl::sim::redis

namespace fl::sim::redis {
namespace {

// redis.call raises: a script that does not look at an inner call's error still stops at that
// call and replies with its error; the calls after it never run. (A C++ re-implementation of
// combo's aggregate once went on under OOM, answered its window id, and the purchase was answered
// "secured" with its quantity never counted: every script now runs as its Lua.)
TEST(EngineScriptTest, AnInnerErrorEndsTheScriptWithThatError) {
  auto reg = std::make_shared<ScriptRegistry>();
  reg->add(RedisScript{"ignore_errors",
                       "redis.call('INCR', KEYS[1])\nredis.call('SET', KEYS[2], 'after')\nreturn 'done'\n"});
  Engine engine;
  Session s;
  const std::string lua = reg->by_name("ignore_errors")->lua;
  const std::string at = " script: " + reg->sha1_of("ignore_errors") + ", on @user_script:1.";
  engine.set_refusal(Refusal::kOom);
  EXPECT_EQ(engine.execute(s, {"EVAL", lua, "2", "n", "m"}, kT0).describe(),
            "(error) OOM command not allowed when used memory > 'maxmemory'." + at);
  engine.set_refusal(Refusal::kNone);
  EXPECT_EQ(engine.execute(s, {"GET", "m"}, kT0).describe(), "(nil)");
  EXPECT_EQ(engine.execute(s, {"SET", "n", "text"}, kT0).describe(), "+OK");
  EXPECT_EQ(engine.execute(s, {"EVAL", lua, "2", "n", "m"}, kT0).describe(),
            "(error) ERR value is not an integer or out of range" + at);
  EXPECT_EQ(engine.execute(s, {"GET", "m"}, kT0).describe(), "(nil)");
  EXPECT_EQ(engine.execute(s, {"EVAL", lua, "2", "x", "m"}, kT0).describe(), "\"done\"");
}

}  // namespace
// ACL users (acl.h): HELLO AUTH and AUTH switch the session's user, whose rules decide what it may
// run (engine_vs_real_test.cc compares the replies with redis-server); a restart forgets them.
TEST_F(EngineTest, AclUsersRestrictTheirSessions) {
  EXPECT_EQ(run({"ACL", "SETUSER", "bob", "on", ">pw", "+get", "+@scripting", "~b:*"}), "+OK");
  EXPECT_EQ(run({"HELLO", "2", "AUTH", "bob", "pw"}).substr(0, 1), "[");
  EXPECT_EQ(run({"ACL", "WHOAMI"}), "(error) NOPERM this user has no permissions to run the 'acl|whoami' command");
  EXPECT_EQ(run({"GET", "b:1"}), "(nil)");
  EXPECT_EQ(run({"GET", "a:1"}),
            "(error) NOPERM this user has no permissions to access one of the keys used as arguments");
  EXPECT_EQ(run({"SET", "b:1", "v"}), "(error) NOPERM this user has no permissions to run the 'set' command");
  EXPECT_EQ(run({"EVAL", "return redis.acl_check_cmd('get', 'b:2')", "0"}), "(integer) 1");
  EXPECT_EQ(run({"EVAL", "return redis.acl_check_cmd('get', 'a:2')", "0"}), "(nil)");
  EXPECT_EQ(run({"AUTH", "default", "any"}), "+OK");  // nopass: any password
  EXPECT_EQ(run({"SET", "a:1", "v"}), "+OK");
  engine.recover(now);
  Session fresh;
  EXPECT_EQ(engine.execute(fresh, {"ACL", "USERS"}, now).describe(), "[\"default\"]");
}

// INFO commandstats and errorstats count what clients saw: calls, calls that answered an error,
// calls refused before they ran, and error replies by their first word; CONFIG RESETSTAT clears
// them; MULTI's queued commands count when EXEC runs, not when queued.
TEST_F(EngineTest, InfoCountsCommandsAndErrors) {
  engine.set_refusal(Refusal::kLoading);
  run({"GET", "k"});  // refused -LOADING
  engine.set_refusal(Refusal::kNone);
  run({"SET", "k", "v"});
  run({"HGET", "k", "f"});  // WRONGTYPE
  run({"NOPE"});            // unknown: an error, no command
  run({"MULTI"});
  run({"GET", "k"});  // QUEUED
  run({"DISCARD"});
  const std::string stats = run({"INFO", "commandstats"});
  EXPECT_NE(stats.find("cmdstat_get:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0"),
            std::string::npos)
      << stats;
  EXPECT_NE(stats.find("cmdstat_hget:calls=1,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=1"),
            std::string::npos)
      << stats;
  EXPECT_EQ(stats.find("cmdstat_nope"), std::string::npos) << stats;
  const std::string errors = run({"INFO", "errorstats"});
  EXPECT_NE(errors.find("errorstat_ERR:count=1"), std::string::npos) << errors;
  EXPECT_NE(errors.find("errorstat_WRONGTYPE:count=1"), std::string::npos) << errors;
  EXPECT_NE(errors.find("errorstat_LOADING:count=1"), std::string::npos) << errors;
  EXPECT_EQ(run({"CONFIG", "RESETSTAT"}), "+OK");
  EXPECT_EQ(run({"INFO", "commandstats"}).find("cmdstat_hget"), std::string::npos);
  EXPECT_NE(run({"INFO"}).find("used_cpu_user:"), std::string::npos);
  EXPECT_EQ(run({"INFO"}).find("rejected_calls"), std::string::npos);  // commandstats only in "all"
  EXPECT_NE(run({"INFO", "all"}).find("rejected_calls"), std::string::npos);
}

// A script's calls count as Redis 7.0.15 counts them ("Consistent eval error reporting"): a call
// refused inside the script is a rejected call of that command, one that ran and failed a failed
// call; its error is counted once, where it happened, and not again when the script answers it
// (the error table carries ignore_error_stats_update); an error the script raises itself counts
// at the script's reply.
TEST_F(EngineTest, InfoCountsAScriptsCallsOnce) {
  const auto stat = [this](const std::string& section, const std::string& name) {
    const std::string info = engine.execute(session, {"INFO", section}, now).str;
    const size_t at = info.find(name + ":");
    return at == std::string::npos ? std::string() : info.substr(at, info.find('\r', at) - at);
  };
  run({"EVAL_RO", "return redis.call('set','x','y')", "1", "x"});  // refused inside: rejected
  EXPECT_EQ(stat("errorstats", "errorstat_ERR"), "errorstat_ERR:count=1");
  EXPECT_EQ(stat("stats", "total_error_replies"), "total_error_replies:1");
  EXPECT_EQ(stat("commandstats", "cmdstat_set"),
            "cmdstat_set:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0");
  EXPECT_EQ(stat("commandstats", "cmdstat_eval_ro"),
            "cmdstat_eval_ro:calls=1,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=1");
  run({"CONFIG", "RESETSTAT"});
  EXPECT_EQ(run({"EVAL", "local t = redis.pcall('select', 99) return t['ignore_error_stats_update'] and 1", "0"}),
            "(integer) 1");
  EXPECT_EQ(stat("errorstats", "errorstat_ERR"), "errorstat_ERR:count=1");
  EXPECT_EQ(stat("commandstats", "cmdstat_select"),
            "cmdstat_select:calls=1,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=1");
  EXPECT_EQ(stat("commandstats", "cmdstat_eval"),
            "cmdstat_eval:calls=1,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=0");
  run({"CONFIG", "RESETSTAT"});
  run({"EVAL", "error('mine')", "0"});  // the script's own error: counted at its reply
  EXPECT_EQ(stat("errorstats", "errorstat_ERR"), "errorstat_ERR:count=1");
  EXPECT_EQ(stat("stats", "total_error_replies"), "total_error_replies:1");
}

}  // namespace fl::sim::redis
