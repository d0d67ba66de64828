// VfsReader: a short-lived read-only SQLite connection to a database file on a SimVfs, for
// reading what the simulated disk holds (the judges' view of the DB: after a run, or sampled
// during one), never what a service says it wrote.
//
// Contract
// - The constructor opens `file` read-only through `vfs`; with `quiet`, it first switches the
//   VFS's random I/O errors off (the run is over: reading back must not inject faults).
// - each(sql, row) runs one query, calling row(stmt) for every result row. ok() is false once the
//   open or any query failed (then what was read is incomplete).
// - The connection is closed by the destructor. Not copyable.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <string>

#include "sim/storage/sim_vfs.h"

namespace fl::sim::storage {

class VfsReader {
 public:
  VfsReader(SimVfs& vfs, const std::string& file, bool quiet);
  ~VfsReader();
  VfsReader(const VfsReader&) = delete;
  VfsReader& operator=(const VfsReader&) = delete;

  bool ok() const { return ok_; }
  bool each(const char* sql, const std::function<void(sqlite3_stmt*)>& row);
  // Column `col` of the current row as text ("" for NULL).
  static std::string text(sqlite3_stmt* st, int col);

 private:
  sqlite3* db_ = nullptr;
  bool ok_ = false;
};

}  // namespace fl::sim::storage
