// LikeService: one replica of the seed's Social Service (002 sections 3 and 4).
//
// Variant spec (the seed's code as written, 002:L244-L400):
//   LikeAsset    EXISTS state key -> "already liked"; else pipeline {SET key 1 PX ttl NX; INCR
//                count} (not MULTI; the INCR runs whatever SETNX answered); then a detached task
//                (`go asyncWriteLike`) INSERTs the row and, whatever the INSERT said, adds 1 to
//                assets.like_count. The task dies with the process.
//   UnlikeAsset  mirror of LikeAsset (3.2): EXISTS -> "not liked"; pipeline {DEL; DECR}; detached
//                DELETE + `like_count - 1 WHERE like_count >= 1`.
//   count/state  cache-aside (3.3/3.4): GET; on a miss read the DB and SET the key (count: 1 h
//                TTL, state "1"/"0": 7 d TTL); on a Redis error fall back to the DB (6.3).
//   jobs         WarmupCache at boot and every warmup_interval (4.3); SyncLikeCountJob every
//                sync_interval = CheckConsistency of every asset (6.2: threshold 10, read errors
//                read as 0); after Redis errors clear, SyncLikeCountFromDB for every asset (6.3).
// Variant hardened: the DB is written first, atomically and idempotently, before the reply
//   (LIKE-1,2,3,6,7,11); Redis holds only versioned copies of DB values written through the
//   likes_put/likes_apply scripts (LIKE-4,5,8,9,10); a reconciler re-applies them every
//   reconcile_interval (LIKE-4,8,9). Details in service.cc, each marked with its invariant.
//
// Lifetime: create with std::make_shared; handlers and detached tasks hold a shared_ptr, so the
// object lives until the last frame of its process incarnation is destroyed. The Runtime, Redis
// and Sql passed in must outlive it. Not thread-safe (one process).
#pragma once

#include <coroutine>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "impl/likes/config.h"
#include "impl/likes/messages.h"
#include "impl/ports/redis.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"

namespace fl::likes {

class LikeService : public std::enable_shared_from_this<LikeService> {
 public:
  // `effects` may be null.
  LikeService(Runtime& runtime, Redis& redis, Sql& sql, LikesConfig config, EffectObserver* effects);
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
  Task<void> reconcile();  // hardened

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
  static Task<void> async_write_like(std::shared_ptr<LikeService> self, int64_t asset, int64_t user,
                                     int64_t star, uint64_t request_id);
  static Task<void> async_write_unlike(std::shared_ptr<LikeService> self, int64_t asset, int64_t user,
                                       uint64_t request_id);
  static Task<void> sync_all_from_db(std::shared_ptr<LikeService> self);

  Task<LikeReply> spec_like(int64_t asset, int64_t user, int64_t star, uint64_t request_id);
  Task<LikeReply> spec_unlike(int64_t asset, int64_t user, uint64_t request_id);
  Task<LikeReply> hardened_write(bool like, int64_t asset, int64_t user, int64_t star, uint64_t request_id);
  Task<LikeReply> spec_count(int64_t asset);
  Task<LikeReply> spec_state(int64_t asset, int64_t user);
  Task<LikeReply> hardened_count(int64_t asset);
  Task<LikeReply> hardened_state(int64_t asset, int64_t user);

  // hardened: what the DB did with one like/unlike, and the values to copy to the cache.
  struct TxOutcome {
    // kAppliedEarlier: nothing to do after an attempt whose outcome was unknown — that attempt
    // (or a concurrent request) committed the change.
    enum Kind { kApplied, kAppliedEarlier, kNoop, kFailed, kUnknown } kind = kFailed;
    std::string error;  // kFailed / kUnknown
    // kApplied after an attempt whose outcome is unknown: that attempt may have applied the
    // change too (then an opposite request undid it in between), so the effect log gets an
    // unknown effect besides this attempt's certain one.
    bool earlier_unknown = false;
    // After this operation, read in its transaction (valid unless kFailed / kUnknown).
    int64_t count = 0, version = 0, state_version = 0;
    bool liked = false;
  };
  // hardened group commit (LIKE-6 and LIKE-12): like/unlike requests waiting in this replica are
  // written in ONE idempotent SQLite transaction (one fsync); each request resumes after that
  // transaction committed (or failed), so an acknowledgement still follows durability.
  struct PendingWrite {
    bool like = true;
    int64_t asset = 0, user = 0, star = 0, now_ms = 0;
    uint64_t request_id = 0;
    TxOutcome outcome;
    bool done = false;
    // The requests suspended on this write: its own, plus duplicates of it that joined.
    std::vector<std::coroutine_handle<>> waiters;
  };
  struct PendingAwaiter {
    std::shared_ptr<PendingWrite> write;
    std::coroutine_handle<> handle;
    bool await_ready() const noexcept { return write->done; }
    void await_suspend(std::coroutine_handle<> h) {
      handle = h;
      write->waiters.push_back(h);
    }
    void await_resume() noexcept { handle = nullptr; }
    // A request destroyed while waiting (its process crashed) must never be resumed.
    ~PendingAwaiter();
  };
  // Queues a write for the next batch (request_id != 0: duplicates of it may join it).
  Task<TxOutcome> commit_write(bool like, int64_t asset, int64_t user, int64_t star, uint64_t request_id);
  static Task<TxOutcome> await_write(std::shared_ptr<PendingWrite> w);
  static Task<void> group_commit_loop(std::shared_ptr<LikeService> self);
  // One batch: every write's statements in one transaction, retried while the outcome is unknown
  // (every statement is idempotent). Fills each write's outcome.
  Task<void> commit_batch(std::vector<std::shared_ptr<PendingWrite>>& batch);
  static std::vector<SqlStatement> write_statements(const PendingWrite& w);
  // hardened: versioned cache write; returns whether Redis answered (written or skipped).
  Task<bool> put_versioned(std::string key, std::string version_key, std::string value, int64_t version,
                           int64_t ttl_ms);

  void observe(EffectKind kind, int64_t asset, int64_t user, int64_t value, bool certain,
               uint64_t request_id, const char* source, int64_t start_us);
  void intent(EffectKind kind, int64_t asset, int64_t user, int64_t value, uint64_t request_id, const char* source);
  // Tracks Redis health for spec's "sync from the DB after Redis recovers" (002:L418).
  void redis_result(const RedisReply& r);
  void log(const std::string& text) { runtime_.note(text); }

  Runtime& runtime_;
  Redis& redis_;
  Sql& sql_;
  LikesConfig config_;
  EffectObserver* effects_;
  bool redis_failed_ = false;
  std::vector<std::shared_ptr<PendingWrite>> pending_;  // hardened: writes for the next batch
  bool committer_running_ = false;
  // hardened: writes queued or in a batch, by request id; ids answered "failed" (bounded, oldest
  // forgotten first). A duplicated request (the network delivers some messages twice) joins its
  // original or gets its "failed" again: "failed" means certainly not applied, so no copy of a
  // failed request may be applied later (LIKE-6/7, LIKE-11).
  std::map<uint64_t, std::shared_ptr<PendingWrite>> inflight_;
  std::set<uint64_t> failed_requests_;
  std::deque<uint64_t> failed_order_;
  std::vector<std::shared_ptr<void>> owned_;
};

}  // namespace fl::likes
