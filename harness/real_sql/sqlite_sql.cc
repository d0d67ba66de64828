#include "harness/real_sql/sqlite_sql.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace fl::real {

namespace {

std::string make_temp_directory() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/faultline-sql-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return {};
  return pattern;
}

}  // namespace

SqliteSql::SqliteSql(SqliteSqlOptions options) : options_(std::move(options)) {
  directory_ = options_.directory;
  if (directory_.empty()) {
    directory_ = make_temp_directory();
    owns_directory_ = !directory_.empty();
    if (directory_.empty()) {
      error_ = "cannot create a temporary directory";
      return;
    }
  }
  path_ = directory_ + "/" + options_.file;
  const int rc = sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    error_ = std::string("open ") + path_ + ": " + sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    return;
  }
  sqlite3_busy_timeout(db_, options_.busy_timeout_ms);
  auto exec = std::make_unique<sim::storage::SqliteExecutor>(db_);
  std::string script = sim::storage::durability_pragmas(options_.journal_mode, options_.synchronous);
  for (const std::string& s : options_.schema) script += s + ";";
  SqlResult r = exec->exec_script(script);
  if (!r.ok()) {
    error_ = "schema: " + r.describe();
    return;
  }
  exec_ = std::move(exec);
}

SqliteSql::~SqliteSql() {
  exec_.reset();
  if (db_ != nullptr) sqlite3_close_v2(db_);
  if (owns_directory_) {
    std::error_code ec;
    std::filesystem::remove_all(directory_, ec);
  }
}

SqlResult SqliteSql::execute_now(const SqlStatement& statement) {
  if (!exec_) return SqlResult::failure(SqlStatus::kUnavailable, error_);
  return exec_->execute(statement);
}

SqlResult SqliteSql::transaction_now(const std::vector<SqlStatement>& statements) {
  if (!exec_) return SqlResult::failure(SqlStatus::kUnavailable, error_);
  return exec_->transaction(statements);
}

Task<SqlResult> SqliteSql::execute(SqlStatement statement) { co_return execute_now(statement); }

Task<SqlResult> SqliteSql::transaction(std::vector<SqlStatement> statements) { co_return transaction_now(statements); }

}  // namespace fl::real
