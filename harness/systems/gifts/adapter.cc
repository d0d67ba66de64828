// Adapter of the live-gifts system (impl/gifts, seed 003) to the harness.
//
// Topology: Redis ("redis"), the DB ("db", SQLite on SimVfs), the log broker ("log", topic
// gift_topic with 4 partitions), `replicas` gift-service processes ("gift-N", role replica),
// `workers` push-service instances ("push-N", role worker; the broker is in that role too),
// `gateways` gateways ("gw-N", role gateway), viewers ("viewer-N") and senders ("sender-N")
// (role client). The judges get world observations only (properties/gifts/run.h).
#include <algorithm>
#include <map>
#include <memory>

#include <absl/strings/ascii.h>

#include "harness/adapter_kit.h"
#include "harness/db_node.h"
#include "harness/redis_node.h"
#include "harness/sql_rows.h"
#include "harness/system.h"
#include "impl/gifts/charge.h"
#include "impl/gifts/client.h"
#include "impl/gifts/fixes.h"
#include "impl/gifts/gateway.h"
#include "impl/gifts/push.h"
#include "impl/gifts/schema.h"
#include "impl/gifts/scripts.h"
#include "properties/gifts/behaviours.h"
#include "properties/gifts/checks.h"
#include "sim/log/client.h"
#include "sim/log/server.h"
#include "sim/redis/client.h"
#include "sim/redis/server.h"
#include "sim/storage/sim_vfs.h"
#include "sim/storage/vfs_reader.h"
#include "sim/storage/sql_client.h"
#include "sim/storage/sql_server.h"
#include "sim/world.h"

namespace fl {

namespace {

using sim::Process;
using sim::World;

constexpr const char* kTopic = "gift_topic";

// Typed and range-checked when the scenario loaded (harness/params.h); the defaults live in
// GiftsSystem::params().
int64_t param(const Scenario& s, const std::string& key) { return s.config.i64(key); }

std::string param_text(const Scenario& s, const std::string& key) { return s.config.text(key); }

// Scenario option consistency: outbox (003:L214-223, default) or txmsg (003:L225-231).
bool txmsg(const Scenario& s) { return param_text(s, "consistency") == "txmsg"; }

struct Shared {
  std::shared_ptr<const ScriptRegistry> scripts = gifts::gifts_scripts();
  std::shared_ptr<sim::redis::Server> redis;
  std::shared_ptr<sim::storage::SimVfs> vfs;
  std::shared_ptr<sim::storage::SqlCommitLog> commits = std::make_shared<sim::storage::SqlCommitLog>();
  std::shared_ptr<sim::log::BrokerServer> broker;
  std::string db_file = "gifts.db";
  gifts::GiftFixes fixes = gifts::GiftFixes::spec();
  int64_t redis_timeout_us = 300'000;
  int64_t sql_timeout_us = 500'000;
};

Task<void> gift_main(Process& self, std::shared_ptr<Shared> sh, gifts::ChargeOptions o) {
  sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = sh->redis_timeout_us, .scripts = sh->scripts});
  sim::storage::SqlClient sql(self, self.rpc(), sim::storage::SqlClientOptions{.timeout_us = sh->sql_timeout_us});
  sim::log::LogClient log(self, self.rpc());
  gifts::GiftService service(self, redis, sql, log, std::move(o));
  co_await service.run(self.rpc());
}

Task<void> push_main(Process& self, std::shared_ptr<Shared> sh, gifts::PushOptions o) {
  sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = sh->redis_timeout_us, .scripts = sh->scripts});
  sim::storage::SqlClient sql(self, self.rpc(), sim::storage::SqlClientOptions{.timeout_us = sh->sql_timeout_us});
  sim::log::LogClient log(self, self.rpc());
  gifts::PushService service(self, self.rpc(), redis, sql, log, std::move(o));
  co_await service.run();
}

Task<void> gateway_main(Process& self, std::shared_ptr<Shared> sh, std::string name) {
  sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = sh->redis_timeout_us, .scripts = sh->scripts});
  sim::storage::SqlClient sql(self, self.rpc(), sim::storage::SqlClientOptions{.timeout_us = sh->sql_timeout_us});
  gifts::Gateway gateway(self, self.rpc(), redis, sql, std::move(name), sh->fixes);
  co_await gateway.run();
}

// ---- Observations.

