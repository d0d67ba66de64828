// Scheduler speed: events per second of the world resuming coroutines, against a bare
// priority_queue event loop measured in the same run (the baseline).
//
//   BM_BareLoop/N        pop the earliest of N pending (time, seq, index) events, push one later
//   BM_WorldTimers/N     N tasks in one process, each looping `co_await clock.sleep_us(d)`:
//                        N pending timers, every event a coroutine resume, fingerprint on
//   BM_WorldPingPong/N   N client tasks calling an echo service over the simulated network
//
// The ratio is reported by BM_WorldTimers as the counter `vs_bare` (world events/s divided by
// the bare loop's events/s at the same N, measured first in the same process).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <queue>
#include <vector>

#include "sim/world.h"

namespace {

using fl::Task;
using fl::sim::kEpochUs;
using fl::sim::Process;
using fl::sim::World;

// Delays shared by both loops so they do the same work: 1..1024 us, fixed sequence.
std::vector<int64_t> make_delays() {
  std::vector<int64_t> d(4096);
  uint64_t x = 88172645463325252ULL;
  for (auto& v : d) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v = 1 + static_cast<int64_t>(x % 1024);
  }
  return d;
}
const std::vector<int64_t>& delays() {
  static const std::vector<int64_t> d = make_delays();
  return d;
}

std::map<int64_t, double>& bare_rates() {
  static std::map<int64_t, double> rates;  // pending events -> events/s, filled by BM_BareLoop
  return rates;
}

struct BareEvent {
  int64_t time;
  uint64_t seq;
  uint32_t index;
  bool operator>(const BareEvent& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

void BM_BareLoop(benchmark::State& state) {
  const int64_t pending = state.range(0);
  std::priority_queue<BareEvent, std::vector<BareEvent>, std::greater<BareEvent>> q;
  uint64_t seq = 0;
  for (int64_t i = 0; i < pending; ++i) q.push({delays()[i % 4096], seq++, static_cast<uint32_t>(i)});
  size_t k = 0;
  int64_t events = 0;
  for (auto _ : state) {
    BareEvent e = q.top();
    q.pop();
    q.push({e.time + delays()[k++ & 4095], seq++, e.index});
    ++events;
  }
  state.SetItemsProcessed(events);
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

Task<void> sleeper(Process& p, size_t offset, int64_t* resumes) {
  for (size_t k = offset;; ++k) {
    co_await p.clock().sleep_us(delays()[k & 4095]);
    ++*resumes;
  }
}

void BM_WorldTimers(benchmark::State& state) {
  const int64_t pending = state.range(0);
  World world(fl::sim::WorldOptions{.seed = 42});
  int64_t resumes = 0;
  Process& p = world.add_process(world.add_node("n"), "timers", [&](Process& self) -> Task<void> {
    for (int64_t i = 0; i < pending; ++i) self.spawn("sleeper", sleeper(self, static_cast<size_t>(i), &resumes));
    co_return;
  });
  world.start(p);
  for (int i = 0; i < 4 && world.step(); ++i) {}
  for (auto _ : state) world.step();
  state.SetItemsProcessed(state.iterations());
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  benchmark::DoNotOptimize(world.trace().fingerprint());
}

// Reports the ratio after both have run: a separate benchmark reads the recorded rates.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      const std::string name = r.benchmark_name();
      auto it = r.counters.find("events_per_s");
      if (it == r.counters.end()) continue;
      const double rate = it->second.value;
      const int64_t n = std::stoll(name.substr(name.rfind('/') + 1));
      if (name.rfind("BM_BareLoop", 0) == 0) bare_rates()[n] = rate;
      if (name.rfind("BM_WorldTimers", 0) == 0 && bare_rates().count(n)) {
        ratios_.emplace_back(n, rate / bare_rates()[n]);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    for (auto [n, ratio] : ratios_) {
      std::printf("ratio world/bare at %lld pending events: %.2f\n", static_cast<long long>(n), ratio);
    }
  }

 private:
  std::vector<std::pair<int64_t, double>> ratios_;
};

struct Ping {
  int64_t n;
  std::string describe() const { return "ping"; }
};

void BM_WorldPingPong(benchmark::State& state) {
  const int64_t callers = state.range(0);
  World world(fl::sim::WorldOptions{.seed = 7});
  int64_t calls = 0;
  Process& server = world.add_process(world.add_node("s"), "server", [](Process& self) -> Task<void> {
    self.rpc().serve("echo", [](fl::MessagePtr m) -> Task<fl::MessagePtr> { co_return m; });
    co_return;
  });
  Process& client = world.add_process(world.add_node("c"), "client", [&](Process& self) -> Task<void> {
    for (int64_t i = 0; i < callers; ++i) {
      self.spawn("caller", [](Process& p, int64_t* count) -> Task<void> {
        fl::MessagePtr ping = fl::make_message(Ping{0});
        for (;;) {
          fl::RpcResult r = co_await p.rpc().call("echo", ping, 1'000'000);
          if (r.ok()) ++*count;
        }
      }(self, &calls));
    }
    co_return;
  });
  world.start(server);
  world.start(client);
  for (auto _ : state) world.step();
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["calls_per_s"] = benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_BareLoop)->Arg(1)->Arg(1024)->Arg(65536);
BENCHMARK(BM_WorldTimers)->Arg(1)->Arg(1024)->Arg(65536);
BENCHMARK(BM_WorldPingPong)->Arg(1)->Arg(64);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
