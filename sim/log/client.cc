#include "sim/log/client.h"

#include <algorithm>
#include <cassert>

#include "sim/log/server.h"

namespace fl::sim::log {

namespace {

constexpr int64_t kPollBackoffUs = 10'000;

struct CallOutcome {
  LogStatus transport = LogStatus::kOk;  // kOk: `reply` is valid
  LogReply reply;
};

// `request` is a LogRequest message, built by the caller (a LogRequest is large: passed by value
// into this coroutine it would be moved three more times).
Task<CallOutcome> call_broker(fl::Rpc* rpc, std::string service, MessagePtr request, int64_t timeout_us) {
  fl::RpcResult r = co_await rpc->call(service, std::move(request), timeout_us);
  CallOutcome out;
  if (r.status == fl::RpcStatus::kUnavailable) {
    out.transport = LogStatus::kUnavailable;
  } else if (!r.ok()) {
    out.transport = LogStatus::kIndeterminate;
  } else if (const LogReply* reply = message_as<LogReply>(r.reply)) {
    out.reply = *reply;
  } else {
    out.transport = LogStatus::kInvalidArgument;
  }
  co_return std::move(out);
}

class Producer final : public fl::LogProducer {
 public:
  Producer(fl::Rpc& rpc, std::string service, fl::ProducerOptions options)
      : rpc_(rpc), service_(std::move(service)), options_(std::move(options)) {
    if (!options_.transactional_id.empty()) options_.idempotent = true;
  }

  Task<LogStatus> init() override {
    if (fenced_) co_return LogStatus::kProducerFenced;
    if (!options_.idempotent) co_return LogStatus::kOk;
    LogRequest r;
    r.kind = LogRequest::Kind::kInitProducer;
    r.transactional_id = options_.transactional_id;
    CallOutcome out = co_await call_broker(&rpc_, service_, make_message(std::move(r)), options_.request_timeout_us);
    if (out.transport != LogStatus::kOk) co_return out.transport;
    if (out.reply.status != LogStatus::kOk) co_return out.reply.status;
    producer_id_ = out.reply.init.producer_id;
    epoch_ = out.reply.init.epoch;
    sequences_.clear();
    in_txn_ = false;
    needs_init_ = false;
    co_return LogStatus::kOk;
  }

  Task<ProduceResult> produce(std::string topic, std::string key, std::string value) override {
    ProduceResult result;
    if (fenced_) {
      result.status = LogStatus::kProducerFenced;
      co_return std::move(result);
    }
    const bool transactional = !options_.transactional_id.empty();
    if (transactional && !in_txn_) {
      result.status = LogStatus::kNotInTransaction;
      co_return std::move(result);
    }
    if (options_.idempotent && (producer_id_ < 0 || needs_init_) && !transactional) {
      LogStatus s = co_await init();
      if (s != LogStatus::kOk) {
        result.status = s;
        co_return std::move(result);
      }
    }
    int32_t partitions = co_await partition_count(topic, &result.status);
    if (partitions < 0) co_return std::move(result);
    ProduceRequest pr;
    pr.topic = topic;
    pr.partition = partition_for_key(key, partitions);
    pr.key = std::move(key);
    pr.value = std::move(value);
    pr.transactional = transactional;
    if (options_.idempotent) {
      pr.producer_id = producer_id_;
      pr.epoch = epoch_;
      pr.sequence = sequences_[TopicPartition{topic, pr.partition}]++;
    }
    result.partition = pr.partition;
    if (options_.acks == fl::Acks::kNone) {
      LogRequest r;
      r.kind = LogRequest::Kind::kProduce;
      r.produce = std::move(pr);
      rpc_.send(service_, make_message(std::move(r)));
      co_return std::move(result);  // kOk, offset -1: nobody will ever know
    }
    co_return co_await send(std::move(pr));
  }

