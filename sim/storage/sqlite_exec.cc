#include "sim/storage/sqlite_exec.h"
#include "impl/ports/assert.h"

namespace fl::sim::storage {

SqlStatus sql_status_from_sqlite(int rc) {
  switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
      return SqlStatus::kOk;
    case SQLITE_CONSTRAINT:
      return SqlStatus::kConstraint;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return SqlStatus::kBusy;
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
      return SqlStatus::kIoError;
    default:
      return SqlStatus::kError;
  }
}

SqliteExecutor::SqliteExecutor(sqlite3* db) : db_(db) { FL_ASSERT(db_ != nullptr); }

SqliteExecutor::~SqliteExecutor() { clear_cache(); }

void SqliteExecutor::clear_cache() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  cache_.clear();
}

SqlResult SqliteExecutor::fail(int rc, int index) {
  SqlStatus status = sql_status_from_sqlite(rc);
  if (status == SqlStatus::kOk) status = SqlStatus::kError;
  std::string message = sqlite3_errstr(rc);
  const char* detail = sqlite3_errmsg(db_);
  if (detail != nullptr && message != detail) message += std::string(": ") + detail;
  return SqlResult::failure(status, std::move(message), index);
}

sqlite3_stmt* SqliteExecutor::prepare(const std::string& sql, int* rc) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) {
    *rc = SQLITE_OK;
    return it->second;
  }
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  *rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt, &tail);
  if (*rc != SQLITE_OK) return nullptr;
  if (stmt == nullptr) {  // only whitespace or comments
    *rc = SQLITE_MISUSE;
    return nullptr;
  }
  cache_.emplace(sql, stmt);
  return stmt;
}

namespace {

// Text and blobs are bound SQLITE_STATIC, not copied: `v` outlives the binding, which the
// ResetGuard of SqliteExecutor::run clears before run returns (a ranking checkpoint binds
// hundreds of kB of state text per flush).
int bind(sqlite3_stmt* stmt, int index, const SqlValue& v) {
  switch (v.type()) {
    case SqlValue::Type::kNull:
      return sqlite3_bind_null(stmt, index);
    case SqlValue::Type::kInteger:
      return sqlite3_bind_int64(stmt, index, v.as_int());
    case SqlValue::Type::kReal:
      return sqlite3_bind_double(stmt, index, v.as_real());
    case SqlValue::Type::kText:
      return sqlite3_bind_text64(stmt, index, v.as_text().data(), v.as_text().size(), SQLITE_STATIC, SQLITE_UTF8);
    case SqlValue::Type::kBlob:
      return sqlite3_bind_blob64(stmt, index, v.as_text().data(), v.as_text().size(), SQLITE_STATIC);
  }
  return SQLITE_MISUSE;
}

SqlValue column_value(sqlite3_stmt* stmt, int i) {
  switch (sqlite3_column_type(stmt, i)) {
    case SQLITE_INTEGER:
      return SqlValue(static_cast<int64_t>(sqlite3_column_int64(stmt, i)));
    case SQLITE_FLOAT:
      return SqlValue(sqlite3_column_double(stmt, i));
    case SQLITE_TEXT: {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
      return SqlValue(std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt, i))));
    }
    case SQLITE_BLOB: {
      const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt, i));
      const int n = sqlite3_column_bytes(stmt, i);
      return SqlValue::blob(n > 0 ? std::string(p, static_cast<size_t>(n)) : std::string());
    }
    default:
      return SqlValue();
  }
}

// Resets the statement when it goes out of scope, so a cached statement never holds a read lock.
struct ResetGuard {
  sqlite3_stmt* stmt;
  ~ResetGuard() {
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
  }
};

}  // namespace

