// SqliteExecutor: runs the Sql port's statements and transactions on one sqlite3 connection.
//
// Shared by the simulated SQL server (sim/storage/sql_server.h) and real mode
// (harness/real_sql/sqlite_sql.h), so both worlds give the same answers for the same SQL.
//
// Contract
// - execute(stmt): one statement in autocommit mode. A statement that leaves a transaction open
//   (BEGIN, SAVEPOINT) is rolled back and answered with kError: transactions go through
//   transaction().
// - transaction(stmts): BEGIN IMMEDIATE; each statement, checking its `expect`; COMMIT. Any
//   failure rolls everything back and reports the failing statement's status and index. A failed
//   COMMIT (I/O error) is reported as kIoError: the caller must treat it as maybe-applied.
// - Prepared statements are cached by SQL text for the connection's lifetime (BEGIN IMMEDIATE,
//   COMMIT and ROLLBACK too).
// - Errors map to SqlStatus: CONSTRAINT -> kConstraint; BUSY, LOCKED -> kBusy; IOERR, FULL,
//   CORRUPT, NOTADB, CANTOPEN, PROTOCOL -> kIoError; anything else -> kError.
// - Does not own the connection. Not thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "impl/ports/sql.h"

namespace fl::sim::storage {

SqlStatus sql_status_from_sqlite(int rc);

class SqliteExecutor {
 public:
  explicit SqliteExecutor(sqlite3* db);
  ~SqliteExecutor();
  SqliteExecutor(const SqliteExecutor&) = delete;
  SqliteExecutor& operator=(const SqliteExecutor&) = delete;

  SqlResult execute(const SqlStatement& statement);
  SqlResult transaction(const std::vector<SqlStatement>& statements);

  // Runs a script of statements without parameters (schema, PRAGMAs). Returns the first failure.
  SqlResult exec_script(const std::string& sql);

  // Finalizes every cached statement (REQUIRED before sqlite3_close on the connection).
  void clear_cache();
  sqlite3* db() const { return db_; }

 private:
  // Runs one statement; on success appends its rows to `set`. Returns kOk or the failure.
  SqlResult run(const SqlStatement& statement, SqlRowSet& set);
  SqlResult fail(int rc, int index = -1);
  sqlite3_stmt* prepare(const std::string& sql, int* rc);
  void rollback_if_open();
  // BEGIN IMMEDIATE, COMMIT, ROLLBACK: stepped to the end; SQLITE_OK or the failure code.
  int step_control(const std::string& sql);

  sqlite3* db_;
  std::map<std::string, sqlite3_stmt*> cache_;
};

}  // namespace fl::sim::storage
