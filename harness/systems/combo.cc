// Adapter of the combo system (impl/combo, seed 000) to the harness: topology, workload, probe,
// final-state capture and the COMBO-1..16 checkers (properties/combo).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "harness/system.h"
#include "impl/combo/frontend_process.h"
#include "impl/combo/service.h"
#include "properties/combo/combo_checks.h"
#include "sim/redis/client.h"
#include "sim/redis/server.h"
#include "sim/storage/sim_vfs.h"
#include "sim/storage/sql_client.h"
#include "sim/storage/sql_server.h"
#include "sim/world.h"

namespace fl {

namespace {

using sim::Process;
using sim::World;
constexpr int64_t kUsPerMs = 1000;

std::string param(const Scenario& s, const std::string& key, const std::string& fallback) {
  for (const WorkloadSpec& w : s.workload) {
    auto it = w.params.find(key);
    if (it != w.params.end()) return it->second;
  }
  auto it = s.params.find(key);
  return it == s.params.end() ? fallback : it->second;
}
int64_t iparam(const Scenario& s, const std::string& key, int64_t fallback) {
  return std::stoll(param(s, key, std::to_string(fallback)));
}
double dparam(const Scenario& s, const std::string& key, double fallback) {
  return std::stod(param(s, key, std::to_string(fallback)));
}

// The probe: stamps world time on every observation.
class ComboProbe final : public combo::Probe {
 public:
  explicit ComboProbe(World& w) : world_(w) {}
  uint64_t mark() override {
    marks_.push_back(world_.now_us());
    return marks_.size() - 1;
  }
  int64_t time_of(uint64_t mark) const { return mark < marks_.size() ? marks_[mark] : 0; }
  void redis_degraded(const std::string&, int64_t pid, const std::string& what) override { degraded.emplace_back(pid, what); }
  void published(const combo::PublishEvent& e) override {
    combo::PublishObs o;
    o.event = e;
    o.begin_us = time_of(e.begin_mark);
    o.end_us = world_.now_us();
    publishes.push_back(std::move(o));
  }
  void gateway_received(const std::string&, const std::string& payload) override { received.insert(payload); }
  void ui_changed(const combo::UiEvent& e) override { ui.push_back({e, world_.now_us()}); }
  void poll_returned(const combo::PollEvent& e) override { polls.push_back({e, time_of(e.begin_mark), world_.now_us()}); }

  std::vector<combo::PublishObs> publishes;
  std::set<std::string> received;
  std::vector<std::pair<int64_t, std::string>> degraded;
  std::vector<combo::UiObs> ui;
  std::vector<combo::PollObs> polls;

 private:
  World& world_;
  std::vector<int64_t> marks_;
};

class ComboRunImpl final : public SystemRun {
 public:
  std::vector<Verdict> check(World& world, const std::vector<std::string>& properties) override;
  std::vector<std::string> fault_targets(const std::string& role) const override {
    if (role == "replica" || role == "worker") return replicas;
    if (role == "gateway") return {"gateway"};
    if (role == "client") return clients;
    if (role == "redis") return {"redis"};
    if (role == "db") return {"db"};
    return {};
  }
  combo::ComboRun collect(World& world);
  void sample_ttls(World& world);
  void sample_unacked(int64_t now_ms);

