// Issue 16: the simulated Redis's error replies as fault kinds. Each kind is reachable from a
// scenario's scheduled faults and from the swarm (when the scenario names it in swarm.kinds),
// the node refuses commands with Redis 7.0's error and then recovers, and every refused command
// is in the world's fault log (FaultKind::kRedisError, value = the sim::redis::Refusal).
#include "harness/faults.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/scenario_loader.h"
#include "harness/scenario_testing.h"
#include "sim/redis/engine.h"
#include "sim/world.h"

namespace fl {
namespace {

Scenario likes_swarm() { return test_support::load_source_scenario("scenarios/likes/swarm-hardened.yaml"); }

sim::redis::Refusal refusal_of(const std::string& kind) {
  if (kind == "redis-oom") return sim::redis::Refusal::kOom;
  if (kind == "redis-loading") return sim::redis::Refusal::kLoading;
  if (kind == "redis-busy") return sim::redis::Refusal::kBusy;
  return sim::redis::Refusal::kReadonly;
}

// Runs `s` as the runner does (build, inject, run) and counts the refused commands of `kind`
// in the fault log.
size_t refused_commands(const Scenario& s, uint64_t seed, const std::string& kind, std::string* swarm) {
  const sim::FaultLog log = test_support::injected_faults(s, seed, swarm);
  const int64_t value = static_cast<int64_t>(refusal_of(kind));
  return static_cast<size_t>(std::count_if(log.begin(), log.end(), [&](const sim::FaultRecord& r) {
    return r.kind == sim::FaultKind::kRedisError && r.value == value;
  }));
}

TEST(RedisErrorFaults, EveryKindIsListedScheduledAndOptInForTheSwarm) {
  const auto& scheduled = scheduled_fault_kinds();
  const auto& swarm = swarm_fault_kinds();
  const std::vector<std::string> accepted = accepted_swarm_fault_kinds();
  for (const std::string& k : redis_error_fault_kinds()) {
    EXPECT_NE(std::find(scheduled.begin(), scheduled.end(), k), scheduled.end()) << k;
    EXPECT_NE(std::find(accepted.begin(), accepted.end(), k), accepted.end()) << k;
    // Not in the default mix: scenarios that do not name them draw exactly as before.
    EXPECT_EQ(std::find(swarm.begin(), swarm.end(), k), swarm.end()) << k;
  }
}

TEST(RedisErrorFaults, EachKindIsReachableFromTheSwarmAndRecorded) {
  for (const std::string& kind : redis_error_fault_kinds()) {
    Scenario s = likes_swarm();
    s.swarm.enabled = true;
    s.swarm.kinds = {kind};
    s.swarm.faults_per_s = 1;
    std::string summary;
    const size_t refused = refused_commands(s, 7, kind, &summary);
    EXPECT_NE(summary.find(kind), std::string::npos) << summary;
    EXPECT_GT(refused, 0u) << kind << ": no refused command in the fault log (" << summary << ")";
  }
}

// likes' swarm without its swarm, with one refusal window of `kind` on redis from 2 s to 10 s.
Scenario with_refusal_window(const std::string& kind) {
  Scenario s = likes_swarm();
  s.swarm.enabled = false;
  FaultSpec f;
  f.at_ms = 2000;
  f.kind = kind;
  f.target = "redis";
  f.duration_ms = 8000;
  s.faults = {f};
  return s;
}

TEST(RedisErrorFaults, EachKindIsReachableAsAScheduledFaultAndEnds) {
  for (const std::string& kind : redis_error_fault_kinds()) {
    const Scenario s = with_refusal_window(kind);
    const size_t refused = refused_commands(s, 3, kind, nullptr);
    EXPECT_GT(refused, 0u) << kind;
  }
}

// A script whose call a refusal window refused answers that error with Redis's " script: <sha>,
// on @user_script:<line>." after it: the script's own call is in the fault log too, not only the
// refused call inside it (the judges excuse by the operation a fault touched).
TEST(RedisErrorFaults, AScriptARefusalEndedIsRecordedAsRefused) {
  const sim::FaultLog log = test_support::injected_faults(with_refusal_window("redis-readonly"), 3, nullptr);
  size_t scripts = 0;
  for (const sim::FaultRecord& r : log) {
    if (r.kind == sim::FaultKind::kRedisError && r.message.find(": EVALSHA ") != std::string::npos) ++scripts;
  }
  EXPECT_GT(scripts, 0u) << "no refused EVALSHA in the fault log";
}

// The exploratory mixes of combo and likes draw every error-reply kind (issue 16: "used by the
// exploratory mixes of combo and likes").
TEST(RedisErrorFaults, TheExploratoryMixesOfComboAndLikesDrawThem) {
  for (const char* file : {"combo/explore-hardened.yaml", "combo/explore-spec.yaml", "likes/swarm-hardened.yaml",
                           "likes/swarm-spec.yaml"}) {
    LoadResult r = load_scenario_file(std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/" + file);
    ASSERT_TRUE(r.ok()) << r.error_text();
    for (const std::string& k : redis_error_fault_kinds()) {
      EXPECT_NE(std::find(r.scenario->swarm.kinds.begin(), r.scenario->swarm.kinds.end(), k),
                r.scenario->swarm.kinds.end())
          << file << " does not draw " << k;
    }
  }
}

// topology.redis.maxmemory_bytes reaches the node: with noeviction and a limit just above an
// empty Redis's memory, writes are refused with -OOM without any injected window, and each
// refusal is in the fault log (a full memory explains what it refused).
TEST(RedisErrorFaults, AScenarioMaxmemoryRefusesWritesWithOom) {
  Scenario s = likes_swarm();
  s.swarm.enabled = false;
  s.topology.redis.maxmemory_bytes = 885'000;
  s.topology.redis.maxmemory_policy = "noeviction";
  EXPECT_GT(refused_commands(s, 1, "redis-oom", nullptr), 0u);
  s.topology.redis.maxmemory_bytes = 0;
  EXPECT_EQ(refused_commands(s, 1, "redis-oom", nullptr), 0u);
}

TEST(RedisErrorFaults, TheLoaderAcceptsThemInSwarmKindsAndFaults) {
  const std::string text =
      "name: t\nsystem: likes\nvariant: hardened\nworkload: [{kind: likes, rate_per_s: 5}]\n"
      "swarm: {kinds: [redis-oom, redis-loading, redis-busy, redis-readonly, pause]}\n"
      "faults: [{at_ms: 100, kind: redis-readonly, target: redis, duration_ms: 200}]\n"
      "duration_ms: 5000\nquiescent_tail_ms: 70000\nexpect: pass\n";
  LoadResult r = load_scenario_text(text, "t.yaml");
  EXPECT_TRUE(r.ok()) << r.error_text();
}

}  // namespace
}  // namespace fl
