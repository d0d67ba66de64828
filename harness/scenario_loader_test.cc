#include "harness/scenario_loader.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "harness/system.h"
#include "reports/matrix.h"

namespace fl {
namespace {

// A system that exists only for validation: properties, kinds and params to check names against.
class FakeSystem : public SystemUnderTest {
 public:
  explicit FakeSystem(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "fake"; }
  std::vector<PropertyInfo> properties() const override {
    return {{"quantity-conservation", {"COMBO-2"}, ""}, {"one-push-per-window", {"COMBO-3"}, ""}};
  }
  std::vector<std::string> workload_kinds() const override { return {"purchase", "burst"}; }
  std::vector<ParamInfo> params() const override {
    return {int_param("window_ms", "ms", 1, 600'000, 3000, "combo window"), text_param("items", "3", "item list")};
  }
  std::vector<CriticalDuration> critical_durations(const Scenario&) const override { return {}; }
  std::unique_ptr<SystemRun> build(sim::World&, const Scenario&) const override { return nullptr; }
  const std::vector<FixInfo>& fixes() const override {
    static const std::vector<FixInfo> fixes = {{"DM-DEDUP-IDS", "demo", {"DEMO-1"}, "dedup"}};
    return fixes;
  }
  // The fake demo needs a 1 s quiet tail to judge liveness.
  int64_t min_quiet_tail_ms(const Scenario&) const override { return name_ == "demo" ? 1000 : 0; }

 private:
  std::string name_;
};

const FakeSystem kCombo("combo");
const FakeSystem kDemo("demo");
const std::vector<const SystemUnderTest*> kSystems = {&kCombo, &kDemo};

LoadResult load(const std::string& text) {
  LoadOptions o;
  o.systems = &kSystems;
  return load_scenario_text(text, "t.yaml", o);
}

// The single diagnostic of `text`, or a failure.
Diagnostic only_error(const std::string& text) {
  LoadResult r = load(text);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.errors.size(), 1u) << r.error_text();
  return r.errors.empty() ? Diagnostic{} : r.errors[0];
}

const char* kFull = R"(name: worker-crash
description: the worker crashes mid-window
system: combo
variant: spec
topology:
  replicas: 3
  workers: 1
  clients: 8
  redis: {persistence: snapshot, snapshot_interval_ms: 1000}
workload:
  - kind: purchase
    rate_per_s: 2.5
    distribution: burst
    params: {items: 2}
network:
  latency_min_us: 100
  latency_mean_us: 450.5
  drop_probability: 0.01
  duplicate_probability: 0.02
  reorder_probability: 0.03
  fifo: false
storage:
  journal_mode: delete
  synchronous: normal
  torn_writes: true
  io_error_probability: 0.001
  sync_latency_us: 500
faults:
  - {at_ms: 4000, kind: crash-restart, target: worker-0, duration_ms: 2000}
  - {at_ms: 6000, kind: clock-jump, target: replica-1, value: -1500}
swarm:
  kinds: [pause, partition]
  faults_per_s: 0.25
  max_pause_ms: 7000
  max_clock_jump_ms: 100
  max_downtime_ms: 300
  timing_aware: false
duration_ms: 12000
quiescent_tail_ms: 14000
properties: [quantity-conservation, one-push-per-window]
expect: {verdict: fail, property: quantity-conservation}
matrix_rows: [COMBO-T6, COMBO-G5]
params: {window_ms: 3000}
seed: 18446744073709551615
)";

TEST(ScenarioLoader, MinimalFileGetsDefaults) {
  LoadResult r = load("name: m\nsystem: combo\nvariant: hardened\n");
  ASSERT_TRUE(r.ok()) << r.error_text();
  const Scenario& s = *r.scenario;
  EXPECT_EQ(s.name, "m");
  EXPECT_EQ(s.variant, "hardened");
  EXPECT_EQ(s.topology.replicas, Topology{}.replicas);
  EXPECT_EQ(s.duration_ms, 20000);
  EXPECT_TRUE(s.expect.pass);
  EXPECT_FALSE(s.seed.has_value());
  EXPECT_FALSE(s.swarm.enabled);
  EXPECT_EQ(s.source_file, "t.yaml");
}

TEST(ScenarioLoader, EveryFieldIsRead) {
  LoadResult r = load(kFull);
  ASSERT_TRUE(r.ok()) << r.error_text();
  const Scenario& s = *r.scenario;
  EXPECT_EQ(s.description, "the worker crashes mid-window");
  EXPECT_EQ(s.variant, "spec");
  EXPECT_EQ(s.topology.replicas, 3);
  EXPECT_EQ(s.topology.workers, 1);
  EXPECT_EQ(s.topology.clients, 8);
  EXPECT_EQ(s.topology.redis.persistence, "snapshot");
  EXPECT_EQ(s.topology.redis.snapshot_interval_ms, 1000);
  ASSERT_EQ(s.workload.size(), 1u);
  EXPECT_EQ(s.workload[0].kind, "purchase");
  EXPECT_DOUBLE_EQ(s.workload[0].rate_per_s, 2.5);
  EXPECT_EQ(s.workload[0].distribution, "burst");
  EXPECT_EQ(s.workload[0].params.at("items"), "2");
  EXPECT_EQ(s.network.latency_min_us, 100);
  EXPECT_DOUBLE_EQ(s.network.latency_mean_us, 450.5);
  EXPECT_DOUBLE_EQ(s.network.reorder_probability, 0.03);
  EXPECT_FALSE(s.network.fifo);
  EXPECT_EQ(s.storage.journal_mode, "delete");
  EXPECT_TRUE(s.storage.torn_writes);
  EXPECT_EQ(s.storage.sync_latency_us, 500);
  ASSERT_EQ(s.faults.size(), 2u);
  EXPECT_EQ(s.faults[0].kind, "crash-restart");
  EXPECT_EQ(s.faults[0].duration_ms, 2000);
  EXPECT_EQ(s.faults[1].value, -1500);
  EXPECT_TRUE(s.swarm.enabled);  // a swarm section switches it on
  EXPECT_EQ(s.swarm.kinds, (std::vector<std::string>{"pause", "partition"}));
  EXPECT_FALSE(s.swarm.timing_aware);
  EXPECT_EQ(s.duration_ms, 12000);
  EXPECT_EQ(s.quiescent_tail_ms, 14000);
  EXPECT_FALSE(s.expect.pass);
  EXPECT_EQ(s.expect.failing, std::vector<std::string>{"quantity-conservation"});
  EXPECT_EQ(s.matrix_rows, (std::vector<std::string>{"COMBO-T6", "COMBO-G5"}));
  EXPECT_EQ(s.params.at("window_ms"), "3000");
  EXPECT_EQ(s.seed, 18446744073709551615ULL);
}

TEST(ScenarioLoader, UnknownKeyHasPositionAndHint) {
  Diagnostic d = only_error("name: m\nsystem: combo\ntopology:\n  replica: 3\n");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.column, 3);
  EXPECT_NE(d.message.find("unknown key 'replica'"), std::string::npos);
  EXPECT_EQ(d.hint, "did you mean 'replicas'?");
  EXPECT_EQ(d.to_string(), "t.yaml:4:3: error: unknown key 'replica' (hint: did you mean 'replicas'?)");
}

TEST(ScenarioLoader, WrongTypes) {
  EXPECT_NE(only_error("name: m\nsystem: combo\nduration_ms: soon\n").message.find("integer"), std::string::npos);
  EXPECT_NE(only_error("name: m\nsystem: combo\nnetwork: {fifo: maybe}\n").message.find("true or false"),
            std::string::npos);
  EXPECT_NE(only_error("name: m\nsystem: combo\nproperties: quantity-conservation\n").message.find("list"),
            std::string::npos);
  EXPECT_NE(only_error("name: [m]\nsystem: combo\n").message.find("string"), std::string::npos);
  EXPECT_NE(only_error("- a\n- b\n").message.find("mapping"), std::string::npos);
}

TEST(ScenarioLoader, OutOfRange) {
  Diagnostic d = only_error("name: m\nsystem: combo\nnetwork:\n  drop_probability: 1.5\n");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.column, 21);
  EXPECT_NE(d.message.find("out of range"), std::string::npos);
  EXPECT_NE(d.hint.find("<= 1"), std::string::npos);
  EXPECT_EQ(only_error("name: m\nsystem: combo\ntopology: {replicas: 0}\n").line, 3);
  EXPECT_NE(
      only_error("name: m\nsystem: combo\nduration_ms: 1000\nfaults:\n  - {at_ms: 5000, kind: crash, target: a}\n")
          .message.find("after the end"),
      std::string::npos);
}

