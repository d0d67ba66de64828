// The broker as a simulated process, and its wire protocol.
//
// BrokerServer owns a Broker that stands for the broker's disk: it outlives the process's
// incarnations. boot() (the process's BootFn) recovers the broker (Broker::restart: volatile
// state dropped, acked = synced data kept) on every incarnation after the first, serves the
// Rpc service (default "log") and runs a tick loop, so session timeouts, transaction timeouts
// and retention happen even when no request arrives; after each tick it sends the queued half
// message check-backs (one-way HalfCheck messages to the producers' check services). The broker's clock is the local clock of
// the node it runs on (Broker ignores a clock that jumps backwards).
//
// LogRequest / LogReply are the messages; one flat struct each (the fields a kind does not use
// stay empty). describe() is deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "impl/ports/stable_hash.h"
#include "sim/log/broker.h"
#include "sim/world.h"

namespace fl::sim::log {

struct LogRequest {
  enum class Kind : uint8_t {
    kMetadata,
    kInitProducer,
    kProduce,
    kEndTxn,
    kJoin,
    kPoll,
    kHeartbeat,
    kLeave,
    kCommit,
    kProduceHalf,
    kEndHalf,
    kRegisterChecker
  };
  Kind kind = Kind::kMetadata;
  std::string topic;                                             // kMetadata
  ProduceRequest produce;                                        // kProduce, kProduceHalf
  std::string producer_group;                                    // kProduceHalf, kRegisterChecker
  std::string check_service;                                     // kRegisterChecker
  int64_t half_id = -1;                                          // kEndHalf
  fl::HalfResolution resolution = fl::HalfResolution::kUnknown;  // kEndHalf
  std::string transactional_id;                                  // kInitProducer, kEndTxn
  int64_t producer_id = -1;                                      // kEndTxn
  int32_t epoch = -1;                                            // kEndTxn
  bool commit = false;                                           // kEndTxn: commit (true) or abort
  fl::TxnOffsets txn_offsets;                                    // kEndTxn
  std::string group;                                             // group calls
  std::string client_id;                                         // kJoin
  std::string member_id;                                         // kPoll, kHeartbeat, kLeave, kCommit
  std::vector<std::string> topics;                               // kJoin
  RebalanceProtocol protocol = RebalanceProtocol::kEager;        // kJoin
  int64_t session_timeout_us = 0;                                // kJoin
  OffsetMap offsets;                                             // kPoll: fetch positions; kCommit: next offsets
  size_t max_records = 0;                                        // kPoll
  int64_t generation = -1;                                       // kCommit
  // The calling process, as the log client names it from its Runtime (kPoll; BrokerServer's
  // served_reads). The world's identity of the caller, never the service's: not in describe().
  std::string caller;
  std::string describe() const;
  void describe_to(StableHasher& out) const;  // hashes describe() without building it (Message::digest)
};

struct LogReply {
  LogStatus status = LogStatus::kOk;
  int32_t partitions = -1;  // kMetadata
  ProduceReply produce;     // kProduce
  InitProducerReply init;   // kInitProducer
  JoinReply join;           // kJoin
  PollReply poll;           // kPoll
  std::string describe() const;
};

// A poll the broker answered with records (BrokerServer::track_reads): when (world time), to which
// process, in which consumer group, and the offsets [from, to) of each partition it returned.
struct ServedRead {
  struct Range {
    std::string topic;
    int32_t partition = 0;
    int64_t from = 0, to = 0;
  };
  int64_t time_us = 0;
  std::string caller, group;
  std::vector<Range> ranges;  // in the reply's order; one per run of consecutive offsets
};

// Applies one request to the broker at now_us. Pure: the server and tests share it.
LogReply handle_log_request(Broker& broker, const LogRequest& request, int64_t now_us);

class BrokerServer {
 public:
  explicit BrokerServer(BrokerConfig config = {}, std::string service = "log", int64_t tick_interval_us = 50'000);
  BrokerServer(const BrokerServer&) = delete;
  BrokerServer& operator=(const BrokerServer&) = delete;

  Broker& broker() { return broker_; }
  const std::string& service() const { return service_; }
  // The world time at which each record was appended, by (topic, partition, offset) (an offset a
  // restart reused: its latest append). Records carry the broker node's clock, which clock faults
  // skew or (jumping back) freeze; judges that place an append in world time read this.
  using AppendKey = std::tuple<std::string, int32_t, int64_t>;
  const std::map<AppendKey, int64_t>& append_times() const { return append_times_; }
  // After track_reads(): every poll answered with records, in the order served (what a consumer
  // was given, for judges that check a conclusion against what its reader saw). Off by default.
  void track_reads() { tracking_reads_ = true; }
  const std::vector<ServedRead>& served_reads() const { return served_reads_; }
  // The BootFn of the broker process. REQUIRES: this BrokerServer outlives the process.
  BootFn boot_fn();

 private:
  Task<void> boot(Process& p);
  static Task<MessagePtr> serve_one(BrokerServer* self, Process* p, MessagePtr request);
  void note_read(const LogRequest& request, const PollReply& reply, int64_t now_us);

  Broker broker_;
  std::string service_;
  int64_t tick_interval_us_;
  std::map<AppendKey, int64_t> append_times_;
  bool tracking_reads_ = false;
  std::vector<ServedRead> served_reads_;
};

}  // namespace fl::sim::log