  combo::Variant variant = combo::Variant::kSpec;
  bool faults = false;
  std::unique_ptr<sim::redis::Server> redis;
  std::shared_ptr<sim::storage::SimVfs> vfs;
  std::unique_ptr<ComboProbe> probe;
  std::vector<std::string> replicas, clients;
  bool rows_known = false;
  std::vector<combo::RowObs> rows;
  std::vector<combo::RedisKeyObs> no_ttl_samples;
  std::vector<std::pair<int64_t, int64_t>> outages;
  uint64_t last_boots = 1;
  // Every PUBLISH Redis executed (world time): what was published, whatever reached a subscriber.
  struct RedisPublish {
    std::string channel, payload;
    int64_t time_us = 0;
  };
  std::vector<RedisPublish> redis_publishes;
  int64_t unacked_samples_taken = 0;
  std::vector<combo::UnackedObs> unacked_shared;
  int64_t redis_world_us = 0;  // world time of the sample being taken
  int64_t stream_len_max = 0;  // longest the stream was at a sample (COMBO-U3)
  int64_t stream_maxlen = 0;   // the configured XADD MAXLEN ~
};

int64_t redis_now_ms(World& world) {
  Process* p = world.find_process("redis");
  return p ? p->now_us() / kUsPerMs : world.now_us() / kUsPerMs;
}

void ComboRunImpl::sample_ttls(World& world) {
  Process* rp = world.find_process("redis");
  const bool down = rp == nullptr || rp->state() != sim::ProcessState::kRunning || redis->stats().boots != last_boots;
  last_boots = redis->stats().boots;
  if (down) {
    if (!outages.empty() && outages.back().second >= world.now_us() - 200'000) {
      outages.back().second = world.now_us();
    } else {
      outages.emplace_back(world.now_us() - 100'000, world.now_us());
    }
  }
  const int64_t now_ms = redis_now_ms(world);
  redis_world_us = world.now_us();
  const auto& expires = redis->engine().keyspace().expires();
  for (const auto& [key, entry] : redis->engine().keyspace().entries()) {
    if (key.rfind("combo:agg", 0) != 0 || expires.count(key)) continue;
    if (no_ttl_samples.size() < 50) no_ttl_samples.push_back({key, -1, world.now_us()});
  }
  if (!down) sample_unacked(now_ms);  // a dead node's memory is no instant of Redis
}

// COMBO-6: "at any instant, each key has at most one unacknowledged stream entry for its current
// window". Read from the node's memory: the entries pending in the group or not yet delivered,
// each mapped to the window state it will process (the implementation's key scheme: spec reads
// combo:agg:{user}:{item_type}, hardened combo:agg:{A}:{user}:{item_id}:{window}); a live state
// with two or more such entries is recorded.
void ComboRunImpl::sample_unacked(int64_t now_ms) {
  ++unacked_samples_taken;
  const auto& entries = redis->engine().keyspace().entries();
  const auto& expires = redis->engine().keyspace().expires();
  auto live = [&](const std::string& key) {
    if (!entries.count(key)) return false;
    auto e = expires.find(key);
    return e == expires.end() || e->second > now_ms;
  };
  auto it = entries.find(combo::kStreamKey);
  if (it == entries.end() || it->second.type() != sim::redis::ValueType::kStream) return;
  const auto& stream = std::get<sim::redis::Stream>(it->second.value);
  stream_len_max = std::max<int64_t>(stream_len_max, static_cast<int64_t>(stream.entries.size()));
  auto g = stream.groups.find(combo::kConsumerGroup);
  std::map<std::string, std::vector<std::string>> by_state;
  for (const auto& [id, flat] : stream.entries) {
    const bool unacked = g == stream.groups.end() || g->second.pel.count(id) > 0 || g->second.last_delivered < id;
    if (!unacked) continue;
    std::map<std::string, std::string> f;
    for (size_t i = 0; i + 1 < flat.size(); i += 2) f[flat[i]] = flat[i + 1];
    const std::string state = variant == combo::Variant::kHardened
                                  ? "combo:agg:" + f["activity_id"] + ":" + f["user_id"] + ":" + f["item_id"] + ":" + f["window_id"]
                                  : "combo:agg:" + f["user_id"] + ":" + f["item_type"];
    if (live(state)) by_state[state].push_back(id.str());
  }
  for (auto& [state, ids] : by_state) {
    if (ids.size() < 2 || unacked_shared.size() >= 50) continue;
    unacked_shared.push_back({redis_world_us, state, ids});
  }
}

combo::ComboRun ComboRunImpl::collect(World& world) {
  combo::ComboRun run;
  run.variant = variant;
  // A crash point (faultline sweep --crash-points, or a saved crash_point:) is a fault too: one
  // service process crashes at one effect and restarts 1 s later.
  run.faults_injected = faults || world.crash_point_fired();
  run.single_crash = !faults && world.crash_point_fired();
  run.redis_lost_data = redis->stats().boots > 1;
  run.end_us = world.now_us();
  for (const sim::Operation& op : world.history().operations()) {
    if (op.op == "purchase") {
      combo::PurchaseOp p;
      std::istringstream in(op.args);
      std::string word;
      while (in >> word) {
        if (word.rfind("ref=", 0) == 0) p.ref = word.substr(4);
        if (word.rfind("a=", 0) == 0) p.activity = std::stoll(word.substr(2));
        if (word.rfind("u=", 0) == 0) p.user = std::stoll(word.substr(2));
        if (word.rfind("items=", 0) == 0) p.lines = 1 + std::count(word.begin(), word.end(), ',');
      }
      p.invoke_us = op.invoke_us;
      p.complete_us = op.complete_us;
      p.result = !op.completed() || op.outcome == Outcome::kInfo ? combo::PurchaseOp::Result::kInfo
                 : op.outcome == Outcome::kOk                    ? combo::PurchaseOp::Result::kOk
                                                                 : combo::PurchaseOp::Result::kFail;
      p.alerted = op.result.find("alerted") != std::string::npos;
      run.ops.push_back(p);
    } else if (op.op == "ranking" && op.completed() && op.outcome == Outcome::kOk) {
      combo::RankingObs r;
      r.activity = std::stoll(op.args.substr(op.args.find('=') + 1));
      r.time_us = op.complete_us;
      std::istringstream in(op.result);
      std::string word;
      in >> word;  // "ranking"
      while (in >> word) {
        const size_t colon = word.find(':');
        r.totals.emplace_back(std::stoll(word.substr(0, colon)), std::stoll(word.substr(colon + 1)));
      }
      run.rankings.push_back(r);
    }
  }
  run.rows_known = rows_known;
  run.rows = rows;
  // The published records are the PUBLISH commands Redis executed (COMBO-2: "published on
  // act:{A}:contributions"), observed at the server: a publish whose publisher crashed before the
  // reply and whose push the gateway missed (pub/sub is at most once) still happened. Each is
  // joined with the publisher's own report (stream entry, window) when there is one; a report
  // with no executed PUBLISH published nothing.
  std::vector<bool> used(probe->publishes.size(), false);
  for (const RedisPublish& rp : redis_publishes) {
    combo::PublishObs p;
    for (size_t i = 0; i < probe->publishes.size(); ++i) {
      if (used[i] || probe->publishes[i].event.payload != rp.payload) continue;
      used[i] = true;
      p.event = probe->publishes[i].event;
      break;
    }
    if (p.event.process.empty()) p.event.process = "redis";
    p.event.channel = rp.channel;
    p.event.payload = rp.payload;
    p.event.outcome = combo::PublishOutcome::kOk;
    p.begin_us = p.end_us = rp.time_us;
    if (auto payload = combo::decode_payload(rp.payload)) p.record = payload->record;
    p.definite = true;
    run.publishes.push_back(std::move(p));
  }
  run.degraded = probe->degraded;
  run.ui = probe->ui;
  run.polls = probe->polls;
  // Final Redis state, read from the node's memory.
  run.redis_known = true;
  const int64_t now_ms = redis_now_ms(world);
  const auto& expires = redis->engine().keyspace().expires();
  for (const auto& [key, entry] : redis->engine().keyspace().entries()) {
    auto it = expires.find(key);
    if (it != expires.end() && it->second <= now_ms) continue;
    run.final_keys.push_back({key, it == expires.end() ? -1 : it->second - now_ms, world.now_us()});
  }
  sim::redis::Session session;
  session.id = 0x7fffffff;
  RedisReply pending = redis->engine().execute(session, {"XPENDING", combo::kStreamKey, combo::kConsumerGroup}, now_ms);
  run.final_pending = pending.kind == RedisReply::Kind::kArray && !pending.elements.empty() ? pending.elements[0].integer : 0;
  run.no_ttl_samples = no_ttl_samples;
  run.unacked_samples_taken = unacked_samples_taken;
  run.stream_maxlen = stream_maxlen;
  run.stream_len_max = stream_len_max;
  run.unacked_shared = unacked_shared;
  run.redis_outages = outages;
  return run;
}

void dump(const combo::ComboRun& run) {
  for (const combo::RowObs& r : run.rows) {
    std::fprintf(stderr, "row pid=%lld a=%lld u=%lld item=%lld qty=%lld at=%lld win=%lld ref=%s\n", (long long)r.row.id,
                 (long long)r.row.activity_id, (long long)r.row.user_id, (long long)r.row.item_id, (long long)r.row.quantity,
                 (long long)r.row.created_at, (long long)r.row.window_id.value_or(-1), r.client_ref.c_str());
  }
  for (const combo::PublishObs& p : run.publishes) {
    std::fprintf(stderr, "pub [%lld,%lld] %s entry=%s win=%lld first=%lld %s %s\n", (long long)p.begin_us / 1000,
                 (long long)p.end_us / 1000, p.event.process.c_str(), p.event.entry_id.c_str(), (long long)p.event.entry_window_id,
                 (long long)p.event.entry_first_id, p.definite ? "definite" : "maybe", p.record ? p.record->describe().c_str() : "-");
  }
  for (const auto& d : run.degraded) std::fprintf(stderr, "degraded pid=%lld %s\n", (long long)d.first, d.second.c_str());
  for (const combo::PurchaseOp& o : run.ops) {
    std::fprintf(stderr, "op %s [%lld,%lld] result=%d alerted=%d\n", o.ref.c_str(), (long long)o.invoke_us / 1000,
                 (long long)o.complete_us / 1000, (int)o.result, (int)o.alerted);
  }
}

std::vector<Verdict> ComboRunImpl::check(World& world, const std::vector<std::string>& properties) {
  const combo::ComboRun run = collect(world);
  if (std::getenv("FL_COMBO_DUMP") != nullptr) {
    dump(run);
    for (auto& o : run.redis_outages) std::fprintf(stderr, "redis outage [%lld,%lld]\n", (long long)o.first / 1000, (long long)o.second / 1000);
    std::fprintf(stderr, "stream max length %lld (MAXLEN ~ %lld)\n", (long long)run.stream_len_max, (long long)run.stream_maxlen);
  }  // debugging aid (harness only)
  std::vector<Verdict> out;
  for (const combo::ComboProperty& p : combo::combo_properties()) {
    if (std::find(properties.begin(), properties.end(), p.info.name) == properties.end()) continue;
    out.push_back(p.check(run));
  }
  return out;
}

// The auditor reads the final table shortly before the end of the quiet tail.
Task<void> audit(Process& self, ComboRunImpl* run) {
  sim::storage::SqlClient sql(self, self.rpc(), sim::storage::SqlClientOptions{.service = "sql", .timeout_us = 2'000'000});
  for (int attempt = 0; attempt < 3 && !run->rows_known; ++attempt) {
    SqlResult r = co_await sql.query(
        "SELECT id, activity_id, user_id, star_id, item_id, item_type, item_name, item_icon, nickname, avatar_url, "
        "quantity, created_at, window_id, client_ref FROM activity_contributions ORDER BY id");
    if (!r.ok()) continue;
    for (const SqlRow& row : r.rows()) {
      combo::RowObs o;
      o.row.id = row[0].as_int();
      o.row.activity_id = row[1].as_int();
      o.row.user_id = row[2].as_int();
      o.row.star_id = row[3].as_int();
      o.row.item_id = row[4].as_int();
      o.row.item_type = row[5].as_text();
      o.row.item_name = row[6].as_text();
      o.row.item_icon = row[7].as_text();
      o.row.nickname = row[8].as_text();
      o.row.avatar_url = row[9].as_text();
      o.row.quantity = row[10].as_int();
      o.row.created_at = row[11].as_int();
      if (!row[12].is_null()) o.row.window_id = row[12].as_int();
      if (!row[13].is_null()) o.client_ref = row[13].as_text();
      run->rows.push_back(o);
    }
    run->rows_known = true;
  }
}

std::vector<std::string> split_statements(const std::string& sql) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from < sql.size()) {
    size_t end = sql.find(';', from);
    if (end == std::string::npos) end = sql.size();
    if (end > from) out.push_back(sql.substr(from, end - from));
    from = end + 1;
  }
  return out;
}

combo::ServiceOptions service_options(const Scenario& s, combo::Variant v) {
  combo::ServiceOptions o;
  o.variant = v;
  o.window_ms = iparam(s, "window_ms", o.window_ms);
  o.agg_ttl_s = iparam(s, "agg_ttl_s", o.agg_ttl_s);
  o.lock_ttl_s = iparam(s, "lock_ttl_s", o.lock_ttl_s);
  o.claim_min_idle_ms = iparam(s, "claim_min_idle_ms", o.claim_min_idle_ms);
  o.hardened_agg_ttl_ms = iparam(s, "hardened_agg_ttl_ms", o.hardened_agg_ttl_ms);
  o.stream_maxlen = iparam(s, "stream_maxlen", o.stream_maxlen);
  return o;
}

// "client:at_ms:item:qty;..." (client index from 1).
std::map<int, std::vector<combo::ClientOptions::Click>> parse_script(const std::string& text) {
  std::map<int, std::vector<combo::ClientOptions::Click>> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ';')) {
    std::istringstream f(item);
    std::string c, at, type, qty;
    if (!std::getline(f, c, ':') || !std::getline(f, at, ':') || !std::getline(f, type, ':')) continue;
    if (!std::getline(f, qty, ':')) qty = "1";
    out[std::stoi(c)].push_back({std::stoll(at), type, std::stoll(qty)});
  }
  return out;
}