// A fail point names its effect and its side; either missing or misspelt is an error at its place.
TEST(ScenarioLoader, FailPointsAreReadAndChecked) {
  LoadResult r = load("name: m\nsystem: combo\nfail_point: {effect: 12, when: before}\n");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r.scenario->fail_point, (FailPointSpec{12, true}));
  EXPECT_NE(only_error("name: m\nsystem: combo\nfail_point: {effect: 3}\n").message.find("when"), std::string::npos);
  const Diagnostic side = only_error("name: m\nsystem: combo\nfail_point: {effect: 3, when: during}\n");
  EXPECT_EQ(side.line, 3);
  EXPECT_NE(side.message.find("during"), std::string::npos);
  EXPECT_EQ(only_error("name: m\nsystem: combo\nfail_point: {effect: -1, when: after}\n").line, 3);
  EXPECT_EQ(only_error("name: m\nsystem: combo\nfail_point: [1]\n").line, 3);
}

// A pause point is one mapping, a pause pair a list of them; one point is written back as a
// mapping, so the canonical text (and the digest) of every saved one-point file stays the same.
TEST(ScenarioLoader, PausePointsAreOneOrAList) {
  LoadResult one = load("name: m\nsystem: combo\npause_point: {effect: 12, when: before, duration_ms: 20}\n");
  ASSERT_TRUE(one.ok()) << one.error_text();
  EXPECT_EQ(one.scenario->pause_points, (std::vector<PausePointSpec>{{12, true, 20}}));
  EXPECT_NE(scenario_to_yaml(*one.scenario).find("pause_point: {effect: 12, when: before, duration_ms: 20}"),
            std::string::npos);
  LoadResult pair = load(
      "name: m\nsystem: combo\npause_point:\n  - {effect: 12, when: after, duration_ms: 400}\n"
      "  - {effect: 15, when: before, duration_ms: 20}\n");
  ASSERT_TRUE(pair.ok()) << pair.error_text();
  EXPECT_EQ(pair.scenario->pause_points, (std::vector<PausePointSpec>{{12, false, 400}, {15, true, 20}}));
  LoadResult back = load(scenario_to_yaml(*pair.scenario));
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(back.scenario->pause_points, pair.scenario->pause_points);
  EXPECT_NE(scenario_digest(*pair.scenario), scenario_digest(*one.scenario));
  EXPECT_EQ(only_error("name: m\nsystem: combo\npause_point: []\n").line, 3);
  const Diagnostic inner =
      only_error("name: m\nsystem: combo\npause_point:\n  - {effect: 1, duration_ms: 5}\n  - {effect: 2}\n");
  EXPECT_EQ(inner.line, 5);
  EXPECT_NE(inner.message.find("duration_ms"), std::string::npos);
  EXPECT_EQ(only_error("name: m\nsystem: combo\npause_point: [1]\n").line, 3);
}

