#include "impl/likes/messages.h"

namespace fl::likes {

const char* op_name(Op op) {
  switch (op) {
    case Op::kLike:
      return "like";
    case Op::kUnlike:
      return "unlike";
    case Op::kCount:
      return "count";
    case Op::kState:
      return "state";
  }
  return "?";
}

const char* reply_status_name(ReplyStatus s) {
  switch (s) {
    case ReplyStatus::kOk:
      return "ok";
    case ReplyStatus::kAlready:
      return "already";
    case ReplyStatus::kFailed:
      return "failed";
    case ReplyStatus::kUnknown:
      return "unknown";
  }
  return "?";
}

std::string LikeRequest::describe() const {
  std::string s = std::string(op_name(op)) + " asset=" + std::to_string(asset);
  if (op != Op::kCount) s += " user=" + std::to_string(user);
  s += " req=" + std::to_string(request_id);
  return s;
}

std::string LikeReply::describe() const {
  std::string s = reply_status_name(status);
  s += " value=" + std::to_string(value);
  if (!detail.empty()) s += " (" + detail + ")";
  return s;
}

}  // namespace fl::likes
