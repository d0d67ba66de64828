#include "sim/storage/vfs_reader.h"

namespace fl::sim::storage {

VfsReader::VfsReader(SimVfs& vfs, const std::string& file, bool quiet) {
  if (quiet) {
    SimVfsOptions o = vfs.options();
    o.read_error_probability = o.write_error_probability = o.sync_error_probability = 0;
    vfs.set_options(o);
  }
  ok_ = sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READONLY | kSimConnectionFlags, vfs.vfs_name()) == SQLITE_OK ||
        fail();
}

bool VfsReader::fail() {
  if (error_ == SQLITE_OK) error_ = db_ != nullptr ? (sqlite3_errcode(db_) & 0xff) : SQLITE_NOMEM;
  return ok_ = false;
}

VfsReader::~VfsReader() { sqlite3_close(db_); }

namespace {
// Steps `st` to its end, calling row() per row; leaves it reset for the next run.
bool step_all(sqlite3_stmt* st, const std::function<void(sqlite3_stmt*)>& row) {
  int rc = SQLITE_DONE;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st);
  sqlite3_reset(st);
  return rc == SQLITE_DONE;
}
}  // namespace

bool VfsReader::each(const char* sql, const std::function<void(sqlite3_stmt*)>& row) {
  if (!ok_) return false;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK) {
    sqlite3_finalize(st);
    return fail();
  }
  ok_ = step_all(st, row) || fail();
  sqlite3_finalize(st);
  return ok_;
}

VfsObserver::VfsObserver(SimVfs& vfs, std::string file) : vfs_(vfs), file_(std::move(file)) {}

VfsObserver::~VfsObserver() {
  for (auto& [sql, st] : statements_) sqlite3_finalize(st);
  sqlite3_close(db_);
}

bool VfsObserver::open() {
  if (db_ != nullptr) return true;
  if (!vfs_.exists(file_)) return false;
  if (sqlite3_open_v2(file_.c_str(), &db_, SQLITE_OPEN_READONLY | kSimConnectionFlags, vfs_.inspection_vfs_name()) !=
      SQLITE_OK) {
    sqlite3_close(db_);
    db_ = nullptr;
    return false;
  }
  // Sorting and grouping stay in memory: the inspection door opens no temporary files.
  if (sqlite3_exec(db_, "PRAGMA temp_store=MEMORY", nullptr, nullptr, nullptr) == SQLITE_OK) return true;
  sqlite3_close(db_);
  db_ = nullptr;
  return false;
}

bool VfsObserver::read(const std::function<void(VfsObserver&)>& queries) {
  ok_ = open();
  if (!ok_) return false;
  vfs_.refresh_inspection();
  queries(*this);
  // Pages cached now might not be the next instant's: the next read fetches them again.
  sqlite3_db_release_memory(db_);
  return ok_;
}

bool VfsObserver::each(const char* sql, const std::function<void(sqlite3_stmt*)>& row) {
  if (!ok_) return false;
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr) != SQLITE_OK) {
      sqlite3_finalize(st);
      return ok_ = false;
    }
    it = statements_.emplace(sql, st).first;
  }
  return ok_ = step_all(it->second, row);
}

std::string VfsReader::text(sqlite3_stmt* st, int col) {
  const unsigned char* t = sqlite3_column_text(st, col);
  return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
}

}  // namespace fl::sim::storage
