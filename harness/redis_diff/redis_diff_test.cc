// The Redis differential suite: generated command sequences run against the simulated Redis
// (in-process Engine) and a real redis-server, and against `faultline redis-serve` and the real
// server through the same hiredis client, comparing every reply (see redis_diff.h for the
// normalisations). A difference shrinks to a minimal sequence and prints both replies.
//
// Size: FAULTLINE_DIFF_SEQUENCES (default 300) sequences of up to 30 steps for the engine,
// a third of that for redis-serve. RC_PARAMS="seed=..." replays a reported failure.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "harness/real/redis_server.h"
#include "harness/system.h"
#include "impl/gifts/scripts.h"
#include "harness/resp/resp_server.h"
#include "impl/likes/scripts.h"
#include "properties/redis/diff_scripts.h"
#include "harness/redis_diff/hiredis_side.h"
#include "harness/redis_diff/real_redis_test_support.h"
#include "properties/redis/redis_diff.h"
#include "properties/redis/redis_diff_gen.h"

namespace fl::redis_diff {
namespace {

constexpr int kMaxSteps = 30;

class RedisDiff : public RealRedisTest {
 protected:
  // Runs the property: each generated sequence on both sides. A timing-sensitive sequence that
  // differs is run once more before it counts (the two servers' clocks are read microseconds
  // apart; a key expiring in between is a harness race, not a difference).
  void differential(Side& a, Side& b, int sequences, rc::Gen<std::vector<Step>> (*generator)(int) = gen_sequence) {
    int runs = 0, reruns = 0;
    std::map<std::string, int> known_hits;
    size_t steps_total = 0;
    auto start = std::chrono::steady_clock::now();
    check_property(sequences, kMaxSteps, [&] {
      const std::vector<Step> steps = *generator(kMaxSteps);
      ++runs;
      steps_total += steps.size();
      CompareOptions o;
      o.known = &known_differences();
      // A client's input must never crash the server: an exception out of either side fails
      // the sequence (and shrinks it) instead of ending the suite.
      auto run = [&] {
        try {
          return run_and_compare(a, b, steps, o);
        } catch (const std::exception& e) {
          RC_FAIL(std::string("a side threw: ") + e.what() + "\n" + describe(steps));
        }
      };
      RunResult r = run();
      if (!r.equal && r.timing_sensitive) {
        ++reruns;
        r = run();
      }
      for (const auto& [id, n] : r.known_hits) known_hits[id] += n;
      if (!r.equal) RC_FAIL("replies differ at step #" + std::to_string(r.failed_step) + "\n" + r.report);
    });
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    std::cout << a.name() << " vs " << b.name() << ": " << runs << " sequences (incl. shrinking), " << steps_total
              << " steps, " << reruns << " timing reruns, " << ms << " ms" << std::endl;
    for (const auto& [id, n] : known_hits) std::cout << "  known difference " << id << " excused " << n << " replies\n";
  }
};

TEST_F(RedisDiff, SimulatedEngineAgreesWithRealRedis) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  differential(real, sim, sequences_from_env(300));
}

TEST_F(RedisDiff, RedisServeAgreesWithRealRedisThroughHiredis) {
  char templ[] = "/tmp/fl-resp-XXXXXX";
  std::string dir = ::mkdtemp(templ);
  resp::RespServerOptions o;
  o.unix_path = dir + "/resp.sock";
  o.engine.scripts = diff_scripts();
  resp::RespServer served(std::move(o));
  std::string error;
  ASSERT_TRUE(served.listen(&error)) << error;
  std::thread loop([&] { served.serve(); });
  {
    HiredisSide real = real_side();
    std::string path = served.unix_path();
    HiredisSide serve("redis-serve", [path] { return real::RedisConnection::unix_socket(path, 5'000); });
    differential(real, serve, std::max(1, sequences_from_env(300) / 3));
  }
  served.request_stop();
  loop.join();
  std::filesystem::remove_all(dir);
}

// Argument boundaries (gen_boundary_sequence): int64 edges, non-numeric text, huge counts,
// overflowing TTLs, stream ids at uint64's edge... for every command with such an argument.
// Size: FAULTLINE_BOUNDARY_SEQUENCES (default 1000, a few seconds) sequences of up to 30 steps
// after the prelude.
TEST_F(RedisDiff, BoundaryArgumentsAgreeWithRealRedis) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  const char* v = std::getenv("FAULTLINE_BOUNDARY_SEQUENCES");  // tests may read the environment
  const int n = v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : 1000;
  differential(real, sim, n, gen_boundary_sequence);
}

// ---- Directed sequences: the flows the seeds depend on, always run.

Step cmd(int client, std::vector<std::string> argv) { return Step{Step::Kind::kCommand, client, std::move(argv)}; }
Step wait(int64_t ms) {
  Step s;
  s.kind = Step::Kind::kWait;
  s.wait_ms = ms;
  return s;
}

// A kBlockedRead step: `client` runs `argv` (XREADGROUP ... BLOCK) while `writer` runs
// `writer_argv`.
Step blocked_read(int client, std::vector<std::string> argv, int writer, std::vector<std::string> writer_argv) {
  Step s;
  s.kind = Step::Kind::kBlockedRead;
  s.client = client;
  s.argv = std::move(argv);
  s.writer = writer;
  s.writer_argv = std::move(writer_argv);
  return s;
}

// Runs `cmds` on connection 0 of a real server and of the engine: every reply must agree.
void expect_agree(HiredisSide& real, const std::vector<std::vector<std::string>>& cmds) {
  EngineSide sim(diff_scripts());
  std::vector<Step> steps;
  for (const auto& c : cmds) steps.push_back(cmd(0, c));
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
}

TEST_F(RedisDiff, DirectedConsumerGroupClaimFlow) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  std::vector<Step> steps = {
      cmd(0, {"XGROUP", "CREATE", "x:a", "g1", "$", "MKSTREAM"}),
      cmd(0, {"XADD", "x:a", "*", "f1", "v1"}),
      cmd(1, {"XADD", "x:a", "*", "f2", "v2"}),
      cmd(0, {"XADD", "x:a", "MAXLEN", "~", "100", "*", "f3", "v3"}),
      cmd(0, {"XREADGROUP", "GROUP", "g1", "c1", "COUNT", "1", "STREAMS", "x:a", ">"}),
      cmd(1, {"XREADGROUP", "GROUP", "g1", "c2", "COUNT", "5", "STREAMS", "x:a", ">"}),
      cmd(0, {"XPENDING", "x:a", "g1"}),
      cmd(0, {"XPENDING", "x:a", "g1", "-", "+", "10"}),
      cmd(0, {"XPENDING", "x:a", "g1", "-", "+", "10", "c2"}),
      cmd(2, {"XAUTOCLAIM", "x:a", "g1", "c3", "30", "0-0", "COUNT", "2"}),  // nothing idle yet
      wait(60),
      cmd(2, {"XAUTOCLAIM", "x:a", "g1", "c3", "30", "0-0", "COUNT", "2"}),
      cmd(2, {"XPENDING", "x:a", "g1", "IDLE", "30", "-", "+", "10"}),
      cmd(1, {"XCLAIM", "x:a", "g1", "c1", "0", "@auto2", "JUSTID"}),
      cmd(0, {"XACK", "x:a", "g1", "@auto0", "@auto1"}),
      cmd(0, {"XDEL", "x:a", "@auto2"}),
      cmd(2, {"XAUTOCLAIM", "x:a", "g1", "c3", "0", "0-0"}),  // a deleted pending entry
      cmd(0, {"XPENDING", "x:a", "g1"}),
      cmd(0, {"XRANGE", "x:a", "-", "+"}),
      cmd(0, {"XLEN", "x:a"}),
  };
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
}

TEST_F(RedisDiff, DirectedExpiryAndTransactions) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  std::vector<Step> steps = {
      cmd(0, {"SET", "s:a", "v", "PX", "40"}),
      cmd(0, {"PTTL", "s:a"}),
      cmd(0, {"SET", "s:b", "v", "EX", "100"}),
      cmd(0, {"TTL", "s:b"}),
      cmd(0, {"SET", "s:b", "w", "KEEPTTL", "GET"}),
      cmd(0, {"TTL", "s:b"}),
      cmd(1, {"MULTI"}),
      cmd(1, {"INCR", "n"}),
      cmd(1, {"SMEMBERS", "set:a"}),
      cmd(1, {"HGETALL", "h:a"}),
      cmd(1, {"EXEC"}),
      wait(60),
      cmd(0, {"GET", "s:a"}),
      cmd(0, {"PTTL", "s:a"}),
      cmd(0, {"EXISTS", "s:a", "s:b", "s:b"}),
      cmd(0, {"PERSIST", "s:b"}),
      cmd(0, {"TTL", "s:b"}),
  };
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
}

TEST_F(RedisDiff, DirectedPubSubAndBlockedRead) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  Step blocked;
  blocked.kind = Step::Kind::kBlockedRead;
  blocked.client = 0;
  blocked.argv = {"XREADGROUP", "GROUP", "g1", "c1", "COUNT", "2", "BLOCK", "1000", "STREAMS", "x:a", ">"};
  blocked.writer = 1;
  blocked.writer_argv = {"XADD", "x:a", "*", "f", "v"};
  std::vector<Step> steps = {
      cmd(2, {"SUBSCRIBE", "ch1", "ch2"}),
      cmd(0, {"PUBLISH", "ch1", "hello"}),
      cmd(2, {"GET", "s:a"}),  // not allowed while subscribed
      cmd(2, {"PING"}),
      cmd(1, {"MULTI"}),
      cmd(1, {"PUBLISH", "ch2", "in-tx"}),
      cmd(1, {"EXEC"}),
      cmd(2, {"UNSUBSCRIBE"}),
      cmd(0, {"PUBLISH", "ch1", "nobody"}),
      cmd(0, {"XGROUP", "CREATE", "x:a", "g1", "$", "MKSTREAM"}),
      blocked,
      cmd(0, {"XPENDING", "x:a", "g1"}),
  };
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
}

