// Broker: a single Kafka-like broker as a pure, deterministic state machine.
//
// Every input carries the time explicitly (now_us); nothing reads a clock, a random source or a
// hash-map order. The simulated broker process (sim/log/server.h) wraps one Broker; tests and
// properties drive it directly. Semantics follow Kafka's documented contract:
//
// - Topics with N partitions; a record's partition is partition_for_key(key, N) (stable FNV-1a +
//   mix64 from sim/hash.h, never std::hash). Offsets start at 0 per partition, contiguous.
// - Durability: acked = synced. Everything a successful produce / commit / end_transaction
//   returned is in the durable state and survives restart(). Volatile (lost by restart()):
//   group membership and assignments (members must rejoin; the generation counter itself is
//   durable, as Kafka keeps it in __consumer_offsets) and open transactions (aborted).
// - Consumer groups: a rebalance happens when a member joins, leaves or is evicted (no poll or
//   heartbeat for session_timeout_us: "the broker will remove this consumer from the group and
//   initiate a rebalance"); each rebalance bumps the generation. A commit carrying a stale
//   generation or an unknown member is rejected with kCommitFailed (CommitFailedException).
//   Positions are the consumer's (volatile, sent with each poll); a partition a member starts
//   owning is read from the group's committed offset (or the log start): at-least-once.
// - Eager protocol: on a rebalance every member loses every partition and nobody owns anything
//   until every member has polled (rejoined) in the new generation. Cooperative: members keep the
//   partitions that stay; a moving partition is released by its old owner at its next poll, and
//   only then taken by the new owner (two-step hand-off). Either way a partition is owned by at
//   most one member at any instant, and only members (live as far as the broker knows) own any.
//   Simplification: cooperative's follow-up rebalance does not bump the generation again.
// - Idempotent producer: producer id + epoch + per-partition sequence; a sequence at or below
//   the last one within the last kDedupWindow sends is a duplicate (answer: the first offset), a
//   gap is kOutOfOrderSequence.
// - Transactions: init_producer(transactional_id) bumps the id's epoch, aborts its open
//   transaction and fences older epochs (kProducerFenced). Transactional records are buffered
//   until end_transaction(commit) appends them atomically (so consumers read committed data
//   only; offsets are assigned at commit). A transaction open longer than
//   transaction_timeout_us is aborted and its epoch bumped (KIP-588), fencing a paused producer.
// - Half messages (RocketMQ's transactional messages): produce_half() stores a record invisibly
//   (durable, like RocketMQ's RMQ_SYS_TRANS_HALF_TOPIC); end_half() commits it (appended, offset
//   assigned then) or rolls it back (deleted); UNKNOWN leaves it. Every half_check_interval_us the
//   broker scans the halves (transactionCheckInterval); one older than half_check_timeout_us
//   (transactionTimeout) is checked back: its check count grows and a HalfCheck for a check service
//   of its producer group is queued (take_half_checks(); the server sends them); a half already
//   checked half_check_max times (transactionCheckMax) is discarded instead. Check services are
//   registered by producers (register_checker, RocketMQ's producer heartbeat), volatile, and
//   chosen round robin among those heard within checker_expiry_us (RocketMQ's 120 s channel
//   expiry). A scan with no live check service still counts the check.
// - Retention: records older than retention_us or beyond retention_bytes (oldest first) are
//   deleted; the log start offset advances; a fetch below it starts at the log start
//   (auto.offset.reset=earliest). Kafka deletes whole segments; we delete single records.
//
// BrokerConfig's `broken_*` switches disable one guarantee each; they exist so that every
// property has a test showing it fails when the guarantee is gone. Defaults are correct.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "impl/ports/log.h"

