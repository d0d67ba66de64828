// Real-mode load benchmarks' common parts (bench/*_load_bench.cc): a service process as one
// event-loop thread over the real ports, client threads in closed loops, and the same-run
// redis-benchmark baseline.
//
// - LoopRuntime: the fl::Runtime of that thread (wall clock, a ready queue, timers).
// - PipelinedRedis: the Redis port on one real connection, auto-pipelined: the commands the loop's
//   tasks issue while it runs go out together (flush()), one round trip per batch.
// - Mailbox<Request>: what wakes the loop (client requests; tasks the DB thread finished).
// - ThreadedSql: the Sql port on a DB thread of its own, as the DB is a node of its own in
//   simulation; the awaiting task is handed back to the loop.
// - futex_wait/futex_wake: a client thread's blocking wait for its reply (std::atomic::wait spins
//   with sched_yield first, which steals the 2 cores from the service and redis-server).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/cpu_time.h"
#include "harness/real/hiredis_client.h"
#include "harness/real_sql/sqlite_sql.h"
#include "impl/ports/redis.h"
#include "impl/ports/redis_script.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"

namespace fl::bench {

using SteadyClock = std::chrono::steady_clock;

inline int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A fire-and-forget coroutine that owns a spawned Task; its frame frees itself when done.
struct Detached {
  struct promise_type {
    Detached get_return_object() { return Detached{std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() { std::abort(); }
  };
  std::coroutine_handle<promise_type> handle;
};
inline Detached detach(fl::Task<void> task) { co_await std::move(task); }

// A service process's executor: one thread, a ready queue and timers, wall time.
class LoopRuntime final : public fl::Runtime, private fl::Clock {
 public:
  explicit LoopRuntime(std::string process_name = "replica-1") : process_name_(std::move(process_name)) {}
  fl::Clock& clock() override { return *this; }
  void spawn(std::string_view, fl::Task<void> task) override { ready_.push_back(detach(std::move(task)).handle); }
  uint64_t random_u64() override { return rng_(); }
  std::string_view process_name() const override { return process_name_; }
  std::string_view node_name() const override { return "bench"; }
  uint32_t incarnation() const override { return 1; }
  void note(std::string_view) override {}
  int64_t now_us() const override { return wall_us(); }

  void ready(std::coroutine_handle<> h) { ready_.push_back(h); }
  // Runs every ready task (and due timer) until none is left.
  void run_ready() {
    for (;;) {
      const int64_t now = wall_us();
      while (!timers_.empty() && timers_.top().first <= now) {
        ready_.push_back(timers_.top().second);
        timers_.pop();
      }
      if (ready_.empty()) return;
      std::coroutine_handle<> h = ready_.front();
      ready_.pop_front();
      h.resume();
    }
  }
  bool has_timers() const { return !timers_.empty(); }

 private:
  void resume_after_us(std::coroutine_handle<> h, int64_t delay_us) override {
    if (delay_us <= 0)
      ready_.push_back(h);
    else
      timers_.push({wall_us() + delay_us, h});
  }
  using Timer = std::pair<int64_t, std::coroutine_handle<>>;
  struct Later {
    bool operator()(const Timer& a, const Timer& b) const { return a.first > b.first; }
  };
  std::deque<std::coroutine_handle<>> ready_;
  std::priority_queue<Timer, std::vector<Timer>, Later> timers_;
  std::string process_name_;
  std::mt19937_64 rng_{42};
};

// The Redis port on one real connection, auto-pipelined: a command suspends its task; flush()
// writes every queued command at once, reads the replies in order and readies the tasks.
class PipelinedRedis final : public fl::Redis {
 public:
  PipelinedRedis(LoopRuntime& rt, fl::real::RedisConnection conn, std::shared_ptr<const fl::ScriptRegistry> scripts)
      : rt_(rt), conn_(std::move(conn)), scripts_(std::move(scripts)) {}