class ComboSystem final : public SystemUnderTest {
 public:
  std::string name() const override { return "combo"; }
  std::string description() const override {
    return "seed 000: contribution combo aggregation (Redis hash + SET NX + stream worker + pub/sub + front-end merge)";
  }
  std::vector<PropertyInfo> properties() const override {
    std::vector<PropertyInfo> out;
    for (const combo::ComboProperty& p : combo::combo_properties()) out.push_back({p.info.name, p.info.invariants, p.info.description});
    return out;
  }
  std::vector<std::string> workload_kinds() const override { return {"bursts", "script"}; }
  std::vector<ParamInfo> params() const override {
    return {{"users", "distinct users (clients share users round robin)", "clients"},
            {"activities", "activities; clients of one user spread over them", "1"},
            {"items", "item types clicked (1..4)", "2"},
            {"max_clicks", "clicks per burst", "4"},
            {"click_gap_max_ms", "max gap between clicks of a burst", "1200"},
            {"batch_probability", "a burst sent as one BatchPurchaseItem", "0.1"},
            {"poll_interval_ms", "front-end polling period", "2000"},
            {"clicks", "script workload: client:at_ms:item[:qty];...", ""},
            {"window_ms", "combo window", "3000"},
            {"agg_ttl_s", "spec agg hash TTL", "5"},
            {"lock_ttl_s", "spec lock TTL", "3"},
            {"claim_min_idle_ms", "hardened XAUTOCLAIM min idle", "5000"},
            {"hardened_agg_ttl_ms", "hardened agg hash TTL", "600000"},
            {"stream_maxlen", "XADD MAXLEN ~ of the combo stream", "100000"}};
  }
  std::vector<CriticalDuration> critical_durations(const Scenario& s) const override {
    const combo::ServiceOptions o = service_options(s, s.variant == "spec" ? combo::Variant::kSpec : combo::Variant::kHardened);
    return {{"combo window", o.window_ms * kUsPerMs},
            {"lock TTL", o.lock_ttl_s * 1'000'000},
            {"agg hash TTL (spec)", o.agg_ttl_s * 1'000'000},
            {"XREADGROUP block", o.block_ms * kUsPerMs},
            {"XAUTOCLAIM min idle", o.claim_min_idle_ms * kUsPerMs},
            {"idempotency marker TTL", o.marker_ttl_ms * kUsPerMs}};
  }
  std::unique_ptr<SystemRun> build(World& world, const Scenario& s) const override;
};

