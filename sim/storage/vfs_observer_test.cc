// VfsObserver and SimVfs's inspection door: a checker's reads see the committed state of the
// instant and leave no trace in the world (no fault or Rng draw, no I/O counted, no file changed).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/hash.h"
#include "sim/storage/sim_vfs.h"
#include "sim/storage/vfs_reader.h"

namespace fl::sim::storage {
namespace {

constexpr int64_t kNowUs = 1'700'000'000'000'000;

std::unique_ptr<SimVfs> make_vfs(SimVfsOptions o = {}) {
  return std::make_unique<SimVfs>(o, Rng(7), [] { return kNowUs; });
}

sqlite3* open_writer(SimVfs& vfs, const std::string& journal, const std::string& sync) {
  // SQLite's PRNG (WAL salts) is process-global: each disk reseeds it, as the SQL server does.
  vfs.reseed_sqlite_prng();
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2("t.db", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs.vfs_name()), SQLITE_OK);
  const std::string script = "PRAGMA journal_mode=" + journal + "; PRAGMA synchronous=" + sync +
                             "; CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v TEXT);";
  EXPECT_EQ(sqlite3_exec(db, script.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  return db;
}

// Rows of t as the observer sees them now; -1 when it could not read.
int64_t observed_rows(VfsObserver& o) {
  int64_t n = -1;
  const bool ok = o.read([&](VfsObserver& db) {
    db.each("SELECT count(*) FROM t", [&](sqlite3_stmt* st) { n = sqlite3_column_int64(st, 0); });
  });
  return ok ? n : -1;
}

// Rows of t as a fresh fault-free reader sees them (the reference the observer must match).
int64_t fresh_rows(SimVfs& vfs) {
  int64_t n = -1;
  VfsReader r(vfs, "t.db", /*quiet=*/true);
  r.each("SELECT count(*) FROM t", [&](sqlite3_stmt* st) { n = sqlite3_column_int64(st, 0); });
  return r.ok() ? n : -1;
}

int exec(sqlite3* db, const std::string& sql) { return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr); }

TEST(VfsObserver, SeesTheCommittedStateOfEachInstant) {
  for (const char* journal : {"WAL", "DELETE"}) {
    auto vfs = make_vfs();
    VfsObserver observer(*vfs, "t.db");
    EXPECT_EQ(observed_rows(observer), -1) << "no database yet";
    sqlite3* w = open_writer(*vfs, journal, "OFF");
    for (int i = 0; i < 30; ++i) {
      const uint64_t before = vfs->change_count();
      ASSERT_EQ(exec(w, "INSERT INTO t(v) VALUES('x')"), SQLITE_OK);
      EXPECT_GT(vfs->change_count(), before) << "a commit is a change readers can see";
      EXPECT_EQ(observed_rows(observer), i + 1) << journal;
    }
    // An open write transaction is not committed state.
    ASSERT_EQ(exec(w, "BEGIN; INSERT INTO t(v) VALUES('open');"), SQLITE_OK);
    EXPECT_EQ(observed_rows(observer), 30) << journal;
    ASSERT_EQ(exec(w, "COMMIT"), SQLITE_OK);
    EXPECT_EQ(observed_rows(observer), 31) << journal;
    if (std::string(journal) == "WAL") {
      ASSERT_EQ(exec(w, "PRAGMA wal_checkpoint(TRUNCATE); INSERT INTO t(v) VALUES('y');"), SQLITE_OK);
      EXPECT_EQ(observed_rows(observer), 32);
    }
    // A power loss with synchronous=OFF loses unsynced commits: the observer sees what survived,
    // as a fresh reader does, both before and after the dead connection is gone.
    vfs->crash(true);
    EXPECT_EQ(observed_rows(observer), fresh_rows(*vfs)) << journal;
    sqlite3_close(w);
    EXPECT_EQ(observed_rows(observer), fresh_rows(*vfs)) << journal;
    w = open_writer(*vfs, journal, "FULL");
    ASSERT_EQ(exec(w, "INSERT INTO t(v) VALUES('z')"), SQLITE_OK);
    EXPECT_EQ(observed_rows(observer), fresh_rows(*vfs)) << journal;
    sqlite3_close(w);
    EXPECT_EQ(observed_rows(observer), fresh_rows(*vfs)) << journal;
  }
}

// What the service's side of a disk shows: stats, files (current and durable), pending writes.
std::string disk_state(const SimVfs& vfs) {
  const SimVfsStats& s = vfs.stats();
  std::string out = std::to_string(s.opens) + " " + std::to_string(s.reads) + " " + std::to_string(s.writes) + " " +
                    std::to_string(s.syncs) + " " + std::to_string(s.injected_read_errors) + " " +
                    std::to_string(s.injected_write_errors) + " " + std::to_string(s.injected_sync_errors) + " " +
                    std::to_string(s.pending_ops_kept) + " " + std::to_string(vfs.unsynced_ops()) + " " +
                    std::to_string(vfs.change_count()) + " " + std::to_string(vfs.durable_fingerprint());
  for (const std::string& name : vfs.file_names())
    out += " " + name + ":" + std::to_string(stable_hash(*vfs.file_bytes(name)));
  return out;
}

// Two disks with the same seed and random I/O errors get the same writes; one is observed after
// every statement. Every statement's outcome (which depends on the Rng's fault draws), the disk's
// state and a torn crash (more Rng draws) must come out the same on both.
TEST(VfsObserver, ReadsLeaveNoTraceInTheWorld) {
  for (const char* journal : {"WAL", "DELETE"}) {
    SimVfsOptions o;
    o.read_error_probability = o.write_error_probability = o.sync_error_probability = 0.05;
    o.torn_writes = true;
    auto watched = make_vfs(o);
    auto twin = make_vfs(o);
    VfsObserver observer(*watched, "t.db");
    sqlite3* w1 = open_writer(*watched, journal, "NORMAL");
    sqlite3* w2 = open_writer(*twin, journal, "NORMAL");
    std::vector<int> outcomes1, outcomes2;
    int observed = 0;
    for (int i = 0; i < 200; ++i) {
      const std::string sql = "INSERT INTO t(v) VALUES('" + std::string(static_cast<size_t>(i % 50 + 1), 'v') + "')";
      watched->reseed_sqlite_prng();
      outcomes1.push_back(exec(w1, sql));
      twin->reseed_sqlite_prng();
      outcomes2.push_back(exec(w2, sql));
      observed += observed_rows(observer) >= 0 ? 1 : 0;
      ASSERT_EQ(disk_state(*watched), disk_state(*twin)) << journal << " after statement " << i;
    }
    EXPECT_EQ(outcomes1, outcomes2) << journal;
    // The observer meets no injected fault. In rollback mode a failed commit leaves a hot journal
    // that any read-only reader must refuse until the service rolls it back.
    if (std::string(journal) == "WAL") {
      EXPECT_EQ(observed, 200);
    } else {
      EXPECT_GT(observed, 100);
    }
    watched->crash(true);
    twin->crash(true);
    EXPECT_EQ(disk_state(*watched), disk_state(*twin)) << journal;
    EXPECT_GT(watched->stats().injected_write_errors + watched->stats().injected_sync_errors, 0u);
    sqlite3_close(w1);
    sqlite3_close(w2);
  }
}

// A file SQLite cannot read as a database (its header overwritten, as a torn write after a
// power loss can leave it) fails the read-back and says so: corrupt(), not a plain I/O error.
TEST(VfsReader, ReportsADamagedFileAsCorrupt) {
  auto vfs = make_vfs();
  sqlite3* w = open_writer(*vfs, "DELETE", "FULL");
  ASSERT_EQ(exec(w, "INSERT INTO t(v) VALUES('x')"), SQLITE_OK);
  sqlite3_close(w);
  {
    VfsReader healthy(*vfs, "t.db", /*quiet=*/true);
    EXPECT_TRUE(healthy.each("SELECT count(*) FROM t", [](sqlite3_stmt*) {}));
    EXPECT_FALSE(healthy.corrupt());
  }
  sqlite3_vfs* v = sqlite3_vfs_find(vfs->vfs_name());
  ASSERT_NE(v, nullptr);
  std::vector<char> storage(static_cast<size_t>(v->szOsFile));
  auto* f = reinterpret_cast<sqlite3_file*>(storage.data());
  int out_flags = 0;
  ASSERT_EQ(v->xOpen(v, "t.db", f, SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_READWRITE, &out_flags), SQLITE_OK);
  const std::string garbage(100, 'z');
  ASSERT_EQ(f->pMethods->xWrite(f, garbage.data(), static_cast<int>(garbage.size()), 0), SQLITE_OK);
  f->pMethods->xClose(f);
  VfsReader damaged(*vfs, "t.db", /*quiet=*/true);
  EXPECT_FALSE(damaged.each("SELECT count(*) FROM t", [](sqlite3_stmt*) {}));
  EXPECT_FALSE(damaged.ok());
  EXPECT_TRUE(damaged.corrupt());
}

}  // namespace
}  // namespace fl::sim::storage
