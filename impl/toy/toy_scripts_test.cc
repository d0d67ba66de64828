// toy_visit's C++ twin (impl/toy/scripts.h) against a map standing in for Redis: a request id is
// counted once, however often it comes. (The Lua text answers the same on a real redis-server.)
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "impl/toy/scripts.h"

namespace fl::toy {
namespace {

// The three commands toy_visit calls, on strings.
class MapRedis final : public ScriptCalls {
 public:
  RedisReply call(std::vector<std::string> argv) override {
    if (argv[0] == "SET") {
      if (keys.count(argv[1]) != 0) return RedisReply::nil();
      keys[argv[1]] = argv[2];
      return RedisReply::ok();
    }
    if (argv[0] == "INCR") {
      const int64_t n = std::stoll(keys.count(argv[1]) != 0 ? keys[argv[1]] : "0") + 1;
      keys[argv[1]] = std::to_string(n);
      return RedisReply::integer_of(n);
    }
    const auto it = keys.find(argv[1]);
    return it == keys.end() ? RedisReply::nil() : RedisReply::bulk(it->second);
  }
  std::map<std::string, std::string> keys;
};

RedisReply visit(MapRedis& redis, const std::string& request_id) {
  const std::shared_ptr<const ScriptRegistry> registry = toy_scripts();  // owns the script while it runs
  const RedisScript* script = registry->by_name(kVisitScript);
  return script->run(redis, {kCounterKey, seen_key(request_id)}, {request_id});
}

TEST(ToyScripts, ARequestIdIsCountedOnce) {
  MapRedis redis;
  EXPECT_EQ(visit(redis, "a").integer, 1);
  EXPECT_EQ(visit(redis, "a").integer, 1);  // the retry answers the count, counts nothing
  EXPECT_EQ(visit(redis, "b").integer, 2);
  EXPECT_EQ(redis.keys[kCounterKey], "2");
  EXPECT_EQ(redis.keys[seen_key("a")], "a");
}

TEST(ToyScripts, ARepeatedIdReadsTheCounterAsLuaTonumberDoes) {
  MapRedis redis;
  redis.keys[seen_key("a")] = "a";
  EXPECT_EQ(visit(redis, "a").integer, 0);  // no counter yet
  for (const auto& [text, count] : std::vector<std::pair<std::string, int64_t>>{{"7", 7}, {" 7 ", 7}, {"1.5", 1}}) {
    redis.keys[kCounterKey] = text;
    EXPECT_EQ(visit(redis, "a").integer, count) << text;
  }
  redis.keys[kCounterKey] = "x";
  EXPECT_TRUE(visit(redis, "a").is_nil());
}

TEST(ToyScripts, TheRegistryHasTheScriptUnderItsSha) {
  const auto registry = toy_scripts();
  EXPECT_EQ(registry->names(), std::vector<std::string>{kVisitScript});
  EXPECT_EQ(registry->by_sha1(registry->sha1_of(kVisitScript))->name, kVisitScript);
}

}  // namespace
}  // namespace fl::toy
