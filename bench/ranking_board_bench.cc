// Speed of seed 004 part 2's serving side in simulation (issue 13, "Speed"): the publisher
// (impl/ranking/publisher.cc) and the query path through the CDN and its edge filter
// (impl/ranking/edge.cc), each in a world of its own (simulated DB on SimVfs, simulated Redis).
//
//   BM_Publish/<scopes>/<top_n>   a feeder seals one new run of 60 candidates per scope every
//                                 5 simulated seconds, one publisher (run_publisher) polls every scope
//                                 and publishes each new run's Top N (snapshot PREPARED, items,
//                                 READY, the publish transaction, the Redis snapshot and pointer).
//                                 Counter publishes_per_wall_s (committed publish transactions).
//   BM_Feed/<scopes>              the same feeder alone (baseline: the share of the feeder's
//                                 writes in BM_Publish's wall time).
//   BM_EdgeQuery/<clients>        <clients> viewers (run_edge_viewer), each asking the CDN node
//                                 "edge" for a random board every simulated second; the edge
//                                 serves hits filtered with its denylists and goes to the origin
//                                 (Redis pointer, snapshot and denylists) on a miss. Counter
//                                 responses_per_wall_s (answers the viewers got).
//   BM_OriginQuery/<clients>      the same viewers reading the query layer directly (run_viewer),
//                                 no CDN: the baseline of BM_EdgeQuery in the same run.
//
//   cmake --build --preset default --target ranking_board_bench &&
//   build/bench/ranking_board_bench --benchmark_min_time=0.3
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "impl/ranking/edge.h"
#include "impl/ranking/publisher.h"
#include "impl/ranking/risk.h"
#include "impl/ranking/schema.h"
#include "sim/redis/client.h"
#include "sim/redis/server.h"
#include "sim/storage/sql_sim_testing.h"

