// Sql: the asynchronous SQL port service code uses to keep its facts (purchases under a unique
// index, orders and outbox rows, windows, runs, snapshots, the publish pointer).
//
// The engine is SQLite in every mode: in simulation a process on a DB node reached over the
// simulated network (sim/storage/sql_client.h), in real mode a file in a temporary directory
// (harness/real/sqlite_sql.h). Service code only sees this header.
//
// Contract
// - Every operation returns an SqlResult; errors are values, never exceptions:
//     kOk             executed (and, for writes outside a transaction and for transaction(),
//                     committed);
//     kConstraint     a constraint (UNIQUE, PRIMARY KEY, NOT NULL, CHECK, FOREIGN KEY) refused the
//                     write; nothing of the statement / transaction was applied. A unique-key
//                     conflict is an ordinary answer the caller branches on.
//     kConditionFailed a statement's `expect` did not hold inside transaction(); the whole
//                     transaction was rolled back (a compare-and-set that lost).
//     kBusy           the database was locked by someone else; nothing was applied; retry.
//     kIoError        the storage failed (SQLITE_IOERR, SQLITE_FULL, SQLITE_CORRUPT...). For a
//                     statement that writes, the outcome is NOT certain: an fsync that failed
//                     after the commit record reached the disk may still surface after a restart
//                     (as on a real disk). Read-only statements: nothing happened.
//     kIndeterminate  no answer (timeout, connection reset, server crashed after receiving the
//                     request): the statement or transaction may or may not have been executed
//                     and committed. Never report it as failed.
//     kUnavailable    no database server reachable; the request was certainly not executed.
//     kError          anything else SQLite rejects (syntax error, misuse, wrong parameter count):
//                     a programming error; nothing was applied.
//   certainly_not_applied() / maybe_applied() classify these for histories.
// - execute(stmt) runs one statement in autocommit mode (its own implicit transaction).
//   query() is the same call, named for reads.
// - transaction(stmts) runs the statements in order inside BEGIN IMMEDIATE ... COMMIT on the
//   server side, atomically: if any statement fails (or its `expect` does not hold), the whole
//   transaction is rolled back and the result carries that statement's status and its index in
//   `failed_index`. On kOk `sets` holds one SqlRowSet per statement.
// - Parameters are bound positionally (`?`, `?1`, ...); text and blob are distinct types.
// - Thread-compatible: one implementation object per process, used from that process's tasks.
// - Implementations override execute(SqlStatement) and add `using Sql::execute;` so the
//   convenience overloads stay visible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "impl/ports/stable_hash.h"
#include "impl/ports/task.h"

namespace fl {

enum class SqlStatus : uint8_t {
  kOk,
  kConstraint,
  kConditionFailed,
  kBusy,
  kIoError,
  kIndeterminate,
  kUnavailable,
  kError,
};
const char* sql_status_name(SqlStatus s);

// A blob, distinct from text (SQLite keeps the two apart).
struct SqlBlob {
  std::string bytes;
  bool operator==(const SqlBlob&) const = default;
};

// One SQLite value: NULL, INTEGER, REAL, TEXT or BLOB.
class SqlValue {
 public:
  enum class Type : uint8_t { kNull, kInteger, kReal, kText, kBlob };

  SqlValue() = default;  // NULL
  SqlValue(std::nullptr_t) {}
  SqlValue(int64_t v) : v_(v) {}
  SqlValue(int v) : v_(static_cast<int64_t>(v)) {}
  SqlValue(long long v) : v_(static_cast<int64_t>(v)) {}
  SqlValue(uint32_t v) : v_(static_cast<int64_t>(v)) {}
  // REQUIRES v <= INT64_MAX (SQLite integers are signed 64-bit).
  SqlValue(uint64_t v);
  SqlValue(double v) : v_(v) {}
  SqlValue(std::string v) : v_(std::move(v)) {}
  SqlValue(std::string_view v) : v_(std::string(v)) {}
  SqlValue(const char* v) : v_(std::string(v)) {}
  SqlValue(SqlBlob v) : v_(std::move(v)) {}
  static SqlValue blob(std::string bytes) { return SqlValue(SqlBlob{std::move(bytes)}); }

  Type type() const { return static_cast<Type>(v_.index()); }
  bool is_null() const { return type() == Type::kNull; }
  // REQUIRES type() == kInteger.
  int64_t as_int() const;
  // REQUIRES kInteger or kReal.
  double as_real() const;
  // REQUIRES kText or kBlob: the bytes.
  const std::string& as_text() const;
  // Stable rendering for traces and evidence: NULL, 42, 1.5, 'text', x'0aff'.
  std::string describe() const;

  bool operator==(const SqlValue&) const = default;

