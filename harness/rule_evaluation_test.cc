// `faultline evaluate`'s pipeline (harness/systems/ranking/evaluation.h): the shipped workload
// shows what each lever of the score rule is worth, the figures are deterministic, and bad files
// are refused with their place.

#include "harness/systems/ranking/evaluation.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fl {
namespace {

const std::string kBurstyDay = std::string(FAULTLINE_SOURCE_DIR) + "/evaluations/ranking/bursty-news-day.yaml";

const RuleFigures& of(const EvaluationResult& r, const std::string& version) {
  for (const RuleFigures& f : r.rules) {
    if (f.rule.version == version) return f;
  }
  ADD_FAILURE() << "no rule " << version;
  return r.rules.front();
}

std::string load_error(const std::string& yaml) {
  std::string error;
  EXPECT_FALSE(load_evaluation_text(yaml, "e.yaml", &error)) << yaml;
  return error;
}

const char* kRules = "rules:\n  - version: a\n  - version: b\n";

int64_t v3_missed(const EvaluationResult& r) { return of(r, "rule-v3").figures.a02_missed; }

TEST(RuleEvaluation, WithoutHysteresisTheListJittersAndWithoutBaselineEvergreenTopicsHogIt) {
  std::string error;
  const std::optional<EvaluationSpec> spec = load_evaluation_file(kBurstyDay, &error);
  ASSERT_TRUE(spec) << error;
  const EvaluationResult r = evaluate(*spec);
  const auto& v3 = of(r, "rule-v3").figures;
  const auto& no_hysteresis = of(r, "rule-v3-no-hysteresis").figures;
  const auto& no_baseline = of(r, "rule-v3-no-baseline").figures;
  ASSERT_GT(v3.snapshots, 100);
  EXPECT_GT(no_hysteresis.a06_change_rate, v3.a06_change_rate * 1.2);  // A06 (004:L196-198)
  EXPECT_LT(no_hysteresis.a06_mean_dwell_snapshots, v3.a06_mean_dwell_snapshots);
  EXPECT_GT(no_baseline.a03_listed_share, v3.a03_listed_share + 0.05);  // A03 (004:L190-192)
  EXPECT_EQ(v3.a02_missed, 0);
  EXPECT_GT(v3.a02_latency_s.count, 0);
}

TEST(RuleEvaluation, TheSameFileGivesTheSameFigures) {
  std::string error;
  std::optional<EvaluationSpec> spec = load_evaluation_file(kBurstyDay, &error);
  ASSERT_TRUE(spec) << error;
  spec->workload.duration_s = 3600;  // shorter: determinism does not need the whole day
  const std::string a = evaluation_json(*spec, evaluate(*spec)), b = evaluation_json(*spec, evaluate(*spec));
  EXPECT_EQ(a, b);
  spec->workload.seed += 1;
  EXPECT_NE(evaluation_json(*spec, evaluate(*spec)), a) << "the seed must reach the workload";
}

TEST(RuleEvaluation, RecordsCarryEachRowsFiguresThresholdsAndCharts) {
  std::string error;
  std::optional<EvaluationSpec> spec = load_evaluation_file(kBurstyDay, &error);
  ASSERT_TRUE(spec) << error;
  spec->workload.duration_s = 3600;
  spec->thresholds = {Threshold{"rule-v3", "a02_missed", 0.0, std::nullopt},
                      Threshold{"rule-v2", "a06_change_rate", std::nullopt, 2.0}};  // a share can never be 2
  const EvaluationResult r = evaluate(*spec);
  const std::vector<reports::RunRecord> records = evaluation_records(*spec, r, "faultline evaluate x", "t", "c");
  ASSERT_EQ(records.size(), 14u);  // A01-A07, each for spec and hardened
  for (const reports::RunRecord& rec : records) {
    ASSERT_EQ(rec.matrix_rows.size(), 1u);
    const std::string row = rec.matrix_rows[0];
    EXPECT_TRUE(rec.is_evidence()) << row;
    EXPECT_EQ(rec.command, "faultline evaluate x");
    EXPECT_EQ(rec.seeds, std::vector<uint64_t>{spec->workload.seed});
    for (const reports::FigureRecord& f : rec.figures) {
      EXPECT_EQ(f.key.substr(0, 3), "a0" + row.substr(2, 1)) << row << " " << f.key;  // a row's own figures only
    }
    EXPECT_EQ(rec.figures.size() % spec->rules.size(), 0u);
    if (row == "A02") {
      ASSERT_EQ(rec.assertions.size(), 1u);
      EXPECT_EQ(rec.assertions[0].passed, v3_missed(r) == 0);
      EXPECT_EQ(rec.charts.size(), 1u);
    } else if (row == "A06") {
      ASSERT_EQ(rec.assertions.size(), 1u);
      EXPECT_FALSE(rec.assertions[0].passed);
      EXPECT_FALSE(rec.passed());
    } else {
      EXPECT_TRUE(rec.assertions.empty()) << row;
    }
  }
  reports::Report report;
  report.matrices = {"ranking"};
  report.rows = {reports::MatrixRow{"A03", "ranking", "algorithm", "s", "p", {}, "004", false},
                 reports::MatrixRow{"A06", "ranking", "algorithm", "s", "p", {"RANK-37"}, "004", false}};
  report.runs = records;
  const std::vector<reports::RowVerdict> rows = reports::judge_rows(report);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].status, reports::RowStatus::kMeasured);
  EXPECT_EQ(rows[2].status, reports::RowStatus::kFail);
}

