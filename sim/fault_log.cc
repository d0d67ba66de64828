#include "sim/fault_log.h"

namespace fl::sim {

const char* fault_kind_name(FaultKind k) {
  switch (k) {
    case FaultKind::kCrash:
      return "crash";
    case FaultKind::kRestart:
      return "restart";
    case FaultKind::kPause:
      return "pause";
    case FaultKind::kPartition:
      return "partition";
    case FaultKind::kHeal:
      return "heal";
    case FaultKind::kClog:
      return "clog";
    case FaultKind::kReset:
      return "reset";
    case FaultKind::kClockJump:
      return "clock-jump";
    case FaultKind::kClockDrift:
      return "clock-drift";
    case FaultKind::kMessageLost:
      return "message-lost";
    case FaultKind::kStorageError:
      return "storage-error";
    case FaultKind::kRedisError:
      return "redis-error";
    case FaultKind::kEviction:
      return "eviction";
    case FaultKind::kLateDuplicate:
      return "late-duplicate";
    case FaultKind::kDelayed:
      return "delayed";
    case FaultKind::kCallBroken:
      return "call-broken";
  }
  return "?";
}

std::string FaultRecord::describe() const {
  std::string out = std::string(fault_kind_name(kind)) + " at " + std::to_string(time_us) + "us";
  if (!process.empty())
    out += " " + process;
  else if (!node.empty())
    out += " " + node;
  if (!peer_process.empty())
    out += " -> " + peer_process;
  else if (!peer_node.empty())
    out += (one_way ? " -> " : " <-> ") + peer_node;
  if (duration_us > 0) out += " for " + std::to_string(duration_us) + "us";
  if (value != 0) out += " value " + std::to_string(value);
  if (kind == FaultKind::kEviction) {
    out += " key " + detail;
  } else if (!detail.empty()) {
    out += " (" + detail + ")";
  }
  if (cause != 0) out += " of operation #" + std::to_string(cause);
  if (!message.empty()) out += ": " + message;
  return out;
}

}  // namespace fl::sim
