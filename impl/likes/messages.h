// The social service's API as Rpc messages (002 sections 3.1-3.4), and the effect log through
// which a service reports every counter/row/cache change it makes (read by properties/likes).
#pragma once

#include <cstdint>
#include <string>

namespace fl::likes {

inline constexpr const char* kService = "likes";

enum class Op : uint8_t { kLike, kUnlike, kCount, kState };
const char* op_name(Op op);

struct LikeRequest {
  Op op = Op::kLike;
  int64_t asset = 0;
  int64_t user = 0;
  int64_t star = 0;
  uint64_t request_id = 0;  // the same for a retried request
  std::string describe() const;
};

enum class ReplyStatus : uint8_t {
  kOk,       // done (like/unlike applied; query answered in `value`)
  kAlready,  // like on a liked asset ("already liked") / unlike on a not-liked one ("not liked")
  kFailed,   // certainly no effect (an error before any write)
  kUnknown,  // an error after a write may have happened: indeterminate
};
const char* reply_status_name(ReplyStatus s);

struct LikeReply {
  ReplyStatus status = ReplyStatus::kOk;
  int64_t value = 0;     // count, or state (1 liked / 0 not) for queries
  std::string detail;    // the error text, or where the answer came from ("redis", "db")
  std::string describe() const;
};

// ---- Effects: what the service did to the stores, for the checkers (an audit log).
enum class EffectKind : uint8_t {
  kRedisCountDelta,   // INCR/DECR of asset:like_count (delta +1/-1)
  kDbCountDelta,      // UPDATE assets.like_count +-1 that changed a row
  kRedisCountWrite,   // a fill / warm-up / sync / consistency write of an absolute count
  kRedisStateWrite,   // a fill of asset:like:{a}:{u} (value 1/0)
};
const char* effect_kind_name(EffectKind k);

struct Effect {
  EffectKind kind = EffectKind::kRedisCountDelta;
  int64_t asset = 0;
  int64_t user = 0;          // 0 for count writes
  int64_t value = 0;         // delta, or the absolute value written
  bool certain = true;       // false: the command may or may not have executed
  uint64_t request_id = 0;   // 0 for background jobs
  std::string source;        // "like", "unlike", "fill", "warmup", "sync", "consistency", "reconcile"
  int64_t start_us = 0;      // when the write was sent (the writer's local clock)
  // An intent is reported right before a counter write is sent; the outcome (certain or not)
  // follows unless the process dies first. An intent without an outcome = unknown effect; a
  // certain delta of 0 is the outcome "the write certainly changed nothing".
  bool intent = false;
  std::string describe() const;
};

class EffectObserver {
 public:
  virtual ~EffectObserver() = default;
  virtual void on_effect(const Effect& e) = 0;
};

}  // namespace fl::likes
