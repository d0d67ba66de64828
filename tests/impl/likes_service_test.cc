// LikeService on direct ports (an in-process Redis engine, in-memory SQLite) inside a simulated
// world: the spec defects the seed's code has, and that hardened does not.
#include "impl/likes/service.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "impl/likes/schema.h"
#include "impl/likes/scripts.h"
#include "sim/testing/direct_ports.h"
#include "sim/world.h"

namespace fl::likes {
namespace {

using testing::DirectRedis;
using testing::DirectSql;
using testing::MemoryDb;

struct Rig {
  explicit Rig(LikesFixes fixes) : world(sim::WorldOptions{.seed = 3}) {
    config.fixes = fixes;
    config.asset_count = 2;
    for (const std::string& s : schema_statements(/*request_ids=*/true)) {
      EXPECT_TRUE(db.exec().execute(SqlStatement(s)).ok()) << s;
    }
    for (const SqlStatement& s : seed_asset_statements(config.asset_count)) { EXPECT_TRUE(db.exec().execute(s).ok()); }
    node = world.add_node("n");
  }
  // Runs `body` in a fresh process with its own service and drives the world until quiet.
  void run(std::function<Task<void>(sim::Process&, std::shared_ptr<LikeService>)> body, int64_t for_us = 10'000'000) {
    sim::Process& p =
        world.add_process(node, "p" + std::to_string(next++), [this, body](sim::Process& self) -> Task<void> {
          redis = std::make_unique<DirectRedis>(self, engine, scripts);
          sql = std::make_unique<DirectSql>(self, db);
          auto svc = std::make_shared<LikeService>(self, *redis, *sql, config);
          co_await body(self, svc);
        });
    world.start(p);
    world.run_until(world.now_us() + for_us);
  }
  int64_t db_int(const std::string& q) {
    SqlResult r = db.exec().execute(SqlStatement(q));
    EXPECT_TRUE(r.ok()) << r.describe();
    return r.scalar()->as_int();
  }
  std::string redis_get(const std::string& key) {
    sim::redis::Session s;
    RedisReply r = engine.execute(s, {"GET", key}, world.now_us() / 1000);
    return r.kind == RedisReply::Kind::kBulk ? r.str : "(nil)";
  }

  sim::World world;
  std::shared_ptr<const ScriptRegistry> scripts = likes_scripts();
  sim::redis::Engine engine{sim::redis::EngineOptions{.scripts = likes_scripts()}};
  MemoryDb db;
  LikesConfig config;
  uint32_t node = 0;
  int next = 0;
  std::unique_ptr<DirectRedis> redis;
  std::unique_ptr<DirectSql> sql;
};

Task<void> concurrent_likes(sim::Process& p, std::shared_ptr<LikeService> svc, std::vector<ReplyStatus>* out) {
  struct Join {
    int left = 2;
  };
  auto join = std::make_shared<Join>();
  for (int i = 0; i < 2; ++i) {
    p.spawn("tap",
            [](std::shared_ptr<LikeService> s, std::vector<ReplyStatus>* o, std::shared_ptr<Join> j,
               uint64_t req) -> Task<void> {
              LikeReply r = co_await s->like(1, 7, 1, req);
              o->push_back(r.status);
              --j->left;
            }(svc, out, join, 100 + i));
  }
  co_await p.clock().sleep_ms(100);
}

TEST(LikeServiceTest, SpecDoubleTapCountsTwiceWithOneRow) {
  Rig rig(LikesFixes::spec());
  std::vector<ReplyStatus> replies;
  rig.run([&](sim::Process& p, std::shared_ptr<LikeService> svc) { return concurrent_likes(p, svc, &replies); });
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0], ReplyStatus::kOk);
  EXPECT_EQ(replies[1], ReplyStatus::kOk);                                 // both passed the EXISTS check
  EXPECT_EQ(rig.redis_get(count_key(1)), "2");                             // LIKE-2 broken
  EXPECT_EQ(rig.db_int("SELECT COUNT(*) FROM asset_likes"), 1);            // unique index held
  EXPECT_EQ(rig.db_int("SELECT like_count FROM assets WHERE id = 1"), 2);  // LIKE-3 broken
}

