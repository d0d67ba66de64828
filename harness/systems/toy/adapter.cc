// Adapter of the toy visit counter (impl/toy, docs/systems/toy.md) to the harness: the worked
// example of a system that declares itself (docs/adding-a-system.md).
//
// Topology: one simulated Redis node ("redis", role redis, persistence from the scenario, the
// toy's script registry), `replicas` web processes ("web-N", role replica) and `clients` clients
// ("client-N", role client). The judges get world observations only: the history, the Redis
// server's command log, the counter Redis holds at the end and the fault log (through a budget).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <variant>

#include "harness/adapter_kit.h"
#include "harness/redis_node.h"
#include "harness/system.h"
#include "impl/toy/scripts.h"
#include "impl/toy/visits.h"
#include "properties/toy/visit_checks.h"
#include "sim/redis/client.h"
#include "sim/redis/server.h"
#include "sim/world.h"

namespace fl {

namespace {

using sim::Process;
using sim::World;

// The judges read the counter the design names.
static_assert(std::string_view(toy::kCounterKey) == std::string_view(toy::kJudgedCounterKey));

int64_t param(const Scenario& s, const std::string& key) { return s.config.i64(key); }

class ToyRun final : public KitRun {
 public:
  std::vector<Verdict> check(World& world, const std::vector<std::string>& properties) override {
    const props::FaultBudget faults(world.fault_log(), world.now_us());
    const toy::VisitRun run = observed(world, &faults);
    std::vector<Verdict> verdicts;
    for (const std::string& p : properties) {
      if (p == "visit-counted-once") verdicts.push_back(toy::check_visit_counted_once(run));
      if (p == "visit-not-lost") verdicts.push_back(toy::check_visit_not_lost(run));
    }
    return verdicts;
  }
  std::vector<std::string> behaviours(World& world) override { return toy::visit_behaviours(observed(world, nullptr)); }

  std::shared_ptr<sim::redis::Server> redis;

 private:
  toy::VisitRun observed(World& world, const props::FaultBudget* faults) const {
    return toy::VisitRun{&world.history().operations(), &redis->command_log(), final_counter(), faults, "redis"};
  }
  // What the Redis node holds at the counter key now (0 when absent).
  int64_t final_counter() const {
    const auto& entries = redis->engine().keyspace().entries();
    const auto it = entries.find(toy::kJudgedCounterKey);
    if (it == entries.end()) return 0;
    const std::string* value = std::get_if<std::string>(&it->second.value);
    return value == nullptr ? 0 : std::strtoll(value->c_str(), nullptr, 10);
  }
};

// Each param declared once, bound to the option field it fills (harness/adapter_kit.h);
// redis_timeout_ms is read by hand: it configures web's Redis client, not an options struct.
const BoundParams& declared_params() {
  static const BoundParams params{
      {int_param("client_timeout_ms", "ms", 1, 600'000, 200, "how long a client waits for one attempt"),
       as_us(&toy::ClientOptions::timeout_us)},
      {int_param("max_attempts", "", 1, 100, 5, "attempts per visit (retries reuse the request id)"),
       &toy::ClientOptions::max_attempts},
      {int_param("redis_timeout_ms", "ms", 1, 600'000, 100, "web -> Redis timeout")}};
  return params;
}

class ToySystem final : public SystemUnderTest {
 public:
  std::string name() const override { return "toy"; }
  std::string description() const override {
    return "toy visit counter: clients retry visits by request id; web counts them in Redis with one script";
  }
  std::vector<PropertyInfo> properties() const override { return toy::visit_properties(); }
  std::vector<std::string> workload_kinds() const override { return {"visits"}; }
  std::vector<ParamInfo> params() const override { return declared_params().infos(); }
  std::vector<CriticalDuration> critical_durations(const Scenario& s) const override {
    return {{"client timeout", param(s, "client_timeout_ms") * 1000},
            {"redis timeout", param(s, "redis_timeout_ms") * 1000}};
  }
  const std::vector<FixInfo>& fixes() const override { return toy::toy_fixes(); }
  std::shared_ptr<const ScriptRegistry> redis_scripts() const override { return toy::toy_scripts(); }
  std::unique_ptr<SystemRun> build(World& world, const Scenario& s) const override;

 private:
  static void add_redis(World& world, const Scenario& s, ToyRun& run);
  static void add_webs(World& world, const Scenario& s, const std::shared_ptr<const ScriptRegistry>& scripts,
                       ToyRun& run);
  static void add_clients(World& world, const Scenario& s, ToyRun& run);
};

void ToySystem::add_redis(World& world, const Scenario& s, ToyRun& run) {
  sim::redis::ServerOptions ro;
  ro.engine.persistence =
      sim::redis::parse_persistence_mode(s.topology.redis.persistence).value_or(sim::redis::PersistenceMode::kNone);
  ro.engine.snapshot_interval_ms = s.topology.redis.snapshot_interval_ms;
  ro.engine.scripts = toy::toy_scripts();
  apply_redis_memory(s.topology.redis, ro.engine);
  run.redis = std::make_shared<sim::redis::Server>(ro);
  run.redis_servers.push_back(run.redis.get());
  std::shared_ptr<sim::redis::Server> server = run.redis;
  world.start(
      world.add_process(world.add_node("redis"), "redis", [server](Process& self) { return server->run(self); }));
  run.roles.add("redis", "redis");
}

Task<void> web_boot(Process& self, std::shared_ptr<const ScriptRegistry> scripts, int64_t redis_timeout_us,
                    toy::WebOptions options) {
  sim::redis::Client redis(self, sim::redis::ClientOptions{.timeout_us = redis_timeout_us, .scripts = scripts});
  co_await toy::web_main(self, self.rpc(), redis, options);
}

void ToySystem::add_webs(World& world, const Scenario& s, const std::shared_ptr<const ScriptRegistry>& scripts,
                         ToyRun& run) {
  toy::WebOptions options;
  options.fixes = s.variant == "spec" ? toy::Fixes::spec() : toy::Fixes::hardened_without(toy::toy_fixes(), s.without);
  const int64_t redis_timeout_us = param(s, "redis_timeout_ms") * 1000;
  for (int i = 0; i < std::max(1, s.topology.replicas); ++i) {
    const std::string name = "web-" + std::to_string(i + 1);
    world.start(world.add_process(world.add_node(name), name, [scripts, redis_timeout_us, options](Process& self) {
      return web_boot(self, scripts, redis_timeout_us, options);
    }));
    run.roles.add("replica", name);
  }
}

void ToySystem::add_clients(World& world, const Scenario& s, ToyRun& run) {
  toy::ClientOptions options = declared_params().filled<toy::ClientOptions>(s.config);
  options.rate_per_s = s.workload.empty() ? 5 : s.workload.front().rate_per_s;
  options.stop_at_local_us = sim::kEpochUs + s.duration_ms * 1000;
  for (int i = 0; i < s.topology.clients; ++i) {
    const std::string name = "client-" + std::to_string(i + 1);
    world.start(world.add_process(world.add_node(name), name, [&world, options](Process& self) {
      return toy::client_main(self, self.rpc(), world.history(), options);
    }));
    run.roles.add("client", name);
  }
}

std::unique_ptr<SystemRun> ToySystem::build(World& world, const Scenario& s) const {
  auto run = std::make_unique<ToyRun>();
  add_redis(world, s, *run);
  add_webs(world, s, run->redis->options().engine.scripts, *run);
  add_clients(world, s, *run);
  return run;
}

}  // namespace

const SystemUnderTest& toy_system() {
  static const ToySystem system;
  return system;
}

}  // namespace fl
