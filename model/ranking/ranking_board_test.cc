// The ranking model's part 2 (model/ranking/board.h): a candidate partition's local Top K from
// the immutable versions its frozen cut admits (004:L214-220, L247-248; RANK-11, RANK-12,
// RANK-14), the disposition rule, and a sealed run's snapshot items, ordered by score, ties by
// topic_id (004:L200, L254; RANK-36).
#include "model/ranking/board.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace fl::ranking::model {
namespace {

// A permutation of `v` drawn by RapidCheck (this RapidCheck has no gen::shuffle).
template <typename T>
std::vector<T> shuffled(std::vector<T> v) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[*rc::gen::inRange<size_t>(0, i)]);
  return v;
}

const std::string kScope = "GLOBAL|ALL|ALL|ALL";

// A version row of aggregate key "<topic>#<scope>#<window>#0#search_actors", in partition 0 at
// generation 1 unless told, its own cut at `cut_offset`.
VersionInput ver(const std::string& topic, int64_t version, int64_t value, int64_t cut_offset,
                 const std::string& window = "long", const std::string& scope = kScope, int64_t generation = 1,
                 int32_t partition = 0, const std::string& metric = "search_actors") {
  VersionInput v;
  v.aggregate_key = topic + "#" + scope + "#" + window + "#0#" + metric;
  v.topic_id = topic;
  v.scope_id = scope;
  v.window_type = window;
  v.generation = generation;
  v.version = version;
  v.risk_adjusted = value;
  v.value_digest = "d" + std::to_string(value);
  v.cut_ref = "k" + std::to_string(partition) + "@" + std::to_string(cut_offset) + "/g" + std::to_string(generation);
  v.cut_partition = partition;
  v.cut_next_offset = cut_offset;
  v.cut_generation = generation;
  return v;
}

std::string item(const VersionInput& v) {
  return v.aggregate_key + "," + std::to_string(v.generation) + "," + std::to_string(v.version) + "," + v.value_digest +
         "," + v.cut_ref;
}

std::vector<TopkEntryModel> topk(const std::vector<VersionInput>& vs, int64_t next_offset, int top_k = 10,
                                 const std::string& windows = "long", int32_t partition = 0, int64_t generation = 1) {
  return expected_local_topk(vs, kScope, windows, partition, next_offset, generation, top_k);
}

std::vector<std::pair<std::string, int64_t>> scores(const std::vector<TopkEntryModel>& es) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const TopkEntryModel& e : es) out.emplace_back(e.topic_id, e.score);
  return out;
}

using Items = std::vector<std::pair<std::string, int64_t>>;

// ---- TopkEntryModel ----

TEST(RankingBoardTest, EntryDescribeAndEquality) {
  const TopkEntryModel a{"t_1", 7, {"x", "y"}};
  EXPECT_EQ(a.describe(), "t_1 score 7 over 2 versions");
  EXPECT_EQ(TopkEntryModel{}.describe(), " score 0 over 0 versions");
  EXPECT_EQ(a, (TopkEntryModel{"t_1", 7, {"x", "y"}}));
  EXPECT_NE(a, (TopkEntryModel{"t_1", 7, {"x"}}));
  EXPECT_NE(a, (TopkEntryModel{"t_1", 8, {"x", "y"}}));
  EXPECT_NE(a, (TopkEntryModel{"t_2", 7, {"x", "y"}}));
}

// ---- rule_reads_window ----

TEST(RankingBoardTest, RuleReadsTheWindowsItLists) {
  EXPECT_TRUE(rule_reads_window("long", "long"));
  EXPECT_TRUE(rule_reads_window("short,medium,long", "short"));
  EXPECT_TRUE(rule_reads_window("short,medium,long", "medium"));
  EXPECT_TRUE(rule_reads_window("short,medium,long", "long"));
  // Whole names only.
  EXPECT_FALSE(rule_reads_window("long", "lon"));
  EXPECT_FALSE(rule_reads_window("long", "longer"));
  EXPECT_FALSE(rule_reads_window("short,medium", "long"));
  EXPECT_FALSE(rule_reads_window("short,medium", "short,medium"));
  EXPECT_FALSE(rule_reads_window("", "long"));
  EXPECT_FALSE(rule_reads_window("Long", "long"));
}

// ---- expected_local_topk ----

TEST(RankingBoardTest, NoVersionsNoEntries) {
  EXPECT_TRUE(topk({}, 100).empty());
  // Nothing inside the cut: nothing either.
  EXPECT_TRUE(topk({ver("t_1", 1, 5, 50)}, 49).empty());
}