  fl::Task<fl::RedisReply> command(std::vector<std::string> argv) override {
    Slot slot;
    slot.argv = std::move(argv);
    co_await Queue{this, &slot};
    co_return std::move(slot.reply);
  }
  // Called with every command and the reply the server gave it (what a benchmark counts of the
  // server's answers, e.g. cache hits, without asking the service).
  void observe(std::function<void(const std::vector<std::string>&, const fl::RedisReply&)> fn) {
    observe_ = std::move(fn);
  }
  fl::Task<std::vector<fl::RedisReply>> pipeline(std::vector<std::vector<std::string>> cmds) override {
    std::vector<fl::RedisReply> out;
    for (auto& c : cmds) out.push_back(co_await command(std::move(c)));
    co_return out;
  }
  fl::Task<fl::RedisReply> script(std::string_view name, std::vector<std::string> keys,
                                  std::vector<std::string> args) override {
    const fl::RedisScript* s = scripts_->by_name(name);
    if (s == nullptr) co_return fl::RedisReply::error("ERR faultline: unknown script");
    std::vector<std::string> argv{"EVALSHA", scripts_->sha1_of(name), std::to_string(keys.size())};
    for (auto& k : keys) argv.push_back(std::move(k));
    for (auto& a : args) argv.push_back(a);
    fl::RedisReply r = co_await command(argv);
    if (r.kind == fl::RedisReply::Kind::kError && r.str.rfind("NOSCRIPT", 0) == 0) {
      argv[0] = "EVAL";
      argv[1] = s->lua;
      r = co_await command(std::move(argv));
    }
    co_return r;
  }
  fl::Task<fl::RedisSubscribeResult> subscribe(std::vector<std::string>, fl::RedisSubscriptionHandlers) override {
    co_return fl::RedisSubscribeResult{fl::RedisReply::error("ERR not supported"), nullptr};
  }

  // Returns the number of commands sent (one round trip).
  size_t flush() {
    if (pending_.empty()) return 0;
    std::vector<Slot*> batch;
    batch.swap(pending_);
    std::vector<std::vector<std::string>> cmds;
    cmds.reserve(batch.size());
    for (Slot* s : batch) cmds.push_back(std::move(s->argv));
    std::vector<fl::RedisReply> replies = conn_.pipeline(cmds);
    for (size_t i = 0; i < batch.size(); ++i) {
      batch[i]->reply = i < replies.size() ? std::move(replies[i]) : fl::RedisReply::transport_error("short", true);
      if (observe_) observe_(cmds[i], batch[i]->reply);
      rt_.ready(batch[i]->handle);
    }
    return batch.size();
  }
  bool idle() const { return pending_.empty(); }
  fl::real::RedisConnection& connection() { return conn_; }

 private:
  struct Slot {
    std::vector<std::string> argv;
    fl::RedisReply reply;
    std::coroutine_handle<> handle;
  };
  struct Queue {
    PipelinedRedis* redis;
    Slot* slot;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      slot->handle = h;
      redis->pending_.push_back(slot);
    }
    void await_resume() const noexcept {}
  };
  LoopRuntime& rt_;
  fl::real::RedisConnection conn_;
  std::shared_ptr<const fl::ScriptRegistry> scripts_;
  std::vector<Slot*> pending_;
  std::function<void(const std::vector<std::string>&, const fl::RedisReply&)> observe_;
};

// Blocking wait/wake on a 32-bit word (std::atomic::wait spins with sched_yield first, which
// steals the 2 cores from the service and redis-server).
inline void futex_wait(std::atomic<uint32_t>* word, uint32_t value) {
  while (word->load(std::memory_order_acquire) == value) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, value, nullptr, nullptr, 0);
  }
}
inline void futex_wake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

