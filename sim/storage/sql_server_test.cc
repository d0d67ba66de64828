#include "sim/storage/sql_server.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/storage/sql_sim_testing.h"

namespace fl::sim::storage {
namespace {

SqlServerOptions server_options(JournalMode mode = JournalMode::kWal, Synchronous sync = Synchronous::kFull) {
  SqlServerOptions o;
  o.journal_mode = mode;
  o.synchronous = sync;
  o.schema = {
      "CREATE TABLE IF NOT EXISTS purchase(id INTEGER PRIMARY KEY, user TEXT NOT NULL, sku TEXT NOT NULL, "
      "price REAL, receipt BLOB, UNIQUE(user, sku))",
      "CREATE TABLE IF NOT EXISTS counter(name TEXT PRIMARY KEY, n INTEGER NOT NULL)",
      "INSERT OR IGNORE INTO counter VALUES('c', 0)"};
  return o;
}

const Operation* find_op(World& w, std::string_view needle) {
  for (const Operation& op : w.history().operations()) {
    if (op.args.find(needle) != std::string::npos) return &op;
  }
  return nullptr;
}

TEST(SqlServer, ExecutesStatementsWithTypedValuesAndConstraintErrorsAsValues) {
  SqlSim sim(1, server_options());
  std::vector<SqlResult> results;
  sim.client("app", [&](Process& self, Sql& sql) -> Task<void> {
    co_await self.clock().sleep_ms(100);  // the server has booted
    results.push_back(co_await sql.exec("INSERT INTO purchase(user, sku, price, receipt) VALUES(?, ?, ?, ?)", "u1",
                                        "gift", 9.5, SqlValue::blob(std::string("\x00\x01", 2))));
    results.push_back(co_await sql.exec("INSERT INTO purchase(user, sku) VALUES(?, ?)", "u1", "gift"));
    results.push_back(co_await sql.query("SELECT id, user, price, receipt, NULL AS missing FROM purchase"));
    std::vector<SqlStatement> txn;  // built outside the co_await expression (g++ 12, see sql.h)
    txn.push_back(sql_statement("UPDATE counter SET n = n + 1 WHERE name = ?", "c"));
    txn.back().expect = SqlExpect::kChanged;
    txn.push_back(sql_statement("INSERT INTO purchase(user, sku) VALUES('u2', 'gift') RETURNING id"));
    results.push_back(co_await sql.transaction(std::move(txn)));
    std::vector<SqlStatement> cas;
    cas.push_back(sql_statement("UPDATE counter SET n = 7 WHERE n = 99"));
    cas.back().expect = SqlExpect::kChanged;
    results.push_back(co_await sql.transaction(std::move(cas)));
  });
  sim.world().run_until(kEpochUs + 10'000'000);
  ASSERT_EQ(results.size(), 5u);
  EXPECT_TRUE(results[0].ok()) << results[0].describe();
  EXPECT_EQ(results[0].changes(), 1);
  EXPECT_EQ(results[1].status, SqlStatus::kConstraint) << results[1].describe();
  ASSERT_TRUE(results[2].ok()) << results[2].describe();
  ASSERT_EQ(results[2].rows().size(), 1u);
  const SqlRow& row = results[2].rows()[0];
  EXPECT_EQ(results[2].columns(), (std::vector<std::string>{"id", "user", "price", "receipt", "missing"}));
  EXPECT_EQ(row[0].type(), SqlValue::Type::kInteger);
  EXPECT_EQ(row[1], SqlValue("u1"));
  EXPECT_EQ(row[2].as_real(), 9.5);
  EXPECT_EQ(row[3], SqlValue::blob(std::string("\x00\x01", 2)));
  EXPECT_TRUE(row[4].is_null());
  ASSERT_TRUE(results[3].ok()) << results[3].describe();
  EXPECT_EQ(results[3].sets.size(), 2u);
  EXPECT_EQ(results[3].rows()[0][0], SqlValue(2));  // RETURNING id: the failed insert used no rowid
  EXPECT_EQ(results[4].status, SqlStatus::kConditionFailed);
  // The history: ok, fail (constraint), ok, ok, fail (condition).
  const auto& ops = sim.world().history().operations();
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_EQ(ops[0].outcome, Outcome::kOk);
  EXPECT_EQ(ops[1].outcome, Outcome::kFail);
  EXPECT_EQ(ops[4].outcome, Outcome::kFail);
}

TEST(SqlServer, CommitWhoseReplyIsLostIsIndeterminateNeverFailed) {
  SimVfsOptions disk;
  disk.sync_cost_us = 500'000;  // the reply waits half a second for the disk
  SqlSim sim(2, server_options(JournalMode::kWal, Synchronous::kFull), disk);
  SqlResult first, later;
  sim.client(
      "app",
      [&](Process& self, Sql& sql) -> Task<void> {
        while (!(co_await sql.query("SELECT 1")).ok()) co_await self.clock().sleep_ms(100);  // booted
        // The request arrives within ~1 ms and is committed (synced) at once; its reply waits 0.5 s
        // for the simulated disk. The node loses power in between.
        sim.world().after(200'000, [&] { sim.world().crash(sim.db(), "power loss"); });
        sim.world().after(300'000, [&] { sim.world().restart(sim.db()); });
        first = co_await sql.exec("INSERT INTO purchase(user, sku) VALUES('u9', 'lost-reply')");
        for (;;) {
          later = co_await sql.query("SELECT count(*) FROM purchase WHERE user = 'u9'");
          if (later.ok()) break;
          co_await self.clock().sleep_ms(100);
        }
      },
      /*timeout_us=*/2'000'000);
  sim.world().run_until(kEpochUs + 20'000'000);
  EXPECT_EQ(first.status, SqlStatus::kIndeterminate) << first.describe();
  ASSERT_TRUE(later.ok()) << later.describe();
  EXPECT_EQ(later.scalar()->as_int(), 1);  // it did commit
  const Operation* op = find_op(sim.world(), "lost-reply");
  ASSERT_NE(op, nullptr);
  EXPECT_TRUE(op->completed());
  EXPECT_EQ(op->outcome, Outcome::kInfo);
}

TEST(SqlServer, InjectedIoErrorsSurfaceAsIoError) {
  SqlSim sim(3, server_options(JournalMode::kDelete, Synchronous::kFull));
  std::vector<SqlResult> results;
  sim.client("app", [&](Process& self, Sql& sql) -> Task<void> {
    co_await self.clock().sleep_ms(100);
    sim.vfs().fail_next(SimIoOp::kSync);
    results.push_back(co_await sql.exec("INSERT INTO purchase(user, sku) VALUES('a', 'sync-fails')"));
    sim.vfs().fail_next(SimIoOp::kWrite);
    std::vector<SqlStatement> txn;
    txn.push_back(sql_statement("INSERT INTO purchase(user, sku) VALUES('b', 'write-fails')"));
    results.push_back(co_await sql.transaction(std::move(txn)));
    results.push_back(co_await sql.exec("INSERT INTO purchase(user, sku) VALUES('c', 'fine')"));
  });
  sim.world().run_until(kEpochUs + 10'000'000);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].status, SqlStatus::kIoError) << results[0].describe();
  EXPECT_EQ(results[1].status, SqlStatus::kIoError) << results[1].describe();
  EXPECT_TRUE(results[2].ok()) << results[2].describe();
  EXPECT_EQ(find_op(sim.world(), "sync-fails")->outcome, Outcome::kInfo);  // maybe applied
}

TEST(SqlServer, UnavailableWhenTheDatabaseIsDown) {
  SqlSim sim(4, server_options());
  SqlResult r;
  sim.client("app", [&](Process& self, Sql& sql) -> Task<void> {
    co_await self.clock().sleep_ms(100);
    r = co_await sql.exec("INSERT INTO purchase(user, sku) VALUES('a', 'down')");
  });
  sim.world().at(kEpochUs + 50'000, [&] { sim.world().crash(sim.db(), "down"); });
  sim.world().run_until(kEpochUs + 10'000'000);
  EXPECT_EQ(r.status, SqlStatus::kUnavailable) << r.describe();
  EXPECT_EQ(find_op(sim.world(), "down")->outcome, Outcome::kFail);
}

TEST(SqlServer, DuplicatedRequestsExecuteOnce) {
  SqlSim sim(5, server_options());
  LinkOptions link;
  link.fifo = false;
  link.duplicate_probability = 1.0;
  sim.world().network().set_default_link(link);
  SqlResult r;
  sim.client("app", [&](Process& self, Sql& sql) -> Task<void> {
    co_await self.clock().sleep_ms(100);
    for (int i = 0; i < 5; ++i) (void)co_await sql.exec("UPDATE counter SET n = n + 1");
    r = co_await sql.query("SELECT n FROM counter");
  });
  sim.world().run_until(kEpochUs + 10'000'000);
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.scalar()->as_int(), 5);
  EXPECT_GT(sim.world().network().stats().duplicated, 0u);
}

TEST(SqlServer, SyncTimeIsChargedAsLatency) {
  SimVfsOptions disk;
  disk.sync_cost_us = 10'000;
  SqlSim sim(6, server_options(JournalMode::kWal, Synchronous::kFull), disk);
  int64_t write_us = 0, read_us = 0;
  sim.client("app", [&](Process& self, Sql& sql) -> Task<void> {
    co_await self.clock().sleep_ms(100);
    int64_t t0 = self.clock().now_us();
    (void)co_await sql.exec("INSERT INTO purchase(user, sku) VALUES('a', 'b')");
    write_us = self.clock().now_us() - t0;
    t0 = self.clock().now_us();
    (void)co_await sql.query("SELECT * FROM purchase");
    read_us = self.clock().now_us() - t0;
  });
  sim.world().run_until(kEpochUs + 10'000'000);
  EXPECT_GE(write_us, 10'000);  // at least one WAL sync
  EXPECT_LT(read_us, 10'000);   // reads do not sync
  EXPECT_GT(read_us, 0);
}

uint64_t run_scenario(uint64_t seed, uint64_t* trace_fp) {
  SimVfsOptions disk;
  disk.torn_writes = true;
  disk.sync_error_probability = 0.05;
  SqlSim sim(seed, server_options(JournalMode::kWal, Synchronous::kNormal), disk);
  sim.client(
      "app",
      [&](Process& self, Sql& sql) -> Task<void> {
        for (int i = 0; i < 60; ++i) {
          (void)co_await sql.exec("INSERT INTO purchase(user, sku, receipt) VALUES(?, ?, randomblob(8))",
                                  "u" + std::to_string(i % 7), "s" + std::to_string(i));
          co_await self.clock().sleep_us(static_cast<int64_t>(self.random_u64() % 3000));
        }
      },
      200'000);
  sim.world().at(kEpochUs + 40'000, [&] { sim.world().crash(sim.db(), "crash"); });
  sim.world().at(kEpochUs + 60'000, [&] { sim.world().restart(sim.db()); });
  sim.world().run_until(kEpochUs + 30'000'000);
  *trace_fp = sim.world().trace().fingerprint();
  sim.world().crash(sim.db(), "end");
  return sim.vfs().durable_fingerprint();
}

TEST(SqlServer, SameSeedSameDatabaseBytes) {
  uint64_t t1 = 0, t2 = 0, t3 = 0;
  const uint64_t a = run_scenario(11, &t1);
  const uint64_t b = run_scenario(11, &t2);
  const uint64_t c = run_scenario(12, &t3);
  EXPECT_EQ(a, b);
  EXPECT_EQ(t1, t2);
  EXPECT_NE(a, c);
}

// A stream gets the records a log would keep, numbered the same across a crash and restart of the
// DB process, and leaves the world's trace as the log does.
TEST(SqlServer, AStreamSeesWhatALogKeeps) {
  auto run = [](bool stream, std::vector<std::pair<uint64_t, std::string>>* seen) {
    SqlServerOptions o = server_options();
    auto log = std::make_shared<SqlCommitLog>();
    if (stream) {
      o.commit_stream = std::make_shared<SqlCommitStream>();
      o.commit_stream->consume = [seen](const SqlCommitRecord& r) {
        seen->emplace_back(r.seq, r.client + " " + r.statements()[0].sql + " " + r.result->describe());
      };
    } else {
      o.commit_log = log;
    }
    SqlSim sim(5, o);
    sim.client("app", [](Process& self, Sql& sql) -> Task<void> {
      co_await self.clock().sleep_ms(100);
      for (int i = 0; i < 6; ++i) {
        co_await sql.exec("INSERT INTO purchase(user, sku) VALUES(?, 'gift')", "u" + std::to_string(i));
        co_await self.clock().sleep_ms(100);
      }
    });
    sim.world().at(kEpochUs + 350'000, [&] { sim.world().crash(sim.db(), "crash"); });
    sim.world().at(kEpochUs + 400'000, [&] { sim.world().restart(sim.db()); });
    sim.world().run_until(kEpochUs + 5'000'000);
    for (const SqlCommitRecord& r : *log) {
      seen->emplace_back(r.seq, r.client + " " + r.statements()[0].sql + " " + r.result->describe());
    }
    return sim.world().trace().fingerprint();
  };
  std::vector<std::pair<uint64_t, std::string>> from_log, from_stream;
  const uint64_t log_fingerprint = run(false, &from_log);
  const uint64_t stream_fingerprint = run(true, &from_stream);
  ASSERT_GE(from_log.size(), 5u);
  EXPECT_EQ(from_stream, from_log);
  EXPECT_EQ(from_stream.back().first, from_stream.size());  // seq numbers every record, restart or not
  EXPECT_EQ(stream_fingerprint, log_fingerprint);
}

}  // namespace
}  // namespace fl::sim::storage