TEST(RuleEvaluation, ThresholdsNameAKnownRuleAndFigureAndABound) {
  const std::string head = std::string("workload: {channels: [news]}\n") + kRules + "thresholds:\n";
  EXPECT_NE(load_error(head + "  - {rule: c, figure: a01_exits, max: 1}\n").find("rule 'c' is not one of"),
            std::string::npos);
  EXPECT_NE(load_error(head + "  - {rule: a, figure: a01_exit, max: 1}\n").find("unknown figure 'a01_exit'"),
            std::string::npos);
  EXPECT_NE(load_error(head + "  - {rule: a, figure: a07_recall_channel_sports, max: 1}\n").find("unknown figure"),
            std::string::npos);
  EXPECT_NE(load_error(head + "  - {rule: a, figure: a01_exits}\n").find("needs 'max' or 'min'"), std::string::npos);
  std::string error;
  const auto ok =
      load_evaluation_text(head + "  - {rule: a, figure: a07_recall_channel_news, min: 0.5}\n", "e.yaml", &error);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(ok->thresholds.size(), 1u);
}

TEST(RuleEvaluation, BadFilesAreRefusedWithTheirPlace) {
  EXPECT_EQ(
      load_error(std::string("workload:\n  name: x\n  sed: 3\n") + kRules).rfind("e.yaml:3:3: unknown key 'sed'", 0),
      0u);
  EXPECT_EQ(
      load_error(std::string("workload:\n  duration_s: 5\n") + kRules).rfind("e.yaml:2:15: 'duration_s' must be in", 0),
      0u);
  EXPECT_EQ(load_error(std::string("workload:\n  duration_s: soon\n") + kRules)
                .rfind("e.yaml:2:15: 'duration_s' takes a number", 0),
            0u);
  EXPECT_NE(load_error("workload: {}\nrules:\n  - version: a\n").find("at least two"), std::string::npos);
  EXPECT_NE(load_error("workload: {}\nrules:\n  - version: a\n  - version: a\n").find("appears twice"),
            std::string::npos);
  EXPECT_NE(load_error("workload: {}\nrules:\n  - version: a\n  - {version: b, exit_score: 9}\n").find("exit score"),
            std::string::npos);
  EXPECT_NE(load_error("workload: {channel_volume: {nope: 2}}\n" + std::string(kRules))
                .find("not one of the workload's channels"),
            std::string::npos);
  EXPECT_EQ(load_error("workload: [\n").rfind("e.yaml:", 0), 0u);
  EXPECT_EQ(load_error(""), "e.yaml:1:1: empty evaluation file");
  std::string error;
  EXPECT_FALSE(load_evaluation_file("/nonexistent/e.yaml", &error));
  EXPECT_EQ(error, "/nonexistent/e.yaml: cannot open file");
}

// A small workload whose history days are generated event by event, so that it can be written as
// history files and read back.
EvaluationSpec small_history_spec() {
  std::string error;
  std::optional<EvaluationSpec> spec = load_evaluation_text(
      "workload: {name: small, seed: 5, history_days: 1, duration_s: 3600, history_as_events: true,\n"
      "           topics: {ordinary: 4, burst: 2, evergreen: 1, bot: 1, risky: 1, ordinary_rate: 0.3,\n"
      "                    evergreen_rate: 1.5, bot_accounts: 10}, channels: [news, sports]}\n"
      "rules:\n  - {version: a, baseline_correction: false}\n  - {version: b}\n",
      "small.yaml", &error);
  EXPECT_TRUE(spec) << error;
  return *spec;
}

