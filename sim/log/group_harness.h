// GroupHarness (test support): drives a Broker with simulated consumers that join, poll,
// process, commit, crash, pause and leave, and checks the log's consumer-side properties after
// every step:
//   order       a consumer sees each partition's records in offset order, without gaps, from the
//               position it fetched at (per-partition order);
//   exclusive   a partition is owned by at most one member, and only members own partitions
//               (rebalance hands every partition to exactly one live consumer; completeness is
//               checked by finish(): after a quiet period every partition has an owner);
//   monotonic   a group's committed offset never moves backwards;
//   delivery    finish(): every produced record was processed at least once (at-least-once
//               under consumer crashes: redelivery from the committed offset).
// Violations are collected as text, so a test can assert both "none" and "some".
// A paused consumer that comes back keeps its stale state and acts on it: its processing
// (side effects) happens, its commit must be rejected — a zombie.
// The simulated consumers follow Kafka's client discipline (commitSync() commits the consumed
// positions of the current assignment): progress made on a partition before it was revoked or
// re-assigned is never committed later, since the broker does not (and Kafka does not) check
// which member owns a partition it commits for.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/log/broker.h"

namespace fl::sim::log {

struct HarnessOp {
  enum Kind : uint8_t { kJoin, kPoll, kProcess, kCommit, kCrash, kPause, kLeave, kProduce, kAdvance };
  Kind kind = kPoll;
  uint32_t consumer = 0;
  uint32_t arg = 0;
  std::string describe() const;
};

struct HarnessOptions {
  int32_t partitions = 3;
  uint32_t consumers = 3;
  RebalanceProtocol protocol = RebalanceProtocol::kEager;
  int64_t session_timeout_us = 10'000;
  size_t max_poll_records = 4;
};

class GroupHarness {
 public:
  GroupHarness(const BrokerConfig& config, const HarnessOptions& options);

  void apply(const HarnessOp& op);
  // Quiet period: every non-crashed consumer wakes up, dead members are evicted, the live ones
  // (or a fresh one, if none is left) poll/process/commit until the log is drained; then checks
  // completeness of the assignment and at-least-once delivery.
  void finish();

  const std::vector<std::string>& violations() const { return violations_; }
  Broker& broker() { return broker_; }
  uint64_t zombie_side_effects() const { return zombie_side_effects_; }
  uint64_t zombie_commits_rejected() const { return zombie_commits_rejected_; }
  int64_t now_us() const { return now_us_; }

  static constexpr const char* kGroup = "g";
  static constexpr const char* kTopic = "t";

 private:
  struct Consumer {
    std::string client_id;
    std::string member_id;  // empty: not joined
    int64_t generation = -1;
    OffsetMap positions;
    std::vector<LogRecord> inflight;   // polled, not processed yet
    OffsetMap processed_next;          // what a commit would store (owned partitions only)
    std::set<TopicPartition> counted;  // partitions whose processing may still be committed
    bool crashed = false;
    int64_t paused_until_us = 0;
  };

  bool can_act(const Consumer& c) const;
  void join(Consumer& c);
  void poll(Consumer& c);
  void process(Consumer& c);
  void drop_stints(Consumer& c);
  void commit(Consumer& c);
  void advance(int64_t delta_us);
  void check_step(const std::string& what);
  void violation(const std::string& text) { violations_.push_back(text); }

  Broker broker_;
  HarnessOptions options_;
  int64_t now_us_ = 1'000'000;
  std::vector<Consumer> consumers_;
  uint32_t next_value_ = 0;
  uint32_t incarnations_ = 0;
  std::map<TopicPartition, std::set<int64_t>> produced_;
  std::map<TopicPartition, std::set<int64_t>> processed_;
  std::map<TopicPartition, int64_t> max_committed_;
  std::vector<std::string> violations_;
  uint64_t zombie_side_effects_ = 0;
  uint64_t zombie_commits_rejected_ = 0;
};

}  // namespace fl::sim::log