TEST(RankingBoardTest, ATopicScoresTheSumOfItsKeysNewestValues) {
  // C21: a multi-window rule reads every window it names; a topic's keys sum.
  const std::vector<VersionInput> vs = {ver("t_1", 1, 3, 10, "short"), ver("t_1", 2, 4, 20, "short"),
                                        ver("t_1", 1, 5, 10, "long"), ver("t_2", 1, 6, 10, "long"),
                                        ver("t_2", 1, 100, 10, "medium")};
  const auto got = topk(vs, 100, 10, "short,long");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], (TopkEntryModel{"t_1", 9, {item(vs[2]), item(vs[1])}}));
  EXPECT_EQ(got[1], (TopkEntryModel{"t_2", 6, {item(vs[3])}}));
  // Items are sorted, whatever order the keys came in.
  EXPECT_TRUE(std::is_sorted(got[0].items.begin(), got[0].items.end()));
  // A rule reading one window sees only that window.
  EXPECT_EQ(scores(topk(vs, 100, 10, "medium")), (Items{{"t_2", 100}}));
}

TEST(RankingBoardTest, TheCutIsInclusiveAndAFrozenRunIgnoresLaterVersions) {
  // 004:L220, L230: the head moving from g7/v18 to g7/v19 past the run's cut leaves the run on v18.
  const std::vector<VersionInput> vs = {ver("t_1", 18, 5, 100), ver("t_1", 19, 50, 101)};
  auto got = topk(vs, 100);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], (TopkEntryModel{"t_1", 5, {item(vs[0])}}));
  got = topk(vs, 101);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], (TopkEntryModel{"t_1", 50, {item(vs[1])}}));
}

TEST(RankingBoardTest, VersionsAreComparedOnlyWithinTheirGeneration) {
  // RANK-12 (C30): after g1 -> g2, g2/v3 and g1/v42 are never compared; each cut of a generation
  // reads that generation only.
  const std::vector<VersionInput> vs = {ver("t_1", 42, 5, 10, "long", kScope, 1),
                                        ver("t_1", 3, 7, 10, "long", kScope, 2)};
  EXPECT_EQ(scores(topk(vs, 100, 10, "long", 0, 2)), (Items{{"t_1", 7}}));
  EXPECT_EQ(scores(topk(vs, 100, 10, "long", 0, 1)), (Items{{"t_1", 5}}));
  EXPECT_TRUE(topk(vs, 100, 10, "long", 0, 3).empty());
  // A version of g2 whose cut was taken in g1 belongs to neither cut.
  VersionInput mixed = ver("t_2", 1, 9, 10, "long", kScope, 2);
  mixed.cut_generation = 1;
  EXPECT_EQ(scores(topk({mixed}, 100, 10, "long", 0, 1)), Items{});
  EXPECT_EQ(scores(topk({mixed}, 100, 10, "long", 0, 2)), Items{});
}

TEST(RankingBoardTest, OtherPartitionsAndScopesAreNotInTheLocalTopK) {
  // RANK-2: scope isolation; 004:L248: each partition computes within its own cut only.
  const std::vector<VersionInput> vs = {ver("t_1", 1, 5, 10, "long", kScope, 1, 0),
                                        ver("t_2", 1, 6, 10, "long", kScope, 1, 1),
                                        ver("t_3", 1, 7, 10, "long", "CHANNEL|sports|ALL|ALL", 1, 0)};
  EXPECT_EQ(scores(topk(vs, 100, 10, "long", 0)), (Items{{"t_1", 5}}));
  EXPECT_EQ(scores(topk(vs, 100, 10, "long", 1)), (Items{{"t_2", 6}}));
  EXPECT_EQ(scores(expected_local_topk(vs, "CHANNEL|sports|ALL|ALL", "long", 0, 100, 1, 10)), (Items{{"t_3", 7}}));
  EXPECT_TRUE(expected_local_topk(vs, "GLOBAL|ALL|ALL|zh-CN", "long", 0, 100, 1, 10).empty());
}

TEST(RankingBoardTest, TiesBreakByTopicIdAndTopKTruncates) {
  // 004:L200, RANK-36 (C16): equal scores in a fixed order ending with topic_id.
  const std::vector<VersionInput> vs = {ver("t_3", 1, 5, 10), ver("t_1", 1, 5, 10), ver("t_2", 1, 9, 10),
                                        ver("t_4", 1, 5, 10)};
  EXPECT_EQ(scores(topk(vs, 100, 10)), (Items{{"t_2", 9}, {"t_1", 5}, {"t_3", 5}, {"t_4", 5}}));
  EXPECT_EQ(scores(topk(vs, 100, 2)), (Items{{"t_2", 9}, {"t_1", 5}}));
  EXPECT_EQ(scores(topk(vs, 100, 4)).size(), 4u);
  EXPECT_TRUE(topk(vs, 100, 0).empty());
  EXPECT_TRUE(topk(vs, 100, -1).empty());
}