SqlResult SqliteExecutor::run(const SqlStatement& statement, SqlRowSet& set) {
  int rc = SQLITE_OK;
  sqlite3_stmt* stmt = prepare(statement.sql, &rc);
  if (stmt == nullptr) return fail(rc);
  ResetGuard guard{stmt};
  if (static_cast<int>(statement.params.size()) != sqlite3_bind_parameter_count(stmt)) {
    return SqlResult::failure(SqlStatus::kError, "expected " + std::to_string(sqlite3_bind_parameter_count(stmt)) +
                                                     " parameters, got " + std::to_string(statement.params.size()));
  }
  for (size_t i = 0; i < statement.params.size(); ++i) {
    rc = bind(stmt, static_cast<int>(i) + 1, statement.params[i]);
    if (rc != SQLITE_OK) return fail(rc);
  }
  const int ncols = sqlite3_column_count(stmt);
  set.columns.clear();
  for (int i = 0; i < ncols; ++i) set.columns.emplace_back(sqlite3_column_name(stmt, i));
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    SqlRow row;
    row.reserve(static_cast<size_t>(ncols));
    for (int i = 0; i < ncols; ++i) row.push_back(column_value(stmt, i));
    set.rows.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) return fail(rc);
  set.changes = sqlite3_stmt_readonly(stmt) ? 0 : sqlite3_changes64(db_);
  set.last_insert_rowid = sqlite3_last_insert_rowid(db_);
  return SqlResult{};
}

void SqliteExecutor::rollback_if_open() {
  if (sqlite3_get_autocommit(db_)) return;
  // After an I/O error SQLite may have rolled back already; a failing ROLLBACK does no harm.
  (void)step_control("ROLLBACK");
}

// As sqlite3_exec(db, sql) answers for one statement without rows (same code, same error
// message), without parsing it again: the statement is prepared once and cached.
int SqliteExecutor::step_control(const std::string& sql) {
  int rc = SQLITE_OK;
  sqlite3_stmt* stmt = prepare(sql, &rc);
  if (stmt == nullptr) return rc;
  rc = sqlite3_step(stmt);
  if (rc == SQLITE_DONE || rc == SQLITE_ROW) rc = SQLITE_OK;
  sqlite3_reset(stmt);
  return rc;
}

SqlResult SqliteExecutor::execute(const SqlStatement& statement) {
  FL_ASSERT(sqlite3_get_autocommit(db_));
  SqlResult result;
  result.sets.emplace_back();
  SqlResult step = run(statement, result.sets.back());
  if (!sqlite3_get_autocommit(db_)) {
    rollback_if_open();
    return SqlResult::failure(SqlStatus::kError, "explicit transactions are not supported: use transaction()");
  }
  if (!step.ok()) return step;
  return result;
}

SqlResult SqliteExecutor::transaction(const std::vector<SqlStatement>& statements) {
  FL_ASSERT(sqlite3_get_autocommit(db_));
  int rc = step_control("BEGIN IMMEDIATE");
  if (rc != SQLITE_OK) {
    SqlResult r = fail(rc);
    rollback_if_open();
    return r;
  }
  SqlResult result;
  for (size_t i = 0; i < statements.size(); ++i) {
    const SqlStatement& s = statements[i];
    result.sets.emplace_back();
    SqlResult step = run(s, result.sets.back());
    const int index = static_cast<int>(i);
    if (!step.ok()) {
      step.failed_index = index;
      rollback_if_open();
      return step;
    }
    const SqlRowSet& set = result.sets.back();
    const bool holds = s.expect == SqlExpect::kAny || (s.expect == SqlExpect::kChanged && set.changes > 0) ||
                       (s.expect == SqlExpect::kNoRows && set.rows.empty()) ||
                       (s.expect == SqlExpect::kSomeRows && !set.rows.empty());
    if (!holds) {
      rollback_if_open();
      return SqlResult::failure(SqlStatus::kConditionFailed, "expectation failed: " + s.describe(), index);
    }
    if (sqlite3_get_autocommit(db_)) {  // the statement ended the transaction (COMMIT/ROLLBACK)
      return SqlResult::failure(SqlStatus::kError, "statement ended the transaction: " + s.sql, index);
    }
  }
  rc = step_control("COMMIT");
  if (rc != SQLITE_OK) {
    SqlResult r = fail(rc, static_cast<int>(statements.size()));
    rollback_if_open();
    return r;
  }
  return result;
}

SqlResult SqliteExecutor::exec_script(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return SqlResult{};
  SqlStatus status = sql_status_from_sqlite(rc);
  if (status == SqlStatus::kOk) status = SqlStatus::kError;
  SqlResult r = SqlResult::failure(status, err ? err : sqlite3_errstr(rc));
  sqlite3_free(err);
  rollback_if_open();
  return r;
}

}  // namespace fl::sim::storage
