// SqliteSql: the Sql port in real mode — SQLite on a real file, behind the same contract.
//
// Contract
// - Opens (creating) options.directory/options.file. With an empty directory a fresh temporary
//   directory is created (under $TMPDIR or /tmp) and removed, with its files, on destruction.
// - Applies the journal mode, `synchronous` and options.schema at open; ok() tells whether that
//   worked (error() says why not). Operations on a connection that did not open answer
//   kUnavailable.
// - Statements execute synchronously on the calling thread: the returned Task is already
//   complete when first awaited (no network, so never kIndeterminate). Results are those of
//   fl::sim::storage::SqliteExecutor, the same code the simulated server uses.
// - Not thread-safe: one instance per thread (or per process's event loop).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "impl/ports/sql.h"
#include "sim/storage/sqlite_exec.h"
#include "sim/storage/sqlite_settings.h"

namespace fl::real {

struct SqliteSqlOptions {
  std::string directory;  // empty: a new temporary directory, removed on destruction
  std::string file = "faultline.db";
  sim::storage::JournalMode journal_mode = sim::storage::JournalMode::kWal;
  sim::storage::Synchronous synchronous = sim::storage::Synchronous::kFull;
  std::vector<std::string> schema;
  int busy_timeout_ms = 1000;
};

class SqliteSql final : public Sql {
 public:
  explicit SqliteSql(SqliteSqlOptions options = {});
  ~SqliteSql() override;
  SqliteSql(const SqliteSql&) = delete;
  SqliteSql& operator=(const SqliteSql&) = delete;

  bool ok() const { return exec_ != nullptr; }
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }

  using Sql::execute;
  Task<SqlResult> execute(SqlStatement statement) override;
  Task<SqlResult> transaction(std::vector<SqlStatement> statements) override;

  // Synchronous forms (benchmarks, setup code outside coroutines).
  SqlResult execute_now(const SqlStatement& statement);
  SqlResult transaction_now(const std::vector<SqlStatement>& statements);

 private:
  SqliteSqlOptions options_;
  std::string directory_;
  bool owns_directory_ = false;
  std::string path_;
  std::string error_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<sim::storage::SqliteExecutor> exec_;
};

}  // namespace fl::real