std::vector<std::pair<std::string, double>> flat_figures(const EvaluationResult& r) {
  std::vector<std::pair<std::string, double>> out;
  for (const RuleFigures& rf : r.rules) {
    for (const RowFigure& f : figures_of(rf.figures))
      out.emplace_back(rf.rule.version + "/" + f.figure.key, f.figure.value);
  }
  return out;
}

TEST(RuleEvaluation, AHistoryWrittenAndReadBackEvaluatesAlike) {
  const EvaluationSpec generated = small_history_spec();
  const EvaluationResult direct = evaluate(generated);
  const LabelledHistory h = history_of(generated);
  ASSERT_FALSE(h.prior_events.empty());
  ASSERT_FALSE(h.baselines.empty()) << "the history days must give baselines";
  const std::filesystem::path dir = std::filesystem::path(FAULTLINE_BINARY_DIR) / "rule_evaluation_history";
  std::filesystem::remove_all(dir);
  ASSERT_EQ(write_history(h, generated.workload, dir.string()), "");
  std::ofstream((dir / "eval.yaml").string())
      << "workload: {name: small, duration_s: 3600}\nhistory: {events: events.csv, labels: labels.csv}\n"
         "rules:\n  - {version: a, baseline_correction: false}\n  - {version: b}\n";
  std::string error;
  const std::optional<EvaluationSpec> read = load_evaluation_file((dir / "eval.yaml").string(), &error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(read->workload.history_days, 1);
  EXPECT_EQ(read->workload.channels, generated.workload.channels);
  const EvaluationResult back = evaluate(*read);
  EXPECT_EQ(back.workload_digest, direct.workload_digest);
  EXPECT_EQ(flat_figures(back), flat_figures(direct));
}

std::string history_error(const std::string& events, const std::string& labels) {
  const std::filesystem::path dir = std::filesystem::path(FAULTLINE_BINARY_DIR) / "rule_evaluation_bad_history";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream((dir / "events.csv").string()) << events;
  std::ofstream((dir / "labels.csv").string()) << labels;
  Workload w;
  w.duration_s = 600;
  std::string error;
  EXPECT_FALSE(read_history({(dir / "events.csv").string(), (dir / "labels.csv").string()}, &w, {}, &error));
  return error.substr(error.find_last_of('/') + 1);
}

TEST(RuleEvaluation, BadHistoryFilesAreRefusedWithTheirLine) {
  const std::string header =
      "at_ms,event_id,topic_id,signal,actor,device,ip,account_age_days,content_digest,well_formed\n";
  const std::string labels = "topic_id,kind,onset_ms,deserves_list,channel,region,language\nt,burst,0,1,news,SH,zh\n";
  const std::string good = "700000,e1,t,search,u1,d1,i1,30,,1\n";
  EXPECT_EQ(history_error("at_ms,topic\n", labels).rfind("events.csv:1: the header must be at_ms,event_id", 0), 0u);
  EXPECT_EQ(history_error(header + good + "5,e2,t,click,u,d,i,3,,1\n", labels),
            "events.csv:3: signal must be search, post, engage, read or report");
  EXPECT_EQ(history_error(header + "x,e2,t,search,u,d,i,3,,1\n", labels),
            "events.csv:2: at_ms must be a non-negative integer");
  EXPECT_EQ(history_error(header + "5,e2,t,search,u,d,i,3,,1,extra\n", labels).rfind("events.csv:2: 11 fields", 0), 0u);
  EXPECT_EQ(history_error(header + good + "9,e3,other,search,u,d,i,3,,1\n", labels),
            "labels.csv: no label for topic other");
  EXPECT_EQ(history_error(header + good, labels + "t,bot,,0,a,b,c\n"), "labels.csv:3: topic_id empty or repeated");
  EXPECT_EQ(
      history_error(header + good, "topic_id,kind,onset_ms,deserves_list,channel,region,language\nt,hot,,0,a,b,c\n"),
      "labels.csv:2: kind must be ordinary, burst, evergreen, bot or risky");
  EXPECT_EQ(history_error(header + "5,e1,t,search,u1,d1,i1,30,,1\n", labels),
            "events.csv: shorter than the workload's duration_s");
  EXPECT_EQ(history_error("", labels), "events.csv:1: empty file (no header)");
}

}  // namespace
}  // namespace fl