TEST(ScenarioLoader, UnknownNamesGetHints) {
  Diagnostic d = only_error("name: m\nsystem: comb\n");
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.hint, "did you mean 'combo'?");
  EXPECT_EQ(only_error("name: m\nsystem: combo\nvariant: hardend\n").hint, "did you mean 'hardened'?");
  EXPECT_EQ(only_error("name: m\nsystem: combo\nproperties: [quantity-conservaton]\n").hint,
            "did you mean 'quantity-conservation'?");
  EXPECT_EQ(only_error("name: m\nsystem: combo\nworkload: [{kind: purchse}]\n").hint, "did you mean 'purchase'?");
  EXPECT_EQ(only_error("name: m\nsystem: combo\nparams: {window_s: 3}\n").hint, "did you mean 'window_ms'?");
  EXPECT_EQ(only_error("name: m\nsystem: combo\nmatrix_rows: [COMBO-T66]\n").hint, "did you mean 'COMBO-T6'?");
  EXPECT_EQ(only_error("name: m\nsystem: combo\nfaults: [{at_ms: 1, kind: crsh, target: x}]\n").hint,
            "did you mean 'crash'?");
  EXPECT_NE(only_error("name: m\nsystem: combo\nmatrix_rows: [C01]\n").message.find("ranking"), std::string::npos);
  EXPECT_NE(
      only_error("name: m\nsystem: combo\nexpect: {verdict: fail, property: nope}\n").message.find("unknown property"),
      std::string::npos);
}

