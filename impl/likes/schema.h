// The SQL schema of 002 section 2.2.1, in SQLite, plus the hardened variant's version columns.
//
// - assets(id, like_count, like_version): like_count is the seed's redundant counter
//   (002:L50); like_version (LK-DB-FIRST) grows by one at every effective like/unlike of the asset
//   and orders cache writes.
// - asset_likes: one row per liked (asset,user); UNIQUE uk_asset_likes_user_asset(asset_id,
//   user_id) (002:L62), idx_asset_likes_user_star (L65), idx_asset_likes_asset (L68), the
//   foreign key to assets with ON DELETE CASCADE (L71).
// - like_state (LK-DB-FIRST): the latest state and version of every (asset,user) ever touched, so
//   the reconciler can repair state keys (it never shrinks; liked=0 rows are tombstones).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/ports/sql.h"

namespace fl::likes {

// CREATE TABLE / INDEX statements, idempotent (IF NOT EXISTS), in order.
// request_ids: LK-REQUEST-IDS's table of applied request ids too.
std::vector<std::string> schema_statements(bool request_ids = false);
// Inserts assets 1..asset_count with like_count 0 (INSERT OR IGNORE).
std::vector<SqlStatement> seed_asset_statements(int64_t asset_count);

}  // namespace fl::likes
