// Typed readers of committed SQL rows: an adapter reads a store back (a VfsReader after the run, a
// VfsObserver while sampling, sim/storage/vfs_reader.h) into the judges' row structs without
// parsing columns by hand.
//
// Contract
// - DbRow is one result row: i64/i32/text(column) read a column as sqlite3_column_int64 and
//   VfsReader::text do (text NULL: ""; integer NULL: 0, or -1 with NullInt::kMinusOne). cell(c) is
//   column c typed by what it initialises (an integer, an int32_t or a std::string).
// - for_each_row(db, sql, fn) runs `sql` on `db` (anything with each(sql, fn(sqlite3_stmt*)))
//   and calls fn(row) per result row; returns what db.each returns (false: the query failed).
// - append_rows(db, sql, &out) appends one T per result row, T{column 0, column 1, ...}: the
//   query's N columns initialise T's first N fields in order (nested aggregates flattened, the rest
//   default). Precondition (FL_ASSERT): the query has no more columns than T has fields. A field
//   of another type (a double, an optional) ends what T{...} can take: read such rows with
//   for_each_row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "impl/ports/assert.h"

struct sqlite3_stmt;

namespace fl {

// What an integer column reads when it is NULL.
enum class NullInt { kZero, kMinusOne };

class DbRow {
 public:
  class Cell {
   public:
    Cell(const DbRow& row, int column) : row_(row), column_(column) {}
    operator int64_t() const { return row_.i64(column_); }       // NOLINT: typed by the field it initialises
    operator int32_t() const { return row_.i32(column_); }       // NOLINT
    operator std::string() const { return row_.text(column_); }  // NOLINT

   private:
    const DbRow& row_;
    int column_;
  };

  DbRow(sqlite3_stmt* st, NullInt nulls) : st_(st), nulls_(nulls) {}
  int columns() const;
  int64_t i64(int column) const;
  int32_t i32(int column) const { return static_cast<int32_t>(i64(column)); }
  std::string text(int column) const;
  bool null(int column) const;
  Cell cell(int column) const { return Cell(*this, column); }

 private:
  sqlite3_stmt* st_;
  NullInt nulls_;
};

namespace sql_rows_detail {

template <size_t>
using CellAt = DbRow::Cell;

template <class T, class Seq>
struct Builds;
template <class T, size_t... I>
struct Builds<T, std::index_sequence<I...>> {
  static constexpr bool value = requires { T{std::declval<CellAt<I>>()...}; };
};

// The most cells T{...} takes (fields of nested aggregates counted one by one), up to 24.
template <class T, size_t N = 24>
constexpr size_t cells_of() {
  if constexpr (N == 0 || Builds<T, std::make_index_sequence<N>>::value) {
    return N;
  } else {
    return cells_of<T, N - 1>();
  }
}

// Nested aggregates are initialised from the flat column list on purpose.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-braces"
template <class T, size_t... I>
T make(const DbRow& row, std::index_sequence<I...>) {
  return T{row.cell(static_cast<int>(I))...};
}
#pragma GCC diagnostic pop

// Appends T built from the row's K columns, if the row has K columns and T{...} takes K cells.
template <class T, size_t K>
bool append_if(const DbRow& row, std::vector<T>* out) {
  if constexpr (Builds<T, std::make_index_sequence<K>>::value) {
    if (row.columns() != static_cast<int>(K)) return false;
    out->push_back(make<T>(row, std::make_index_sequence<K>{}));
    return true;
  } else {
    return false;
  }
}

template <class T, size_t... K>
void append(const DbRow& row, std::vector<T>* out, std::index_sequence<K...>) {
  const bool built = (append_if<T, K + 1>(row, out) || ...);
  FL_ASSERT(built);  // T{...} takes the row's columns
}

}  // namespace sql_rows_detail

template <class Db, class Fn>
bool for_each_row(Db& db, const char* sql, Fn&& fn, NullInt nulls = NullInt::kZero) {
  return db.each(sql, [&](sqlite3_stmt* st) { fn(DbRow(st, nulls)); });
}

template <class T, class Db>
bool append_rows(Db& db, const char* sql, std::vector<T>* out, NullInt nulls = NullInt::kZero) {
  constexpr size_t kCells = sql_rows_detail::cells_of<T>();
  static_assert(kCells > 0, "T{...} takes no column: read its rows with for_each_row");
  return for_each_row(
      db, sql, [out](const DbRow& row) { sql_rows_detail::append(row, out, std::make_index_sequence<kCells>{}); },
      nulls);
}

}  // namespace fl