namespace fl::sim::log {

using fl::HalfResolution;
using fl::LogRecord;
using fl::LogStatus;
using fl::OffsetMap;
using fl::RebalanceProtocol;
using fl::TopicPartition;

struct TopicConfig {
  int32_t partitions = 1;
  int64_t retention_us = -1;     // -1: keep forever
  int64_t retention_bytes = -1;  // -1: unbounded; bytes = key + value sizes, per partition
};

struct BrokerConfig {
  int64_t transaction_timeout_us = 60'000'000;
  // Deliberately broken behaviours (all false = Kafka's guarantees).
  bool broken_no_generation_check = false;  // stale-generation / unknown-member commits accepted
  bool broken_no_dedup = false;             // idempotent sequence numbers ignored
  bool broken_no_fencing = false;           // older transactional epochs accepted
  bool broken_ack_before_sync = false;      // acked records synced only every sync_interval_us
  int64_t sync_interval_us = 1'000'000;     //   (only with broken_ack_before_sync)
  bool broken_handoff = false;              // new owner takes a partition before the old one
                                            // released it; eager skips the rejoin barrier
  bool broken_resume_at_end = false;        // newly owned partitions start at the log end,
                                            // not at the committed offset
  bool broken_fetch_reversed = false;       // a fetch returns its records newest first
  // Half messages (RocketMQ broker defaults: transactionTimeOut 6 s, transactionCheckMax 15,
  // transactionCheckInterval 60 s).
  int64_t half_check_timeout_us = 6'000'000;
  int64_t half_check_interval_us = 60'000'000;
  int32_t half_check_max = 15;
  int64_t checker_expiry_us = 120'000'000;
};

// A check-back the broker wants sent to `service` (a producer's check listener).
struct HalfCheckDue {
  std::string service;
  fl::HalfCheck check;
};

inline constexpr size_t kDedupWindow = 5;  // Kafka keeps the last 5 batches per producer

int32_t partition_for_key(std::string_view key, int32_t partitions);

struct ProduceRequest {
  std::string topic;
  int32_t partition = -1;  // -1: partition_for_key(key)
  std::string key;
  std::string value;
  int64_t producer_id = -1;  // -1: plain (no idempotence)
  int32_t epoch = -1;
  int32_t sequence = -1;  // per (producer, partition), from 0
  bool transactional = false;
};

struct ProduceReply {
  LogStatus status = LogStatus::kOk;
  int32_t partition = -1;
  int64_t offset = -1;  // -1 for transactional (assigned at commit) and unknown duplicates
  bool duplicate = false;
  int64_t half_id = -1;  // produce_half
};

struct InitProducerReply {
  LogStatus status = LogStatus::kOk;
  int64_t producer_id = -1;
  int32_t epoch = -1;
};

struct JoinReply {
  LogStatus status = LogStatus::kOk;
  std::string member_id;
  int64_t generation = -1;
};

struct PollReply {
  LogStatus status = LogStatus::kOk;
  int64_t generation = -1;
  std::vector<TopicPartition> assignment;  // owned after this poll, sorted
  std::vector<LogRecord> records;
  OffsetMap positions;  // next offset to fetch, for every owned partition
};

struct FetchReply {
  LogStatus status = LogStatus::kOk;
  int64_t start_offset = 0;  // where the read actually started (>= log start)
  std::vector<LogRecord> records;
};

struct BrokerStats {
  uint64_t produced = 0, duplicates = 0, fenced = 0, fetched = 0, commits = 0, commits_rejected = 0, rebalances = 0,
           evictions = 0, txn_committed = 0, txn_aborted = 0, retained_away = 0, restarts = 0, halves = 0,
           halves_committed = 0, halves_rolled_back = 0, halves_discarded = 0, half_checks = 0;
};

class Broker {
 public:
  explicit Broker(BrokerConfig config = {});
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;
  Broker(Broker&&) = default;
  Broker& operator=(Broker&&) = default;

  const BrokerConfig& config() const { return config_; }
  const BrokerStats& stats() const { return stats_; }

  // ---- Time and crashes.
  // Advances the broker's clock (a smaller now_us is ignored: the broker's time never goes back)
  // and runs what is due: session-timeout evictions, transaction timeouts, retention, and (only
  // with broken_ack_before_sync) the periodic sync. Every call below calls it first.
  void tick(int64_t now_us);
  // A broker restart: durable state stays, volatile state is dropped (see header comment); with
  // broken_ack_before_sync, records not yet synced are lost too.
  void restart(int64_t now_us);

