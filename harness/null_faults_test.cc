#include "harness/null_faults.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/scenario_loader.h"

namespace fl {
namespace {

Scenario demo() {
  LoadResult r = load_scenario_file(std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/demo/counter-retries.yaml");
  EXPECT_TRUE(r.ok()) << r.error_text();
  return *r.scenario;
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

// The demo's judges excuse nothing without a cause: every null fault, on every node, at two
// instants, leaves the world and every verdict as they were; each kind is planned.
TEST(NullFaults, TheDemoHoldsUnderEveryNullFaultOnEveryNode) {
  NullFaultOptions o;
  o.all_nodes = true;
  o.at_ms = {100, 7000};
  const NullFaultResult r = check_null_faults(demo(), 3, o);
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.held()) << r.findings.front().null_fault.label << ": " << r.findings.front().problems.front();
  for (const std::string& kind : null_fault_kinds()) {
    EXPECT_TRUE(
        std::any_of(r.cases.begin(), r.cases.end(), [&](const NullFaultCase& c) { return c.fault.kind == kind; }))
        << kind << " never planned";
  }
  for (const NullFaultCase& c : r.cases) {
    if (c.fault.kind == "clock-drift" || c.fault.kind == "clock-jump") EXPECT_EQ(c.fault.value, 0) << c.label;
    if (c.fault.kind == "pause") EXPECT_EQ(c.fault.duration_ms, 0) << c.label;
  }
}

// What the comparison reports: a verdict that flips, an exempted count that moves, a world that
// runs differently; and nothing for differences in the fault records alone.
TEST(NullFaults, ChangesAreVerdictsExemptionsOrTheWorld) {
  RunResult base;
  base.verdicts.push_back(Verdict{"p", {}, false, "", {"lost one"}, 3});
  base.verdicts.push_back(passing_verdict("q", {}, ""));
  base.verdicts.back().checks = 5;
  const std::vector<sim::TraceEvent> trace = {
      {0, sim::TraceKind::kUser, "", "", "system x config 1", 0},
      {10, sim::TraceKind::kSend, "a", "a", "send s -> b: m", 0},
      {20, sim::TraceKind::kDeliver, "b", "b", "recv s from a", 0},
  };
  std::vector<sim::TraceEvent> with_trace = trace;
  with_trace.insert(with_trace.begin() + 1,
                    sim::TraceEvent{5, sim::TraceKind::kFault, "", "db", "clock-drift 0ppm", 0});
  with_trace[0].detail = "system x config 2";  // the extra fault is part of the configuration
  EXPECT_TRUE(null_fault_changes(base, trace, base, with_trace).empty());

  RunResult excused = base;  // a judge that let the null fault excuse the failure
  excused.verdicts[0].passed = true;
  excused.verdicts[0].evidence.clear();
  excused.verdicts[0].exempt("explained by clock-drift of db at 0.100 s");
  const std::vector<std::string> flip = null_fault_changes(base, trace, excused, with_trace);
  ASSERT_EQ(flip.size(), 1u);
  EXPECT_NE(flip[0].find("p: FAIL -> PASS"), std::string::npos) << flip[0];

  RunResult more = base;  // still passing, but something was excused by it
  more.verdicts[1].exempt("sample explained by partition of db|client-1", 2);
  EXPECT_TRUE(mentions(null_fault_changes(base, trace, more, with_trace), "q: still PASS, but exempted 0 -> 2"));

  std::vector<sim::TraceEvent> moved = with_trace;
  moved[3].time_us = 21;  // the delivery happened later
  EXPECT_TRUE(mentions(null_fault_changes(base, trace, base, moved), "the world changed at event 2"));
}

// A finding replays: its scenario is the baseline plus the null fault as an extra fault.
TEST(NullFaults, AnExtraFaultRoundTripsThroughTheScenarioFile) {
  Scenario s = demo();
  s.extra_faults.push_back(FaultSpec{.at_ms = 100, .kind = "pause", .target = "replica-1"});  // 0 ms
  s.extra_faults.push_back(FaultSpec{.at_ms = 100, .kind = "clock-drift", .target = "replica-2"});
  LoadResult back = load_scenario_text(scenario_to_yaml(s), "x.yaml");
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(back.scenario->extra_faults, s.extra_faults);
  EXPECT_NE(scenario_digest(*back.scenario), scenario_digest(demo()));
}

}  // namespace
}  // namespace fl
