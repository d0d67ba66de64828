// The offline evaluation of seed 004 §16.2 (004:L453-464): rows A01-A07 as figures, computed from
// what a board published (its snapshots, the candidate values it stored, the risk blocks it
// recorded) against the workload's ground-truth labels, which the ranking never sees. Nothing here
// reads a scorer's internals: a rule is judged by its output, as a ranking team would judge it.
//
// The figures measure, they do not pass or fail; a caller may compare them with thresholds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fl::ranking::props {

// What the workload's generator knows of a topic and the board does not.
enum class TruthKind { kOrdinary, kBurst, kEvergreen, kBot, kRisky };
const char* truth_kind_name(TruthKind k);  // "ordinary", "burst", "evergreen", "bot", "risky"

struct TopicTruth {
  std::string topic_id;
  TruthKind kind = TruthKind::kOrdinary;
  // A burst's true onset, or when a bot swarm starts (simulated seconds); -1 for other kinds.
  int64_t onset_s = -1;
  bool deserves_list = false;  // ground truth: organic heat that belongs on the list (A07 recall)
  std::string channel, region, language;
};

struct PublishedEntry {
  std::string topic_id;
  int rank = 0;  // 1-based
};

// The values a snapshot stored for one candidate (004 §9.2, L206-209), summed over its signals.
struct PublishedCandidate {
  std::string topic_id;
  int64_t raw = 0;
  int64_t adjusted = 0;
};

struct PublishedSnapshot {
  int64_t at_s = 0;
  std::vector<PublishedEntry> entries;         // best first
  std::vector<PublishedCandidate> candidates;  // every candidate the snapshot scored
  std::vector<std::string> blocked;            // topics a risk action blocked at this snapshot
};

// One board's published history under one rule, snapshots in time order.
struct BoardHistory {
  std::string rule_version;
  int top_n = 0;
  std::vector<PublishedSnapshot> snapshots;
};

struct Distribution {
  int64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, max = 0;
};
// Nearest-rank percentiles of the values (empty: all zero).
Distribution distribution_of(std::vector<double> values);

struct GroupRecall {
  int64_t deserving = 0;  // topics of the group that deserve the list
  int64_t listed = 0;     // of those, listed at least once
  double recall = 0;
  double mean_best_rank = 0;  // over the listed ones
};

struct EvaluationFigures {
  int64_t snapshots = 0;
  // A01 Top N stability: mean share of the list kept from the previous snapshot, mean absolute rank
  // change of kept topics, topics that left.
  double a01_overlap = 0;
  double a01_mean_rank_change = 0;
  int64_t a01_exits = 0;
  // A02 burst discovery: seconds from a burst's true onset to its first listing; misses never listed.
  Distribution a02_latency_s;
  int64_t a02_missed = 0;
  // A03 evergreen topics: share of snapshots they were listed, and their mean rank when listed.
  double a03_listed_share = 0;
  double a03_mean_rank = 0;
  // A04 bots: share of bot topics listed once their swarm acts (onset_s); mean risk adjustment (1 - adjusted / raw) of bot and
  // of organic candidates.
  double a04_bot_listed_share = 0;
  double a04_bot_adjustment = 0;
  double a04_organic_adjustment = 0;
  // A05 risk: share of truly risky topics blocked; share of the others blocked (false blocks).
  double a05_block_rate = 0;
  double a05_false_block_rate = 0;
  // A06 jitter: mean share of the list that changed per snapshot; mean dwell in snapshots.
  double a06_change_rate = 0;
  double a06_mean_dwell_snapshots = 0;
  // A07 scope bias: recall of deserving topics per channel, region and language.
  std::map<std::string, GroupRecall> a07_by_channel, a07_by_region, a07_by_language;
  double a07_recall_spread = 0;  // max - min recall over the channels
};

// The figures of one board history against the labels. Topics without a label count as ordinary.
EvaluationFigures evaluate_board(const BoardHistory& board, const std::vector<TopicTruth>& truth);

}  // namespace fl::ranking::props