std::string render(const SqlValue& v) {
  if (v.type() == SqlValue::Type::kInteger) return std::to_string(v.as_int());
  if (v.type() == SqlValue::Type::kText || v.type() == SqlValue::Type::kBlob) return v.as_text();
  return v.describe();
}

// The DB's final state read back from its VFS (the run is over: storage faults off).
void read_db(Shared& sh, gifts::props::GiftsRun* run) {
  sim::storage::VfsReader db(*sh.vfs, sh.db_file, /*quiet=*/true);
  for_each_row(db, "SELECT user_id, balance FROM wallet", [&](const DbRow& r) { run->balances[r.i64(0)] = r.i64(1); });
  append_rows(
      db, "SELECT id, user_id, request_id, room_id, gift_id, gift_count, amount, msg_id FROM gift_order ORDER BY id",
      &run->orders);
  append_rows(db, "SELECT msg_id, status FROM outbox_message ORDER BY id", &run->outbox);
  run->db_read = db.ok();
}

void read_logs(World& world, Shared& sh, gifts::props::GiftsRun* run) {
  for (const sim::storage::SqlCommitRecord& c : *sh.commits) {
    gifts::props::SqlCommit out{c.time_us, c.result->ok(), c.client, {}, c.cause};
    for (const SqlStatement& s : c.statements()) {
      gifts::props::SqlStatementObs o{s.sql, {}};
      for (const SqlValue& v : s.params) o.params.push_back(render(v));
      out.statements.push_back(std::move(o));
    }
    run->commits.push_back(std::move(out));
  }
  for (const sim::redis::CommandRecord& c : sh.redis->command_log()) {
    gifts::props::RedisCommand out{c.time_us, c.node_ms, c.client, c.incarnation, c.depth, c.argv};
    // Command names are case-insensitive (the scripts' Lua writes 'hincrby', a client HINCRBY).
    if (!out.argv.empty()) out.argv[0] = absl::AsciiStrToUpper(out.argv[0]);
    run->redis.push_back(std::move(out));
  }
  sim::log::Broker& broker = sh.broker->broker();
  for (int32_t p = 0; p < broker.partition_count(kTopic); ++p) {
    for (int64_t offset = 0;;) {
      sim::log::FetchReply f = broker.fetch(TopicPartition{kTopic, p}, offset, 1000);
      if (f.status != LogStatus::kOk || f.records.empty()) break;
      for (const LogRecord& r : f.records) {
        // World time of the append: the record's own stamp is the log node's clock, which the
        // swarm's clock jumps skew (explore-hardened seed 15699: a jump back froze it at 2 s).
        auto at = sh.broker->append_times().find({r.topic, r.partition, r.offset});
        const int64_t t = at == sh.broker->append_times().end() ? r.timestamp_us : at->second;
        run->log.push_back(gifts::props::LogRecordObs{r.key, r.value, t});
      }
      offset = f.records.back().offset + 1;
    }
  }
  run->faults = world.fault_log();
}

class GiftsRun final : public KitRun {
 public:
  std::vector<Verdict> check(World& world, const std::vector<std::string>& properties) override {
    gifts::props::GiftsRun run;
    run.params = params;
    run.end_us = world.now_us();
    for (const sim::Operation& o : world.history().operations()) {
      run.history.push_back(gifts::props::HistoryOp{o.id, o.process, o.op, o.args, o.invoke_us,
                                                    o.completed() ? o.complete_us : -1,
                                                    o.completed() ? o.outcome : Outcome::kInfo, o.result});
    }
    read_db(*shared, &run);
    read_logs(world, *shared, &run);
    run.services = roles.of("replica");
    for (const char* role : {"worker", "gateway"}) {
      run.services.insert(run.services.end(), roles.of(role).begin(), roles.of(role).end());
    }
    for (const char* p : {"redis", "db"}) run.services.push_back(p);
    run.gateways = roles.of("gateway");
    for (const std::string& w : roles.of("worker")) {
      if (w != "log") run.pushers.push_back(w);
    }
    run.charge_path = roles.of("replica");
    for (const char* p : {"log", "redis", "db"}) run.charge_path.push_back(p);
    exercised = gifts::props::gifts_behaviours(run);
    return gifts::props::check_gifts(run, properties);
  }
  // What check() saw the run exercise (properties/gifts/behaviours.h); check() runs first.
  std::vector<std::string> behaviours(World&) override { return exercised; }