// Distinct version triples (RANK-11: unique by (aggregate_key, generation, version)) on a small
// board: few topics, windows, partitions, offsets and generations, so that every filter matters.
std::vector<VersionInput> gen_versions() {
  const size_t n = *rc::gen::inRange<size_t>(0, 16);
  std::vector<VersionInput> out;
  std::set<std::tuple<std::string, int64_t, int64_t>> triples;
  for (size_t i = 0; i < n; ++i) {
    VersionInput v = ver(*rc::gen::element<std::string>("t_1", "t_2", "t_3", "t_10"), *rc::gen::inRange<int64_t>(1, 5),
                         *rc::gen::inRange<int64_t>(-2, 10), *rc::gen::inRange<int64_t>(0, 8),
                         *rc::gen::element<std::string>("short", "long"), kScope, *rc::gen::inRange<int64_t>(1, 3),
                         *rc::gen::inRange<int32_t>(0, 2));
    if (triples.insert({v.aggregate_key, v.generation, v.version}).second) out.push_back(v);
  }
  return out;
}

// RANK-14, RANK-36: recomputing from the same immutable versions gives the same Top K whatever
// order the rows are read in, and reading a row twice changes nothing.
RC_GTEST_PROP(RankingBoardProps, LocalTopKIsInvariantUnderOrderAndDuplicates, ()) {
  const std::vector<VersionInput> vs = gen_versions();
  const int64_t offset = *rc::gen::inRange<int64_t>(0, 8);
  const int64_t generation = *rc::gen::inRange<int64_t>(1, 3);
  const int32_t partition = *rc::gen::inRange<int32_t>(0, 2);
  const int k = *rc::gen::inRange(0, 5);
  const std::string windows = *rc::gen::element<std::string>("long", "short,long");
  const auto want = expected_local_topk(vs, kScope, windows, partition, offset, generation, k);
  std::vector<VersionInput> noisy = vs;
  if (!vs.empty()) noisy.push_back(*rc::gen::elementOf(vs));
  noisy = shuffled(noisy);
  RC_ASSERT(expected_local_topk(noisy, kScope, windows, partition, offset, generation, k) == want);
}

// The Top K is ordered (score descending, then topic_id), holds each topic once, is the prefix of
// any larger K, and its entries reference only versions inside the cut.
RC_GTEST_PROP(RankingBoardProps, LocalTopKIsAnOrderedPrefixInsideTheCut, ()) {
  const std::vector<VersionInput> vs = gen_versions();
  const int64_t offset = *rc::gen::inRange<int64_t>(0, 8);
  const int k = *rc::gen::inRange(0, 5);
  const auto all = expected_local_topk(vs, kScope, "short,long", 0, offset, 1, 100);
  const auto got = expected_local_topk(vs, kScope, "short,long", 0, offset, 1, k);
  RC_ASSERT(got.size() == std::min(all.size(), static_cast<size_t>(k)));
  RC_ASSERT(std::equal(got.begin(), got.end(), all.begin()));
  std::set<std::string> topics;
  for (size_t i = 0; i < all.size(); ++i) {
    RC_ASSERT(topics.insert(all[i].topic_id).second);
    if (i > 0) {
      RC_ASSERT(std::make_pair(-all[i - 1].score, all[i - 1].topic_id) <
                std::make_pair(-all[i].score, all[i].topic_id));
    }
    std::set<std::string> keys;
    for (const std::string& it : all[i].items) {
      const auto match = std::find_if(vs.begin(), vs.end(), [&](const VersionInput& v) { return item(v) == it; });
      RC_ASSERT(match != vs.end());
      RC_ASSERT(match->cut_next_offset <= offset && match->cut_partition == 0 && match->generation == 1);
      RC_ASSERT(keys.insert(match->aggregate_key).second);  // one version per key
    }
  }
}

// ---- parse_topk_line ----

TEST(RankingBoardTest, ParsesATopKLine) {
  TopkEntryModel e;
  ASSERT_TRUE(parse_topk_line("t_1\t12\tb,1,2,d,k;a,1,1,d,k", &e));
  EXPECT_EQ(e, (TopkEntryModel{"t_1", 12, {"a,1,1,d,k", "b,1,2,d,k"}}));
  ASSERT_TRUE(parse_topk_line("t_2\t-3\t", &e));
  EXPECT_EQ(e, (TopkEntryModel{"t_2", -3, {}}));  // the previous items are cleared
}

