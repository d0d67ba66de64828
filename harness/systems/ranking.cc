// Adapter of the hot-search ranking system, part 1 (impl/ranking, seed 004) to the harness.
//
// Topology: the DB ("db", SQLite on SimVfs), the log broker ("log": the pre-normalization log
// stable_events and the keyed log keyed_events, 4 partitions each), the topic service ("topics"),
// `replicas` ingest validators ("ingest-N", role replica), `workers` normalizers ("norm-N") and
// aggregators ("agg-N") (role worker; "topics" and "log" too), and three producers
// ("producer-search|post|comment", role client). The judges get world observations only
// (properties/ranking/run.h).
#include <sqlite3.h>

#include <algorithm>
#include <memory>

#include "harness/system.h"
#include "impl/ranking/aggregator.h"
#include "impl/ranking/fixes.h"
#include "impl/ranking/schema.h"
#include "impl/ranking/services.h"
#include "properties/ranking/checks.h"
#include "sim/log/client.h"
#include "sim/log/server.h"
#include "sim/storage/sim_vfs.h"
#include "sim/storage/sql_client.h"
#include "sim/storage/sql_server.h"
#include "sim/storage/vfs_reader.h"
#include "sim/world.h"

namespace fl {

namespace {

using sim::Process;
using sim::World;

int64_t param(const Scenario& s, const std::string& key, int64_t fallback) {
  auto it = s.params.find(key);
  if (it != s.params.end()) return std::stoll(it->second);
  for (const WorkloadSpec& w : s.workload) {
    auto wt = w.params.find(key);
    if (wt != w.params.end()) return std::stoll(wt->second);
  }
  return fallback;
}

struct Shared {
  std::shared_ptr<sim::storage::SimVfs> vfs;
  std::shared_ptr<sim::storage::SqlCommitLog> commits = std::make_shared<sim::storage::SqlCommitLog>();
  std::shared_ptr<sim::log::BrokerServer> broker;
  std::string db_file = "ranking.db";
  ranking::RankFixes fixes = ranking::RankFixes::spec();
  ranking::BoardConfig cfg;
  int topics = 20;
  int64_t sql_timeout_us = 500'000;
};

sim::storage::SqlClient sql_of(Process& self, const Shared& sh) {
  return sim::storage::SqlClient(self, self.rpc(), sim::storage::SqlClientOptions{.timeout_us = sh.sql_timeout_us});
}

Task<void> producer_main(Process& self, std::shared_ptr<Shared> sh, Recorder& history, ranking::ProducerOptions o) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  co_await ranking::run_producer(self, self.rpc(), sql, history, std::move(o));
}

Task<void> ingest_main(Process& self, std::shared_ptr<Shared> sh, std::string name) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  sim::log::LogClient log(self, self.rpc());
  ranking::IngestService service(self, sql, log, sh->cfg);
  co_await service.run(self.rpc(), name);
  for (;;) co_await self.clock().sleep_ms(60'000);  // keeps the clients above alive while serving
}

Task<void> topics_main(Process& self, std::shared_ptr<Shared> sh) {
  co_await ranking::run_topic_service(self, self.rpc(), sh->topics);
  for (;;) co_await self.clock().sleep_ms(60'000);
}

Task<void> normalizer_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  sim::log::LogClient log(self, self.rpc());
  co_await ranking::run_normalizer(self, self.rpc(), sql, log, ranking::NormalizerOptions{.cfg = sh->cfg});
}

Task<void> aggregator_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  sim::log::LogClient log(self, self.rpc());
  co_await ranking::run_aggregator(self, sql, log, ranking::AggregatorOptions{.cfg = sh->cfg, .fixes = sh->fixes});
}

// A corrupted checkpoint (F06, 004:L487): at `at_us` every aggregation checkpoint's digest is
// overwritten through the DB, recorded in the world's fault log as a storage fault of "db".
Task<void> corrupt_main(Process& self, std::shared_ptr<Shared> sh, World& world, int64_t at_us) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  co_await self.clock().sleep_us(at_us - self.clock().now_us());
  for (;;) {
    SqlResult r = co_await sql.exec("UPDATE agg_checkpoint SET digest = 'corrupted'");
    if (r.ok()) break;
    co_await self.clock().sleep_ms(50);
  }
  world.record_fault(sim::FaultRecord{world.now_us(), sim::FaultKind::kStorageError, "db", "db", "", "", 0, -1});
}

// ---- Observations.