// LK-FILL-LEASE: an apply writes a value only over the version key a read's fill left (with none it
// drops the value); the hardened tests below fill the keys they check first, as a reader would.
void fill_cache(Rig& rig, int64_t asset, int64_t user) {
  rig.run([asset, user](sim::Process&, std::shared_ptr<LikeService> svc) -> Task<void> {
    (void)co_await svc->count(asset);
    (void)co_await svc->state(asset, user);
  });
}

TEST(LikeServiceTest, HardenedDoubleTapCountsOnce) {
  Rig rig(LikesFixes::hardened(likes_fixes()));
  fill_cache(rig, 1, 7);
  std::vector<ReplyStatus> replies;
  rig.run([&](sim::Process& p, std::shared_ptr<LikeService> svc) { return concurrent_likes(p, svc, &replies); });
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(rig.redis_get(count_key(1)), "1");
  EXPECT_EQ(rig.db_int("SELECT COUNT(*) FROM asset_likes"), 1);
  EXPECT_EQ(rig.db_int("SELECT like_count FROM assets WHERE id = 1"), 1);
  EXPECT_EQ(rig.redis_get(like_key(1, 7)), "1");
}

TEST(LikeServiceTest, SpecCachedZeroBlocksALike) {
  Rig rig(LikesFixes::spec());
  LikeReply state, like;
  rig.run([&](sim::Process&, std::shared_ptr<LikeService> svc) -> Task<void> {
    state = co_await svc->state(1, 5);  // miss -> fill "0"
    like = co_await svc->like(1, 5, 1, 1);
  });
  EXPECT_EQ(state.value, 0);
  EXPECT_EQ(rig.redis_get(like_key(1, 5)), "0");
  EXPECT_EQ(like.status, ReplyStatus::kAlready);  // LIKE-8 broken: "0" EXISTS
  EXPECT_EQ(rig.db_int("SELECT COUNT(*) FROM asset_likes"), 0);
}

TEST(LikeServiceTest, HardenedLikeUnlikeRoundTripKeepsStoresEqual) {
  Rig rig(LikesFixes::hardened(likes_fixes()));
  std::vector<LikeReply> r;
  rig.run([&](sim::Process&, std::shared_ptr<LikeService> svc) -> Task<void> {
    r.push_back(co_await svc->state(1, 5));       // fill "0"
    r.push_back(co_await svc->like(1, 5, 1, 1));  // not blocked by "0"
    r.push_back(co_await svc->like(1, 5, 1, 2));  // already
    r.push_back(co_await svc->count(1));
    r.push_back(co_await svc->unlike(1, 5, 1, 3));
    r.push_back(co_await svc->unlike(1, 5, 1, 4));  // already (not liked)
    r.push_back(co_await svc->state(1, 5));
  });
  ASSERT_EQ(r.size(), 7u);
  EXPECT_EQ(r[1].status, ReplyStatus::kOk);
  EXPECT_EQ(r[2].status, ReplyStatus::kOk);  // idempotent: a repeat is a success
  EXPECT_EQ(r[2].detail, "already liked");
  EXPECT_EQ(r[3].value, 1);
  EXPECT_EQ(r[4].status, ReplyStatus::kOk);
  EXPECT_EQ(r[5].status, ReplyStatus::kOk);
  EXPECT_EQ(r[5].detail, "not liked");
  EXPECT_EQ(r[6].value, 0);
  EXPECT_EQ(rig.db_int("SELECT like_count FROM assets WHERE id = 1"), 0);
  EXPECT_EQ(rig.redis_get(count_key(1)), "0");
  EXPECT_EQ(rig.redis_get(like_key(1, 5)), "0");
}

TEST(LikeServiceTest, SpecUnlikeOnCachedZeroDecrementsBelowZero) {
  Rig rig(LikesFixes::spec());
  LikeReply unlike;
  rig.run([&](sim::Process&, std::shared_ptr<LikeService> svc) -> Task<void> {
    (void)co_await svc->state(1, 5);
    unlike = co_await svc->unlike(1, 5, 1, 1);
  });
  EXPECT_EQ(unlike.status, ReplyStatus::kOk);
  EXPECT_EQ(rig.redis_get(count_key(1)), "-1");                            // LIKE-5, LIKE-11 broken
  EXPECT_EQ(rig.db_int("SELECT like_count FROM assets WHERE id = 1"), 0);  // guarded by >= 1
}

