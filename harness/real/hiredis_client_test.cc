#include "harness/real/hiredis_client.h"

#include <gtest/gtest.h>

#include "harness/real/redis_server.h"

namespace fl::real {
namespace {

// RealRedis tasks complete without suspending: resuming once runs them to the end.
template <typename T>
T run_now(Task<T> task) {
  auto h = task.handle();
  h.resume();
  EXPECT_TRUE(h.done()) << "a RealRedis task suspended";
  return h.promise().take();
}

std::shared_ptr<const ScriptRegistry> test_scripts() {
  auto reg = std::make_shared<ScriptRegistry>();
  reg->add(RedisScript{"incr_if_exists",
                       "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) "
                       "end return false"});
  return reg;
}

class RealRedisTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    RedisServerOptions o;
    o.binary_path = REDIS_SERVER_PATH;
    server_ = new RedisServer(RedisServer::start(o));
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    redis_ = RealRedis::unix_socket(server_->socket_path(), test_scripts());
    ASSERT_EQ(redis_->command_sync({"FLUSHALL"}), RedisReply::ok());
    ASSERT_EQ(redis_->command_sync({"SCRIPT", "FLUSH"}), RedisReply::ok());
  }
  static RedisServer* server_;
  std::unique_ptr<RealRedis> redis_;
};
RedisServer* RealRedisTest::server_ = nullptr;

TEST_F(RealRedisTest, CommandsAndPipelinesThroughThePort) {
  Redis& r = *redis_;
  EXPECT_EQ(run_now(redis_set(r, "k", "v")), RedisReply::ok());
  EXPECT_EQ(run_now(redis_get(r, "k")), RedisReply::bulk("v"));
  EXPECT_EQ(run_now(redis_hincrby(r, "h", "f", 5)), RedisReply::integer_of(5));
  std::vector<RedisReply> replies = run_now(r.pipeline({{"INCR", "c"}, {"INCR", "c"}, {"GET", "c"}}));
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[2], RedisReply::bulk("2"));
  RedisReply tx = run_now(redis_transaction(r, {{"INCR", "c"}, {"HGET", "c", "x"}}));
  ASSERT_EQ(tx.kind, RedisReply::Kind::kArray);
  ASSERT_EQ(tx.elements.size(), 2u);
  EXPECT_EQ(tx.elements[0], RedisReply::integer_of(3));
  EXPECT_TRUE(tx.elements[1].is_error());  // WRONGTYPE inside EXEC does not abort the rest
}

TEST_F(RealRedisTest, ScriptsFallBackFromEvalshaToEval) {
  Redis& r = *redis_;
  // The cache was flushed: the first call needs EVAL, the second hits EVALSHA.
  EXPECT_EQ(run_now(r.script("incr_if_exists", {"n"}, {"2"})), RedisReply::nil());
  ASSERT_EQ(redis_->command_sync({"SET", "n", "40"}), RedisReply::ok());
  EXPECT_EQ(run_now(r.script("incr_if_exists", {"n"}, {"2"})), RedisReply::integer_of(42));
  RedisReply exists = redis_->command_sync({"SCRIPT", "EXISTS", test_scripts()->sha1_of("incr_if_exists")});
  EXPECT_EQ(exists, RedisReply::array({RedisReply::integer_of(1)}));
  RedisReply unknown = run_now(r.script("nope", {}, {}));
  EXPECT_EQ(unknown, RedisReply::error("ERR faultline: unknown script 'nope'"));
}

TEST_F(RealRedisTest, BlockingReadWaitsForItsTimeout) {
  ASSERT_EQ(redis_->command_sync({"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"}), RedisReply::ok());
  auto start = std::chrono::steady_clock::now();
  RedisReply r = run_now(redis_xreadgroup(*redis_, "g", "c", "s", ">", 1, 150));
  auto waited_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.is_nil()) << r.describe();
  EXPECT_GE(waited_ms, 140);
}

TEST_F(RealRedisTest, SubscriptionsDeliverAndBreak) {
  std::vector<RedisPubSubMessage> got;
  std::string broken_reason;
  RedisSubscribeResult sub =
      run_now(redis_->subscribe({"ch1", "ch2"}, {[&](const RedisPubSubMessage& m) { got.push_back(m); },
                                                 [&](std::string_view why) { broken_reason = std::string(why); }}));
  ASSERT_TRUE(sub.ok()) << sub.reply.describe();
  ASSERT_EQ(sub.reply.elements.size(), 2u);
  EXPECT_EQ(sub.reply.elements[1],
            RedisReply::array({RedisReply::bulk("subscribe"), RedisReply::bulk("ch2"), RedisReply::integer_of(2)}));
  EXPECT_EQ(run_now(redis_publish(*redis_, "ch1", "hello")), RedisReply::integer_of(1));
  EXPECT_EQ(run_now(redis_publish(*redis_, "ch2", "world")), RedisReply::integer_of(1));
  size_t delivered = 0;
  for (int i = 0; i < 100 && delivered < 2; ++i) delivered += redis_->poll_subscriptions(20);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].channel, "ch1");
  EXPECT_EQ(got[0].payload, "hello");
  EXPECT_EQ(got[1].payload, "world");

  // Killing the subscriber's connection breaks the subscription exactly once.
  ASSERT_EQ(redis_->command_sync({"CLIENT", "KILL", "TYPE", "pubsub"}), RedisReply::integer_of(1));
  for (int i = 0; i < 100 && sub.subscription->active(); ++i) redis_->poll_subscriptions(20);
  EXPECT_FALSE(sub.subscription->active());
  EXPECT_FALSE(broken_reason.empty());
  sub.subscription.reset();
  EXPECT_EQ(redis_->poll_subscriptions(0), 0u);
}

TEST(RealRedisStandalone, TransportErrorsAreValues) {
  auto redis = RealRedis::unix_socket("/nonexistent/socket", nullptr, 200);
  RedisReply r = run_now(redis->command({"PING"}));
  EXPECT_TRUE(r.is_transport_error());
  EXPECT_FALSE(r.indeterminate);
  std::vector<RedisReply> batch = run_now(redis->pipeline({{"PING"}, {"PING"}}));
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_TRUE(batch[0].is_transport_error());
  EXPECT_TRUE(batch[1].is_transport_error());
  RedisSubscribeResult sub = run_now(redis->subscribe({"c"}, {}));
  EXPECT_FALSE(sub.ok());
  EXPECT_TRUE(sub.reply.is_transport_error());
}

TEST(BlockTimeout, FindsTheBlockArgument) {
  EXPECT_EQ(block_timeout_ms({"XREADGROUP", "GROUP", "g", "c", "BLOCK", "100", "STREAMS", "s", ">"}), 100);
  EXPECT_EQ(block_timeout_ms({"xreadgroup", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"}), std::nullopt);
  EXPECT_EQ(block_timeout_ms({"GET", "BLOCK", "1"}), std::nullopt);
}

}  // namespace
}  // namespace fl::real