// Redis memory (issue 16): maxmemory_bytes with a Redis 7.0 policy and sample size; a policy
// without a limit would silently do nothing, so it is an error where it is written.
TEST(ScenarioLoader, RedisMemorySettingsAreChecked) {
  LoadResult ok = load(
      "name: m\nsystem: combo\ntopology:\n  redis: {maxmemory_bytes: 1000000, maxmemory_policy: allkeys-lru, "
      "maxmemory_samples: 10}\n");
  ASSERT_TRUE(ok.ok()) << ok.error_text();
  EXPECT_EQ(ok.scenario->topology.redis.maxmemory_bytes, 1000000);
  EXPECT_EQ(ok.scenario->topology.redis.maxmemory_policy, "allkeys-lru");
  EXPECT_EQ(ok.scenario->topology.redis.maxmemory_samples, 10);
  Diagnostic d = only_error(
      "name: m\nsystem: combo\ntopology:\n  redis:\n    maxmemory_bytes: 900000\n"
      "    maxmemory_policy: allkeys-lru-x\n");
  EXPECT_EQ(d.to_string(),
            "t.yaml:6:23: error: unknown maxmemory_policy 'allkeys-lru-x' (hint: did you mean 'allkeys-lru'?)");
  d = only_error("name: m\nsystem: combo\ntopology:\n  redis:\n    maxmemory_policy: volatile-ttl\n");
  EXPECT_EQ(d.line, 5);
  EXPECT_NE(d.message.find("without maxmemory_bytes"), std::string::npos);
  EXPECT_EQ(only_error("name: m\nsystem: combo\ntopology: {redis: {maxmemory_bytes: -1}}\n").message,
            "maxmemory_bytes = -1 is out of range");
  EXPECT_NE(only_error("name: m\nsystem: combo\ntopology: {redis: {maxmemory_bytes: 1, maxmemory_samples: 0}}\n")
                .message.find("out of range"),
            std::string::npos);
}

TEST(ScenarioLoader, MalformedYamlHasPosition) {
  LoadResult r = load("name: m\nsystem: [combo\n");
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_GT(r.errors[0].line, 0);
  EXPECT_NE(r.errors[0].message.find("malformed YAML"), std::string::npos);
  EXPECT_FALSE(load("").ok());
  EXPECT_FALSE(load("name: m\nname: n\nsystem: combo\n").ok());  // duplicate key
}

TEST(ScenarioLoader, ExpectForms) {
  ASSERT_TRUE(load("name: m\nsystem: combo\nexpect:\n  verdict: pass\n").ok());
  // A failing expectation must name what fails (anything else failing is a further finding).
  EXPECT_FALSE(load("name: m\nsystem: combo\nexpect: fail\n").ok());
  EXPECT_FALSE(load("name: m\nsystem: combo\nexpect: {verdict: fail}\n").ok());
  LoadResult r = load(
      "name: m\nsystem: combo\nexpect: {verdict: fail, properties: [quantity-conservation, one-push-per-window], "
      "match: any}\n");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_FALSE(r.scenario->expect.pass);
  EXPECT_TRUE(r.scenario->expect.any);
  EXPECT_EQ(r.scenario->expect.failing, (std::vector<std::string>{"quantity-conservation", "one-push-per-window"}));
  EXPECT_FALSE(load("name: m\nsystem: combo\nexpect: {verdict: pass, property: quantity-conservation}\n").ok());
  EXPECT_FALSE(load("name: m\nsystem: combo\nexpect: maybe\n").ok());
}

TEST(ScenarioLoader, WithoutNamesFixesOfHardened) {
  LoadResult r = load("name: m\nsystem: demo\nvariant: hardened\nwithout: [DM-DEDUP-IDS]\n");
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r.scenario->without, std::vector<std::string>{"DM-DEDUP-IDS"});
  EXPECT_EQ(load_scenario_text(scenario_to_yaml(*r.scenario), "t.yaml").scenario->without, r.scenario->without);
  Diagnostic d = only_error("name: m\nsystem: demo\nvariant: hardened\nwithout: [DM-DEDUP-ID]\n");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.hint, "did you mean 'DM-DEDUP-IDS'?");
  EXPECT_NE(only_error("name: m\nsystem: demo\nvariant: spec\nwithout: [DM-DEDUP-IDS]\n").message.find("hardened"),
            std::string::npos);
  EXPECT_NE(only_error("name: m\nsystem: demo\nwithout: [DM-DEDUP-IDS, DM-DEDUP-IDS]\n").message.find("twice"),
            std::string::npos);
}

