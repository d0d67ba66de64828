// Whole-system speed of the combo system (seed 000) driven through the harness runner, the same
// code path as `faultline run` / `faultline sweep` (checkers included).
//
//   BM_ComboLoad200Clients      one run of scenarios/combo/load-200-clients-hardened.yaml per
//                               iteration (4 replicas with their stream workers, a gateway, 200
//                               front ends of 100 users, swarm faults, 40 simulated s): counters
//                               sim_s_per_wall_s and events_per_s.
//   BM_ComboExplore             one run of scenarios/combo/explore-hardened.yaml (the standard
//                               exploratory scenario: 3 replicas, 12 front ends) per iteration.
//   BM_ComboSweep/threads       kSweepSeeds seeds of explore-hardened through run_scenario, split
//                               over `threads` threads (the machine has 2 cores): counter
//                               seeds_per_min. Before timing, every seed's fingerprint from the
//                               threaded sweep is compared with a sequential run's, so the
//                               threads provably share no state; a mismatch aborts the benchmark.
//
// Every run must pass its properties (hardened); a failing run is reported as an error, because
// a speed figure for a broken run means nothing.
//
//   ninja -C build-combo-rel combo_bench && build-combo-rel/bench/combo_bench
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "harness/runner.h"
#include "bench/bench_scenario.h"
#include "harness/scenario_loader.h"

namespace {

using fl::bench::scenario;

constexpr uint64_t kSweepSeeds = 40;

void run_one(benchmark::State& state, const char* file) {
  const fl::Scenario& s = scenario(file);
  uint64_t seed = 1;
  double simulated_s = 0, events = 0;
  for (auto _ : state) {
    fl::RunResult r = fl::run_scenario(s, seed++, fl::RunOptions{});
    if (!r.error.empty() || !r.as_expected) {
      state.SkipWithError(("seed " + std::to_string(r.seed) + " not as expected: " + r.error).c_str());
      return;
    }
    simulated_s += static_cast<double>(r.simulated_us) / 1e6;
    events += static_cast<double>(r.events);
  }
  state.counters["sim_s_per_wall_s"] = benchmark::Counter(simulated_s, benchmark::Counter::kIsRate);
  state.counters["events_per_s"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
}

void BM_ComboLoad200Clients(benchmark::State& state) {
  run_one(state, "scenarios/combo/load-200-clients-hardened.yaml");
}
BENCHMARK(BM_ComboLoad200Clients)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(3);

void BM_ComboExplore(benchmark::State& state) { run_one(state, "scenarios/combo/explore-hardened.yaml"); }
BENCHMARK(BM_ComboExplore)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(20);

// Seeds [first, first + n) over `threads` threads (seed i goes to thread i % threads).
std::vector<fl::RunResult> sweep(const fl::Scenario& s, uint64_t first, uint64_t n, int threads) {
  std::vector<fl::RunResult> out(n);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (uint64_t i = static_cast<uint64_t>(t); i < n; i += static_cast<uint64_t>(threads)) {
        out[i] = fl::run_scenario(s, first + i, fl::RunOptions{});
      }
    });
  }
  for (std::thread& th : pool) th.join();
  return out;
}

void BM_ComboSweep(benchmark::State& state) {
  const fl::Scenario& s = scenario("scenarios/combo/explore-hardened.yaml");
  const int threads = static_cast<int>(state.range(0));
  {
    // Isolation check (untimed): threaded fingerprints == sequential fingerprints.
    const std::vector<fl::RunResult> seq = sweep(s, 1, 8, 1);
    const std::vector<fl::RunResult> par = sweep(s, 1, 8, threads);
    for (size_t i = 0; i < seq.size(); ++i) {
      if (seq[i].fingerprint != par[i].fingerprint) {
        state.SkipWithError("a threaded run differs from the sequential run of the same seed");
        return;
      }
    }
  }
  uint64_t first = 1, seeds = 0;
  for (auto _ : state) {
    for (const fl::RunResult& r : sweep(s, first, kSweepSeeds, threads)) {
      if (!r.error.empty() || !r.as_expected) {
        state.SkipWithError(("seed " + std::to_string(r.seed) + " not as expected").c_str());
        return;
      }
    }
    first += kSweepSeeds;
    seeds += kSweepSeeds;
  }
  state.counters["seeds_per_min"] = benchmark::Counter(static_cast<double>(seeds) * 60.0, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ComboSweep)->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
