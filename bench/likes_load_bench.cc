// Load benchmark of the likes path in REAL mode (002 §1.1 L9-10 and §9.2 L489-492: 10,000+ like
// operations/s, p99 < 50 ms, cache hit rate > 95 %, count difference < 1 %): the evidence of
// matrix rows LIKES-P1 and LIKES-P2.
//
// One service replica — a LikeService (variant hardened or spec, the code the simulator checks) on
// a single-threaded event loop, as a replica process would run it — serves `--connections` client
// threads that each send one request at a time (closed loop) and wait for the reply: a like or an
// unlike (3:1), or, with probability `--read-share`, a read of an asset's count. Its ports are real:
//   - Redis: a redis-server the benchmark starts and stops (unix socket, no persistence), one
//     connection, auto-pipelined: the commands the loop's tasks issue while it runs are written
//     together and their replies read together (one EVALSHA per operation, as in simulation);
//   - SQL: SQLite on a file (WAL, synchronous=full by default: every acknowledged write is on the
//     disk, LIKE-6) served by a DB thread, as the DB is a node of its own in simulation. hardened's
//     group commit writes every like/unlike waiting in the replica in one transaction (one fsync)
//     and replies to each only after that commit; spec writes behind (002:L124, L228), and the benchmark
//     lets those writes finish before it compares the stores.
// Reports throughput (like/unlike operations per second), p50/p99/p999 latency of those operations
// and of the reads (measured by the client threads, queueing included), the cache hit rate (the
// reads' `GET asset:like_count:*` answered with a value, counted from the server's replies, not
// from the service), the count difference between Redis and the DB afterwards (the sum of
// |cached - DB| over the DB's sum, assets never cached excluded), redis-benchmark doing the same
// number of Redis commands in the same run, peak RSS, and whether the DB's counters equal its rows.
//
// With --report-json FILE it also writes a faultline report (reports/report.h) holding the run as
// evidence of one row, each target an assertion, with the machine and this command: LIKES-P1
// (throughput and p99) for a run without reads, LIKES-P2 (those, hit rate and difference) for a
// run with reads. `faultline report --merge` adds it to the scenario suite's report
// (scripts/likes-capacity.sh).
//
// Usage: likes_load_bench [--seconds S] [--warmup S] [--drain-limit S] [--connections N] [--assets A] [--users U] [--seed K]
//                         [--synchronous full|normal] [--variant hardened|spec] [--read-share F]
//                         [--report-json FILE [--expect-fail PROPERTY,...]]
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
#include "harness/build_info.h"
#include "harness/real/hiredis_client.h"
#include "harness/real/redis_server.h"
#include "harness/real_sql/sqlite_sql.h"
#include "harness/sweep.h"
#include "impl/likes/config.h"
#include "impl/likes/schema.h"
#include "impl/likes/scripts.h"
#include "impl/likes/service.h"
#include "impl/ports/stable_hash.h"
#include "reports/report.h"

