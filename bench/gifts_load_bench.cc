// Load benchmark of the hardened gifts charge path in REAL mode (issue 11, "Real mode and speed"):
// the code the simulator checks (impl/gifts/charge.h, variant hardened) on real ports.
//
// One gift-service process, a GiftService on a single-threaded event loop, serves
// `--connections` client threads, each sending one gift at a time (closed loop, a fresh requestId
// per click, 003:L41) and waiting for the reply. Per charge the service runs the seed's path:
// `SET gift:dedup:{requestId} 1 NX EX 10` (003:L53) on a redis-server that the benchmark starts
// and stops, one SQLite transaction (order + wallet debit + outbox row, 003:L66-68, L218-222, WAL,
// synchronous=full by default) on a DB thread, the produce to the log, and the outbox row marked
// SENT (003:L223). The log is in-process (LocalLog below: the project has no real broker; the
// simulated one is sim/log), so the figures are Redis + SQLite + the service.
//
// Reports per connection count: charges/s and p50/p99/p999 latency (measured by the client
// threads, queueing included), redis-benchmark doing the same number of Redis commands with the
// same pipelining and unpipelined with as many connections as clients, in the same run; then
// checks that the stores agree (the benchmark is not allowed to be fast and wrong): every order
// has its outbox row SENT and its log record, and the coins debited equal the orders' amounts.
//
// Usage: gifts_load_bench [--seconds S] [--connections 32,128] [--users U] [--rooms R]
//                         [--synchronous full|normal]
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/real_loop.h"
#include "harness/real/hiredis_client.h"
#include "harness/real/redis_server.h"
#include "harness/real_sql/sqlite_sql.h"
#include "impl/gifts/charge.h"
#include "impl/gifts/fixes.h"
#include "impl/gifts/schema.h"
#include "impl/ports/log.h"

namespace {

using namespace fl::bench;

constexpr int64_t kInitialBalance = 1'000'000'000;
constexpr int32_t kPartitions = 8;

// An in-process log: each produce() is appended, in order, to its topic's partition (chosen by
// the key, as the seed's producer keys by roomId, 003:L165). Plain producers only: the charge
// path with the outbox scheme neither consumes nor uses transactions.
class LocalLog final : public fl::Log {
 public:
  std::unique_ptr<fl::LogProducer> producer(const fl::ProducerOptions&) override {
    return std::make_unique<Producer>(this);
  }
  std::unique_ptr<fl::LogConsumer> consumer(const fl::ConsumerOptions&) override {
    std::fprintf(stderr, "gifts_load_bench: the in-process log has no consumers\n");
    std::abort();
  }
  // Records appended, over every partition.
  size_t records() const {
    size_t n = 0;
    for (const auto& [tp, values] : partitions_) n += values.size();
    return n;
  }
  // How many records carry each msgId (every value is a GiftMsg).
  std::map<std::string, int> count_by_msg_id() const {
    std::map<std::string, int> out;
    for (const auto& [tp, values] : partitions_) {
      for (const std::string& v : values) {
        std::optional<fl::gifts::GiftMsg> m = fl::gifts::GiftMsg::decode(v);
        if (m) ++out[m->msg_id];
      }
    }
    return out;
  }

 private:
  class Producer final : public fl::LogProducer {
   public:
    explicit Producer(LocalLog* log) : log_(log) {}
    fl::Task<fl::LogStatus> init() override { co_return fl::LogStatus::kOk; }
    fl::Task<fl::ProduceResult> produce(std::string topic, std::string key, std::string value) override {
      const int32_t partition = static_cast<int32_t>(std::hash<std::string>{}(key) % kPartitions);
      std::vector<std::string>& p = log_->partitions_[fl::TopicPartition{topic, partition}];
      p.push_back(std::move(value));
      co_return fl::ProduceResult{fl::LogStatus::kOk, partition, static_cast<int64_t>(p.size()) - 1};
    }
    fl::Task<fl::LogStatus> begin_transaction() override { co_return fl::LogStatus::kNotInTransaction; }
    fl::Task<fl::LogStatus> commit_transaction(fl::TxnOffsets) override { co_return fl::LogStatus::kNotInTransaction; }
    fl::Task<fl::LogStatus> abort_transaction() override { co_return fl::LogStatus::kNotInTransaction; }
    int64_t producer_id() const override { return -1; }
    int32_t epoch() const override { return -1; }