namespace {

using fl::Task;
using fl::sim::Process;
using fl::sim::World;
using fl::sim::WorldOptions;

constexpr int64_t kSecondUs = 1'000'000;
constexpr int kCandidates = 60;
// One publisher round over 100 scopes takes about 4 simulated seconds (each publish is some ten DB
// round trips with fsync), so the feeder seals a new run per scope every 5 s: nearly every run it
// seals gets published, and the feeder's writes are not wasted wall time.
constexpr int64_t kFeedIntervalUs = 5 * kSecondUs;
constexpr int64_t kPublishSimUs = 50 * kSecondUs;

std::vector<std::string> board_scopes(int n) {
  std::vector<std::string> out = {"GLOBAL|ALL|ALL|ALL"};
  for (int i = 1; i < n; ++i) out.push_back("CHANNEL|ch" + std::to_string(i) + "|CN-SH|zh-CN");
  return out;
}

// A simulated Redis server process with the ranking scripts.
std::shared_ptr<fl::sim::redis::Server> add_redis(World& w) {
  fl::sim::redis::ServerOptions ro;
  ro.engine.scripts = fl::ranking::ranking_scripts(false, true);
  ro.keep_command_log = false;
  auto server = std::make_shared<fl::sim::redis::Server>(ro);
  w.start(w.add_process(w.add_node("redis"), "redis", [server](Process& p) { return server->run(p); }));
  return server;
}

// One new SEALED run per scope: BUILDING, its candidates, then SEALED (the DB refuses candidate
// writes to a SEALED run), under context version 1 / rule-v1 / epoch 1 (what the publisher creates).
Task<void> feed_round(fl::Sql& sql, const std::vector<std::string>& scopes, int64_t round) {
  for (const std::string& scope : scopes) {
    const std::string run = scope + "#b" + std::to_string(round);
    std::vector<fl::SqlStatement> tx;
    tx.push_back(fl::sql_statement(
        "INSERT INTO calculation_run (run_id, scope_id, status, seq, source_offset_vector, input_watermark, "
        "expected_partition_count, expected_partition_set_digest, input_manifest_count, input_manifest_set_digest, "
        "candidate_count, candidate_set_digest, scope_context_version, rule_version, rule_activation_epoch) VALUES (?, "
        "?, "
        "'BUILDING', ?, '', ?, 1, 'p', ?, 'm', ?, 'c', 1, 'rule-v1', 1)",
        run, scope, round, round, int64_t{kCandidates}, int64_t{kCandidates}));
    for (int i = 1; i <= kCandidates; ++i) {
      tx.push_back(fl::sql_statement(
          "INSERT INTO run_candidate (scope_id, run_id, topic_id, score, input_manifest_id, "
          "candidate_revision) VALUES (?, ?, ?, ?, ?, 1)",
          scope, run, "t_" + std::to_string(i), int64_t{1000 - i + round % 7}, run + "/m" + std::to_string(i)));
    }
    tx.push_back(fl::sql_statement("UPDATE calculation_run SET status = 'SEALED' WHERE run_id = ?", run));
    co_await sql.transaction(std::move(tx));
  }
}

struct PublishWorld {
  std::shared_ptr<fl::sim::storage::SqlCommitLog> log = std::make_shared<fl::sim::storage::SqlCommitLog>();
  std::unique_ptr<fl::sim::storage::SqlSim> sim;
};

// The feeder and (with `publish`) the publisher, polling every scope about once a second.
std::unique_ptr<PublishWorld> publish_world(int scopes, int top_n, bool publish, uint64_t seed) {
  auto pw = std::make_unique<PublishWorld>();
  fl::sim::storage::SqlServerOptions so;
  so.schema = fl::ranking::schema_statements(fl::ranking::SchemaOptions{.board = true, .risk = true});
  so.commit_log = pw->log;
  pw->sim = std::make_unique<fl::sim::storage::SqlSim>(seed, so);
  World& w = pw->sim->world();
  add_redis(w);
  const std::vector<std::string> board = board_scopes(scopes);
  pw->sim->client("feeder", [board](Process& self, fl::Sql& sql) -> Task<void> {
    for (int64_t round = 1;; ++round) {
      co_await self.clock().sleep_us(kFeedIntervalUs);
      co_await feed_round(sql, board, round);
    }
  });
  if (!publish) return pw;
  pw->sim->client("pub-1", [board, top_n](Process& self, fl::Sql& sql) -> Task<void> {
    fl::sim::redis::Client redis(
        self,
        fl::sim::redis::ClientOptions{.timeout_us = 300'000, .scripts = fl::ranking::ranking_scripts(false, true)});
    fl::ranking::PublisherOptions o;
    o.scopes = board;
    o.top_n = top_n;
    o.interval_us = kSecondUs;
    o.risk = true;
    co_await fl::ranking::run_publisher(self, sql, redis, o);
  });
  return pw;
}

int64_t committed(const fl::sim::storage::SqlCommitLog& log, const char* prefix) {
  int64_t n = 0;
  for (const auto& c : log) {
    if (!c.result->ok()) continue;
    for (const auto& s : c.statements()) n += s.sql.rfind(prefix, 0) == 0 ? 1 : 0;
  }
  return n;
}

void BM_Publish(benchmark::State& state) {
  double publishes = 0;
  uint64_t seed = 1;
  for (auto _ : state) {
    auto pw = publish_world(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), true, seed++);
    pw->sim->world().run_until(pw->sim->world().now_us() + kPublishSimUs);
    publishes += static_cast<double>(committed(*pw->log, "UPDATE ranking_snapshot SET status = 'PUBLISHED'"));
  }
  if (publishes == 0) state.SkipWithError("nothing published");
  state.counters["publishes_per_wall_s"] = benchmark::Counter(publishes, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Publish)->Args({100, 50})->Args({100, 5})->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Feed(benchmark::State& state) {
  double runs = 0;
  uint64_t seed = 1;
  for (auto _ : state) {
    auto pw = publish_world(static_cast<int>(state.range(0)), 50, false, seed++);
    pw->sim->world().run_until(pw->sim->world().now_us() + kPublishSimUs);
    runs += static_cast<double>(committed(*pw->log, "UPDATE calculation_run SET status = 'SEALED'"));
  }
  state.counters["runs_sealed_per_wall_s"] = benchmark::Counter(runs, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Feed)->Arg(100)->Unit(benchmark::kMillisecond)->UseRealTime();

// Counts the answers viewers got (history op `view` completed OK).
class CountingRecorder final : public fl::Recorder {
 public:
  uint64_t invoke(std::string_view, std::string_view, std::string) override { return ++next_; }
  void complete(uint64_t, fl::Outcome outcome, std::string) override { ok_ += outcome == fl::Outcome::kOk ? 1 : 0; }
  int64_t ok() const { return ok_; }

 private:
  uint64_t next_ = 0;
  int64_t ok_ = 0;
};

const std::vector<std::string> kQueryScopes = {"GLOBAL|ALL|ALL|ALL", "GLOBAL|ALL|ALL|zh-CN", "REGION|ALL|CN-SH|ALL",
                                               "CHANNEL|technology|CN-SH|zh-CN"};
constexpr int64_t kQuerySimUs = 5 * kSecondUs;
constexpr int kViewerNodes = 100;

// Each board's pointer, a Top 50 snapshot and its denylist (one blocked topic), as the publisher
// and the risk control leave them in Redis.
Task<void> seed_boards(fl::Redis& redis) {
  std::string items;
  for (int i = 1; i <= 50; ++i)
    items += (i > 1 ? ";" : "") + std::to_string(i) + ":t_" + std::to_string(i) + ":" + std::to_string(1000 - i);
  for (const std::string& s : kQueryScopes) {
    co_await redis.command({"SET", fl::ranking::pointer_key(s), "1|snap-1"});
    co_await redis.command({"SET", fl::ranking::snapshot_key(s, "snap-1"), items});
    co_await redis.command({"SET", fl::ranking::denylist_key(s), "1|t_3|0"});
  }
}

// A world with Redis, the boards, (with `cdn`) the edge, and `clients` viewers.
void query_world(World& w, int clients, bool cdn, CountingRecorder& rec) {
  add_redis(w);
  const auto scripts = fl::ranking::ranking_scripts(false, true);
  const uint32_t app = w.add_node("app");
  w.start(w.add_process(app, "setup", [scripts](Process& self) -> Task<void> {
    fl::sim::redis::Client redis(self, fl::sim::redis::ClientOptions{.scripts = scripts});
    co_await seed_boards(redis);
  }));
  if (cdn) {
    w.start(w.add_process(w.add_node("edge"), "edge", [scripts](Process& self) -> Task<void> {
      fl::sim::redis::Client redis(self, fl::sim::redis::ClientOptions{.timeout_us = 300'000, .scripts = scripts});
      fl::ranking::EdgeOptions o;
      o.ttl_us = 3 * kSecondUs;
      co_await fl::ranking::run_edge(self, self.rpc(), redis, o);
      for (;;) co_await self.clock().sleep_us(kQuerySimUs);  // keeps the Redis client alive while serving
    }));
  }
  std::vector<uint32_t> nodes;
  for (int i = 0; i < kViewerNodes; ++i) nodes.push_back(w.add_node("viewers-" + std::to_string(i)));
  const int64_t stop = w.now_us() + kQuerySimUs;
  for (int i = 0; i < clients; ++i) {
    Process& p =
        w.add_process(nodes[i % kViewerNodes], "viewer-" + std::to_string(i),
                      [cdn, stop, scripts, &rec](Process& self) -> Task<void> {
                        if (cdn) {
                          co_await fl::ranking::run_edge_viewer(self, self.rpc(), rec, kQueryScopes, kSecondUs, stop);
                          co_return;
                        }
                        fl::sim::redis::Client redis(self, fl::sim::redis::ClientOptions{.scripts = scripts});
                        co_await fl::ranking::run_viewer(self, redis, nullptr, rec, kQueryScopes, kSecondUs, stop);
                      });
    w.after(100'000, [&w, &p] { w.start(p); });
  }
}

void query_bench(benchmark::State& state, bool cdn) {
  double responses = 0;
  uint64_t seed = 1;
  for (auto _ : state) {
    CountingRecorder rec;
    World w(WorldOptions{.seed = seed++});
    query_world(w, static_cast<int>(state.range(0)), cdn, rec);
    w.run_until(w.now_us() + kQuerySimUs + kSecondUs);
    responses += static_cast<double>(rec.ok());
  }
  if (responses == 0) state.SkipWithError("no answers");
  state.counters["responses_per_wall_s"] = benchmark::Counter(responses, benchmark::Counter::kIsRate);
}

void BM_EdgeQuery(benchmark::State& state) { query_bench(state, true); }
void BM_OriginQuery(benchmark::State& state) { query_bench(state, false); }
BENCHMARK(BM_EdgeQuery)->Arg(10'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OriginQuery)->Arg(10'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
