// ComboLock on a direct Redis port inside a simulated world: the seed's explicit 3 s lease runs out
// under a holder that keeps it longer, Redisson's watchdog keeps a lease-less lock alive while its
// process lives, and the lock of a crashed holder expires lockWatchdogTimeout after its last renewal.
#include "impl/gifts/combo_lock.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "impl/gifts/scripts.h"
#include "sim/testing/direct_ports.h"
#include "sim/world.h"

namespace fl::gifts {
namespace {

using likes::testing::DirectRedis;

struct Rig {
  Rig() : world(sim::WorldOptions{.seed = 5}) { node = world.add_node("push"); }
  // Starts a process that takes `key` as `owner`, reports whether it did, and holds it for good.
  sim::Process& holder(ComboLockOptions o, const std::string& owner, bool* taken) {
    sim::Process& p = world.add_process(node, owner, [this, o, owner, taken](sim::Process& self) -> Task<void> {
      auto redis = std::make_shared<DirectRedis>(self, engine, gifts_scripts());
      auto lock = std::make_shared<ComboLock>(self, *redis, o);
      *taken = co_await lock->try_lock("gift:batch:r1:7:rose", owner);
      for (;;) co_await self.clock().sleep_ms(1000);  // keeps redis and lock alive while it lives
    });
    world.start(p);
    return p;
  }
  bool held_at(int64_t at_us) {
    world.after(sim::kEpochUs + at_us - world.now_us(), [] {});  // time passes even with nothing running
    world.run_until(sim::kEpochUs + at_us);
    sim::redis::Session s;
    return engine.execute(s, {"EXISTS", "gift:batch:r1:7:rose"}, world.now_us() / 1000).integer == 1;
  }

  sim::World world;
  sim::redis::Engine engine{sim::redis::EngineOptions{.scripts = gifts_scripts()}};
  uint32_t node = 0;
};

TEST(ComboLock, AnExplicitLeaseRunsOutUnderItsHolder) {
  Rig rig;
  bool taken = false;
  rig.holder(ComboLockOptions{}, "push-1:1:consumer", &taken);
  EXPECT_TRUE(rig.held_at(2'900'000));
  EXPECT_TRUE(taken);
  EXPECT_FALSE(rig.held_at(3'200'000)) << "003:L118's 3 s lease is not renewed";
}

TEST(ComboLock, TheWatchdogRenewsALeaselessLockWhileItsHolderLives) {
  Rig rig;
  bool taken = false;
  sim::Process& p = rig.holder(ComboLockOptions{.watchdog = true}, "push-1:1:consumer", &taken);
  EXPECT_TRUE(rig.held_at(95'000'000)) << "renewed every 10 s past its 30 s lease";
  EXPECT_TRUE(taken);
  rig.world.crash(p, "test");
  EXPECT_TRUE(rig.held_at(110'000'000)) << "the last renewal (90 s) gave it 30 s";
  EXPECT_FALSE(rig.held_at(121'000'000)) << "a crashed holder's lock expires";
}

TEST(ComboLock, UnlockByANonHolderThrowsAndTheLuaLockNeverDoes) {
  Rig rig;
  bool taken = false;
  rig.holder(ComboLockOptions{}, "push-1:1:consumer", &taken);
  bool other = true, unlocked = true, lua_unlocked = false;
  sim::Process& p = rig.world.add_process(rig.node, "push-2", [&](sim::Process& self) -> Task<void> {
    DirectRedis redis(self, rig.engine, gifts_scripts());
    ComboLock rlock(self, redis, ComboLockOptions{});
    other = co_await rlock.try_lock("gift:batch:r1:7:rose", "push-2:1:consumer");
    unlocked = co_await rlock.unlock("gift:batch:r1:7:rose", "push-2:1:consumer");
    ComboLock lua(self, redis, ComboLockOptions{.lua = true});
    lua_unlocked = co_await lua.unlock("gift:batch:r1:7:rose", "push-2:1:consumer");
  });
  rig.world.after(500'000, [&] { rig.world.start(p); });
  EXPECT_TRUE(rig.held_at(1'000'000));
  EXPECT_TRUE(taken);
  EXPECT_FALSE(other) << "held by push-1: the 100 ms wait runs out";
  EXPECT_FALSE(unlocked) << "IllegalMonitorStateException";
  EXPECT_TRUE(lua_unlocked);
}

}  // namespace
}  // namespace fl::gifts