 private:
  std::variant<std::monostate, int64_t, double, std::string, SqlBlob> v_;
};

using SqlRow = std::vector<SqlValue>;

// When a statement inside transaction() must roll the whole transaction back (kConditionFailed):
// how compare-and-set and "insert only if absent" are written without interactive transactions.
enum class SqlExpect : uint8_t {
  kAny,       // no condition
  kChanged,   // changes() >= 1 (an UPDATE ... WHERE version = ? that matched)
  kNoRows,    // a query returned no row
  kSomeRows,  // a query returned at least one row
};

struct SqlStatement {
  std::string sql;
  std::vector<SqlValue> params;
  SqlExpect expect = SqlExpect::kAny;

  SqlStatement() = default;
  SqlStatement(std::string s, std::vector<SqlValue> p = {}, SqlExpect e = SqlExpect::kAny)
      : sql(std::move(s)), params(std::move(p)), expect(e) {}
  SqlStatement(const char* s) : sql(s) {}
  std::string describe() const;
  void append_description(std::string& out) const;   // out += describe(), without the temporary
  void append_description(StableHasher& out) const;  // hashes describe(), without building it
  bool operator==(const SqlStatement&) const = default;
};

// Builds a statement from parameters given as arguments (no braced list, see Sql::exec).
template <typename... A>
SqlStatement sql_statement(std::string sql, A&&... params) {
  SqlStatement s;
  s.sql = std::move(sql);
  s.params.reserve(sizeof...(A));
  (s.params.push_back(SqlValue(std::forward<A>(params))), ...);
  return s;
}

// `s` with the expectation transaction() checks after running it.
inline SqlStatement expecting(SqlStatement s, SqlExpect e) {
  s.expect = e;
  return s;
}

// What one statement produced.
struct SqlRowSet {
  std::vector<std::string> columns;
  std::vector<SqlRow> rows;
  int64_t changes = 0;            // rows inserted/updated/deleted by this statement
  int64_t last_insert_rowid = 0;  // sqlite3_last_insert_rowid() after it
  // Index of `name` in columns, or -1.
  int column(std::string_view name) const;
  bool operator==(const SqlRowSet&) const = default;
};

struct SqlResult {
  SqlStatus status = SqlStatus::kOk;
  std::string error;            // SQLite's or the transport's message when status != kOk
  int failed_index = -1;        // transaction(): which statement failed; -1 otherwise
  std::vector<SqlRowSet> sets;  // kOk: one per statement

  bool ok() const { return status == SqlStatus::kOk; }
  bool constraint() const { return status == SqlStatus::kConstraint; }
  bool indeterminate() const { return status == SqlStatus::kIndeterminate; }
  // True when the write certainly did not take effect (safe to report as failed).
  bool certainly_not_applied() const;
  // True when the write may have taken effect (kOk, kIndeterminate, kIoError).
  bool maybe_applied() const { return !certainly_not_applied(); }

  // Convenience for single statements: the last set (empty set when there is none).
  const SqlRowSet& last() const;
  const std::vector<SqlRow>& rows() const { return last().rows; }
  const std::vector<std::string>& columns() const { return last().columns; }
  int64_t changes() const { return last().changes; }
  int64_t last_insert_rowid() const { return last().last_insert_rowid; }
  // The first column of the first row, if any.
  std::optional<SqlValue> scalar() const;

  static SqlResult failure(SqlStatus status, std::string error, int failed_index = -1);
  std::string describe() const;
  void describe_to(StableHasher& out) const;  // hashes describe(), without building it
  bool operator==(const SqlResult&) const = default;
};

class Sql {
 public:
  virtual ~Sql() = default;

  // One statement, autocommit.
  virtual Task<SqlResult> execute(SqlStatement statement) = 0;
  // BEGIN IMMEDIATE; statements...; COMMIT — atomically; see the contract above.
  virtual Task<SqlResult> transaction(std::vector<SqlStatement> statements) = 0;

  // Parameters as arguments: `co_await sql.exec("INSERT INTO t VALUES(?, ?)", id, "name")`.
  // Prefer this inside coroutines: g++ 12 rejects braced lists ({1, "a"}) of non-trivial values
  // inside a co_await expression ("array used as initializer"); build those in a local first.
  template <typename... A>
  Task<SqlResult> exec(std::string sql, A&&... params) {
    return execute(sql_statement(std::move(sql), std::forward<A>(params)...));
  }

  Task<SqlResult> execute(std::string sql, std::vector<SqlValue> params) {
    return execute(SqlStatement(std::move(sql), std::move(params)));
  }
  Task<SqlResult> query(std::string sql, std::vector<SqlValue> params = {}) {
    return execute(SqlStatement(std::move(sql), std::move(params)));
  }
};

}  // namespace fl
