// Likes configuration: the variant and every duration/threshold the seed (002) fixes, with units.
//
// `spec` follows the seed's code (002 section 4) and, where it has none, its prose; `hardened`
// adds the corrections listed in docs/systems/likes.md. Every knob has the seed's value by default;
// scenarios shorten TTLs and intervals through params (harness/systems/likes.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fl::likes {

enum class Variant : uint8_t { kSpec, kHardened };
const char* variant_name(Variant v);
std::optional<Variant> parse_variant(std::string_view name);

struct LikesConfig {
  Variant variant = Variant::kSpec;
  // 002:L104-106 and L260 `SetNX(ctx, likeKey, "1", 7*24*time.Hour)`: the like-state key TTL.
  int64_t state_ttl_ms = 7LL * 24 * 3600 * 1000;
  // 002:L98-101: the count cache "TTL: 1 hour" — used by the cache-aside fill of 3.3.
  int64_t count_fill_ttl_ms = 3600LL * 1000;
  // 002:L368-376 SyncLikeCountJob / 6.2 CheckConsistency: the seed gives no period; 60 s.
  int64_t sync_interval_ms = 60'000;
  // 002:L391 `abs(redisCount - dbCount) > 10`.
  int64_t consistency_threshold = 10;
  // 002:L318 `GetHotAssets(100)`: warm-up covers assets with like_count > 100.
  int64_t hot_threshold = 100;
  // 002:L313 "定时任务" (a scheduled job) without a period; 5 minutes. Also runs at boot.
  int64_t warmup_interval_ms = 300'000;
  // Assets 1..asset_count exist (the jobs iterate them; `assets` is pre-populated).
  int64_t asset_count = 4;

  // ---- hardened only.
  // Reconciliation period: counts of every asset and states changed within the window are
  // re-applied to Redis with version guards (LIKE-4, LIKE-8, LIKE-9, LIKE-10).
  int64_t reconcile_interval_ms = 1'000;
  int64_t reconcile_window_ms = 300'000;
  int db_attempts = 4;             // idempotent DB transaction retries (LIKE-6)
  int redis_attempts = 3;          // cache apply retries after the DB commit (LIKE-8)
  int64_t retry_backoff_ms = 20;
  // Group commit: at most this many like/unlike requests share one DB transaction (LIKE-12).
  int group_commit_max_ops = 256;

  bool hardened() const { return variant == Variant::kHardened; }
};

// Redis key names, exactly as the seed writes them (002:L95, L104).
std::string like_key(int64_t asset, int64_t user);     // asset:like:{asset}:{user}
std::string count_key(int64_t asset);                  // asset:like_count:{asset}
// hardened: the DB version the cached value was taken at.
std::string like_version_key(int64_t asset, int64_t user);  // asset:like_ver:{asset}:{user}
std::string count_version_key(int64_t asset);               // asset:like_count_ver:{asset}

}  // namespace fl::likes
