// Load benchmark of the hardened likes path in REAL mode (002 §1.1: 10,000+ ops/s, p99 < 50 ms).
//
// One service replica — a LikeService (variant hardened, the code the simulator checks) on a
// single-threaded event loop, as a replica process would run it — serves `--connections` client
// threads that each send one like/unlike at a time (closed loop) and wait for the reply. Its
// ports are real:
//   - Redis: a redis-server the benchmark starts and stops (unix socket, no persistence), one
//     connection, auto-pipelined: the commands the loop's tasks issue while it runs are written
//     together and their replies read together (one EVALSHA per operation, as in simulation);
//   - SQL: SQLite on a file (WAL, synchronous=full by default: every acknowledged write is on the
//     disk, LIKE-6) served by a DB thread, as the DB is a node of its own in simulation. The
//     service's group commit writes every like/unlike waiting in the replica in one transaction
//     (one fsync) and replies to each only after that commit.
// Reports throughput, p50/p99/p999 latency (measured by the client threads, queueing included),
// redis-benchmark doing the same number of Redis commands with the same pipelining in the same
// run (and unpipelined, with as many connections as clients), peak RSS of this process (service
// + clients), and checks the stores agree afterwards (DB counters = rows, cached counts = DB).
//
// Usage: likes_load_bench [--seconds S] [--connections N] [--assets A] [--users U]
//                         [--synchronous full|normal]
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <coroutine>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/real_loop.h"
#include "harness/real/hiredis_client.h"
#include "harness/real/redis_server.h"
#include "harness/real_sql/sqlite_sql.h"
#include "impl/likes/schema.h"
#include "impl/likes/scripts.h"
#include "impl/likes/service.h"

namespace {

using namespace fl::bench;

// One client request in flight; the client thread waits on `done`.
struct Request {
  bool like = true;
  int64_t asset = 0, user = 0;
  uint64_t id = 0;
  fl::likes::LikeReply reply;
  std::atomic<uint32_t> done{0};
};

fl::Task<void> serve(std::shared_ptr<fl::likes::LikeService> svc, Request* r, int64_t* outstanding) {
  r->reply =
      r->like ? co_await svc->like(r->asset, r->user, 1, r->id) : co_await svc->unlike(r->asset, r->user, 1, r->id);
  --*outstanding;
  r->done.store(1, std::memory_order_release);
  futex_wake(&r->done);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  int connections = 64;
  int64_t assets = 1000;
  int64_t users = 1000;
  std::string synchronous = "full";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--seconds")
      seconds = std::atof(argv[i + 1]);
    else if (k == "--connections")
      connections = std::atoi(argv[i + 1]);
    else if (k == "--assets")
      assets = std::atoll(argv[i + 1]);
    else if (k == "--users")
      users = std::atoll(argv[i + 1]);
    else if (k == "--synchronous")
      synchronous = argv[i + 1];
  }

  fl::real::RedisServer redis = fl::real::RedisServer::start({});
  fl::real::SqliteSqlOptions so;
  so.file = "likes.db";
  so.synchronous =
      synchronous == "normal" ? fl::sim::storage::Synchronous::kNormal : fl::sim::storage::Synchronous::kFull;
  // Connection tuning, not durability: a larger page cache, and WAL checkpoints every 16k pages
  // instead of 1k (a hot page is copied to the DB file once per checkpoint, not once per 1k
  // frames). Every commit still fsyncs the WAL (synchronous=full): LIKE-6 is unchanged.
  so.schema = {"PRAGMA cache_size = -65536", "PRAGMA wal_autocheckpoint = 16384"};
  for (const std::string& st : fl::likes::schema_statements(/*request_ids=*/true)) so.schema.push_back(st);
  fl::real::SqliteSql sqlite(so);
  if (!sqlite.ok()) {
    std::fprintf(stderr, "sqlite: %s\n", sqlite.error().c_str());
    return 1;
  }
  for (const fl::SqlStatement& s : fl::likes::seed_asset_statements(assets)) sqlite.execute_now(s);
  auto scripts = fl::likes::likes_scripts();

  fl::likes::LikesConfig config;
  config.fixes = fl::likes::LikesFixes::hardened(fl::likes::likes_fixes());
  config.asset_count = assets;

