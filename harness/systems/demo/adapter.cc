// Adapter of the kernel demo (impl/demo) to the harness.
#include <memory>

#include "harness/adapter_kit.h"
#include "harness/system.h"
#include "impl/demo/counter.h"
#include "properties/demo/counter_checks.h"
#include "sim/world.h"

namespace fl {

namespace {

using sim::Process;
using sim::World;

class DemoRun final : public KitRun {
 public:
  std::vector<Verdict> check(World& world, const std::vector<std::string>& properties) override {
    demo::CounterRun run{&world.history().operations(), store.counter};
    std::vector<Verdict> verdicts;
    for (const std::string& p : properties) {
      if (p == "no-double-count") verdicts.push_back(demo::check_no_double_count(run));
      if (p == "no-lost-increment") verdicts.push_back(demo::check_no_lost_increment(run));
    }
    return verdicts;
  }
  // From the history: an increment answered indeterminate (its retries, with the same request
  // id, may all have reached the counter: what no-double-count judges).
  std::vector<std::string> behaviours(World& world) override {
    for (const sim::Operation& op : world.history().operations()) {
      if (op.op == "inc" && op.completed() && op.outcome == Outcome::kInfo) return {"increment answered indeterminate"};
    }
    return {};
  }

  demo::StoreState store;
};

const BoundParams& declared_params() {
  static const BoundParams params{
      {int_param("client_timeout_ms", "ms", 1, 600'000, 100, "how long a client waits for one attempt"),
       as_us(&demo::ClientOptions::timeout_us)},
      {int_param("max_attempts", "", 1, 100, 3, "attempts per increment (retries reuse the request id)"),
       &demo::ClientOptions::max_attempts}};
  return params;
}

class DemoSystem final : public SystemUnderTest {
 public:
  std::string name() const override { return "demo"; }
  std::string description() const override {
    return "kernel demo: clients increment a counter through replicas over RPC";
  }
  std::vector<PropertyInfo> properties() const override { return demo::counter_properties(); }
  std::vector<std::string> workload_kinds() const override { return {"increments"}; }
  std::vector<ParamInfo> params() const override { return declared_params().infos(); }
  std::vector<CriticalDuration> critical_durations(const Scenario& s) const override {
    return {{"client timeout", param_ms(s, "client_timeout_ms") * 1000}};
  }
  const std::vector<FixInfo>& fixes() const override { return demo::demo_fixes(); }
  std::unique_ptr<SystemRun> build(World& world, const Scenario& s) const override;

 private:
  // Typed and range-checked when the scenario loaded (harness/params.h).
  static int64_t param_ms(const Scenario& s, const std::string& key) { return s.config.i64(key); }
};

std::unique_ptr<SystemRun> DemoSystem::build(World& world, const Scenario& s) const {
  auto run = std::make_unique<DemoRun>();
  const demo::Fixes fixes =
      s.variant == "spec" ? demo::Fixes::spec() : demo::Fixes::hardened_without(demo::demo_fixes(), s.without);
  DemoRun* r = run.get();
  Process& store = world.add_process(world.add_node("store"), "store",
                                     [r, fixes](Process& p) { return demo::store_main(p, p.rpc(), r->store, fixes); });
  world.start(store);
  const int64_t store_timeout_us = param_ms(s, "client_timeout_ms") * 500;
  for (int i = 0; i < s.topology.replicas; ++i) {
    const std::string name = "replica-" + std::to_string(i + 1);
    Process& p = world.add_process(world.add_node(name), name, [store_timeout_us](Process& self) {
      return demo::replica_main(self, self.rpc(), store_timeout_us);
    });
    r->roles.add("replica", name);
    world.start(p);
  }
  demo::ClientOptions options = declared_params().filled<demo::ClientOptions>(s.config);
  options.rate_per_s = s.workload.empty() ? 5 : s.workload.front().rate_per_s;
  options.stop_at_local_us = sim::kEpochUs + s.duration_ms * 1000;
  for (int i = 0; i < s.topology.clients; ++i) {
    const std::string name = "client-" + std::to_string(i + 1);
    Process& p = world.add_process(world.add_node(name), name, [&world, options](Process& self) {
      return demo::client_main(self, self.rpc(), world.history(), options);
    });
    r->roles.add("client", name);
    world.start(p);
  }
  return run;
}

}  // namespace

const SystemUnderTest& demo_system() {
  static const DemoSystem system;
  return system;
}

}  // namespace fl
