// Adapter of the hot-search ranking system, part 1 (impl/ranking, seed 004) to the harness.
//
// Topology: the DB ("db", SQLite on SimVfs), the log broker ("log": the pre-normalization log
// stable_events and the keyed log keyed_events, 4 partitions each), the topic service ("topics"),
// `replicas` ingest validators ("ingest-N", role replica), `workers` normalizers ("norm-N") and
// aggregators ("agg-N") (role worker; "topics" and "log" too), and three producers
// ("producer-search|post|comment", role client). The judges get world observations only
// (properties/ranking/run.h).
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "harness/adapter_kit.h"
#include "harness/sql_rows.h"
#include "harness/system.h"
#include "impl/ranking/aggregator.h"
#include "impl/ranking/candidate_cache.h"
#include "impl/ranking/control.h"
#include "impl/ranking/edge.h"
#include "impl/ranking/shadow.h"
#include "impl/ranking/fixes.h"
#include "impl/ranking/merge.h"
#include "impl/ranking/publisher.h"
#include "impl/ranking/reconcile.h"
#include "impl/ranking/risk.h"
#include "impl/ranking/runs.h"
#include "impl/ranking/schema.h"
#include "impl/ranking/services.h"
#include "properties/common/fault_budget.h"
#include "properties/ranking/ranking_behaviours.h"
#include "properties/ranking/checks.h"
#include "sim/log/client.h"
#include "sim/log/server.h"
#include "sim/redis/client.h"
#include "sim/redis/server.h"
#include "sim/storage/sim_vfs.h"
#include "sim/storage/sql_client.h"
#include "sim/storage/sql_server.h"
#include "sim/storage/vfs_reader.h"
#include "sim/world.h"
#include "impl/ports/assert.h"

namespace fl {

namespace {

using sim::Process;
using sim::World;

std::string render(const SqlValue& v);

// Turns each record the SQL server streams into the judges' SqlCommit at once. Each distinct
// SQL text is kept once (SqlText shares it).
class CommitObserver {
 public:
  void observe(const sim::storage::SqlCommitRecord& c) {
    ranking::props::SqlCommit out{c.time_us, c.result->ok(), c.client, {}};
    out.in_doubt =
        c.result->status == SqlStatus::kIoError && c.result->failed_index == static_cast<int>(c.statements().size());
    if (c.result->status == SqlStatus::kConditionFailed || c.result->status == SqlStatus::kConstraint) {
      out.refused_index = c.result->failed_index;
    }
    out.statements.reserve(c.statements().size());
    for (size_t i = 0; i < c.statements().size(); ++i) {
      const SqlStatement& st = c.statements()[i];
      ranking::props::SqlStatementObs o{text_of(st.sql), {}, 0};
      o.params.reserve(st.params.size());
      for (const SqlValue& v : st.params) o.params.push_back(render(v));
      if (c.result->ok() && i < c.result->sets.size()) o.changes = c.result->sets[i].changes;
      out.statements.push_back(std::move(o));
    }
    commits_.push_back(std::move(out));
  }
  // The commits so far, handed over once (to the judges, after the run).
  std::vector<ranking::props::SqlCommit> take() {
    FL_ASSERT(!taken_);
    taken_ = true;
    return std::move(commits_);
  }

 private:
  const ranking::props::SqlText& text_of(const std::string& sql) {
    auto it = texts_.find(sql);
    if (it == texts_.end()) it = texts_.emplace(sql, ranking::props::SqlText(sql)).first;
    return it->second;
  }

  std::vector<ranking::props::SqlCommit> commits_;
  std::map<std::string, ranking::props::SqlText, std::less<>> texts_;
  bool taken_ = false;
};

// Every ranking process's Redis call timeout.
constexpr int64_t kRedisTimeoutUs = 300'000;

struct Shared {
  std::shared_ptr<sim::storage::SimVfs> vfs;
  // The SQL server's executed requests, as the judges see them, kept as they happen (the raw
  // records are dropped: at 4,000 events they were a fifth of a run's memory).
  std::shared_ptr<CommitObserver> commits = std::make_shared<CommitObserver>();
  std::shared_ptr<sim::log::BrokerServer> broker;
  std::string db_file = "ranking.db";
  ranking::RankFixes fixes = ranking::RankFixes::spec();
  ranking::BoardConfig cfg;
  int topics = 20;
  int64_t sql_timeout_us = 500'000;
  // §6.3 (scenario param watermarks: "1"): watermarks, idle partitions, window states, side output.
  ranking::WatermarkOptions wm;
  ranking::props::WatermarkParams wm_params;
  // 004:L158, L177, L179 (scenario params hll, hot_topic_threshold, hot_salts): sketches and salted shards.
  ranking::SketchOptions sketch;
  bool incremental_checkpoints = false;
  // Part 2 (scenario param board: "1"): runs, snapshots, publishing and the Redis cache.
  bool board = false;
  int64_t run_interval_us = 1'500'000, publish_interval_us = 1'000'000, control_interval_us = 0;
  // Scope control (params mapping_switch_percent, window_config_change_percent): the control
  // process also switches mappings and window configurations; runs and snapshots pin both.
  int mapping_switch_percent = 0, window_config_percent = 0;
  bool scope_control = false;
  // Topic merges (params merges, merge_interval_ms, merge_max_scopes; 004:L79-89): process "merger".
  int merges = 0, merge_max_scopes = 3;
  int64_t merge_interval_us = 4'000'000;
  // Faulty actors of the test matrix: coord-2 tampers with candidates (C26), pub-2 writes the Top N
  // item count as the snapshot's counts (C33), a "replay" process tries to publish (F13, C13).
  bool faulty_coordinator = false, faulty_publisher = false;
  int64_t replay_interval_us = 0;
  bool promote_replays = false;    // process "approver" authorizes replays' promotion (004:L325)
  int64_t shadow_interval_us = 0;  // process "shadow": shadow rule runs and comparisons (004:L101, L302)
  bool shadow_mix = false;
  bool candidate_cache = false;       // process "cache": the Redis candidate list and its rebuild (C17, F07)
  int64_t degraded_after_us = 0;      // degraded runs under approved policies after this long COLLECTING (F15)
  int64_t reconcile_interval_us = 0;  // process "recon": layer-3 reconciliations (C19)
  bool reconcile_mix = false;
  bool reconcile_layers = false;  // layers 1 and 2 as well
  // §9.2-§9.3 (scenario param risk: "1"): risk actions (process "risk"), expiry schedulers
  // ("expiry-N"), the denylist pushed to Redis and viewers ("viewer") applying it (C04, C15, C23, C29, F14).
  bool risk = false;
  ranking::RiskOptions risk_options;
  int expiry_workers = 2;
  int64_t viewer_interval_us = 0;
  // C12, F05: the risk service ("risk-svc") the coordinators consult for each entry at the entry score.
  bool risk_service = false;
  int risk_suspicious_mod = 4;
  int64_t risk_svc_delay_us = 0, risk_timeout_us = 1'000'000;
  // C28, F11: the CDN node "edge" between the viewers and the query layer.
  bool cdn = false;
  ranking::EdgeOptions edge;
  bool viewer_shared_cache = false;  // with edge.etag: the viewer keeps one answer for every scope (C05)
  int64_t end_us = 0;                // the workload's end: control transactions stop there
  ranking::props::BoardParams board_params;
  std::shared_ptr<sim::redis::Server> redis;
  std::shared_ptr<const ScriptRegistry> scripts = ranking::ranking_scripts();
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
  co_await ranking::run_normalizer(
      self, self.rpc(), sql, log,
      ranking::NormalizerOptions{.cfg = sh->cfg, .scope_control = sh->scope_control, .merges = sh->merges > 0});
}

// The scopes a merge may cover: the global board, both language boards and a region board.
const std::vector<std::string>& merge_scopes() {
  static const std::vector<std::string> kScopes = {"GLOBAL|ALL|ALL|ALL", "GLOBAL|ALL|ALL|en-US", "GLOBAL|ALL|ALL|zh-CN",
                                                   "REGION|ALL|CN-SH|ALL"};
  return kScopes;
}

Task<void> merger_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  sim::log::LogClient log(self, self.rpc());
  co_await ranking::run_merger(self, sql, log,
                               ranking::MergeOptions{.cfg = sh->cfg,
                                                     .fixes = sh->fixes,
                                                     .scopes = merge_scopes(),
                                                     .topics = sh->topics,
                                                     .max_merges = sh->merges,
                                                     .max_scopes = sh->merge_max_scopes,
                                                     .interval_us = sh->merge_interval_us,
                                                     .stop_at_us = sh->end_us});
}

Task<void> aggregator_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  sim::log::LogClient log(self, self.rpc());
  co_await ranking::run_aggregator(self, sql, log,
                                   ranking::AggregatorOptions{.cfg = sh->cfg,
                                                              .fixes = sh->fixes,
                                                              .out_of_orderness_ms = sh->wm.out_of_orderness_ms,
                                                              .wm = sh->wm,
                                                              .sketch = sh->sketch,
                                                              .incremental_checkpoints = sh->incremental_checkpoints,
                                                              .merges = sh->merges > 0});
}