  std::shared_ptr<Shared> shared;
  gifts::props::GiftsParams params;
  std::vector<std::string> exercised;
};

// The params, each declared once and bound to the option fields it fills.
const BoundParams& declared_params() {
  static const BoundParams params{
      {int_param("rooms", "", 1, 1000, 2, "live rooms")},
      {int_param("viewers_per_room", "", 0, 10'000, 3, "viewers per room")},
      {int_param("senders", "", 1, 10'000, 2, "sending users")},
      {int_param("gateways", "", 1, 100, 2, "WebSocket gateways")},
      {int_param("initial_balance", "coins", 0, 1'000'000'000'000, 100000, "every wallet's starting balance"),
       &gifts::props::GiftsParams::initial_balance},
      {int_param("burst_percent", "percent", 0, 100, 30, "actions that are bursts of 10 clicks in 3 s (003:L105)"),
       &gifts::SenderOptions::burst_percent},
      {int_param("burst_min_clicks", "", 1, 10, 10, "the fewest clicks of a burst (up to 10)"),
       &gifts::SenderOptions::burst_min_clicks},
      {int_param("double_tap_percent", "percent", 0, 100, 20, "actions that are double taps (003:L41)"),
       &gifts::SenderOptions::double_tap_percent},
      {int_param("max_retries", "", 0, 100, 2, "retries of a timed-out click, same requestId (003:L43)"),
       &gifts::SenderOptions::max_retries},
      {int_param("long_retry_percent", "percent", 0, 100, 0, "retries delayed past the 10 s dedup TTL"),
       &gifts::SenderOptions::long_retry_percent},
      {int_param("client_timeout_ms", "ms", 1, 600'000, 1000, "sender -> gift service timeout"),
       as_us(&gifts::SenderOptions::timeout_us)},
      {int_param("viewer_reconnects_per_min", "per min", 0, 600, 0, "voluntary viewer reconnects"),
       &gifts::ViewerOptions::reconnects_per_min},
      {int_param("viewer_switches_per_min", "per min", 0, 600, 0, "viewer room switches (003:L193)"),
       &gifts::ViewerOptions::switches_per_min},
      {int_param("client_link_drop_percent", "percent", 0, 100, 0, "gateway -> viewer message loss"),
       as_fraction(&sim::LinkOptions::drop_probability)},
      {int_param("client_link_reorder_percent", "percent", 0, 100, 0, "gateway -> viewer reordering"),
       as_fraction(&sim::LinkOptions::reorder_probability)},
      {int_param("t_gap_ms", "ms", 1, 600'000, 5000, "GIFT-9's bound on a stalled message"),
       &gifts::props::GiftsParams::t_gap_ms},
      {int_param("redis_timeout_ms", "ms", 1, 600'000, 300, "Redis client timeout"), as_us(&Shared::redis_timeout_us)},
      {int_param("sql_timeout_ms", "ms", 1, 600'000, 500, "DB client timeout"), as_us(&Shared::sql_timeout_us)},
      {choice_param("consistency", "outbox", {"outbox", "txmsg"},
                    "outbox (003:L214-223) or txmsg: half messages with check-back (003:L225-231)")},
      {choice_param(
          "lock", "redisson", {"redisson", "redisson-watchdog", "lua"},
          "combo lock: redisson (RLock tryLock(100 ms, 3 s), 003:L114-118), redisson-watchdog (tryLock(100 ms) "
          "without a lease: Redisson's watchdog renews a 30 s lease every 10 s while the holder lives) or lua "
          "(the hand-written script, 003:L147-152)")}};
  return params;
}

class GiftsSystem final : public SystemUnderTest {
 public:
  std::string name() const override { return "gifts"; }
  std::shared_ptr<const ScriptRegistry> redis_scripts() const override { return gifts::gifts_scripts(); }
  std::string description() const override {
    return "seed 003: live-room gifts — dedup and charge with an outbox, a log, push instances with a combo lock, "
           "gateways and clients that reorder";
  }
  std::vector<PropertyInfo> properties() const override { return gifts::props::gifts_properties(); }
  std::vector<std::string> workload_kinds() const override { return {"gifts"}; }
  std::vector<ParamInfo> params() const override { return declared_params().infos(); }
  std::vector<CriticalDuration> critical_durations(const Scenario& s) const override {
    std::vector<CriticalDuration> out = {
        {"dedup TTL (003:L54)", 10'000'000},      {"combo lock lease (003:L118)", 3'000'000},
        {"combo lock wait (003:L118)", 100'000},  {"message expiry (003:L200)", 10'000'000},
        {"push dedup TTL (003:L93)", 60'000'000}, {"combo window (003:L105)", 3'000'000},
        {"T_gap", param(s, "t_gap_ms") * 1000}};
    // RocketMQ checks a half back once it is older than transactionTimeout (6 s).
    if (txmsg(s)) out.push_back({"half message check timeout", 6'000'000});
    return out;
  }
  const std::vector<FixInfo>& fixes() const override { return gifts::gifts_fixes(); }
  // A gift charged at the end of the workload needs: the outbox poller (1 s), a redelivery after
  // a consumer eviction (6 s session), the 3 s window, a ready-set lease (2 s), the pushes, and
  // T_gap on the client: 20 s covers it with room.
  int64_t min_quiet_tail_ms(const Scenario& s) const override { return 15'000 + param(s, "t_gap_ms"); }
  std::unique_ptr<SystemRun> build(World& world, const Scenario& s) const override;

 private:
  void build_stores(World& world, const Scenario& s, Shared& sh, const std::vector<int64_t>& users) const;
};

void GiftsSystem::build_stores(World& world, const Scenario& s, Shared& sh, const std::vector<int64_t>& users) const {
  sim::redis::ServerOptions ro;
  ro.engine.persistence =
      sim::redis::parse_persistence_mode(s.topology.redis.persistence).value_or(sim::redis::PersistenceMode::kNone);
  ro.engine.snapshot_interval_ms = s.topology.redis.snapshot_interval_ms;
  ro.engine.scripts = sh.scripts;
  apply_redis_memory(s.topology.redis, ro.engine);
  sh.redis = std::make_shared<sim::redis::Server>(ro);
  {
    std::shared_ptr<sim::redis::Server> server = sh.redis;
    world.start(world.add_process(world.add_node("redis"), "redis", [server](Process& p) { return server->run(p); }));
  }
  const DbNode db_disk = add_db_node(world, s.storage, "gifts", "gifts.vfs");
  const uint32_t db_node = db_disk.node;
  sh.vfs = db_disk.vfs;
  sim::storage::SqlServerOptions so = sql_server_options(s.storage);
  so.db_file = sh.db_file;
  so.schema = gifts::schema_statements(txmsg(s), sh.fixes.has(gifts::GiftFix::kPushLedger));
  const int64_t balance = param(s, "initial_balance");
  for (int64_t u : users) {
    so.schema.push_back("INSERT OR IGNORE INTO wallet(user_id, balance) VALUES (" + std::to_string(u) + ", " +
                        std::to_string(balance) + ")");
  }
  so.commit_log = sh.commits;
  world.start(world.add_process(db_node, "db", sim::storage::SqlServer::boot(sh.vfs, so)));
  sim::log::BrokerConfig bc;
  // RocketMQ's transactionTimeOut (6 s) and transactionCheckMax (15) as they default; its 60 s
  // check interval shortened to 2 s so that check-backs happen within a run (docs/systems/gifts.md).
  bc.half_check_interval_us = 2'000'000;
  sh.broker = std::make_shared<sim::log::BrokerServer>(bc);
  sh.broker->broker().create_topic(kTopic, sim::log::TopicConfig{.partitions = 4});
  world.start(world.add_process(world.add_node("log"), "log", sh.broker->boot_fn()));
}

std::unique_ptr<SystemRun> GiftsSystem::build(World& world, const Scenario& s) const {
  auto run = std::make_unique<GiftsRun>();
  auto sh = std::make_shared<Shared>();
  run->shared = sh;
  sh->fixes = s.variant == "spec" ? gifts::GiftFixes::spec()
                                  : gifts::GiftFixes::hardened_without(gifts::gifts_fixes(), s.without);
  const BoundParams& declared = declared_params();
  declared.fill(s.config, *sh);
  const int64_t senders = param(s, "senders");
  std::vector<int64_t> users;
  for (int64_t i = 1; i <= senders; ++i) users.push_back(i);
  build_stores(world, s, *sh, users);
  run->redis_servers.push_back(sh->redis.get());
  run->stores.db_vfs = sh->vfs;
  for (const char* store : {"redis", "db", "log"}) run->roles.add(store, store);  // "log": the broker
  declared.fill(s.config, run->params);
  run->params.txmsg = txmsg(s);
  run->params.consumer_session_us = gifts::PushOptions{}.session_timeout_us;  // the same for every variant
  const bool lua_lock = param_text(s, "lock") == "lua";
  const bool watchdog = param_text(s, "lock") == "redisson-watchdog";

  // Services start 10 ms after the stores, clients later (1 s for senders).
  auto later = [&world](Process& p, int64_t us) { world.start_after(p, us); };
  for (int i = 1; i <= std::max(1, s.topology.replicas); ++i) {
    const std::string name = "gift-" + std::to_string(i);
    gifts::ChargeOptions o;
    o.fixes = sh->fixes;
    o.txmsg = run->params.txmsg;
    later(world.add_process(world.add_node(name), name, [sh, o](Process& p) { return gift_main(p, sh, o); }), 10'000);
    run->roles.add("replica", name);
  }
  for (int i = 1; i <= std::max(1, s.topology.workers > 0 ? s.topology.workers : 2); ++i) {
    const std::string name = "push-" + std::to_string(i);
    gifts::PushOptions o;
    o.fixes = sh->fixes;
    o.lock.lua = lua_lock;
    o.lock.watchdog = watchdog;
    later(world.add_process(world.add_node(name), name, [sh, o](Process& p) { return push_main(p, sh, o); }), 10'000);
    run->roles.add("worker", name);
  }
  run->roles.add("worker", "log");
  for (int i = 1; i <= param(s, "gateways"); ++i) {
    const std::string name = "gw-" + std::to_string(i);
    later(world.add_process(world.add_node(name), name, [sh, name](Process& p) { return gateway_main(p, sh, name); }),
          10'000);
    run->roles.add("gateway", name);
  }
  const std::vector<std::string>& gateways = run->roles.of("gateway");
  sim::LinkOptions to_viewer = declared.filled<sim::LinkOptions>(s.config);
  to_viewer.fifo = to_viewer.reorder_probability == 0;
  const int64_t end_us = sim::kEpochUs + s.duration_ms * 1000;
  int viewer = 0;
  for (int64_t r = 1; r <= param(s, "rooms"); ++r) {
    for (int64_t k = 0; k < param(s, "viewers_per_room"); ++k) {
      const std::string name = "viewer-" + std::to_string(++viewer);
      gifts::ViewerOptions o = declared.filled<gifts::ViewerOptions>(s.config);
      o.user = 1000 + viewer;
      o.room = "room_" + std::to_string(r);
      o.gateways = gateways;
      o.first_gateway = static_cast<size_t>(viewer) % gateways.size();
      o.player.fixes = sh->fixes;
      for (int64_t q = 1; q <= param(s, "rooms"); ++q) o.rooms.push_back("room_" + std::to_string(q));
      o.stop_reconnects_at_us = end_us;
      o.start_delay_us = 100'000;
      const uint32_t node = world.add_node(name);
      for (const std::string& gw : gateways) world.network().set_link(*world.find_node(gw), node, to_viewer);
      world.start(world.add_process(
          node, name, [&world, o](Process& p) { return gifts::run_viewer(p, p.rpc(), world.history(), o); }));
      run->roles.add("client", name);
    }
  }
  const double rate = s.workload.empty() ? 0.5 : s.workload.front().rate_per_s;
  for (int64_t i = 1; i <= senders; ++i) {
    const std::string name = "sender-" + std::to_string(i);
    gifts::SenderOptions o = declared.filled<gifts::SenderOptions>(s.config);
    o.user = i;
    for (int64_t r = 1; r <= param(s, "rooms"); ++r) o.rooms.push_back("room_" + std::to_string(r));
    o.gifts = {"gift_aurora_town", "gift_cloud_whale"};
    o.fixes = sh->fixes;
    o.actions_per_s = rate;
    o.stop_at_us = end_us;
    world.start(world.add_process(world.add_node(name), name, [&world, o](Process& p) {
      return gifts::run_sender(p, p.rpc(), world.history(), o);
    }));
    run->roles.add("client", name);
  }
  return run;
}

}  // namespace

const SystemUnderTest& gifts_system() {
  static const GiftsSystem system;
  return system;
}

}  // namespace fl
