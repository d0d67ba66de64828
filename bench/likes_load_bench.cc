// Load benchmark of the hardened likes path in REAL mode (002 §1.1: 10,000+ ops/s, p99 < 50 ms).
//
// Starts a redis-server (harness/real launcher, unix socket, no persistence) and an SQLite file
// (harness/real_sql, WAL) for the durable write, then runs `--connections` threads, each with its
// own Redis connection, calling LikeService::like / unlike (variant hardened) on random
// (asset, user) pairs for `--seconds`. The SQLite connection is shared behind a mutex (SQLite has
// one writer; a pool would only add lock waits). Reports throughput, p50/p99/p999 latency, the
// throughput of `redis-benchmark` doing the same number of Redis round trips (one EVALSHA per
// operation) against the same server in the same run, and the process's peak RSS.
//
// Usage: likes_load_bench [--seconds S] [--connections N] [--assets A] [--synchronous normal|full]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "harness/real/hiredis_client.h"
#include "harness/real/redis_server.h"
#include "harness/real_sql/sqlite_sql.h"
#include "impl/likes/schema.h"
#include "impl/likes/scripts.h"
#include "impl/likes/service.h"

namespace {

using Clock = std::chrono::steady_clock;

int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A Runtime for one bench thread: wall clock; a sleep blocks the thread and resumes inline (the
// hardened path sleeps only when retrying); spawned tasks run inline to completion.
class ThreadRuntime final : public fl::Runtime, private fl::Clock {
 public:
  fl::Clock& clock() override { return *this; }
  void spawn(std::string_view, fl::Task<void> task) override {
    auto h = task.release();
    h.resume();
    if (h.done()) h.destroy();
    else leaked_.push_back(h);
  }
  uint64_t random_u64() override { return rng_(); }
  std::string_view process_name() const override { return "bench"; }
  std::string_view node_name() const override { return "bench"; }
  uint32_t incarnation() const override { return 1; }
  void note(std::string_view) override {}
  int64_t now_us() const override { return wall_us(); }
  ~ThreadRuntime() override {
    for (auto h : leaked_) h.destroy();
  }

 private:
  void resume_after_us(std::coroutine_handle<> h, int64_t delay_us) override {
    if (delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    h.resume();
  }
  std::mt19937_64 rng_{42};
  std::vector<std::coroutine_handle<>> leaked_;
};

// Runs a Task that completes without real suspension (real ports are synchronous).
template <typename T>
T run_now(fl::Task<T> t) {
  auto h = t.handle();
  h.resume();
  if (!h.done()) {
    std::fprintf(stderr, "task suspended in real mode\n");
    std::abort();
  }
  return h.promise().take();
}

// SQL shared by every thread behind one mutex.
class LockedSql final : public fl::Sql {
 public:
  explicit LockedSql(fl::real::SqliteSql& inner) : inner_(inner) {}
  using fl::Sql::execute;
  fl::Task<fl::SqlResult> execute(fl::SqlStatement s) override {
    std::lock_guard<std::mutex> lock(mu_);
    co_return inner_.execute_now(s);
  }
  fl::Task<fl::SqlResult> transaction(std::vector<fl::SqlStatement> s) override {
    std::lock_guard<std::mutex> lock(mu_);
    co_return inner_.transaction_now(s);
  }

 private:
  fl::real::SqliteSql& inner_;
  std::mutex mu_;
};

int64_t percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1));
  return sorted[i];
}