// Issue 14: the surface clients and tools use, where a real server's reply is deterministic.
TEST_F(RedisDiff, DirectedDatabasesAndAdmin) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  std::vector<Step> steps = {
      cmd(0, {"SET", "s:a", "v"}),
      cmd(0, {"SELECT", "9"}),
      cmd(0, {"DBSIZE"}),
      cmd(0, {"SET", "s:a", "nine"}),
      cmd(0, {"MOVE", "s:a", "0"}),  // exists in 0: not moved
      cmd(0, {"MOVE", "s:a", "3"}),
      cmd(0, {"MOVE", "s:a", "9"}),  // same database
      cmd(0, {"SELECT", "16"}),
      cmd(0, {"SELECT", "x"}),
      cmd(1, {"GET", "s:a"}),  // connection 1 is still in database 0
      cmd(1, {"SWAPDB", "0", "3"}),
      cmd(1, {"GET", "s:a"}),
      cmd(1, {"SWAPDB", "a", "1"}),
      cmd(1, {"SWAPDB", "0", "b"}),
      cmd(1, {"SWAPDB", "0", "99"}),
      cmd(1, {"INFO", "keyspace"}),
      cmd(1, {"FLUSHDB"}),
      cmd(1, {"INFO", "keyspace"}),
      cmd(1, {"SELECT", "3"}),
      cmd(1, {"DBSIZE"}),
      cmd(1, {"FLUSHALL"}),
      cmd(1, {"DBSIZE"}),
      cmd(2, {"CLIENT", "GETNAME"}),
      cmd(2, {"CLIENT", "SETNAME", "a b"}),
      cmd(2, {"CLIENT", "SETNAME", "worker-1"}),
      cmd(2, {"CLIENT", "GETNAME"}),
      cmd(2, {"CLIENT", "NOSUCH"}),
      cmd(2, {"HELLO", "4"}),
      cmd(2, {"HELLO", "x"}),
      cmd(2, {"CONFIG", "GET", "maxmemory"}),
      cmd(2, {"CONFIG", "GET", "maxmemory-policy"}),
      cmd(2, {"CONFIG", "GET", "nosuch"}),
      cmd(2, {"CONFIG", "SET", "nosuch", "1"}),
      cmd(2, {"CONFIG", "SET", "maxmemory-policy", "bad"}),
      cmd(2, {"CONFIG", "REWRITE"}),
      cmd(2, {"FUNCTION", "FLUSH"}),
      cmd(2, {"FUNCTION", "LIST"}),
      cmd(2, {"FCALL", "f", "0"}),
      cmd(0, {"SET", "s:b", "v", "PXAT", "1896085734900"}),
      cmd(0, {"EXPIRETIME", "s:b"}),
      cmd(0, {"PEXPIRETIME", "s:b"}),
      cmd(0, {"EXPIRETIME", "missing"}),
      cmd(0, {"RENAME", "missing", "x"}),
      cmd(0, {"RENAME", "s:b", "s:c"}),
      cmd(0, {"PEXPIRETIME", "s:c"}),
      cmd(0, {"RENAMENX", "s:c", "s:c"}),
      cmd(0, {"TYPE", "s:c"}),
      cmd(0, {"SCAN", "0", "COUNT", "100"}),
      cmd(0, {"SCAN", "x"}),
      cmd(0, {"RANDOMKEY"}),  // one key: no choice to make
  };
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
}

// OBJECT ENCODING's rules and thresholds (Redis 7.0: listpack, intset, hashtable, skiplist,
// embstr, int, raw; never back to the compact encoding).
TEST_F(RedisDiff, DirectedObjectEncodings) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  auto many = [](std::vector<std::string> argv, int n, bool pairs, const std::string& prefix) {
    for (int i = 0; i < n; ++i) {
      if (pairs) argv.push_back(std::to_string(i));
      argv.push_back(prefix + std::to_string(i));
    }
    return argv;
  };
  std::vector<Step> steps = {
      cmd(0, {"SET", "s:a", "12345"}),
      cmd(0, {"OBJECT", "ENCODING", "s:a"}),
      cmd(0, {"OBJECT", "REFCOUNT", "s:a"}),
      cmd(0, {"SET", "s:a", std::string(44, 'x')}),
      cmd(0, {"OBJECT", "ENCODING", "s:a"}),
      cmd(0, {"SET", "s:a", std::string(45, 'x')}),
      cmd(0, {"OBJECT", "ENCODING", "s:a"}),
      cmd(0, {"OBJECT", "REFCOUNT", "s:a"}),
      cmd(0, {"INCR", "n"}),
      cmd(0, {"OBJECT", "ENCODING", "n"}),
      cmd(0, {"HSET", "h:a", "f", "v"}),
      cmd(0, {"OBJECT", "ENCODING", "h:a"}),
      cmd(0, many({"HSET", "h:a"}, 128, true, "v")),
      cmd(0, {"OBJECT", "ENCODING", "h:a"}),
      cmd(0, many({"HDEL", "h:a"}, 128, false, "")),
      cmd(0, {"HLEN", "h:a"}),
      cmd(0, {"OBJECT", "ENCODING", "h:a"}),  // stays hashtable
      cmd(0, {"HSET", "h:b", "f", std::string(65, 'v')}),
      cmd(0, {"OBJECT", "ENCODING", "h:b"}),
      cmd(0, many({"SADD", "set:a"}, 512, false, "")),
      cmd(0, {"OBJECT", "ENCODING", "set:a"}),
      cmd(0, {"SADD", "set:a", "512"}),
      cmd(0, {"OBJECT", "ENCODING", "set:a"}),
      cmd(0, {"SADD", "set:b", "1", "m"}),
      cmd(0, {"OBJECT", "ENCODING", "set:b"}),
      cmd(0, {"ZADD", "z:a", "1", "m"}),
      cmd(0, {"OBJECT", "ENCODING", "z:a"}),
      cmd(0, {"ZADD", "z:b", "1", std::string(65, 'm')}),
      cmd(0, {"OBJECT", "ENCODING", "z:b"}),
      cmd(0, {"CONFIG", "SET", "hash-max-listpack-entries", "2"}),
      cmd(0, {"HSET", "h:c", "a", "1", "b", "2", "c", "3"}),
      cmd(0, {"OBJECT", "ENCODING", "h:c"}),
      cmd(0, {"XADD", "x:a", "1-1", "f", "v"}),
      cmd(0, {"OBJECT", "ENCODING", "x:a"}),
      cmd(0, {"OBJECT", "ENCODING", "missing"}),
      cmd(0, {"OBJECT", "FREQ", "x:a"}),
      cmd(0, {"OBJECT", "NOSUCH", "x:a"}),
      cmd(0, {"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"}),
      cmd(0, {"SET", "s:b", "v"}),
      cmd(0, {"OBJECT", "FREQ", "s:b"}),  // LFU_INIT_VAL
      cmd(0, {"GET", "s:b"}),
      cmd(0, {"OBJECT", "FREQ", "s:b"}),  // the first increment is certain
      cmd(0, {"OBJECT", "IDLETIME", "s:b"}),
      cmd(0, {"HSCAN", "h:b", "0"}),
      cmd(0, {"ZSCAN", "z:a", "0", "MATCH", "m*"}),
      cmd(0, {"SSCAN", "set:b", "0"}),
      cmd(0, {"SSCAN", "s:b", "0"}),
  };
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
}