  // ---- Topics.
  // kInvalidArgument if partitions < 1 or the topic exists with another partition count.
  LogStatus create_topic(const std::string& name, const TopicConfig& config);
  int32_t partition_count(const std::string& topic) const;   // -1: unknown topic
  int64_t log_start_offset(const TopicPartition& tp) const;  // -1: unknown
  int64_t log_end_offset(const TopicPartition& tp) const;    // -1: unknown
  std::vector<std::string> topics() const;

  // ---- Producing.
  // transactional_id empty: a fresh idempotent producer id, epoch 0. Otherwise the id's producer
  // id (allocated on first use) with its epoch bumped; its open transaction is aborted.
  InitProducerReply init_producer(const std::string& transactional_id, int64_t now_us);
  ProduceReply produce(const ProduceRequest& request, int64_t now_us);
  // Commit (append buffered records + offsets atomically) or abort the open transaction of
  // transactional_id. With offsets.group non-empty the offsets are committed under the same
  // generation check as commit() (KIP-447); a stale generation aborts the transaction and
  // returns kCommitFailed. Committing with no open transaction commits just the offsets.
  LogStatus end_transaction(const std::string& transactional_id, int64_t producer_id, int32_t epoch, bool commit,
                            const fl::TxnOffsets& offsets, int64_t now_us);

  // ---- Half messages (see the header comment).
  ProduceReply produce_half(const ProduceRequest& request, const std::string& producer_group, int64_t now_us);
  // kNotInTransaction: no such half (already resolved, discarded or never stored).
  LogStatus end_half(int64_t half_id, fl::HalfResolution resolution, int64_t now_us);
  void register_checker(const std::string& producer_group, const std::string& service, int64_t now_us);
  // The check-backs queued by the scans so far (and forgets them).
  std::vector<HalfCheckDue> take_half_checks();
  size_t open_halves() const { return halves_.size(); }

  // ---- Reading (committed data only). Up to max_records from `offset` (clamped to log start).
  FetchReply fetch(const TopicPartition& tp, int64_t offset, size_t max_records) const;

  // ---- Consumer groups.
  JoinReply join(const std::string& group, const std::string& client_id, const std::vector<std::string>& topics,
                 RebalanceProtocol protocol, int64_t session_timeout_us, int64_t now_us);
  // Heartbeat + sync + fetch: releases/takes partitions as the protocol says, then reads up to
  // max_records from the owned partitions, starting at `positions` (the consumer's fetch
  // positions; a missing one starts at the committed offset, else the log start).
  // kUnknownMember: not (any more) a member. kRebalanceInProgress: eager barrier not complete.
  PollReply poll(const std::string& group, const std::string& member_id, const OffsetMap& positions, size_t max_records,
                 int64_t now_us);
  LogStatus heartbeat(const std::string& group, const std::string& member_id, int64_t now_us);
  LogStatus leave(const std::string& group, const std::string& member_id, int64_t now_us);
  LogStatus commit(const std::string& group, const std::string& member_id, int64_t generation,
                   const OffsetMap& next_offsets, int64_t now_us);

  // ---- Introspection (for properties; deterministic order).
  std::optional<int64_t> committed(const std::string& group, const TopicPartition& tp) const;
  int64_t generation(const std::string& group) const;  // -1: unknown group
  std::vector<std::string> members(const std::string& group) const;
  // member -> partitions it owns right now (only members that own something appear).
  std::map<std::string, std::vector<TopicPartition>> owners(const std::string& group) const;
  // The partitions of the group's subscribed topics (sorted).
  std::vector<TopicPartition> group_partitions(const std::string& group) const;
  bool rebalancing(const std::string& group) const;                        // eager barrier open
  int32_t transactional_epoch(const std::string& transactional_id) const;  // -1 unknown
  int64_t now_us() const { return now_us_; }
  // After track_appends(): every (partition, offset) appended since the last take_appended(), in
  // append order (the list restarts empty). Off by default, so a Broker used on its own keeps no
  // list; BrokerServer turns it on to time appends.
  void track_appends() { tracking_appends_ = true; }
  std::vector<std::pair<TopicPartition, int64_t>> take_appended() { return std::exchange(appended_, {}); }