TEST(RankingBoardTest, RejectsMalformedTopKLines) {
  TopkEntryModel e;
  EXPECT_FALSE(parse_topk_line("", &e));
  EXPECT_FALSE(parse_topk_line("t_1", &e));
  EXPECT_FALSE(parse_topk_line("t_1\t12", &e));
  EXPECT_FALSE(parse_topk_line("t_1\t\titems", &e));
}

// What a partition writes, a judge reads back: any entry survives the line form, items in any order.
RC_GTEST_PROP(RankingBoardProps, TopKLinesRoundTrip, ()) {
  TopkEntryModel want;
  want.topic_id = "t_" + std::to_string(*rc::gen::inRange(1, 30));
  want.score = *rc::gen::inRange<int64_t>(-1000, 1000);
  const auto items = *rc::gen::container<std::set<std::string>>(
      rc::gen::map(rc::gen::inRange(0, 50), [](int i) { return "ak" + std::to_string(i) + ",1,2,d,k0@3/g1"; }));
  want.items.assign(items.begin(), items.end());
  const std::vector<std::string> items_read = shuffled(want.items);
  std::string line = want.topic_id + "\t" + std::to_string(want.score) + "\t";
  for (size_t i = 0; i < items_read.size(); ++i) line += (i ? ";" : "") + items_read[i];
  TopkEntryModel got;
  RC_ASSERT(parse_topk_line(line, &got));
  RC_ASSERT(got == want);
}

// ---- is_candidate ----

TEST(RankingBoardTest, EntryScoreIsInclusive) {
  // 004:L249: every entry ends CANDIDATE or REJECTED; the scenario's rule v1 admits score >= entry score.
  EXPECT_TRUE(is_candidate(10, 10));
  EXPECT_TRUE(is_candidate(11, 10));
  EXPECT_FALSE(is_candidate(9, 10));
  EXPECT_TRUE(is_candidate(0, 0));
  EXPECT_FALSE(is_candidate(-1, 0));
}

// ---- expected_items ----

TEST(RankingBoardTest, SnapshotItemsAreOrderedByScoreThenTopicId) {
  // 004:L200: ties by topic_id, a fixed string order ("t_10" < "t_2").
  const Items cands = {{"t_2", 5}, {"t_10", 5}, {"t_1", 8}, {"t_3", 1}};
  EXPECT_EQ(expected_items(cands, 10), (Items{{"t_1", 8}, {"t_10", 5}, {"t_2", 5}, {"t_3", 1}}));
  EXPECT_EQ(expected_items(cands, 2), (Items{{"t_1", 8}, {"t_10", 5}}));
}

TEST(RankingBoardTest, SnapshotItemsEdgeCases) {
  EXPECT_TRUE(expected_items({}, 50).empty());
  EXPECT_TRUE(expected_items({{"t_1", 1}}, 0).empty());
  EXPECT_TRUE(expected_items({{"t_1", 1}}, -5).empty());
  EXPECT_EQ(expected_items({{"t_1", 1}, {"t_2", 2}}, 2), (Items{{"t_2", 2}, {"t_1", 1}}));  // exactly N
}

// RANK-36 (C16): identical candidates give an identical snapshot whatever order they were read in,
// and a smaller N is a prefix of a larger one.
RC_GTEST_PROP(RankingBoardProps, SnapshotItemsAreDeterministicPrefixes, ()) {
  const auto topics = *rc::gen::container<std::set<int>>(rc::gen::inRange(1, 25));
  Items cands;
  for (int t : topics) cands.emplace_back("t_" + std::to_string(t), *rc::gen::inRange<int64_t>(0, 4));
  const int n = *rc::gen::inRange(0, 30);
  const Items want = expected_items(cands, n);
  RC_ASSERT(expected_items(shuffled(cands), n) == want);
  RC_ASSERT(want.size() == std::min(cands.size(), static_cast<size_t>(n)));
  const Items all = expected_items(cands, 100);
  RC_ASSERT(std::equal(want.begin(), want.end(), all.begin()));
  for (size_t i = 1; i < all.size(); ++i) {
    RC_ASSERT(std::make_pair(-all[i - 1].second, all[i - 1].first) < std::make_pair(-all[i].second, all[i].first));
  }
  // Every candidate not in the top N ranks below every one that is.
  if (!want.empty()) {
    for (const auto& c : cands) {
      if (std::find(want.begin(), want.end(), c) == want.end()) {
        RC_ASSERT(std::make_pair(-want.back().second, want.back().first) < std::make_pair(-c.second, c.first));
      }
    }
  }
}

}  // namespace
}  // namespace fl::ranking::model