TEST(LikeServiceTest, SpecConsistencyCheckWritesZeroAfterARedisError) {
  Rig rig(LikesFixes::spec());
  rig.config.consistency_threshold = 10;
  ASSERT_TRUE(rig.db.exec().execute(SqlStatement("UPDATE assets SET like_count = 20 WHERE id = 1")).ok());
  rig.run([&](sim::Process&, std::shared_ptr<LikeService> svc) -> Task<void> {
    rig.sql->down = true;  // the DB read fails: dbCount reads as 0
    co_await svc->sync_like_count_from_db(1);
    rig.sql->down = false;
    co_await svc->sync_like_count_from_db(1);  // 20
    rig.sql->down = true;
    co_await svc->check_consistency(1);  // |20 - 0| > 10: writes 0
  });
  EXPECT_EQ(rig.redis_get(count_key(1)), "0");  // LIKE-10 broken
}

TEST(LikeServiceTest, HardenedReconcileRepairsALostCacheAndNeverWritesAfterReadErrors) {
  Rig rig(LikesFixes::hardened(likes_fixes()));
  rig.run([&](sim::Process&, std::shared_ptr<LikeService> svc) -> Task<void> {
    (void)co_await svc->like(1, 5, 1, 1);
    (void)co_await svc->like(1, 6, 1, 2);
  });
  sim::redis::Session s;
  rig.engine.execute(s, {"FLUSHALL"}, rig.world.now_us() / 1000);
  rig.run([&](sim::Process&, std::shared_ptr<LikeService> svc) -> Task<void> {
    rig.sql->down = true;
    co_await svc->reconcile();
    rig.sql->down = false;
  });
  EXPECT_EQ(rig.redis_get(count_key(1)), "(nil)");
  rig.run([&](sim::Process&, std::shared_ptr<LikeService> svc) -> Task<void> { co_await svc->reconcile(); });
  EXPECT_EQ(rig.redis_get(count_key(1)), "2");
  EXPECT_EQ(rig.redis_get(like_key(1, 5)), "1");
  EXPECT_EQ(rig.redis_get(count_key(2)), "0");
}

// Group commit (LIKE-6, LIKE-12): writes waiting while a batch is in the DB share the next
// transaction; every reply still follows the commit, and stores agree afterwards.
TEST(LikeServiceTest, HardenedGroupCommitSharesOneTransactionPerBatch) {
  Rig rig(LikesFixes::hardened(likes_fixes()));
  fill_cache(rig, 1, 100);
  std::vector<LikeReply> replies;
  rig.run([&](sim::Process& p, std::shared_ptr<LikeService> svc) -> Task<void> {
    for (int i = 0; i < 10; ++i) {
      p.spawn("write", [](std::shared_ptr<LikeService> s, std::vector<LikeReply>* out, int64_t user) -> Task<void> {
        out->push_back(co_await s->like(1, user, 1, static_cast<uint64_t>(user)));
      }(svc, &replies, 100 + i));
    }
    co_await p.clock().sleep_ms(100);
  });
  ASSERT_EQ(replies.size(), 10u);
  for (const LikeReply& r : replies) EXPECT_EQ(r.status, ReplyStatus::kOk) << r.detail;
  EXPECT_LE(rig.sql->transactions, 2);  // the first alone (or with all), the rest in one batch
  EXPECT_EQ(rig.db_int("SELECT COUNT(*) FROM asset_likes"), 10);
  EXPECT_EQ(rig.db_int("SELECT like_count FROM assets WHERE id = 1"), 10);
  EXPECT_EQ(rig.redis_get(count_key(1)), "10");
}

