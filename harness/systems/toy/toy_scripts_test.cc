// toy_visit (impl/toy/scripts.h) run by the simulated Redis's Lua, as EVAL runs it: a request id
// is counted once, however often it comes. (The differential suite runs the same text on a real
// redis-server.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "impl/toy/scripts.h"
#include "sim/redis/engine.h"

namespace fl::toy {
namespace {

class ToyScripts : public ::testing::Test {
 protected:
  RedisReply visit(const std::string& request_id) {
    const RedisScript* script = registry->by_name(kVisitScript);
    return engine.execute(session, {"EVAL", script->lua, "2", kCounterKey, seen_key(request_id), request_id}, 0);
  }
  RedisReply run(std::vector<std::string> argv) { return engine.execute(session, argv, 0); }

  std::shared_ptr<const ScriptRegistry> registry = toy_scripts();
  sim::redis::Engine engine;
  sim::redis::Session session;
};

TEST_F(ToyScripts, ARequestIdIsCountedOnce) {
  EXPECT_EQ(visit("a").integer, 1);
  EXPECT_EQ(visit("a").integer, 1);  // the retry answers the count, counts nothing
  EXPECT_EQ(visit("b").integer, 2);
  EXPECT_EQ(run({"GET", kCounterKey}).str, "2");
  EXPECT_EQ(run({"GET", seen_key("a")}).str, "a");
}

TEST_F(ToyScripts, ARepeatedIdReadsTheCounterAsLuaTonumberDoes) {
  run({"SET", seen_key("a"), "a"});
  EXPECT_EQ(visit("a").integer, 0);  // no counter yet
  for (const auto& [text, count] : std::vector<std::pair<std::string, int64_t>>{{"7", 7}, {" 7 ", 7}, {"1.5", 1}}) {
    run({"SET", kCounterKey, text});
    EXPECT_EQ(visit("a").integer, count) << text;
  }
  run({"SET", kCounterKey, "x"});
  EXPECT_TRUE(visit("a").is_nil());
}

TEST(ToyScriptsRegistry, TheRegistryHasTheScriptUnderItsSha) {
  const auto registry = toy_scripts();
  EXPECT_EQ(registry->names(), std::vector<std::string>{kVisitScript});
  EXPECT_EQ(registry->by_sha1(registry->sha1_of(kVisitScript))->name, kVisitScript);
}

}  // namespace
}  // namespace fl::toy