namespace {

using namespace fl::bench;

enum class Op { kLike, kUnlike, kCount };

// One client request in flight; the client thread waits on `done`.
struct Request {
  Op op = Op::kLike;
  int64_t asset = 0, user = 0;
  uint64_t id = 0;
  fl::likes::LikeReply reply;
  std::atomic<uint32_t> done{0};
};

fl::Task<void> serve(std::shared_ptr<fl::likes::LikeService> svc, Request* r, int64_t* outstanding) {
  switch (r->op) {
    case Op::kLike:
      r->reply = co_await svc->like(r->asset, r->user, 1, r->id);
      break;
    case Op::kUnlike:
      r->reply = co_await svc->unlike(r->asset, r->user, 1, r->id);
      break;
    case Op::kCount:
      r->reply = co_await svc->count(r->asset);
      break;
  }
  --*outstanding;
  r->done.store(1, std::memory_order_release);
  futex_wake(&r->done);
}

// The properties a run judges (one per target of 002 §9.2).
constexpr const char* kProperties[] = {"likes-throughput", "likes-p99-latency", "likes-cache-hit-rate",
                                       "likes-count-difference"};

struct Options {
  double seconds = 5;
  double warmup_seconds = 1;  // clients run, nothing is recorded: the cache fills as in a running service
  // How long the service may take, after the clients stop, to finish its DB writes (spec's
  // write-behind queues one transaction per operation) before the stores are compared.
  double drain_limit_seconds = 120;
  int connections = 64;
  int64_t assets = 1000;
  int64_t users = 1000;
  uint64_t seed = 1;
  std::string synchronous = "full";
  std::string variant = "hardened";
  double read_share = 0;
  std::string report_json;
  std::vector<std::string> expect_fail;  // properties the caller expects to fail (as a scenario's `expect:`)
  std::string command;                   // as given, for the report's evidence
};

const char kUsage[] =
    "usage: likes_load_bench [--seconds S] [--warmup S] [--drain-limit S] [--connections N] [--assets A] [--users U] "
    "[--seed K]\n"
    "                        [--synchronous full|normal] [--variant hardened|spec] [--read-share F]\n"
    "                        [--report-json FILE [--expect-fail PROPERTY,...]]\n";

bool numeric_flag(const std::string& k) {
  return k == "--seconds" || k == "--warmup" || k == "--drain-limit" || k == "--connections" || k == "--assets" ||
         k == "--users" || k == "--seed" || k == "--read-share";
}

bool parse_number(const std::string& text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return !text.empty() && end != nullptr && *end == '\0';
}

// Returns "" or what is wrong with the arguments.
std::string parse_options(int argc, char** argv, Options* o) {
  o->command = "build/bench/likes_load_bench";
  for (int i = 1; i < argc; ++i) o->command += std::string(" ") + argv[i];
  for (int i = 1; i < argc; i += 2) {
    const std::string k = argv[i];
    if (i + 1 >= argc) return k + " needs a value";
    const std::string v = argv[i + 1];
    double x = 0;
    const bool numeric = parse_number(v, &x);
    if (k == "--synchronous") {
      if (v != "full" && v != "normal") return "--synchronous takes full or normal";
      o->synchronous = v;
    } else if (k == "--variant") {
      if (v != "hardened" && v != "spec") return "--variant takes hardened or spec";
      o->variant = v;
    } else if (k == "--report-json") {
      o->report_json = v;
    } else if (k == "--expect-fail") {
      for (size_t b = 0; b <= v.size();) {
        const size_t e = std::min(v.find(',', b), v.size());
        const std::string p = v.substr(b, e - b);
        if (std::find(std::begin(kProperties), std::end(kProperties), p) == std::end(kProperties))
          return "--expect-fail names an unknown property '" + p + "'";
        o->expect_fail.push_back(p);
        b = e + 1;
      }
    } else if (!numeric) {
      return numeric_flag(k) ? k + " takes a number, not '" + v + "'" : "unknown flag " + k;
    } else if (k == "--seconds" && x > 0 && x <= 3600) {
      o->seconds = x;
    } else if (k == "--warmup" && x >= 0 && x <= 3600) {
      o->warmup_seconds = x;
    } else if (k == "--drain-limit" && x >= 0 && x <= 3600) {
      o->drain_limit_seconds = x;
    } else if (k == "--connections" && x >= 1 && x <= 4096) {
      o->connections = static_cast<int>(x);
    } else if (k == "--assets" && x >= 1 && x <= 1e8) {
      o->assets = static_cast<int64_t>(x);
    } else if (k == "--users" && x >= 1 && x <= 1e9) {
      o->users = static_cast<int64_t>(x);
    } else if (k == "--seed" && x >= 1 && x <= 1e15) {
      o->seed = static_cast<uint64_t>(x);
    } else if (k == "--read-share" && x >= 0 && x < 1) {
      o->read_share = x;
    } else {
      return numeric_flag(k) ? k + " is out of range: " + v : "unknown flag " + k;
    }
  }
  return "";
}

// "2 cores, <model name>, 23.4 GiB" of /proc: the machine a real-mode figure belongs to.
std::string machine_description() {
  std::string model = "unknown CPU";
  if (FILE* f = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
      if (std::strncmp(line, "model name", 10) == 0) {
        const char* colon = std::strchr(line, ':');
        if (colon) {
          model = colon + 1;
          while (!model.empty() && (model.front() == ' ' || model.front() == '\t')) model.erase(model.begin());
          while (!model.empty() && (model.back() == '\n' || model.back() == ' ')) model.pop_back();
        }
        break;
      }
    }
    std::fclose(f);
  }
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const double ram_gib = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE)) /
                         (1024.0 * 1024.0 * 1024.0);
  char buf[640];
  std::snprintf(buf, sizeof buf, "%ld cores, %s, %.1f GiB", cores, model.c_str(), ram_gib);
  return buf;
}