TEST(ScenarioLoader, QuietTailShorterThanTheSystemNeedsIsRejected) {
  Diagnostic d = only_error("name: m\nsystem: demo\nquiescent_tail_ms: 999\n");
  EXPECT_EQ(d.line, 3);
  EXPECT_NE(d.message.find("shorter"), std::string::npos);
  EXPECT_EQ(d.hint, "set quiescent_tail_ms: 1000 or more");
  EXPECT_TRUE(load("name: m\nsystem: demo\nquiescent_tail_ms: 1000\n").ok());
}

TEST(ScenarioLoader, ReportsEveryErrorNotOnlyTheFirst) {
  LoadResult r = load("name: m\nsystem: combo\nbogus: 1\ntopology: {replicas: -1}\nvariant: x\n");
  EXPECT_EQ(r.errors.size(), 3u) << r.error_text();
  EXPECT_FALSE(r.scenario.has_value());
}

TEST(ScenarioLoader, CanonicalYamlRoundTripsAndDigestIgnoresSeed) {
  LoadResult r = load(kFull);
  ASSERT_TRUE(r.ok());
  const std::string yaml = scenario_to_yaml(*r.scenario);
  LoadResult again = load(yaml);
  ASSERT_TRUE(again.ok()) << again.error_text() << yaml;
  EXPECT_EQ(*again.scenario, *r.scenario);
  Scenario other = *r.scenario;
  other.seed = 7;
  other.source_file = "elsewhere.yaml";
  other.expect.fingerprint = 0x1234;
  other.name = "renamed";
  other.description = "other words";
  other.expect.pass = !other.expect.pass;
  other.matrix_rows.clear();
  EXPECT_EQ(scenario_digest(other), scenario_digest(*r.scenario));
  other.variant = other.variant == "spec" ? "hardened" : "spec";
  EXPECT_NE(scenario_digest(other), scenario_digest(*r.scenario));
  other.variant = r.scenario->variant;
  other.topology.clients += 1;
  EXPECT_NE(scenario_digest(other), scenario_digest(*r.scenario));
  EXPECT_EQ(scenario_digest(*r.scenario), 0x0ULL + scenario_digest(*again.scenario));
}

// Generators for valid scenarios over the fake systems.
rc::Gen<std::string> gen_text() {
  return rc::gen::container<std::string>(rc::gen::elementOf(std::string("abcxyzABC019 _-.:/#'\"\\{}[],&*!|>%@`\t")));
}