std::string render(const SqlValue& v) {
  if (v.type() == SqlValue::Type::kInteger) return std::to_string(v.as_int());
  if (v.type() == SqlValue::Type::kText || v.type() == SqlValue::Type::kBlob) return v.as_text();
  return v.describe();
}

void read_db(Shared& sh, ranking::props::RankingRun* run) {
  sim::storage::VfsReader db(*sh.vfs, sh.db_file, /*quiet=*/true);
  auto text = &sim::storage::VfsReader::text;
  auto i64 = [](sqlite3_stmt* st, int c) { return static_cast<int64_t>(sqlite3_column_int64(st, c)); };
  db.each("SELECT event_id, status FROM outbox ORDER BY id",
          [&](sqlite3_stmt* st) { run->outbox.emplace_back(text(st, 0), text(st, 1)); });
  db.each("SELECT payload, reason FROM ingest_reject ORDER BY id",
          [&](sqlite3_stmt* st) { run->rejects.emplace_back(text(st, 0), text(st, 1)); });
  db.each("SELECT source_partition, source_offset FROM candidate_term", [&](sqlite3_stmt* st) {
    run->candidate_terms.emplace_back(static_cast<int32_t>(i64(st, 0)), i64(st, 1));
  });
  db.each("SELECT aggregate_key, topic_id, scope_id, window_type, window_start, metric_type, active_generation, "
          "current_aggregate_version FROM topic_window_metric ORDER BY aggregate_key",
          [&](sqlite3_stmt* st) {
            run->heads.push_back(ranking::props::HeadRow{text(st, 0), text(st, 1), text(st, 2), text(st, 3),
                                                         i64(st, 4), text(st, 5), i64(st, 6), i64(st, 7)});
          });
  db.each("SELECT aggregate_key, aggregation_generation, aggregate_version, raw_count, effective_value, "
          "suspicious_count, risk_adjusted_value, source_offset_cut_ref, value_digest FROM topic_window_metric_version",
          [&](sqlite3_stmt* st) {
            run->versions.push_back(ranking::props::VersionRow{
                text(st, 0), i64(st, 1), i64(st, 2),
                ranking::model::Value{i64(st, 3), i64(st, 4), i64(st, 5), i64(st, 6)}, text(st, 7), text(st, 8)});
          });
  db.each("SELECT keyed_partition, next_offset FROM agg_checkpoint", [&](sqlite3_stmt* st) {
    run->checkpoints[static_cast<int32_t>(i64(st, 0))] = i64(st, 1);
  });
  run->db_read = db.ok();
}

void read_log(sim::log::Broker& broker, const char* topic, std::vector<ranking::props::LogRecordObs>* out,
              std::map<int32_t, int64_t>* ends) {
  for (int32_t p = 0; p < broker.partition_count(topic); ++p) {
    if (ends) (*ends)[p] = broker.log_end_offset(TopicPartition{topic, p});
    for (int64_t offset = 0;;) {
      sim::log::FetchReply f = broker.fetch(TopicPartition{topic, p}, offset, 1000);
      if (f.status != LogStatus::kOk || f.records.empty()) break;
      for (const LogRecord& r : f.records) out->push_back(ranking::props::LogRecordObs{p, r.offset, r.key, r.value});
      offset = f.records.back().offset + 1;
    }
  }
}

void read_commits(const Shared& sh, ranking::props::RankingRun* run) {
  for (const sim::storage::SqlCommitRecord& c : *sh.commits) {
    ranking::props::SqlCommit out{c.time_us, c.result.ok(), c.client, {}};
    for (size_t i = 0; i < c.statements.size(); ++i) {
      ranking::props::SqlStatementObs o{c.statements[i].sql, {}, 0};
      for (const SqlValue& v : c.statements[i].params) o.params.push_back(render(v));
      if (c.result.ok() && i < c.result.sets.size()) o.changes = c.result.sets[i].changes;
      out.statements.push_back(std::move(o));
    }
    run->commits.push_back(std::move(out));
  }
}