  Task<LogStatus> begin_transaction() override {
    if (fenced_) co_return LogStatus::kProducerFenced;
    if (options_.transactional_id.empty() || producer_id_ < 0) co_return LogStatus::kNotInTransaction;
    in_txn_ = true;
    co_return LogStatus::kOk;
  }

  Task<LogStatus> commit_transaction(fl::TxnOffsets offsets) override {
    co_return co_await end_txn(true, std::move(offsets));
  }
  Task<LogStatus> abort_transaction() override { co_return co_await end_txn(false, {}); }
  int64_t producer_id() const override { return producer_id_; }
  int32_t epoch() const override { return epoch_; }

  // Half messages: one broker call each, no client-side retry (RocketMQ's sendMessageInTransaction
  // fails the send; the check-back resolves a half whose end_half was lost).
  Task<ProduceResult> produce_half(std::string topic, std::string key, std::string value,
                                   std::string producer_group) override {
    LogRequest r;
    r.kind = LogRequest::Kind::kProduceHalf;
    r.produce.topic = std::move(topic);
    r.produce.key = std::move(key);
    r.produce.value = std::move(value);
    r.producer_group = std::move(producer_group);
    CallOutcome out = co_await call_broker(&rpc_, service_, make_message(std::move(r)), options_.request_timeout_us);
    ProduceResult result;
    result.status = out.transport != LogStatus::kOk ? out.transport : out.reply.status;
    if (result.status == LogStatus::kOk) {
      result.partition = out.reply.produce.partition;
      result.half_id = out.reply.produce.half_id;
    }
    co_return std::move(result);
  }

  Task<LogStatus> end_half(int64_t half_id, fl::HalfResolution resolution) override {
    LogRequest r;
    r.kind = LogRequest::Kind::kEndHalf;
    r.half_id = half_id;
    r.resolution = resolution;
    CallOutcome out = co_await call_broker(&rpc_, service_, make_message(std::move(r)), options_.request_timeout_us);
    co_return out.transport != LogStatus::kOk ? out.transport : out.reply.status;
  }

  Task<LogStatus> register_checker(std::string producer_group, std::string check_service) override {
    LogRequest r;
    r.kind = LogRequest::Kind::kRegisterChecker;
    r.producer_group = std::move(producer_group);
    r.check_service = std::move(check_service);
    CallOutcome out = co_await call_broker(&rpc_, service_, make_message(std::move(r)), options_.request_timeout_us);
    co_return out.transport != LogStatus::kOk ? out.transport : out.reply.status;
  }

 private:
  Task<int32_t> partition_count(const std::string& topic, LogStatus* status) {
    auto it = partitions_.find(topic);
    if (it != partitions_.end()) co_return it->second;
    LogRequest r;
    r.kind = LogRequest::Kind::kMetadata;
    r.topic = topic;
    const MessagePtr request = make_message(std::move(r));  // immutable: every attempt sends it
    CallOutcome out;
    for (int attempt = 0; attempt <= options_.retries; ++attempt) {
      out = co_await call_broker(&rpc_, service_, request, options_.request_timeout_us);
      if (out.transport == LogStatus::kOk) break;
    }
    // Metadata is read-only: a lost reply is simply "not sent", never indeterminate.
    if (out.transport != LogStatus::kOk) {
      *status = LogStatus::kUnavailable;
      co_return -1;
    }
    if (out.reply.status != LogStatus::kOk) {
      *status = out.reply.status;
      co_return -1;
    }
    partitions_[topic] = out.reply.partitions;
    co_return out.reply.partitions;
  }