   private:
    LocalLog* log_;
  };
  std::map<fl::TopicPartition, std::vector<std::string>> partitions_;
};

// One click in flight; the client thread waits on `done`.
struct Request {
  fl::gifts::SendGift gift;
  fl::gifts::SendReply reply;
  std::atomic<uint32_t> done{0};
};

fl::Task<void> serve(fl::gifts::GiftService* svc, Request* r, int64_t* outstanding) {
  r->reply = co_await svc->send(r->gift);
  --*outstanding;
  r->done.store(1, std::memory_order_release);
  futex_wake(&r->done);
}

struct Options {
  double seconds = 5;
  std::vector<int> connections = {32, 128};
  int64_t users = 1000;
  int64_t rooms = 100;
  std::string synchronous = "full";
};

struct Outcome {
  int64_t charges = 0, errors = 0, flushes = 0, commands = 0;
  double elapsed_s = 0, loop_cpu_s = 0;
  std::vector<int64_t> latencies_us;  // sorted
};

// Runs the service loop and `connections` client threads for `seconds`.
Outcome drive(fl::gifts::GiftService& svc, LoopRuntime& rt, PipelinedRedis& redis, Mailbox<Request>& mailbox,
              const Options& o, int connections, int run) {
  std::atomic<bool> stop{false};
  std::atomic<int> clients_left{connections};
  std::vector<std::vector<int64_t>> latencies(static_cast<size_t>(connections));
  std::vector<int64_t> errors(static_cast<size_t>(connections), 0);
  std::vector<std::unique_ptr<Request>> requests;
  for (int t = 0; t < connections; ++t) requests.push_back(std::make_unique<Request>());
  const auto start = SteadyClock::now();
  std::vector<std::thread> clients;
  for (int t = 0; t < connections; ++t) {
    clients.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<uint64_t>(run) * 100003 + static_cast<uint64_t>(t) + 1);
      std::vector<int64_t>& lat = latencies[static_cast<size_t>(t)];
      lat.reserve(1 << 16);
      Request& r = *requests[static_cast<size_t>(t)];
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        r.gift.user = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(o.users));
        r.gift.room = "room_" + std::to_string(1 + rng() % static_cast<uint64_t>(o.rooms));
        r.gift.gift = (rng() & 1) ? "gift_rose" : "gift_rocket";
        r.gift.count = 1 + static_cast<int64_t>(rng() % 3);
        r.gift.request_id = "r" + std::to_string(run) + "-" + std::to_string(t) + "-" + std::to_string(++n);
        r.done.store(0, std::memory_order_relaxed);
        const auto t0 = SteadyClock::now();
        mailbox.push(&r);
        futex_wait(&r.done, 0);
        if (r.reply.status != fl::gifts::SendReply::Status::kOk) ++errors[static_cast<size_t>(t)];
        lat.push_back(std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - t0).count());
      }
      clients_left.fetch_sub(1);
    });
  }
  Outcome out;
  const double cpu0 = thread_cpu_s();
  std::thread timer([&] {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    stop = true;
  });
  const LoopCounts counts = serve_loop(
      rt, redis, mailbox, [&](Request* r, int64_t* outstanding) { return serve(&svc, r, outstanding); },
      [&] { return clients_left.load() == 0; });
  out.flushes = counts.flushes;
  out.commands = counts.commands;
  out.loop_cpu_s = thread_cpu_s() - cpu0;
  timer.join();
  for (auto& th : clients) th.join();
  out.elapsed_s = std::chrono::duration<double>(SteadyClock::now() - start).count();
  for (auto& v : latencies) out.latencies_us.insert(out.latencies_us.end(), v.begin(), v.end());
  std::sort(out.latencies_us.begin(), out.latencies_us.end());
  for (int64_t e : errors) out.errors += e;
  out.charges = static_cast<int64_t>(out.latencies_us.size()) - out.errors;
  return out;
}

