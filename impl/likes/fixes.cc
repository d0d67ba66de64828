#include "impl/likes/fixes.h"

#include <cassert>

namespace fl::likes {

const std::vector<FixInfo>& likes_fixes() {
  static const std::vector<FixInfo> kFixes = [] {
    std::vector<FixInfo> f = {
        {"LK-DB-FIRST", "002:L218-L229 (LikeAsset: Redis first, then go asyncWriteLike)", {"LIKE-2", "LIKE-3", "LIKE-6", "LIKE-7", "LIKE-11"},
         "like/unlike commit row, counter and state in one idempotent DB transaction before the reply, then copy "
         "the DB's values to Redis; no blind INCR/DECR, no detached writer that dies with the process"},
        {"LK-COMMIT-TIME-VERSION", "002:L257 (IncrementLikeCount)", {"LIKE-4", "LIKE-9"},
         "like_version = max(v+1, commit time): a DB that lost an unsynced commit never reissues a version Redis "
         "already holds with the lost value"},
        {"LK-VERSIONED-COUNT-FILL", "002:L174 (3.3 fill)", {"LIKE-8", "LIKE-9"},
         "the 3.3 cache-aside fill of a count is a versioned write: it never overwrites a newer value"},
        {"LK-VERSIONED-STATE-FILL", "002:L195 (3.4 fill)", {"LIKE-8"},
         "the 3.4 fill of a like state is a versioned write: a stale read never overwrites a concurrent like/unlike"},
        {"LK-VERSIONED-WARMUP", "002:L288 (WarmupCache SET)", {"LIKE-8", "LIKE-10"},
         "WarmupCache writes counts with a version guard instead of a plain SET"},
        {"LK-VERSIONED-SYNC", "002:L278 (SyncLikeCountFromDB SET)", {"LIKE-8", "LIKE-10"},
         "SyncLikeCountFromDB (also run after Redis recovers, 002:L401) writes with a version guard"},
        {"LK-RECONCILE", "002:L388-L390 (CheckConsistency)", {"LIKE-4", "LIKE-8", "LIKE-10"},
         "the sync job re-applies every count (and recently changed states) from the DB with version guards, "
         "instead of CheckConsistency's threshold of 10 and read errors read as 0"},
        {"LK-CACHE-ACK", "002:L231 (LikeAsset returns nil)", {"LIKE-8", "LIKE-9"},
         "answer indeterminate, not ok, when the cache could not be updated after the commit"},
        {"LK-CACHE-RETRY", "002:L223-L226 (pipe.Exec error returned)", {"LIKE-8"},
         "retry the versioned cache update after the commit before giving up"},
        {"LK-IDEMPOTENT-INSERT", "002:L125 (plain INSERT)", {"LIKE-1", "LIKE-6"},
         "INSERT ... ON CONFLICT DO NOTHING: a like of an already-liked pair changes nothing instead of failing"},
        {"LK-FAILED-IDS", "002:L240-L241 (asyncWriteLike: log the error)", {"LIKE-6", "LIKE-7"},
         "remember request ids answered 'failed' so a late copy of one is never applied"},
        {"LK-JOIN-DUPLICATE", "002:L229 (go asyncWriteLike per request)", {"LIKE-2", "LIKE-11"},
         "a copy of a request still in flight waits for the original's outcome instead of writing again"},
    };
    return f;
  }();
  return kFixes;
}

}  // namespace fl::likes
