// Likes configuration: the fixes a run enables (impl/likes/fixes.h; none = the seed as written) and
// every duration/threshold the seed (002) fixes, with units.
//
// With no fix the service follows the seed's code (002 section 4) and, where it has none, its prose
// (docs/systems/likes.md lists each prose choice). Every knob has the seed's value by default;
// scenarios shorten TTLs and intervals through params (harness/systems/likes/adapter.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "impl/likes/fixes.h"

namespace fl::likes {

struct LikesConfig {
  LikesFixes fixes = LikesFixes::spec();
  // 002:L90-92 and L221 `SetNX(ctx, likeKey, "1", 7*24*time.Hour)`: the like-state key TTL.
  int64_t state_ttl_ms = 7LL * 24 * 3600 * 1000;
  // 002:L84-86: the count cache "TTL: 1小时" — used by the cache-aside fill of 3.3.
  int64_t count_fill_ttl_ms = 3600LL * 1000;
  // 002:L358-363 SyncLikeCountJob / 6.2 CheckConsistency: the seed gives no period; 60 s. The same job
  // retries failed DB writes ("定时任务重试", 002:L406).
  int64_t sync_interval_ms = 60'000;
  // 002:L388 `abs(redisCount - dbCount) > 10`.
  int64_t consistency_threshold = 10;
  // 002:L284 `GetHotAssets(100)`: warm-up covers assets with like_count > 100.
  int64_t hot_threshold = 100;
  // 002:L281 "定时任务" (a scheduled job) without a period; 5 minutes. Also runs at boot.
  int64_t warmup_interval_ms = 300'000;
  // Assets 1..asset_count exist (the jobs iterate them; `assets` is pre-populated).
  int64_t asset_count = 4;

  // 002:L406 "定时任务重试", 002:L407 "如果重试失败，人工介入": how often the job retries one failed DB write
  // before leaving it to a human (the seed gives no number; 3).
  int compensation_attempts = 3;

  // ---- used by fixes only.
  // LK-RECONCILE: states changed within this window are re-applied with the counts.
  int64_t reconcile_window_ms = 300'000;
  int redis_attempts = 3;  // LK-CACHE-ACK: cache apply attempts after the commit (LIKE-8)
  int64_t retry_backoff_ms = 20;
  // LK-DB-FIRST's group commit: at most this many like/unlike requests share one DB transaction
  // (LIKE-12).
  int group_commit_max_ops = 256;
  // LK-FILL-LEASE: a lease lives this long; a fill or repair slower than that is refused (it
  // costs one more miss, never a stale value).
  int64_t fill_lease_ms = 10'000;

  bool has(LikesFix f) const { return fixes.has(f); }
};

// Redis key names, exactly as the seed writes them (002:L84, L90).
std::string like_key(int64_t asset, int64_t user);  // asset:like:{asset}:{user}
std::string count_key(int64_t asset);               // asset:like_count:{asset}
// Versioned writes (LK-VERSIONED-*, LK-DB-FIRST): the DB version the cached value was taken at.
std::string like_version_key(int64_t asset, int64_t user);  // asset:like_ver:{asset}:{user}
std::string count_version_key(int64_t asset);               // asset:like_count_ver:{asset}
// LK-FILL-LEASE: the lease a fill or repair takes before it reads the DB.
std::string like_lease_key(int64_t asset, int64_t user);  // asset:like_lease:{asset}:{user}
std::string count_lease_key(int64_t asset);               // asset:like_count_lease:{asset}

}  // namespace fl::likes
