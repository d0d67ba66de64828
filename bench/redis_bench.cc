// Redis speed: the simulated Redis engine in-process against round trips to a real redis-server
// started by this benchmark (and to `faultline redis-serve`), plus redis-benchmark's own figure
// against the same server for reference.
//
//   BM_EngineSetGet          simulated Engine::execute, SET/GET alternating, in-process
//   BM_RealRedisSetGet       hiredis round trips to redis-server on a unix socket
//   BM_RealRedisPipelined16  the same, 16 commands per round trip
//   BM_RedisServeSetGet      hiredis round trips to the RESP server (engine behind a socket)
//   BM_EngineVsRealRatio     both measured back to back in one run: counter engine_over_real
//   BM_RedisBenchmarkReference  `redis-benchmark -t set,get` (and -P 16) against the same server
//   BM_EngineScriptVsDirect  likes_put (impl/likes/scripts.h) by EVALSHA, its Lua run by the engine,
//                            against the same four commands sent one by one, back to back in one
//                            run: counter script_over_direct (what running the Lua costs)
//
// Run: build-*/bench/redis_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "harness/real/hiredis_client.h"
#include "harness/real/redis_server.h"
#include "harness/resp/resp_server.h"
#include "impl/likes/scripts.h"
#include "sim/redis/engine.h"

namespace {

using fl::RedisReply;

// The redis-server for the whole run; stopped by its destructor at exit (and by
// PR_SET_PDEATHSIG if the benchmark dies).
fl::real::RedisServer& server() {
  static fl::real::RedisServer s = [] {
    fl::real::RedisServerOptions o;
    o.binary_path = REDIS_SERVER_PATH;
    return fl::real::RedisServer::start(o);
  }();
  return s;
}

std::vector<std::string> set_argv(int i) { return {"SET", "key:" + std::to_string(i % 1000), "xxx"}; }
std::vector<std::string> get_argv(int i) { return {"GET", "key:" + std::to_string(i % 1000)}; }

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Commands per second of `op` run for about `duration_ms`.
template <typename Op>
double measure_rate(Op op, int64_t duration_ms) {
  auto start = std::chrono::steady_clock::now();
  int64_t n = 0;
  while (true) {
    for (int k = 0; k < 256; ++k) op(n++);
    auto elapsed = std::chrono::steady_clock::now() - start;
    if (elapsed >= std::chrono::milliseconds(duration_ms)) {
      return static_cast<double>(n) / std::chrono::duration<double>(elapsed).count();
    }
  }
}

void BM_EngineSetGet(benchmark::State& state) {
  fl::sim::redis::Engine engine;
  fl::sim::redis::Session session;
  session.id = 1;
  const int64_t now = wall_ms();
  int i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine.execute(session, (i & 1) ? get_argv(i) : set_argv(i), now));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EngineSetGet)->UseRealTime();