// A repeated like and an unlike of the same pair in one batch: the repeat changes nothing, the
// unlike wins, and the cache ends with the DB's state (LIKE-8). Each write's cache values are
// read at its own place in the batch; before group commit a repeat re-read them afterwards and
// wrote "liked" with the later unlike's version (swarm-hardened seed 424).
TEST(LikeServiceTest, HardenedRepeatAndOppositeInOneBatchLeaveTheCacheRight) {
  Rig rig(LikesFixes::hardened(likes_fixes()));
  fill_cache(rig, 1, 5);
  std::map<uint64_t, LikeReply> replies;  // by request id
  rig.run([&](sim::Process& p, std::shared_ptr<LikeService> svc) -> Task<void> {
    (void)co_await svc->like(1, 5, 1, 1);
    const int before = rig.sql->transactions;
    auto write = [](std::shared_ptr<LikeService> s, std::map<uint64_t, LikeReply>* out, bool like,
                    uint64_t req) -> Task<void> {
      (*out)[req] = like ? co_await s->like(1, 5, 1, req) : co_await s->unlike(1, 5, 1, req);
    };
    auto other = [](std::shared_ptr<LikeService> s, std::map<uint64_t, LikeReply>* out) -> Task<void> {
      (*out)[2] = co_await s->like(2, 5, 1, 2);
    };
    p.spawn("other", other(svc, &replies));  // keeps the committer busy: the next two share a
    co_await p.clock().sleep_us(1);          // batch, the repeat first
    p.spawn("repeat", write(svc, &replies, true, 3));
    co_await p.clock().sleep_us(1);
    p.spawn("unlike", write(svc, &replies, false, 4));
    co_await p.clock().sleep_ms(100);
    EXPECT_EQ(rig.sql->transactions - before, 2);
  });
  ASSERT_EQ(replies.size(), 3u);
  for (const auto& [req, r] : replies) EXPECT_EQ(r.status, ReplyStatus::kOk) << req << ": " << r.detail;
  EXPECT_EQ(replies[3].detail, "already liked");
  EXPECT_EQ(replies[4].detail, "unliked");
  EXPECT_EQ(rig.db_int("SELECT COUNT(*) FROM asset_likes WHERE asset_id = 1"), 0);
  EXPECT_EQ(rig.db_int("SELECT like_count FROM assets WHERE id = 1"), 0);
  EXPECT_EQ(rig.redis_get(count_key(1)), "0");
  EXPECT_EQ(rig.redis_get(like_key(1, 5)), "0");
}

// The network may deliver a request twice. A copy that arrives while its original is queued
// joins it (one write); a copy of a request answered "failed" is answered "failed" again and
// never applied, since "failed" promised the client nothing happened (LIKE-6/7/11; found by
// swarm-hardened seeds 289, 564, 797, 1254, 1713 once batches made the copy land later).
// A retry of a request (same id; the app retries after a timeout) never writes twice: with
// LK-REQUEST-IDS the id applies once (one row, one count) and the later copy is answered ok while
// the pair is as it asked (indeterminate after another write); a write the DB could not take is
// indeterminate and its retry applies it once.
TEST(LikeServiceTest, HardenedRetriedRequestsAreIdempotent) {
  Rig rig(LikesFixes::hardened(likes_fixes()));
  std::vector<LikeReply> replies;
  LikeReply failed, retry_of_failed;
  rig.run([&](sim::Process& p, std::shared_ptr<LikeService> svc) -> Task<void> {
    auto write = [](std::shared_ptr<LikeService> s, std::vector<LikeReply>* out, int64_t asset,
                    uint64_t req) -> Task<void> { out->push_back(co_await s->like(asset, 5, 1, req)); };
    p.spawn("other", write(svc, &replies, 2, 8));  // keeps the committer busy
    co_await p.clock().sleep_us(1);
    p.spawn("original", write(svc, &replies, 1, 9));
    co_await p.clock().sleep_us(1);
    p.spawn("retry", write(svc, &replies, 1, 9));
    co_await p.clock().sleep_ms(100);
    rig.sql->down = true;
    failed = co_await svc->like(1, 6, 1, 10);
    rig.sql->down = false;
    retry_of_failed = co_await svc->like(1, 6, 1, 10);
  });
  ASSERT_EQ(replies.size(), 3u);
  // LK-REQUEST-IDS: the id applies once; the copy that came second finds the pair liked, as it
  // asked, and is answered ok as a like of a liked pair, never applied twice.
  for (const LikeReply& r : replies) EXPECT_EQ(r.status, ReplyStatus::kOk) << r.detail;
  // A write the DB could not take is indeterminate (a copy may still apply it), and its retry applies.
  EXPECT_EQ(failed.status, ReplyStatus::kUnknown);
  EXPECT_EQ(retry_of_failed.status, ReplyStatus::kOk);
  EXPECT_EQ(rig.db_int("SELECT COUNT(*) FROM asset_likes WHERE asset_id = 1"), 2);
  EXPECT_EQ(rig.db_int("SELECT like_count FROM assets WHERE id = 1"), 2);
}