class RankingRun final : public SystemRun {
 public:
  std::vector<Verdict> check(World& world, const std::vector<std::string>& properties) override {
    ranking::props::RankingRun run;
    run.config.topics = shared->topics;
    run.end_us = world.now_us();
    for (const sim::Operation& o : world.history().operations()) {
      if (o.op != "emit") continue;
      run.emits.push_back(ranking::props::EmitOp{o.process, o.args, o.invoke_us,
                                                 o.completed() ? o.outcome : Outcome::kInfo});
    }
    read_db(*shared, &run);
    read_commits(*shared, &run);
    read_log(shared->broker->broker(), ranking::kStableTopic, &run.stable, nullptr);
    read_log(shared->broker->broker(), ranking::kKeyedTopic, &run.keyed, &run.keyed_end);
    run.faults = world.fault_log();
    return ranking::props::check_ranking(run, properties);
  }
  std::vector<std::string> fault_targets(const std::string& role) const override {
    if (role == "replica") return replicas;
    if (role == "worker") return workers;
    if (role == "client") return clients;
    if (role == "db") return {"db"};
    return {};
  }
  bool apply_fault(const FaultSpec& f) override {
    if (f.kind != "sql-io-error" || f.target != "db") return false;
    shared->vfs->fail_next(sim::storage::SimIoOp::kWrite, static_cast<uint32_t>(std::max<int64_t>(f.value, 1)));
    return true;
  }

  std::shared_ptr<Shared> shared;
  std::vector<std::string> replicas, workers, clients;
};

