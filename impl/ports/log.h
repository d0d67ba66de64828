// Log: the partitioned message log (Kafka's contract) as service code sees it.
//
// Semantics follow Kafka's (its documentation on offsets, consumer groups and delivery semantics).
//
// Model
// - A topic has N partitions; a record lands in the partition chosen by a stable hash of its key
//   (same key => same partition, in every run and on every machine). Offsets within a partition
//   start at 0 and grow by one per record; a partition is read in offset order.
// - Errors are values (LogStatus); nothing here throws for broker or transport reasons.
//
// Producer contract
// - produce(topic, key, value) resolves with:
//     kOk             the record is stored (acked = synced: it survives a broker restart) at
//                     (partition, offset);
//     kIndeterminate  no answer (timeout / connection reset): the record may or may not be in the
//                     log (Jepsen's :info). Retrying may duplicate it unless the producer is
//                     idempotent (then the broker de-duplicates by producer id + sequence number);
//     kUnavailable    the broker was not reachable: the record is certainly not stored;
//     kProducerFenced a newer producer with the same transactional id exists (fatal for this
//                     producer object: every later call returns kProducerFenced too);
//     kOutOfOrderSequence, kUnknownTopic, kInvalidArgument: certainly not stored.
// - ProducerOptions::idempotent: the producer gets a producer id at init() and numbers its records
//   per partition; the client retries an indeterminate send up to `retries` times with the same
//   sequence number and the broker stores it at most once ("the broker assigns each producer an
//   ID and deduplicates messages using a sequence number"). A send still indeterminate after the
//   last retry is returned as kIndeterminate; if the caller sends the record again, that is a new
//   record (Kafka does not de-duplicate application-level retries either).
// - ProducerOptions::transactional_id: init() (initTransactions) bumps the id's epoch, aborting the
//   transaction an older producer left open and fencing that producer (ProducerFencedException).
//   begin_transaction(); produce()...; commit_transaction(offsets) appends the transaction's records
//   atomically and, if given, commits the consumer offsets with a generation check (KIP-447);
//   abort_transaction() discards them. Records of a transaction are invisible to consumers until
//   the commit (read_committed). The broker also aborts a transaction open longer than its
//   transaction timeout and bumps the epoch, fencing a producer that was only paused (KIP-588).
//   commit_transaction() may return kIndeterminate (the commit happened or not).
// - Half messages (RocketMQ's transactional messages, a second scheme next to Kafka's
//   transactions): produce_half() stores a message the broker keeps invisible until end_half()
//   commits it (appended to its partition then, offsets assigned at commit) or rolls it back
//   (deleted). A half nobody resolved is checked back: once it is older than the broker's check
//   timeout (RocketMQ's transactionTimeout), the broker's periodic check (transactionCheckInterval)
//   sends a HalfCheck one-way message to a check service registered by a producer of the half's
//   producer group (register_checker(), RocketMQ's producer heartbeat), which answers with
//   end_half(COMMIT | ROLLBACK | UNKNOWN). A half checked transactionCheckMax times without an
//   answer is discarded. end_half() of a half no longer held (resolved or discarded) returns
//   kNotInTransaction. Both calls may return kIndeterminate.
//
// Consumer contract
// - join() makes this consumer a member of `group`, subscribed to `topics`; it returns the
//   generation it joined. poll() is also the heartbeat: a member that neither polls nor calls
//   heartbeat() within session_timeout_us is evicted by the broker and the group rebalances
//   (its partitions move to other members), while the evicted process keeps running: a zombie.
// - Every rebalance bumps the group generation. poll() returns records of the partitions this
//   member owns in the generation it reports; when the member learns of a rebalance, the poll
//   result says so (rebalanced, assigned/revoked partitions). An evicted member's poll rejoins the
//   group automatically (Kafka: onPartitionsLost + rejoin) and reports the new generation.
// - commit(offsets) stores, per partition, the next offset to read (last processed + 1). It fails
//   with kCommitFailed when the commit carries a stale generation or the member is no longer in
//   the group ("group has already rebalanced and assigned the partitions to another member").
//   Effects the zombie made outside the log are NOT undone: fencing covers only the log.
// - Delivery is at least once: after a crash or a rebalance, a partition is read again from the
//   group's committed offset, so records processed but not committed are delivered again.
//   Process-then-commit gives at-least-once; commit-then-process gives at-most-once.
// - Eager protocol: on a rebalance every member revokes all its partitions and nobody consumes
//   until every member has rejoined. Cooperative protocol: members keep the partitions that do
//   not move; a moving partition is first revoked by its old owner, then assigned to the new one.
// - Objects are not thread-safe; one task at a time per producer/consumer (simulation is
//   single-threaded anyway). A crash of the process destroys them with the process.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "impl/ports/task.h"

namespace fl {

enum class LogStatus : uint8_t {
  kOk,
  kIndeterminate,  // transport timeout/reset: may or may not have happened
  kUnavailable,    // broker not reachable: certainly did not happen
  kUnknownTopic,
  kInvalidArgument,
  kProducerFenced,       // a newer epoch owns this transactional id
  kOutOfOrderSequence,   // idempotent producer sequence gap (an earlier send was lost)
  kCommitFailed,         // stale generation or not a member: rebalanced since the last poll
  kUnknownMember,        // evicted (or broker restarted): must rejoin
  kRebalanceInProgress,  // eager rebalance waiting for other members to rejoin
  kNotInTransaction,     // transactional call without begin_transaction / on a plain producer
};
const char* log_status_name(LogStatus s);
// True for outcomes that may or may not have taken effect.
inline bool log_status_indeterminate(LogStatus s) { return s == LogStatus::kIndeterminate; }

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
  std::string describe() const;  // "topic/3"
};

