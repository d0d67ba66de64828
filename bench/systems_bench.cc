// Whole-system simulation speed, one benchmark per system, through the harness runner (the code
// path of `faultline run` and `faultline sweep`, checkers included).
//
//   BM_Kernel                 the baseline, measured first in the same run: a bare world whose
//                             64 tasks sleep in a loop (every event a coroutine resume, the
//                             fingerprint folded): events/s of the kernel alone.
//   BM_Explore/<system>       runs of the system's exploratory hardened scenario, seeds 1, 2, ...
//                             Counters (CPU time of this thread: the machine is shared):
//                               sim_s_per_cpu_s  simulated seconds per CPU second = "x real time
//                                                per core" (the goal: >= 1000 for combo, likes)
//                               events_per_s     trace events per CPU second
//                             and, printed at the end, events/s as a ratio of BM_Kernel's.
//   BM_Sweep/<system>         (combo, likes) kSweepSeeds seeds through run_in_workers (forked workers, as
//                             `faultline sweep --jobs 2` runs them). Counters: seeds_per_min (wall)
//                             and seeds_per_min_2_cores (seeds per minute if the workers' CPU time
//                             were spread over 2 idle cores; the goal: >= 2000).
//
// Every run must pass as its scenario expects; one that does not is reported as an error (a speed
// figure for a broken run means nothing). No timed assertion anywhere: these are measurements.
//
//   cmake --build build --target systems_bench && build/bench/systems_bench
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "harness/memory.h"
#include "harness/runner.h"
#include "bench/bench_scenario.h"
#include "bench/cpu_time.h"
#include "harness/scenario_loader.h"
#include "harness/sweep.h"
#include "sim/world.h"

namespace {

constexpr size_t kSweepSeeds = 100;

struct SystemScenario {
  const char* system;
  const char* file;
  bool sweep;  // also measured as a sweep (the systems the issue sets a seeds/min goal for)
};
const std::vector<SystemScenario>& systems() {
  static const std::vector<SystemScenario> list = {
      {"combo", "scenarios/combo/explore-hardened.yaml", true},
      {"likes", "scenarios/likes/swarm-hardened.yaml", true},
      {"gifts", "scenarios/gifts/explore-hardened.yaml", false},
      {"ranking", "scenarios/ranking/explore-hardened.yaml", false},
      {"demo", "scenarios/demo/counter-retries.yaml", false},
  };
  return list;
}

double& kernel_events_per_s() {
  static double rate = 0;
  return rate;
}
std::map<std::string, double>& system_events_per_s() {
  static std::map<std::string, double> rates;
  return rates;
}

using fl::bench::thread_cpu_s;

double children_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

fl::Task<void> sleeper(fl::sim::Process& p, int64_t delay_us) {
  for (;;) co_await p.clock().sleep_us(delay_us);
}

void BM_Kernel(benchmark::State& state) {
  fl::sim::World world(fl::sim::WorldOptions{.seed = 42});
  fl::sim::Process& p = world.add_process(world.add_node("n"), "timers", [](fl::sim::Process& self) -> fl::Task<void> {
    for (int64_t i = 0; i < 64; ++i) self.spawn("sleeper", sleeper(self, 100 + 37 * i));
    co_return;
  });
  world.start(p);
  const double t0 = thread_cpu_s();
  int64_t events = 0;
  for (auto _ : state) {
    world.step();
    ++events;
  }
  kernel_events_per_s() = static_cast<double>(events) / (thread_cpu_s() - t0);
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  benchmark::DoNotOptimize(world.trace().fingerprint());
}
BENCHMARK(BM_Kernel)->Iterations(2'000'000);

void BM_Explore(benchmark::State& state, const SystemScenario& sys) {
  const fl::Scenario* s = fl::bench::find_scenario(sys.file);
  if (s == nullptr) {
    state.SkipWithError((std::string("cannot load ") + sys.file).c_str());
    return;
  }
  uint64_t seed = 1;
  double simulated_s = 0, events = 0;
  const double t0 = thread_cpu_s();
  for (auto _ : state) {
    const fl::RunResult r = fl::run_scenario(*s, seed++, fl::RunOptions{});
    if (!r.error.empty() || !r.as_expected) {
      state.SkipWithError(("seed " + std::to_string(r.seed) + " not as expected: " + r.error).c_str());
      return;
    }
    simulated_s += static_cast<double>(r.simulated_us) / 1e6;
    events += static_cast<double>(r.events);
  }
  system_events_per_s()[sys.system] = events / (thread_cpu_s() - t0);
  state.counters["sim_s_per_cpu_s"] = benchmark::Counter(simulated_s, benchmark::Counter::kIsRate);
  state.counters["events_per_s"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
}

void BM_Sweep(benchmark::State& state, const SystemScenario& sys) {
  const fl::Scenario* s = fl::bench::find_scenario(sys.file);
  if (s == nullptr) {
    state.SkipWithError((std::string("cannot load ") + sys.file).c_str());
    return;
  }
  size_t seeds = 0;
  double cpu_s = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    const double c0 = children_cpu_s();
    const std::vector<fl::WorkerOutcome> out = fl::run_in_workers(
        kSweepSeeds, [&](size_t job) { return fl::run_scenario(*s, job + 1, fl::RunOptions{}); }, 2,
        absl::Seconds(120));
    cpu_s += children_cpu_s() - c0;
    for (const fl::WorkerOutcome& o : out) {
      if (!o.completed || !o.result.as_expected) {
        state.SkipWithError(("seed " + std::to_string(o.job + 1) + " not as expected: " + o.result.error).c_str());
        return;
      }
    }
    seeds += kSweepSeeds;
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  state.counters["seeds_per_min"] = static_cast<double>(seeds) * 60.0 / wall_s;
  state.counters["seeds_per_min_2_cores"] = static_cast<double>(seeds) * 60.0 / (cpu_s / 2.0);
}

// Prints each system's events/s as a ratio of the kernel's, measured earlier in the same run.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void Finalize() override {
    ConsoleReporter::Finalize();
    if (kernel_events_per_s() <= 0) return;
    for (const auto& [system, rate] : system_events_per_s()) {
      std::printf("%-8s events/s vs the bare kernel: %.4f (%.0f vs %.0f)\n", system.c_str(),
                  rate / kernel_events_per_s(), rate, kernel_events_per_s());
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  fl::keep_freed_memory();  // as the faultline CLI does
  for (const SystemScenario& sys : systems()) {
    benchmark::RegisterBenchmark((std::string("BM_Explore/") + sys.system).c_str(),
                                 [&sys](benchmark::State& st) { BM_Explore(st, sys); })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(20);
  }
  for (const SystemScenario& sys : systems()) {
    if (!sys.sweep) continue;
    benchmark::RegisterBenchmark((std::string("BM_Sweep/") + sys.system).c_str(),
                                 [&sys](benchmark::State& st) { BM_Sweep(st, sys); })
        ->Unit(benchmark::kSecond)
        ->UseRealTime()
        ->Iterations(1);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
