// Whole-system RapidCheck properties: generated workloads and fault schedules, run end to end
// through the runner, shrunk by RapidCheck when they fail. Complements the seed sweeps (which
// vary only the seed) by also varying the topology, the load and the fault mix.
//
//   hardened: every property holds for every generated scenario (COMBO-1..16, LIKE-1..11).
//   spec:     RapidCheck finds a failing scenario (the same search, so it can fail).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "harness/faults.h"
#include "harness/runner.h"
#include "harness/scenario_loader.h"
#include "harness/scenario_testing.h"

namespace fl {
namespace {

Scenario base(const std::string& relative_path) { return test_support::load_source_scenario(relative_path); }

// A generated variation of `b`: clients, load, fault mix and rate, fault window, seed.
struct Variation {
  int clients = 1;
  double rate_scale = 1;
  bool swarm = true;
  std::vector<std::string> kinds;
  double faults_per_s = 0.5;
  int64_t duration_ms = 5000;
  uint64_t seed = 1;
};

// RapidCheck prints shrunk counterexamples with this (found by argument-dependent lookup).
void showValue(const Variation& v, std::ostream& os) {
  os << "clients=" << v.clients << " rate_scale=" << v.rate_scale << " swarm=" << v.swarm << " kinds=[";
  for (const std::string& k : v.kinds) os << k << " ";
  os << "] faults_per_s=" << v.faults_per_s << " duration_ms=" << v.duration_ms << " seed=" << v.seed;
}

rc::Gen<Variation> gen_variation(int max_clients) {
  return rc::gen::build<Variation>(rc::gen::set(&Variation::clients, rc::gen::inRange(1, max_clients + 1)),
                                   rc::gen::set(&Variation::rate_scale, rc::gen::element(0.5, 1.0, 2.0)),
                                   rc::gen::set(&Variation::swarm, rc::gen::arbitrary<bool>()),
                                   rc::gen::set(&Variation::kinds, rc::gen::container<std::vector<std::string>>(
                                                                       rc::gen::elementOf(swarm_fault_kinds()))),
                                   rc::gen::set(&Variation::faults_per_s, rc::gen::element(0.2, 0.5, 1.0, 2.0)),
                                   rc::gen::set(&Variation::duration_ms, rc::gen::inRange<int64_t>(2000, 15000)),
                                   rc::gen::set(&Variation::seed, rc::gen::inRange<uint64_t>(1, 1'000'000)));
}

Scenario apply(Scenario s, const Variation& v) {
  s.topology.clients = v.clients;
  for (WorkloadSpec& w : s.workload) w.rate_per_s *= v.rate_scale;
  s.swarm.enabled = v.swarm;
  s.swarm.kinds = v.kinds;
  s.swarm.faults_per_s = v.faults_per_s;
  s.duration_ms = v.duration_ms;
  return s;
}

// Runs the variation; returns the failing verdicts' first evidence lines (empty: all passed).
std::vector<std::string> failures(const Scenario& b, const Variation& v) {
  const RunResult r = run_scenario(apply(b, v), v.seed, RunOptions{});
  std::vector<std::string> out;
  if (!r.error.empty()) out.push_back("error: " + r.error);
  for (const Verdict& verdict : r.verdicts) {
    if (!verdict.passed) {
      out.push_back(verdict.property + ": " + (verdict.evidence.empty() ? "" : verdict.evidence.front()));
    }
  }
  return out;
}

void check_hardened_holds(const char* file, int max_clients) {
  const Scenario b = base(file);
  ASSERT_EQ(b.variant, "hardened");
  const bool ok = rc::check(std::string("hardened holds: ") + file, [&b, max_clients] {
    const Variation v = *gen_variation(max_clients);
    const std::vector<std::string> failed = failures(b, v);
    for (const std::string& f : failed) RC_LOG() << f << "\n";
    RC_ASSERT(failed.empty());
  });
  EXPECT_TRUE(ok);
}

void check_spec_fails(const char* file, int max_clients) {
  const Scenario b = base(file);
  ASSERT_EQ(b.variant, "spec");
  const bool ok = rc::check(std::string("spec holds (expected to be falsified): ") + file,
                            [&b, max_clients] { RC_ASSERT(failures(b, *gen_variation(max_clients)).empty()); });
  EXPECT_FALSE(ok) << "RapidCheck found no failing scenario for the spec variant";
}

TEST(SystemProperties, ComboHardenedHoldsOverGeneratedWorkloadsAndFaults) {
  check_hardened_holds("scenarios/combo/explore-hardened.yaml", 12);
}
TEST(SystemProperties, ComboSpecIsFalsified) { check_spec_fails("scenarios/combo/explore-spec.yaml", 12); }
TEST(SystemProperties, LikesHardenedHoldsOverGeneratedWorkloadsAndFaults) {
  check_hardened_holds("scenarios/likes/swarm-hardened.yaml", 6);
}
TEST(SystemProperties, LikesSpecIsFalsified) { check_spec_fails("scenarios/likes/swarm-spec.yaml", 6); }

}  // namespace
}  // namespace fl
