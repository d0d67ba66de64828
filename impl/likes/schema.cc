#include "impl/likes/schema.h"
#include "impl/ports/assert.h"

namespace fl::likes {

std::vector<std::string> schema_statements(bool request_ids) {
  std::vector<std::string> out = {
      "CREATE TABLE IF NOT EXISTS assets ("
      " id INTEGER PRIMARY KEY,"
      " like_count INTEGER NOT NULL DEFAULT 0,"
      " like_version INTEGER NOT NULL DEFAULT 0)",
      "CREATE TABLE IF NOT EXISTS asset_likes ("
      " id INTEGER PRIMARY KEY AUTOINCREMENT,"
      " asset_id INTEGER NOT NULL REFERENCES assets(id) ON DELETE CASCADE,"
      " user_id INTEGER NOT NULL,"
      " star_id INTEGER NOT NULL,"
      " created_at INTEGER NOT NULL,"
      " CONSTRAINT uk_asset_likes_user_asset UNIQUE (asset_id, user_id))",
      "CREATE INDEX IF NOT EXISTS idx_asset_likes_user_star"
      " ON asset_likes(user_id, star_id, created_at DESC)",
      "CREATE INDEX IF NOT EXISTS idx_asset_likes_asset ON asset_likes(asset_id, created_at DESC)",
      "CREATE TABLE IF NOT EXISTS like_state ("
      " asset_id INTEGER NOT NULL,"
      " user_id INTEGER NOT NULL,"
      " liked INTEGER NOT NULL,"
      " version INTEGER NOT NULL,"
      " changed_ms INTEGER NOT NULL,"
      " PRIMARY KEY (asset_id, user_id)) WITHOUT ROWID",
      "CREATE INDEX IF NOT EXISTS idx_like_state_changed ON like_state(changed_ms)",
  };
  // LK-REQUEST-IDS: the request ids of the like/unlike writes applied (one row per app request).
  if (request_ids) out.push_back("CREATE TABLE IF NOT EXISTS like_requests (request_id INTEGER PRIMARY KEY)");
  return out;
}

std::vector<SqlStatement> seed_asset_statements(int64_t asset_count) {
  FL_ASSERT(asset_count >= 0);
  std::vector<SqlStatement> out;
  for (int64_t id = 1; id <= asset_count; ++id) {
    out.emplace_back("INSERT OR IGNORE INTO assets(id, like_count, like_version) VALUES (?, 0, 0)",
                     std::vector<SqlValue>{id});
  }
  return out;
}

}  // namespace fl::likes
