#include "harness/real_sql/sqlite_sql.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

namespace fl::real {
namespace {

// Drives a Task that completes synchronously (real mode has no scheduler here).
template <typename T>
T run_now(Task<T> task) {
  std::optional<T> out;
  auto driver = [](Task<T> t, std::optional<T>* slot) -> Task<void> { slot->emplace(co_await std::move(t)); };
  Task<void> d = driver(std::move(task), &out);
  d.handle().resume();
  EXPECT_TRUE(d.done());
  return std::move(*out);
}

SqliteSqlOptions options() {
  SqliteSqlOptions o;
  o.schema = {"CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v TEXT UNIQUE, b BLOB)"};
  return o;
}

TEST(SqliteSql, SameContractOnARealFile) {
  std::string dir;
  {
    SqliteSql sql(options());
    ASSERT_TRUE(sql.ok()) << sql.error();
    dir = std::filesystem::path(sql.path()).parent_path();
    EXPECT_TRUE(std::filesystem::exists(sql.path()));
    Sql& port = sql;
    EXPECT_TRUE(run_now(port.execute("INSERT INTO t VALUES(?, ?, ?)", {1, "a", SqlValue::blob("\x01\x02")})).ok());
    SqlResult dup = run_now(port.execute("INSERT INTO t VALUES(?, ?, NULL)", {2, "a"}));
    EXPECT_EQ(dup.status, SqlStatus::kConstraint);
    EXPECT_TRUE(dup.certainly_not_applied());
    SqlResult txn =
        run_now(port.transaction({{"INSERT INTO t VALUES(3, 'c', NULL)"}, {"INSERT INTO t VALUES(1, 'z', NULL)"}}));
    EXPECT_EQ(txn.status, SqlStatus::kConstraint);
    EXPECT_EQ(txn.failed_index, 1);
    SqlResult q = run_now(port.query("SELECT k, v, b FROM t ORDER BY k"));
    ASSERT_TRUE(q.ok());
    ASSERT_EQ(q.rows().size(), 1u);
    EXPECT_EQ(q.rows()[0][2], SqlValue::blob("\x01\x02"));
    EXPECT_EQ(run_now(port.query("PRAGMA journal_mode")).scalar(), SqlValue("wal"));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));  // the temporary directory is removed
}

TEST(SqliteSql, ReopensAnExistingDirectory) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("faultline-sql-reopen-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  SqliteSqlOptions o = options();
  o.directory = dir;
  {
    SqliteSql sql(o);
    ASSERT_TRUE(sql.ok()) << sql.error();
    EXPECT_TRUE(sql.execute_now({"INSERT INTO t(v) VALUES('kept')"}).ok());
  }
  {
    SqliteSql sql(o);
    EXPECT_EQ(sql.execute_now({"SELECT count(*) FROM t"}).scalar(), SqlValue(1));
  }
  std::filesystem::remove_all(dir);
}

TEST(SqliteSql, BadSchemaIsReported) {
  SqliteSqlOptions o;
  o.schema = {"CREATE TABLOID x"};
  SqliteSql sql(o);
  EXPECT_FALSE(sql.ok());
  EXPECT_EQ(sql.execute_now({"SELECT 1"}).status, SqlStatus::kUnavailable);
}

}  // namespace
}  // namespace fl::real