// Prints one run and runs redis-benchmark on the same server as its baseline.
void report_run(const Outcome& r, int connections, const std::string& socket) {
  const std::vector<int64_t>& all = r.latencies_us;
  const double per_s = static_cast<double>(r.charges) / r.elapsed_s;
  std::printf("  connections=%d duration=%.2fs charges=%" PRId64 " errors=%" PRId64 "\n", connections, r.elapsed_s,
              r.charges, r.errors);
  std::printf("    throughput=%.0f charges/s  p50=%.3f ms  p99=%.3f ms  p999=%.3f ms  max=%.3f ms\n", per_s,
              percentile(all, 0.50) / 1000.0, percentile(all, 0.99) / 1000.0, percentile(all, 0.999) / 1000.0,
              (all.empty() ? 0 : all.back()) / 1000.0);
  std::printf("    redis: %" PRId64 " commands in %" PRId64
              " round trips (avg pipeline %.1f); loop thread CPU %.2f s"
              " (%.1f us per charge)\n",
              r.commands, r.flushes,
              r.flushes > 0 ? static_cast<double>(r.commands) / static_cast<double>(r.flushes) : 0.0, r.loop_cpu_s,
              r.charges > 0 ? 1e6 * r.loop_cpu_s / static_cast<double>(r.charges) : 0.0);
  const int depth = r.flushes > 0 ? static_cast<int>((r.commands + r.flushes / 2) / r.flushes) : 1;
  const double rb_same = run_redis_benchmark(socket, 1, std::max<int64_t>(r.commands, 1000), depth);
  const double rb_plain = run_redis_benchmark(socket, connections, std::max<int64_t>(r.commands, 1000), 1);
  std::printf("    redis-benchmark SET, 1 connection -P %d (same round trips): %.0f req/s -> ratio %.4f\n", depth,
              rb_same, rb_same > 0 ? per_s / rb_same : 0.0);
  std::printf("    redis-benchmark SET, %d connections -P 1: %.0f req/s -> ratio %.4f\n", connections, rb_plain,
              rb_plain > 0 ? per_s / rb_plain : 0.0);
}

int64_t scalar(fl::real::SqliteSql& db, const char* sql) {
  fl::SqlResult r = db.execute_now(fl::SqlStatement(sql));
  return r.ok() && r.scalar() ? r.scalar()->as_int() : -1;
}