  // The replica.
  LoopRuntime rt;
  PipelinedRedis pr(rt, fl::real::RedisConnection::unix_socket(redis.socket_path()), scripts);
  for (const std::string& name : scripts->names())
    pr.connection().command({"SCRIPT", "LOAD", scripts->by_name(name)->lua});
  Mailbox<Request> mailbox;
  auto sql = std::make_unique<ThreadedSql>(sqlite, [&mailbox](std::coroutine_handle<> h) { mailbox.resume(h); });
  auto svc = std::make_shared<fl::likes::LikeService>(rt, pr, *sql, config);

  std::atomic<bool> stop{false};
  std::atomic<int> clients_left{connections};
  std::vector<std::vector<int64_t>> latencies(static_cast<size_t>(connections));
  std::vector<int64_t> errors(static_cast<size_t>(connections), 0);
  std::vector<std::thread> clients;
  // Owned here, not by the client threads: the loop may still wake a request's word after its
  // client saw the reply and exited.
  std::vector<std::unique_ptr<Request>> requests;
  for (int t = 0; t < connections; ++t) requests.push_back(std::make_unique<Request>());
  const auto start = SteadyClock::now();
  for (int t = 0; t < connections; ++t) {
    clients.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<uint64_t>(t) + 1);
      std::vector<int64_t>& lat = latencies[static_cast<size_t>(t)];
      lat.reserve(1 << 18);
      Request& r = *requests[static_cast<size_t>(t)];
      uint64_t id = static_cast<uint64_t>(t) << 40;
      while (!stop.load(std::memory_order_relaxed)) {
        r.asset = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(assets));
        r.user = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(users));
        r.like = (rng() & 3) != 0;  // 3:1 likes to unlikes
        r.id = ++id;
        r.done.store(0, std::memory_order_relaxed);
        const auto t0 = SteadyClock::now();
        mailbox.push(&r);
        futex_wait(&r.done, 0);
        const auto t1 = SteadyClock::now();
        if (r.reply.status != fl::likes::ReplyStatus::kOk) ++errors[static_cast<size_t>(t)];
        lat.push_back(std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count());
      }
      clients_left.fetch_sub(1);
    });
  }

  // The replica's loop: take requests, run tasks (the group commit runs here), flush Redis.
  std::thread timer([&] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
  });
  const LoopCounts sent = serve_loop(
      rt, pr, mailbox, [&](Request* r, int64_t* outstanding) { return serve(svc, r, outstanding); },
      [&] { return clients_left.load() == 0; });
  const int64_t flushes = sent.flushes, commands = sent.commands;
  const int64_t transactions = sql->transactions();
  const double loop_cpu_s = thread_cpu_s();
  timer.join();
  for (auto& th : clients) th.join();
  sql->stop();  // joins the DB thread: the checks below use the connection directly
  const double db_cpu_s = sql->cpu_s(), db_busy_s = sql->busy_s();
  const double elapsed_s = std::chrono::duration<double>(SteadyClock::now() - start).count();

  std::vector<int64_t> all;
  for (auto& v : latencies) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  int64_t error_count = 0;
  for (int64_t e : errors) error_count += e;
  const int64_t ops = static_cast<int64_t>(all.size());
  const double ops_per_s = static_cast<double>(ops) / elapsed_s;
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  const long peak_rss_kb = ru.ru_maxrss;

  // The stores must agree (the benchmark is not allowed to be fast and wrong): DB counters equal
  // rows (LIKE-3) and, every operation being acknowledged, each cached count equals the DB's (LIKE-4).
  fl::SqlResult drift =
      sqlite.execute_now(fl::SqlStatement("SELECT COUNT(*) FROM assets a WHERE a.like_count != (SELECT COUNT(*) FROM "
                                          "asset_likes l WHERE l.asset_id = a.id)"));
  const int64_t drifting = drift.ok() ? drift.scalar()->as_int() : -1;
  fl::SqlResult counts = sqlite.execute_now(fl::SqlStatement("SELECT id, like_count FROM assets ORDER BY id"));
  int64_t cache_mismatch = 0;
  for (const fl::SqlRow& row : counts.rows()) {
    fl::RedisReply r = pr.connection().command({"GET", fl::likes::count_key(row[0].as_int())});
    const bool untouched = r.kind == fl::RedisReply::Kind::kNil;
    if (!untouched && (r.kind != fl::RedisReply::Kind::kBulk || r.str != std::to_string(row[1].as_int())))
      ++cache_mismatch;
  }

  // redis-benchmark in the same run: the same number of commands with the service's average
  // pipeline depth on one connection (the same round trips), and unpipelined with one connection
  // per client.
  const int depth = flushes > 0 ? static_cast<int>((commands + flushes / 2) / flushes) : 1;
  const double rb_same = run_redis_benchmark(redis.socket_path(), 1, commands, depth);
  const double rb_plain = run_redis_benchmark(redis.socket_path(), connections, commands, 1);
  redis.stop();

  std::printf(
      "likes_load_bench: hardened like/unlike, 1 replica (event loop + DB thread, group commit), real"
      " redis-server %s + SQLite WAL synchronous=%s on %s\n",
      redis.binary_path().c_str(), synchronous.c_str(), sqlite.path().c_str());
  std::printf("  connections=%d assets=%" PRId64 " users=%" PRId64 " duration=%.2fs ops=%" PRId64 " errors=%" PRId64
              "\n",
              connections, assets, users, elapsed_s, ops, error_count);
  std::printf("  throughput=%.0f ops/s  p50=%.3f ms  p99=%.3f ms  p999=%.3f ms  max=%.3f ms\n", ops_per_s,
              percentile(all, 0.50) / 1000.0, percentile(all, 0.99) / 1000.0, percentile(all, 0.999) / 1000.0,
              (all.empty() ? 0 : all.back()) / 1000.0);
  std::printf("  sqlite: %" PRId64 " transactions (avg %.1f writes per group commit)\n", transactions,
              transactions > 0 ? static_cast<double>(ops) / static_cast<double>(transactions) : 0.0);
  std::printf("  redis: %" PRId64 " commands in %" PRId64 " round trips (avg pipeline %.1f)\n", commands, flushes,
              flushes > 0 ? static_cast<double>(commands) / static_cast<double>(flushes) : 0.0);
  std::printf("  redis-benchmark SET, same %" PRId64
              " commands, 1 connection -P %d (same round trips): %.0f req/s"
              " -> ratio %.3f\n",
              commands, depth, rb_same, rb_same > 0 ? ops_per_s / rb_same : 0.0);
  std::printf("  redis-benchmark SET, same %" PRId64 " commands, %d connections -P 1: %.0f req/s -> ratio %.3f\n",
              commands, connections, rb_plain, rb_plain > 0 ? ops_per_s / rb_plain : 0.0);
  std::printf("  replica loop thread CPU: %.2f s of %.2f s (%.0f%%; %.1f us per op)\n", loop_cpu_s, elapsed_s,
              100.0 * loop_cpu_s / elapsed_s, ops > 0 ? 1e6 * loop_cpu_s / static_cast<double>(ops) : 0.0);
  std::printf("  DB thread: %.2f s inside SQLite (%.0f%% of the run), %.2f s CPU; %.1f us per op\n", db_busy_s,
              100.0 * db_busy_s / elapsed_s, db_cpu_s, ops > 0 ? 1e6 * db_busy_s / static_cast<double>(ops) : 0.0);
  std::printf("  peak RSS of this process (service + %d client threads): %.1f MiB\n", connections,
              peak_rss_kb / 1024.0);
  std::printf("  assets whose like_count != rows: %" PRId64 "; cached counts != DB: %" PRId64 "\n", drifting,
              cache_mismatch);
  std::printf("  LIKE-12 floor (>= 10000 ops/s, p99 < 50 ms): %s; aim (>= 30000 ops/s, p99 < 10 ms): %s\n",
              ops_per_s >= 10000 && percentile(all, 0.99) < 50'000 ? "MET" : "NOT MET",
              ops_per_s >= 30000 && percentile(all, 0.99) < 10'000 ? "MET" : "NOT MET");
  return drifting == 0 && cache_mismatch == 0 ? 0 : 1;
}