 private:
  struct StoredRecord {
    int64_t offset = 0;
    std::string key, value;
    int64_t timestamp_us = 0;
  };
  struct Partition {
    int64_t start_offset = 0;
    std::deque<StoredRecord> records;
    int64_t bytes = 0;
    int64_t synced_end = 0;  // broken_ack_before_sync only
    int64_t end() const { return start_offset + static_cast<int64_t>(records.size()); }
  };
  struct Topic {
    TopicConfig config;
    std::vector<Partition> partitions;
  };
  struct SequenceState {
    int32_t last_sequence = -1;
    std::deque<std::pair<int32_t, int64_t>> recent;  // (sequence, offset), newest last
  };
  struct ProducerState {
    int32_t epoch = 0;
    std::map<TopicPartition, SequenceState> sequences;
  };
  struct PendingRecord {
    TopicPartition tp;
    std::string key, value;
  };
  struct Transaction {
    int64_t producer_id = -1;
    int32_t epoch = 0;
    bool open = false;
    int64_t started_us = 0;
    std::vector<PendingRecord> pending;
  };
  struct Half {
    TopicPartition tp;
    std::string key, value, producer_group;
    int64_t born_us = 0;
    int32_t checks = 0;
  };
  struct Checker {
    std::map<std::string, int64_t> services;  // service -> last heard
    size_t cursor = 0;
  };
  struct Member {
    std::string client_id;
    std::vector<std::string> topics;  // sorted
    int64_t session_timeout_us = 0;
    int64_t last_seen_us = 0;
    std::set<TopicPartition> owned;
    bool rejoined = true;  // eager: has polled since the last rebalance
    size_t cursor = 0;     // round-robin start among owned partitions
  };
  struct Group {
    RebalanceProtocol protocol = RebalanceProtocol::kEager;
    int64_t generation = 0;                        // durable
    std::map<TopicPartition, int64_t> committed;   // durable
    std::map<std::string, Member> members;         // volatile
    std::map<TopicPartition, std::string> target;  // volatile: desired owner
    bool rebalancing = false;                      // volatile: eager barrier open
    uint64_t next_member = 0;
  };

  Partition* find_partition(const TopicPartition& tp);
  const Partition* find_partition(const TopicPartition& tp) const;
  int64_t append(const TopicPartition& tp, std::string key, std::string value);
  LogStatus check_sequence(const ProduceRequest& r, const TopicPartition& tp, ProduceReply* reply);
  void record_sequence(const ProduceRequest& r, const TopicPartition& tp, int64_t offset);
  void abort_transaction(Transaction& txn);
  LogStatus commit_offsets(Group* group, const std::string& member_id, int64_t generation,
                           const OffsetMap& next_offsets);
  void evict_expired();
  void expire_transactions();
  void apply_retention();
  void scan_halves();
  // The partition a produce request goes to (kUnknownTopic / kInvalidArgument otherwise).
  ProduceReply route(const ProduceRequest& r) const;
  std::string pick_checker(const std::string& producer_group);
  void rebalance(Group& group);
  void compute_target(Group& group);
  void sync_member(Group& group, const std::string& member_id, Member& member);
  std::vector<LogRecord> read_owned(Group& group, Member& member, const OffsetMap& positions, size_t max_records,
                                    OffsetMap* next_positions);
  bool owned_by_other(const Group& group, const std::string& member_id, const TopicPartition& tp) const;

  BrokerConfig config_;
  BrokerStats stats_;
  int64_t now_us_ = 0;
  int64_t last_sync_us_ = 0;
  std::map<std::string, Topic> topics_;
  bool tracking_appends_ = false;
  std::vector<std::pair<TopicPartition, int64_t>> appended_;  // since take_appended()
  std::map<int64_t, ProducerState> producers_;
  std::map<std::string, Transaction> transactions_;
  std::map<std::string, Group> groups_;
  int64_t next_producer_id_ = 1000;
  std::map<int64_t, Half> halves_;  // durable
  int64_t next_half_id_ = 1;        // durable
  int64_t last_half_scan_us_ = 0;
  std::map<std::string, Checker> checkers_;  // volatile
  std::vector<HalfCheckDue> due_checks_;     // volatile
};

}  // namespace fl::sim::log