  Task<ProduceResult> send(ProduceRequest pr) {
    ProduceResult result;
    result.partition = pr.partition;
    for (int attempt = 0;; ++attempt) {
      LogRequest r;
      r.kind = LogRequest::Kind::kProduce;
      r.produce = pr;
      CallOutcome out = co_await call_broker(&rpc_, service_, make_message(std::move(r)), options_.request_timeout_us);
      if (out.transport == LogStatus::kIndeterminate && attempt < options_.retries) continue;
      if (out.transport != LogStatus::kOk) {
        result.status = out.transport;
        // The broker may or may not hold this sequence number: start over with a new id.
        if (options_.idempotent && options_.transactional_id.empty()) needs_init_ = true;
        co_return std::move(result);
      }
      result.status = out.reply.status;
      result.offset = out.reply.produce.offset;
      result.duplicate = out.reply.produce.duplicate;
      if (result.status == LogStatus::kProducerFenced) fenced_ = true;
      if (result.status == LogStatus::kOutOfOrderSequence) needs_init_ = true;
      co_return std::move(result);
    }
  }

  Task<LogStatus> end_txn(bool commit, fl::TxnOffsets offsets) {
    if (fenced_) co_return LogStatus::kProducerFenced;
    if (!in_txn_) co_return LogStatus::kNotInTransaction;
    LogRequest r;
    r.kind = LogRequest::Kind::kEndTxn;
    r.transactional_id = options_.transactional_id;
    r.producer_id = producer_id_;
    r.epoch = epoch_;
    r.commit = commit;
    r.txn_offsets = std::move(offsets);
    in_txn_ = false;
    CallOutcome out = co_await call_broker(&rpc_, service_, make_message(std::move(r)), options_.request_timeout_us);
    if (out.transport != LogStatus::kOk) co_return out.transport;
    if (out.reply.status == LogStatus::kProducerFenced) fenced_ = true;
    co_return out.reply.status;
  }

  fl::Rpc& rpc_;
  std::string service_;
  fl::ProducerOptions options_;
  int64_t producer_id_ = -1;
  int32_t epoch_ = -1;
  bool fenced_ = false;
  bool in_txn_ = false;
  bool needs_init_ = false;
  std::map<TopicPartition, int32_t> sequences_;
  std::map<std::string, int32_t> partitions_;
};

class Consumer final : public fl::LogConsumer {
 public:
  Consumer(fl::Runtime& rt, fl::Rpc& rpc, std::string service, fl::ConsumerOptions options)
      : rt_(rt), rpc_(rpc), service_(std::move(service)), options_(std::move(options)) {
    if (options_.client_id.empty()) options_.client_id = std::string(rt_.process_name());
  }

  Task<JoinResult> join(std::vector<std::string> topics) override {
    topics_ = topics;
    LogRequest r;
    r.kind = LogRequest::Kind::kJoin;
    r.group = options_.group;
    r.client_id = options_.client_id + "." + std::to_string(rt_.incarnation());
    r.topics = std::move(topics);
    r.protocol = options_.protocol;
    r.session_timeout_us = options_.session_timeout_us;
    CallOutcome out = co_await call_broker(&rpc_, service_, make_message(std::move(r)), options_.request_timeout_us);
    JoinResult result;
    result.status = out.transport != LogStatus::kOk ? out.transport : out.reply.status;
    if (result.status != LogStatus::kOk) co_return std::move(result);
    member_id_ = out.reply.join.member_id;
    generation_ = out.reply.join.generation;
    assignment_.clear();
    positions_.clear();
    result.member_id = member_id_;
    result.generation = generation_;
    co_return std::move(result);
  }

  Task<PollResult> poll(size_t max_records, int64_t timeout_us) override {
    PollResult result;
    const int64_t deadline_us = rt_.clock().now_us() + std::max<int64_t>(timeout_us, 0);
    for (;;) {
      LogRequest r;
      r.kind = LogRequest::Kind::kPoll;
      r.caller = std::string(rt_.process_name());
      r.group = options_.group;
      r.member_id = member_id_;
      r.offsets = positions_;
      r.max_records = max_records;
      CallOutcome out = co_await call_broker(&rpc_, service_, make_message(std::move(r)), options_.request_timeout_us);
      if (out.transport != LogStatus::kOk) {
        result.status = out.transport;
        break;
      }
      const LogStatus s = out.reply.status;
      if (s == LogStatus::kUnknownMember) {
        lose_assignment(&result);  // onPartitionsLost, then rejoin
        JoinResult j = co_await join(topics_);
        result.status = j.status;
        break;
      }
      generation_ = out.reply.poll.generation;
      if (s == LogStatus::kRebalanceInProgress) {
        lose_assignment(&result);  // eager: everything is revoked
      } else if (s == LogStatus::kOk) {
        take_assignment(out.reply.poll, &result);
        result.records = std::move(out.reply.poll.records);
      } else {
        result.status = s;
        break;
      }
      if (!result.records.empty() || rt_.clock().now_us() >= deadline_us) break;
      co_await rt_.clock().sleep_us(std::min(kPollBackoffUs, deadline_us - rt_.clock().now_us()));
    }
    result.generation = generation_;
    result.assignment = assignment_;
    co_return std::move(result);
  }

