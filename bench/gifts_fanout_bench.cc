// Simulated fan-out speed of the gifts system (seed 003), through the harness runner (checkers
// included), the same code path as `faultline run`.
//
//   BM_GiftsFanout10000   one run of scenarios/gifts/fanout-10000-hardened.yaml per iteration:
//                         one room of 10,000 viewers on 4 gateways, two senders bursting for 5 s
//                         (25 simulated s with the quiet tail). Counters: plays_per_wall_s (each
//                         viewer's played messages, i.e. gift-play-once's checks), sim_s_per_wall_s
//                         and events_per_s.
//
// A run whose properties fail is an error: a speed figure for a broken run means nothing.
//
//   cmake --build --preset default --target gifts_fanout_bench && build/bench/gifts_fanout_bench
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness/runner.h"
#include "bench/bench_scenario.h"
#include "harness/scenario_loader.h"

namespace {

const fl::Scenario& fanout_scenario() { return fl::bench::scenario("scenarios/gifts/fanout-10000-hardened.yaml"); }

void BM_GiftsFanout10000(benchmark::State& state) {
  const fl::Scenario& s = fanout_scenario();
  uint64_t seed = 1;
  double plays = 0, simulated_s = 0, events = 0;
  for (auto _ : state) {
    fl::RunResult r = fl::run_scenario(s, seed++, fl::RunOptions{});
    if (!r.error.empty() || !r.as_expected) {
      state.SkipWithError(("seed " + std::to_string(r.seed) + " not as expected: " + r.error).c_str());
      return;
    }
    for (const fl::Verdict& v : r.verdicts) {
      if (v.property == "gift-play-once") plays += static_cast<double>(v.checks);
    }
    simulated_s += static_cast<double>(r.simulated_us) / 1e6;
    events += static_cast<double>(r.events);
  }
  state.counters["plays_per_wall_s"] = benchmark::Counter(plays, benchmark::Counter::kIsRate);
  state.counters["sim_s_per_wall_s"] = benchmark::Counter(simulated_s, benchmark::Counter::kIsRate);
  state.counters["events_per_s"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GiftsFanout10000)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
