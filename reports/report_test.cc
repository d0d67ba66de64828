#include "reports/report.h"

#include <algorithm>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "reports/charts.h"
#include "reports/json.h"
#include "reports/matrix.h"
#include "reports/timeline.h"

namespace fl::reports {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The rows a report judges come with the report (the harness fills them from the systems'
// matrix files: harness/matrix_rows_test.cc tests those); these are the few the tests use.
std::vector<MatrixRow> test_rows() {
  std::vector<MatrixRow> rows;
  for (int i = 1; i <= 5; ++i) {
    rows.push_back({"COMBO-G" + std::to_string(i), "combo", "goal", "goal", "holds", {"COMBO-2"}, "000 §1.4 L39"});
  }
  for (int i = 1; i <= 7; ++i) {
    rows.push_back(
        {"COMBO-T" + std::to_string(i), "combo", "integration", "case", "holds", {"COMBO-2"}, "000 §9.2 L502"});
  }
  rows.push_back({"DEMO-1", "demo", "kernel", "the demo", "holds", {}, "harness demo"});
  return rows;
}

TEST(Matrix, SearchesTheRowsGiven) {
  const std::vector<MatrixRow> rows = test_rows();
  EXPECT_EQ(find_matrix_row(rows, "COMBO-T6")->matrix, "combo");
  EXPECT_EQ(find_matrix_row(rows, "C01"), nullptr);
  EXPECT_EQ(find_matrix_row({}, "COMBO-T6"), nullptr);
  EXPECT_EQ(matrix_names(rows), (std::vector<std::string>{"combo", "demo"}));
  EXPECT_EQ(rows_of_matrix(rows, "combo").size(), 12u);
  EXPECT_EQ(rows_of_matrix(rows, "all").size(), rows.size());
  EXPECT_TRUE(rows_of_matrix(rows, "nosuch").empty());
}

TEST(Matrix, ClosestMatch) {
  EXPECT_EQ(closest_match("replica", {"replicas", "workers"}), "replicas");
  EXPECT_EQ(closest_match("zzzzzzzz", {"replicas", "workers"}), "");
}

RunRecord run(const std::string& variant, bool passed, std::vector<std::string> rows) {
  RunRecord r;
  r.scenario = "s-" + variant;
  r.scenario_file = "scenarios/combo/s.yaml";
  r.system = "combo";
  r.variant = variant;
  r.matrix_rows = std::move(rows);
  r.expected_pass = variant == "hardened";
  if (!r.expected_pass) r.expected_failing = {"quantity-conservation"};
  r.seeds = {1, 2, 3};
  if (!passed) r.failing_seeds = {2};
  r.config_digest = 0xabcdef0123456789ULL;
  r.fingerprint = 0x1122334455667788ULL;
  r.assertions.push_back(
      AssertionRecord{"quantity-conservation",
                      {"COMBO-2"},
                      passed,
                      "sum of pushed quantity == sum of purchases",
                      42,
                      passed ? std::vector<std::string>{} : std::vector<std::string>{"key u1|i1: pushed 2, bought 3"}});
  if (!passed) {
    r.failures_per_property["quantity-conservation"] = 1;
    Counterexample c;
    c.seed = 2;
    c.fingerprint = 0x99;
    c.property = "quantity-conservation";
    c.scenario_yaml = "name: \"min\"\n";
    c.replay_command = "faultline replay min.yaml";
    c.timeline = {{1000, "send", "n1", "client-0", "purchase to replica-0"},
                  {2000, "fault", "", "worker-0", "crash-restart"},
                  {3000, "deliver", "n2", "replica-0", "purchase from client-0"},
                  {9000, "violation", "", "", "quantity-conservation <b>&"}};
    r.counterexample = c;
  }
  r.simulated_us = 3'000'000;
  r.wall_seconds = 0.25;
  r.produced_at = "2025-01-01T00:00:00Z";
  r.commit = "deadbeef";
  return r;
}

Report sample() {
  Report rep;
  rep.produced_at = "2025-01-01T00:00:00Z";
  rep.commit = "deadbeef";
  rep.matrices = {"combo"};
  rep.rows = test_rows();
  rep.runs = {run("spec", false, {"COMBO-T6", "COMBO-G5"}), run("hardened", true, {"COMBO-T6"})};
  return rep;
}

const RowVerdict& verdict(const std::vector<RowVerdict>& v, const std::string& id, const std::string& variant) {
  for (const RowVerdict& r : v) {
    if (r.row->id == id && r.variant == variant) return r;
  }
  static RowVerdict none;
  ADD_FAILURE() << id << " " << variant << " missing";
  return none;
}

TEST(Report, RowsArePassFailOnlyWithEvidence) {
  Report rep = sample();
  auto rows = judge_rows(rep);
  EXPECT_EQ(rows.size(), rows_of_matrix(rep.rows, "combo").size() * 2);
  EXPECT_EQ(verdict(rows, "COMBO-T6", "spec").status, RowStatus::kFail);
  EXPECT_EQ(verdict(rows, "COMBO-T6", "hardened").status, RowStatus::kPass);
  EXPECT_EQ(verdict(rows, "COMBO-G5", "spec").status, RowStatus::kFail);
  EXPECT_EQ(verdict(rows, "COMBO-G5", "hardened").status, RowStatus::kNotRun);
  EXPECT_EQ(verdict(rows, "COMBO-T1", "hardened").status, RowStatus::kNotRun);
  // A run without a config digest is not evidence: the row falls back to NOT_RUN.
  rep.runs[1].config_digest = 0;
  EXPECT_EQ(verdict(judge_rows(rep), "COMBO-T6", "hardened").status, RowStatus::kNotRun);
  // A crash is a failure of every row the run covers.
  rep = sample();
  rep.runs[1].error = "seed 3: killed by signal 11";
  EXPECT_EQ(verdict(judge_rows(rep), "COMBO-T6", "hardened").status, RowStatus::kFail);
}

// A row failed by several runs names each failed property once.
TEST(Report, FailingRowNamesEachPropertyOnce) {
  Report rep = sample();
  rep.runs.push_back(run("spec", false, {"COMBO-T6"}));
  rep.runs.back().assertions.push_back(rep.runs.back().assertions.front());
  const std::vector<RowVerdict> rows = judge_rows(rep);
  const RowVerdict& v = verdict(rows, "COMBO-T6", "spec");
  EXPECT_EQ(v.status, RowStatus::kFail);
  EXPECT_EQ(v.runs.size(), 2u);
  EXPECT_EQ(v.failed_properties, std::vector<std::string>{"quantity-conservation"});
}

TEST(Report, AVacuousRunIsNeverAPass) {
  Report rep = sample();
  rep.runs[1].assertions[0].checks = 0;  // hardened "passed" having checked nothing
  EXPECT_STREQ(rep.runs[1].assertions[0].status(), "VACUOUS");
  EXPECT_EQ(verdict(judge_rows(rep), "COMBO-T6", "hardened").status, RowStatus::kVacuous);
  EXPECT_NE(to_markdown(rep).find("VACUOUS"), std::string::npos);
  EXPECT_NE(to_html(rep).find("VACUOUS"), std::string::npos);
}

// A property a run judges but that checked nothing on any of its seeds makes the run unexpected,
// whatever its verdicts: the scenario names what it never exercised.
TEST(Report, APropertyVacuousOnEverySeedMakesTheRunUnexpected) {
  Report rep = sample();
  ASSERT_TRUE(rep.runs[1].as_expected());
  rep.runs[1].assertions.push_back(AssertionRecord{"ttl-hygiene", {"COMBO-9"}, true, "no TTL -1", 0, {}, 0, 3, 3});
  EXPECT_FALSE(rep.runs[1].as_expected());
  EXPECT_EQ(rep.runs[1].vacuous_properties(), std::vector<std::string>{"ttl-hygiene"});
  EXPECT_NE(to_markdown(rep).find("vacuous on every seed: ttl-hygiene"), std::string::npos);
  EXPECT_NE(to_html(rep).find("vacuous on every seed: ttl-hygiene"), std::string::npos);
  rep.runs[1].assertions.back().checks = 2;  // it checked something on one seed
  rep.runs[1].assertions.back().vacuous_seeds = 2;
  EXPECT_TRUE(rep.runs[1].as_expected());
}

// Each property shows its exempted share; the summary lists those above 10 %.
TEST(Report, PropertiesExemptingMoreThanATenthAreListed) {
  Report rep = sample();
  EXPECT_NE(to_markdown(rep).find("None: every property judged at least 90 %"), std::string::npos);
  rep.runs[1].assertions[0].exempted = 8;  // 8 of 50 items: 16 %
  const std::string md = to_markdown(rep);
  EXPECT_NE(md.find("- `quantity-conservation` in `scenarios/combo/s.yaml` (hardened): 8 exempted, 42 checks (16.0 %)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("8 exempted (16.0 %, explained by injected faults)"), std::string::npos);
  EXPECT_NE(to_html(rep).find("<td>8 (16.0 %)</td>"), std::string::npos);
  rep.runs[1].assertions[0].exempted = 4;  // 4 of 46: 8.7 %
  EXPECT_EQ(to_markdown(rep).find("in `scenarios/combo/s.yaml` (hardened): 4 exempted"), std::string::npos);
  std::string error;
  const std::optional<Report> back = report_from_json(to_json(rep), &error);
  ASSERT_TRUE(back.has_value()) << error;
  EXPECT_EQ(back->runs[1].assertions[0], rep.runs[1].assertions[0]);
}

// An exploration's coverage over time travels in report.json and is drawn by report.html.
TEST(Report, AnExplorationsCoverageIsKeptAndDrawn) {
  Report rep = sample();
  rep.runs[1].coverage = {{32, 100, 10, 0}, {64, 140, 18, 1}, {96, 150, 20, 1}};
  std::string error;
  const std::optional<Report> back = report_from_json(to_json(rep), &error);
  ASSERT_TRUE(back.has_value()) << error;
  EXPECT_EQ(back->runs[1].coverage, rep.runs[1].coverage);
  const std::string html = to_html(rep);
  EXPECT_NE(html.find("<svg class=\"coverage\""), std::string::npos);
  EXPECT_EQ(std::count(html.begin(), html.end(), '\n') > 0, true);
  EXPECT_NE(html.find("150 features"), std::string::npos);
  EXPECT_NE(to_markdown(rep).find("| 96 | 150 | 20 | 1 |"), std::string::npos);
}

TEST(Report, FixesNeedTheirCounterexampleBothWays) {
  Report rep = sample();
  FixRecord x;
  x.system = "combo";
  x.id = "CB-EXAMPLE";
  x.seed_line = "000:L1";
  x.why = "because";
  x.invariants = {"COMBO-2"};
  EXPECT_STREQ(x.status(), "NO_COUNTEREXAMPLE");
  x.counterexample = "scenarios/combo/found/without-CB-EXAMPLE.yaml";
  x.fails_without = true;
  EXPECT_STREQ(x.status(), "NOT_REPRODUCED");  // it must also pass with the fix
  rep.fixes = {x};
  EXPECT_EQ(report_exit_code(rep), 1);
  rep.fixes[0].passes_with = true;
  EXPECT_STREQ(rep.fixes[0].status(), "PROVEN");
  EXPECT_EQ(report_exit_code(rep), 0);
  EXPECT_NE(to_markdown(rep).find("| combo | CB-EXAMPLE | 000:L1 |"), std::string::npos);
  EXPECT_NE(to_html(rep).find("CB-EXAMPLE"), std::string::npos);
  std::string err;
  std::optional<Report> back = report_from_json(to_json(rep), &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(back->fixes, rep.fixes);
  Report merged = merge_reports({rep, rep}, "2025-02-02T00:00:00Z", "cafe");
  EXPECT_EQ(merged.fixes.size(), 1u);
  EXPECT_EQ(merged.rows, rep.rows);  // each row once, whatever the number of shards
}

TEST(Report, ExpectationsAndExitCode) {
  Report rep = sample();
  EXPECT_TRUE(rep.runs[0].as_expected());  // spec fails the expected property
  EXPECT_TRUE(rep.runs[1].as_expected());
  EXPECT_EQ(report_exit_code(rep), 0);
  rep.runs[1].failing_seeds = {3};
  EXPECT_FALSE(rep.runs[1].as_expected());
  EXPECT_EQ(report_exit_code(rep), 1);
  rep = sample();
  rep.runs[0].expected_failing = {"one-push-per-window"};
  EXPECT_FALSE(rep.runs[0].as_expected());
  rep.runs[0].expected_failing = {"one-push-per-window", "quantity-conservation"};
  EXPECT_FALSE(rep.runs[0].as_expected());  // match: all needs both
  rep.runs[0].expected_any = true;
  EXPECT_TRUE(rep.runs[0].as_expected());  // match: any needs one
}

TEST(Report, OpensWithTheSummaryThenTheUnexpectedThenTheMatrix) {
  Report rep = sample();
  rep.runs[1].failing_seeds = {3};  // hardened failed: unexpected
  rep.runs[1].failures_per_property["quantity-conservation"] = 1;
  rep.runs[1].assertions[0].passed = false;
  const std::string md = to_markdown(rep);
  const size_t summary = md.find("## Summary"), unexpected = md.find("## Unexpected results"),
               failing = md.find("## Failing rows"), matrix = md.find("## Matrix"), runs = md.find("## Runs");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_LT(summary, unexpected);
  EXPECT_LT(unexpected, failing);
  EXPECT_LT(failing, matrix);
  EXPECT_LT(matrix, runs);
  EXPECT_NE(md.find("| combo | hardened | 0 | 1 |"), std::string::npos) << md.substr(0, 800);
  EXPECT_NE(md.find("`scenarios/combo/s.yaml` (hardened): expected pass"), std::string::npos);
  // Evidence is capped on the page; report.json keeps every line.
  rep.runs[0].assertions[0].evidence.assign(40, "line");
  EXPECT_NE(to_markdown(rep).find("35 more (report.json has every line)"), std::string::npos);
  EXPECT_NE(to_json(rep).find("\"line\",\"line\""), std::string::npos);
  const std::string summary_md = to_summary_markdown(rep);
  EXPECT_NE(summary_md.find("## Unexpected results"), std::string::npos);
  EXPECT_EQ(summary_md.find("## Matrix"), std::string::npos);
}

TEST(Report, SummaryStaysUnderItsLimit) {
  Report rep = sample();
  for (int i = 0; i < 3000; ++i) {
    RunRecord r = run("hardened", false, {"COMBO-T6"});
    r.scenario_file = "scenarios/combo/unexpected-" + std::to_string(i) + ".yaml";
    rep.runs.push_back(r);
  }
  const std::string text = to_summary_markdown(rep, 64 * 1024);
  EXPECT_LE(text.size(), 64u * 1024);
  EXPECT_NE(text.find("## Summary"), std::string::npos);
  EXPECT_NE(text.find("more"), std::string::npos);
}

TEST(Report, JsonRoundTrips) {
  Report rep = sample();
  rep.runs[0].seeds.push_back(18446744073709551615ULL);
  rep.runs[0].assertions[0].evidence.push_back("quote \" backslash \\ tab \t unicode \xe4\xb8\xad");
  std::string err;
  std::optional<Report> back = report_from_json(to_json(rep), &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(*back, rep);
  EXPECT_FALSE(report_from_json("{\"format\":\"other\"}", &err));
  EXPECT_FALSE(report_from_json("{\"format\":", &err));
}

TEST(Report, MergeCombinesShards) {
  Report a = sample(), b = sample();
  b.runs[0].seeds = {4, 5};
  b.runs[0].failing_seeds = {5};
  b.runs[0].failures_per_property["quantity-conservation"] = 1;
  b.runs[1].seeds = {4, 5};
  b.runs[1].assertions[0].passed = false;  // hardened failed on a seed of shard b
  b.runs[1].failing_seeds = {4};
  Report m = merge_reports({a, b}, "2025-02-02T00:00:00Z", "cafe");
  ASSERT_EQ(m.runs.size(), 2u);
  EXPECT_EQ(m.runs[0].seeds, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(m.runs[0].failing_seeds, (std::vector<uint64_t>{2, 5}));
  EXPECT_EQ(m.runs[0].failures_per_property["quantity-conservation"], 2);
  EXPECT_EQ(m.runs[0].assertions[0].checks, 84);
  EXPECT_FALSE(m.runs[1].assertions[0].passed);
  EXPECT_EQ(m.commit, "cafe");
  EXPECT_EQ(verdict(judge_rows(m), "COMBO-T6", "hardened").status, RowStatus::kFail);
  EXPECT_EQ(report_exit_code(m), 1);
}

TEST(Report, WritersCarryEvidenceAndCommit) {
  Report rep = sample();
  const std::string md = to_markdown(rep);
  EXPECT_NE(md.find("deadbeef"), std::string::npos);
  EXPECT_NE(md.find("| COMBO-T6 |"), std::string::npos);
  EXPECT_NE(md.find("faultline replay min.yaml"), std::string::npos);
  EXPECT_NE(md.find("abcdef0123456789"), std::string::npos);
  const std::string html = to_html(rep);
  EXPECT_NE(html.find("<table id=\"matrix\">"), std::string::npos);
  EXPECT_NE(html.find("id=\"ev-COMBO-T6-spec\""), std::string::npos);  // the row's cell
  EXPECT_NE(html.find("href=\"#run-0\""), std::string::npos);          // links to the run's evidence
  EXPECT_NE(html.find("id=\"run-0\""), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<b>&"), std::string::npos);        // escaped
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);  // self-contained
  const std::string junit = to_junit_xml(rep);
  EXPECT_NE(junit.find("<testsuite name=\"combo.spec\""), std::string::npos);
  EXPECT_EQ(junit.find("<failure"), std::string::npos);  // the spec failure is expected
  EXPECT_NE(junit.find("<skipped"), std::string::npos);
  rep.runs[1].failing_seeds = {1};
  EXPECT_NE(to_junit_xml(rep).find("<failure"), std::string::npos);
}

// A real-mode run (a load benchmark) names its machine and command instead of a trace
// fingerprint, in every writer and through JSON; a simulated run's document has neither key.
TEST(Report, ARealModeRunNamesItsMachineAndCommand) {
  Report rep = sample();
  EXPECT_EQ(to_json(rep).find("\"machine\""), std::string::npos);
  rep.runs[1].machine = "2 cores, Test CPU, 8.0 GiB";
  rep.runs[1].command = "build/bench/likes_load_bench --seconds 5";
  rep.runs[1].fingerprint = 0;
  ASSERT_TRUE(rep.runs[1].real_mode());
  std::string err;
  std::optional<Report> back = report_from_json(to_json(rep), &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(*back, rep);
  const std::string md = to_markdown(rep);
  EXPECT_NE(md.find("real mode on 2 cores, Test CPU, 8.0 GiB"), std::string::npos);
  EXPECT_NE(md.find("`build/bench/likes_load_bench --seconds 5`"), std::string::npos);
  EXPECT_NE(md.find("trace fingerprint `1122334455667788`"), std::string::npos);  // the simulated run's
  EXPECT_EQ(md.find("trace fingerprint `0000000000000000`"), std::string::npos);  // none for the real one
  const std::string html = to_html(rep);
  EXPECT_NE(html.find("<th>real mode</th><td>on 2 cores, Test CPU, 8.0 GiB"), std::string::npos);
  EXPECT_EQ(html.find("<code>0000000000000000</code>"), std::string::npos);
  // Its row is judged like any other: evidence, and the assertions' verdicts.
  EXPECT_EQ(verdict(judge_rows(rep), "COMBO-T6", "hardened").status, RowStatus::kPass);
  rep.runs[1].assertions[0].passed = false;
  rep.runs[1].failing_seeds = {1};
  EXPECT_EQ(verdict(judge_rows(rep), "COMBO-T6", "hardened").status, RowStatus::kFail);
}

// A run that measured figures (an evaluation) and asserted nothing makes its rows MEASURED, never
// PASS; a threshold it declared is an assertion, and then the row is PASS or FAIL.
RunRecord measured_run(const std::string& variant) {
  RunRecord r;
  r.scenario = "evaluate-" + variant;
  r.scenario_file = "evaluations/combo/e.yaml";
  r.system = "combo";
  r.variant = variant;
  r.matrix_rows = {"COMBO-G1"};
  r.seeds = {7};
  r.config_digest = 0x1234;
  r.fingerprint = 0x5678;
  r.command = "faultline evaluate evaluations/combo/e.yaml";
  r.figures = {FigureRecord{"g1_share", "share of something", "rule-a", 0.25, "share"},
               FigureRecord{"g1_share", "share of something", "rule-b", 0.5, "share"},
               FigureRecord{"g1_count", "count", "rule-a", 3, ""}};
  r.charts = {ChartRecord{"over/time",
                          "A <title>",
                          "minutes",
                          "share",
                          false,
                          {ChartSeries{"rule-a", {0, 1, 2}, {0.1, 0.2, 0.3}}, ChartSeries{"rule-b", {0, 2}, {1, 0}}}}};
  return r;
}

TEST(Report, AMeasuringRunIsMeasuredUntilAThresholdJudgesIt) {
  Report rep = sample();
  rep.runs.push_back(measured_run("hardened"));
  EXPECT_EQ(verdict(judge_rows(rep), "COMBO-G1", "hardened").status, RowStatus::kMeasured);
  EXPECT_EQ(verdict(judge_rows(rep), "COMBO-G1", "spec").status, RowStatus::kNotRun);
  EXPECT_EQ(report_exit_code(rep), 0);
  RunRecord& m = rep.runs.back();
  m.assertions.push_back(
      AssertionRecord{"threshold g1_share of rule-a <= 0.2", {}, false, "declared", 1, {"measured 0.25"}});
  m.failures_per_property[m.assertions.back().property] = 1;
  m.failing_seeds = {7};
  EXPECT_EQ(verdict(judge_rows(rep), "COMBO-G1", "hardened").status, RowStatus::kFail);
  EXPECT_EQ(report_exit_code(rep), 1);
  m.assertions.back().passed = true;
  m.failures_per_property.clear();
  m.failing_seeds.clear();
  EXPECT_EQ(verdict(judge_rows(rep), "COMBO-G1", "hardened").status, RowStatus::kPass);
  // Figures without seeds or a digest are no evidence.
  rep.runs.back() = measured_run("hardened");
  rep.runs.back().config_digest = 0;
  EXPECT_EQ(verdict(judge_rows(rep), "COMBO-G1", "hardened").status, RowStatus::kNotRun);
}

TEST(Report, FiguresAndChartsRoundTripAndAreShown) {
  Report rep = sample();
  rep.runs.push_back(measured_run("hardened"));
  std::string err;
  const std::optional<Report> back = report_from_json(to_json(rep), &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(*back, rep);
  EXPECT_EQ(to_json(sample()).find("\"figures\""), std::string::npos);  // judging runs' documents unchanged
  const std::string md = to_markdown(rep);
  EXPECT_NE(md.find("| MEASURED |"), std::string::npos);
  EXPECT_NE(md.find("| share of something (`g1_share`) | 25.0 % | 50.0 % |"), std::string::npos) << md;
  EXPECT_NE(md.find("- chart: [A <title>](charts/run-2-over_time.svg)"), std::string::npos);
  EXPECT_NE(md.find("command `faultline evaluate evaluations/combo/e.yaml`"), std::string::npos);
  const std::string html = to_html(rep);
  EXPECT_NE(html.find("<div class=\"chart\"><svg"), std::string::npos);
  EXPECT_NE(html.find("A &lt;title&gt;"), std::string::npos);
  EXPECT_NE(html.find("class=\"MEASURED\""), std::string::npos);
  const std::filesystem::path dir = std::filesystem::path(FAULTLINE_BINARY_DIR) / "report_figures_test";
  std::filesystem::remove_all(dir);
  ASSERT_EQ(write_report_files(rep, dir.string()), "");
  EXPECT_TRUE(std::filesystem::exists(dir / "charts" / "run-2-over_time.svg"));
}

TEST(Charts, DrawsEverySeriesAndSaysWhenThereIsNoData) {
  const ChartRecord c = measured_run("hardened").charts[0];
  const std::string svg = chart_svg(c);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 10, true);
  size_t polylines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++polylines;
  EXPECT_EQ(polylines, 2u);
  EXPECT_NE(svg.find(">rule-b</text>"), std::string::npos);
  EXPECT_EQ(svg.find("no data"), std::string::npos);
  EXPECT_NE(chart_svg(ChartRecord{"empty", "t", "x", "y", false, {}}).find("no data"), std::string::npos);
  EXPECT_EQ(chart_file(3, ChartRecord{"../../etc/x", "", "", "", false, {}}), "charts/run-3-______etc_x.svg");
}

// The page draws the events that lead to the violation, not the boot events before them, and
// shows the first evidence lines of a failing property with a count of the rest.
TEST(ReportHtml, InlineDiagramEndsAtTheViolationAndEvidenceIsCapped) {
  Report rep = sample();
  Counterexample& c = *rep.runs[0].counterexample;
  c.timeline.clear();
  for (int i = 0; i < 60; ++i)
    c.timeline.push_back({1000 * i, "op", "", "client-0", "step-" + std::to_string(i) + "."});
  c.timeline[45] = {45000, "violation", "", "", "quantity-conservation"};
  rep.runs[0].assertions[0].evidence = {"ev-a", "ev-b", "ev-c", "ev-d", "ev-e", "ev-f"};
  const std::string html = to_html(rep);
  EXPECT_NE(html.find("step-44."), std::string::npos);  // just before the violation
  EXPECT_NE(html.find("step-26."), std::string::npos);  // the window's first event
  EXPECT_EQ(html.find("step-25."), std::string::npos);
  EXPECT_EQ(html.find("step-46."), std::string::npos);  // after the violation
  EXPECT_NE(html.find("ev-c"), std::string::npos);
  EXPECT_EQ(html.find("ev-d"), std::string::npos);
  EXPECT_NE(html.find("... 3 more in report.json"), std::string::npos);
}

TEST(Timeline, ParsesTraceAndDraws) {
  const std::string jsonl =
      "{\"t_us\":5,\"kind\":\"resume\",\"node\":\"n1\",\"process\":\"a\",\"detail\":\"\",\"fp\":\"0\"}\n"
      "{\"t_us\":10,\"kind\":\"send\",\"node\":\"n1\",\"process\":\"a\",\"detail\":\"rpc inc -> b\",\"fp\":\"0\"}\n"
      "not json\n"
      "{\"t_us\":20,\"kind\":\"fault\",\"node\":\"\",\"process\":\"b\",\"detail\":\"crash; #1\",\"fp\":\"0\"}\n"
      "{\"t_us\":30,\"kind\":\"deliver\",\"node\":\"n2\",\"process\":\"b\",\"detail\":\"from a: inc\",\"fp\":\"0\"}\n";
  size_t bad = 0;
  auto events = parse_trace_jsonl(jsonl, &bad);
  EXPECT_EQ(bad, 1u);
  ASSERT_EQ(events.size(), 4u);
  auto shown = select_timeline(events, 100);
  EXPECT_EQ(shown.size(), 3u);  // the resume is not drawn
  EXPECT_EQ(message_peer(shown[0]), "b");
  EXPECT_EQ(message_peer(shown[2]), "a");
  const std::string m = to_mermaid(shown);
  EXPECT_NE(m.find("sequenceDiagram"), std::string::npos);
  EXPECT_NE(m.find("L0->>L1"), std::string::npos);
  EXPECT_NE(m.find("FAULT"), std::string::npos);
  EXPECT_EQ(m.find("crash;"), std::string::npos);  // ';' escaped for Mermaid
  const std::string svg = to_svg(shown);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("marker-end"), std::string::npos);
  // Selection keeps faults and the last events.
  std::vector<TimelineEvent> many;
  for (int i = 0; i < 1000; ++i) many.push_back({i, "send", "n", "a", "x -> b"});
  many[3].kind = "fault";
  auto sel = select_timeline(many, 10);
  ASSERT_EQ(sel.size(), 10u);
  EXPECT_EQ(sel[0].kind, "fault");
  EXPECT_EQ(sel.back().t_us, 999);
}

TEST(Json, ParsesAndRejects) {
  auto j = parse_json(R"({"a":[1,2,{"b":"\u4e2d\n"}],"n":-5,"t":true,"z":null})");
  ASSERT_TRUE(j);
  EXPECT_EQ(json_i64(*j, "n"), -5);
  EXPECT_TRUE(json_flag(*j, "t"));
  EXPECT_EQ(json_str(json_items(*j, "a")[2], "b"), "\xe4\xb8\xad\n");
  for (const char* bad : {"", "{", "[1,", "{\"a\" 1}", "\"abc", "tru", "{}x"}) { EXPECT_FALSE(parse_json(bad)) << bad; }
  std::string deep(10000, '[');
  EXPECT_FALSE(parse_json(deep));
}

// 64-bit seeds, digests and fingerprints survive a write and a read exactly.
TEST(Json, SixtyFourBitIntegersAreExact) {
  const uint64_t big = 0xfedcba9876543210ull;
  const int64_t neg = -9223372036854775807ll - 1;
  const std::string text = json_dump(Json{{"u", big}, {"i", neg}, {"w", json_double(2.0)}, {"x", json_double(0.25)}});
  EXPECT_EQ(text, "{\"u\":18364758544493064720,\"i\":-9223372036854775808,\"w\":2,\"x\":0.25}");
  auto j = parse_json(text);
  ASSERT_TRUE(j);
  EXPECT_EQ(json_u64(*j, "u"), big);
  EXPECT_EQ(json_i64(*j, "i"), neg);
  EXPECT_EQ(json_quote("a\"b\\\n\x01"), "\"a\\\"b\\\\\\n\\u0001\"");
}

// The layout puts one record a line where asked, and nothing else changes.
TEST(Json, LayoutPutsRecordsOnLines) {
  const Json doc{{"a", 1}, {"runs", Json::array({Json{{"x", 1}}, Json{{"x", 2}}})}, {"t", {1, 2}}};
  EXPECT_EQ(json_dump(doc, JsonLayout{{"runs"}, {"t"}}),
            "{\"a\":1,\n\"runs\":[\n{\"x\":1},\n{\"x\":2}],\"t\":[1,\n2]}");
  EXPECT_EQ(json_dump(doc), "{\"a\":1,\"runs\":[{\"x\":1},{\"x\":2}],\"t\":[1,2]}");
}

// Renders report.html in headless Chromium: the DOM has the matrix table and a screenshot is
// written. Skipped (loudly) when Chromium is not installed: apt-get install -y chromium.
TEST(ReportHtml, RendersInHeadlessChromium) {
  const char* candidates[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"};
  std::string chromium;
  for (const char* c : candidates) {
    if (std::filesystem::exists(c)) chromium = c;
  }
  ASSERT_FALSE(chromium.empty()) << "Chromium not installed (scripts/install-deps.sh installs it): the HTML report "
                                    "must be rendered to be checked";
  const std::filesystem::path dir = std::filesystem::path(FAULTLINE_BINARY_DIR) / "report_html_test";
  std::filesystem::remove_all(dir);
  Report rep = sample();
  rep.runs.push_back(measured_run("hardened"));  // figures and a chart, drawn inline
  ASSERT_EQ(write_report_files(rep, dir.string()), "");
  for (const char* f : {"report.md", "report.html", "junit.xml", "report.json"}) {
    EXPECT_GT(std::filesystem::file_size(dir / f), 100u) << f;
  }
  const std::string flags =
      " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run"
      " --user-data-dir=" +
      (dir / "profile").string();
  const std::string url = "file://" + (dir / "report.html").string();
  const std::string dom_path = (dir / "dom.html").string();
  const std::string png = (dir / "report.png").string();
  const std::string dump = chromium + flags + " --dump-dom " + url + " > " + dom_path + " 2>/dev/null";
  ASSERT_EQ(std::system(dump.c_str()), 0) << dump;
  const std::string dom = read_file(dom_path);
  EXPECT_NE(dom.find("id=\"matrix\""), std::string::npos) << dom.substr(0, 500);
  EXPECT_NE(dom.find("COMBO-T6"), std::string::npos);
  EXPECT_NE(dom.find("id=\"summary\""), std::string::npos);                  // opens with the summary
  EXPECT_NE(dom.find("id=\"f-status\""), std::string::npos);                 // a filter
  EXPECT_NE(dom.find("class=\"timeline-box diagram\""), std::string::npos);  // a counterexample's diagram
  EXPECT_NE(dom.find("<svg"), std::string::npos);
  EXPECT_NE(dom.find("<div class=\"chart\"><svg"), std::string::npos);  // a measuring run's chart
  EXPECT_NE(dom.find("<polyline"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "summary.md"));
  EXPECT_TRUE(std::filesystem::exists(dir / "counterexamples" / "s-spec-spec-seed2.md"));
  const std::string shot =
      chromium + flags + " --window-size=1400,1800 --screenshot=" + png + " " + url + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(shot.c_str()), 0) << shot;
  const std::string image = read_file(png);
  ASSERT_GT(image.size(), 1000u);
  EXPECT_EQ(image.substr(1, 3), "PNG");
  RecordProperty("screenshot", png);
}

}  // namespace
}  // namespace fl::reports
