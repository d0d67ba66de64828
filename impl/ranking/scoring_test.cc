// The scoring rule of 004 §8 and its list: what each lever does, checked on hand-built inputs.

#include "impl/ranking/scoring.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace fl::ranking {
namespace {

// A candidate whose every heat signal has `actors` distinct, unflagged actors now, `medium` in the
// medium window, and `baseline` at this weekday and hour (none when baseline < 0).
CandidateInputs flat(const std::string& topic, int64_t actors, int64_t medium, double baseline) {
  CandidateInputs c;
  c.topic_id = topic;
  for (int s = 0; s < kHeatSignals; ++s) {
    c.short_window[s] = WindowValues{actors, actors, 0, actors};
    c.medium_window[s] = WindowValues{medium, medium, 0, medium};
    c.baseline[s] = std::max(0.0, baseline);
  }
  c.has_baseline = baseline >= 0;
  c.distinct_actors = actors;
  return c;
}

// Background topics below the minimum of actors: they set each signal's scale (a typical topic is
// one unit per signal) and never list.
std::vector<CandidateInputs> field(std::vector<CandidateInputs> cs) {
  for (int i = 0; i < 8; ++i) cs.push_back(flat("bg" + std::to_string(i), 4, 4, 4));
  return cs;
}

ScoreRule rule_v2() {
  ScoreRule r;
  r.version = "rule-v2";
  r.top_n = 1;
  return r;
}

std::vector<std::string> topics(const ListSnapshot& s) {
  std::vector<std::string> out;
  for (const ListEntry& e : s.entries) out.push_back(e.topic_id);
  return out;
}

TEST(Scoring, BaselineCorrectionLetsABurstBeatALouderEvergreenTopic) {
  // 004:L191: A is large but as large as ever; B is smaller but ten times its usual level.
  const std::vector<CandidateInputs> cs = {flat("A-evergreen", 200, 200, 200), flat("B-burst", 50, 5, 5)};
  const auto scales = signal_scales(cs);
  ScoreRule with = rule_v2();
  ScoreRule without = rule_v2();
  without.baseline_correction = false;
  EXPECT_GT(score_candidate(with, scales, cs[1], 0).score_milli, score_candidate(with, scales, cs[0], 0).score_milli);
  // The slope still favours B, so without the correction only the slope's weight separates them:
  without.slope_weight = 0;
  EXPECT_LT(score_candidate(without, scales, cs[1], 0).score_milli,
            score_candidate(without, scales, cs[0], 0).score_milli);
}

TEST(Scoring, SignalsAreScaleNormalisedSoSearchCannotSwampPosts) {
  // 004:L188: one topic with many searches, one with as many posts relative to the posts' scale.
  CandidateInputs searched = flat("S", 0, 0, 0), posted = flat("P", 0, 0, 0);
  searched.short_window[static_cast<int>(Signal::kSearch)] = WindowValues{1000, 1000, 0, 1000};
  posted.short_window[static_cast<int>(Signal::kPost)] = WindowValues{10, 10, 0, 10};
  CandidateInputs other_search = flat("S2", 0, 0, 0), other_post = flat("P2", 0, 0, 0);
  other_search.short_window[static_cast<int>(Signal::kSearch)] = WindowValues{1000, 1000, 0, 1000};
  other_post.short_window[static_cast<int>(Signal::kPost)] = WindowValues{10, 10, 0, 10};
  const std::vector<CandidateInputs> cs = {searched, posted, other_search, other_post};
  const auto scales = signal_scales(cs);
  ScoreRule r = rule_v2();
  EXPECT_EQ(score_candidate(r, scales, searched, 0).intensity_milli,
            score_candidate(r, scales, posted, 0).intensity_milli);
}

TEST(Scoring, RepeatsAndSuspiciousActorsArePenalised) {
  CandidateInputs clean = flat("clean", 20, 20, 20), farmed = flat("farmed", 20, 20, 20);
  for (int s = 0; s < kHeatSignals; ++s) farmed.short_window[s] = WindowValues{200, 40, 20, 20};
  const std::vector<CandidateInputs> cs = {clean, farmed};
  const auto scales = signal_scales(cs);
  EXPECT_LT(score_candidate(rule_v2(), scales, farmed, 0).score_milli,
            score_candidate(rule_v2(), scales, clean, 0).score_milli);
}

TEST(Scoring, ColdStartNeedsTheMinimumOfActors) {
  ScoreRule r = rule_v2();
  const std::vector<CandidateInputs> cs = {flat("few", r.min_actors - 1, 0, -1), flat("enough", r.min_actors, 0, -1)};
  const auto scales = signal_scales(cs);
  const Scored few = score_candidate(r, scales, cs[0], 0), enough = score_candidate(r, scales, cs[1], 0);
  ScoreRule no_bonus = r;
  no_bonus.cold_start_bonus = 0;
  EXPECT_EQ(score_candidate(no_bonus, scales, cs[0], 0).score_milli, few.score_milli);
  EXPECT_EQ(score_candidate(no_bonus, scales, cs[1], 0).score_milli + 1000, enough.score_milli);
}

TEST(Scoring, TimeOnTheListDecays) {
  const std::vector<CandidateInputs> cs = {flat("T", 30, 30, 30)};
  const auto scales = signal_scales(cs);
  EXPECT_EQ(score_candidate(rule_v2(), scales, cs[0], 0).score_milli - 500,
            score_candidate(rule_v2(), scales, cs[0], 10).score_milli);
}

TEST(HotList, HysteresisKeepsATopicThatDipsBelowEntryButNotBelowExit) {
  // 004:L197-198: a topic hovering around the entry score stays listed under the rule with
  // hysteresis and flickers under one without it (no decay here: hysteresis alone).
  ScoreRule with = rule_v2();
  with.top_n = 3;
  with.decay_per_snapshot = 0;
  ScoreRule without = with;
  without.version = "rule-no-hysteresis";
  without.exit_score = without.entry_score;
  without.exit_after_snapshots = 1;
  auto score_of = [&](int64_t actors) {
    const auto cs = field({flat("hover", actors, actors, actors), flat("big", 40, 40, 40)});
    return score_candidate(with, signal_scales(cs), cs[0], 0).score_milli;
  };
  int64_t high = 0, low = 0;  // actors that score above the entry score, and between exit and entry
  for (int64_t a = 1; a <= 100; ++a) {
    const int64_t s = score_of(a);
    if (s >= 2100 && s < 2900) low = a;
    if (s >= 3100 && high == 0) high = a;
  }
  ASSERT_GT(low, 0);
  ASSERT_GT(high, low);
  HotList a(with), b(without);
  int changes_with = 0, changes_without = 0;
  std::vector<std::string> last_a, last_b;
  for (int64_t i = 0; i < 20; ++i) {
    const int64_t actors = i % 2 == 0 ? high : low;
    const std::vector<CandidateInputs> cs = field({flat("hover", actors, actors, actors), flat("big", 40, 40, 40)});
    const auto la = topics(a.next(i, cs)), lb = topics(b.next(i, cs));
    changes_with += i > 0 && la != last_a;
    changes_without += i > 0 && lb != last_b;
    last_a = la;
    last_b = lb;
  }
  EXPECT_EQ(changes_with, 0);
  EXPECT_EQ(changes_without, 19);
}

TEST(HotList, AListedTopicLeavesAfterNConsecutiveLowSnapshots) {
  ScoreRule r = rule_v2();
  r.exit_after_snapshots = 3;
  HotList list(r);
  EXPECT_EQ(topics(list.next(0, field({flat("T", 40, 40, 40)}))), std::vector<std::string>{"T"});
  for (int64_t i = 1; i <= 2; ++i)
    EXPECT_EQ(topics(list.next(i, field({flat("T", 1, 1, 40)}))), std::vector<std::string>{"T"});
  EXPECT_TRUE(list.next(3, field({flat("T", 1, 1, 40)})).entries.empty());
}

TEST(HotList, NoTopicEntersWithoutTheMinimumOfActors) {
  ScoreRule r = rule_v2();
  r.entry_score = -100;
  r.exit_score = -100;
  HotList list(r);
  EXPECT_TRUE(list.next(0, {flat("T", r.min_actors - 1, 0, -1)}).entries.empty());
}

TEST(HotList, TiesAreBrokenByGrowthThenFirstTimeOverThresholdThenTopicId) {
  ScoreRule r = rule_v2();
  r.top_n = 3;
  r.decay_per_snapshot = 0;
  HotList list(r);
  const std::vector<CandidateInputs> cs = field({flat("c", 40, 40, 40), flat("a", 40, 40, 40), flat("b", 40, 40, 40)});
  const ListSnapshot s = list.next(0, cs);
  EXPECT_EQ(topics(s), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(s.entries[0].rank, 1);
  EXPECT_EQ(s.entries[2].rank, 3);
}

TEST(HotList, ABlockedTopicNeverListsAgain) {
  ScoreRule r = rule_v2();
  HotList list(r);
  CandidateInputs reported = flat("R", 40, 40, 40);
  reported.short_window[static_cast<int>(Signal::kReport)] = WindowValues{60, 60, 0, 60};
  ASSERT_EQ(topics(HotList(r).next(0, field({flat("R", 40, 40, 40)}))), std::vector<std::string>{"R"})
      << "unreported, the topic lists";
  const ListSnapshot first = list.next(0, field({reported}));
  EXPECT_TRUE(first.entries.empty());
  EXPECT_EQ(first.newly_blocked, std::vector<std::string>{"R"});
  const ListSnapshot second = list.next(1, field({flat("R", 40, 40, 40)}));
  EXPECT_TRUE(second.entries.empty());
  EXPECT_TRUE(second.newly_blocked.empty());
}

TEST(ScoreRule, TheDigestIsTheContentAndBadRulesAreRefused) {
  ScoreRule a = rule_v2(), b = rule_v2();
  b.version = "rule-v2-copy";
  EXPECT_EQ(a.digest(), b.digest());
  b.decay_per_snapshot = 0.06;
  EXPECT_NE(a.digest(), b.digest());
  EXPECT_EQ(a.invalid_reason(), "");
  ScoreRule bad = a;
  bad.exit_score = bad.entry_score + 1;
  EXPECT_NE(bad.invalid_reason(), "");
  bad = a;
  bad.top_n = 0;
  EXPECT_NE(bad.invalid_reason(), "");
}

RC_GTEST_PROP(HotList, TheListIsAFunctionOfItsInputsAndNeverLongerThanTopN, ()) {
  ScoreRule r = rule_v2();
  r.top_n = *rc::gen::inRange(1, 6);
  HotList x(r), y(r);
  const int snapshots = *rc::gen::inRange(1, 12);
  for (int64_t i = 0; i < snapshots; ++i) {
    const auto sizes = *rc::gen::container<std::vector<int>>(*rc::gen::inRange(0, 9), rc::gen::inRange(0, 60));
    std::vector<CandidateInputs> cs, reversed;
    for (size_t k = 0; k < sizes.size(); ++k)
      cs.push_back(flat("t" + std::to_string(k), sizes[k], sizes[k] / 2, sizes[k] / 3.0));
    reversed.assign(cs.rbegin(), cs.rend());
    const ListSnapshot a = x.next(i, cs), b = y.next(i, reversed);
    RC_ASSERT(a == b);  // input order never decides (004:L200)
    RC_ASSERT(a.entries.size() <= static_cast<size_t>(r.top_n));
  }
}

}  // namespace
}  // namespace fl::ranking