// likes_put on 1,000 keys: by EVALSHA (a version one higher each round, so every other call
// writes), and as its commands sent directly (GET, EXISTS, SET PX, SET PX).
void BM_EngineScriptVsDirect(benchmark::State& state) {
  const std::shared_ptr<const fl::ScriptRegistry> scripts = fl::likes::likes_scripts();
  const std::string& lua = scripts->by_name(fl::likes::kPutScript)->lua;
  const std::string sha = scripts->sha1_of(fl::likes::kPutScript);
  fl::sim::redis::Engine engine;
  fl::sim::redis::Session session;
  session.id = 1;
  const int64_t now = wall_ms();
  engine.execute(session, {"SCRIPT", "LOAD", lua}, now);
  const auto key = [](int64_t i) { return "v:" + std::to_string(i % 1000); };
  const auto ver = [](int64_t i) { return "ver:" + std::to_string(i % 1000); };
  const auto by_script = [&](int64_t i) {
    benchmark::DoNotOptimize(
        engine.execute(session, {"EVALSHA", sha, "2", key(i), ver(i), "1", std::to_string(i / 500), "60000"}, now));
  };
  const auto direct = [&](int64_t i) {
    engine.execute(session, {"GET", ver(i)}, now);
    engine.execute(session, {"EXISTS", key(i)}, now);
    engine.execute(session, {"SET", key(i), "1", "PX", "60000"}, now);
    benchmark::DoNotOptimize(engine.execute(session, {"SET", ver(i), std::to_string(i / 500), "PX", "360000"}, now));
  };
  double script_rate = 0, direct_rate = 0;
  for (auto _ : state) {
    script_rate = measure_rate(by_script, 500);
    direct_rate = measure_rate(direct, 500);
  }
  state.counters["script_per_s"] = script_rate;
  state.counters["direct_per_s"] = direct_rate;
  state.counters["script_over_direct"] = direct_rate / script_rate;
}
BENCHMARK(BM_EngineScriptVsDirect)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_RealRedisSetGet(benchmark::State& state) {
  auto conn = fl::real::RedisConnection::unix_socket(server().socket_path());
  int i = 0;
  for (auto _ : state) {
    RedisReply r = conn.command((i & 1) ? get_argv(i) : set_argv(i));
    if (r.is_transport_error()) state.SkipWithError(r.str.c_str());
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RealRedisSetGet)->UseRealTime();

void BM_RealRedisPipelined16(benchmark::State& state) {
  auto conn = fl::real::RedisConnection::unix_socket(server().socket_path());
  std::vector<std::vector<std::string>> batch;
  for (int k = 0; k < 16; ++k) batch.push_back((k & 1) ? get_argv(k) : set_argv(k));
  for (auto _ : state) benchmark::DoNotOptimize(conn.pipeline(batch));
  state.SetItemsProcessed(state.iterations() * 16);
}
BENCHMARK(BM_RealRedisPipelined16)->UseRealTime();

void BM_RedisServeSetGet(benchmark::State& state) {
  fl::resp::RespServerOptions o;
  o.unix_path = server().dir() + "/redis-serve.sock";
  fl::resp::RespServer served(std::move(o));
  std::string error;
  if (!served.listen(&error)) {
    state.SkipWithError(error.c_str());
    return;
  }
  std::thread loop([&] { served.serve(); });
  {
    auto conn = fl::real::RedisConnection::unix_socket(served.unix_path());
    int i = 0;
    for (auto _ : state) {
      benchmark::DoNotOptimize(conn.command((i & 1) ? get_argv(i) : set_argv(i)));
      ++i;
    }
  }
  served.request_stop();
  loop.join();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RedisServeSetGet)->UseRealTime();

// Engine and real round trips measured in alternating 300 ms windows, three each; the best
// window of each counts (the machine is shared: the best window is the least disturbed one).
void BM_EngineVsRealRatio(benchmark::State& state) {
  for (auto _ : state) {
    fl::sim::redis::Engine engine;
    fl::sim::redis::Session session;
    session.id = 1;
    const int64_t now = wall_ms();
    auto conn = fl::real::RedisConnection::unix_socket(server().socket_path());
    double engine_rate = 0, real_rate = 0;
    for (int round = 0; round < 3; ++round) {
      engine_rate = std::max(engine_rate, measure_rate(
                                              [&](int64_t i) {
                                                int k = static_cast<int>(i);
                                                benchmark::DoNotOptimize(
                                                    engine.execute(session, (k & 1) ? get_argv(k) : set_argv(k), now));
                                              },
                                              300));
      real_rate = std::max(real_rate, measure_rate(
                                          [&](int64_t i) {
                                            int k = static_cast<int>(i);
                                            benchmark::DoNotOptimize(conn.command((k & 1) ? get_argv(k) : set_argv(k)));
                                          },
                                          300));
    }
    state.counters["engine_cmds_per_s"] = engine_rate;
    state.counters["real_round_trips_per_s"] = real_rate;
    state.counters["engine_over_real"] = engine_rate / real_rate;
  }
}
BENCHMARK(BM_EngineVsRealRatio)->Iterations(1)->Unit(benchmark::kMillisecond);

// Parses redis-benchmark -q output lines "SET: 81234.56 requests per second, p50=..." into
// {"SET": rate, ...}.
std::vector<std::pair<std::string, double>> run_redis_benchmark(const std::string& extra) {
  std::vector<std::pair<std::string, double>> out;
  std::string cmd = std::string(REDIS_BENCHMARK_PATH) + " -s " + server().socket_path() + " -t set,get -n 100000 -q " +
                    extra + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) text += buf;
  ::pclose(p);
  // -q rewrites its progress line with '\r'; the final figure follows the last '\r' of a line.
  std::regex line(R"(([A-Z]+): ([0-9.]+) requests per second)");
  for (std::sregex_iterator it(text.begin(), text.end(), line), end; it != end; ++it) {
    out.emplace_back((*it)[1].str(), std::stod((*it)[2].str()));
  }
  return out;
}

void BM_RedisBenchmarkReference(benchmark::State& state) {
  if (std::string(REDIS_BENCHMARK_PATH).empty() || REDIS_BENCHMARK_PATH[0] != '/') {
    state.SkipWithError("redis-benchmark not found (Debian package redis-tools)");
    return;
  }
  for (auto _ : state) {
    for (const auto& [name, rate] : run_redis_benchmark("")) state.counters["redis_benchmark_" + name] = rate;
    for (const auto& [name, rate] : run_redis_benchmark("-P 16")) {
      state.counters["redis_benchmark_" + name + "_P16"] = rate;
    }
  }
}
BENCHMARK(BM_RedisBenchmarkReference)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
