// LogClient: the Log port (impl/ports/log.h) over Rpc calls to a BrokerServer.
//
// Transport outcomes map onto LogStatus as the port says: a call that timed out or was reset is
// kIndeterminate (the broker may have executed it: a lost produce ack leaves the record maybe
// stored), a call nobody served is kUnavailable (certainly not executed).
// - Producers learn a topic's partition count once (metadata) and choose the partition with the
//   broker's stable partition_for_key, so they can number records per partition.
// - An idempotent producer retries an indeterminate send up to `retries` times with the same
//   sequence number (the broker de-duplicates). When the last try is still indeterminate it
//   takes a fresh producer id before its next send (Kafka bumps the epoch, KIP-360), because the
//   broker may or may not have seen that sequence number.
// - A consumer's fetch positions live in the client (volatile, lost with the process); poll()
//   sends them with each request, which is also the heartbeat. An evicted consumer's poll
//   rejoins the group and reports its partitions as revoked (onPartitionsLost).
// REQUIRES: the Runtime and Rpc outlive the client and everything it made.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "impl/ports/log.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"

namespace fl::sim::log {

class LogClient final : public fl::Log {
 public:
  LogClient(fl::Runtime& runtime, fl::Rpc& rpc, std::string service = "log");
  std::unique_ptr<fl::LogProducer> producer(const fl::ProducerOptions& options) override;
  std::unique_ptr<fl::LogConsumer> consumer(const fl::ConsumerOptions& options) override;

 private:
  fl::Runtime& runtime_;
  fl::Rpc& rpc_;
  std::string service_;
};

}  // namespace fl::sim::log
