// LikeService: one replica of the seed's Social Service (002 sections 3 and 4).
//
// With no fix (spec, the seed's code as written, 002:L206-L391):
//   LikeAsset    EXISTS state key -> "already liked"; else pipeline {SET key 1 PX ttl NX; INCR
//                count} (not MULTI; the INCR runs whatever SETNX answered); then a detached task
//                (`go s.asyncWriteLike`, 002:L229) INSERTs the row and, whatever the INSERT said,
//                adds 1 to assets.like_count. The task dies with the process.
//   UnlikeAsset  mirror of LikeAsset (3.2): EXISTS -> "not liked"; pipeline {DEL; DECR}; detached
//                DELETE + `like_count - 1 WHERE like_count >= 1`.
//   count/state  cache-aside (3.3/3.4): GET; on a miss read the DB and SET the key (count: 1 h
//                TTL, state "1"/"0": 7 d TTL); on a Redis error fall back to the DB (6.3).
//   jobs         WarmupCache at boot and every warmup_interval (4.3); every sync_interval the
//                SyncLikeCountJob = CheckConsistency of every asset (6.2: threshold 10, read errors
//                read as 0) and the retry of failed DB writes (002:L240 "定时任务补偿", L406
//                "定时任务重试"); after Redis errors clear, SyncLikeCountFromDB for every asset
//                (002:L401 "Redis 恢复后，从数据库同步数据").
// Each fix of impl/likes/fixes.h changes one of these where `config.has(LikesFix::kX)` is asked.
//
#pragma once

#include <coroutine>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "impl/likes/config.h"
#include "impl/likes/fixes.h"
#include "impl/likes/messages.h"
#include "impl/ports/redis.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"

namespace fl::likes {

class LikeService : public std::enable_shared_from_this<LikeService> {
 public:
  LikeService(Runtime& runtime, Redis& redis, Sql& sql, LikesConfig config);
  LikeService(const LikeService&) = delete;
  LikeService& operator=(const LikeService&) = delete;

  Task<LikeReply> like(int64_t asset, int64_t user, int64_t star, uint64_t request_id);
  Task<LikeReply> unlike(int64_t asset, int64_t user, int64_t star, uint64_t request_id);
  Task<LikeReply> count(int64_t asset);
  Task<LikeReply> state(int64_t asset, int64_t user);

  // Background work (each one pass; run_jobs() loops them).
  Task<void> warmup_cache();
  Task<void> check_consistency(int64_t asset);
  Task<void> sync_like_count_from_db(int64_t asset);
  Task<void> sync_like_count_job();
  Task<void> reconcile();            // LK-RECONCILE
  Task<void> retry_failed_writes();  // 002:L240, L406

  // Registers the Rpc handler for kService and spawns the background loops on the runtime.
  void start(Rpc& rpc);

  const LikesConfig& config() const { return config_; }
  // Keeps `owned` (e.g. the Redis/Sql clients this service uses) alive as long as the service.
  void keep_alive(std::shared_ptr<void> owned) { owned_.push_back(std::move(owned)); }

 private:
  static Task<MessagePtr> handle(std::shared_ptr<LikeService> self, MessagePtr request);
  static Task<void> warmup_loop(std::shared_ptr<LikeService> self);
  static Task<void> sync_loop(std::shared_ptr<LikeService> self);
  static Task<void> reconcile_loop(std::shared_ptr<LikeService> self);
  static Task<void> async_write_like(std::shared_ptr<LikeService> self, int64_t asset, int64_t user, int64_t star,
                                     uint64_t request_id);
  static Task<void> async_write_unlike(std::shared_ptr<LikeService> self, int64_t asset, int64_t user,
                                       uint64_t request_id);
  static Task<void> sync_all_from_db(std::shared_ptr<LikeService> self);

  Task<LikeReply> spec_like(int64_t asset, int64_t user, int64_t star, uint64_t request_id);
  Task<LikeReply> spec_unlike(int64_t asset, int64_t user, uint64_t request_id);
  Task<LikeReply> db_first_write(bool like, int64_t asset, int64_t user, int64_t star, uint64_t request_id);
  // A count or state the seed writes with a plain SET (fills, warm-up, sync); `versioned` (a fix)
  // writes it through likes_put instead, or with a `lease` (LK-FILL-LEASE) through likes_fill, which
  // writes only while `lease_key` holds the lease's token (an empty token: Redis refused the lease,
  // nothing is written). Returns whether Redis answered.
  Task<bool> cache_write(bool versioned, std::string key, std::string version_key, std::string value, int64_t version,
                         int64_t ttl_ms, std::string lease_key = {}, std::optional<std::string> lease = std::nullopt);
  // LK-FILL-LEASE, for a versioned write that reads the DB first: takes one lease on every key of
  // `lease_keys` before the read and returns its token ("" when Redis did not take it); nullopt
  // when there is no lease (the fix is off, or the write is not versioned).
  Task<std::optional<std::string>> take_lease(bool versioned, std::vector<std::string> lease_keys);
  std::vector<std::string> count_lease_keys() const;  // of assets 1..asset_count
  // A DB write of the seed's async writers that failed: kept for the compensating job.
  struct FailedWrite {
    SqlStatement statement;
    int attempts = 0;
  };
  // Runs one async-writer statement; a failure is logged and kept for the job (002:L240-L241).
  Task<void> async_statement(SqlStatement statement, const char* what);

