// Speed of the ranking chain of seed 004 part 1 (normalize, expand, aggregate, version), through
// the harness runner (checkers included), against the same aggregation in a plain loop.
//
//   BM_RankingChain/incremental:0/judges:1  one run of scenarios/ranking/bench-chain-hardened.yaml per
//                         iteration (300 events over 1,000 topics, 10 s + 15 s tail; every flush
//                         writes the partition's whole state), judges included. Counters:
//                         events_per_wall_s (business events committed: the producers' emits
//                         that completed ok, which is rank-ingest-durable's check count),
//                         sim_s_per_wall_s.
//   BM_RankingChain/incremental:1/judges:1  the same with incremental checkpoints
//                         (bench-chain-incremental-hardened.yaml).
//   BM_RankingChain/.../judges:0  the same runs without the judges (RunOptions::judges): the chain
//                         alone, the figure to set against the plain loop below.
//   BM_PlainAggregation/300  the same number of events aggregated by model/ranking in a loop (no
//                         world): events_per_wall_s. The ratio of the two is the cost of the world.
//   BM_PlainAggregation/1000000  the same for a million events, once.
//
//   cmake --build --preset default --target ranking_chain_bench && build/bench/ranking_chain_bench
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness/runner.h"
#include "bench/bench_scenario.h"
#include "harness/scenario_loader.h"
#include "model/ranking/model.h"

namespace {

const fl::Scenario& chain_scenario(bool incremental) {
  return fl::bench::scenario(incremental ? "scenarios/ranking/bench-chain-incremental-hardened.yaml"
                                         : "scenarios/ranking/bench-chain-hardened.yaml");
}

void BM_RankingChain(benchmark::State& state) {
  const fl::Scenario& s = chain_scenario(state.range(0) != 0);
  fl::RunOptions options;
  options.judges = state.range(1) != 0;
  uint64_t seed = 1;
  double events = 0, simulated_s = 0;
  for (auto _ : state) {
    fl::RunResult r = fl::run_scenario(s, seed++, options);
    if (!r.error.empty() || (options.judges && !r.as_expected)) {
      state.SkipWithError(("seed " + std::to_string(r.seed) + " not as expected: " + r.error).c_str());
      return;
    }
    events += static_cast<double>(r.operations_ok);
    simulated_s += static_cast<double>(r.simulated_us) / 1e6;
  }
  state.counters["events_per_wall_s"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
  state.counters["sim_s_per_wall_s"] = benchmark::Counter(simulated_s, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RankingChain)
    ->ArgNames({"incremental", "judges"})
    ->ArgsProduct({{0, 1}, {1, 0}})
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(2);

void BM_PlainAggregation(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<std::string> payloads;
  const char* langs[] = {"zh-CN", "en-US"};
  const char* channels[] = {"local-news", "technology", "sports"};
  for (int i = 0; i < n; ++i) {
    payloads.push_back("actorKey=act" + std::to_string(i * 7919 % 5000) +
                       "\x1f"
                       "channelId=" +
                       channels[i % 3] +
                       "\x1f"
                       "contentOrQueryId=q" +
                       std::to_string(i % 200) +
                       "\x1f"
                       "eventId=e" +
                       std::to_string(i) +
                       "\x1f"
                       "eventTime=" +
                       std::to_string(1'000'000 + i * 7) +
                       "\x1f"
                       "eventType=SEARCH_EXECUTED\x1f"
                       "language=" +
                       langs[i % 2] +
                       "\x1f"
                       "regionId=CN-SH\x1f"
                       "sourceService=search-service\x1f"
                       "topicHints=t_" +
                       std::to_string(1 + i % 1000));
  }
  fl::ranking::model::Config cfg;
  cfg.topics = 1000;
  for (auto _ : state) benchmark::DoNotOptimize(fl::ranking::model::expected_values(payloads, cfg));
  state.counters["events_per_wall_s"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PlainAggregation)->Arg(300)->Unit(benchmark::kMillisecond)->UseRealTime();
// The scale, one iteration (about 85 s and 3.6 GB peak on a 2-vCPU machine): the baseline of the million-event run
// of scripts/ranking-chain-scale.sh (docs/systems/ranking.md).
BENCHMARK(BM_PlainAggregation)->Arg(1'000'000)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