// Everything that wakes the service's loop: client requests and tasks resumed by the DB thread.
template <typename Request>
class Mailbox {
 public:
  void push(Request* r) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(r);
    }
    cv_.notify_one();
  }
  void resume(std::coroutine_handle<> h) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      resumed_.push_back(h);
    }
    cv_.notify_one();
  }
  // Takes everything queued; waits up to wait_us when nothing is (0: does not wait).
  void take(int64_t wait_us, std::vector<Request*>* requests, std::vector<std::coroutine_handle<>>* resumed) {
    std::unique_lock<std::mutex> lock(mu_);
    if (requests_.empty() && resumed_.empty() && wait_us > 0) cv_.wait_for(lock, std::chrono::microseconds(wait_us));
    requests->swap(requests_);
    resumed->swap(resumed_);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Request*> requests_;
  std::vector<std::coroutine_handle<>> resumed_;
};

// The Sql port on a DB thread of its own (as the DB is a node of its own in simulation): the
// service's loop keeps serving while a transaction — its fsync included — runs; the task that
// awaits it is resumed on the loop. Group commit then forms the next batch meanwhile.
class ThreadedSql final : public fl::Sql {
 public:
  // `resume` hands a finished job's task back to the loop (e.g. Mailbox::resume); it runs on the DB thread.
  ThreadedSql(fl::real::SqliteSql& db, std::function<void(std::coroutine_handle<>)> resume)
      : db_(db), resume_(std::move(resume)), thread_([this] { run(); }) {}
  ~ThreadedSql() override { stop(); }
  // Runs the queued jobs, then joins the DB thread.
  void stop() { stop_thread(false); }
  // Joins the DB thread after the job it is running; the queued ones never run (their tasks stay
  // suspended): for a benchmark whose service fell too far behind to wait for.
  void abandon() { stop_thread(true); }
  using fl::Sql::execute;
  fl::Task<fl::SqlResult> execute(fl::SqlStatement s) override {
    Job job;
    job.statements.push_back(std::move(s));
    job.single = true;
    co_await Submit{this, &job};
    co_return std::move(job.result);
  }
  fl::Task<fl::SqlResult> transaction(std::vector<fl::SqlStatement> s) override {
    Job job;
    job.statements = std::move(s);
    co_await Submit{this, &job};
    co_return std::move(job.result);
  }
  int64_t transactions() const { return transactions_.load(); }
  // Jobs submitted and not yet handed back (a write-behind still in flight, say).
  int64_t outstanding() const { return submitted_.load() - finished_.load(); }
  // After destruction-time join only: the DB thread's CPU seconds and wall time inside SQLite.
  double cpu_s() const { return cpu_s_; }
  double busy_s() const { return static_cast<double>(busy_us_) / 1e6; }

 private:
  struct Job {
    std::vector<fl::SqlStatement> statements;
    bool single = false;
    fl::SqlResult result;
    std::coroutine_handle<> handle;
  };
  struct Submit {
    ThreadedSql* sql;
    Job* job;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      job->handle = h;
      sql->submitted_.fetch_add(1);
      {
        std::lock_guard<std::mutex> lock(sql->mu_);
        sql->jobs_.push_back(job);
      }
      sql->cv_.notify_one();
    }
    void await_resume() const noexcept {}
  };
  void run() {
    for (;;) {
      Job* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
        if (abandon_) jobs_.clear();
        if (jobs_.empty()) {
          cpu_s_ = thread_cpu_s();
          return;
        }
        job = jobs_.front();
        jobs_.pop_front();
      }
      const auto t0 = SteadyClock::now();
      if (job->single) {
        job->result = db_.execute_now(job->statements.front());
      } else {
        job->result = db_.transaction_now(job->statements);
        transactions_.fetch_add(1);
      }
      busy_us_ += std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - t0).count();
      finished_.fetch_add(1);
      resume_(job->handle);
    }
  }
  fl::real::SqliteSql& db_;
  std::function<void(std::coroutine_handle<>)> resume_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job*> jobs_;
  bool stop_ = false;
  bool abandon_ = false;
  std::atomic<int64_t> transactions_{0};
  std::atomic<int64_t> submitted_{0}, finished_{0};
  double cpu_s_ = 0;
  int64_t busy_us_ = 0;
  std::thread thread_;

  void stop_thread(bool abandon) {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      abandon_ = abandon;
    }
    cv_.notify_one();
    thread_.join();
  }
};