ranking::RunOptions run_options(const Shared& sh) {
  ranking::RunOptions o;
  o.scopes = sh.board_params.scopes;
  o.candidate_partitions = sh.board_params.candidate_partitions;
  o.top_k = sh.board_params.top_k;
  o.entry_score = sh.board_params.entry_score;
  o.window_type = sh.board_params.window_type;
  o.fixes = sh.fixes;
  o.interval_us = sh.run_interval_us;
  o.scope_control = sh.scope_control;
  o.degraded_after_us = sh.degraded_after_us;
  o.merges = sh.merges > 0;
  return o;
}

Task<void> coordinator_main(Process& self, std::shared_ptr<Shared> sh, bool faulty) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  ranking::RunOptions o = run_options(*sh);
  o.tamper_candidates = faulty;
  o.risk_service = sh->risk_service;
  o.risk_timeout_us = sh->risk_timeout_us;
  co_await ranking::run_coordinator(self, sql, o, sh->risk_service ? &self.rpc() : nullptr);
}

Task<void> topk_main(Process& self, std::shared_ptr<Shared> sh, int index, int workers) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  co_await ranking::run_topk_worker(self, sql, run_options(*sh), index, workers);
}

ranking::PublisherOptions publisher_options(const Shared& sh) {
  ranking::PublisherOptions o;
  o.scopes = sh.board_params.scopes;
  o.top_n = sh.board_params.top_n;
  o.fixes = sh.fixes;
  o.interval_us = sh.publish_interval_us;
  o.completeness_gate = sh.wm.enabled;  // source_status exists with §6.3 only
  o.risk = sh.risk;
  o.scope_control = sh.scope_control;
  return o;
}

Task<void> publisher_main(Process& self, std::shared_ptr<Shared> sh, bool faulty) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = kRedisTimeoutUs, .scripts = sh->scripts});
  ranking::PublisherOptions o = publisher_options(*sh);
  o.counts_from_items = faulty;
  co_await ranking::run_publisher(self, sql, redis, o);
}

Task<void> replay_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = kRedisTimeoutUs, .scripts = sh->scripts});
  ranking::PublisherOptions o = publisher_options(*sh);
  o.interval_us = sh->replay_interval_us;
  o.promotion = sh->promote_replays;
  co_await ranking::run_replay(self, sql, redis, o, sh->end_us);
}

Task<void> shadow_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  ranking::ShadowOptions o;
  o.scopes = sh->board_params.scopes;
  o.interval_us = sh->shadow_interval_us;
  o.stop_at_us = sh->end_us;
  o.top_n = sh->board_params.top_n;
  o.entry_score = sh->board_params.entry_score;
  o.risk = sh->risk;
  o.scope_control = sh->scope_control;
  o.mix = sh->shadow_mix;
  co_await ranking::run_shadow(self, sql, o);
}

Task<void> approver_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  ranking::PublisherOptions o = publisher_options(*sh);
  o.interval_us = sh->replay_interval_us;
  o.promotion = true;
  co_await ranking::run_approver(self, sql, o, sh->end_us);
}

Task<void> cache_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = kRedisTimeoutUs, .scripts = sh->scripts});
  ranking::CandidateCacheOptions o;
  o.scopes = sh->board_params.scopes;
  o.window_type = sh->board_params.window_type;
  o.entry_score = sh->board_params.entry_score;
  o.fixes = sh->fixes;
  co_await ranking::run_candidate_cache(self, sql, redis, o);
}

Task<void> recon_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = kRedisTimeoutUs, .scripts = sh->scripts});
  sim::log::LogClient log(self, self.rpc());
  ranking::ReconcileOptions o{sh->board_params.scopes, sh->reconcile_interval_us, sh->reconcile_mix};
  o.layers = sh->reconcile_layers;
  o.cfg = sh->cfg;
  o.fixes = sh->fixes;
  o.watermarks = sh->wm.enabled;
  co_await ranking::run_reconciler(self, sql, redis, &log, std::move(o));
}

Task<void> control_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  const ranking::ControlOptions o{sh->board_params.scopes, sh->control_interval_us, sh->end_us,
                                  sh->mapping_switch_percent, sh->window_config_percent};
  if (sh->candidate_cache && sh->fixes.has(ranking::RankFix::kCacheContextFence)) {
    sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = kRedisTimeoutUs, .scripts = sh->scripts});
    co_await ranking::run_rule_control(self, sql, o, &redis);
    co_return;
  }
  co_await ranking::run_rule_control(self, sql, o);
}

// The risk options of a process that commits risk transactions: with a CDN it also pushes each
// denylist to the edge.
ranking::RiskOptions risk_options_of(Process& self, const Shared& sh) {
  ranking::RiskOptions o = sh.risk_options;
  if (sh.cdn) o.edge = &self.rpc();
  return o;
}

Task<void> risk_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = kRedisTimeoutUs, .scripts = sh->scripts});
  co_await ranking::run_risk_control(self, sql, redis, risk_options_of(self, *sh));
}

Task<void> expiry_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::storage::SqlClient sql = sql_of(self, *sh);
  sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = kRedisTimeoutUs, .scripts = sh->scripts});
  co_await ranking::run_expiry(self, sql, redis, risk_options_of(self, *sh));
}

Task<void> risk_service_main(Process& self, std::shared_ptr<Shared> sh) {
  co_await ranking::run_risk_service(self, self.rpc(), sh->risk_suspicious_mod, sh->risk_svc_delay_us);
  for (;;) co_await self.clock().sleep_ms(60'000);
}

Task<void> edge_main(Process& self, std::shared_ptr<Shared> sh) {
  sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = kRedisTimeoutUs, .scripts = sh->scripts});
  // RK-DENYLIST-BYPASS covers the CDN's origin fetches too: they are the query layer's answers.
  std::optional<sim::storage::SqlClient> sql;
  if (sh->fixes.has(ranking::RankFix::kDenylistBypass)) sql.emplace(sql_of(self, *sh));
  co_await ranking::run_edge(self, self.rpc(), redis, sh->edge, sql ? &*sql : nullptr);
  for (;;) co_await self.clock().sleep_ms(60'000);  // keeps the clients alive while serving
}

