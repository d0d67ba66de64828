// Issue 16, the remaining kinds: late duplicates (only with an at-least-once transport, from the
// swarm and as scheduled faults, each copy in the fault log), clients with patience drawn per
// seed on both sides of the server's internal budget, and the exploratory mixes that use them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <memory>

#include "harness/faults.h"
#include "harness/runner.h"
#include "harness/scenario_loader.h"
#include "harness/scenario_testing.h"
#include "sim/world.h"

namespace fl {
namespace {

Scenario load(const std::string& file) { return test_support::load_source_scenario("scenarios/" + file); }

size_t late_copies(const Scenario& s, uint64_t seed, std::string* swarm) {
  const sim::FaultLog log = test_support::injected_faults(s, seed, swarm);
  return static_cast<size_t>(std::count_if(
      log.begin(), log.end(), [](const sim::FaultRecord& r) { return r.kind == sim::FaultKind::kLateDuplicate; }));
}

TEST(LateDuplicates, OnlyAnAtLeastOnceTransportMayHaveThem) {
  const std::string base =
      "name: t\nsystem: likes\nvariant: hardened\nworkload: [{kind: likes, rate_per_s: 5}]\n"
      "swarm: {kinds: [late-duplicate, pause]}\n"
      "faults: [{at_ms: 100, kind: late-duplicate, target: client-1, duration_ms: 200, value: 3000}]\n"
      "duration_ms: 5000\nquiescent_tail_ms: 70000\nexpect: pass\n";
  LoadResult without = load_scenario_text(base, "t.yaml");
  ASSERT_FALSE(without.ok());
  EXPECT_NE(without.error_text().find("needs an at-least-once transport"), std::string::npos) << without.error_text();
  LoadResult with = load_scenario_text(base + "network: {at_least_once: true}\n", "t.yaml");
  EXPECT_TRUE(with.ok()) << with.error_text();
  // Opt-in: never in the default mix.
  const auto& mix = swarm_fault_kinds();
  EXPECT_EQ(std::find(mix.begin(), mix.end(), "late-duplicate"), mix.end());
}

TEST(LateDuplicates, ReachableFromTheSwarmAndAsAScheduledFault) {
  Scenario s = load("likes/swarm-hardened.yaml");
  s.swarm.kinds = {"late-duplicate"};
  s.swarm.faults_per_s = 1;
  std::string summary;
  EXPECT_GT(late_copies(s, 7, &summary), 0u) << summary;
  EXPECT_NE(summary.find("late-duplicate"), std::string::npos) << summary;
  s.swarm.enabled = false;
  FaultSpec f;
  f.at_ms = 2000;
  f.kind = "late-duplicate";
  f.target = "client-1";
  f.duration_ms = 5000;
  f.value = 3000;
  s.faults = {f};
  EXPECT_GT(late_copies(s, 3, nullptr), 0u);
}

TEST(Patience, DrawsEachParamOnBothSidesOfTheServersBudget) {
  for (const char* file : {"likes/swarm-hardened.yaml", "combo/explore-hardened.yaml"}) {
    const Scenario s = load(file);
    ASSERT_TRUE(s.swarm.patience) << file;
    const SystemUnderTest* sys = find_system(s.system);
    const std::vector<PatienceParam> params = sys->patience(s);
    ASSERT_FALSE(params.empty()) << file;
    for (const PatienceParam& p : params) {
      bool below = false, above = false;
      for (uint64_t seed = 1; seed <= 40; ++seed) {
        std::string drawn;
        const Scenario d = draw_patience(s, *sys, sim::Rng(seed), &drawn);
        const int64_t v = d.config.i64(p.param);
        EXPECT_NE(drawn.find(p.param + "="), std::string::npos);
        EXPECT_NE(v, p.budget);
        EXPECT_GE(v, p.min);
        EXPECT_LE(v, p.max);
        below = below || v < p.budget;
        above = above || v > p.budget;
      }
      EXPECT_TRUE(below && above) << file << " " << p.param;
    }
    // The loader checked the quiet tail against the most patient draw.
    EXPECT_GE(s.quiescent_tail_ms, sys->min_quiet_tail_ms(most_patient(s, *sys))) << file;
  }
}

TEST(Patience, WithoutItTheScenarioIsUnchanged) {
  Scenario s = load("likes/swarm-hardened.yaml");
  s.swarm.patience = false;
  const Scenario d = draw_patience(s, *find_system("likes"), sim::Rng(1), nullptr);
  EXPECT_EQ(d.params, s.params);
}

// The exploratory mixes use the new kinds (issue 16: "used by the exploratory mixes").
TEST(Issue16Mixes, ExploratoryFilesUseLateDuplicatesPatienceAndBoundaries) {
  for (const char* file :
       {"likes/swarm-hardened.yaml", "likes/swarm-spec.yaml", "combo/explore-spec-at-least-once.yaml"}) {
    const Scenario s = load(file);
    EXPECT_TRUE(s.network.at_least_once) << file;
    EXPECT_NE(std::find(s.swarm.kinds.begin(), s.swarm.kinds.end(), "late-duplicate"), s.swarm.kinds.end()) << file;
  }
  for (const char* file : {"likes/swarm-hardened.yaml", "likes/swarm-spec.yaml", "combo/explore-hardened.yaml",
                           "combo/explore-spec.yaml"}) {
    EXPECT_TRUE(load(file).swarm.patience) << file;
  }
  for (const char* file : {"combo/explore-hardened.yaml", "combo/explore-spec.yaml", "likes/swarm-hardened.yaml",
                           "likes/swarm-spec.yaml"}) {
    EXPECT_GT(load(file).config.i64("boundary_percent"), 0) << file;
  }
  for (const char* file : {"combo/explore-hardened-eviction.yaml", "likes/swarm-hardened-eviction.yaml"}) {
    const Scenario s = load(file);
    EXPECT_GT(s.topology.redis.maxmemory_bytes, 0) << file;
    EXPECT_NE(s.topology.redis.maxmemory_policy, "noeviction") << file;
  }
}

// likes' exact boundaries are reachable: without faults, a like/unlike and its follow-up on the same
// pair are invoked exactly the state TTL (3 s) -1/0/+1 ms apart by the app's clock.
TEST(ExactBoundaries, LikesFollowUpsLandExactlyACriticalDurationLater) {
  Scenario s = load("likes/swarm-hardened.yaml");
  s.swarm.enabled = false;
  s.params["boundary_percent"] = "100";
  s = with_config(s);
  const std::string trace = ::testing::TempDir() + "likes-boundaries-" + std::to_string(::getpid()) + ".jsonl";
  RunOptions o;
  o.trace_jsonl_path = trace;
  RunResult r = run_scenario(s, 1, o);
  ASSERT_TRUE(r.error.empty()) << r.error;
  std::map<std::string, std::vector<int64_t>> invokes;  // "process asset=A user=U" -> invoke times
  std::ifstream in(trace);
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"kind\":\"op\"") == std::string::npos || line.find("invoke #") == std::string::npos) continue;
    const size_t asset = line.find("asset="), req = line.find(" req=");
    if (asset == std::string::npos || req == std::string::npos || line.find("user=") == std::string::npos) continue;
    const size_t proc = line.find("\"process\":\"") + 11;
    const std::string key = line.substr(proc, line.find('"', proc) - proc) + " " + line.substr(asset, req - asset);
    invokes[key].push_back(std::stoll(line.substr(line.find("\"t_us\":") + 7)));
  }
  std::set<int64_t> gaps_us;
  for (const auto& [key, times] : invokes) {
    for (size_t i = 0; i < times.size(); ++i) {
      for (size_t k = i + 1; k < times.size(); ++k) gaps_us.insert(std::llabs(times[k] - times[i]));
    }
  }
  for (int64_t gap_us : {2'999'000, 3'000'000, 3'001'000}) EXPECT_TRUE(gaps_us.count(gap_us)) << gap_us;
}

// Exact boundaries are reachable: with a fixed latency the scripted pairs land at Redis exactly
// -1/0/+1 ms around the window, and hardened passes every property, each judging something.
TEST(ExactBoundaries, HardenedPassesTheBoundaryScenarioAndSpecFailsIt) {
  const Scenario hardened = load("combo/boundaries-hardened.yaml");
  RunResult h = run_scenario(hardened, 1, RunOptions{});
  ASSERT_TRUE(h.error.empty()) << h.error;
  for (const Verdict& v : h.verdicts)
    EXPECT_TRUE(v.passed) << v.property << ": " << (v.evidence.empty() ? "" : v.evidence[0]);
  const Scenario spec = load("combo/boundaries-spec.yaml");
  RunResult sp = run_scenario(spec, 1, RunOptions{});
  EXPECT_TRUE(std::any_of(sp.verdicts.begin(), sp.verdicts.end(), [](const Verdict& v) { return !v.passed; }));
}

}  // namespace
}  // namespace fl
