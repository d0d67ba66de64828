#include "harness/sql_rows.h"

#include <sqlite3.h>

#include "sim/storage/vfs_reader.h"

namespace fl {

int DbRow::columns() const { return sqlite3_column_count(st_); }

bool DbRow::null(int column) const { return sqlite3_column_type(st_, column) == SQLITE_NULL; }

int64_t DbRow::i64(int column) const {
  if (nulls_ == NullInt::kMinusOne && null(column)) return -1;
  return static_cast<int64_t>(sqlite3_column_int64(st_, column));
}

std::string DbRow::text(int column) const { return sim::storage::VfsReader::text(st_, column); }

}  // namespace fl