// Issue 16: noeviction answers -OOM to denyoom commands (and to anything queued in MULTI) while
// reads and deletes still run; lifting the limit lets writes through again.
TEST_F(RedisDiff, DirectedMaxmemoryNoeviction) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  std::vector<Step> steps = {
      cmd(0, {"SET", "s:a", "1"}),
      cmd(0, {"SET", "s:b", "2"}),
      cmd(0, {"CONFIG", "SET", "maxmemory", "1"}),
      cmd(0, {"SET", "s:c", "3"}),
      cmd(0, {"INCR", "n"}),
      cmd(0, {"HSET", "h:a", "f", "v"}),
      cmd(0, {"XADD", "x:a", "1-1", "f", "v"}),
      cmd(0, {"GET", "s:a"}),
      cmd(0, {"EXPIRE", "s:a", "100"}),
      cmd(0, {"DEL", "s:b"}),
      cmd(1, {"MULTI"}),
      cmd(1, {"GET", "s:a"}),
      cmd(1, {"EXEC"}),
      cmd(0, {"CONFIG", "SET", "maxmemory", "0"}),
      cmd(0, {"SET", "s:c", "3"}),
      cmd(0, {"DBSIZE"}),
  };
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
}

namespace {

int64_t used_memory(Side& side) {
  const RedisReply info = side.run(0, {"INFO", "memory"});
  const std::string key = "used_memory:";
  const size_t at = info.str.find(key);
  return at == std::string::npos ? -1 : std::stoll(info.str.substr(at + key.size()));
}

// volatile-ttl on distinct TTLs: each lowering of maxmemory evicts the key that expires first,
// never a key without a TTL; the observations of one side.
std::vector<std::string> volatile_ttl_order(Side& side) {
  side.reset();
  const std::string big(100'000, 'v');
  side.run(0, {"SET", "k3", big, "EX", "3000"});
  side.run(0, {"SET", "k1", big, "EX", "1000"});
  side.run(0, {"SET", "k2", big, "EX", "2000"});
  side.run(0, {"SET", "p", big});
  side.run(0, {"CONFIG", "SET", "maxmemory-policy", "volatile-ttl"});
  std::vector<std::string> seen;
  auto exists = [&] {
    std::string s;
    for (const char* k : {"k1", "k2", "k3", "p"}) s += side.run(0, {"EXISTS", k}).integer ? k : "-";
    seen.push_back(s);
  };
  const int64_t used = used_memory(side);
  side.run(0, {"CONFIG", "SET", "maxmemory", std::to_string(used - 50'000)});
  exists();
  side.run(0, {"CONFIG", "SET", "maxmemory", std::to_string(used - 150'000)});
  exists();
  side.run(0, {"CONFIG", "SET", "maxmemory", "1"});
  exists();
  seen.push_back(side.run(0, {"SET", "q", "1"}).describe());
  side.run(0, {"CONFIG", "SET", "maxmemory", "0"});
  return seen;
}

}  // namespace

TEST_F(RedisDiff, DirectedVolatileTtlEvictionOrder) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  const std::vector<std::string> expected = {"-k2k3p", "--k3p", "---p",
                                             "(error) OOM command not allowed when used memory > 'maxmemory'."};
  EXPECT_EQ(volatile_ttl_order(real), expected);
  EXPECT_EQ(volatile_ttl_order(sim), expected);
}

// Every declared system's scripts (each one Lua text the simulated and a real redis-server run;
// SystemUnderTest::redis_scripts): every Lua text compiles on the real server
// under the SHA1 the registry uses for EVALSHA, and Redisson's lock, renewal and unlock (gifts'
// combo lock) answer the same on both.
TEST_F(RedisDiff, SystemScriptsLoadOnRealRedisAndRedissonsLockAgrees) {
  HiredisSide real = real_side();
  real.reset();
  std::vector<std::shared_ptr<const ScriptRegistry>> registries;
  for (const SystemUnderTest* s : all_systems()) {
    if (s->redis_scripts()) registries.push_back(s->redis_scripts());
  }
  int loaded = 0;
  for (const auto& registry : registries) {
    for (const std::string& name : registry->names()) {
      real.begin(0, {"SCRIPT", "LOAD", registry->by_name(name)->lua});
      const RedisReply r = real.finish(0);
      EXPECT_EQ(r.kind, RedisReply::Kind::kBulk) << name << ": " << r.str;
      EXPECT_EQ(r.str, registry->sha1_of(name)) << name;
      ++loaded;
    }
  }
  EXPECT_GE(loaded, 15);
  EngineSide sim(gifts::gifts_scripts());
  auto eval = [](const char* script, std::vector<std::string> args) {
    std::vector<std::string> argv = {"EVALSHA", gifts::gifts_scripts()->sha1_of(script), "1", "gift:batch:r:1:g"};
    argv.insert(argv.end(), args.begin(), args.end());
    return cmd(0, argv);
  };
  std::vector<Step> steps;
  for (const char* script : {gifts::kLockScript, gifts::kRenewScript, gifts::kUnlockScript}) {
    steps.push_back(cmd(0, {"SCRIPT", "LOAD", gifts::gifts_scripts()->by_name(script)->lua}));
  }
  for (Step s : {
           eval(gifts::kLockScript, {"30000", "push-1"}),   // nil: taken
           eval(gifts::kLockScript, {"30000", "push-1"}),   // nil: re-entered
           eval(gifts::kRenewScript, {"30000", "push-1"}),  // 1: renewed
           eval(gifts::kRenewScript, {"30000", "push-2"}),  // 0: not the holder
           eval(gifts::kUnlockScript, {"push-2"}),          // nil: IllegalMonitorStateException
           eval(gifts::kUnlockScript, {"push-1"}),          // 0: still re-entered once
           eval(gifts::kUnlockScript, {"push-1"}),          // 1: released
           cmd(0, {"EXISTS", "gift:batch:r:1:g"}),
           eval(gifts::kRenewScript, {"30000", "push-1"}),  // 0: gone, the watchdog stops
           eval(gifts::kLockScript, {"3000", "push-2"}),    // nil: taken by another owner
           cmd(0, {"HGET", "gift:batch:r:1:g", "push-2"}),
       }) {
    steps.push_back(s);
  }
  RunResult r = run_and_compare(real, sim, steps);
  if (!r.equal && r.timing_sensitive) r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
}

// gifts' ready-batch claim (GF-COMBO-ATOMIC, GF-CLAIM-RESUME): a due batch is claimed for the lease;
// before the lease ends only a claim that names the token of the claim that holds it (a reply its
// caller lost) takes it back. Both sides answer the same.
TEST_F(RedisDiff, GiftsReadyClaimTakesBackOnlyTheBatchesOfALostClaim) {
  HiredisSide real = real_side();
  real.reset();
  EngineSide sim(gifts::gifts_scripts());
  const std::string sha = gifts::gifts_scripts()->sha1_of(gifts::kReadyClaimScript);
  auto claim = [&sha](const char* now_ms, std::vector<std::string> tokens) {
    std::vector<std::string> argv = {"EVALSHA", sha, tokens.empty() ? "2" : "3", "gift:ready", "gift:ready:due"};
    if (!tokens.empty()) argv.push_back("gift:ready:owner");
    for (const char* a : {now_ms, "2000", "20"}) argv.push_back(a);
    argv.insert(argv.end(), tokens.begin(), tokens.end());
    return cmd(0, argv);
  };
  std::vector<Step> steps = {
      cmd(0, {"SCRIPT", "LOAD", gifts::gifts_scripts()->by_name(gifts::kReadyClaimScript)->lua}),
      cmd(0, {"HSET", "gift:ready", "m1", "batch-1", "m2", "batch-2"}),
      cmd(0, {"ZADD", "gift:ready:due", "100", "m1", "5000", "m2"}),
      claim("1000", {}),                  // [batch-1]: due, leased until 3000
      claim("1200", {}),                  // []: leased, no token to take it back
      claim("3000", {"p1:c1"}),           // [batch-1]: due again, owned by p1:c1 until 5000
      claim("3100", {"p1:c2"}),           // []: p1:c1's claim was answered
      claim("3200", {"p2:c1", "p1:c9"}),  // []: not a token that holds it
      claim("3300", {"p1:c3", "p1:c1"}),  // [batch-1]: p1:c1's reply was lost: taken back
      cmd(0, {"HGET", "gift:ready:owner", "m1"}),
      cmd(0, {"ZSCORE", "gift:ready:due", "m1"}),
      claim("6000", {"p2:c2"}),  // [batch-1, batch-2]: both due
      cmd(0, {"HGETALL", "gift:ready:owner"}),
  };
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
}

// Differences the suite found and that were fixed in the engine: kept as regression tests.
TEST_F(RedisDiff, DirectedFixedDifferences) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  const std::string sha = diff_scripts()->sha1_of("cas_delete");
  std::vector<Step> steps = {
      cmd(0, {"XACK", "x:a", "g1", "1-2", "5-*"}),  // no key: 0 before the ids are parsed
      cmd(0, {"EVALSHA", sha, "5", "s:a", "v1"}),   // numkeys checked before NOSCRIPT
      cmd(2, {"SUBSCRIBE", "ch1"}),
      cmd(2, {"EXEC"}),  // EXECABORT ... because of: Can't execute
      cmd(0, {"MULTI"}),
      cmd(0, {"EXEC", "extra"}),  // refused EXEC aborts the transaction
      cmd(0, {"EXEC"}),
      cmd(1, {"MULTI"}),
      cmd(1, {"NOSUCHCMD"}),
      cmd(1, {"EXEC"}),  // EXECABORT ... previous errors
  };
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
}

// What the boundary generator found (issue 45 part 5), kept as regression tests: each command
// with the arguments that crashed the engine or made it answer otherwise than redis-server.
TEST_F(RedisDiff, DirectedBoundaryFixes) {
  HiredisSide real = real_side();
  const std::string sha = diff_scripts()->sha1_of("cas_delete");
  expect_agree(real,
               {
                   {"SET", "s:a", "hello"},
                   // Threw std::length_error (offset + length overflowed int64).
                   {"SETRANGE", "s:a", "9223372036854775807", "A"},
                   {"SETRANGE", "s:a", "9223372036854775806", "xy"},
                   {"SETRANGE", "missing", "9223372036854775807", "A"},
                   {"SETRANGE", "s:a", "-9223372036854775808", "A"},
                   {"SETRANGE", "s:a", "536870912", "A"},
                   {"GET", "s:a"},
                   // "value is out of range, value must between ..." beyond int.
                   {"MOVE", "s:a", "2147483648"},
                   {"SELECT", "-2147483649"},
                   // An empty cursor is 0; "-1" wraps; a leading space is refused.
                   {"SCAN", "", "COUNT", "1000"},
                   {"SCAN", " 0"},
                   {"HSET", "h:a", "f1", "1"},
                   {"HSCAN", "h:a", "-1"},
                   // Cursor, then the key, then the options.
                   {"HSCAN", "s:a", "0", "COUNT", "0"},
                   {"HSCAN", "missing", "0", "COUNT", "0"},
                   // A SHA1 of the wrong length: NOSCRIPT before numkeys.
                   {"EVALSHA", "abc", "9223372036854775807", "s:a"},
                   {"EVALSHA", sha, "9223372036854775807", "s:a"},
                   // Memory configs (memtoull) and maxmemory-samples' range.
                   {"CONFIG", "SET", "hash-max-listpack-value", ""},
                   {"CONFIG", "SET", "zset-max-listpack-value", "18446744073709551615"},
                   {"CONFIG", "SET", "hash-max-listpack-value", "8589934592gb"},
                   {"CONFIG", "SET", "hash-max-listpack-value", "-1"},
                   {"CONFIG", "SET", "maxmemory-samples", "100"},
                   {"CONFIG", "SET", "maxmemory-samples", "2147483648"},
                   {"CONFIG", "SET", "hash-max-listpack-value", "64"},
                   {"CONFIG", "SET", "maxmemory-samples", "5"},
                   // XGROUP SETID takes "-" and "+" (CREATE does not).
                   {"XADD", "x:a", "1-1", "f", "v"},
                   {"XADD", "x:a", "2-0", "f", "v"},
                   {"XGROUP", "CREATE", "x:a", "g1", "-"},
                   {"XGROUP", "CREATE", "x:a", "g1", "0"},
                   {"XGROUP", "SETID", "x:a", "g1", "+"},
                   {"XGROUP", "SETID", "x:a", "g1", "-"},
                   // The largest id is ">": new entries, into the PEL.
                   {"XREADGROUP", "GROUP", "g1", "c1", "COUNT", "1", "STREAMS", "x:a", ">"},
                   {"XREADGROUP", "GROUP", "g1", "c1", "STREAMS", "x:a", "18446744073709551615-18446744073709551615"},
                   {"XPENDING", "x:a", "g1"},
                   // XREAD serves a stream only when an entry after the id exists.
                   {"XDEL", "x:a", "2-0"},
                   {"XREAD", "STREAMS", "x:a", "1-1"},
                   {"XADD", "x:a", "MAXLEN", "0", "3-0", "f", "v"},
                   {"XREAD", "COUNT", "9223372036854775807", "STREAMS", "x:a", "0-1"},
                   // A listpack stores -0 as 0; ZSCAN answers integral scores as integers.
                   {"ZADD", "z:a", "1", "m1", "4611686018427387904", "m2", "1e300", "m3"},
                   {"ZADD", "z:a", "-0", "m1"},
                   {"ZADD", "z:a", "INCR", "-0", "m4"},
                   {"ZSCORE", "z:a", "m1"},
                   {"ZRANGE", "z:a", "0", "-1", "WITHSCORES"},
                   {"ZSCAN", "z:a", "0"},
                   // LIMIT offsets and counts at INT64_MIN (signed overflow under UBSan before).
                   {"ZADD", "z:l", "0", "a", "0", "b", "0", "c"},
                   {"ZREVRANGEBYLEX", "z:l", "+", "-", "LIMIT", "-9223372036854775808", "1"},
                   {"ZRANGEBYLEX", "z:l", "-", "+", "LIMIT", "1", "-9223372036854775808"},
                   {"ZRANGEBYSCORE", "z:l", "-inf", "+inf", "LIMIT", "0", "-9223372036854775808"},
                   // XCLAIM IDLE at INT64_MIN: now - idle wraps and is clamped to now, as in Redis.
                   {"XCLAIM", "x:a", "g1", "c2", "0", "1-1", "IDLE", "-9223372036854775808", "JUSTID"},
                   // SINTER/SUNION/SDIFF compared as sets.
                   {"SADD", "set:a", "1", "m1"},
                   {"SUNION", "set:a", "set:b"},
               });
}

// Options and errors of GETDEL, GETEX, SINTERCARD.
TEST_F(RedisDiff, DirectedGetexGetdelSintercard) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  std::vector<Step> steps = {
      cmd(0, {"SET", "s:a", "v"}),
      cmd(0, {"GETEX", "s:a", "EX", "100"}),
      cmd(0, {"TTL", "s:a"}),
      cmd(0, {"GETEX", "s:a", "PERSIST"}),
      cmd(0, {"TTL", "s:a"}),
      cmd(0, {"GETEX", "s:a", "PERSIST", "EX", "1"}),
      cmd(0, {"GETEX", "s:a", "EX", "0"}),
      cmd(0, {"GETEX", "s:a", "EX", "x"}),
      cmd(0, {"GETEX", "missing", "EX", "0"}),  // nil before the expire is validated
      cmd(0, {"GETEX", "s:a", "NX"}),
      cmd(0, {"GETEX", "s:a", "PXAT", "1"}),  // in the past: the value, then the key is gone
      cmd(0, {"EXISTS", "s:a"}),
      cmd(0, {"SET", "s:b", "w"}),
      cmd(0, {"GETDEL", "s:b"}),
      cmd(0, {"GETDEL", "s:b"}),
      cmd(0, {"SADD", "set:a", "a", "b", "c"}),
      cmd(0, {"SADD", "set:b", "b", "c", "d"}),
      cmd(0, {"GETDEL", "set:a"}),
      cmd(0, {"SINTERCARD", "2", "set:a", "set:b"}),
      cmd(0, {"SINTERCARD", "2", "set:a", "set:b", "LIMIT", "1"}),
      cmd(0, {"SINTERCARD", "2", "set:a", "set:b", "LIMIT", "-1"}),
      cmd(0, {"SINTERCARD", "0", "set:a"}),
      cmd(0, {"SINTERCARD", "3", "set:a", "set:b"}),
      cmd(0, {"SINTERCARD", "2", "set:a", "missing"}),
      cmd(0, {"SINTERCARD", "1", "s:a"}),
      cmd(0, {"SINTERCARD", "1", "set:a", "FOO", "1"}),
  };
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
}

// KD2, fixed: a reader woken by an entry that MAXLEN 0 trims at once gets [[key, []]].
TEST_F(RedisDiff, DirectedWokenReaderOfATrimmedEntry) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  Step blocked;
  blocked.kind = Step::Kind::kBlockedRead;
  blocked.client = 0;
  blocked.argv = {"XREADGROUP", "GROUP", "g1", "c1", "BLOCK", "1000", "STREAMS", "x:a", ">"};
  blocked.writer = 1;
  blocked.writer_argv = {"XADD", "x:a", "MAXLEN", "0", "*", "f", "v"};
  std::vector<Step> steps = {cmd(0, {"XGROUP", "CREATE", "x:a", "g1", "$", "MKSTREAM"}), blocked,
                             cmd(0, {"XPENDING", "x:a", "g1"}), cmd(0, {"XLEN", "x:a"})};
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
  EXPECT_TRUE(r.known_hits.empty()) << r.report;
}

// ---- The suite must be able to fail: a deliberately broken engine is caught.

// Found by the grown suite: an XADD to a same-named stream in another database must not wake a
// reader blocked in database 0 (the engine signaled keys without their database).
TEST_F(RedisDiff, DirectedBlockedReadIgnoresOtherDatabases) {
  HiredisSide real = real_side();
  EngineSide sim(diff_scripts());
  const Step blocked =
      blocked_read(0, {"XREADGROUP", "GROUP", "g1", "c1", "COUNT", "2", "BLOCK", "100", "STREAMS", "x:a", ">"}, 1,
                   {"XADD", "x:a", "MAXLEN", "5", "*", "f", "v"});
  std::vector<Step> steps = {
      cmd(0, {"XGROUP", "CREATE", "x:a", "g1", "$", "MKSTREAM"}),
      cmd(1, {"SELECT", "15"}),
      blocked,
      cmd(1, {"XLEN", "x:a"}),
      cmd(0, {"XLEN", "x:a"}),
  };
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
}

// Issue 14: sorted-set ranges in every form, with equal scores (what BYLEX is for) and mixed
// ones (Redis walks the listpack: a deterministic "unspecified" answer).
TEST_F(RedisDiff, DirectedZsetRanges) {
  HiredisSide real = real_side();
  expect_agree(real, {
                         {"ZADD", "z:a", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e"},
                         {"ZADD", "z:b", "1", "c", "2", "a", "3", "d", "3", "b", "-inf", "z", "inf", "y"},
                         {"ZRANGE", "z:a", "[b", "(e", "BYLEX"},
                         {"ZRANGE", "z:a", "(e", "[b", "BYLEX", "REV"},
                         {"ZRANGE", "z:a", "-", "+", "BYLEX", "LIMIT", "1", "2"},
                         {"ZRANGE", "z:a", "+", "-", "BYLEX", "REV", "LIMIT", "0", "3"},
                         {"ZRANGE", "z:a", "-", "+", "BYLEX", "LIMIT", "-1", "2"},
                         {"ZRANGE", "z:a", "-", "+", "BYLEX", "LIMIT", "2", "-1"},
                         {"ZRANGE", "z:a", "-", "+", "BYLEX", "WITHSCORES"},
                         {"ZRANGE", "z:a", "[c", "[b", "BYLEX"},
                         {"ZRANGE", "z:a", "(c", "(c", "BYLEX"},
                         {"ZRANGE", "z:a", "c", "+", "BYLEX"},
                         {"ZRANGE", "z:a", "[", "+", "BYLEX"},
                         {"ZRANGE", "z:a", "-", "+x", "BYLEX"},
                         {"ZRANGE", "z:b", "[b", "[d", "BYLEX"},
                         {"ZRANGE", "z:b", "[d", "[b", "BYLEX", "REV"},
                         {"ZRANGE", "z:b", "-inf", "+inf", "BYSCORE", "WITHSCORES"},
                         {"ZRANGE", "z:b", "(1", "3", "BYSCORE", "LIMIT", "1", "5", "WITHSCORES"},
                         {"ZRANGE", "z:b", "+inf", "(1", "BYSCORE", "REV", "WITHSCORES"},
                         {"ZRANGE", "z:b", "3", "3", "BYSCORE", "REV"},
                         {"ZRANGE", "z:b", "", "(", "BYSCORE"},
                         {"ZRANGE", "z:b", "x", "1", "BYSCORE"},
                         {"ZRANGE", "z:b", "0", "-1", "REV", "WITHSCORES"},
                         {"ZRANGE", "z:b", "0", "-1", "LIMIT", "0", "-1"},
                         {"ZRANGE", "z:b", "0", "-1", "LIMIT", "0", "1"},
                         {"ZRANGE", "z:b", "0", "-1", "LIMIT", "0"},
                         {"ZRANGE", "z:b", "0", "-1", "LIMIT", "x", "1", "BYSCORE"},
                         {"ZRANGE", "z:b", "0", "-1", "BYSCORE", "BYLEX"},
                         {"ZRANGE", "z:b", "0", "-1", "REV", "REV"},
                         {"ZREVRANGE", "z:b", "0", "1", "WITHSCORES"},
                         {"ZREVRANGE", "z:b", "0", "1", "REV"},
                         {"ZRANGEBYSCORE", "z:b", "-inf", "3", "WITHSCORES", "LIMIT", "1", "2"},
                         {"ZRANGEBYSCORE", "z:b", "-inf", "3", "BYSCORE"},
                         {"ZREVRANGEBYSCORE", "z:b", "3", "(1"},
                         {"ZRANGEBYLEX", "z:a", "-", "[c"},
                         {"ZREVRANGEBYLEX", "z:a", "[c", "-", "LIMIT", "1", "1"},
                         {"ZRANGEBYLEX", "z:a", "-", "[c", "REV"},
                         {"ZLEXCOUNT", "z:a", "(a", "[d"},
                         {"ZLEXCOUNT", "z:a", "a", "[d"},
                         {"ZLEXCOUNT", "missing", "-", "+"},
                         {"ZCOUNT", "z:b", "(1", "+inf"},
                         {"ZCOUNT", "z:b", "x", "+inf"},
                         {"ZRANGESTORE", "z:c", "z:b", "1", "3", "BYSCORE"},
                         {"ZRANGE", "z:c", "0", "-1", "WITHSCORES"},
                         {"ZRANGESTORE", "z:c", "z:a", "[b", "[c", "BYLEX", "REV", "LIMIT", "0", "1"},
                         {"ZRANGE", "z:c", "0", "-1", "WITHSCORES"},
                         {"ZRANGESTORE", "z:c", "z:a", "0", "-1", "WITHSCORES"},
                         {"ZRANGESTORE", "z:c", "missing", "0", "-1"},
                         {"EXISTS", "z:c"},
                         {"ZRANGESTORE", "s:a", "z:a", "5", "9"},
                         {"SET", "s:a", "v"},
                         {"ZRANGESTORE", "z:c", "s:a", "0", "-1"},
                         {"ZRANGE", "s:a", "0", "-1"},
                         {"ZRANGE", "s:a", "x", "-1"},
                     });
}

// ZUNION/ZINTER/ZDIFF (+STORE), WEIGHTS, AGGREGATE, WITHSCORES, ZINTERCARD; plain sets score 1;
// inf + -inf sums to 0 in the order Redis aggregates (smallest input first).
TEST_F(RedisDiff, DirectedZsetAlgebra) {
  HiredisSide real = real_side();
  expect_agree(real, {
                         {"ZADD", "z:a", "1", "a", "2", "b", "3", "c", "inf", "i"},
                         {"ZADD", "z:b", "10", "b", "20", "c", "30", "d", "-inf", "i"},
                         {"SADD", "set:a", "a", "c", "x", "i"},
                         {"ZUNION", "2", "z:a", "z:b", "WITHSCORES"},
                         {"ZUNION", "3", "z:a", "z:b", "set:a", "WEIGHTS", "2", "0.5", "-1", "WITHSCORES"},
                         {"ZUNION", "2", "z:a", "z:b", "AGGREGATE", "MIN", "WITHSCORES"},
                         {"ZUNION", "2", "z:a", "z:b", "AGGREGATE", "max", "WEIGHTS", "1", "0", "WITHSCORES"},
                         {"ZUNION", "2", "z:a", "z:b", "WEIGHTS", "1"},
                         {"ZUNION", "2", "z:a", "z:b", "WEIGHTS", "1", "x"},
                         {"ZUNION", "2", "z:a", "z:b", "AGGREGATE", "avg"},
                         {"ZUNION", "2", "z:a", "z:b", "AGGREGATE"},
                         {"ZUNION", "0", "z:a"},
                         {"ZUNION", "x", "z:a"},
                         {"ZUNION", "3", "z:a", "z:b"},
                         {"ZUNION", "1", "missing", "WITHSCORES"},
                         {"ZINTER", "2", "z:a", "z:b", "WITHSCORES"},
                         {"ZINTER", "3", "z:a", "set:a", "z:b", "WITHSCORES"},
                         {"ZINTER", "2", "set:a", "z:a", "AGGREGATE", "MAX", "WITHSCORES"},
                         {"ZINTER", "2", "z:a", "missing"},
                         {"ZDIFF", "2", "z:a", "z:b", "WITHSCORES"},
                         {"ZDIFF", "2", "z:a", "set:a", "WITHSCORES"},
                         {"ZDIFF", "2", "z:a", "z:b", "WEIGHTS", "1", "1"},
                         {"ZDIFF", "1", "missing"},
                         {"ZINTERCARD", "2", "z:a", "z:b"},
                         {"ZINTERCARD", "2", "z:a", "z:b", "LIMIT", "1"},
                         {"ZINTERCARD", "2", "z:a", "z:b", "LIMIT", "-1"},
                         {"ZINTERCARD", "2", "z:a", "z:b", "LIMIT", "x"},
                         {"ZINTERCARD", "2", "z:a", "z:b", "WITHSCORES"},
                         {"ZINTERCARD", "0", "z:a"},
                         {"ZINTERCARD", "3", "z:a", "z:b"},
                         {"ZUNIONSTORE", "z:c", "2", "z:a", "z:b", "WEIGHTS", "1", "2"},
                         {"ZRANGE", "z:c", "0", "-1", "WITHSCORES"},
                         {"ZUNIONSTORE", "z:c", "2", "z:a", "z:b", "WITHSCORES"},
                         {"ZINTERSTORE", "z:c", "2", "z:a", "missing"},
                         {"EXISTS", "z:c"},
                         {"ZDIFFSTORE", "z:c", "2", "z:a", "z:b"},
                         {"ZRANGE", "z:c", "0", "-1", "WITHSCORES"},
                         {"OBJECT", "ENCODING", "z:c"},
                         {"SET", "s:a", "v"},
                         {"ZUNION", "2", "z:a", "s:a"},
                         {"ZINTERSTORE", "s:a", "1", "z:a"},
                         {"TYPE", "s:a"},
                     });
}

// SINTER/SUNION/SDIFF (+STORE), ZMSCORE, ZPOPMIN/ZPOPMAX and non-blocking XREAD, with their
// errors: replies and the keyspace they leave.
TEST_F(RedisDiff, DirectedSetAlgebraPopsAndXread) {
  HiredisSide real = real_side();
  expect_agree(real, {
                         {"SADD", "set:a", "1", "2", "3", "4"},
                         {"SADD", "set:b", "3", "4", "5"},
                         {"SINTER", "set:a", "set:b"},
                         {"SINTER", "set:a", "missing"},
                         {"SUNION", "set:a", "set:b", "missing"},
                         {"SDIFF", "set:a", "set:b"},
                         {"SDIFF", "missing", "set:a"},
                         {"SINTERSTORE", "set:c", "set:a", "set:b"},
                         {"SMEMBERS", "set:c"},
                         {"SDIFFSTORE", "set:c", "set:b", "set:b"},
                         {"EXISTS", "set:c"},
                         {"SET", "s:a", "v"},
                         {"SUNIONSTORE", "s:a", "set:a", "set:b"},
                         {"TYPE", "s:a"},
                         {"SINTER", "set:a", "s:a"},
                         {"SINTER"},
                         {"ZADD", "z:a", "1", "a", "2", "b", "3", "c", "-inf", "m"},
                         {"ZMSCORE", "z:a", "a", "nope", "m"},
                         {"ZMSCORE", "missing", "a"},
                         {"ZMSCORE", "set:a", "a"},
                         {"ZPOPMIN", "z:a"},
                         {"ZPOPMAX", "z:a", "2"},
                         {"ZPOPMIN", "z:a", "0"},
                         {"ZPOPMIN", "z:a", "-1"},
                         {"ZPOPMIN", "z:a", "x"},
                         {"ZPOPMIN", "z:a", "1", "2"},
                         {"ZPOPMAX", "z:a", "10"},
                         {"EXISTS", "z:a"},
                         {"ZPOPMIN", "missing"},
                         {"ZPOPMAX", "set:a"},
                         {"XADD", "x:a", "1-1", "f", "v"},
                         {"XADD", "x:a", "2-1", "g", "w"},
                         {"XADD", "x:b", "7-1", "h", "u"},
                         {"XREAD", "STREAMS", "x:a", "x:b", "0", "0"},
                         {"XREAD", "COUNT", "1", "STREAMS", "x:a", "x:b", "1-1", "0-0"},
                         {"XREAD", "STREAMS", "x:a", "$"},
                         {"XREAD", "STREAMS", "x:a", "2"},
                         {"XREAD", "STREAMS", "missing", "0"},
                         {"XREAD", "STREAMS", "x:a", ">"},
                         {"XREAD", "STREAMS", "x:a", "x:b", "0"},
                         {"XREAD", "STREAMS", "s:a", "0"},
                         {"XREAD", "STREAMS", "x:a", "bad"},
                         {"XREAD", "GROUP", "g", "c", "STREAMS", "x:a", "0"},
                         {"XREAD", "NOACK", "STREAMS", "x:a", "0"},
                         {"XREAD", "BLOCK", "-1", "STREAMS", "x:a", "0"},
                         {"XREAD", "COUNT", "x", "STREAMS", "x:a", "0"},
                     });
}

// SETRANGE, GETRANGE/SUBSTR, LCS (LEN, IDX, MINMATCHLEN, WITHMATCHLEN) and the raw encoding a
// string written in place gets.
TEST_F(RedisDiff, DirectedStringRangesAndLcs) {
  HiredisSide real = real_side();
  expect_agree(real, {
                         {"SETRANGE", "s:a", "5", "hello"},
                         {"GET", "s:a"},
                         {"STRLEN", "s:a"},
                         {"SETRANGE", "s:a", "0", "HE"},
                         {"GETRANGE", "s:a", "0", "-1"},
                         {"OBJECT", "ENCODING", "s:a"},
                         {"SETRANGE", "s:a", "0", ""},
                         {"SETRANGE", "missing", "3", ""},
                         {"EXISTS", "missing"},
                         {"SETRANGE", "s:a", "-1", "x"},
                         {"SETRANGE", "s:a", "x", "x"},
                         {"SETRANGE", "s:a", "536870911", "xy"},
                         {"SET", "n", "12345"},
                         {"SETRANGE", "n", "1", "9"},
                         {"OBJECT", "ENCODING", "n"},
                         {"INCR", "n"},
                         {"OBJECT", "ENCODING", "n"},
                         {"GETRANGE", "n", "1", "2"},
                         {"GETRANGE", "n", "-3", "-1"},
                         {"GETRANGE", "n", "-1", "-3"},
                         {"GETRANGE", "n", "3", "1"},
                         {"GETRANGE", "n", "-100", "100"},
                         {"GETRANGE", "n", "x", "1"},
                         {"GETRANGE", "missing", "0", "1"},
                         {"SUBSTR", "n", "0", "0"},
                         {"SET", "s:a", "ohmytext"},
                         {"SET", "s:b", "mynewtext"},
                         {"LCS", "s:a", "s:b"},
                         {"LCS", "s:a", "s:b", "LEN"},
                         {"LCS", "s:a", "s:b", "IDX"},
                         {"LCS", "s:a", "s:b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"},
                         {"LCS", "s:a", "s:b", "IDX", "WITHMATCHLEN"},
                         {"LCS", "s:a", "s:b", "IDX", "MINMATCHLEN", "-5"},
                         {"LCS", "s:a", "s:b", "MINMATCHLEN", "x"},
                         {"LCS", "s:a", "s:b", "MINMATCHLEN"},
                         {"LCS", "s:a", "s:b", "IDX", "LEN"},
                         {"LCS", "s:a", "missing", "IDX"},
                         {"LCS", "s:a", "s:a", "IDX", "WITHMATCHLEN"},
                         {"HSET", "h:a", "f", "v"},
                         {"LCS", "s:a", "h:a"},
                         {"SETRANGE", "h:a", "0", "x"},
                         {"GETRANGE", "h:a", "0", "1"},
                     });
}

// HRANDFIELD's deterministic parts: errors, empty and whole-hash answers, sizes, and with a
// single field the only possible member.
TEST_F(RedisDiff, DirectedHrandfield) {
  HiredisSide real = real_side();
  expect_agree(real, {
                         {"HRANDFIELD", "h:a"},
                         {"HRANDFIELD", "h:a", "3"},
                         {"HSET", "h:a", "only", "1"},
                         {"HRANDFIELD", "h:a"},
                         {"HRANDFIELD", "h:a", "-3", "WITHVALUES"},
                         {"HRANDFIELD", "h:a", "1"},
                         {"HSET", "h:a", "f2", "2", "f3", "3"},
                         {"HRANDFIELD", "h:a", "3", "WITHVALUES"},
                         {"HRANDFIELD", "h:a", "10"},
                         {"HRANDFIELD", "h:a", "2"},
                         {"HRANDFIELD", "h:a", "-7"},
                         {"HRANDFIELD", "h:a", "0"},
                         {"HRANDFIELD", "h:a", "x"},
                         {"HRANDFIELD", "h:a", "1", "WITHVALUES", "x"},
                         {"HRANDFIELD", "h:a", "1", "VALUES"},
                         {"HRANDFIELD", "h:a", "-9223372036854775808"},
                         {"HRANDFIELD", "h:a", "4611686018427387904", "WITHVALUES"},
                         {"HRANDFIELD", "h:a", "-4611686018427387904", "WITHVALUES"},
                         {"SET", "s:a", "v"},
                         {"HRANDFIELD", "s:a"},
                         {"HRANDFIELD", "s:a", "1"},
                         {"HRANDFIELD", "s:a", "x"},
                     });
}

// XINFO STREAM (and FULL), GROUPS with entries-read and lag (incl. a tombstone ahead of a
// group), CONSUMERS, HELP and errors, on explicit ids so radix-tree-nodes is compared too.
TEST_F(RedisDiff, DirectedXinfo) {
  HiredisSide real = real_side();
  std::vector<std::vector<std::string>> cmds = {
      {"XINFO", "STREAM", "x:a"},
      {"XGROUP", "CREATE", "x:a", "g1", "0", "MKSTREAM"},
      {"XINFO", "STREAM", "x:a"},
      {"XINFO", "GROUPS", "x:a"},
  };
  for (int i = 1; i <= 5; ++i) cmds.push_back({"XADD", "x:a", std::to_string(i) + "-1", "f", std::to_string(i)});
  for (int i = 0; i < 260; ++i) cmds.push_back({"XADD", "x:a", std::to_string(1000 + i * 300) + "-0", "f", "v"});
  const std::vector<std::vector<std::string>> rest = {
      {"XGROUP", "CREATE", "x:a", "g2", "$"},
      {"XGROUP", "CREATE", "x:a", "g3", "0", "ENTRIESREAD", "2"},
      {"XINFO", "STREAM", "x:a"},
      {"XINFO", "GROUPS", "x:a"},
      {"XREADGROUP", "GROUP", "g1", "c1", "COUNT", "2", "STREAMS", "x:a", ">"},
      {"XREADGROUP", "GROUP", "g1", "c2", "COUNT", "1", "STREAMS", "x:a", ">"},
      {"XREADGROUP", "GROUP", "g3", "c1", "COUNT", "1", "STREAMS", "x:a", ">"},
      {"XINFO", "GROUPS", "x:a"},
      {"XDEL", "x:a", "5-1"},
      {"XINFO", "GROUPS", "x:a"},
      {"XREADGROUP", "GROUP", "g1", "c1", "COUNT", "2", "STREAMS", "x:a", ">"},
      {"XINFO", "GROUPS", "x:a"},
      {"XDEL", "x:a", "1-1"},
      {"XINFO", "STREAM", "x:a"},
      {"XINFO", "GROUPS", "x:a"},
      {"XGROUP", "SETID", "x:a", "g1", "2-1"},
      {"XINFO", "GROUPS", "x:a"},
      {"XINFO", "CONSUMERS", "x:a", "g1"},
      {"XINFO", "CONSUMERS", "x:a", "nosuch"},
      {"XINFO", "STREAM", "x:a", "FULL", "COUNT", "3"},
      {"XINFO", "STREAM", "x:a", "FULL", "COUNT", "-1"},
      {"XINFO", "STREAM", "x:a", "FULL", "COUNT", "x"},
      {"XINFO", "STREAM", "x:a", "FULL", "LIMIT", "3"},
      {"XINFO", "STREAM", "x:a", "FULL", "COUNT"},
      {"XINFO", "STREAM", "x:a", "PARTIAL"},
      {"XADD", "x:a", "MAXLEN", "~", "50", "*", "f", "v"},
      {"XINFO", "GROUPS", "x:a"},
      {"XADD", "x:b", "MAXLEN", "0", "7-7", "f", "v"},
      {"XINFO", "STREAM", "x:b", "FULL"},
      {"XINFO", "STREAM", "missing"},
      {"XINFO", "GROUPS", "missing"},
      {"SET", "s:a", "v"},
      {"XINFO", "STREAM", "s:a"},
      {"XINFO", "HELP"},
      {"XINFO", "NOSUCH", "x:a"},
      {"XINFO", "STREAM"},
      {"XINFO", "GROUPS", "x:a", "extra"},
  };
  cmds.insert(cmds.end(), rest.begin(), rest.end());
  expect_agree(real, cmds);
}

TEST_F(RedisDiff, CatchesABrokenEngine) {
  HiredisSide real = real_side();
  struct Case {
    std::string what;
    std::vector<Step> steps;
    std::function<RedisReply(const std::vector<std::string>&, RedisReply)> corrupt;
  };
  auto is = [](const std::vector<std::string>& argv, const char* name) { return upper(argv[0]) == name; };
  std::vector<Case> cases = {
      {"SCARD off by one",
       {cmd(0, {"SADD", "set:a", "m1", "m2"}), cmd(0, {"SCARD", "set:a"})},
       [&](const auto& argv, RedisReply r) {
         if (is(argv, "SCARD")) r.integer += 1;
         return r;
       }},
      {"SMEMBERS loses a member (set comparison still sees it)",
       {cmd(0, {"SADD", "set:a", "m1", "m2"}), cmd(0, {"SMEMBERS", "set:a"})},
       [&](const auto& argv, RedisReply r) {
         if (is(argv, "SMEMBERS") && !r.elements.empty()) r.elements.pop_back();
         return r;
       }},
      {"PTTL beyond the tolerance",
       {cmd(0, {"SET", "s:a", "v", "PX", "100000"}), cmd(0, {"PTTL", "s:a"})},
       [&](const auto& argv, RedisReply r) {
         if (is(argv, "PTTL")) r.integer -= 1000;
         return r;
       }},
      {"error text",
       {cmd(0, {"SET", "s:a", "v"}), cmd(0, {"HGET", "s:a", "f"})},
       [&](const auto& argv, RedisReply r) {
         if (is(argv, "HGET")) r = RedisReply::error("WRONGTYPE something else");
         return r;
       }},
      {"EXEC element inside a transaction",
       {cmd(0, {"MULTI"}), cmd(0, {"INCR", "n"}), cmd(0, {"EXEC"})},
       [&](const auto& argv, RedisReply r) {
         if (is(argv, "EXEC") && !r.elements.empty()) r.elements[0].integer = 7;
         return r;
       }},
      {"HRANDFIELD sample one short (N6 compares sizes)",
       {cmd(0, {"HSET", "h:a", "f1", "1", "f2", "2", "f3", "3"}), cmd(0, {"HRANDFIELD", "h:a", "-4"})},
       [&](const auto& argv, RedisReply r) {
         if (is(argv, "HRANDFIELD") && !r.elements.empty()) r.elements.pop_back();
         return r;
       }},
      {"HRANDFIELD whole hash with a wrong field (N6 compares it as a set)",
       {cmd(0, {"HSET", "h:a", "f1", "1", "f2", "2"}), cmd(0, {"HRANDFIELD", "h:a", "5", "WITHVALUES"})},
       [&](const auto& argv, RedisReply r) {
         if (is(argv, "HRANDFIELD") && !r.elements.empty()) r.elements[0].str = "f9";
         return r;
       }},
      {"XINFO GROUPS lag (only clock readings are zeroed)",
       {cmd(0, {"XGROUP", "CREATE", "x:a", "g", "0", "MKSTREAM"}), cmd(0, {"XADD", "x:a", "*", "f", "v"}),
        cmd(0, {"XINFO", "GROUPS", "x:a"})},
       [&](const auto& argv, RedisReply r) {
         if (is(argv, "XINFO") && !r.elements.empty() && r.elements[0].elements.size() == 12) {
           r.elements[0].elements[11] = RedisReply::integer_of(7);
         }
         return r;
       }},
      {"stream id of a blocked read",
       {cmd(0, {"XGROUP", "CREATE", "x:a", "g", "$", "MKSTREAM"}),
        [] {
          Step s;
          s.kind = Step::Kind::kBlockedRead;
          s.argv = {"XREADGROUP", "GROUP", "g", "c", "BLOCK", "1000", "STREAMS", "x:a", ">"};
          s.writer_argv = {"XADD", "x:a", "*", "f", "v"};
          return s;
        }()},
       [&](const auto& argv, RedisReply r) {
         if (is(argv, "XREADGROUP")) r = RedisReply::nil_array();
         return r;
       }},
  };
  for (auto& c : cases) {
    EngineSide broken(diff_scripts());
    broken.corrupt = c.corrupt;
    RunResult r = run_and_compare(real, broken, c.steps);
    EXPECT_FALSE(r.equal) << c.what << " went unnoticed:\n" << r.report;
    EXPECT_EQ(r.failed_step, c.steps.size() - 1) << c.what << "\n" << r.report;
    // And the unbroken engine agrees on the same sequence.
    EngineSide sound(diff_scripts());
    RunResult ok = run_and_compare(real, sound, c.steps);
    EXPECT_TRUE(ok.equal) << c.what << "\n" << ok.report;
  }
}

TEST_F(RedisDiff, CatchesALostPubSubMessage) {
  HiredisSide real = real_side();
  EngineSide broken(diff_scripts());
  broken.lose_messages = true;  // PUBLISH still counts the receiver, the message never arrives
  std::vector<Step> steps = {cmd(2, {"SUBSCRIBE", "ch1"}), cmd(0, {"PUBLISH", "ch1", "m"})};
  RunResult r = run_and_compare(real, broken, steps);
  EXPECT_FALSE(r.equal) << r.report;
  EXPECT_EQ(r.failed_step, 1u);
  EXPECT_NE(r.report.find("DIFFERENT pub/sub messages on c2"), std::string::npos) << r.report;
  EngineSide sound(diff_scripts());
  RunResult ok = run_and_compare(real, sound, steps);
  EXPECT_TRUE(ok.equal) << ok.report;
}

// The likes scripts (impl/likes/scripts.h), by their Lua text: the simulated Redis running them
// answers and writes as a real redis-server does — the versioned put, the
// apply with and without its lease keys, and LK-FILL-LEASE's lease and fill (taken, superseded,
// deleted by an apply, missing).
TEST_F(RedisDiff, DirectedLikesScripts) {
  HiredisSide real = real_side();
  auto scripts = likes::likes_scripts();
  EngineSide sim(scripts);
  auto lua = [&](const char* name) { return scripts->by_name(name)->lua; };
  const std::string put = lua(likes::kPutScript), apply = lua(likes::kApplyScript);
  const std::string lease = lua(likes::kLeaseScript), fill = lua(likes::kFillScript);
  std::vector<Step> steps = {
      cmd(0, {"EVAL", put, "2", "l:v", "l:ver", "1", "10", "0"}),
      cmd(0, {"EVAL", put, "2", "l:v", "l:ver", "0", "9", "0"}),  // older: refused
      cmd(0, {"EVAL", lease, "1", "l:lease", "r1#1:1", "10000"}),
      cmd(0, {"EVAL", lease, "2", "l:lease", "c:lease", "r2#1:1", "10000"}),             // supersedes
      cmd(0, {"EVAL", fill, "3", "l:v", "l:ver", "l:lease", "0", "11", "0", "r1#1:1"}),  // superseded
      cmd(0, {"GET", "l:v"}),
      cmd(0, {"EVAL", fill, "3", "l:v", "l:ver", "l:lease", "0", "11", "0", "r2#1:1"}),  // its lease
      cmd(0, {"EXISTS", "l:lease"}),                                                     // consumed
      cmd(0, {"EVAL", fill, "3", "l:v", "l:ver", "l:lease", "1", "12", "0", "r2#1:1"}),  // no lease
      cmd(0, {"EVAL", lease, "1", "l:lease", "r1#1:2", "10000"}),
      cmd(0, {"EVAL", apply, "6", "l:v", "l:ver", "c:v", "c:ver", "l:lease", "c:lease", "1", "13", "3000", "5", "0",
              "13"}),
      cmd(0, {"EXISTS", "l:lease", "c:lease"}),  // voided by the write
      cmd(0, {"EVAL", fill, "3", "l:v", "l:ver", "l:lease", "0", "12", "3000", "r1#1:2"}),
      cmd(0, {"SET", "c:v", "9"}),  // a value whose floor
      cmd(0, {"DEL", "c:ver"}),     // was evicted
      cmd(0, {"EVAL", apply, "6", "l:v", "l:ver", "c:v", "c:ver", "l:lease", "c:lease", "0", "12", "3000", "4", "0",
              "12"}),  // drops c:v, refuses l:v
      cmd(0, {"MGET", "l:v", "l:ver", "c:v", "c:ver"}),
      cmd(0, {"EVAL", apply, "4", "l:v", "l:ver", "c:v", "c:ver", "0", "14", "3000", "4", "0", "14"}),
      cmd(0, {"MGET", "l:v", "l:ver", "c:v", "c:ver"}),
      cmd(0, {"EVAL", lease, "0", "r1#1:3", "10000"}),
  };
  RunResult r = run_and_compare(real, sim, steps);
  EXPECT_TRUE(r.equal) << r.report;
  // The comparison takes two script errors as equal: none may occur here (a Lua error on the real
  // server, or a script the engine does not know, would pass unseen).
  EXPECT_EQ(r.report.find("ERR"), std::string::npos) << r.report;
}

}  // namespace
}  // namespace fl::redis_diff