// What one run measured.
struct Figures {
  double elapsed_s = 0;
  int64_t writes = 0, reads = 0, errors = 0;
  int64_t write_p50_us = 0, write_p99_us = 0, write_p999_us = 0, write_max_us = 0;
  int64_t read_p99_us = 0;
  int64_t cache_hits = 0, cache_misses = 0;  // the reads' GET replies: a value, or nil
  int64_t db_total = 0, cache_difference = 0, assets_differing = 0, counters_not_rows = 0;
  bool drained = true;
  double drain_s = 0;        // after the clients stopped, until the service's writes finished
  int64_t queued_after = 0;  // DB statements still queued when the drain gave up
  // Operations acknowledged per second of the measured window.
  double writes_per_s() const { return elapsed_s > 0 ? static_cast<double>(writes) / elapsed_s : 0; }
  // Operations per second of the run and the drain after it, when the drain finished; else 0.
  double sustained_per_s() const {
    return drained && elapsed_s + drain_s > 0 ? static_cast<double>(writes) / (elapsed_s + drain_s) : 0;
  }
  double hit_rate() const {
    return cache_hits + cache_misses > 0
               ? static_cast<double>(cache_hits) / static_cast<double>(cache_hits + cache_misses)
               : 0;
  }
  // Sum of |cached - DB| over the DB's sum (002:L492 "差异 < 1%").
  double difference_share() const {
    return static_cast<double>(cache_difference) / static_cast<double>(std::max<int64_t>(1, db_total));
  }
};

fl::reports::AssertionRecord assertion(std::string property, bool passed, int64_t checks, std::string what,
                                       std::string figure) {
  fl::reports::AssertionRecord a;
  a.property = std::move(property);
  a.invariants = {"LIKE-12"};
  a.passed = passed;
  a.checks = checks;
  a.assertion = std::move(what);
  a.evidence = {std::move(figure)};
  a.seeds = 1;
  a.vacuous_seeds = checks == 0 ? 1 : 0;
  return a;
}

std::string fmt(const char* format, double a, double b = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b);
  return buf;
}