std::unique_ptr<SystemRun> ComboSystem::build(World& world, const Scenario& s) const {
  auto run = std::make_unique<ComboRunImpl>();
  ComboRunImpl* r = run.get();
  r->variant = s.variant == "spec" ? combo::Variant::kSpec : combo::Variant::kHardened;
  r->faults = !s.faults.empty() || s.swarm.enabled;
  r->probe = std::make_unique<ComboProbe>(world);
  combo::Probe* probe = r->probe.get();
  auto scripts = combo::combo_scripts();

  sim::redis::ServerOptions ro;
  ro.engine.persistence = sim::redis::parse_persistence_mode(s.topology.redis.persistence).value_or(sim::redis::PersistenceMode::kAofEverysec);
  ro.engine.snapshot_interval_ms = s.topology.redis.snapshot_interval_ms;
  ro.engine.scripts = scripts;
  r->redis = std::make_unique<sim::redis::Server>(ro);
  World* wp = &world;
  r->redis->engine().set_publish_observer([wp, r](const std::string& channel, const std::string& payload) {
    r->redis_publishes.push_back({channel, payload, wp->now_us()});
  });
  Process& redis = world.add_process(world.add_node("redis"), "redis", r->redis->boot_fn());
  world.start(redis);

  World* w = &world;
  r->vfs = std::make_shared<sim::storage::SimVfs>(sim::storage::SimVfsOptions{}, world.stream("storage/db"), [w] { return w->now_us(); });
  sim::storage::SqlServerOptions so;
  so.schema = split_statements(combo::combo_schema_sql());
  Process& db = world.add_process(world.add_node("db"), "db", sim::storage::SqlServer::boot(r->vfs, so));
  world.start(db);

  const combo::ServiceOptions options = service_options(s, r->variant);
  r->stream_maxlen = options.stream_maxlen;
  for (int i = 0; i < s.topology.replicas; ++i) {
    const std::string name = "replica-" + std::to_string(i + 1);
    Process& p = world.add_process(world.add_node(name), name, [options, probe, scripts](Process& self) -> Task<void> {
      sim::redis::Client redis_client(self, sim::redis::ClientOptions{.service = "redis", .scripts = scripts});
      sim::storage::SqlClient sql(self, self.rpc(), sim::storage::SqlClientOptions{.service = "sql"});
      co_await combo::replica_main(self, self.rpc(), redis_client, sql, probe, options);
    });
    r->replicas.push_back(name);
    world.start(p);
  }
  const int64_t activities = iparam(s, "activities", 1);
  combo::GatewayOptions go;
  go.activities.clear();
  for (int64_t a = 1; a <= activities; ++a) go.activities.push_back(a);
  Process& gw = world.add_process(world.add_node("gateway"), "gateway", [go, probe, scripts](Process& self) -> Task<void> {
    sim::redis::Client redis_client(self, sim::redis::ClientOptions{.service = "redis", .scripts = scripts});
    co_await combo::gateway_main(self, self.rpc(), redis_client, probe, go);
  });
  world.start(gw);

  const int64_t users = iparam(s, "users", s.topology.clients);
  const int64_t items = std::clamp<int64_t>(iparam(s, "items", 2), 1, static_cast<int64_t>(combo::item_types().size()));
  const auto script = parse_script(param(s, "clicks", ""));
  const bool scripted = !s.workload.empty() && s.workload.front().kind == "script";
  const int64_t end_ms = sim::kEpochUs / kUsPerMs + s.duration_ms + s.quiescent_tail_ms;
  for (int i = 0; i < s.topology.clients; ++i) {
    const std::string name = "client-" + std::to_string(i + 1);
    combo::ClientOptions co;
    co.variant = r->variant;
    co.user_id = 1 + i % std::max<int64_t>(users, 1);
    co.activity_id = 1 + (i / std::max<int64_t>(users, 1)) % std::max<int64_t>(activities, 1);
    co.items.assign(combo::item_types().begin(), combo::item_types().begin() + items);
    co.bursts_per_s = scripted ? 0 : (s.workload.empty() ? 0.2 : s.workload.front().rate_per_s);
    co.max_clicks = iparam(s, "max_clicks", 4);
    co.click_gap_max_ms = iparam(s, "click_gap_max_ms", 1200);
    co.batch_probability = dparam(s, "batch_probability", 0.1);
    co.poll_interval_ms = iparam(s, "poll_interval_ms", 2000);
    co.stop_clicking_local_ms = sim::kEpochUs / kUsPerMs + s.duration_ms;
    co.ranking_local_ms = i == 0 ? end_ms - 2000 : 0;
    if (auto it = script.find(i + 1); it != script.end()) co.script = it->second;
    Process& p = world.add_process(world.add_node(name), name, [w, probe, co](Process& self) -> Task<void> {
      co_await combo::frontend_main(self, self.rpc(), w->history(), probe, co);
    });
    r->clients.push_back(name);
    world.start(p);
  }
  Process& auditor = world.add_process(world.add_node("auditor"), "auditor", [](Process&) -> Task<void> { co_return; });
  world.start(auditor);
  world.at(sim::kEpochUs + (end_ms - sim::kEpochUs / kUsPerMs - 1500) * kUsPerMs, [&auditor, r] { auditor.spawn("audit", audit(auditor, r)); });
  for (int64_t t_ms = 100; t_ms < s.duration_ms + s.quiescent_tail_ms; t_ms += 100) {
    world.at(sim::kEpochUs + t_ms * kUsPerMs, [w, r] { r->sample_ttls(*w); });
  }
  return run;
}

}  // namespace

const SystemUnderTest& combo_system() {
  static const ComboSystem system;
  return system;
}

}  // namespace fl