rc::Gen<Scenario> gen_scenario() {
  return rc::gen::exec([] {
    Scenario s;
    s.name = "n" + *gen_text();
    s.description = *gen_text();
    s.system = *rc::gen::element<std::string>("combo", "demo");
    s.variant = *rc::gen::element<std::string>("spec", "hardened");
    s.topology.replicas = *rc::gen::inRange(1, 65);
    s.topology.workers = *rc::gen::inRange(0, 65);
    s.topology.clients = *rc::gen::inRange(0, 1000);
    s.topology.redis.persistence = *rc::gen::element<std::string>("none", "aof-everysec", "snapshot");
    if (*rc::gen::arbitrary<bool>()) {
      s.topology.redis.maxmemory_bytes = *rc::gen::inRange<int64_t>(1, int64_t{1} << 40);
      s.topology.redis.maxmemory_policy = *rc::gen::element<std::string>("noeviction", "allkeys-lru", "volatile-ttl");
      s.topology.redis.maxmemory_samples = *rc::gen::inRange(1, 65);
    }
    const int nw = *rc::gen::inRange(0, 3);
    for (int i = 0; i < nw; ++i) {
      WorkloadSpec w;
      w.kind = *rc::gen::element<std::string>("purchase", "burst");
      w.rate_per_s = *rc::gen::inRange(0, 100000) / 7.0;
      w.distribution = *rc::gen::elementOf(known_distributions());
      if (*rc::gen::arbitrary<bool>()) w.params["items"] = std::to_string(*rc::gen::inRange(1, 5));
      s.workload.push_back(w);
    }
    s.network.latency_min_us = *rc::gen::inRange(0, 100000);
    s.network.latency_mean_us = *rc::gen::inRange(0, 100000) / 3.0;
    s.network.drop_probability = *rc::gen::inRange(0, 1001) / 1000.0;
    s.network.fifo = *rc::gen::arbitrary<bool>();
    s.storage.torn_writes = *rc::gen::arbitrary<bool>();
    s.storage.io_error_probability = *rc::gen::inRange(0, 1000) / 997.0;
    s.storage.volatile_write_cache = *rc::gen::arbitrary<bool>();
    if (s.storage.volatile_write_cache) s.storage.write_cache_flush_ms = *rc::gen::inRange(1, 600001);
    s.duration_ms = *rc::gen::inRange(1, 100000);
    const int nf = *rc::gen::inRange(0, 4);
    for (int i = 0; i < nf; ++i) {
      FaultSpec f;
      f.at_ms = *rc::gen::inRange<int64_t>(0, s.duration_ms + 1);
      f.kind = *rc::gen::element<std::string>("crash", "pause", "clock-jump", "heal");
      f.target = f.kind == "heal" ? "" : "p" + std::to_string(i);
      f.duration_ms = f.kind == "pause" ? *rc::gen::inRange(1, 5000) : 0;
      f.value = *rc::gen::inRange(-5000, 5000);
      s.faults.push_back(f);
    }
    s.swarm.enabled = *rc::gen::arbitrary<bool>();
    if (s.swarm.enabled) s.swarm.kinds = {"pause"};
    s.swarm.faults_per_s = *rc::gen::inRange(0, 9000) / 9.0;
    s.quiescent_tail_ms = *rc::gen::inRange(1000, 100000);  // the fake demo needs >= 1000
    if (*rc::gen::arbitrary<bool>()) s.properties = {"quantity-conservation"};
    if (*rc::gen::arbitrary<bool>()) {
      s.expect = Expectation{.pass = false, .failing = {"quantity-conservation"}};
      s.expect.any = *rc::gen::arbitrary<bool>();
      if (*rc::gen::arbitrary<bool>()) s.expect.fingerprint = *rc::gen::arbitrary<uint64_t>();
    }
    if (s.system == "combo" && *rc::gen::arbitrary<bool>()) s.matrix_rows = {"COMBO-T1"};
    if (*rc::gen::arbitrary<bool>()) s.params["window_ms"] = std::to_string(*rc::gen::inRange(1, 600'001));
    if (*rc::gen::arbitrary<bool>()) s.seed = *rc::gen::arbitrary<uint64_t>();
    if (*rc::gen::arbitrary<bool>()) {
      s.fail_point = FailPointSpec{*rc::gen::inRange<int64_t>(0, 1'000'000), *rc::gen::arbitrary<bool>()};
    }
    const int pauses = *rc::gen::inRange(0, 3);
    for (int k = 0; k < pauses; ++k) {
      s.pause_points.push_back(PausePointSpec{*rc::gen::inRange<int64_t>(0, 1'000'000), *rc::gen::arbitrary<bool>(),
                                              *rc::gen::inRange<int64_t>(1, 100'000)});
    }
    s.source_file = "t.yaml";
    // The loader rejects a tail shorter than the system's declared minimum (combo: 13 s).
    for (const SystemUnderTest* sys : all_systems()) {
      if (sys->name() == s.system)
        s.quiescent_tail_ms = std::max(s.quiescent_tail_ms, sys->min_quiet_tail_ms(with_config(s)));
    }
    return s;
  });
}

RC_GTEST_PROP(ScenarioLoaderProps, ToYamlRoundTrips, ()) {
  const Scenario s = *gen_scenario();
  const std::string yaml = scenario_to_yaml(s);
  LoadResult r = load(yaml);
  RC_LOG() << yaml << r.error_text();
  RC_ASSERT(r.ok());
  RC_ASSERT(*r.scenario == s);
  RC_ASSERT(scenario_digest(*r.scenario) == scenario_digest(s));
}

// Fuzz: mutated, truncated and garbage files never crash the loader or escape an exception, and
// the result is always exactly one of "a scenario" or "at least one diagnostic with the file".
RC_GTEST_PROP(ScenarioLoaderProps, NeverCrashesOnMutatedInput, ()) {
  std::string text = *rc::gen::element<std::string>(
      kFull, "name: m\nsystem: combo\n", "",
      "name: m\nsystem: combo\nexpect:\n  verdict: pass\nswarm: {enabled: true}\n",
      "name: m\nsystem: demo\nworkload:\n  - kind: burst\n    params: {items: 1}\nexpect: fail\n");
  const int mutations = *rc::gen::inRange(0, 6);
  for (int i = 0; i < mutations; ++i) {
    const int op = *rc::gen::inRange(0, 5);
    const size_t pos = text.empty() ? 0 : *rc::gen::inRange<size_t>(0, text.size());
    switch (op) {
      case 0:
        text = text.substr(0, pos);
        break;  // truncate
      case 1:
        text.insert(pos, *rc::gen::container<std::string>(rc::gen::arbitrary<char>()));
        break;
      case 2:
        if (!text.empty()) text[pos] = *rc::gen::arbitrary<char>();
        break;
      case 3:
        text.insert(pos, *rc::gen::element<std::string>("{", "[", "&a ", "*a", "!!map ", "- ", ": ", "\n  ", "\"", "? ",
                                                        "%YAML 1.2\n---\n"));
        break;
      case 4:
        if (!text.empty()) text.erase(pos, *rc::gen::inRange<size_t>(0, 20));
        break;
    }
  }
  LoadResult r;
  try {
    r = load(text);
  } catch (...) { RC_FAIL("an exception escaped the loader"); }
  RC_ASSERT(r.ok() != !r.errors.empty());
  for (const Diagnostic& d : r.errors) RC_ASSERT(d.file == "t.yaml");
}

// Params are typed at load: a value of the wrong type or out of the declared range is an error
// at the value's line and column (exit 2 before anything runs), never an abort at run time.
TEST(ScenarioLoader, ParamValuesAreTypedAndRangeChecked) {
  Diagnostic d = only_error("name: m\nsystem: combo\nparams: {window_ms: two}\n");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.column, 21);
  EXPECT_NE(d.message.find("param 'window_ms' must be an integer in ms between 1 and 600000, got 'two'"),
            std::string::npos)
      << d.message;
  d = only_error("name: m\nsystem: combo\nparams:\n  window_ms: 0\n");
  EXPECT_EQ(d.line, 4);
  EXPECT_NE(d.message.find("got '0'"), std::string::npos) << d.message;
  d = only_error("name: m\nsystem: combo\nparams: {windw_ms: 5}\n");
  EXPECT_NE(d.hint.find("did you mean 'window_ms'?"), std::string::npos) << d.hint;
  const ParamInfo lock = choice_param("lock", "redisson", {"redisson", "lua"}, "combo lock");
  EXPECT_TRUE(parse_param(lock, "lua").ok());
  const absl::StatusOr<ParamValue> redlock = parse_param(lock, "redlock");
  ASSERT_FALSE(redlock.ok());
  EXPECT_EQ(redlock.status().message(), "param 'lock' must be one of redisson, lua, got 'redlock'");
  LoadResult ok = load("name: m\nsystem: combo\nparams: {window_ms: 2500}\n");
  ASSERT_TRUE(ok.ok()) << ok.error_text();
  EXPECT_EQ(ok.scenario->config.i64("window_ms"), 2500);
  EXPECT_EQ(ok.scenario->config.text("items"), "3");  // the declared default
}

// The shipped systems' params: `hot_threshold: "two"` in a likes scenario is rejected at load
// (it used to load and then abort the run with `stoll`).
TEST(ScenarioLoader, ShippedSystemsRejectBadParamsAtLoad) {
  LoadResult r = load_scenario_text("name: m\nsystem: likes\nparams: {hot_threshold: \"two\"}\n", "t.yaml");
  ASSERT_EQ(r.errors.size(), 1u) << r.error_text();
  EXPECT_EQ(r.errors[0].line, 3);
  EXPECT_NE(r.errors[0].message.find("hot_threshold"), std::string::npos);
  for (const SystemUnderTest* sys : all_systems()) {
    for (const ParamInfo& p : sys->params()) {
      if (!p.default_value.empty() || p.type == ParamType::kText) {
        EXPECT_TRUE(parse_param(p, p.default_value).ok()) << sys->name() << " " << p.name;
        if (p.type != ParamType::kText) {
          const absl::StatusOr<ParamValue> bad = parse_param(p, "two");
          ASSERT_FALSE(bad.ok()) << sys->name() << " " << p.name;
          EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
          EXPECT_NE(bad.status().message().find("got 'two'"), std::string_view::npos);
        }
      }
    }
  }
}

// docs/scenario-format.md carries the params table generated from the same declarations
// (`faultline list params`); it must not drift.
// The text between the generated-params markers of a doc, or nullopt when it has none.
std::optional<std::string> params_block(const std::filesystem::path& doc_path) {
  std::ifstream in(doc_path);
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string begin = "<!-- params:begin (generated: faultline list params) -->\n", end = "<!-- params:end -->";
  const size_t b = doc.find(begin), e = doc.find(end, b == std::string::npos ? 0 : b);
  if (b == std::string::npos || e == std::string::npos) return std::nullopt;
  return doc.substr(b + begin.size(), e - b - begin.size());
}

// Each system's params table is generated text kept in step with its declarations: in its own
// page (docs/systems/<system>.md, between the markers) when that page has one, so a new system
// touches no shared doc; the others' in the one table of docs/scenario-format.md.
TEST(ScenarioLoader, DocumentedParamsMatchTheDeclarations) {
  const std::filesystem::path docs = std::filesystem::path(FAULTLINE_SOURCE_DIR) / "docs";
  std::vector<const SystemUnderTest*> shared_table;
  for (const SystemUnderTest* s : all_systems()) {
    const std::optional<std::string> own = params_block(docs / "systems" / (s->name() + ".md"));
    if (!own) {
      shared_table.push_back(s);
      continue;
    }
    EXPECT_EQ(*own, params_markdown({s}))
        << "regenerate the table in docs/systems/" << s->name() << ".md with `faultline list params`";
  }
  const std::optional<std::string> table = params_block(docs / "scenario-format.md");
  ASSERT_TRUE(table) << "docs/scenario-format.md has no generated params table";
  EXPECT_EQ(*table, params_markdown(shared_table))
      << "regenerate the table in docs/scenario-format.md with `faultline list params`";
}

// Fuzz: a declared param given a value of the wrong type or out of range is always exactly one
// error, at that value, naming the param; an in-range integer always loads and reads back typed.
RC_GTEST_PROP(ScenarioLoaderProps, ParamValuesOfWrongTypeOrRangeAreRejected, ()) {
  const int kind = *rc::gen::inRange(0, 4);
  std::string value;
  bool valid = false;
  switch (kind) {
    case 0:
      value =
          "\"" + *rc::gen::nonEmpty(rc::gen::container<std::string>(rc::gen::element('a', 'x', ' ', '.', '-'))) + "\"";
      break;
    case 1:
      value = std::to_string(*rc::gen::inRange<int64_t>(-1'000'000'000, 1));
      break;  // below 1
    case 2:
      value = std::to_string(*rc::gen::inRange<int64_t>(600'001, 4'000'000'000'000'000'000));
      break;
    case 3: {
      const int64_t v = *rc::gen::inRange<int64_t>(1, 600'001);
      value = (*rc::gen::arbitrary<bool>() ? std::to_string(v) + ".5" : std::to_string(v));
      valid = value.find('.') == std::string::npos;
      break;
    }
  }
  const bool in_workload = *rc::gen::arbitrary<bool>();
  const std::string text =
      in_workload ? "name: m\nsystem: combo\nworkload:\n  - kind: burst\n    params: {window_ms: " + value + "}\n"
                  : "name: m\nsystem: combo\nparams: {window_ms: " + value + "}\n";
  LoadResult r = load(text);
  RC_LOG() << text << r.error_text();
  if (valid) {
    RC_ASSERT(r.ok());
    RC_ASSERT(std::to_string(r.scenario->config.i64("window_ms")) == value);
  } else {
    RC_ASSERT(r.errors.size() == 1u);
    RC_ASSERT(r.errors[0].line == (in_workload ? 5 : 3));
    RC_ASSERT(r.errors[0].message.find("param 'window_ms'") != std::string::npos);
  }
}

TEST(ScenarioLoader, DeepNestingAndAliasesDoNotCrash) {
  std::string deep = "name: m\nsystem: combo\nparams: ";
  for (int i = 0; i < 5000; ++i) deep += "[";
  EXPECT_FALSE(load(deep).ok());
  EXPECT_FALSE(load("a: &x [*x]\n").ok());
  EXPECT_FALSE(load("name: &n m\nsystem: *n\n").ok());
}

// Every scenario file shipped under scenarios/ loads against the compiled-in registry.
TEST(ScenarioLoader, ShippedScenariosLoad) {
  const std::filesystem::path dir = std::filesystem::path(FAULTLINE_SOURCE_DIR) / "scenarios";
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir << " is this test's input";
  int loaded = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.path().extension() != ".yaml") continue;
    if (e.path().string().find("/invalid/") != std::string::npos) continue;
    LoadResult r = load_scenario_file(e.path().string());
    EXPECT_TRUE(r.ok()) << r.error_text();
    ++loaded;
  }
  RecordProperty("loaded", loaded);
}

}  // namespace
}  // namespace fl