Task<void> viewer_main(Process& self, std::shared_ptr<Shared> sh, Recorder& history) {
  if (sh->cdn) {
    co_await ranking::run_edge_viewer(self, self.rpc(), history, sh->board_params.scopes, sh->viewer_interval_us,
                                      sh->end_us, sh->edge.etag, sh->viewer_shared_cache);
    for (;;) co_await self.clock().sleep_ms(60'000);
  }
  sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = kRedisTimeoutUs, .scripts = sh->scripts});
  sim::storage::SqlClient sql = sql_of(self, *sh);
  const bool bypass = sh->fixes.has(ranking::RankFix::kDenylistBypass);
  co_await ranking::run_viewer(self, redis, bypass ? &sql : nullptr, history, sh->board_params.scopes,
                               sh->viewer_interval_us, sh->end_us);
  for (;;) co_await self.clock().sleep_ms(60'000);  // keeps the client alive
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

// Historical events injected (C10): at `at_us` every record then in the pre-normalization log is
// appended to it again (same payload, so the same eventId, at a new offset), as a replay of the
// log's history would; dedup state that expired lets them count again.
Task<void> replayer_main(Process& self, std::shared_ptr<Shared> sh, int64_t at_us) {
  co_await self.clock().sleep_us(at_us - self.clock().now_us());
  sim::log::LogClient log(self, self.rpc());
  std::unique_ptr<LogProducer> out = log.producer(fl::ProducerOptions{});
  sim::log::Broker& broker = sh->broker->broker();
  std::vector<LogRecord> history;
  for (int32_t p = 0; p < broker.partition_count(ranking::kStableTopic); ++p) {
    const int64_t end = broker.log_end_offset(TopicPartition{ranking::kStableTopic, p});
    for (int64_t offset = 0; offset < end;) {
      sim::log::FetchReply f = broker.fetch(TopicPartition{ranking::kStableTopic, p}, offset, 1000);
      if (f.status != LogStatus::kOk || f.records.empty()) break;
      for (const LogRecord& r : f.records) {
        if (r.offset < end) history.push_back(r);
      }
      offset = f.records.back().offset + 1;
    }
  }
  for (const LogRecord& r : history) {
    while ((co_await out->produce(ranking::kStableTopic, r.key, r.value)).status != LogStatus::kOk) {
      co_await self.clock().sleep_ms(100);
    }
  }
}

// ---- Observations.

std::string render(const SqlValue& v) {
  if (v.type() == SqlValue::Type::kInteger) return std::to_string(v.as_int());
  if (v.type() == SqlValue::Type::kText || v.type() == SqlValue::Type::kBlob) return v.as_text();
  return v.describe();
}

// The sketch rows of the versions and the salted shards, read back (004:L177, L179).
void read_sketch_db(sim::storage::VfsReader& db, ranking::props::SketchObs* out) {
  append_rows(db,
              "SELECT aggregate_key, aggregation_generation, aggregate_version, raw_count, sketch, distinct_estimate, "
              "merged_shards FROM topic_window_metric_sketch ORDER BY aggregate_key, aggregation_generation, "
              "aggregate_version",
              &out->sketches);
  append_rows(db,
              "SELECT shard_key, aggregate_key, salt, aggregation_generation, shard_version, topic_id, scope_id, "
              "window_type, window_start, metric_type, raw_count, sketch, distinct_estimate FROM "
              "topic_window_metric_shard ORDER BY shard_key, aggregation_generation, shard_version",
              &out->shards);
}

// The merge runs, their scope cutovers and the scopes' contexts (004:L79-89), read back.
void read_merge_db(sim::storage::VfsReader& db, ranking::props::MergeObs* m) {
  m->enabled = true;
  m->initial_mapping = ranking::kInitialMapping;
  append_rows(db,
              "SELECT merge_run_id, source_topic, main_topic, mapping_version, scopes, state FROM merge_run ORDER BY "
              "merge_run_id",
              &m->runs);
  for_each_row(db,
               "SELECT merge_run_id, scope_id, expected_ctx_version, activation_epoch, cutover_vector, "
               "shadow_delivered, state FROM merge_scope_cutover ORDER BY merge_run_id, scope_id",
               [&](const DbRow& r) {
                 m->cutovers.push_back(ranking::props::CutoverRow{.merge_run_id = r.text(0),
                                                                  .scope_id = r.text(1),
                                                                  .expected_ctx_version = r.i64(2),
                                                                  .activation_epoch = r.i64(3),
                                                                  .vector = r.text(4),
                                                                  .delivered = r.i64(5) != 0,
                                                                  .state = r.text(6)});
               });
  for_each_row(db, "SELECT scope_id, mapping_version, mapping_activation_epoch FROM ranking_scope_context",
               [&](const DbRow& r) {
                 m->contexts[r.text(0)] = {r.text(1), r.i64(2)};
               });
}

void read_db(Shared& sh, ranking::props::RankingRun* run) {
  sim::storage::VfsReader db(*sh.vfs, sh.db_file, /*quiet=*/true);
  append_rows(db, "SELECT event_id, status FROM outbox ORDER BY id", &run->outbox);
  append_rows(db, "SELECT payload, reason FROM ingest_reject ORDER BY id", &run->rejects);
  append_rows(db, "SELECT source_partition, source_offset FROM candidate_term", &run->candidate_terms);
  append_rows(db,
              "SELECT aggregate_key, topic_id, scope_id, window_type, window_start, metric_type, active_generation, "
              "current_aggregate_version FROM topic_window_metric ORDER BY aggregate_key",
              &run->heads);
  append_rows(db,
              "SELECT aggregate_key, aggregation_generation, aggregate_version, raw_count, effective_value, "
              "suspicious_count, risk_adjusted_value, source_offset_cut_ref, value_digest FROM "
              "topic_window_metric_version",
              &run->versions);
  for_each_row(db, "SELECT keyed_partition, next_offset FROM agg_checkpoint",
               [&](const DbRow& r) { run->checkpoints[r.i32(0)] = r.i64(1); });
  if (sh.sketch.enabled) read_sketch_db(db, &run->sketch);
  if (sh.merges > 0) read_merge_db(db, &run->merges);
  run->db_read = db.ok();
}

// The §6.3 rows read back from the VFS (004:L146-155).
void read_watermark_db(const Shared& sh, ranking::props::WatermarkObs* w) {
  sim::storage::VfsReader db(*sh.vfs, sh.db_file, /*quiet=*/true);
  append_rows(db,
              "SELECT keyed_partition, source, source_partition, idle_start_us, last_event_us, last_source_offset, "
              "idle_end_us, resume_offset, rejoin_us, rejoin_offset, rejoin_watermark, late_count FROM partition_idle "
              "ORDER BY keyed_partition, source, source_partition, idle_start_us",
              &w->idle);
  append_rows(db,
              "SELECT keyed_partition, keyed_offset, window_type, event_id, scope_id, window_start, window_state, "
              "watermark FROM late_side_output ORDER BY keyed_partition, keyed_offset, window_type",
              &w->side);
  append_rows(db,
              "SELECT keyed_partition, window_id, offset_digest, final_versions, checkpoint_ref, reconciliation, "
              "input_watermark FROM window_archive ORDER BY keyed_partition, window_id",
              &w->archive);
  for_each_row(db, "SELECT keyed_partition, source, complete FROM source_status", [&](const DbRow& r) {
    w->complete[{r.i32(0), r.text(1)}] = r.i64(2);
  });
}

// §9.2-§9.3 rows read back: risk actions, the risk columns of contexts and snapshots.
void read_risk_db(sim::storage::VfsReader& db, ranking::props::BoardObs* b) {
  b->risk.enabled = true;
  append_rows(db,
              "SELECT scope_id, topic_id, risk_action_version, action_id, state, effective_from_us, "
              "effective_until_us, risk_epoch FROM risk_action ORDER BY scope_id, topic_id, risk_action_version",
              &b->risk.actions);
  for_each_row(db, "SELECT scope_id, risk_epoch, global_risk_epoch FROM ranking_scope_context", [&](const DbRow& r) {
    b->risk.context_epochs[r.text(0)] = {r.i64(1), r.i64(2)};
  });
  for_each_row(db, "SELECT snapshot_id, risk_epoch, global_risk_epoch FROM ranking_snapshot", [&](const DbRow& r) {
    b->risk.snapshot_epochs[r.text(0)] = {r.i64(1), r.i64(2)};
  });
}

// With scope control: the mapping and window configuration of every context row, run and snapshot.
void read_scope_control_db(sim::storage::VfsReader& db, ranking::props::BoardObs* b) {
  auto fill = [&](const char* table, const char* id, auto& rows, auto id_of) {
    std::map<std::string, std::tuple<std::string, int64_t, std::string>> got;
    const std::string sql = std::string("SELECT ") + id +
                            ", mapping_version, mapping_activation_epoch, window_config_version FROM " + table;
    for_each_row(db, sql.c_str(), [&](const DbRow& r) { got[r.text(0)] = {r.text(1), r.i64(2), r.text(3)}; });
    for (auto& row : rows) {
      auto it = got.find(id_of(row));
      if (it == got.end()) continue;
      std::tie(row.mapping_version, row.mapping_epoch, row.window_config) = it->second;
    }
  };
  fill("ranking_scope_context", "scope_id", b->contexts, [](const auto& r) { return r.scope_id; });
  fill("calculation_run", "run_id", b->runs, [](const auto& r) { return r.run_id; });
  fill("ranking_snapshot", "snapshot_id", b->snapshots, [](const auto& r) { return r.snapshot_id; });
}

// Shadow rule runs (004:L101, L302): the runs, their candidates and comparisons.
void read_shadow_db(sim::storage::VfsReader& db, ranking::props::BoardObs* b) {
  append_rows(db,
              "SELECT shadow_run_id, scope_id, source_run_id, shadow_rule_version, shadow_entry_score, "
              "input_watermark, input_manifest_set_digest, scope_context_version, rule_activation_epoch FROM "
              "shadow_run ORDER BY shadow_run_id",
              &b->shadow_runs);
  append_rows(db, "SELECT shadow_run_id, topic_id, score FROM shadow_candidate ORDER BY shadow_run_id, topic_id",
              &b->shadow_candidates);
  append_rows(db,
              "SELECT shadow_run_id, official_run_id, context_shadow, context_official, status, top_n_overlap FROM "
              "shadow_comparison ORDER BY id",
              &b->shadow_comparisons);
}

// Degraded runs (004:L253): each run's policy and completeness status, and the policies.
void read_degraded_db(sim::storage::VfsReader& db, ranking::props::BoardObs* b) {
  std::map<std::string, std::pair<std::string, std::string>> of;  // run -> (policy, status)
  for_each_row(db, "SELECT run_id, degraded_policy_version, data_completeness_status FROM calculation_run",
               [&](const DbRow& r) {
                 of[r.text(0)] = {r.text(1), r.text(2)};
               });
  for (ranking::props::RunRow& r : b->runs) std::tie(r.degraded_policy, r.completeness) = of[r.run_id];
  append_rows(db,
              "SELECT policy_version, scope_id, included_partitions, excluded_partitions, valid_from_us, "
              "valid_until_us, approval_status, policy_digest FROM degraded_policy ORDER BY policy_version",
              &b->policies);
}

// The rows of the board's optional parts (replays, promotions, reconciliations), when they ran.
void read_board_options_db(const Shared& sh, sim::storage::VfsReader& db, ranking::props::BoardObs* b) {
  if (sh.replay_interval_us > 0) {
    append_rows(db, "SELECT run_id, scope_id, source_run_id FROM replay_run ORDER BY run_id", &b->replay_runs);
  }
  if (sh.shadow_interval_us > 0) read_shadow_db(db, b);
  if (sh.promote_replays) {
    append_rows(db,
                "SELECT auth_id, scope_id, replay_run_id, watermark_from, watermark_to, manifest_digest, rule_epoch, "
                "mapping_epoch, risk_epoch, valid_from_us, valid_until_us, expected_ctx_version, "
                "expected_pointer_version, status FROM promotion_authorization ORDER BY auth_id",
                &b->promotions);
  }
  if (sh.reconcile_interval_us > 0) {
    append_rows(db,
                "SELECT scope_id, snapshot_a, snapshot_b, context_a, context_b, status FROM reconciliation_report "
                "ORDER BY id",
                &b->reconciliations);
  }
  if (sh.reconcile_interval_us > 0 && sh.reconcile_layers) {
    append_rows(db,
                "SELECT layer, scope_id, snapshot_id, run_id, context_a, context_b, status, sample, detail, "
                "read_ends, at_us FROM reconciliation_layer_report ORDER BY id",
                &b->layer_reports, NullInt::kMinusOne);
  }
}

// Part 2's rows read back from the VFS (004:L99-104). A NULL integer of these tables reads -1.
void read_board_db(const Shared& sh, ranking::props::BoardObs* b) {
  constexpr NullInt kNull = NullInt::kMinusOne;
  sim::storage::VfsReader db(*sh.vfs, sh.db_file, /*quiet=*/true);
  for_each_row(
      db, "SELECT cut_id, keyed_partition, next_offset, generation FROM source_offset_cut",
      [&](const DbRow& r) {
        b->offset_cuts[r.text(0)] = {r.i32(1), r.i64(2), r.i64(3)};
      },
      kNull);
  append_rows(db,
              "SELECT run_id, scope_id, status, source_offset_vector, seq, input_watermark, expected_partition_count, "
              "expected_partition_set_digest, partition_result_set_digest, input_manifest_count, "
              "input_manifest_set_digest, candidate_count, candidate_set_digest, scope_context_version, rule_version, "
              "rule_activation_epoch FROM calculation_run ORDER BY scope_id, seq",
              &b->runs, kNull);
  append_rows(db,
              "SELECT run_id, candidate_partition_id, expected_source_cut_ref, status, topk_object_ref, "
              "topk_item_count, topk_digest FROM run_partition_cut ORDER BY run_id, candidate_partition_id",
              &b->cuts, kNull);
  for_each_row(db, "SELECT ref, content FROM partition_topk_object",
               [&](const DbRow& r) { b->topk_objects[r.text(0)] = r.text(1); });
  append_rows(db,
              "SELECT run_id, topic_id, input_manifest_id, manifest_digest, items, score, disposition, reason FROM "
              "run_input_manifest ORDER BY run_id, topic_id",
              &b->manifest, kNull);
  append_rows(db,
              "SELECT scope_id, run_id, topic_id, score, input_manifest_id, candidate_revision FROM run_candidate "
              "ORDER BY run_id, topic_id",
              &b->candidates, kNull);
  append_rows(db,
              "SELECT snapshot_id, scope_id, run_id, status, input_watermark, input_manifest_count, "
              "input_manifest_set_digest, candidate_count, candidate_set_digest, publication_epoch, "
              "scope_context_version, rule_version, rule_activation_epoch FROM ranking_snapshot ORDER BY snapshot_id",
              &b->snapshots, kNull);
  append_rows(db,
              "SELECT snapshot_id, rank_no, topic_id, score, input_manifest_id FROM ranking_snapshot_item ORDER BY "
              "snapshot_id, rank_no",
              &b->items, kNull);
  append_rows(db, "SELECT scope_id, version, rule_version, rule_activation_epoch FROM ranking_scope_context",
              &b->contexts, kNull);
  if (sh.scope_control) read_scope_control_db(db, b);
  if (sh.degraded_after_us > 0) read_degraded_db(db, b);
  if (sh.risk) read_risk_db(db, b);
  read_board_options_db(sh, db, b);
  append_rows(db,
              "SELECT scope_id, snapshot_id, version, publication_epoch, input_watermark FROM "
              "ranking_publish_pointer",
              &b->pointers, kNull);
}

// What the broker served each poll (a log read), as the judges see it.
void read_served(const Shared& sh, ranking::props::BoardObs* b) {
  for (const sim::log::ServedRead& r : sh.broker->served_reads()) {
    ranking::props::ServedReadObs o{r.time_us, r.caller, r.group, {}};
    for (const sim::log::ServedRead::Range& x : r.ranges) {
      o.ranges.push_back(
          ranking::props::ServedReadObs::Range{x.topic == ranking::kKeyedTopic, x.partition, x.from, x.to});
    }
    b->log_reads.push_back(std::move(o));
  }
}

// What the Redis server executed on ranking:* keys and holds at the end; when it lost its data.
void read_board_redis(const Shared& sh, const fl::props::FaultBudget& budget, ranking::props::BoardObs* b) {
  if (!sh.redis) return;
  b->redis_observed = true;
  for (const sim::redis::CommandRecord& c : sh.redis->command_log()) {
    if (c.argv.size() < 2 || c.argv[1].rfind("ranking:", 0) != 0) continue;
    const std::string& cmd = c.argv[0];
    if (cmd != "SET" && cmd != "set" && cmd != "DEL" && cmd != "del" && cmd != "RENAME" && cmd != "rename") continue;
    b->redis_writes.push_back(
        ranking::props::RedisWrite{c.time_us, c.client, c.argv, c.reply.kind != RedisReply::Kind::kError});
  }
  for (const auto& [key, entry] : sh.redis->engine().keyspace().entries()) {
    if (key.rfind("ranking:", 0) != 0) continue;
    if (const std::string* v = std::get_if<std::string>(&entry.value)) b->redis_end[key] = *v;
  }
  for (const auto& [down_us, up_us] : budget.downtimes("redis")) b->redis_losses.push_back(down_us);
}

void read_log(sim::log::Broker& broker, const char* topic, std::vector<ranking::props::LogRecordObs>* out,
              std::map<int32_t, int64_t>* ends) {
  for (int32_t p = 0; p < broker.partition_count(topic); ++p) {
    if (ends) (*ends)[p] = broker.log_end_offset(TopicPartition{topic, p});
    for (int64_t offset = 0;;) {
      sim::log::FetchReply f = broker.fetch(TopicPartition{topic, p}, offset, 1000);
      if (f.status != LogStatus::kOk || f.records.empty()) break;
      for (const LogRecord& r : f.records) {
        out->push_back(ranking::props::LogRecordObs{p, r.offset, r.key, r.value, r.timestamp_us});
      }
      offset = f.records.back().offset + 1;
    }
  }
}

class RankingRun final : public KitRun {
 public:
  std::vector<Verdict> check(World& world, const std::vector<std::string>& properties) override {
    ranking::props::RankingRun run;
    run.config.topics = shared->topics;
    run.end_us = world.now_us();
    for (const sim::Operation& o : world.history().operations()) {
      if (o.op == "view") {
        run.board.risk.views.push_back(ranking::props::ViewOp{o.process, o.args, o.invoke_us, o.complete_us,
                                                              o.completed() ? o.outcome : Outcome::kInfo, o.result});
      }
      if (o.op != "emit") continue;
      run.emits.push_back(ranking::props::EmitOp{o.process, o.args, o.invoke_us,
                                                 o.completed() ? o.outcome : Outcome::kInfo, o.id, o.complete_us});
    }
    read_db(*shared, &run);
    run.commits = shared->commits->take();
    read_log(shared->broker->broker(), ranking::kStableTopic, &run.stable, nullptr);
    read_log(shared->broker->broker(), ranking::kKeyedTopic, &run.keyed, &run.keyed_end);
    run.faults = world.fault_log();
    run.wm.params = shared->wm_params;
    run.sketch.enabled = shared->sketch.enabled;
    run.sketch.salted = shared->sketch.enabled && shared->sketch.hot_threshold > 0;
    if (shared->wm.enabled) read_watermark_db(*shared, &run.wm);
    if (shared->board) {
      run.board.params = shared->board_params;
      read_board_db(*shared, &run.board);
      read_board_redis(*shared, fl::props::FaultBudget(run.faults, run.end_us), &run.board);
      read_served(*shared, &run.board);
    }
    exercised = ranking::props::ranking_behaviours(run);
    return ranking::props::check_ranking(run, properties);
  }
  // What check() saw the run exercise (properties/ranking/ranking_behaviours.h); check() runs first.
  std::vector<std::string> behaviours(World&) override { return exercised; }

  std::shared_ptr<Shared> shared;
  std::vector<std::string> exercised;
};

// The params, each declared once and bound to the option fields it fills.
const BoundParams& declared_params() {
  using ranking::EdgeOptions;
  using ranking::ProducerOptions;
  using ranking::RiskOptions;
  using ranking::SketchOptions;
  using ranking::WatermarkOptions;
  using ranking::props::BoardParams;
  using ranking::props::WatermarkParams;
  constexpr int64_t kHourMs = 3'600'000;
  static const BoundParams params{
      {int_param("topics", "", 1, 10'000, 20, "main topics t_1..t_N (each with aliases aNx, aNy)"), &Shared::topics},
      {int_param("hot_percent", "percent", 0, 100, 0, "events on the hot topic t_1"), &ProducerOptions::hot_percent},
      {int_param("alias_percent", "percent", 0, 100, 20, "events whose hint is an alias"),
       &ProducerOptions::alias_percent},
      {int_param("unmapped_percent", "percent", 0, 100, 5, "events with an unmapped hint"),
       &ProducerOptions::unmapped_percent},
      {int_param("lowconf_percent", "percent", 0, 100, 5, "events with a low-confidence hint"),
       &ProducerOptions::lowconf_percent},
      {int_param("actors", "", 1, 1'000'000, 50, "distinct actors"), &ProducerOptions::actors},
      {int_param("repeat_actor_percent", "percent", 0, 100, 10, "events by the previous actor again (004:L6)"),
       &ProducerOptions::repeat_actor_percent},
      {int_param("invalid_percent", "percent", 0, 100, 5, "events breaking the contract"),
       &ProducerOptions::invalid_percent},
      {int_param("replay_percent", "percent", 0, 100, 5, "events sent again with the same eventId"),
       &ProducerOptions::replay_percent},
      {int_param("late_percent", "percent", 0, 100, 10, "events whose time is up to 20 min old"),
       &ProducerOptions::late_percent},
      {int_param("sql_timeout_ms", "ms", 1, 60'000, 500, "DB client timeout"), as_us(&Shared::sql_timeout_us)},
      {int_param("board", "", 0, 1, 0, "1: part 2 runs, snapshots, publishing and the Redis cache"), &Shared::board},
      {int_param("top_k", "", 1, 1'000, 8, "local Top K per candidate partition"), &BoardParams::top_k},
      {int_param("top_n", "", 1, 1'000, 5, "items per snapshot"), &BoardParams::top_n},
      {choice_param(
           "score_windows", "long", {"long", "medium", "short", "short,medium,long"},
           "the windows score rule v1 sums for a run's local Top K, inside its fixed cut (C21: "
           "multi-window inputs; 004:L214-220); with scope control the context's window configuration decides"),
       &BoardParams::window_type},
      {int_param("entry_score", "", 0, 1'000'000'000, 2, "score below which a manifest entry is REJECTED"),
       &BoardParams::entry_score},
      {int_param("run_interval_ms", "ms", 1, kHourMs, 1500, "how often the coordinator steps each scope's run"),
       as_us(&Shared::run_interval_us)},
      {int_param("publish_interval_ms", "ms", 1, kHourMs, 1000, "mean gap between a publisher's rounds"),
       as_us(&Shared::publish_interval_us)},
      {int_param("control_interval_ms", "ms", 0, kHourMs, 0,
                 "mean gap between rule activations/rollbacks (process control); 0: none"),
       as_us(&Shared::control_interval_us)},
      {int_param("mapping_switch_percent", "percent", 0, 100, 0,
                 "control transactions that switch a scope's topic mapping (map-v1 <-> map-v2, new "
                 "mapping_activation_epoch; 004:L86, L104)"),
       &Shared::mapping_switch_percent},
      {int_param("window_config_change_percent", "percent", 0, 100, 0,
                 "control transactions that change a scope's window configuration (wc-v1 long <-> wc-v2 "
                 "medium windows; 004:L104, L220)"),
       &Shared::window_config_percent},
      {int_param("merges", "", 0, 20, 0,
                 "topic merge runs process merger starts at random moments, each on 1..merge_max_scopes random "
                 "scopes (004:L79-89); 0: none"),
       &Shared::merges},
      {int_param("merge_interval_ms", "ms", 1, kHourMs, 4000, "mean gap between merge runs"),
       as_us(&Shared::merge_interval_us)},
      {int_param("merge_max_scopes", "", 1, 4, 3, "scopes a merge run covers at most"), &Shared::merge_max_scopes},
      {int_param("degraded_after_ms", "ms", 0, kHourMs, 0,
                 "a run COLLECTING this long with partitions missing gets a DEGRADED successor under the "
                 "approved policy excluding exactly them (004:L253, F15); 0: never"),
       as_us(&Shared::degraded_after_us)},
      {int_param("faulty_coordinator", "", 0, 1, 0,
                 "1: coord-2 deletes a candidate and keeps the count with a duplicate before sealing (C26)"),
       &Shared::faulty_coordinator},
      {int_param("faulty_publisher", "", 0, 1, 0,
                 "1: pub-2's snapshots carry the Top N item count as both counts, digests copied (C33)"),
       &Shared::faulty_publisher},
      {int_param("candidate_cache", "", 0, 1, 0,
                 "1: process cache keeps the Redis candidate list and rebuilds it when lost (C17, F07)"),
       &Shared::candidate_cache},
      {int_param("reconcile_interval_ms", "ms", 0, kHourMs, 0,
                 "how often process recon reconciles each scope's served snapshot (layer 3, C19); 0: never"),
       as_us(&Shared::reconcile_interval_us)},
      {int_param("reconcile_mix", "", 0, 1, 0,
                 "1: every other reconciliation mixes in another scope's or an older snapshot (C19)"),
       &Shared::reconcile_mix},
      {int_param("reconcile_layers", "", 0, 1, 0,
                 "1: process recon also reconciles layers 1 (source offsets against the original archive) and 2 "
                 "(sampled window versions recomputed from the keyed log) of the run each DB pointer names "
                 "(004:L393-403); with reconcile_mix every other round first tries the live log end (REFUSED)"),
       &Shared::reconcile_layers},
      {int_param("shadow_interval_ms", "ms", 0, kHourMs, 0,
                 "mean gap between shadow rule runs of process shadow (004:L101, L302); 0: none"),
       as_us(&Shared::shadow_interval_us)},
      {int_param("shadow_mix", "", 0, 1, 0,
                 "1: every other shadow comparison takes the official side from the previous run (must REFUSE)"),
       &Shared::shadow_mix},
      {int_param("promote_replays", "", 0, 1, 0,
                 "1: replays wait READY and publish only under a promotion authorization that process approver "
                 "grants every replay_interval_ms (004:L325)"),
       &Shared::promote_replays},
      {int_param("replay_interval_ms", "ms", 0, kHourMs, 0,
                 "mean gap between unauthorized replay publish attempts (process replay, F13); 0: none"),
       as_us(&Shared::replay_interval_us)},
      {int_param("board_scopes", "", 2, 4, 2,
                 "2: global and zh-CN boards; 4: also a region and a channel board (C04)")},
      {int_param("risk", "", 0, 1, 0, "1: risk actions, epochs, expiry and the emergency denylist (§9.2-§9.3)"),
       &Shared::risk, &BoardParams::risk},
      {int_param("risk_interval_ms", "ms", 1, kHourMs, 1000, "mean gap between block/lift actions (process risk)"),
       as_us(&RiskOptions::interval_us)},
      {int_param("risk_global_percent", "percent", 0, 100, 30, "actions on the explicit global scope (004:L211)"),
       &RiskOptions::global_percent},
      {int_param("risk_lift_percent", "percent", 0, 100, 40, "chance an action on a blocked topic lifts it"),
       &RiskOptions::lift_percent},
      {int_param("risk_topics", "", 1, 1'000, 5, "actions target t_1..t_N"), &RiskOptions::topics},
      {int_param("risk_model_switch_percent", "percent", 0, 100, 0,
                 "control actions that switch a local scope's risk model (risk-m1 <-> risk-m2, 004:L212)"),
       &RiskOptions::model_switch_percent},
      {int_param("risk_local_scope", "", 0, 4, 0, "local actions only in board scope N (1-based); 0: any non-global")},
      {int_param("block_ttl_ms", "ms", 1, kHourMs, 3000, "effective_until - effective_from of a block"),
       as_us(&RiskOptions::block_ttl_us)},
      {int_param("expiry_interval_ms", "ms", 1, kHourMs, 500, "mean gap between an expiry scheduler's rounds"),
       as_us(&RiskOptions::expiry_interval_us)},
      {int_param("expiry_workers", "", 0, 8, 2, "expiry schedulers running at once (duplicates, C29)"),
       &Shared::expiry_workers},
      {int_param("risk_service", "", 0, 1, 0,
                 "1: coordinators check each entry with the risk service risk-svc (C12, F05)"),
       &Shared::risk_service},
      {int_param("risk_suspicious_mod", "", 0, 1'000, 4, "risk model: t_i is suspicious when i % N == 0 (0: none)"),
       &Shared::risk_suspicious_mod, &BoardParams::risk_suspicious_mod},
      {int_param("risk_svc_delay_ms", "ms", 0, kHourMs, 0, "the risk service answers after up to this long"),
       as_us(&Shared::risk_svc_delay_us)},
      {int_param("risk_timeout_ms", "ms", 1, kHourMs, 1000, "a coordinator's risk request timeout"),
       as_us(&Shared::risk_timeout_us)},
      {int_param("max_safe_ttl_ms", "ms", 1, kHourMs, 3000,
                 "the maximum safe TTL: no response shows a topic blocked longer ago (004:L237)"),
       as_us(&BoardParams::max_safe_ttl_us)},
      {int_param("cdn", "", 0, 1, 0,
                 "1: viewers go through the CDN node edge (cache, edge denylist, bypass; C28, F11)"),
       &Shared::cdn},
      {int_param("cdn_ttl_ms", "ms", 1, kHourMs, 5000, "how long the CDN keeps a response (the maximum safe TTL)"),
       as_us(&EdgeOptions::ttl_us)},
      {int_param("purge_fail_percent", "percent", 0, 100, 0, "CDN purges that fail"), &EdgeOptions::purge_fail_percent},
      {int_param("etag", "", 0, 1, 0,
                 "1: CDN viewers make conditional requests with the last answer's validator (004:L279)"),
       &EdgeOptions::etag},
      {int_param("viewer_shared_cache", "", 0, 1, 0,
                 "1: with etag, the viewer keeps one answer for all scopes (a client cache keyed by "
                 "snapshot=latest alone; C05)"),
       &Shared::viewer_shared_cache},
      {int_param("viewer_interval_ms", "ms", 0, kHourMs, 0,
                 "mean gap between query-layer views (process viewer); 0: none"),
       as_us(&Shared::viewer_interval_us)},
      {int_param("watermarks", "", 0, 1, 0,
                 "1: §6.3 watermarks, idle partitions, window states, late side output and purges"),
       &WatermarkOptions::enabled, &WatermarkParams::enabled},
      {int_param("out_of_orderness_ms", "ms", 0, kHourMs, 2000, "configured_out_of_orderness (004:L148)"),
       &WatermarkOptions::out_of_orderness_ms, &WatermarkParams::out_of_orderness_ms},
      {int_param("allowed_lateness_ms", "ms", 0, kHourMs, 20'000, "CLOSED until watermark >= end + this (004:L154)"),
       &WatermarkOptions::allowed_lateness_ms, &WatermarkParams::allowed_lateness_ms},
      {int_param("idle_partition_timeout_ms", "ms", 1, kHourMs, 3000, "idle_partition_timeout (004:L151)"),
       as_us(&WatermarkOptions::idle_timeout_us), as_us(&WatermarkParams::idle_timeout_us)},
      {int_param("max_replay_range_ms", "ms", 0, kHourMs, 30'000, "longest automatic replay (004:L155)"),
       &WatermarkParams::max_replay_range_ms},
      {int_param("redelivery_window_ms", "ms", 0, kHourMs, 6000, "longest message redelivery (004:L155)"),
       &WatermarkParams::redelivery_window_ms},
      {int_param("future_percent", "percent", 0, 100, 0, "events whose time is up to 60 s ahead"),
       &ProducerOptions::future_percent},
      {int_param("stall_source", "", 0, 3, 0, "1 search, 2 post, 3 comment: its relay stops (0: none)")},
      {int_param("stall_from_ms", "ms", 0, 24 * kHourMs, 0, "when the stalled source stops sending")},
      {int_param("stall_ms", "ms", 0, 24 * kHourMs, 0, "how long it sends nothing (its outbox fills)")},
      {int_param("history_replay_at_ms", "ms", 0, 24 * kHourMs, 0,
                 "when the whole pre-normalization log is appended again (C10); 0: never")},
      {int_param("incremental_checkpoints", "", 0, 1, 0,
                 "1: each aggregator flush appends what it changed to agg_checkpoint_delta, the whole state "
                 "is written again only when the deltas outgrow it (004:L319 sets no form; 0: the whole "
                 "state on every flush)"),
       &Shared::incremental_checkpoints},
      {int_param("corrupt_checkpoint_at_ms", "ms", 0, 24 * kHourMs, 0,
                 "when every aggregation checkpoint is corrupted (F06); 0: never")},
      {int_param("hll", "", 0, 1, 0, "1: a HyperLogLog sketch row with every version (004:L177, L179)"),
       &SketchOptions::enabled},
      {int_param("hot_topic_threshold", "", 0, 1'000'000, 0,
                 "with hll: keyed records of a topic+scope after which it is salted (004:L158); 0: never"),
       &SketchOptions::hot_threshold},
      {int_param("hot_salts", "", 1, 64, 4, "salted local shards of a hot topic"), &SketchOptions::salts}};
  return params;
}

class RankingSystem final : public SystemUnderTest {
 public:
  std::string name() const override { return "ranking"; }
  // Every script a ranking run may load (the cache switch and the denylist included).
  std::shared_ptr<const ScriptRegistry> redis_scripts() const override { return ranking::ranking_scripts(true, true); }
  std::string description() const override {
    return "seed 004 part 1: hot-search events through an outbox, contract validation and the pre-normalization "
           "log, topic normalization and scope expansion, into fenced immutable window aggregates";
  }
  std::vector<PropertyInfo> properties() const override { return ranking::props::ranking_properties(); }
  std::vector<std::string> workload_kinds() const override { return {"ranking"}; }
  std::vector<ParamInfo> params() const override { return declared_params().infos(); }
  std::vector<CriticalDuration> critical_durations(const Scenario& s) const override;
  const std::vector<FixInfo>& fixes() const override { return ranking::ranking_fixes(); }
  // An event emitted at the end needs the relay (0.2 s), ingest, a normalizer and an aggregator,
  // and after a crash or eviction a rebalance (6 s session) and a redelivery: 15 s covers it.
  int64_t min_quiet_tail_ms(const Scenario&) const override { return 15'000; }
  std::unique_ptr<SystemRun> build(World& world, const Scenario& s) const override;

 private:
  void build_stores(World& world, const Scenario& s, Shared& sh) const;
  void build_board(World& world, const Scenario& s, std::shared_ptr<Shared> sh, RankingRun& run, int workers) const;
};

// Part 2's processes: Redis, the run coordinators "coord-1", "coord-2", Top K workers "topk-N" and two
// publishers "pub-1", "pub-2" racing for every scope (role worker).
void RankingSystem::build_board(World& world, const Scenario& s, std::shared_ptr<Shared> sh, RankingRun& run,
                                int workers) const {
  sim::redis::ServerOptions ro;
  ro.engine.persistence =
      sim::redis::parse_persistence_mode(s.topology.redis.persistence).value_or(sim::redis::PersistenceMode::kNone);
  ro.engine.snapshot_interval_ms = s.topology.redis.snapshot_interval_ms;
  ro.engine.scripts = sh->scripts;
  sh->redis = std::make_shared<sim::redis::Server>(ro);
  run.redis_servers.push_back(sh->redis.get());
  std::shared_ptr<sim::redis::Server> server = sh->redis;
  world.start(world.add_process(world.add_node("redis"), "redis", [server](Process& p) { return server->run(p); }));
  run.roles.add("redis", "redis");
  auto add = [&](const std::string& name, std::function<Task<void>(Process&)> boot) {
    Process& p = world.add_process(world.add_node(name), name, std::move(boot));
    world.start_after(p, 20'000);
    run.roles.add("worker", name);
  };
  // Two coordinators, so a candidate write of one can race the other's seal (C25).
  for (const char* name : {"coord-1", "coord-2"}) {
    const bool faulty = sh->faulty_coordinator && std::string(name) == "coord-2";
    add(name, [sh, faulty](Process& p) { return coordinator_main(p, sh, faulty); });
  }
  for (int i = 0; i < workers; ++i) {
    add("topk-" + std::to_string(i + 1), [sh, i, workers](Process& p) { return topk_main(p, sh, i, workers); });
  }
  for (const char* name : {"pub-1", "pub-2"}) {
    const bool faulty = sh->faulty_publisher && std::string(name) == "pub-2";
    add(name, [sh, faulty](Process& p) { return publisher_main(p, sh, faulty); });
  }
  if (sh->control_interval_us > 0) add("control", [sh](Process& p) { return control_main(p, sh); });
  if (sh->replay_interval_us > 0) add("replay", [sh](Process& p) { return replay_main(p, sh); });
  if (sh->promote_replays) add("approver", [sh](Process& p) { return approver_main(p, sh); });
  if (sh->shadow_interval_us > 0) add("shadow", [sh](Process& p) { return shadow_main(p, sh); });
  if (sh->candidate_cache) add("cache", [sh](Process& p) { return cache_main(p, sh); });
  if (sh->reconcile_interval_us > 0) add("recon", [sh](Process& p) { return recon_main(p, sh); });
  if (!sh->risk) return;
  add("risk", [sh](Process& p) { return risk_main(p, sh); });
  if (sh->risk_service) add("risk-svc", [sh](Process& p) { return risk_service_main(p, sh); });
  if (sh->cdn) add("edge", [sh](Process& p) { return edge_main(p, sh); });
  for (int i = 1; i <= sh->expiry_workers; ++i) {
    add("expiry-" + std::to_string(i), [sh](Process& p) { return expiry_main(p, sh); });
  }
  if (sh->viewer_interval_us > 0) {
    Process& v = world.add_process(world.add_node("viewer"), "viewer",
                                   [sh, &world](Process& p) { return viewer_main(p, sh, world.history()); });
    world.start_after(v, 20'000);
    run.roles.add("client", "viewer");
  }
}

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
    // The statement's operation is current: the SQL server runs it for its request.
    world.record_fault(sim::FaultRecord{.time_us = world.now_us(),
                                        .kind = sim::FaultKind::kStorageError,
                                        .node = "db",
                                        .process = "db",
                                        .value = static_cast<int64_t>(op),
                                        .cause = world.current_cause()});
  });
  sim::storage::SqlServerOptions so;
  so.db_file = sh.db_file;
  so.journal_mode = sim::storage::parse_journal_mode(s.storage.journal_mode).value_or(sim::storage::JournalMode::kWal);
  so.synchronous = sim::storage::parse_synchronous(s.storage.synchronous).value_or(sim::storage::Synchronous::kFull);
  so.schema = ranking::schema_statements(
      ranking::SchemaOptions{.board = sh.board,
                             .watermarks = sh.wm.enabled,
                             .incremental_checkpoints = sh.incremental_checkpoints,
                             .replay = sh.replay_interval_us > 0,
                             .reconcile = sh.reconcile_interval_us > 0,
                             .reconcile_layers = sh.reconcile_interval_us > 0 && sh.reconcile_layers,
                             .risk = sh.risk,
                             .scope_control = sh.scope_control,
                             .degraded = sh.degraded_after_us > 0,
                             .promotion = sh.promote_replays,
                             .shadow = sh.shadow_interval_us > 0,
                             .merges = sh.merges > 0});
  if (sh.degraded_after_us > 0) {  // the operator's approved policies, in place before the run
    for (std::string& t :
         ranking::degraded_policy_statements(sh.board_params.scopes, sh.board_params.candidate_partitions)) {
      so.schema.push_back(std::move(t));
    }
  }
  if (sh.sketch.enabled) {
    for (std::string& t : ranking::sketch_schema_statements()) so.schema.push_back(std::move(t));
  }
  if (world.judged()) {  // the judges' view of the commits; nothing else reads it
    so.commit_stream = std::make_shared<sim::storage::SqlCommitStream>();
    so.commit_stream->consume = [commits = sh.commits](const sim::storage::SqlCommitRecord& c) { commits->observe(c); };
  }
  world.start(world.add_process(db_node, "db", sim::storage::SqlServer::boot(sh.vfs, so)));
  sh.broker = std::make_shared<sim::log::BrokerServer>();
  sh.broker->broker().create_topic(ranking::kStableTopic, sim::log::TopicConfig{.partitions = 4});
  sh.broker->broker().create_topic(ranking::kKeyedTopic, sim::log::TopicConfig{.partitions = 4});
  // rank-reconciliation judges each layer report on what the broker served its reconciler.
  if (world.judged() && sh.reconcile_interval_us > 0 && sh.reconcile_layers) sh.broker->track_reads();
  world.start(world.add_process(world.add_node("log"), "log", sh.broker->boot_fn()));
}

// §6.3's constants, the same for the aggregators and the judges (scenario params).
void configure_watermarks(const Scenario& s, Shared& sh) {
  declared_params().fill(s.config, sh.wm);
  declared_params().fill(s.config, sh.wm_params);
  // 004:L155: "去重状态的保留期不得短于“最大允许迟到时间、最大自动重放范围、消息最大重投窗口”三者中的最大值"
  sh.wm.retention_ms = sh.wm_params.retention_ms();
}

// §9.2-§9.3's constants (scenario params).
void configure_risk(const Scenario& s, Shared& sh) {
  ranking::RiskOptions& o = sh.risk_options;
  declared_params().fill(s.config, o);
  declared_params().fill(s.config, sh.edge);
  o.scopes = sh.board_params.scopes;
  if (const int64_t i = s.config.i64("risk_local_scope"); i > 0 && i <= static_cast<int64_t>(o.scopes.size())) {
    o.local_scopes = {o.scopes[static_cast<size_t>(i - 1)]};
  }
  o.stop_at_us = sh.end_us;
  o.fixes = sh.fixes;
  o.cache_fence = sh.candidate_cache && sh.fixes.has(ranking::RankFix::kCacheContextFence);
  // Each part runs only with the one it extends: the risk service and the CDN with risk actions,
  // ETags with the CDN, the viewer's shared cache with ETags.
  sh.risk_service = sh.risk_service && sh.risk;
  sh.cdn = sh.cdn && sh.risk;
  sh.edge.etag = sh.edge.etag && sh.cdn;
  sh.viewer_shared_cache = sh.viewer_shared_cache && sh.edge.etag;
  sh.board_params.risk_service = sh.risk_service;
  sh.edge.etag_risk_epochs = sh.fixes.has(ranking::RankFix::kEtagRiskEpochs);
  // A block past effective_until must be EXPIRED within 10 s when expiry schedulers run (004:L213).
  if (sh.expiry_workers > 0) sh.board_params.expiry_bound_us = 10'000'000;
}

// Part 1's durations; with the board its rounds; with risk actions their rounds, TTLs and
// timeouts (the pause points and the swarm's timing-aware draws cluster around each: a process
// stopped for just under or over a block's TTL, or for one publisher round, while the others
// act). Only the parts a file runs: a duration of a part that is off would move that file's
// world for nothing.
std::vector<CriticalDuration> RankingSystem::critical_durations(const Scenario& s) const {
  std::vector<CriticalDuration> out = {
      {"consumer session timeout", 6'000'000}, {"short window", 10'000'000}, {"relay interval", 200'000}};
  const ParamValues& config = s.config;
  if (config.i64("board") != 1) return out;
  auto us = [&config](const char* param) { return config.i64(param) * 1'000; };
  out.push_back({"run interval", us("run_interval_ms")});
  out.push_back({"publish interval", us("publish_interval_ms")});
  if (config.i64("risk") != 1) return out;
  out.push_back({"risk action interval", us("risk_interval_ms")});
  out.push_back({"block TTL", us("block_ttl_ms")});
  out.push_back({"expiry interval", us("expiry_interval_ms")});
  out.push_back({"maximum safe TTL", us("max_safe_ttl_ms")});
  if (config.i64("risk_service") == 1) out.push_back({"risk request timeout", us("risk_timeout_ms")});
  if (config.i64("cdn") == 1) out.push_back({"CDN TTL", us("cdn_ttl_ms")});
  return out;
}

std::unique_ptr<SystemRun> RankingSystem::build(World& world, const Scenario& s) const {
  auto run = std::make_unique<RankingRun>();
  auto sh = std::make_shared<Shared>();
  run->shared = sh;
  const BoundParams& declared = declared_params();
  declared.fill(s.config, *sh);
  declared.fill(s.config, sh->board_params);
  declared.fill(s.config, sh->sketch);
  sh->fixes = s.variant == "spec" ? ranking::RankFixes::spec()
                                  : ranking::RankFixes::hardened_without(ranking::ranking_fixes(), s.without);
  // A publisher's step after its commit: the commit's reply and the snapshot's read, the snapshot's
  // SET and the pointer script, each at most its call's timeout (rank-pointer-cache's end cut).
  sh->board_params.publish_step_us = 2 * sh->sql_timeout_us + 2 * kRedisTimeoutUs;
  sh->board_params.scopes = ranking::RunOptions{}.scopes;
  if (s.config.i64("board_scopes") == 4) {
    // C04: a global, a language, a region and a channel board (004:L16-19, L423).
    sh->board_params.scopes = {"GLOBAL|ALL|ALL|ALL", "GLOBAL|ALL|ALL|zh-CN", "REGION|ALL|CN-SH|ALL",
                               "CHANNEL|technology|CN-SH|zh-CN"};
  }
  // Merges with a board pin the mapping in runs and snapshots, as mapping switches do.
  sh->scope_control = sh->board && (sh->mapping_switch_percent + sh->window_config_percent > 0 || sh->merges > 0);
  sh->board_params.scope_control = sh->scope_control;
  for (const char* wc : {"wc-v1", "wc-v2"}) {
    sh->board_params.window_types[wc] = ranking::window_type_of(wc, sh->board_params.window_type);
  }
  sh->board_params.initial_mapping = ranking::kInitialMapping;
  sh->board_params.initial_window_config = ranking::kInitialWindowConfig;
  // Degraded runs and shadow runs are the board's; promotions authorize replays.
  if (!sh->board) sh->degraded_after_us = sh->shadow_interval_us = 0;
  sh->promote_replays = sh->promote_replays && sh->replay_interval_us > 0;
  sh->end_us = sim::kEpochUs + s.duration_ms * 1000;
  configure_risk(s, *sh);
  sh->scripts = ranking::ranking_scripts(sh->candidate_cache, sh->risk);
  configure_watermarks(s, *sh);
  build_stores(world, s, *sh);
  run->stores.db_vfs = sh->vfs;
  for (const char* store : {"db", "log"}) run->roles.add(store, store);  // "log": the broker
  auto later = [&world](Process& p, int64_t us) { world.start_after(p, us); };
  auto add = [&](const std::string& name, std::function<Task<void>(Process&)> boot) -> Process& {
    return world.add_process(world.add_node(name), name, std::move(boot));
  };
  later(add("topics", [sh](Process& p) { return topics_main(p, sh); }), 10'000);
  for (const char* worker : {"topics", "log"}) run->roles.add("worker", worker);
  std::vector<std::string> ingest;
  for (int i = 1; i <= std::max(1, s.topology.replicas); ++i) {
    const std::string name = "ingest-" + std::to_string(i);
    later(add(name, [sh, name](Process& p) { return ingest_main(p, sh, name); }), 10'000);
    ingest.push_back(name);
  }
  for (const std::string& name : ingest) run->roles.add("replica", name);
  const int workers = std::max(1, s.topology.workers > 0 ? s.topology.workers : 2);
  for (int i = 1; i <= workers; ++i) {
    const std::string norm = "norm-" + std::to_string(i), agg = "agg-" + std::to_string(i);
    later(add(norm, [sh](Process& p) { return normalizer_main(p, sh); }), 10'000);
    later(add(agg, [sh](Process& p) { return aggregator_main(p, sh); }), 10'000);
    run->roles.add("worker", norm);
    run->roles.add("worker", agg);
  }
  if (sh->board) build_board(world, s, sh, *run, workers);
  if (sh->merges > 0) {
    later(add("merger", [sh](Process& p) { return merger_main(p, sh); }), 10'000);
    run->roles.add("worker", "merger");
  }
  const int64_t end_us = sim::kEpochUs + s.duration_ms * 1000;
  if (const int64_t at = s.config.i64("history_replay_at_ms"); at > 0) {
    world.start(add("replayer", [sh, at](Process& p) { return replayer_main(p, sh, sim::kEpochUs + at * 1000); }));
  }
  if (const int64_t at = s.config.i64("corrupt_checkpoint_at_ms"); at > 0) {
    world.start(
        add("chaos", [sh, &world, at](Process& p) { return corrupt_main(p, sh, world, sim::kEpochUs + at * 1000); }));
  }
  const double rate = s.workload.empty() ? 5.0 : s.workload.front().rate_per_s;
  int64_t index = 1;  // stall_source: 1 search, 2 post, 3 comment
  for (const auto& [service, type] :
       std::vector<std::pair<std::string, std::string>>{{"search-service", "SEARCH_EXECUTED"},
                                                        {"post-service", "POST_CREATED"},
                                                        {"comment-service", "COMMENT_CREATED"}}) {
    ranking::ProducerOptions o = declared.filled<ranking::ProducerOptions>(s.config);
    o.service = service;
    o.event_type = type;
    o.events_per_s = rate;
    o.stop_at_us = end_us;
    o.topics = sh->topics;
    if (s.config.i64("stall_source") == index) {
      o.stall_from_us = sim::kEpochUs + s.config.i64("stall_from_ms") * 1000;
      o.stall_until_us = o.stall_from_us + s.config.i64("stall_ms") * 1000;
    }
    ++index;
    o.ingest = ingest;
    const std::string name = "producer-" + service.substr(0, service.find('-'));
    world.start(add(name, [sh, &world, o](Process& p) { return producer_main(p, sh, world.history(), o); }));
    run->roles.add("client", name);
  }
  return run;
}

}  // namespace

const SystemUnderTest& ranking_system() {
  static const RankingSystem system;
  return system;
}

}  // namespace fl
