// Records per second through the partitioned log, against a plain std::deque in the same run.
//   BM_DequeBaseline      push N records into a deque, pop them all (the floor: no log at all)
//   BM_BrokerPure         produce N keyed records to the pure Broker, consume them through a
//                         consumer group (poll + commit), no network
//   BM_BrokerSimNetwork   the same through the Log port: a producer and a consumer process talk
//                         to the broker process over the simulated network (one call per record)
// Each reports items_per_second (records produced + consumed count once per record); the
// ratio_vs_deque counter is deque time / this time per record (so < 1: slower than the deque).
#include <benchmark/benchmark.h>

#include <chrono>
#include <deque>
#include <string>

#include "sim/log/broker.h"
#include "sim/log/client.h"
#include "sim/log/server.h"
#include "sim/world.h"

namespace {

using namespace fl::sim::log;

double g_deque_ns_per_record = 0;

std::string key_of(int64_t i) { return "user" + std::to_string(i % 97); }

void BM_DequeBaseline(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    std::deque<std::pair<std::string, std::string>> q;
    for (int64_t i = 0; i < n; ++i) q.emplace_back(key_of(i), "v");
    int64_t consumed = 0;
    while (!q.empty()) {
      benchmark::DoNotOptimize(q.front());
      q.pop_front();
      ++consumed;
    }
    benchmark::DoNotOptimize(consumed);
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  g_deque_ns_per_record = ns / static_cast<double>(state.iterations() * n);
  state.SetItemsProcessed(state.iterations() * n);
}

void report_ratio(benchmark::State& state, double ns_per_record) {
  if (g_deque_ns_per_record > 0) state.counters["ratio_vs_deque"] = g_deque_ns_per_record / ns_per_record;
  state.counters["ns_per_record"] = ns_per_record;
}

void BM_BrokerPure(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    Broker b;
    b.create_topic("t", TopicConfig{4});
    int64_t now = 1'000'000;
    for (int64_t i = 0; i < n; ++i) {
      ProduceRequest r;
      r.topic = "t";
      r.key = key_of(i);
      r.value = "v";
      benchmark::DoNotOptimize(b.produce(r, ++now));
    }
    JoinReply j = b.join("g", "c", {"t"}, fl::RebalanceProtocol::kEager, 10'000'000, now);
    fl::OffsetMap positions;
    int64_t consumed = 0;
    while (consumed < n) {
      PollReply p = b.poll("g", j.member_id, positions, 500, ++now);
      consumed += static_cast<int64_t>(p.records.size());
      positions = p.positions;
      b.commit("g", j.member_id, p.generation, positions, now);
    }
    benchmark::DoNotOptimize(consumed);
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  state.SetItemsProcessed(state.iterations() * n);
  report_ratio(state, ns / static_cast<double>(state.iterations() * n));
}

void BM_BrokerSimNetwork(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    fl::sim::World world(fl::sim::WorldOptions{.seed = 1});
    BrokerServer server;
    server.broker().create_topic("t", TopicConfig{4});
    const uint32_t bn = world.add_node("broker"), cn = world.add_node("client");
    world.start(world.add_process(bn, "broker", server.boot_fn()));
    int64_t consumed = 0;
    fl::sim::Process& app = world.add_process(cn, "app", [&](fl::sim::Process& self) -> fl::Task<void> {
      co_await self.clock().sleep_us(1'000);
      LogClient log(self, self.rpc());
      auto producer = log.producer({});
      for (int64_t i = 0; i < n; ++i) co_await producer->produce("t", key_of(i), "v");
      auto consumer = log.consumer({.group = "g"});
      co_await consumer->join({"t"});
      while (consumed < n) {
        fl::PollResult p = co_await consumer->poll(500, 100'000);
        fl::OffsetMap next;
        for (const auto& r : p.records) next[{r.topic, r.partition}] = r.offset + 1;
        consumed += static_cast<int64_t>(p.records.size());
        if (!next.empty()) co_await consumer->commit(next);
      }
      world.stop("done");
    });
    world.start(app);
    world.run_until(fl::sim::kEpochUs + 3'600'000'000LL);
    if (consumed != n) state.SkipWithError("not everything was consumed");
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  state.SetItemsProcessed(state.iterations() * n);
  report_ratio(state, ns / static_cast<double>(state.iterations() * n));
}

BENCHMARK(BM_DequeBaseline)->Arg(10'000);
BENCHMARK(BM_BrokerPure)->Arg(10'000);
BENCHMARK(BM_BrokerSimNetwork)->Arg(10'000);

}  // namespace

BENCHMARK_MAIN();
