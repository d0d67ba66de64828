#include "harness/explore.h"

#include <gtest/gtest.h>

#include <string>

#include "harness/scenario_loader.h"

namespace fl {
namespace {

Scenario demo(const std::string& file) {
  LoadResult r = load_scenario_file(std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/demo/" + file);
  EXPECT_TRUE(r.ok()) << r.error_text();
  return *r.scenario;
}

// The same exploration seed gives the same corpus, coverage series and findings, whatever the
// number of worker processes; coverage grows and the first round writes the swarm's faults out.
TEST(Explore, IsDeterministicFromItsSeedWhateverTheJobs) {
  const Scenario s = demo("counter-retries.yaml");
  ExploreOptions o;
  o.budget = 48;
  o.batch = 16;
  o.seed = 5;
  o.jobs = 1;
  const ExploreResult one = explore(s, o);
  o.jobs = 2;
  const ExploreResult two = explore(s, o);
  ASSERT_EQ(one.series.size(), 3u);
  EXPECT_EQ(one.series, two.series);
  EXPECT_EQ(one.corpus, two.corpus);
  ASSERT_EQ(one.outcomes.size(), two.outcomes.size());
  for (size_t i = 0; i < one.outcomes.size(); ++i) {
    EXPECT_EQ(one.outcomes[i].result.fingerprint, two.outcomes[i].result.fingerprint) << "run " << i;
  }
  EXPECT_GT(one.series.front().features, 0);
  EXPECT_GE(one.series.back().features, one.series.front().features);
  size_t written_out = 0;
  for (size_t i = 0; i < 16; ++i) written_out += one.outcomes[i].result.applied_faults.empty() ? 0 : 1;
  EXPECT_GT(written_out, 0u);
  o.seed = 6;
  EXPECT_NE(explore(s, o).series, one.series);
}

// A finding is a plain scenario: its faults written out, its seed set; it fails as it says.
TEST(Explore, AFindingReplaysAsAPlainScenario) {
  const Scenario s = demo("counter-retries-spec.yaml");
  ExploreOptions o;
  o.budget = 16;
  o.batch = 16;
  const ExploreResult r = explore(s, o);
  ASSERT_FALSE(r.findings.empty());
  const ExploreFinding& f = r.findings.front();
  ASSERT_TRUE(f.scenario.seed.has_value());
  EXPECT_EQ(f.scenario.swarm.faults_per_s, 0);
  LoadResult back = load_scenario_text(scenario_to_yaml(f.scenario), "found.yaml");
  ASSERT_TRUE(back.ok()) << back.error_text();
  const RunResult replayed = run_scenario(*back.scenario, *back.scenario->seed, RunOptions{});
  EXPECT_TRUE(replayed.as_expected) << f.property;
}

}  // namespace
}  // namespace fl
