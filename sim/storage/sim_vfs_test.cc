#include "sim/storage/sim_vfs.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/storage/sqlite_exec.h"

namespace fl::sim::storage {
namespace {

constexpr int64_t kNowUs = 1'700'000'000'000'000;

struct Db {
  sqlite3* db = nullptr;
  std::unique_ptr<SqliteExecutor> exec;
  Db(SimVfs& vfs, const std::string& pragmas, const char* file = "test.db") {
    const int rc = sqlite3_open_v2(file, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs.vfs_name());
    EXPECT_EQ(rc, SQLITE_OK) << sqlite3_errmsg(db);
    exec = std::make_unique<SqliteExecutor>(db);
    if (!pragmas.empty()) {
      SqlResult r = exec->exec_script(pragmas);
      EXPECT_TRUE(r.ok()) << r.describe();
    }
  }
  ~Db() { close(); }
  void close() {
    if (db == nullptr) return;
    exec.reset();
    sqlite3_close_v2(db);
    db = nullptr;
  }
  int64_t count() {
    SqlResult r = exec->execute({"SELECT count(*) FROM t"});
    EXPECT_TRUE(r.ok()) << r.describe();
    return r.ok() ? r.scalar()->as_int() : -1;
  }
};

std::unique_ptr<SimVfs> make_vfs(uint64_t seed = 1, SimVfsOptions o = {}) {
  return std::make_unique<SimVfs>(o, Rng(seed), [] { return kNowUs; });
}

const char* kSchema = "CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v TEXT UNIQUE);";

std::string pragmas(const char* journal, const char* sync) {
  return std::string("PRAGMA journal_mode=") + journal + "; PRAGMA synchronous=" + sync + "; " + kSchema;
}

TEST(SimVfs, FilesGoThroughTheVfsNotMemory) {
  auto vfs = make_vfs();
  {
    Db d(*vfs, pragmas("DELETE", "FULL"));
    ASSERT_TRUE(d.exec->execute({"INSERT INTO t VALUES(1, 'a')"}).ok());
  }
  EXPECT_TRUE(vfs->exists("test.db"));
  EXPECT_FALSE(vfs->exists("test.db-journal"));  // DELETE mode removes the journal at commit
  EXPECT_GT(vfs->stats().syncs, 0u);
  EXPECT_GT(vfs->take_cost_us(), 0);
  EXPECT_EQ(vfs->take_cost_us(), 0);
  EXPECT_EQ(vfs->open_handles(), 0u);
}

TEST(SimVfs, SynchronousFullSurvivesPowerLoss) {
  for (const char* journal : {"DELETE", "TRUNCATE", "PERSIST", "WAL"}) {
    auto vfs = make_vfs();
    {
      Db d(*vfs, pragmas(journal, "FULL"));
      for (int i = 0; i < 20; ++i) {
        ASSERT_TRUE(d.exec->execute({"INSERT INTO t VALUES(?, ?)", {i, "v" + std::to_string(i)}}).ok());
      }
      vfs->crash(true);
      d.close();  // a dead connection: must not touch the disk
    }
    EXPECT_GT(vfs->stats().fenced_calls + 1, 0u);
    Db after(*vfs, pragmas(journal, "FULL"));
    EXPECT_EQ(after.count(), 20) << journal;
  }
}

TEST(SimVfs, SynchronousOffLosesCommitsOnPowerLoss) {
  auto vfs = make_vfs();
  {
    Db d(*vfs, pragmas("DELETE", "OFF"));
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(d.exec->execute({"INSERT INTO t VALUES(?, 'x' || ?)", {i, i}}).ok());
    EXPECT_EQ(d.count(), 20);
    EXPECT_GT(vfs->unsynced_ops(), 0u);
    vfs->crash(true);
  }
  Db after(*vfs, pragmas("DELETE", "OFF"));
  EXPECT_LT(after.count(), 20);  // nothing was ever synced: every commit is gone
}

TEST(SimVfs, ProcessKillKeepsThePageCache) {
  auto vfs = make_vfs();
  {
    Db d(*vfs, pragmas("WAL", "OFF"));
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(d.exec->execute({"INSERT INTO t VALUES(?, 'x' || ?)", {i, i}}).ok());
    vfs->crash(false);
  }
  Db after(*vfs, pragmas("WAL", "OFF"));
  EXPECT_EQ(after.count(), 10);
}

TEST(SimVfs, RollbackJournalRecoversAnInterruptedCommit) {
  // Fail the sync of the database file after the journal is durable: a hot journal remains and the
  // next open must roll the half-written transaction back.
  auto vfs = make_vfs();
  {
    Db d(*vfs, pragmas("DELETE", "FULL"));
    ASSERT_TRUE(d.exec->execute({"INSERT INTO t VALUES(1, 'a')"}).ok());
    // Commit with DELETE+FULL syncs: journal, journal header, database. Fail the third.
    vfs->fail_next(SimIoOp::kSync, 1, 2);
    SqlResult r = d.exec->transaction({{"INSERT INTO t VALUES(2, 'b')"}, {"INSERT INTO t VALUES(3, 'c')"}});
    EXPECT_EQ(r.status, SqlStatus::kIoError) << r.describe();
    EXPECT_TRUE(r.maybe_applied());
    vfs->crash(true);
  }
  Db after(*vfs, pragmas("DELETE", "FULL"));
  EXPECT_EQ(after.count(), 1);
}

TEST(SimVfs, InjectedErrorsSurfaceAsIoError) {
  auto vfs = make_vfs();
  Db d(*vfs, pragmas("DELETE", "FULL"));
  vfs->fail_next(SimIoOp::kWrite);
  SqlResult w = d.exec->execute({"INSERT INTO t VALUES(1, 'a')"});
  EXPECT_EQ(w.status, SqlStatus::kIoError) << w.describe();
  EXPECT_EQ(vfs->stats().injected_write_errors, 1u);
  EXPECT_TRUE(d.exec->execute({"INSERT INTO t VALUES(1, 'a')"}).ok());  // the error was one-shot
  vfs->fail_next(SimIoOp::kSync);
  EXPECT_EQ(d.exec->execute({"INSERT INTO t VALUES(2, 'b')"}).status, SqlStatus::kIoError);
  // Reads: drop the page cache by reopening, then fail the first read.
  d.close();
  Db d2(*vfs, "");
  vfs->fail_next(SimIoOp::kRead);
  SqlResult q = d2.exec->execute({"SELECT count(*) FROM t"});
  EXPECT_EQ(q.status, SqlStatus::kIoError) << q.describe();
  EXPECT_EQ(d2.count(), 1);
}

TEST(SimVfs, RandomErrorsAreDrawnFromTheStream) {
  SimVfsOptions o;
  o.write_error_probability = 0.2;
  auto vfs = make_vfs(3, o);
  Db d(*vfs, "PRAGMA journal_mode=DELETE;");
  int failures = 0;
  for (int i = 0; i < 50; ++i) {
    SqlResult r = d.exec->exec_script(i == 0 ? kSchema : "INSERT INTO t(v) VALUES(hex(randomblob(4)))");
    if (!r.ok()) {
      EXPECT_EQ(r.status, SqlStatus::kIoError) << r.describe();
      ++failures;
    }
  }
  EXPECT_GT(failures, 0);
  EXPECT_GT(vfs->stats().injected_write_errors, 0u);
}

TEST(SimVfs, ConstraintIsAValue) {
  auto vfs = make_vfs();
  Db d(*vfs, pragmas("WAL", "NORMAL"));
  ASSERT_TRUE(d.exec->execute({"INSERT INTO t VALUES(1, 'a')"}).ok());
  SqlResult dup = d.exec->execute({"INSERT INTO t VALUES(2, 'a')"});
  EXPECT_EQ(dup.status, SqlStatus::kConstraint);
  EXPECT_TRUE(dup.certainly_not_applied());
  SqlResult txn = d.exec->transaction({{"INSERT INTO t VALUES(3, 'c')"}, {"INSERT INTO t VALUES(4, 'a')"}});
  EXPECT_EQ(txn.status, SqlStatus::kConstraint);
  EXPECT_EQ(txn.failed_index, 1);
  EXPECT_EQ(d.count(), 1);  // the whole transaction rolled back
  SqlResult cas = d.exec->transaction(
      {{"UPDATE t SET v = 'z' WHERE k = 9", {}, SqlExpect::kChanged}, {"INSERT INTO t VALUES(5, 'e')"}});
  EXPECT_EQ(cas.status, SqlStatus::kConditionFailed);
  EXPECT_EQ(d.count(), 1);
}

TEST(SimVfs, TwoConnectionsLockEachOther) {
  for (const char* journal : {"DELETE", "WAL"}) {
    auto vfs = make_vfs();
    Db a(*vfs, pragmas(journal, "FULL"));
    Db b(*vfs, "");
    ASSERT_EQ(sqlite3_exec(a.db, "BEGIN IMMEDIATE; INSERT INTO t VALUES(1,'a')", nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_EQ(b.exec->execute({"INSERT INTO t VALUES(2, 'b')"}).status, SqlStatus::kBusy) << journal;
    ASSERT_EQ(sqlite3_exec(a.db, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_TRUE(b.exec->execute({"INSERT INTO t VALUES(2, 'b')"}).ok());
    EXPECT_EQ(a.count(), 2);
  }
}

TEST(SimVfs, TimeComesFromTheSimulation) {
  auto vfs = make_vfs();
  Db d(*vfs, "");
  SqlResult r = d.exec->execute({"SELECT CAST(strftime('%s','now') AS INTEGER)"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.scalar()->as_int(), kNowUs / 1'000'000);
}

TEST(SimVfs, InstancesCoexist) {
  auto v1 = make_vfs(1);
  auto v2 = make_vfs(2);
  EXPECT_STRNE(v1->vfs_name(), v2->vfs_name());
  Db a(*v1, pragmas("DELETE", "FULL"));
  Db b(*v2, pragmas("DELETE", "FULL"));
  ASSERT_TRUE(a.exec->execute({"INSERT INTO t VALUES(1, 'a')"}).ok());
  EXPECT_EQ(a.count(), 1);
  EXPECT_EQ(b.count(), 0);
}

TEST(SimVfs, TornCrashKeepsSomeUnsyncedWrites) {
  SimVfsOptions o;
  o.torn_writes = true;
  auto vfs = make_vfs(7, o);
  {
    Db d(*vfs, pragmas("DELETE", "OFF"));
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(d.exec->execute({"INSERT INTO t VALUES(?, 'x' || ?)", {i, i}}).ok());
    vfs->crash(true);
  }
  EXPECT_GT(vfs->stats().pending_ops_kept, 0u);
  EXPECT_GT(vfs->stats().pending_ops_dropped, 0u);
}

// A disk that lies: synchronous=FULL commits are acknowledged, yet a power loss inside the cache's
// flush delay loses them; after the delay they survive like on an honest disk.
TEST(SimVfs, LyingDiskLosesAcknowledgedCommitsUntilTheCacheFlushes) {
  SimVfsOptions o;
  o.volatile_write_cache = true;
  o.write_cache_flush_us = 1'000'000;
  int64_t now_us = kNowUs;
  auto vfs = std::make_unique<SimVfs>(o, Rng(3), [&now_us] { return now_us; });
  {
    Db d(*vfs, pragmas("WAL", "FULL"));
    now_us += 2'000'000;  // the schema is flushed before the first row
    ASSERT_TRUE(d.exec->execute({"INSERT INTO t VALUES(1, 'a')"}).ok());
    now_us += 2'000'000;  // row 1 leaves the cache at the next sync
    ASSERT_TRUE(d.exec->execute({"INSERT INTO t VALUES(2, 'b')"}).ok());
    ASSERT_EQ(d.count(), 2);
    now_us += 500'000;  // row 2 is still only in the cache
    vfs->crash(true);
  }
  EXPECT_GT(vfs->stats().lied_syncs, 0u);
  EXPECT_GT(vfs->stats().acked_ops_lost, 0u);
  Db after(*vfs, "");
  EXPECT_EQ(after.count(), 1);
}

TEST(SimVfs, HonestDiskKeepsAcknowledgedCommits) {
  auto vfs = make_vfs(3);
  {
    Db d(*vfs, pragmas("WAL", "FULL"));
    ASSERT_TRUE(d.exec->execute({"INSERT INTO t VALUES(1, 'a')"}).ok());
    ASSERT_TRUE(d.exec->execute({"INSERT INTO t VALUES(2, 'b')"}).ok());
    vfs->crash(true);
  }
  EXPECT_EQ(vfs->stats().lied_syncs, 0u);
  EXPECT_EQ(vfs->stats().acked_ops_lost, 0u);
  Db after(*vfs, "");
  EXPECT_EQ(after.count(), 2);
}

TEST(SimVfs, SameSeedSameBytes) {
  auto run = [](uint64_t seed) {
    SimVfsOptions o;
    o.torn_writes = true;
    auto vfs = make_vfs(seed, o);
    {
      vfs->reseed_sqlite_prng();
      Db d(*vfs, pragmas("WAL", "NORMAL"));
      for (int i = 0; i < 30; ++i) {
        vfs->reseed_sqlite_prng();
        (void)d.exec->execute({"INSERT INTO t VALUES(?, 'x' || ?)", {i, i}});
        if (i == 20) vfs->crash(true);
      }
    }
    return vfs->durable_fingerprint();
  };
  EXPECT_EQ(run(5), run(5));
}

// A file of the VFS opened as SQLite opens a database file, written through its methods directly.
class RawFile {
 public:
  explicit RawFile(SimVfs& vfs) : vfs_(sqlite3_vfs_find(vfs.vfs_name())) {}
  bool open() {
    if (vfs_ == nullptr) return false;
    storage_.resize(static_cast<size_t>(vfs_->szOsFile));
    int out_flags = 0;
    return vfs_->xOpen(vfs_, "raw.db", file(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MAIN_DB,
                       &out_flags) == SQLITE_OK;
  }
  sqlite3_file* file() { return reinterpret_cast<sqlite3_file*>(storage_.data()); }
  int write(std::string_view bytes, int64_t offset) {
    return file()->pMethods->xWrite(file(), bytes.data(), static_cast<int>(bytes.size()), offset);
  }
  int sync() { return file()->pMethods->xSync(file(), SQLITE_SYNC_FULL); }
  int close() { return file()->pMethods->xClose(file()); }

 private:
  sqlite3_vfs* vfs_;
  std::vector<char> storage_;
};

// A sync makes the durable image exactly the current one, also after a truncate that cut a page
// and a write that grew the file again (the images share pages: docs/performance.md).
TEST(SimVfs, SyncAfterACutAndRegrowthMakesTheCurrentBytesDurable) {
  auto vfs = make_vfs();
  RawFile raw(*vfs);
  ASSERT_TRUE(raw.open());
  sqlite3_file* file = raw.file();
  ASSERT_EQ(raw.write(std::string(3 * 4096, 'a'), 0), SQLITE_OK);
  ASSERT_EQ(raw.sync(), SQLITE_OK);
  ASSERT_EQ(file->pMethods->xTruncate(file, 4096 + 100), SQLITE_OK);  // cuts the second page
  ASSERT_EQ(raw.write("b", 3 * 4096 - 1), SQLITE_OK);                 // grows it back
  ASSERT_EQ(raw.sync(), SQLITE_OK);
  const std::string expected = std::string(4096 + 100, 'a') + std::string(2 * 4096 - 101, '\0') + "b";
  EXPECT_EQ(vfs->file_bytes("raw.db"), expected);
  EXPECT_EQ(vfs->durable_bytes("raw.db"), expected);
  vfs->crash(true);  // nothing pending: the durable image is what the file holds
  EXPECT_EQ(vfs->file_bytes("raw.db"), expected);
  EXPECT_EQ(raw.close(), SQLITE_OK);
}

// A torn crash keeps or drops each sector-sized piece of an unsynced write whole and never changes
// a byte outside the writes: the simulated device is power-safe in SQLite's sense
// (SQLITE_IOCAP_POWERSAFE_OVERWRITE), although SimVfs does not declare it (docs/performance.md,
// session 25). Writes here are partial sectors at odd offsets, each of its own byte value.
TEST(SimVfs, TornCrashChangesNoByteOutsideTheWrites) {
  uint64_t kept = 0, dropped = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SimVfsOptions o;
    o.torn_writes = true;
    auto vfs = make_vfs(seed, o);
    RawFile raw(*vfs);
    ASSERT_TRUE(raw.open());
    const std::string synced(4 * 4096, 'a');
    ASSERT_EQ(raw.write(synced, 0), SQLITE_OK);
    ASSERT_EQ(raw.sync(), SQLITE_OK);
    std::string written_by(synced.size(), 'a');  // the byte each offset holds if its write survives
    for (int i = 0; i < 12; ++i) {
      const std::string bytes(100 + 37 * i, static_cast<char>('A' + i));
      const int64_t offset = 1300 * i + 7;  // unaligned; ranges do not overlap
      ASSERT_EQ(raw.write(bytes, offset), SQLITE_OK);
      written_by.replace(static_cast<size_t>(offset), bytes.size(), bytes);
    }
    vfs->crash(true);
    const std::optional<std::string> after = vfs->durable_bytes("raw.db");
    ASSERT_TRUE(after.has_value());
    ASSERT_EQ(after->size(), synced.size());
    for (size_t at = 0; at < after->size(); ++at) {
      ASSERT_TRUE((*after)[at] == synced[at] || (*after)[at] == written_by[at])
          << "seed " << seed << ": byte " << at << " is neither the synced one nor the written one";
    }
    kept += vfs->stats().pending_ops_kept;
    dropped += vfs->stats().pending_ops_dropped;
    EXPECT_EQ(raw.close(), SQLITE_OK);
  }
  // Not vacuous: some pieces survived and some were lost.
  EXPECT_GT(kept, 0u);
  EXPECT_GT(dropped, 0u);
}

}  // namespace
}  // namespace fl::sim::storage