  // LK-DB-FIRST: what the DB did with one like/unlike, and the values to copy to the cache.
  struct TxOutcome {
    // kRepeated (LK-REQUEST-IDS): this request id was applied before; nothing changed now.
    enum Kind { kApplied, kNoop, kRepeated, kFailed, kUnknown } kind = kFailed;
    std::string error;       // kFailed / kUnknown
    bool permanent = false;  // kFailed for good (no such asset): no copy can ever apply it
    // After this operation, read in its transaction (valid unless kFailed / kUnknown).
    int64_t count = 0, version = 0, state_version = 0;
    bool liked = false;
  };
  // LK-DB-FIRST's group commit (LIKE-6 and LIKE-12): like/unlike requests waiting in this replica are
  // written in ONE idempotent SQLite transaction (one fsync); each request resumes after that
  // transaction committed (or failed), so an acknowledgement still follows durability.
  struct PendingWrite {
    bool like = true;
    int64_t asset = 0, user = 0, star = 0, now_ms = 0;
    uint64_t request_id = 0;
    TxOutcome outcome;
    bool done = false;
    // The requests suspended on this write: its own, plus duplicates of it that joined.
    std::vector<Runtime::Suspended> waiters;
  };
  struct PendingAwaiter {
    std::shared_ptr<PendingWrite> write;
    Runtime* runtime = nullptr;
    std::coroutine_handle<> handle;
    bool await_ready() const noexcept { return write->done; }
    void await_suspend(std::coroutine_handle<> h) {
      handle = h;
      write->waiters.push_back(runtime->capture(h));
    }
    void await_resume() noexcept { handle = nullptr; }
    // A request destroyed while waiting (its process crashed) must never be resumed.
    ~PendingAwaiter();
  };
  // Queues a write for the next batch (request_id != 0: duplicates of it may join it).
  Task<TxOutcome> commit_write(bool like, int64_t asset, int64_t user, int64_t star, uint64_t request_id);
  static Task<TxOutcome> await_write(std::shared_ptr<PendingWrite> w, Runtime* runtime);
  static Task<void> group_commit_loop(std::shared_ptr<LikeService> self);
  // One batch: every write's statements in one transaction (every statement is idempotent). Fills
  // each write's outcome.
  Task<void> commit_batch(std::vector<std::shared_ptr<PendingWrite>>& batch);
  std::vector<SqlStatement> write_statements(const PendingWrite& w) const;
  // LK-RECONCILE: the cached versions of `keys` (nullopt: absent or unreadable), read before the DB.
  Task<std::vector<std::optional<int64_t>>> cached_versions(std::vector<std::string> keys);
  // likes_put, one version above `cached_before` when that is newer than the DB's `version` (a
  // version the DB lost).
  Task<bool> put_repairing(std::string key, std::string version_key, std::string value, int64_t version, int64_t ttl_ms,
                           std::optional<int64_t> cached_before, std::string lease_key,
                           std::optional<std::string> lease);
  // Versioned cache write; returns whether Redis answered (written or skipped).
  Task<bool> put_versioned(std::string key, std::string version_key, std::string value, int64_t version,
                           int64_t ttl_ms);

  // Tracks Redis health for the seed's "sync from the DB after Redis recovers" (002:L401).
  void redis_result(const RedisReply& r);
  void log(const std::string& text) { runtime_.note(text); }

  Runtime& runtime_;
  Redis& redis_;
  Sql& sql_;
  LikesConfig config_;
  bool redis_failed_ = false;
  std::vector<FailedWrite> failed_writes_;              // 002:L240 "记录日志，定时任务补偿"
  std::vector<std::shared_ptr<PendingWrite>> pending_;  // LK-DB-FIRST: writes for the next batch
  bool committer_running_ = false;
  uint64_t leases_taken_ = 0;  // LK-FILL-LEASE: numbers this incarnation's lease tokens
  std::vector<std::shared_ptr<void>> owned_;
};

}  // namespace fl::likes