// Committed or fetch positions: the NEXT offset to read, per partition.
using OffsetMap = std::map<TopicPartition, int64_t>;

struct LogRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  std::string value;
  int64_t timestamp_us = 0;  // broker append time, by the broker node's clock
  std::string describe() const;
};

enum class Acks : uint8_t {
  kNone,    // fire and forget: produce() returns kOk with offset -1 as soon as it is sent
  kLeader,  // acked when stored by the (single) broker
  kAll,     // same as kLeader for a single-broker log: acked = synced
};

struct ProducerOptions {
  Acks acks = Acks::kAll;
  bool idempotent = false;
  std::string transactional_id;  // non-empty: transactional (implies idempotent)
  int64_t request_timeout_us = 500'000;
  int retries = 0;  // client-side retries of an indeterminate send
};

struct ProduceResult {
  LogStatus status = LogStatus::kOk;
  int32_t partition = -1;
  int64_t offset = -1;     // -1 when unknown (acks=none, transactional before commit, error)
  bool duplicate = false;  // the broker recognised a retried send and returned the first offset
  int64_t half_id = -1;    // produce_half: the broker's id of the half message
  bool ok() const { return status == LogStatus::kOk; }
  bool indeterminate() const { return status == LogStatus::kIndeterminate; }
};

enum class RebalanceProtocol : uint8_t { kEager, kCooperative };

struct ConsumerOptions {
  std::string group;
  std::string client_id;                    // member ids derive from it (+ a broker counter)
  int64_t session_timeout_us = 10'000'000;  // Kafka's session.timeout.ms (default 45 s now)
  RebalanceProtocol protocol = RebalanceProtocol::kEager;
  int64_t request_timeout_us = 500'000;
};

struct JoinResult {
  LogStatus status = LogStatus::kOk;
  std::string member_id;
  int64_t generation = -1;
};

struct PollResult {
  LogStatus status = LogStatus::kOk;       // kOk also when no record was available
  int64_t generation = -1;                 // the generation these records were fetched in
  std::vector<LogRecord> records;          // per partition in offset order
  bool rebalanced = false;                 // assignment or generation changed since the last poll
  std::vector<TopicPartition> assignment;  // owned after this poll
  std::vector<TopicPartition> assigned;    // newly owned
  std::vector<TopicPartition> revoked;     // no longer owned (process or drop their work)
};

struct TxnOffsets {  // consumer offsets committed atomically with a transaction (KIP-447)
  std::string group;
  std::string member_id;
  int64_t generation = -1;
  OffsetMap offsets;
};

// How a producer resolves a half message (RocketMQ's LocalTransactionState).
enum class HalfResolution : uint8_t { kCommit, kRollback, kUnknown };
const char* half_resolution_name(HalfResolution r);

// The broker's check-back of an unresolved half message (checkLocalTransaction's argument).
struct HalfCheck {
  int64_t half_id = -1;
  std::string topic, key, value;
  int32_t check = 0;  // 1 for the first check-back
  std::string describe() const;
};

class LogProducer {
 public:
  virtual ~LogProducer() = default;
  // Obtains the producer id (idempotent) or bumps the transactional epoch (transactional).
  // A plain producer needs no init(); calling it is harmless.
  virtual Task<LogStatus> init() = 0;
  virtual Task<ProduceResult> produce(std::string topic, std::string key, std::string value) = 0;
  virtual Task<LogStatus> begin_transaction() = 0;
  virtual Task<LogStatus> commit_transaction(TxnOffsets offsets = {}) = 0;
  virtual Task<LogStatus> abort_transaction() = 0;
  // Half messages (see the header); a producer that does not support them answers kInvalidArgument.
  virtual Task<ProduceResult> produce_half(std::string topic, std::string key, std::string value,
                                           std::string producer_group) {
    (void)topic, (void)key, (void)value, (void)producer_group;
    co_return ProduceResult{LogStatus::kInvalidArgument};
  }
  virtual Task<LogStatus> end_half(int64_t half_id, HalfResolution resolution) {
    (void)half_id, (void)resolution;
    co_return LogStatus::kInvalidArgument;
  }
  // Registers (and keeps alive: call it periodically) `check_service` as a receiver of the
  // check-backs of `producer_group`'s half messages.
  virtual Task<LogStatus> register_checker(std::string producer_group, std::string check_service) {
    (void)producer_group, (void)check_service;
    co_return LogStatus::kInvalidArgument;
  }
  virtual int64_t producer_id() const = 0;  // -1 before init()
  virtual int32_t epoch() const = 0;        // -1 before init()
};

class LogConsumer {
 public:
  virtual ~LogConsumer() = default;
  virtual Task<JoinResult> join(std::vector<std::string> topics) = 0;
  // Waits up to timeout_us for records (returns early when some arrive); also heartbeats.
  virtual Task<PollResult> poll(size_t max_records, int64_t timeout_us) = 0;
  virtual Task<LogStatus> commit(OffsetMap next_offsets) = 0;
  virtual Task<LogStatus> heartbeat() = 0;
  virtual Task<LogStatus> leave() = 0;
  virtual const std::string& member_id() const = 0;
  virtual int64_t generation() const = 0;  // as of the last join/poll
  virtual std::vector<TopicPartition> assignment() const = 0;
};

// The log as a process sees it: a factory of producers and consumers.
class Log {
 public:
  virtual ~Log() = default;
  virtual std::unique_ptr<LogProducer> producer(const ProducerOptions& options) = 0;
  virtual std::unique_ptr<LogConsumer> consumer(const ConsumerOptions& options) = 0;
};

}  // namespace fl
