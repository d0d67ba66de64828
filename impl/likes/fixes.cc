#include "impl/likes/fixes.h"

#include <cassert>

namespace fl::likes {

const std::vector<FixInfo>& likes_fixes() {
  static const std::vector<FixInfo> kFixes = [] {
    std::vector<FixInfo> f = {
        {"LK-DB-FIRST",
         "002:L218-L229 (LikeAsset: Redis first, then go asyncWriteLike)",
         {"LIKE-2", "LIKE-3", "LIKE-6", "LIKE-7", "LIKE-11"},
         "like/unlike commit row, counter and state in one idempotent DB transaction before the reply, then copy "
         "the DB's values to Redis; no blind INCR/DECR, no detached writer that dies with the process"},
        {"LK-COMMIT-TIME-VERSION",
         "002:L257 (IncrementLikeCount)",
         {"LIKE-4", "LIKE-9"},
         "like_version = max(v+1, commit time): a DB that lost an unsynced commit never reissues a version Redis "
         "already holds with the lost value"},
        {"LK-VERSIONED-STATE-FILL",
         "002:L195 (3.4 fill)",
         {"LIKE-8"},
         "the 3.4 fill of a like state is a versioned write: a stale read never overwrites a concurrent like/unlike"},
        {"LK-RECONCILE",
         "002:L388-L390 (CheckConsistency)",
         {"LIKE-4", "LIKE-8", "LIKE-10"},
         "the sync job re-applies every count (and recently changed states) from the DB with version guards, "
         "instead of CheckConsistency's threshold of 10 and read errors read as 0"},
        {"LK-CACHE-ACK",
         "002:L223-L231 (pipe.Exec once, then return nil)",
         {"LIKE-8", "LIKE-9"},
         "retry the cache update after the commit, and answer indeterminate, not ok, when it still failed"},
        {"LK-IDEMPOTENT-INSERT",
         "002:L125 (plain INSERT)",
         {"LIKE-1", "LIKE-6"},
         "INSERT ... ON CONFLICT DO NOTHING: a like of an already-liked pair changes nothing instead of failing"},
        {"LK-VERSIONED-COUNT-WRITES",
         "002:L174, L278, L288 (3.3 fill, SyncLikeCountFromDB, WarmupCache: plain SET)",
         {"LIKE-4", "LIKE-8", "LIKE-9"},
         "the count fill, the sync from the DB and the warm-up write through the version guard: a count read "
         "before a concurrent like/unlike never overwrites that write's value and then sits under its version"},
        {"LK-REQUEST-IDS",
         "002:L111 (已点赞 → 返回错误（防重复）: duplicates judged by state only)",
         {"LIKE-2", "LIKE-7"},
         "the write transaction records the app's request id and applies a request id once: a copy delivered late "
         "(an at-least-once transport, a retry overtaken by the app's next tap) never re-applies a like after the "
         "user's later unlike"},
        {"LK-FILL-LEASE",
         "002:L168-L174, L188-L195 (3.3/3.4: a miss reads the DB, then writes the cache)",
         {"LIKE-4", "LIKE-8", "LIKE-9", "LIKE-10"},
         "a versioned fill or repair takes a lease before it reads the DB and writes only while the lease holds "
         "(every like/unlike deletes it): under an eviction policy the version floor is a key Redis may evict, "
         "the lease's absence refuses"},
    };
    return f;
  }();
  return kFixes;
}

}  // namespace fl::likes
