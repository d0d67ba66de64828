// The social service's API as Rpc messages (002 sections 3.1-3.4). What the service did to the
// stores is never reported by the service: the judges read the Redis and SQL servers' own logs.
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
  int64_t value = 0;   // count, or state (1 liked / 0 not) for queries
  std::string detail;  // the error text, or where the answer came from ("redis", "db")
  std::string describe() const;
};

}  // namespace fl::likes
