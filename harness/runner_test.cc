// The runner's judgement of a run against the scenario's expectation, on the kernel demo.
#include "harness/runner.h"

#include <gtest/gtest.h>

#include "harness/scenario_loader.h"
#include "sim/world.h"

namespace fl {
namespace {

Scenario demo(const std::string& variant, const std::string& expect) {
  const std::string text = "name: t\nsystem: demo\nvariant: " + variant +
                           "\ntopology: {replicas: 2, clients: 4}\nworkload: [{kind: increments, rate_per_s: 5}]\n"
                           "network: {duplicate_probability: 0.05, fifo: false}\n"
                           "duration_ms: 10000\nquiescent_tail_ms: 2000\nexpect: " +
                           expect + "\n";
  LoadResult r = load_scenario_text(text, "t.yaml");
  EXPECT_TRUE(r.ok()) << r.error_text();
  return r.ok() ? *r.scenario : Scenario{};
}

TEST(Runner, NamedFailureIsExpectedAndOthersAreFurtherFindings) {
  RunResult r = run_scenario(demo("spec", "{verdict: fail, properties: [no-double-count]}"), 3, {});
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_FALSE(r.all_passed);
  EXPECT_TRUE(r.as_expected);
  // Expecting the wrong property: not as expected, and what did fail is a further finding.
  r = run_scenario(demo("spec", "{verdict: fail, properties: [no-lost-increment]}"), 3, {});
  EXPECT_FALSE(r.as_expected);
  ASSERT_EQ(r.further_findings.size(), 1u);
  EXPECT_EQ(r.further_findings[0], "no-double-count");
  // match: any is satisfied by one of them.
  r = run_scenario(demo("spec", "{verdict: fail, properties: [no-lost-increment, no-double-count], match: any}"), 3,
                   {});
  EXPECT_TRUE(r.as_expected);
}

TEST(Runner, APropertyThatCheckedNothingIsVacuousNotPass) {
  Scenario s = demo("hardened", "pass");
  s.topology.clients = 0;  // nobody increments: nothing to judge
  const RunResult r = run_scenario(s, 1, {});
  ASSERT_EQ(r.verdicts.size(), 2u);
  for (const Verdict& v : r.verdicts) EXPECT_EQ(v.status(), VerdictStatus::kVacuous) << v.property;
  EXPECT_EQ(r.vacuous.size(), 2u);
}

TEST(Runner, ARunWithoutItsJudgesChecksNothingIsNeverAsExpectedAndRunsTheSameWorld) {
  // A failing run: with its judges it fails as expected; without them nothing is claimed.
  const Scenario s = demo("spec", "{verdict: fail, properties: [no-double-count]}");
  const RunResult judged = run_scenario(s, 3, {});
  ASSERT_TRUE(judged.as_expected);
  RunOptions off;
  off.judges = false;
  const RunResult measured = run_scenario(s, 3, off);
  ASSERT_TRUE(measured.error.empty()) << measured.error;
  EXPECT_FALSE(measured.judged);
  EXPECT_TRUE(measured.verdicts.empty());
  EXPECT_FALSE(measured.all_passed);
  EXPECT_FALSE(measured.as_expected);
  EXPECT_TRUE(measured.further_findings.empty());
  // The same world: the same events and client operations (a failing verdict is marked in the
  // judged run's trace, so only a passing run keeps its fingerprint too).
  EXPECT_EQ(measured.events, judged.events);
  EXPECT_EQ(measured.operations_ok, judged.operations_ok);
  EXPECT_GT(measured.operations_ok, 0u);
  const Scenario passing = demo("hardened", "pass");
  const RunResult a = run_scenario(passing, 3, {});
  ASSERT_TRUE(a.as_expected);
  EXPECT_EQ(run_scenario(passing, 3, off).fingerprint, a.fingerprint);
}

TEST(Runner, WithoutRemovesANamedFixAndIsCheckedAgainstTheRegistry) {
  Scenario s = demo("hardened", "pass");
  EXPECT_EQ(apply_without(s, {"NO-SUCH-FIX"}).find("has no fix 'NO-SUCH-FIX'") != std::string::npos, true);
  EXPECT_TRUE(s.without.empty());  // unchanged on error
  ASSERT_EQ(apply_without(s, {"DM-DEDUP-IDS"}), "");
  const RunResult r = run_scenario(s, 3, {});
  EXPECT_FALSE(r.all_passed);  // hardened without its only fix double-counts like spec
  Scenario spec = demo("spec", "{verdict: fail, properties: [no-double-count]}");
  EXPECT_NE(apply_without(spec, {"DM-DEDUP-IDS"}), "");  // spec has no fixes to remove
}

TEST(Runner, CrashPointsToSweepKeepTheNamedProcessesEffectsInOrder) {
  RunOptions discover;
  discover.list_effects = true;
  const RunResult listed = run_scenario(demo("hardened", "pass"), 3, discover);
  ASSERT_TRUE(listed.error.empty()) << listed.error;
  ASSERT_FALSE(listed.effects.empty());
  // Every effect, before and after, in effect order.
  const std::vector<CrashPoint> all = crash_points_to_sweep(listed, 0, {});
  ASSERT_EQ(all.size(), 2 * listed.effects.size());
  EXPECT_TRUE(all[0].before);
  EXPECT_FALSE(all[1].before);
  EXPECT_EQ(all.back().effect_index, listed.effects.size() - 1);
  // One process's effects: only its own, keeping their indices in the whole run.
  const std::string one = listed.effects.back().process;
  const std::vector<CrashPoint> own = crash_points_to_sweep(listed, 0, {one});
  ASSERT_FALSE(own.empty());
  for (const CrashPoint& p : own) EXPECT_EQ(listed.effects[p.effect_index].process, one);
  size_t of_one = 0;
  for (const ListedEffect& e : listed.effects) of_one += e.process == one ? 1 : 0;
  EXPECT_EQ(own.size(), 2 * of_one);
  // A limit counts the chosen effects; an unknown prefix chooses none.
  EXPECT_EQ(crash_points_to_sweep(listed, 1, {one}).size(), 2u);
  EXPECT_TRUE(crash_points_to_sweep(listed, 0, {"no-such-process"}).empty());
}

// A pause pair's candidates: with one pause point armed, the run lists the effects that the
// --meanwhile processes made while it held its caller (and only those), with their indices in the
// run, so a second pause point can name one of them.
TEST(Runner, MeanwhileListsTheOtherProcessesEffectsDuringThePause) {
  RunOptions discover;
  discover.list_effects = true;
  const Scenario s = demo("hardened", "pass");
  const RunResult listed = run_scenario(s, 3, discover);
  ASSERT_FALSE(listed.effects.empty());
  const std::string paused = listed.effects.front().process;
  std::string other;
  for (const ListedEffect& e : listed.effects) {
    if (e.process != paused) other = e.process;
  }
  ASSERT_FALSE(other.empty()) << "the demo needs two calling processes";
  RunOptions pause;
  pause.pause_points = {PausePoint{0, false, 2'000}};
  pause.meanwhile_processes = {other};
  pause.list_effects = true;
  const RunResult held = run_scenario(s, 3, pause);
  ASSERT_TRUE(held.pause_point_fired);
  ASSERT_FALSE(held.meanwhile.empty());
  for (const ListedEffect& e : held.meanwhile) {
    EXPECT_EQ(e.process, other);
    EXPECT_GT(e.index, 0u);
    ASSERT_LT(e.index, held.effects.size());
    EXPECT_EQ(held.effects[e.index].text, e.text);  // the same effect, by the run's numbering
  }
  // Without a pause point there is no pause to list anything during.
  RunOptions none;
  none.meanwhile_processes = {other};
  EXPECT_TRUE(run_scenario(s, 3, none).meanwhile.empty());
  // The pair itself: pausing the first listed one too fires both.
  RunOptions pair;
  pair.pause_points = {PausePoint{0, false, 2'000}, PausePoint{held.meanwhile.front().index, true, 20}};
  EXPECT_TRUE(run_scenario(s, 3, pair).pause_point_fired);
}

}  // namespace
TEST(Runner, APanickingProcessFailsTheRunWithProcessPanic) {
  sim::World world(sim::WorldOptions{.seed = 1});
  sim::Process& p = world.add_process(world.add_node("n"), "svc", [](sim::Process& self) -> Task<void> {
    co_await self.clock().sleep_ms(5);
    throw std::runtime_error("bad variant access");
  });
  world.start(p);
  EXPECT_EQ(panic_verdict(world).status(),
            VerdictStatus::kVacuous);  // nothing died (the runner adds it only after a panic)
  world.run_until(sim::kEpochUs + 1'000'000);
  const Verdict v = panic_verdict(world);
  EXPECT_EQ(v.status(), VerdictStatus::kFail);
  ASSERT_EQ(v.evidence.size(), 1u);
  EXPECT_NE(v.evidence[0].find("svc at "), std::string::npos) << v.evidence[0];
  EXPECT_NE(v.evidence[0].find("bad variant access"), std::string::npos) << v.evidence[0];
}

}  // namespace fl