double run_redis_benchmark(const std::string& socket, int connections, int64_t requests) {
  std::string cmd = std::string(REDIS_BENCHMARK_PATH) + " -s " + socket + " -c " + std::to_string(connections) +
                    " -n " + std::to_string(requests) + " -t set -q 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return 0;
  char buf[4096];
  std::string out;
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  // "SET: 123456.79 requests per second, p50=..." (the last \r-separated segment).
  size_t pos = out.rfind("SET: ");
  if (pos == std::string::npos) return 0;
  return std::strtod(out.c_str() + pos + 5, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  int connections = 4;
  int64_t assets = 1000;
  std::string synchronous = "normal";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--seconds") seconds = std::atof(argv[i + 1]);
    else if (k == "--connections") connections = std::atoi(argv[i + 1]);
    else if (k == "--assets") assets = std::atoll(argv[i + 1]);
    else if (k == "--synchronous") synchronous = argv[i + 1];
  }

  fl::real::RedisServer redis = fl::real::RedisServer::start({});
  fl::real::SqliteSqlOptions so;
  so.file = "likes.db";
  so.synchronous = synchronous == "full" ? fl::sim::storage::Synchronous::kFull : fl::sim::storage::Synchronous::kNormal;
  so.schema = fl::likes::schema_statements();
  fl::real::SqliteSql sqlite(so);
  if (!sqlite.ok()) {
    std::fprintf(stderr, "sqlite: %s\n", sqlite.error().c_str());
    return 1;
  }
  for (const fl::SqlStatement& s : fl::likes::seed_asset_statements(assets)) sqlite.execute_now(s);
  LockedSql sql(sqlite);
  auto scripts = fl::likes::likes_scripts();

  fl::likes::LikesConfig config;
  config.variant = fl::likes::Variant::kHardened;
  config.asset_count = assets;

  std::atomic<bool> stop{false};
  std::atomic<int64_t> errors{0};
  std::vector<std::vector<int64_t>> latencies(static_cast<size_t>(connections));
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int t = 0; t < connections; ++t) {
    threads.emplace_back([&, t] {
      ThreadRuntime rt;
      auto r = fl::real::RealRedis::unix_socket(redis.socket_path(), scripts);
      auto svc = std::make_shared<fl::likes::LikeService>(rt, *r, sql, config, nullptr);
      std::mt19937_64 rng(static_cast<uint64_t>(t) + 1);
      std::vector<int64_t>& lat = latencies[static_cast<size_t>(t)];
      lat.reserve(1 << 20);
      uint64_t req = static_cast<uint64_t>(t) << 40;
      while (!stop.load(std::memory_order_relaxed)) {
        const int64_t asset = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(assets));
        const int64_t user = 1 + static_cast<int64_t>(rng() % 1000);
        const bool like = (rng() & 3) != 0;  // 3:1 likes to unlikes
        const auto t0 = Clock::now();
        fl::likes::LikeReply reply = like ? run_now(svc->like(asset, user, 1, ++req))
                                          : run_now(svc->unlike(asset, user, 1, ++req));
        const auto t1 = Clock::now();
        if (reply.status != fl::likes::ReplyStatus::kOk) errors.fetch_add(1);
        lat.push_back(std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count());
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : threads) th.join();
  const double elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();

  std::vector<int64_t> all;
  for (auto& v : latencies) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  const int64_t ops = static_cast<int64_t>(all.size());
  const double ops_per_s = static_cast<double>(ops) / elapsed_s;
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  const long peak_rss_kb = ru.ru_maxrss;

  // Check the stores agree (the benchmark is not allowed to be fast and wrong).
  fl::SqlResult drift = sqlite.execute_now(fl::SqlStatement(
      "SELECT COUNT(*) FROM assets a WHERE a.like_count != (SELECT COUNT(*) FROM asset_likes l WHERE l.asset_id = a.id)"));
  const int64_t drifting = drift.ok() ? drift.scalar()->as_int() : -1;

  // Same number of Redis round trips (one EVALSHA per op) with redis-benchmark.
  const double rb = run_redis_benchmark(redis.socket_path(), connections, ops);
  redis.stop();

  std::printf("likes_load_bench: hardened like/unlike, real redis-server %s + SQLite WAL synchronous=%s\n",
              redis.binary_path().c_str(), synchronous.c_str());
  std::printf("  connections=%d assets=%" PRId64 " duration=%.2fs ops=%" PRId64 " errors=%" PRId64 "\n", connections,
              assets, elapsed_s, ops, errors.load());
  std::printf("  throughput=%.0f ops/s  p50=%.3f ms  p99=%.3f ms  p999=%.3f ms  max=%.3f ms\n", ops_per_s,
              percentile(all, 0.50) / 1000.0, percentile(all, 0.99) / 1000.0, percentile(all, 0.999) / 1000.0,
              (all.empty() ? 0 : all.back()) / 1000.0);
  std::printf("  redis-benchmark SET, same %" PRId64 " round trips, %d clients: %.0f req/s -> ratio %.3f\n", ops,
              connections, rb, rb > 0 ? ops_per_s / rb : 0.0);
  std::printf("  peak RSS of this process: %.1f MiB\n", peak_rss_kb / 1024.0);
  std::printf("  assets whose like_count != rows: %" PRId64 "\n", drifting);
  std::printf("  LIKE-12 floor (>= 10000 ops/s, p99 < 50 ms): %s\n",
              ops_per_s >= 10000 && percentile(all, 0.99) < 50'000 ? "MET" : "NOT MET");
  return 0;
}
