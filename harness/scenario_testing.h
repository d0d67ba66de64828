// Test support for harness tests (GoogleTest; FAULTLINE_SOURCE_DIR set by the build): a scenario
// file of the source tree, and a run of one as the runner runs it (build the system, schedule the
// scenario's faults and swarm, run to the end of the quiet tail) that hands back the fault log.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "harness/faults.h"
#include "harness/scenario_loader.h"
#include "harness/system.h"
#include "sim/world.h"

namespace fl::test_support {

// `relative` is a path under the source tree, e.g. "scenarios/likes/swarm-hardened.yaml".
inline Scenario load_source_scenario(const std::string& relative) {
  LoadResult r = load_scenario_file(std::string(FAULTLINE_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(r.ok()) << r.error_text();
  return r.ok() ? *r.scenario : Scenario{};
}

// The world's fault log after running `s` with `seed`; *swarm gets the swarm's summary line.
inline sim::FaultLog injected_faults(const Scenario& s, uint64_t seed, std::string* swarm = nullptr) {
  const SystemUnderTest* sys = find_system(s.system);
  auto world = std::make_unique<sim::World>(sim::WorldOptions{.seed = seed});
  std::unique_ptr<SystemRun> run = sys->build(*world, s);
  FaultInjector faults(*world, *run, s, sys->critical_durations(s));
  faults.schedule_all();
  world->run_until(sim::kEpochUs + (s.duration_ms + s.quiescent_tail_ms) * 1000);
  if (swarm) *swarm = faults.swarm_summary();
  return world->fault_log();
}

}  // namespace fl::test_support