  Task<LogStatus> commit(OffsetMap next_offsets) override {
    LogRequest r;
    r.kind = LogRequest::Kind::kCommit;
    r.group = options_.group;
    r.member_id = member_id_;
    r.generation = generation_;
    r.offsets = std::move(next_offsets);
    CallOutcome out = co_await call_broker(&rpc_, service_, make_message(std::move(r)), options_.request_timeout_us);
    co_return out.transport != LogStatus::kOk ? out.transport : out.reply.status;
  }

  Task<LogStatus> heartbeat() override { co_return co_await simple(LogRequest::Kind::kHeartbeat); }

  Task<LogStatus> leave() override {
    LogStatus s = co_await simple(LogRequest::Kind::kLeave);
    member_id_.clear();
    assignment_.clear();
    positions_.clear();
    co_return std::move(s);
  }

  const std::string& member_id() const override { return member_id_; }
  int64_t generation() const override { return generation_; }
  std::vector<TopicPartition> assignment() const override { return assignment_; }

 private:
  Task<LogStatus> simple(LogRequest::Kind kind) {
    LogRequest r;
    r.kind = kind;
    r.group = options_.group;
    r.member_id = member_id_;
    CallOutcome out = co_await call_broker(&rpc_, service_, make_message(std::move(r)), options_.request_timeout_us);
    co_return out.transport != LogStatus::kOk ? out.transport : out.reply.status;
  }

  void lose_assignment(PollResult* result) {
    if (!assignment_.empty()) result->rebalanced = true;
    for (const auto& tp : assignment_) result->revoked.push_back(tp);
    assignment_.clear();
    positions_.clear();
  }

  void take_assignment(const PollReply& reply, PollResult* result) {
    for (const auto& tp : assignment_)
      if (!std::binary_search(reply.assignment.begin(), reply.assignment.end(), tp)) result->revoked.push_back(tp);
    for (const auto& tp : reply.assignment)
      if (!std::binary_search(assignment_.begin(), assignment_.end(), tp)) result->assigned.push_back(tp);
    if (!result->revoked.empty() || !result->assigned.empty()) result->rebalanced = true;
    assignment_ = reply.assignment;
    positions_ = reply.positions;
  }

  fl::Runtime& rt_;
  fl::Rpc& rpc_;
  std::string service_;
  fl::ConsumerOptions options_;
  std::vector<std::string> topics_;
  std::string member_id_;
  int64_t generation_ = -1;
  std::vector<TopicPartition> assignment_;  // sorted
  OffsetMap positions_;
};

}  // namespace

LogClient::LogClient(fl::Runtime& runtime, fl::Rpc& rpc, std::string service)
    : runtime_(runtime), rpc_(rpc), service_(std::move(service)) {}

std::unique_ptr<fl::LogProducer> LogClient::producer(const fl::ProducerOptions& options) {
  return std::make_unique<Producer>(rpc_, service_, options);
}

std::unique_ptr<fl::LogConsumer> LogClient::consumer(const fl::ConsumerOptions& options) {
  return std::make_unique<Consumer>(runtime_, rpc_, service_, options);
}

}  // namespace fl::sim::log
