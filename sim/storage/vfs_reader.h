// VfsReader: a short-lived read-only SQLite connection to a database file on a SimVfs, for
// reading what the simulated disk holds (the judges' view of the DB: after a run, or sampled
// during one), never what a service says it wrote.
//
// Contract
// - The constructor opens `file` read-only through `vfs`; with `quiet`, it first switches the
//   VFS's random I/O errors off (the run is over: reading back must not inject faults).
// - each(sql, row) runs one query, calling row(stmt) for every result row. ok() is false once the
//   open or any query failed (then what was read is incomplete); corrupt() says whether SQLite
//   found the file damaged (SQLITE_CORRUPT, SQLITE_NOTADB), e.g. by a power loss it never promised
//   to survive (synchronous=OFF, a disk that lies about fsync).
// - The connection is closed by the destructor. Not copyable.
//
// VfsObserver: a persistent read-only connection through the VFS's inspection door, for a checker
// that samples the DB during a run without touching the world it watches (no fault draws, no Rng
// draws, no I/O counted, no lock the service could meet, no change to any file: see SimVfs).
// - read(fn) opens the connection on first use (when the file exists), refreshes the observer's
//   copy of the wal-index and runs fn, whose queries (each) see what a fresh reader would see at
//   this instant: the state committed so far. Cached pages are dropped afterwards; the parsed
//   schema and prepared statements are kept. Returns false when the DB could not be read (not
//   created yet, a query failed): what was read is then incomplete.
// - Destroy it before its SimVfs. Not copyable.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <map>
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
  bool corrupt() const { return error_ == SQLITE_CORRUPT || error_ == SQLITE_NOTADB; }
  bool each(const char* sql, const std::function<void(sqlite3_stmt*)>& row);
  // Column `col` of the current row as text ("" for NULL).
  static std::string text(sqlite3_stmt* st, int col);

 private:
  bool fail();  // records the connection's primary error code; returns false

  sqlite3* db_ = nullptr;
  bool ok_ = false;
  int error_ = SQLITE_OK;  // primary result code of the first failure
};

class VfsObserver {
 public:
  VfsObserver(SimVfs& vfs, std::string file);
  ~VfsObserver();
  VfsObserver(const VfsObserver&) = delete;
  VfsObserver& operator=(const VfsObserver&) = delete;

  bool read(const std::function<void(VfsObserver&)>& queries);
  // Inside read(): one query, row(stmt) per result row. False (and read() returns false) on failure.
  bool each(const char* sql, const std::function<void(sqlite3_stmt*)>& row);

 private:
  bool open();

  SimVfs& vfs_;
  std::string file_;
  sqlite3* db_ = nullptr;
  std::map<std::string, sqlite3_stmt*> statements_;
  bool ok_ = false;
};

}  // namespace fl::sim::storage
