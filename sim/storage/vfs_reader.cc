#include "sim/storage/vfs_reader.h"

namespace fl::sim::storage {

VfsReader::VfsReader(SimVfs& vfs, const std::string& file, bool quiet) {
  if (quiet) {
    SimVfsOptions o = vfs.options();
    o.read_error_probability = o.write_error_probability = o.sync_error_probability = 0;
    vfs.set_options(o);
  }
  ok_ = sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READONLY, vfs.vfs_name()) == SQLITE_OK;
}

VfsReader::~VfsReader() { sqlite3_close(db_); }

bool VfsReader::each(const char* sql, const std::function<void(sqlite3_stmt*)>& row) {
  if (!ok_) return false;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK) {
    sqlite3_finalize(st);
    return ok_ = false;
  }
  int rc = SQLITE_DONE;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st);
  sqlite3_finalize(st);
  return ok_ = rc == SQLITE_DONE;
}

std::string VfsReader::text(sqlite3_stmt* st, int col) {
  const unsigned char* t = sqlite3_column_text(st, col);
  return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
}

}  // namespace fl::sim::storage
