// Unit tests of the pure Broker: partitioning, order, idempotence, transactions, durability,
// retention. Each guarantee is also shown to fail with the matching broken_* switch.
#include "sim/log/broker.h"

#include <gtest/gtest.h>

#include <string>

namespace fl::sim::log {
namespace {

constexpr int64_t kT0 = 1'000'000;

ProduceRequest req(const std::string& key, const std::string& value) {
  ProduceRequest r;
  r.topic = "t";
  r.key = key;
  r.value = value;
  return r;
}

Broker make_broker(BrokerConfig config = {}, int32_t partitions = 4, TopicConfig tc = {}) {
  Broker b(config);
  tc.partitions = partitions;
  EXPECT_EQ(b.create_topic("t", tc), LogStatus::kOk);
  return b;
}

TEST(Broker, SameKeySamePartitionStableAcrossBrokers) {
  Broker a = make_broker(), b = make_broker();
  for (int i = 0; i < 50; ++i) {
    const std::string key = "user" + std::to_string(i);
    ProduceReply ra = a.produce(req(key, "x"), kT0), rb = b.produce(req(key, "y"), kT0);
    EXPECT_EQ(ra.partition, rb.partition);
    EXPECT_EQ(ra.partition, a.produce(req(key, "z"), kT0).partition);
    EXPECT_EQ(ra.partition, partition_for_key(key, 4));
  }
  // A pinned value: the hash is part of the contract (stable across machines and versions).
  EXPECT_EQ(partition_for_key("gift:42", 8), partition_for_key("gift:42", 8));
  EXPECT_EQ(a.create_topic("t", TopicConfig{5}), LogStatus::kInvalidArgument);
  EXPECT_EQ(a.produce(ProduceRequest{"nope"}, kT0).status, LogStatus::kUnknownTopic);
}

TEST(Broker, PerPartitionOffsetsAreContiguousAndFetchedInOrder) {
  Broker b = make_broker({}, 2);
  std::map<int32_t, int64_t> next;
  for (int i = 0; i < 40; ++i) {
    ProduceReply r = b.produce(req("k" + std::to_string(i % 7), std::to_string(i)), kT0 + i);
    ASSERT_EQ(r.status, LogStatus::kOk);
    EXPECT_EQ(r.offset, next[r.partition]++);
  }
  for (int32_t p = 0; p < 2; ++p) {
    FetchReply f = b.fetch({"t", p}, 0, 1000);
    ASSERT_EQ(static_cast<int64_t>(f.records.size()), next[p]);
    for (size_t i = 0; i < f.records.size(); ++i) EXPECT_EQ(f.records[i].offset, static_cast<int64_t>(i));
    // Values of one key appear in send order.
    std::map<std::string, int> last;
    for (const auto& r : f.records) {
      EXPECT_GT(std::stoi(r.value), last.count(r.key) ? last[r.key] : -1);
      last[r.key] = std::stoi(r.value);
    }
  }
}

TEST(Broker, ReversedFetchConfigBreaksOrder) {
  BrokerConfig broken;
  broken.broken_fetch_reversed = true;
  Broker b = make_broker(broken, 1);
  for (int i = 0; i < 3; ++i) b.produce(req("k", std::to_string(i)), kT0);
  FetchReply f = b.fetch({"t", 0}, 0, 10);
  ASSERT_EQ(f.records.size(), 3u);
  EXPECT_GT(f.records[0].offset, f.records[1].offset);
}

// Sends the same (producer, sequence) three times, as a client retrying a lost ack does.
int64_t send_with_retries(Broker& b, const InitProducerReply& pid, int32_t seq) {
  ProduceRequest r = req("k", "v" + std::to_string(seq));
  r.producer_id = pid.producer_id;
  r.epoch = pid.epoch;
  r.sequence = seq;
  int64_t first = -1;
  for (int attempt = 0; attempt < 3; ++attempt) {
    ProduceReply reply = b.produce(r, kT0);
    EXPECT_EQ(reply.status, LogStatus::kOk);
    if (attempt == 0) first = reply.offset;
    if (attempt > 0) EXPECT_EQ(reply.offset, first);  // the first outcome, again
  }
  return first;
}

TEST(Broker, IdempotentProducerDedupsRetriedSends) {
  Broker b = make_broker({}, 1);
  InitProducerReply pid = b.init_producer("", kT0);
  for (int32_t seq = 0; seq < 4; ++seq) send_with_retries(b, pid, seq);
  EXPECT_EQ(b.log_end_offset({"t", 0}), 4);
  EXPECT_EQ(b.stats().duplicates, 8u);
  // A gap means a send in between was lost.
  ProduceRequest gap = req("k", "gap");
  gap.producer_id = pid.producer_id;
  gap.epoch = pid.epoch;
  gap.sequence = 6;
  EXPECT_EQ(b.produce(gap, kT0).status, LogStatus::kOutOfOrderSequence);
}

TEST(Broker, WithoutDedupRetriedSendsAreDuplicated) {
  BrokerConfig broken;
  broken.broken_no_dedup = true;
  Broker b = make_broker(broken, 1);
  InitProducerReply pid = b.init_producer("", kT0);
  ProduceRequest r = req("k", "v");
  r.producer_id = pid.producer_id;
  r.epoch = pid.epoch;
  r.sequence = 0;
  b.produce(r, kT0);
  b.produce(r, kT0);
  EXPECT_EQ(b.log_end_offset({"t", 0}), 2);  // the duplicate the property is about
}

ProduceRequest txn_req(const InitProducerReply& p, int32_t seq, const std::string& value) {
  ProduceRequest r = req("k", value);
  r.producer_id = p.producer_id;
  r.epoch = p.epoch;
  r.sequence = seq;
  r.transactional = true;
  return r;
}

TEST(Broker, TransactionalEpochFencesTheOlderProducer) {
  Broker b = make_broker({}, 1);
  InitProducerReply old_p = b.init_producer("tx", kT0);
  ASSERT_EQ(b.produce(txn_req(old_p, 0, "a"), kT0).status, LogStatus::kOk);
  EXPECT_EQ(b.fetch({"t", 0}, 0, 10).records.size(), 0u);    // read_committed: not visible yet
  InitProducerReply new_p = b.init_producer("tx", kT0 + 1);  // a new instance: epoch + 1
  EXPECT_EQ(new_p.producer_id, old_p.producer_id);
  EXPECT_EQ(new_p.epoch, old_p.epoch + 1);
  EXPECT_EQ(b.produce(txn_req(old_p, 1, "b"), kT0 + 2).status, LogStatus::kProducerFenced);
  EXPECT_EQ(b.end_transaction("tx", old_p.producer_id, old_p.epoch, true, {}, kT0 + 2), LogStatus::kProducerFenced);
  ASSERT_EQ(b.produce(txn_req(new_p, 0, "c"), kT0 + 3).status, LogStatus::kOk);
  ASSERT_EQ(b.end_transaction("tx", new_p.producer_id, new_p.epoch, true, {}, kT0 + 3), LogStatus::kOk);
  FetchReply f = b.fetch({"t", 0}, 0, 10);
  ASSERT_EQ(f.records.size(), 1u);  // "a" was aborted by the new init, "b" fenced
  EXPECT_EQ(f.records[0].value, "c");
}

TEST(Broker, WithoutFencingTheZombieProducerCommits) {
  BrokerConfig broken;
  broken.broken_no_fencing = true;
  Broker b = make_broker(broken, 1);
  InitProducerReply old_p = b.init_producer("tx", kT0);
  InitProducerReply new_p = b.init_producer("tx", kT0 + 1);
  (void)new_p;
  EXPECT_EQ(b.produce(txn_req(old_p, 0, "zombie"), kT0 + 2).status, LogStatus::kOk);
  EXPECT_EQ(b.end_transaction("tx", old_p.producer_id, old_p.epoch, true, {}, kT0 + 2), LogStatus::kOk);
  EXPECT_EQ(b.log_end_offset({"t", 0}), 1);
}

TEST(Broker, TransactionTimeoutAbortsAndFencesAPausedProducer) {
  BrokerConfig config;
  config.transaction_timeout_us = 1'000;
  Broker b = make_broker(config, 1);
  InitProducerReply p = b.init_producer("tx", kT0);
  ASSERT_EQ(b.produce(txn_req(p, 0, "a"), kT0).status, LogStatus::kOk);
  b.tick(kT0 + 5'000);  // the producer was paused (a GC pause) past the timeout: KIP-588
  EXPECT_EQ(b.transactional_epoch("tx"), p.epoch + 1);
  EXPECT_EQ(b.end_transaction("tx", p.producer_id, p.epoch, true, {}, kT0 + 5'001), LogStatus::kProducerFenced);
  EXPECT_EQ(b.log_end_offset({"t", 0}), 0);
}

TEST(Broker, TransactionalOffsetsNeedTheCurrentGeneration) {
  Broker b = make_broker({}, 1);
  JoinReply j = b.join("g", "c", {"t"}, RebalanceProtocol::kEager, 10'000, kT0);
  InitProducerReply p = b.init_producer("tx", kT0);
  ASSERT_EQ(b.produce(txn_req(p, 0, "out"), kT0).status, LogStatus::kOk);
  b.join("g", "d", {"t"}, RebalanceProtocol::kEager, 10'000, kT0 + 1);  // generation moves on
  TxnOffsets offsets{"g", j.member_id, j.generation, {{{"t", 0}, 5}}};
  EXPECT_EQ(b.end_transaction("tx", p.producer_id, p.epoch, true, offsets, kT0 + 2), LogStatus::kCommitFailed);
  EXPECT_EQ(b.log_end_offset({"t", 0}), 0);  // aborted as a whole
  EXPECT_FALSE(b.committed("g", {"t", 0}).has_value());
}

TEST(Broker, AckedRecordsAndCommitsSurviveRestart) {
  Broker b = make_broker({}, 2);
  for (int i = 0; i < 10; ++i) b.produce(req("k" + std::to_string(i), "v"), kT0);
  JoinReply j = b.join("g", "c", {"t"}, RebalanceProtocol::kEager, 10'000, kT0);
  ASSERT_EQ(b.poll("g", j.member_id, {}, 100, kT0).status, LogStatus::kOk);
  ASSERT_EQ(b.commit("g", j.member_id, j.generation, {{{"t", 0}, 2}}, kT0), LogStatus::kOk);
  const int64_t end0 = b.log_end_offset({"t", 0}), end1 = b.log_end_offset({"t", 1});
  b.restart(kT0 + 10);
  EXPECT_EQ(b.log_end_offset({"t", 0}), end0);
  EXPECT_EQ(b.log_end_offset({"t", 1}), end1);
  EXPECT_EQ(b.committed("g", {"t", 0}), 2);
  // Membership is volatile: the member must rejoin, into a newer generation.
  EXPECT_EQ(b.poll("g", j.member_id, {}, 10, kT0 + 11).status, LogStatus::kUnknownMember);
  JoinReply again = b.join("g", "c", {"t"}, RebalanceProtocol::kEager, 10'000, kT0 + 12);
  EXPECT_GT(again.generation, j.generation);
  EXPECT_EQ(b.commit("g", j.member_id, j.generation, {{{"t", 0}, 1}}, kT0 + 13), LogStatus::kCommitFailed);
}

TEST(Broker, AckBeforeSyncLosesAckedRecordsOnRestart) {
  BrokerConfig broken;
  broken.broken_ack_before_sync = true;
  broken.sync_interval_us = 1'000'000;
  Broker b = make_broker(broken, 1);
  b.tick(kT0);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(b.produce(req("k", "v"), kT0 + 10).status, LogStatus::kOk);
  b.restart(kT0 + 20);
  EXPECT_LT(b.log_end_offset({"t", 0}), 5);  // acked, yet gone: what the durability test catches
}

TEST(Broker, RetentionByTimeAndSizeAdvancesTheLogStart) {
  TopicConfig tc;
  tc.retention_us = 1'000;
  Broker b = make_broker({}, 1, tc);
  for (int i = 0; i < 5; ++i) b.produce(req("k", "v"), kT0 + i * 400);
  b.tick(kT0 + 2'100);  // records at kT0, +400 and +800 are older than 1 ms
  EXPECT_EQ(b.log_start_offset({"t", 0}), 3);
  FetchReply f = b.fetch({"t", 0}, 0, 10);
  EXPECT_EQ(f.start_offset, 3);  // auto.offset.reset=earliest
  ASSERT_EQ(f.records.size(), 2u);
  EXPECT_EQ(f.records[0].offset, 3);

  TopicConfig by_size;
  by_size.retention_bytes = 10;  // each record is 2 bytes ("k" + "v")
  Broker s = make_broker({}, 1, by_size);
  for (int i = 0; i < 8; ++i) s.produce(req("k", "v"), kT0);
  s.tick(kT0 + 1);
  EXPECT_EQ(s.log_start_offset({"t", 0}), 3);
  EXPECT_EQ(s.log_end_offset({"t", 0}), 8);
}

TEST(Broker, SessionTimeoutEvictsAndBumpsGeneration) {
  Broker b = make_broker({}, 2);
  JoinReply a = b.join("g", "a", {"t"}, RebalanceProtocol::kCooperative, 1'000, kT0);
  JoinReply c = b.join("g", "c", {"t"}, RebalanceProtocol::kCooperative, 1'000, kT0);
  b.poll("g", a.member_id, {}, 10, kT0 + 1);
  b.poll("g", c.member_id, {}, 10, kT0 + 1);
  EXPECT_EQ(b.owners("g").size(), 2u);
  const int64_t gen = b.generation("g");
  b.poll("g", c.member_id, {}, 10, kT0 + 900);  // c heartbeats, a is silent (paused)
  b.tick(kT0 + 1'500);
  EXPECT_EQ(b.members("g"), std::vector<std::string>{c.member_id});
  EXPECT_EQ(b.generation("g"), gen + 1);
  PollReply r = b.poll("g", c.member_id, {}, 10, kT0 + 1'501);
  EXPECT_EQ(r.assignment.size(), 2u);  // the survivor owns every partition
  EXPECT_EQ(b.commit("g", a.member_id, gen, {{{"t", 0}, 0}}, kT0 + 1'502), LogStatus::kCommitFailed);
}

// ---- Half messages (RocketMQ transactional messages).

size_t visible(const Broker& b, const TopicPartition& tp) { return b.fetch(tp, 0, 100).records.size(); }

TEST(Broker, HalfMessageIsInvisibleUntilCommittedAndGoneWhenRolledBack) {
  Broker b = make_broker({}, 1);
  const TopicPartition tp{"t", 0};
  ProduceReply h1 = b.produce_half(req("room", "a"), "g", kT0);
  ProduceReply h2 = b.produce_half(req("room", "b"), "g", kT0);
  ASSERT_EQ(h1.status, LogStatus::kOk);
  EXPECT_NE(h1.half_id, h2.half_id);
  EXPECT_EQ(visible(b, tp), 0u);
  EXPECT_EQ(b.end_half(h1.half_id, HalfResolution::kUnknown, kT0), LogStatus::kOk);
  EXPECT_EQ(visible(b, tp), 0u);
  EXPECT_EQ(b.end_half(h1.half_id, HalfResolution::kCommit, kT0), LogStatus::kOk);
  EXPECT_EQ(b.end_half(h2.half_id, HalfResolution::kRollback, kT0), LogStatus::kOk);
  ASSERT_EQ(visible(b, tp), 1u);
  EXPECT_EQ(b.fetch(tp, 0, 10).records[0].value, "a");
  // Resolved: a second end (the producer's own after a check-back's) changes nothing.
  EXPECT_EQ(b.end_half(h1.half_id, HalfResolution::kCommit, kT0), LogStatus::kNotInTransaction);
  EXPECT_EQ(b.end_half(h2.half_id, HalfResolution::kCommit, kT0), LogStatus::kNotInTransaction);
  EXPECT_EQ(visible(b, tp), 1u);
}

TEST(Broker, UnresolvedHalfIsCheckedBackAfterTheTimeoutThenDiscarded) {
  BrokerConfig c;
  c.half_check_timeout_us = 6'000'000;
  c.half_check_interval_us = 1'000'000;
  c.half_check_max = 3;
  Broker b = make_broker(c, 1);
  b.register_checker("g", "p1.check", kT0);
  b.register_checker("g", "p2.check", kT0);
  ProduceReply h = b.produce_half(req("room", "a"), "g", kT0);
  for (int64_t t = kT0; t < kT0 + 6'000'000; t += 500'000) b.tick(t);
  EXPECT_TRUE(b.take_half_checks().empty());  // younger than the timeout: not checked
  std::vector<std::string> services;
  for (int64_t t = kT0 + 6'000'000; t <= kT0 + 12'000'000; t += 500'000) {
    b.tick(t);
    for (const HalfCheckDue& d : b.take_half_checks()) {
      EXPECT_EQ(d.check.half_id, h.half_id);
      EXPECT_EQ(d.check.value, "a");
      EXPECT_EQ(d.check.check, static_cast<int32_t>(services.size()) + 1);
      services.push_back(d.service);
    }
  }
  // Three checks, round robin over the live check services, then the half is discarded.
  EXPECT_EQ(services, (std::vector<std::string>{"p1.check", "p2.check", "p1.check"}));
  EXPECT_EQ(b.open_halves(), 0u);
  EXPECT_EQ(b.stats().halves_discarded, 1u);
  EXPECT_EQ(b.end_half(h.half_id, HalfResolution::kCommit, kT0 + 13'000'000), LogStatus::kNotInTransaction);
  EXPECT_EQ(visible(b, TopicPartition{"t", 0}), 0u);
}

TEST(Broker, HalvesSurviveRestartButCheckersMustReRegister) {
  BrokerConfig c;
  c.half_check_interval_us = 1'000'000;
  Broker b = make_broker(c, 1);
  b.register_checker("g", "p1.check", kT0);
  ProduceReply h = b.produce_half(req("room", "a"), "g", kT0);
  b.restart(kT0 + 1'000'000);
  EXPECT_EQ(b.open_halves(), 1u);
  b.tick(kT0 + 7'000'000);
  EXPECT_TRUE(b.take_half_checks().empty());  // nobody registered since the restart
  b.register_checker("g", "p2.check", kT0 + 7'500'000);
  b.tick(kT0 + 8'000'000);
  std::vector<HalfCheckDue> due = b.take_half_checks();
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].service, "p2.check");
  EXPECT_EQ(due[0].check.check, 2);  // the scan without a checker counted too
  EXPECT_EQ(b.end_half(h.half_id, HalfResolution::kCommit, kT0 + 8'100'000), LogStatus::kOk);
  EXPECT_EQ(visible(b, TopicPartition{"t", 0}), 1u);
}

}  // namespace
}  // namespace fl::sim::log
