// The adapter kit (harness/adapter_kit.h, harness/sql_rows.h): roles, store faults, params bound to
// option fields, typed rows.
#include "harness/adapter_kit.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "harness/sql_rows.h"
#include "sim/rng.h"

namespace fl {
namespace {

TEST(Roles, ListNamesInTheOrderAdded) {
  Roles roles;
  roles.add("worker", "push-2");
  roles.add("db", "db");
  roles.add("worker", "push-1");
  EXPECT_EQ(roles.of("worker"), (std::vector<std::string>{"push-2", "push-1"}));
  EXPECT_EQ(roles.of("db"), std::vector<std::string>{"db"});
  EXPECT_TRUE(roles.of("gateway").empty());
}

TEST(StoreFaults, ApplyOnlyASqlIoErrorAimedAtTheDb) {
  StoreNodes stores;
  const FaultSpec fault{.at_ms = 0, .kind = "sql-io-error", .target = "db", .value = 2};
  EXPECT_FALSE(apply_store_fault(fault, stores));  // no DB
  stores.db_vfs = std::make_shared<sim::storage::SimVfs>(sim::storage::SimVfsOptions{}, sim::Rng(1), [] { return 0; });
  EXPECT_TRUE(apply_store_fault(fault, stores));
  FaultSpec elsewhere = fault;
  elsewhere.target = "replica-1";
  EXPECT_FALSE(apply_store_fault(elsewhere, stores));
  FaultSpec other = fault;
  other.kind = "crash";
  EXPECT_FALSE(apply_store_fault(other, stores));
}

struct Options {
  int64_t window_ms = 0;
  int attempts = 0;
  int64_t timeout_us = 0;
  double drop = 0;
  double weight = 0;
  bool on = false;
  std::string mode;
  double probability = 0;
};
struct Other {
  int attempts = 0;
};

const BoundParams& declared() {
  static const BoundParams params{
      {int_param("window_ms", "ms", 1, 600'000, 3000, "a window"), &Options::window_ms},
      {int_param("attempts", "", 1, 10, 3, "attempts"), &Options::attempts, &Other::attempts},
      {int_param("timeout_ms", "ms", 1, 600'000, 250, "a timeout"), as_us(&Options::timeout_us)},
      {int_param("drop_percent", "percent", 0, 100, 15, "drops"), as_fraction(&Options::drop)},
      {int_param("weight", "", 0, 100, 4, "a weight"), &Options::weight},
      {int_param("on", "", 0, 1, 1, "a switch"), &Options::on},
      {choice_param("mode", "a", {"a", "b"}, "a mode"), &Options::mode},
      {number_param("probability", "", 0, 1, 0.25, "a probability"), &Options::probability},
      {int_param("by_hand", "", 0, 10, 7, "read by the adapter")}};
  return params;
}

TEST(BoundParams, DeclareInOrderAndFillConverted) {
  const std::vector<ParamInfo> infos = declared().infos();
  ASSERT_EQ(infos.size(), 9u);
  EXPECT_EQ(infos[0].name, "window_ms");
  EXPECT_EQ(infos[8].name, "by_hand");
  EXPECT_EQ(infos[2].unit, "ms");
  EXPECT_EQ(infos[2].default_value, "250");
  Scenario s;
  s.params = {{"window_ms", "1200"}, {"mode", "b"}};
  const ParamValues values = resolve_params(infos, s);
  const Options o = declared().filled<Options>(values);
  EXPECT_EQ(o.window_ms, 1200);
  EXPECT_EQ(o.attempts, 3);
  EXPECT_EQ(o.timeout_us, 250'000);
  EXPECT_EQ(o.drop, 15 / 100.0);
  EXPECT_EQ(o.weight, 4.0);
  EXPECT_TRUE(o.on);
  EXPECT_EQ(o.mode, "b");
  EXPECT_EQ(o.probability, 0.25);
  EXPECT_EQ(declared().filled<Other>(values).attempts, 3);
}

// A Db over an in-memory SQLite connection, with VfsReader's each().
class MemoryDb {
 public:
  MemoryDb() {
    sqlite3_open(":memory:", &db_);
    sqlite3_exec(db_,
                 "CREATE TABLE t(name TEXT, n INTEGER, m INTEGER); INSERT INTO t VALUES ('a', 1, NULL); "
                 "INSERT INTO t VALUES (NULL, 2, 3);",
                 nullptr, nullptr, nullptr);
  }
  ~MemoryDb() { sqlite3_close(db_); }
  bool each(const char* sql, const std::function<void(sqlite3_stmt*)>& row) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK) return false;
    while (sqlite3_step(st) == SQLITE_ROW) row(st);
    return sqlite3_finalize(st) == SQLITE_OK;
  }

 private:
  sqlite3* db_ = nullptr;
};

struct Inner {
  int64_t n = 0, m = 0;
};
struct Row {
  std::string name;
  Inner inner;
  int64_t rest = 42;
};

TEST(SqlRows, BuildRowsFromTheColumnsInOrder) {
  MemoryDb db;
  std::vector<Row> rows;
  EXPECT_TRUE(append_rows(db, "SELECT name, n, m FROM t ORDER BY n", &rows));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "a");
  EXPECT_EQ(rows[0].inner.n, 1);
  EXPECT_EQ(rows[0].inner.m, 0);  // NULL reads 0
  EXPECT_EQ(rows[0].rest, 42);    // no column: default
  EXPECT_EQ(rows[1].name, "");    // NULL text reads ""
  std::vector<std::pair<int32_t, int64_t>> pairs;
  append_rows(db, "SELECT n, m FROM t ORDER BY n", &pairs, NullInt::kMinusOne);
  EXPECT_EQ(pairs, (std::vector<std::pair<int32_t, int64_t>>{{1, -1}, {2, 3}}));
}

TEST(SqlRows, ReadColumnsByIndex) {
  MemoryDb db;
  std::map<std::string, int64_t> m;
  for_each_row(db, "SELECT name, m FROM t", [&](const DbRow& r) {
    if (!r.null(1)) m[r.text(0)] = r.i64(1);
  });
  EXPECT_EQ(m, (std::map<std::string, int64_t>{{"", 3}}));
}

}  // namespace
}  // namespace fl
