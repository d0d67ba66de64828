#include "impl/ports/log.h"

namespace fl {

const char* log_status_name(LogStatus s) {
  switch (s) {
    case LogStatus::kOk:
      return "ok";
    case LogStatus::kIndeterminate:
      return "indeterminate";
    case LogStatus::kUnavailable:
      return "unavailable";
    case LogStatus::kUnknownTopic:
      return "unknown_topic";
    case LogStatus::kInvalidArgument:
      return "invalid_argument";
    case LogStatus::kProducerFenced:
      return "producer_fenced";
    case LogStatus::kOutOfOrderSequence:
      return "out_of_order_sequence";
    case LogStatus::kCommitFailed:
      return "commit_failed";
    case LogStatus::kUnknownMember:
      return "unknown_member";
    case LogStatus::kRebalanceInProgress:
      return "rebalance_in_progress";
    case LogStatus::kNotInTransaction:
      return "not_in_transaction";
  }
  return "?";
}

std::string TopicPartition::describe() const { return topic + "/" + std::to_string(partition); }

std::string LogRecord::describe() const {
  return topic + "/" + std::to_string(partition) + "@" + std::to_string(offset) + " key=" + key + " value=" + value;
}

const char* half_resolution_name(HalfResolution r) {
  switch (r) {
    case HalfResolution::kCommit:
      return "COMMIT";
    case HalfResolution::kRollback:
      return "ROLLBACK";
    case HalfResolution::kUnknown:
      return "UNKNOWN";
  }
  return "?";
}

std::string HalfCheck::describe() const {
  return "half-check id=" + std::to_string(half_id) + " " + topic + " key=" + key + " check=" + std::to_string(check);
}

}  // namespace fl