// One run record per row, both from the same measured run. Real mode: the workload is seeded, the
// timings are the machine's, so there is no trace fingerprint (0) and the machine is named.
fl::reports::Report make_report(const Options& o, const Figures& f) {
  fl::reports::Report rep;
  rep.title = "likes_load_bench (real mode)";
  rep.produced_at = fl::utc_now_iso8601();
  rep.commit = fl::build_commit();
  rep.matrices = {"likes"};
  const std::string config = "connections=" + std::to_string(o.connections) + " assets=" + std::to_string(o.assets) +
                             " users=" + std::to_string(o.users) + " seconds=" + fmt("%g", o.seconds) +
                             " synchronous=" + o.synchronous + " read_share=" + fmt("%g", o.read_share) +
                             " warmup=" + fmt("%g", o.warmup_seconds) +
                             " drain_limit=" + fmt("%g", o.drain_limit_seconds);
  const std::string machine = machine_description();
  // Sustained, not acknowledged: spec acknowledges before its DB writes (write-behind), so a rate
  // counts only when the writes were done, over the time they took (the run, then the drain).
  const std::string backlog =
      f.drained ? fmt("their DB writes finished %.1f s after the clients stopped", f.drain_s)
                : fmt("their DB writes had not finished %.0f s after the clients stopped, ", f.drain_s) +
                      std::to_string(f.queued_after) + " statements still queued";
  const auto throughput = assertion(
      "likes-throughput", f.sustained_per_s() >= 10000 && f.errors == 0, f.writes,
      "like/unlike operations per second >= 10,000, sustained: acknowledged and written to the DB within the run "
      "and the drain after it, no failed reply (002:L9, L489)",
      fmt("%.0f like/unlike operations acknowledged per second", f.writes_per_s()) + " over " +
          fmt("%.2f s", f.elapsed_s) + "; " + backlog +
          (f.drained ? fmt(": %.0f sustained per second", f.sustained_per_s()) : std::string(": none sustained")) +
          "; " + std::to_string(f.errors) + " failed replies");
  const auto latency =
      assertion("likes-p99-latency", f.write_p99_us < 50'000, f.writes,
                "p99 of the like/unlike operations' latency < 50 ms (002:L10, L490)",
                fmt("p50 %.3f ms, p99 %.3f ms", f.write_p50_us / 1000.0, f.write_p99_us / 1000.0) +
                    fmt(", p999 %.3f ms, max %.3f ms", f.write_p999_us / 1000.0, f.write_max_us / 1000.0));
  const auto hits = assertion("likes-cache-hit-rate", f.hit_rate() > 0.95, f.cache_hits + f.cache_misses,
                              "share of the count reads' GET answered from Redis > 95 % (002:L491)",
                              fmt("%.2f %% of ", 100 * f.hit_rate()) + std::to_string(f.cache_hits + f.cache_misses) +
                                  " GETs hit" + fmt(" (read p99 %.3f ms)", f.read_p99_us / 1000.0));
  const auto difference = assertion(
      "likes-count-difference", f.drained && f.difference_share() < 0.01 && f.counters_not_rows == 0, o.assets,
      "after the run, sum of |Redis count - DB count| < 1 % of the DB's counts, DB counters equal rows (002:L492)",
      fmt("difference %.3f %% (", 100 * f.difference_share()) + std::to_string(f.cache_difference) + " of " +
          std::to_string(f.db_total) + "; " + std::to_string(f.assets_differing) + " assets differ; " +
          std::to_string(f.counters_not_rows) + " DB counters != rows" +
          (f.drained ? fmt("; the DB writes finished %.1f s after the clients stopped)", f.drain_s)
                     : fmt("; the DB writes did not finish within %.0f s: ", o.drain_limit_seconds) +
                           std::to_string(f.queued_after) + " statements still queued, the stores not comparable)"));
  const struct {
    const char* row;
    std::vector<fl::reports::AssertionRecord> assertions;
  } rows[] = {{"LIKES-P1", {throughput, latency}}, {"LIKES-P2", {throughput, latency, hits, difference}}};
  for (const auto& row : rows) {
    // LIKES-P1 is "10,000+ like operations per second" (002:L9): a run of likes and unlikes only;
    // LIKES-P2 adds the cache hit rate (002:L491), which needs reads.
    if ((std::string(row.row) == "LIKES-P1") != (o.read_share == 0)) continue;
    fl::reports::RunRecord r;
    r.scenario = std::string("likes_load_bench ") + row.row;
    r.scenario_file = "bench/likes_load_bench.cc";
    r.system = "likes";
    r.variant = o.variant;
    r.matrix_rows = {row.row};
    for (const auto& a : row.assertions) {
      if (std::find(o.expect_fail.begin(), o.expect_fail.end(), a.property) != o.expect_fail.end())
        r.expected_failing.push_back(a.property);
    }
    r.expected_pass = r.expected_failing.empty();
    r.expected_any = true;  // one of the declared failures suffices, as a scenario's `match: any`
    r.seeds = {o.seed};
    r.config_digest = fl::stable_hash(std::string(row.row) + " " + o.variant + " " + config);
    r.assertions = row.assertions;
    for (const auto& a : r.assertions) {
      if (!a.passed) {
        r.failing_seeds = {o.seed};
        r.failures_per_property[a.property] = 1;
      }
    }
    r.wall_seconds = f.elapsed_s;
    r.produced_at = rep.produced_at;
    r.commit = rep.commit;
    r.machine = machine;
    r.command = o.command;
    rep.runs.push_back(std::move(r));
  }
  return rep;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const std::string err = parse_options(argc, argv, &o); !err.empty()) {
    std::fprintf(stderr, "likes_load_bench: %s\n%s", err.c_str(), kUsage);
    return 2;
  }

  fl::real::RedisServer redis = fl::real::RedisServer::start({});
  fl::real::SqliteSqlOptions so;
  so.file = "likes.db";
  so.synchronous =
      o.synchronous == "normal" ? fl::sim::storage::Synchronous::kNormal : fl::sim::storage::Synchronous::kFull;
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
  for (const fl::SqlStatement& s : fl::likes::seed_asset_statements(o.assets)) sqlite.execute_now(s);
  auto scripts = fl::likes::likes_scripts();

  fl::likes::LikesConfig config;
  config.fixes =
      o.variant == "spec" ? fl::likes::LikesFixes::spec() : fl::likes::LikesFixes::hardened(fl::likes::likes_fixes());
  config.asset_count = o.assets;

  // The replica.
  LoopRuntime rt;
  PipelinedRedis pr(rt, fl::real::RedisConnection::unix_socket(redis.socket_path()), scripts);
  for (const std::string& name : scripts->names())
    pr.connection().command({"SCRIPT", "LOAD", scripts->by_name(name)->lua});
  // Cache hits as the server answered them: a read's GET of a count key with a value or nil.
  Figures f;
  std::atomic<bool> measuring{false};  // after the warm-up, until the clients stop
  pr.observe([&f, &measuring](const std::vector<std::string>& argv, const fl::RedisReply& reply) {
    if (!measuring.load(std::memory_order_relaxed)) return;
    if (argv.size() != 2 || argv[0] != "GET" || argv[1].rfind("asset:like_count:", 0) != 0) return;
    if (reply.kind == fl::RedisReply::Kind::kBulk) ++f.cache_hits;
    if (reply.kind == fl::RedisReply::Kind::kNil) ++f.cache_misses;
  });
  Mailbox<Request> mailbox;
  auto sql = std::make_unique<ThreadedSql>(sqlite, [&mailbox](std::coroutine_handle<> h) { mailbox.resume(h); });
  auto svc = std::make_shared<fl::likes::LikeService>(rt, pr, *sql, config);

  std::atomic<bool> stop{false};
  std::atomic<int> clients_left{o.connections};
  const size_t n_clients = static_cast<size_t>(o.connections);
  std::vector<std::vector<int64_t>> write_latencies(n_clients), read_latencies(n_clients);
  std::vector<int64_t> errors(n_clients, 0);
  std::vector<std::thread> clients;
  // Owned here, not by the client threads: the loop may still wake a request's word after its
  // client saw the reply and exited.
  std::vector<std::unique_ptr<Request>> requests;
  for (size_t t = 0; t < n_clients; ++t) requests.push_back(std::make_unique<Request>());
  const uint64_t read_threshold = static_cast<uint64_t>(o.read_share * 1024.0);
  const auto run_start = SteadyClock::now();
  for (size_t t = 0; t < n_clients; ++t) {
    clients.emplace_back([&, t] {
      std::mt19937_64 rng(o.seed * 1'000'003 + t);
      write_latencies[t].reserve(1 << 18);
      Request& r = *requests[t];
      uint64_t id = static_cast<uint64_t>(t) << 40;
      while (!stop.load(std::memory_order_relaxed)) {
        r.asset = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(o.assets));
        r.user = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(o.users));
        const uint64_t draw = rng();
        r.op = (draw & 1023) < read_threshold ? Op::kCount : ((draw >> 10) & 3) != 0 ? Op::kLike : Op::kUnlike;
        r.id = ++id;
        r.done.store(0, std::memory_order_relaxed);
        const bool recorded = measuring.load(std::memory_order_relaxed);
        const auto t0 = SteadyClock::now();
        mailbox.push(&r);
        futex_wait(&r.done, 0);
        const auto t1 = SteadyClock::now();
        // "already liked" / "not liked" is an answer (LIKE-11); a failed or indeterminate reply is not.
        if (!recorded) continue;
        if (r.reply.status == fl::likes::ReplyStatus::kFailed || r.reply.status == fl::likes::ReplyStatus::kUnknown)
          ++errors[t];
        (r.op == Op::kCount ? read_latencies : write_latencies)[t].push_back(
            std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count());
      }
      clients_left.fetch_sub(1);
    });
  }

  // The replica's loop: take requests, run tasks (the group commit runs here), flush Redis.
  // The measured window: from the end of the warm-up until the clients are told to stop. A request
  // counts when it started inside it (its reply may come after).
  SteadyClock::time_point window_start, window_end;
  std::thread timer([&] {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup_seconds));
    window_start = SteadyClock::now();
    measuring = true;
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    measuring = false;
    window_end = SteadyClock::now();
    stop = true;
  });
  LoopCounts sent = serve_loop(
      rt, pr, mailbox, [&](Request* r, int64_t* outstanding) { return serve(svc, r, outstanding); },
      [&] { return clients_left.load() == 0; });
  const double loop_cpu_s = thread_cpu_s();
  const double run_s = std::chrono::duration<double>(SteadyClock::now() - run_start).count();  // warm-up included
  timer.join();
  f.elapsed_s = std::chrono::duration<double>(window_end - window_start).count();
  for (auto& th : clients) th.join();
  // spec writes behind: its DB writes may still be running; the stores are compared after them.
  const auto drain_start = SteadyClock::now();
  f.drained = drain_loop(
      rt, pr, mailbox, [&] { return sql->outstanding() == 0; }, static_cast<int64_t>(o.drain_limit_seconds * 1e6),
      &sent);
  f.queued_after = sql->outstanding();
  f.drain_s = std::chrono::duration<double>(SteadyClock::now() - drain_start).count();
  const int64_t flushes = sent.flushes, commands = sent.commands;
  const int64_t transactions = sql->transactions();
  // Joins the DB thread (the checks below use the connection directly); a backlog the drain gave
  // up on is dropped, not run.
  if (f.drained)
    sql->stop();
  else
    sql->abandon();
  const double db_cpu_s = sql->cpu_s(), db_busy_s = sql->busy_s();

  std::vector<int64_t> writes, reads;
  for (auto& v : write_latencies) writes.insert(writes.end(), v.begin(), v.end());
  for (auto& v : read_latencies) reads.insert(reads.end(), v.begin(), v.end());
  std::sort(writes.begin(), writes.end());
  std::sort(reads.begin(), reads.end());
  for (int64_t e : errors) f.errors += e;
  f.writes = static_cast<int64_t>(writes.size());
  f.reads = static_cast<int64_t>(reads.size());
  f.write_p50_us = percentile(writes, 0.50);
  f.write_p99_us = percentile(writes, 0.99);
  f.write_p999_us = percentile(writes, 0.999);
  f.write_max_us = writes.empty() ? 0 : writes.back();
  f.read_p99_us = percentile(reads, 0.99);
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  const long peak_rss_kb = ru.ru_maxrss;

  // The stores must agree (the benchmark is not allowed to be fast and wrong): DB counters equal
  // rows (LIKE-3), and the cached counts against the DB's (002:L492).
  fl::SqlResult drift =
      sqlite.execute_now(fl::SqlStatement("SELECT COUNT(*) FROM assets a WHERE a.like_count != (SELECT COUNT(*) FROM "
                                          "asset_likes l WHERE l.asset_id = a.id)"));
  f.counters_not_rows = drift.ok() ? drift.scalar()->as_int() : -1;
  fl::SqlResult counts = sqlite.execute_now(fl::SqlStatement("SELECT id, like_count FROM assets ORDER BY id"));
  for (const fl::SqlRow& row : counts.rows()) {
    const int64_t db = row[1].as_int();
    f.db_total += db;
    fl::RedisReply r = pr.connection().command({"GET", fl::likes::count_key(row[0].as_int())});
    if (r.kind == fl::RedisReply::Kind::kNil) continue;  // never cached, or expired: reads go to the DB
    const int64_t cached = r.kind == fl::RedisReply::Kind::kBulk ? std::atoll(r.str.c_str()) : 0;
    f.cache_difference += cached > db ? cached - db : db - cached;
    f.assets_differing += cached != db ? 1 : 0;
  }

  // redis-benchmark in the same run: the same number of commands with the service's average
  // pipeline depth on one connection (the same round trips), and unpipelined with one connection
  // per client.
  const int depth = flushes > 0 ? static_cast<int>((commands + flushes / 2) / flushes) : 1;
  const double rb_same = run_redis_benchmark(redis.socket_path(), 1, commands, depth);
  const double rb_plain = run_redis_benchmark(redis.socket_path(), o.connections, commands, 1);
  redis.stop();

  const int64_t ops = f.writes + f.reads;
  std::printf(
      "likes_load_bench: %s like/unlike/count, 1 replica (event loop + DB thread), real redis-server %s + SQLite WAL"
      " synchronous=%s on %s\n",
      o.variant.c_str(), redis.binary_path().c_str(), o.synchronous.c_str(), sqlite.path().c_str());
  std::printf("  machine: %s\n", machine_description().c_str());
  std::printf("  connections=%d assets=%" PRId64 " users=%" PRId64 " read_share=%g duration=%.2fs writes=%" PRId64
              " reads=%" PRId64 " errors=%" PRId64 "\n",
              o.connections, o.assets, o.users, o.read_share, f.elapsed_s, f.writes, f.reads, f.errors);
  std::printf("  like/unlike: acknowledged %.0f ops/s  p50=%.3f ms  p99=%.3f ms  p999=%.3f ms  max=%.3f ms\n",
              f.writes_per_s(), f.write_p50_us / 1000.0, f.write_p99_us / 1000.0, f.write_p999_us / 1000.0,
              f.write_max_us / 1000.0);
  std::printf("  count reads: %.0f/s  p99=%.3f ms; cache hit rate %.2f %% (%" PRId64 " of %" PRId64 " GETs)\n",
              static_cast<double>(f.reads) / f.elapsed_s, f.read_p99_us / 1000.0, 100 * f.hit_rate(), f.cache_hits,
              f.cache_hits + f.cache_misses);
  std::printf("  sqlite: %" PRId64 " transactions, warm-up and the writes after the run included\n", transactions);
  std::printf("  redis: %" PRId64 " commands in %" PRId64 " round trips (avg pipeline %.1f), warm-up included\n",
              commands, flushes, flushes > 0 ? static_cast<double>(commands) / static_cast<double>(flushes) : 0.0);
  std::printf("  redis-benchmark SET, same %" PRId64
              " commands, 1 connection -P %d (same round trips): %.0f req/s"
              " -> ratio %.3f\n",
              commands, depth, rb_same, rb_same > 0 ? static_cast<double>(ops) / f.elapsed_s / rb_same : 0.0);
  std::printf("  redis-benchmark SET, same %" PRId64 " commands, %d connections -P 1: %.0f req/s -> ratio %.3f\n",
              commands, o.connections, rb_plain,
              rb_plain > 0 ? static_cast<double>(ops) / f.elapsed_s / rb_plain : 0.0);
  std::printf("  replica loop thread CPU: %.2f s of %.2f s, warm-up included (%.0f%%)\n", loop_cpu_s, run_s,
              100.0 * loop_cpu_s / run_s);
  std::printf(
      "  DB thread: %.2f s inside SQLite (%.0f%% of the run, warm-up and the writes after it included), %.2f s CPU\n",
      db_busy_s, 100.0 * db_busy_s / (run_s + f.drain_s), db_cpu_s);
  std::printf("  peak RSS of this process (service + %d client threads): %.1f MiB\n", o.connections,
              peak_rss_kb / 1024.0);
  std::printf("  DB counters != rows: %" PRId64 "; Redis vs DB count difference %.3f %% (%" PRId64 " of %" PRId64
              ", %" PRId64 " assets differ)%s\n",
              f.counters_not_rows, 100 * f.difference_share(), f.cache_difference, f.db_total, f.assets_differing,
              f.drained ? "" : "; not comparable: the DB writes did not finish in time");
  if (f.drained)
    std::printf("  the service's DB writes finished %.1f s after the clients stopped\n", f.drain_s);
  else
    std::printf("  the service's DB writes had not finished %.1f s after the clients stopped: %" PRId64
                " statements still queued\n",
                f.drain_s, f.queued_after);
  std::printf("  sustained (DB writes done within the run and the drain): %.0f ops/s\n", f.sustained_per_s());
  std::printf("  LIKE-12 floor (>= 10000 sustained ops/s, p99 < 50 ms): %s; aim (>= 30000 ops/s, p99 < 10 ms): %s\n",
              f.sustained_per_s() >= 10000 && f.write_p99_us < 50'000 ? "MET" : "NOT MET",
              f.sustained_per_s() >= 30000 && f.write_p99_us < 10'000 ? "MET" : "NOT MET");
  if (!o.report_json.empty()) {
    const std::string text = fl::reports::to_json(make_report(o, f));
    FILE* out = std::fopen(o.report_json.c_str(), "w");
    if (out == nullptr || std::fwrite(text.data(), 1, text.size(), out) != text.size() || std::fclose(out) != 0) {
      std::fprintf(stderr, "likes_load_bench: cannot write %s\n", o.report_json.c_str());
      return 2;
    }
    std::printf("  report: %s (faultline report --merge adds it to a report)\n", o.report_json.c_str());
  }
  // Exit 1 when the stores disagree in hardened (the benchmark must not be fast and wrong); spec's
  // write-behind may leave a difference, which its report shows.
  return o.variant == "hardened" && (f.counters_not_rows != 0 || f.cache_difference != 0) ? 1 : 0;
}