// The stores agree: every order has a SENT outbox row and exactly one log record, no request was
// charged twice, and the coins debited equal the orders' amounts.
bool check_stores(fl::real::SqliteSql& db, const LocalLog& log, int64_t users) {
  const int64_t orders = scalar(db, "SELECT COUNT(*) FROM gift_order");
  const int64_t not_sent = scalar(db, "SELECT COUNT(*) FROM outbox_message WHERE status != 'SENT'");
  const int64_t outbox = scalar(db, "SELECT COUNT(*) FROM outbox_message");
  const int64_t amounts = scalar(db, "SELECT COALESCE(SUM(amount), 0) FROM gift_order");
  const int64_t balances = scalar(db, "SELECT COALESCE(SUM(balance), 0) FROM wallet");
  const int64_t duplicates =
      scalar(db, "SELECT COUNT(*) FROM (SELECT 1 FROM gift_order GROUP BY user_id, request_id HAVING COUNT(*) > 1)");
  int64_t unlogged = 0;
  const std::map<std::string, int> logged = log.count_by_msg_id();
  fl::SqlResult ids = db.execute_now(fl::SqlStatement("SELECT msg_id FROM gift_order"));
  for (const fl::SqlRow& row : ids.rows()) {
    auto it = logged.find(row[0].as_text());
    if (it == logged.end() || it->second != 1) ++unlogged;
  }
  const bool coins = users * kInitialBalance - balances == amounts;
  std::printf("  stores: %" PRId64 " orders, %" PRId64 " outbox rows (%" PRId64 " not SENT), %zu log records, %" PRId64
              " orders without exactly one record, %" PRId64
              " duplicate requests, coins debited %s the orders' amounts\n",
              orders, outbox, not_sent, log.records(), unlogged, duplicates, coins ? "equal" : "DIFFER FROM");
  return orders == outbox && not_sent == 0 && unlogged == 0 && duplicates == 0 && coins &&
         static_cast<int64_t>(log.records()) == orders;
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) return false;
    const std::string v = argv[++i];
    if (k == "--seconds")
      o->seconds = std::atof(v.c_str());
    else if (k == "--users")
      o->users = std::atoll(v.c_str());
    else if (k == "--rooms")
      o->rooms = std::atoll(v.c_str());
    else if (k == "--synchronous")
      o->synchronous = v;
    else if (k == "--connections") {
      o->connections.clear();
      std::stringstream ss(v);
      for (std::string part; std::getline(ss, part, ',');) o->connections.push_back(std::atoi(part.c_str()));
    } else {
      return false;
    }
  }
  const bool sync_ok = o->synchronous == "full" || o->synchronous == "normal";
  const bool conns_ok =
      !o->connections.empty() && std::all_of(o->connections.begin(), o->connections.end(), [](int c) { return c > 0; });
  return o->seconds > 0 && o->users > 0 && o->rooms > 0 && sync_ok && conns_ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: gifts_load_bench [--seconds S] [--connections 32,128] [--users U] [--rooms R]"
                 " [--synchronous full|normal]\n");
    return 2;
  }
  fl::real::RedisServer redis = fl::real::RedisServer::start({});
  fl::real::SqliteSqlOptions so;
  so.file = "gifts.db";
  so.synchronous =
      o.synchronous == "normal" ? fl::sim::storage::Synchronous::kNormal : fl::sim::storage::Synchronous::kFull;
  so.schema = {"PRAGMA cache_size = -65536"};
  for (const std::string& st : fl::gifts::schema_statements()) so.schema.push_back(st);
  fl::real::SqliteSql sqlite(so);
  if (!sqlite.ok()) {
    std::fprintf(stderr, "sqlite: %s\n", sqlite.error().c_str());
    return 1;
  }
  sqlite.execute_now(fl::SqlStatement("BEGIN"));
  for (int64_t u = 1; u <= o.users; ++u) {
    sqlite.execute_now(fl::SqlStatement("INSERT INTO wallet (user_id, balance) VALUES (?, ?)", {u, kInitialBalance}));
  }
  sqlite.execute_now(fl::SqlStatement("COMMIT"));

  LoopRuntime rt("gift-1");
  PipelinedRedis pr(rt, fl::real::RedisConnection::unix_socket(redis.socket_path()),
                    std::make_shared<fl::ScriptRegistry>());
  Mailbox<Request> mailbox;
  ThreadedSql sql(sqlite, [&mailbox](std::coroutine_handle<> h) { mailbox.resume(h); });
  LocalLog log;
  fl::gifts::ChargeOptions co;
  co.fixes = fl::gifts::GiftFixes::hardened(fl::gifts::gifts_fixes());
  fl::gifts::GiftService svc(rt, pr, sql, log, co);

  std::printf(
      "gifts_load_bench: hardened charge path (dedup SET NX EX, order+debit+outbox transaction, produce, "
      "outbox SENT), 1 gift service (event loop + DB thread), real redis-server %s + SQLite WAL "
      "synchronous=%s on %s, in-process log; users=%" PRId64 " rooms=%" PRId64 "\n",
      redis.binary_path().c_str(), o.synchronous.c_str(), sqlite.path().c_str(), o.users, o.rooms);
  for (size_t i = 0; i < o.connections.size(); ++i) {
    const Outcome r = drive(svc, rt, pr, mailbox, o, o.connections[i], static_cast<int>(i));
    report_run(r, o.connections[i], redis.socket_path());
  }
  sql.stop();  // joins the DB thread: the checks below use the connection directly
  const bool ok = check_stores(sqlite, log, o.users);
  redis.stop();
  return ok ? 0 : 1;
}