// A write the DB refuses does not fail the others in its batch.
TEST(LikeServiceTest, HardenedBatchIsolatesAWriteOfAMissingAsset) {
  Rig rig(LikesFixes::hardened(likes_fixes()));
  std::vector<LikeReply> replies(3);
  rig.run([&](sim::Process& p, std::shared_ptr<LikeService> svc) -> Task<void> {
    auto write = [](std::shared_ptr<LikeService> s, LikeReply* out, int64_t asset, uint64_t req) -> Task<void> {
      *out = co_await s->like(asset, 9, 1, req);
    };
    p.spawn("a", write(svc, &replies[0], 1, 1));
    p.spawn("missing", write(svc, &replies[1], 99, 2));
    p.spawn("b", write(svc, &replies[2], 2, 3));
    co_await p.clock().sleep_ms(100);
  });
  EXPECT_EQ(replies[0].status, ReplyStatus::kOk);
  EXPECT_EQ(replies[1].status, ReplyStatus::kFailed);
  EXPECT_EQ(replies[2].status, ReplyStatus::kOk);
  EXPECT_EQ(rig.db_int("SELECT COUNT(*) FROM asset_likes"), 2);
  EXPECT_EQ(rig.db_int("SELECT SUM(like_count) FROM assets"), 2);
}

TEST(LikeScriptsTest, PutRejectsOlderVersions) {
  sim::redis::Engine engine{sim::redis::EngineOptions{.scripts = likes_scripts()}};
  sim::redis::Session s;
  auto reg = likes_scripts();
  const std::string lua = reg->by_name(kPutScript)->lua;
  auto put = [&](const std::string& v, int ver) {
    return engine.execute(s, {"EVAL", lua, "2", "k", "kv", v, std::to_string(ver), "0"}, 1000).integer;
  };
  EXPECT_EQ(put("5", 3), 1);
  EXPECT_EQ(put("4", 2), 0);
  EXPECT_EQ(put("4", 3), 0);
  EXPECT_EQ(put("6", 4), 1);
  EXPECT_EQ(engine.execute(s, {"GET", "k"}, 1000).str, "6");
  engine.execute(s, {"DEL", "k"}, 1000);
  EXPECT_EQ(put("6", 4), 1);  // value gone, same version: refill allowed
  EXPECT_EQ(put("1", 3), 0);
}

// swarm-hardened seed 12184 (LIKE-8): the value and its version expired together, and a reconcile
// pass that had read the state before an acknowledged unlike wrote "1" back. The version key now
// outlives its value, so the older put stays refused after the value expired.
TEST(LikeScriptsTest, AnOlderPutStaysRefusedAfterTheValueExpired) {
  sim::redis::Engine engine{sim::redis::EngineOptions{.scripts = likes_scripts()}};
  sim::redis::Session s;
  const std::string lua = likes_scripts()->by_name(kPutScript)->lua;
  auto put = [&](const std::string& v, int ver, int64_t now_ms) {
    return engine.execute(s, {"EVAL", lua, "2", "k", "kv", v, std::to_string(ver), "3000"}, now_ms).integer;
  };
  EXPECT_EQ(put("0", 5, 1000), 1);                              // the unlike's state, TTL 3 s
  EXPECT_TRUE(engine.execute(s, {"GET", "k"}, 4500).is_nil());  // expired
  EXPECT_EQ(put("1", 4, 4500), 0);                              // the stale repair: refused
  EXPECT_EQ(put("0", 5, 4500), 1);                              // the current version may refill
}