// The p-quantile (0..1) of ascending `sorted`, 0 when empty.
inline int64_t percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1));
  return sorted[i];
}

// redis-benchmark's SET throughput (requests/s) on `socket` with `connections` clients and
// `pipeline` depth for `requests` commands; 0 when it cannot run.
inline double run_redis_benchmark(const std::string& socket, int connections, int64_t requests, int pipeline) {
  std::string cmd = std::string(REDIS_BENCHMARK_PATH) + " -s " + socket + " -c " + std::to_string(connections) +
                    " -n " + std::to_string(requests) + " -P " + std::to_string(std::max(1, pipeline)) +
                    " -t set -q 2>/dev/null";
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

// Round trips and commands PipelinedRedis sent while serve_loop ran.
struct LoopCounts {
  int64_t flushes = 0;
  int64_t commands = 0;
};

// The service process's loop: takes client requests (starting `serve(request, &outstanding)` for
// each, which must decrement `outstanding` when it answers) and tasks the DB thread finished, runs
// every ready task, flushes Redis, until `clients_done()` and nothing is outstanding.
template <typename Request, typename Serve, typename Done>
LoopCounts serve_loop(LoopRuntime& rt, PipelinedRedis& redis, Mailbox<Request>& mailbox, Serve serve,
                      Done clients_done) {
  LoopCounts counts;
  int64_t outstanding = 0;
  std::vector<Request*> arrived;
  std::vector<std::coroutine_handle<>> resumed;
  while (!clients_done() || outstanding > 0) {
    // Nothing to run here until a request arrives or the DB thread finishes a transaction.
    mailbox.take(rt.has_timers() ? 200 : 1000, &arrived, &resumed);
    for (Request* r : arrived) {
      ++outstanding;
      rt.spawn("request", serve(r, &outstanding));
    }
    for (std::coroutine_handle<> h : resumed) rt.ready(h);
    arrived.clear();
    resumed.clear();
    rt.run_ready();
    for (size_t sent = redis.flush(); sent > 0; sent = redis.flush()) {
      ++counts.flushes;
      counts.commands += static_cast<int64_t>(sent);
      rt.run_ready();
    }
  }
  return counts;
}

// After serve_loop: runs what the service still has in flight (a write-behind's DB write, its
// follow-up Redis calls) until `idle()` holds for 100 ms or `limit_us` passes. Returns whether
// it went idle. Timers (periodic jobs) do not keep it running.
template <typename Request, typename Idle>
bool drain_loop(LoopRuntime& rt, PipelinedRedis& redis, Mailbox<Request>& mailbox, Idle idle, int64_t limit_us,
                LoopCounts* counts) {
  std::vector<Request*> arrived;
  std::vector<std::coroutine_handle<>> resumed;
  const int64_t deadline_us = wall_us() + limit_us;
  int64_t idle_since_us = -1;
  while (wall_us() < deadline_us) {
    mailbox.take(1000, &arrived, &resumed);
    for (std::coroutine_handle<> h : resumed) rt.ready(h);
    resumed.clear();
    rt.run_ready();
    for (size_t sent = redis.flush(); sent > 0; sent = redis.flush()) {
      ++counts->flushes;
      counts->commands += static_cast<int64_t>(sent);
      rt.run_ready();
    }
    if (!idle() || !redis.idle()) {
      idle_since_us = -1;
    } else if (idle_since_us < 0) {
      idle_since_us = wall_us();
    } else if (wall_us() - idle_since_us >= 100'000) {
      return true;
    }
  }
  return false;
}

}  // namespace fl::bench
