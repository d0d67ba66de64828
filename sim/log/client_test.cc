// The Log port over the simulated network: a broker process, client processes, faults.
#include "sim/log/client.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/log/server.h"
#include "sim/world.h"

namespace fl::sim::log {
namespace {

constexpr int64_t kSecondUs = 1'000'000;

struct Cluster {
  explicit Cluster(uint64_t seed, BrokerConfig config = {}, int32_t partitions = 3)
      : world(WorldOptions{.seed = seed}), server(config) {
    broker_node = world.add_node("broker");
    client_node = world.add_node("client");
    TopicConfig tc;
    tc.partitions = partitions;
    EXPECT_EQ(server.broker().create_topic("t", tc), LogStatus::kOk);
    broker = &world.add_process(broker_node, "broker", server.boot_fn());
    world.start(*broker);
  }
  Process& client(const std::string& name, BootFn boot) {
    // Clients start 1 ms after the broker has registered its service.
    Process& p = world.add_process(client_node, name, std::move(boot));
    world.after(1'000, [this, &p] { world.start(p); });
    return p;
  }
  World world;
  BrokerServer server;
  uint32_t broker_node = 0, client_node = 0;
  Process* broker = nullptr;
};

TEST(LogClient, ProducesAndConsumesInPartitionOrder) {
  Cluster s(1);
  std::vector<LogRecord> got;
  s.client("app", [&](Process& self) -> Task<void> {
    LogClient log(self, self.rpc());
    auto producer = log.producer({});
    for (int i = 0; i < 30; ++i) {
      ProduceResult r = co_await producer->produce("t", "k" + std::to_string(i % 5), std::to_string(i));
      EXPECT_TRUE(r.ok());
      EXPECT_EQ(r.partition, partition_for_key("k" + std::to_string(i % 5), 3));
    }
    auto consumer = log.consumer({.group = "g"});
    JoinResult j = co_await consumer->join({"t"});
    EXPECT_EQ(j.status, LogStatus::kOk);
    for (int round = 0; round < 20 && got.size() < 30; ++round) {
      PollResult p = co_await consumer->poll(7, 100'000);
      EXPECT_EQ(p.status, LogStatus::kOk);
      for (auto& r : p.records) got.push_back(r);
    }
  });
  s.world.run_until(kEpochUs + 10 * kSecondUs);
  ASSERT_EQ(got.size(), 30u);
  std::map<int32_t, int64_t> next;
  for (const auto& r : got) EXPECT_EQ(r.offset, next[r.partition]++) << r.describe();
}

// Records carry the broker node's clock; a jump back freezes it (the broker never goes back),
// so their stamps stop telling when they were appended. append_times() keeps the world time.
TEST(LogClient, AppendTimesAreWorldTimeWhateverTheBrokersClock) {
  Cluster s(1);
  s.world.at(kEpochUs + 500'000, [&s] { s.world.clock_jump(s.broker_node, -60 * kSecondUs); });
  std::vector<int64_t> sent_at;
  s.client("app", [&](Process& self) -> Task<void> {
    LogClient log(self, self.rpc());
    auto producer = log.producer({});
    for (int i = 0; i < 3; ++i) {
      co_await self.clock().sleep_us(400'000);
      sent_at.push_back(self.world().now_us());
      ProduceResult r = co_await producer->produce("t", "k", std::to_string(i));
      EXPECT_TRUE(r.ok());
    }
  });
  s.world.run_until(kEpochUs + 3 * kSecondUs);
  const int32_t p = partition_for_key("k", 3);
  FetchReply f = s.server.broker().fetch({"t", p}, 0, 10);
  ASSERT_EQ(f.records.size(), 3u);
  EXPECT_EQ(f.records[1].timestamp_us, f.records[2].timestamp_us);  // frozen after the jump
  for (size_t i = 0; i < 3; ++i) {
    const auto it = s.server.append_times().find({"t", p, static_cast<int64_t>(i)});
    ASSERT_NE(it, s.server.append_times().end());
    EXPECT_GE(it->second, sent_at[i]);
    EXPECT_LT(it->second, sent_at[i] + 100'000);
  }
}

// served_reads() names the process each poll's records went to (the world's name for it, whatever
// client id the consumer chose), its group, and the offsets returned, as ranges; an empty poll is
// not a read. A judge rebuilds from it what a reader saw without asking the reader.
TEST(LogClient, ServedReadsNameTheCallerTheGroupAndTheOffsetsReturned) {
  Cluster s(1);
  s.server.track_reads();
  std::map<std::string, std::map<int32_t, std::set<int64_t>>> got;  // process -> partition -> offsets
  s.client("writer", [&](Process& self) -> Task<void> {
    LogClient log(self, self.rpc());
    auto producer = log.producer({});
    for (int i = 0; i < 12; ++i) EXPECT_TRUE((co_await producer->produce("t", "k" + std::to_string(i % 4), "v")).ok());
  });
  for (const char* name : {"reader-a", "reader-b"}) {
    s.client(name, [&, name](Process& self) -> Task<void> {
      co_await self.clock().sleep_us(500'000);
      LogClient log(self, self.rpc());
      auto consumer = log.consumer({.group = std::string("g-") + name, .client_id = "someone-else"});
      EXPECT_EQ((co_await consumer->join({"t"})).status, LogStatus::kOk);
      for (int round = 0; round < 10; ++round) {
        PollResult p = co_await consumer->poll(5, 50'000);
        for (const LogRecord& r : p.records) got[name][r.partition].insert(r.offset);
      }
    });
  }
  s.world.run_until(kEpochUs + 5 * kSecondUs);
  std::map<std::string, std::map<int32_t, std::set<int64_t>>> served;
  for (const ServedRead& r : s.server.served_reads()) {
    EXPECT_EQ(r.group, "g-" + r.caller);
    EXPECT_FALSE(r.ranges.empty());
    EXPECT_GE(r.time_us, kEpochUs + 500'000);
    for (const ServedRead::Range& range : r.ranges) {
      EXPECT_EQ(range.topic, "t");
      EXPECT_LT(range.from, range.to);
      for (int64_t o = range.from; o < range.to; ++o) EXPECT_TRUE(served[r.caller][range.partition].insert(o).second);
    }
  }
  EXPECT_EQ(served.size(), 2u);
  EXPECT_EQ(served, got);
  size_t n = 0;
  for (const auto& [p, offsets] : served["reader-a"]) n += offsets.size();
  EXPECT_EQ(n, 12u);
}

// A network that loses replies from the broker: produce acks get lost.
void lose_replies(Cluster& s, double p) {
  LinkOptions lossy;
  lossy.drop_probability = p;
  s.world.network().set_link(s.broker_node, s.client_node, lossy);
}

int64_t total_records(Broker& b) {
  int64_t n = 0;
  for (int32_t p = 0; p < b.partition_count("t"); ++p) n += b.log_end_offset({"t", p});
  return n;
}

TEST(LogClient, LostAckIsIndeterminateAndTheRecordMayBeThere) {
  Cluster s(2);
  lose_replies(s, 0.5);
  int ok = 0, indeterminate = 0, unavailable = 0;
  s.client("app", [&](Process& self) -> Task<void> {
    LogClient log(self, self.rpc());
    auto producer = log.producer({.request_timeout_us = 50'000});
    for (int i = 0; i < 40; ++i) {
      ProduceResult r = co_await producer->produce("t", "k", std::to_string(i));
      if (r.ok()) ++ok;
      if (r.indeterminate()) ++indeterminate;
      // A lost metadata reply: the record was never sent.
      if (r.status == LogStatus::kUnavailable) ++unavailable;
    }
  });
  s.world.run_until(kEpochUs + 60 * kSecondUs);
  EXPECT_GT(indeterminate, 0);
  EXPECT_EQ(ok + indeterminate + unavailable, 40);
  // Every request arrived (only replies are lost): indeterminate ones are there too.
  EXPECT_EQ(total_records(s.server.broker()), ok + indeterminate);
}

// The app retries each record until it gets an answer; returns the number of stored records.
int64_t produce_with_retries(BrokerConfig config, bool idempotent) {
  Cluster s(3, config);
  lose_replies(s, 0.4);
  s.client("app", [&](Process& self) -> Task<void> {
    LogClient log(self, self.rpc());
    auto producer = log.producer({.idempotent = idempotent, .request_timeout_us = 50'000, .retries = 50});
    for (int i = 0; i < 20; ++i) {
      ProduceResult r = co_await producer->produce("t", "k", std::to_string(i));
      EXPECT_TRUE(r.ok()) << log_status_name(r.status);
    }
  });
  s.world.run_until(kEpochUs + 120 * kSecondUs);
  return total_records(s.server.broker());
}

TEST(LogClient, IdempotentProducerDedupsRetriedSends) {
  EXPECT_EQ(produce_with_retries({}, true), 20);
  EXPECT_GT(produce_with_retries({}, false), 20);  // retries without idempotence duplicate
  BrokerConfig broken;
  broken.broken_no_dedup = true;
  EXPECT_GT(produce_with_retries(broken, true), 20);  // and so does a broker that ignores seqs
}

TEST(LogClient, NewerTransactionalProducerFencesTheOlder) {
  Cluster s(4);
  std::vector<LogStatus> old_results;
  s.client("app", [&](Process& self) -> Task<void> {
    LogClient log(self, self.rpc());
    auto old_p = log.producer({.transactional_id = "tx"});
    auto new_p = log.producer({.transactional_id = "tx"});
    EXPECT_EQ(co_await old_p->init(), LogStatus::kOk);
    EXPECT_EQ(co_await old_p->begin_transaction(), LogStatus::kOk);
    EXPECT_TRUE((co_await old_p->produce("t", "k", "old")).ok());
    EXPECT_EQ(co_await new_p->init(), LogStatus::kOk);  // fences old_p, aborts its transaction
    EXPECT_EQ(new_p->epoch(), old_p->epoch() + 1);
    old_results.push_back((co_await old_p->produce("t", "k", "old2")).status);
    old_results.push_back(co_await old_p->commit_transaction());
    EXPECT_EQ(co_await new_p->begin_transaction(), LogStatus::kOk);
    EXPECT_TRUE((co_await new_p->produce("t", "k", "new")).ok());
    EXPECT_EQ(co_await new_p->commit_transaction(), LogStatus::kOk);
  });
  s.world.run_until(kEpochUs + 10 * kSecondUs);
  EXPECT_EQ(old_results, (std::vector<LogStatus>{LogStatus::kProducerFenced, LogStatus::kProducerFenced}));
  const int32_t p = partition_for_key("k", 3);
  FetchReply f = s.server.broker().fetch({"t", p}, 0, 10);
  ASSERT_EQ(f.records.size(), 1u);
  EXPECT_EQ(f.records[0].value, "new");
}

// Consumer `name` processes records (a side effect per record) and commits after each poll.
struct Worker {
  std::vector<std::string> effects;
  std::vector<LogStatus> commits;
};

BootFn worker_boot(Worker* w, std::string group) {
  return [w, group](Process& self) -> Task<void> {
    LogClient log(self, self.rpc());
    auto consumer = log.consumer({.group = group, .session_timeout_us = 300'000});
    co_await consumer->join({"t"});
    for (;;) {
      PollResult p = co_await consumer->poll(100, 50'000);
      if (p.records.empty()) continue;
      OffsetMap next;
      for (const auto& r : p.records) next[{r.topic, r.partition}] = r.offset + 1;
      co_await self.clock().sleep_us(20'000);  // processing takes time: a pause can land here
      for (const auto& r : p.records) w->effects.push_back(r.value);
      w->commits.push_back(co_await consumer->commit(next));
    }
  };
}

TEST(LogClient, PausedConsumerBecomesAZombieWhoseCommitIsRejected) {
  Cluster s(5, {}, 1);
  Worker a, b;
  Process& pa = s.client("a", worker_boot(&a, "g"));
  s.client("producer", [&](Process& self) -> Task<void> {
    LogClient log(self, self.rpc());
    auto producer = log.producer({});
    for (int i = 0; i < 10; ++i) co_await producer->produce("t", "k", std::to_string(i));
  });
  // a owns the only partition; once it has polled, pause it for far longer than its session.
  s.world.at(kEpochUs + 30'000, [&] { s.world.pause(pa, 2 * kSecondUs); });
  s.world.at(kEpochUs + 100'000, [&] { s.client("b", worker_boot(&b, "g")); });
  s.world.at(kEpochUs + 1 * kSecondUs, [&] {
    Process* prod = s.world.find_process("producer");
    prod->spawn("more", [](Process& self) -> Task<void> {
      LogClient log(self, self.rpc());
      auto producer = log.producer({});
      for (int i = 10; i < 15; ++i) co_await producer->produce("t", "k", std::to_string(i));
    }(*prod));
  });
  s.world.run_until(kEpochUs + 4 * kSecondUs);
  // The zombie's side effects happened (at-least-once: b redid them) ...
  ASSERT_FALSE(a.effects.empty());
  ASSERT_FALSE(a.commits.empty());
  EXPECT_EQ(a.commits.front(), LogStatus::kCommitFailed);
  std::set<std::string> all(b.effects.begin(), b.effects.end());
  for (const auto& e : a.effects) all.insert(e);
  EXPECT_EQ(all.size(), 15u);  // nothing lost
  // ... and b's progress was not rolled back by the zombie's commit.
  EXPECT_EQ(s.server.broker().committed("g", {"t", 0}), 15);
}

TEST(LogClient, AckedRecordsSurviveBrokerRestart) {
  for (bool broken_sync : {false, true}) {
    BrokerConfig config;
    config.broken_ack_before_sync = broken_sync;
    config.sync_interval_us = 10 * kSecondUs;
    Cluster s(6, config);
    int acked = 0;
    s.client("app", [&](Process& self) -> Task<void> {
      LogClient log(self, self.rpc());
      auto producer = log.producer({});
      for (int i = 0; i < 25; ++i)
        if ((co_await producer->produce("t", "k" + std::to_string(i), "v")).ok()) ++acked;
    });
    s.world.at(kEpochUs + kSecondUs, [&] { s.world.crash(*s.broker, "test"); });
    s.world.at(kEpochUs + kSecondUs + 1'000, [&] { s.world.restart(*s.broker); });
    s.world.run_until(kEpochUs + 3 * kSecondUs);
    EXPECT_EQ(acked, 25);
    if (broken_sync) {
      EXPECT_LT(total_records(s.server.broker()), acked);  // the durability check catches it
    } else {
      EXPECT_EQ(total_records(s.server.broker()), acked);
    }
  }
}

}  // namespace
}  // namespace fl::sim::log