// LK-FILL-LEASE: a fill writes only while its lease holds; a like/unlike's apply, a later lease, an
// eviction of the lease each refuse it, whether or not the version key survived
// (swarm-hardened-eviction seed 1: the value and its version were evicted, and a fill that read
// the DB before the like wrote the old state).
TEST(LikeScriptsTest, AFillNeedsItsLease) {
  sim::redis::Engine engine{sim::redis::EngineOptions{.scripts = likes_scripts()}};
  sim::redis::Session s;
  auto reg = likes_scripts();
  auto eval = [&](const char* script, std::vector<std::string> keys, std::vector<std::string> args) {
    std::vector<std::string> argv{"EVAL", reg->by_name(script)->lua, std::to_string(keys.size())};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return engine.execute(s, argv, 1000);
  };
  auto fill = [&](const std::string& value, int ver, const std::string& token) {
    return eval(kFillScript, {"v", "ver", "lease"}, {value, std::to_string(ver), "3000", token}).integer;
  };
  EXPECT_EQ(eval(kLeaseScript, {"lease"}, {"a", "10000"}).integer, 1);
  EXPECT_EQ(fill("0", 5, "b"), 0);  // not its lease
  EXPECT_EQ(fill("0", 5, "a"), 1);
  EXPECT_EQ(fill("0", 5, "a"), 0);  // consumed
  eval(kLeaseScript, {"lease"}, {"c", "10000"});
  // The like commits after the fill read the DB; its apply deletes the lease...
  RedisReply applied =
      eval(kApplyScript, {"v", "ver", "cv", "cver", "lease", "clease"}, {"1", "9", "3000", "1", "0", "9"});
  ASSERT_EQ(applied.elements.size(), 2u);
  // ... then Redis evicts the value and its version: the stale fill still finds no lease.
  engine.execute(s, {"DEL", "v", "ver"}, 1000);
  EXPECT_EQ(fill("0", 5, "c"), 0);
  EXPECT_TRUE(engine.execute(s, {"GET", "v"}, 1000).is_nil());
  // An evicted lease refuses too.
  eval(kLeaseScript, {"lease"}, {"d", "10000"});
  engine.execute(s, {"DEL", "lease"}, 1000);
  EXPECT_EQ(fill("1", 9, "d"), 0);
}

// LK-FILL-LEASE, the applies: with the floor of a newer value evicted, a delayed apply of an older
// version drops the value instead of writing it (swarm-hardened-eviction seed 161: an unlike's
// apply held 2.2 s by a clog wrote count 7 over 9 after Redis evicted the count's version key).
TEST(LikeScriptsTest, AnApplyWithoutAFloorDropsTheValue) {
  sim::redis::Engine engine{sim::redis::EngineOptions{.scripts = likes_scripts()}};
  sim::redis::Session s;
  const std::string lua = likes_scripts()->by_name(kApplyScript)->lua;
  auto apply = [&](const std::string& state, const std::string& count, int ver) {
    RedisReply r = engine.execute(s,
                                  {"EVAL", lua, "6", "v", "ver", "cv", "cver", "lease", "clease", state,
                                   std::to_string(ver), "3000", count, "0", std::to_string(ver)},
                                  1000);
    EXPECT_EQ(r.elements.size(), 2u);
    return r.elements.size() == 2 ? r.elements[0].integer + r.elements[1].integer : -1;
  };
  engine.execute(s, {"SET", "ver", "5"}, 1000);
  engine.execute(s, {"SET", "cver", "5"}, 1000);
  EXPECT_EQ(apply("1", "9", 9), 2);  // over a floor it beats: written
  EXPECT_EQ(engine.execute(s, {"GET", "cv"}, 1000).str, "9");
  engine.execute(s, {"DEL", "cver", "ver"}, 1000);  // Redis evicts the floors
  EXPECT_EQ(apply("0", "7", 7), 0);                 // the delayed older apply
  EXPECT_TRUE(engine.execute(s, {"GET", "cv"}, 1000).is_nil());
  EXPECT_TRUE(engine.execute(s, {"GET", "v"}, 1000).is_nil());
}

}  // namespace
}  // namespace fl::likes