class RankingSystem final : public SystemUnderTest {
 public:
  std::string name() const override { return "ranking"; }
  std::string description() const override {
    return "seed 004 part 1: hot-search events through an outbox, contract validation and the pre-normalization "
           "log, topic normalization and scope expansion, into fenced immutable window aggregates";
  }
  std::vector<PropertyInfo> properties() const override { return ranking::props::ranking_properties(); }
  std::vector<std::string> workload_kinds() const override { return {"ranking"}; }
  std::vector<ParamInfo> params() const override {
    return {{"topics", "main topics t_1..t_N (each with aliases aNx, aNy)", "20"},
            {"events_per_s", "events per second per producer", "5"},
            {"hot_percent", "events on the hot topic t_1", "0"},
            {"alias_percent", "events whose hint is an alias", "20"},
            {"unmapped_percent", "events with an unmapped hint", "5"},
            {"lowconf_percent", "events with a low-confidence hint", "5"},
            {"actors", "distinct actors", "50"},
            {"repeat_actor_percent", "events by the previous actor again (004:L6)", "10"},
            {"invalid_percent", "events breaking the contract", "5"},
            {"replay_percent", "events sent again with the same eventId", "5"},
            {"late_percent", "events whose time is up to 20 min old", "10"},
            {"sql_timeout_ms", "DB client timeout", "500"},
            {"corrupt_checkpoint_at_ms", "when every aggregation checkpoint is corrupted (F06); 0: never", "0"}};
  }
  std::vector<CriticalDuration> critical_durations(const Scenario&) const override {
    return {{"consumer session timeout", 6'000'000}, {"short window", 10'000'000}, {"relay interval", 200'000}};
  }
  const std::vector<FixInfo>& fixes() const override { return ranking::ranking_fixes(); }
  // An event emitted at the end needs the relay (0.2 s), ingest, a normalizer and an aggregator,
  // and after a crash or eviction a rebalance (6 s session) and a redelivery: 15 s covers it.
  int64_t min_quiet_tail_ms(const Scenario&) const override { return 15'000; }
  std::unique_ptr<SystemRun> build(World& world, const Scenario& s) const override;

 private:
  void build_stores(World& world, const Scenario& s, Shared& sh) const;
};

void RankingSystem::build_stores(World& world, const Scenario& s, Shared& sh) const {
  sim::storage::SimVfsOptions vo;
  vo.name = "ranking";
  vo.sync_cost_us = s.storage.sync_latency_us;
  vo.torn_writes = s.storage.torn_writes;
  vo.write_error_probability = s.storage.io_error_probability;
  vo.sync_error_probability = s.storage.io_error_probability;
  const uint32_t db_node = world.add_node("db");
  sh.vfs = std::make_shared<sim::storage::SimVfs>(vo, world.stream("ranking.vfs"), [&world] { return world.now_us(); });
  sh.vfs->set_fault_observer([&world](sim::storage::SimIoOp op) {
    world.record_fault(sim::FaultRecord{world.now_us(), sim::FaultKind::kStorageError, "db", "db", "", "", 0,
                                        static_cast<int64_t>(op)});
  });
  sim::storage::SqlServerOptions so;
  so.db_file = sh.db_file;
  so.journal_mode = sim::storage::parse_journal_mode(s.storage.journal_mode).value_or(sim::storage::JournalMode::kWal);
  so.synchronous = sim::storage::parse_synchronous(s.storage.synchronous).value_or(sim::storage::Synchronous::kFull);
  so.schema = ranking::schema_statements();
  so.commit_log = sh.commits;
  world.start(world.add_process(db_node, "db", sim::storage::SqlServer::boot(sh.vfs, so)));
  sh.broker = std::make_shared<sim::log::BrokerServer>();
  sh.broker->broker().create_topic(ranking::kStableTopic, sim::log::TopicConfig{.partitions = 4});
  sh.broker->broker().create_topic(ranking::kKeyedTopic, sim::log::TopicConfig{.partitions = 4});
  world.start(world.add_process(world.add_node("log"), "log", sh.broker->boot_fn()));
}

std::unique_ptr<SystemRun> RankingSystem::build(World& world, const Scenario& s) const {
  auto run = std::make_unique<RankingRun>();
  auto sh = std::make_shared<Shared>();
  run->shared = sh;
  sh->fixes = s.variant == "spec" ? ranking::RankFixes::spec()
                                  : ranking::RankFixes::hardened_without(ranking::ranking_fixes(), s.without);
  sh->topics = static_cast<int>(param(s, "topics", 20));
  sh->sql_timeout_us = param(s, "sql_timeout_ms", 500) * 1000;
  build_stores(world, s, *sh);
  auto later = [&world](Process& p, int64_t us) { world.after(us, [&world, &p] { world.start(p); }); };
  auto add = [&](const std::string& name, std::function<Task<void>(Process&)> boot) -> Process& {
    return world.add_process(world.add_node(name), name, std::move(boot));
  };
  later(add("topics", [sh](Process& p) { return topics_main(p, sh); }), 10'000);
  run->workers = {"topics", "log"};
  std::vector<std::string> ingest;
  for (int i = 1; i <= std::max(1, s.topology.replicas); ++i) {
    const std::string name = "ingest-" + std::to_string(i);
    later(add(name, [sh, name](Process& p) { return ingest_main(p, sh, name); }), 10'000);
    ingest.push_back(name);
  }
  run->replicas = ingest;
  const int workers = std::max(1, s.topology.workers > 0 ? s.topology.workers : 2);
  for (int i = 1; i <= workers; ++i) {
    const std::string norm = "norm-" + std::to_string(i), agg = "agg-" + std::to_string(i);
    later(add(norm, [sh](Process& p) { return normalizer_main(p, sh); }), 10'000);
    later(add(agg, [sh](Process& p) { return aggregator_main(p, sh); }), 10'000);
    run->workers.push_back(norm);
    run->workers.push_back(agg);
  }
  const int64_t end_us = sim::kEpochUs + s.duration_ms * 1000;
  if (const int64_t at = param(s, "corrupt_checkpoint_at_ms", 0); at > 0) {
    world.start(add("chaos", [sh, &world, at](Process& p) { return corrupt_main(p, sh, world, sim::kEpochUs + at * 1000); }));
  }
  const double rate = s.workload.empty() ? 5.0 : s.workload.front().rate_per_s;
  for (const auto& [service, type] : std::vector<std::pair<std::string, std::string>>{
           {"search-service", "SEARCH_EXECUTED"}, {"post-service", "POST_CREATED"}, {"comment-service", "COMMENT_CREATED"}}) {
    ranking::ProducerOptions o;
    o.service = service;
    o.event_type = type;
    o.events_per_s = rate;
    o.stop_at_us = end_us;
    o.topics = sh->topics;
    o.hot_percent = static_cast<int>(param(s, "hot_percent", 0));
    o.alias_percent = static_cast<int>(param(s, "alias_percent", 20));
    o.unmapped_percent = static_cast<int>(param(s, "unmapped_percent", 5));
    o.lowconf_percent = static_cast<int>(param(s, "lowconf_percent", 5));
    o.actors = static_cast<int>(param(s, "actors", 50));
    o.repeat_actor_percent = static_cast<int>(param(s, "repeat_actor_percent", 10));
    o.invalid_percent = static_cast<int>(param(s, "invalid_percent", 5));
    o.replay_percent = static_cast<int>(param(s, "replay_percent", 5));
    o.late_percent = static_cast<int>(param(s, "late_percent", 10));
    o.ingest = ingest;
    const std::string name = "producer-" + service.substr(0, service.find('-'));
    world.start(add(name, [sh, &world, o](Process& p) { return producer_main(p, sh, world.history(), o); }));
    run->clients.push_back(name);
  }
  return run;
}

}  // namespace

const SystemUnderTest& ranking_system() {
  static const RankingSystem system;
  return system;
}

}  // namespace fl
