#include "impl/ports/rpc.h"

namespace fl {

const char* rpc_status_name(RpcStatus s) {
  switch (s) {
    case RpcStatus::kOk:
      return "ok";
    case RpcStatus::kTimeout:
      return "timeout";
    case RpcStatus::kReset:
      return "reset";
    case RpcStatus::kUnavailable:
      return "unavailable";
  }
  return "?";
}

}  // namespace fl
