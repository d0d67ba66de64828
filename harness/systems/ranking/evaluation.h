// `faultline evaluate`: the offline evaluation of score rules (seed 004 §11.2 L302-303, §16.2
// L453-464). An evaluation file declares a labelled workload and two or more score rule versions;
// the workload's history is generated once, every rule scores the same frozen inputs (the same
// scope, input watermark, window configuration and candidate manifests, as §11.2 requires), and
// each rule's published board is measured against the labels (rows A01-A07,
// properties/ranking/evaluation.h).
//
// The cut (the faithful one of §11.2, "history replay"): the days before the evaluated stretch enter
// as per-hour baselines computed from generated daily counts; the evaluated stretch is generated
// event by event and passes the abuse layers (impl/ranking/abuse.h) window by window. The medium
// window is the sum of its one-minute windows' values (an actor active in two minutes counts
// twice there), per short-window length.
//
// Deterministic: the same file gives the same figures in any process (sim::Rng from the file's seed).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "impl/ranking/abuse.h"
#include "impl/ranking/scoring.h"
#include "properties/ranking/evaluation.h"
#include "reports/report.h"

namespace fl {

// How many topics of each kind, and how loud (effective actors per minute per heat signal).
struct WorkloadTopics {
  int ordinary = 30, burst = 5, evergreen = 4, bot = 3, risky = 3;
  double ordinary_rate = 1.0;       // per minute
  double evergreen_rate = 8.0;      // flat and high, every day at this level
  double burst_rate = 6.0;          // after the onset (before it: ordinary_rate / 4, and no history)
  double bot_accounts = 40;         // accounts of one bot swarm, acting together
  double risky_report_share = 0.6;  // true reports per heat actor of a risky topic
  double brigade_share = 0.1;       // share of ordinary topics a report brigade (new accounts) attacks
};

struct Workload {
  std::string name;
  uint64_t seed = 1;
  int history_days = 7;
  int64_t duration_s = 4 * 3600;
  int64_t snapshot_interval_s = 60;
  int64_t short_window_s = 300;
  int64_t medium_window_s = 3600;
  WorkloadTopics topics;
  std::vector<std::string> channels = {"news"}, regions = {"CN-SH"}, languages = {"zh-CN"};
  std::map<std::string, double> channel_volume;  // per channel, a multiplier of every rate (1)
  // Generate the history days event by event too (their baselines are then computed from those
  // events, as from a history file, and --write-history writes them); else they enter as
  // generated per-hour counts. Event by event is slow for many topics and days.
  bool history_as_events = false;
  // Seconds from midnight of the first history day to the stretch's start: the hour of day of a
  // stretch time at_s is ((start_s + at_s) / 3600) % 24. Generated: the history days, then 08:00.
  int64_t start_s = 7 * 86400 + 8 * 3600;
};

// An acceptance threshold a file declares on one figure under one rule (e.g. the median A02
// latency of rule-v3 at most 60 s): the figure's row is then PASS or FAIL instead of MEASURED.
struct Threshold {
  std::string rule;
  std::string figure;  // a figure key (figure_keys())
  std::optional<double> max, min;
};

struct LabelledHistory;

// An event history in two CSV files (docs/evaluation.md, "History files"), paths as given.
struct HistoryFiles {
  std::string events, labels;
};

struct EvaluationSpec {
  std::string file;
  // With a history, its files replace the generator: the workload's windows, snapshot interval and
  // duration (the stretch: the history's last duration_s) still apply, its topics do not.
  std::optional<HistoryFiles> history;
  std::shared_ptr<const LabelledHistory> history_data;  // read when the file is loaded
  Workload workload;
  ranking::AbuseOptions abuse;
  std::vector<ranking::ScoreRule> rules;  // at least two, distinct versions
  std::vector<Threshold> thresholds;
};

// Parses an evaluation file (docs/evaluation.md). nullopt with *error = "FILE:LINE:COL: what" on
// bad input.
std::optional<EvaluationSpec> load_evaluation_file(const std::string& path, std::string* error);
std::optional<EvaluationSpec> load_evaluation_text(const std::string& yaml, const std::string& file,
                                                   std::string* error);

// The generated history: the evaluated stretch's events in time order, the per-hour baselines
// (topic -> hour of day -> effective actors per short window, per signal) and the labels.
struct LabelledHistory {
  std::vector<ranking::BehaviourEvent> prior_events;  // before the stretch (at_ms < 0), when kept
  std::vector<ranking::BehaviourEvent> events;
  std::map<std::string, std::map<int, std::array<double, ranking::kSignals>>> baselines;
  std::vector<ranking::props::TopicTruth> truth;
};
LabelledHistory generate_history(const Workload& w, const ranking::AbuseOptions& abuse);

// The per-hour baselines of the events before the stretch (at_ms in [-days * 86,400,000, 0)): per
// topic, hour of day and signal, the mean adjusted value of a short window at that hour, empty
// windows included; a topic without such events has none (a new topic).
std::map<std::string, std::map<int, std::array<double, ranking::kSignals>>> baselines_from_events(
    const std::vector<ranking::BehaviourEvent>& prior, int days, const Workload& w, const ranking::AbuseOptions& abuse);

// Reads a history: the events of its last w->duration_s are the stretch (at_ms re-based to its
// start), the whole days before it give the baselines, the labels the truth; sets w->start_s and
// the workload's channels, regions and languages from the labels. nullopt with *error =
// "FILE:LINE: what" on bad input.
std::optional<LabelledHistory> read_history(const HistoryFiles& files, Workload* w, const ranking::AbuseOptions& abuse,
                                            std::string* error);
// Writes the history's events (prior days, if kept, and the stretch; at_ms counted from midnight
// of the first history day) and labels as DIR/events.csv and DIR/labels.csv. "" or an error.
std::string write_history(const LabelledHistory& h, const Workload& w, const std::string& dir);
// The history an evaluation runs on: the files read at load time, else the generated one.
LabelledHistory history_of(const EvaluationSpec& spec);

// The frozen inputs of every snapshot of the stretch: one list of candidates per snapshot.
struct FrozenInputs {
  std::vector<int64_t> at_s;
  std::vector<std::vector<ranking::CandidateInputs>> candidates;
};
FrozenInputs freeze_inputs(const LabelledHistory& h, const Workload& w, const ranking::AbuseOptions& abuse);

// What one rule publishes from the frozen inputs.
ranking::props::BoardHistory publish_board(const FrozenInputs& inputs, const ranking::ScoreRule& rule);

struct RuleFigures {
  ranking::ScoreRule rule;
  ranking::props::EvaluationFigures figures;
  ranking::props::BoardHistory board;  // what it published (the charts draw it)
};
struct EvaluationResult {
  std::string workload_digest;  // of the generated history and labels
  int64_t events = 0;
  std::vector<ranking::props::TopicTruth> truth;
  std::vector<RuleFigures> rules;
};
EvaluationResult evaluate(const EvaluationSpec& spec);

// One figure of one row (A01..A07), as reports carry it (the rule left empty).
struct RowFigure {
  std::string row;
  reports::FigureRecord figure;
};
// The figures of one rule's board, rows in order. The A07 recall figures are one per channel,
// region and language of the workload ("a07_recall_channel_<name>", ...).
std::vector<RowFigure> figures_of(const ranking::props::EvaluationFigures& f);
// The figure keys a threshold may name for this workload.
std::vector<std::string> figure_keys(const Workload& w);

// Side by side, one row per figure, one column per rule; then each declared threshold.
std::string evaluation_table(const EvaluationSpec& spec, const EvaluationResult& r);
std::string evaluation_json(const EvaluationSpec& spec, const EvaluationResult& r);

// The evaluation as report runs: for each row A01-A07 and each variant (the scoring has no named
// fix: both variants run the same rule code, so they measure alike), one run with the row's
// figures under every rule, the thresholds declared on them as assertions, its charts (A01, A06:
// overlap per snapshot; A02: onset-to-listing CDF; A03: evergreen topics' rank over time; A07:
// bursts' rank over time), the workload's seed and digest, and `command` to replay it.
std::vector<reports::RunRecord> evaluation_records(const EvaluationSpec& spec, const EvaluationResult& r,
                                                   const std::string& command, const std::string& produced_at,
                                                   const std::string& commit);

}  // namespace fl
