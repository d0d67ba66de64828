// Rows A01-A07 on hand-built board histories whose figures are known.

#include "properties/ranking/evaluation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fl::ranking::props {
namespace {

// A snapshot at `at_s` listing `topics` in order.
PublishedSnapshot snap(int64_t at_s, const std::vector<std::string>& topics) {
  PublishedSnapshot s;
  s.at_s = at_s;
  for (const std::string& t : topics) s.entries.push_back(PublishedEntry{t, static_cast<int>(s.entries.size()) + 1});
  return s;
}

BoardHistory board(std::vector<PublishedSnapshot> snapshots, int top_n = 2) {
  BoardHistory b;
  b.rule_version = "rule-test";
  b.top_n = top_n;
  b.snapshots = std::move(snapshots);
  return b;
}

TopicTruth truth(const std::string& topic, TruthKind kind, const std::string& channel = "c1") {
  TopicTruth t;
  t.topic_id = topic;
  t.kind = kind;
  t.channel = channel;
  t.region = "r1";
  t.language = "zh-CN";
  return t;
}

TEST(Evaluation, A01AndA06CountWhatStayedWhatMovedAndWhatLeft) {
  // [a b] -> [b a] -> [b c] -> [b c]
  const EvaluationFigures f = evaluate_board(
      board({snap(0, {"a", "b"}), snap(60, {"b", "a"}), snap(120, {"b", "c"}), snap(180, {"b", "c"})}), {});
  EXPECT_EQ(f.snapshots, 4);
  EXPECT_DOUBLE_EQ(f.a01_overlap, (1.0 + 0.5 + 1.0) / 3);
  EXPECT_DOUBLE_EQ(f.a01_mean_rank_change, (1.0 + 1.0 + 0 + 0 + 0) / 5);  // a, b swap; b stays; b, c stay
  EXPECT_EQ(f.a01_exits, 1);                                              // a
  EXPECT_DOUBLE_EQ(f.a06_change_rate, (0 + 0.5 + 0) / 3);                 // c entered one of two places
  EXPECT_DOUBLE_EQ(f.a06_mean_dwell_snapshots, (2.0 + 4.0 + 2.0) / 3);    // a 2, b 4, c 2
}

TEST(Evaluation, A02MeasuresFromTheTrueOnsetAndCountsMisses) {
  TopicTruth fast = truth("fast", TruthKind::kBurst), slow = truth("slow", TruthKind::kBurst),
             never = truth("never", TruthKind::kBurst);
  fast.onset_s = 50;
  slow.onset_s = 0;
  never.onset_s = 0;
  const EvaluationFigures f =
      evaluate_board(board({snap(60, {"fast"}), snap(120, {"fast"}), snap(180, {"slow"})}), {fast, slow, never});
  EXPECT_EQ(f.a02_latency_s.count, 2);
  EXPECT_DOUBLE_EQ(f.a02_latency_s.p50, 10);
  EXPECT_DOUBLE_EQ(f.a02_latency_s.max, 180);
  EXPECT_EQ(f.a02_missed, 1);
}

TEST(Evaluation, A03IsTheShareOfSnapshotsEvergreenTopicsHeld) {
  const EvaluationFigures f = evaluate_board(board({snap(0, {"e1", "x"}), snap(60, {"x", "e1"}), snap(120, {"x"})}),
                                             {truth("e1", TruthKind::kEvergreen), truth("e2", TruthKind::kEvergreen)});
  EXPECT_DOUBLE_EQ(f.a03_listed_share, 2.0 / 6);  // e1 in 2 of 3, e2 in none
  EXPECT_DOUBLE_EQ(f.a03_mean_rank, 1.5);
}

TEST(Evaluation, A04ComparesBotsListedAndTheirAdjustmentWithOrganicTopics) {
  PublishedSnapshot s = snap(0, {"bot1", "bot3"}), later = snap(60, {"bot1"});
  s.candidates = {{"bot1", 100, 10}, {"bot2", 100, 30}, {"org", 50, 45}};
  TopicTruth bot1 = truth("bot1", TruthKind::kBot), bot2 = truth("bot2", TruthKind::kBot),
             bot3 = truth("bot3", TruthKind::kBot);
  bot1.onset_s = 60;
  bot3.onset_s = 60;  // listed only before its swarm acted: organic, not the bots' doing
  const EvaluationFigures f = evaluate_board(board({s, later}), {bot1, bot2, bot3, truth("org", TruthKind::kOrdinary)});
  EXPECT_DOUBLE_EQ(f.a04_bot_listed_share, 1.0 / 3);
  EXPECT_DOUBLE_EQ(f.a04_bot_adjustment, 1 - 40.0 / 200);
  EXPECT_DOUBLE_EQ(f.a04_organic_adjustment, 1 - 45.0 / 50);
}

TEST(Evaluation, A05SeparatesTrueBlocksFromFalseOnes) {
  PublishedSnapshot s = snap(0, {});
  s.blocked = {"risky1", "normal1"};
  const EvaluationFigures f =
      evaluate_board(board({s}), {truth("risky1", TruthKind::kRisky), truth("risky2", TruthKind::kRisky),
                                  truth("normal1", TruthKind::kOrdinary), truth("normal2", TruthKind::kBurst),
                                  truth("normal3", TruthKind::kEvergreen), truth("normal4", TruthKind::kBot)});
  EXPECT_DOUBLE_EQ(f.a05_block_rate, 0.5);
  EXPECT_DOUBLE_EQ(f.a05_false_block_rate, 0.25);
}

TEST(Evaluation, A07RecallPerChannelAndItsSpread) {
  TopicTruth a = truth("a", TruthKind::kBurst, "news"), b = truth("b", TruthKind::kBurst, "news"),
             c = truth("c", TruthKind::kBurst, "sports"), d = truth("d", TruthKind::kOrdinary, "sports");
  a.deserves_list = b.deserves_list = c.deserves_list = true;
  const EvaluationFigures f = evaluate_board(board({snap(0, {"c", "a"}), snap(60, {"a", "d"})}), {a, b, c, d});
  EXPECT_EQ(f.a07_by_channel.at("news").deserving, 2);
  EXPECT_DOUBLE_EQ(f.a07_by_channel.at("news").recall, 0.5);
  EXPECT_DOUBLE_EQ(f.a07_by_channel.at("news").mean_best_rank, 1);
  EXPECT_DOUBLE_EQ(f.a07_by_channel.at("sports").recall, 1);
  EXPECT_DOUBLE_EQ(f.a07_recall_spread, 0.5);
  EXPECT_DOUBLE_EQ(f.a07_by_language.at("zh-CN").recall, 2.0 / 3);
}

TEST(Evaluation, AnEmptyHistoryMeasuresNothingAndDividesByNothing) {
  const EvaluationFigures f = evaluate_board(board({}), {truth("b", TruthKind::kBurst)});
  EXPECT_EQ(f.snapshots, 0);
  EXPECT_EQ(f.a02_missed, 1);
  EXPECT_EQ(f.a01_overlap, 0);
  EXPECT_EQ(f.a03_listed_share, 0);
}

TEST(Distribution, NearestRankPercentiles) {
  const Distribution d = distribution_of({5, 1, 4, 2, 3, 10, 6, 7, 8, 9});
  EXPECT_EQ(d.count, 10);
  EXPECT_DOUBLE_EQ(d.mean, 5.5);
  EXPECT_DOUBLE_EQ(d.p50, 5);
  EXPECT_DOUBLE_EQ(d.p90, 9);
  EXPECT_DOUBLE_EQ(d.max, 10);
}

}  // namespace
}  // namespace fl::ranking::props
