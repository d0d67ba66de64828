#include "model/likes/model.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <optional>
#include <vector>

namespace fl::likes::model {
namespace {

WriteOp w(uint64_t id, bool like, int64_t s, int64_t e, bool definite = true) {
  return WriteOp{id, 1, 7, like, definite, s, definite ? e : kNever, ""};
}

TEST(LikesModelTest, LastAcknowledgedWriteWins) {
  LikesModel m;
  m.add(w(1, true, 0, 10));
  m.add(w(2, false, 20, 30));
  EXPECT_TRUE(m.possible_final(1, 7).only(false));
  EXPECT_TRUE(m.possible_at(1, 7, 15).only(true));
  EXPECT_TRUE(m.possible_at(1, 7, 25).liked);
  EXPECT_TRUE(m.possible_at(1, 7, 25).not_liked);
  EXPECT_TRUE(m.possible_at(1, 7, -1).only(false));
  EXPECT_EQ(m.final_count_range(1).hi, 0);
}

TEST(LikesModelTest, ConcurrentWritesMayLandEitherWay) {
  LikesModel m;
  m.add(w(1, true, 0, 10));
  m.add(w(2, false, 5, 12));
  Possible p = m.possible_final(1, 7);
  EXPECT_TRUE(p.liked && p.not_liked);
}

TEST(LikesModelTest, IndeterminateWritesStayPossibleForever) {
  LikesModel m;
  m.add(w(1, true, 0, 0, /*definite=*/false));
  m.add(w(2, false, 20, 30));
  Possible p = m.possible_final(1, 7);
  EXPECT_TRUE(p.liked && p.not_liked);
  EXPECT_EQ(m.final_count_range(1).lo, 0);
  EXPECT_EQ(m.final_count_range(1).hi, 1);
}

TEST(LikesModelTest, PreStateExcludesTheOpItself) {
  LikesModel m;
  m.add(w(1, true, 0, 10));  // answered "already": was it liked before? only the initial "not"
  EXPECT_TRUE(m.possible_during(1, 7, 0, 10, 1).only(false));
  EXPECT_TRUE(m.possible_during(1, 7, 0, 10).liked);
}

// possible_during by its definition, one candidate at a time: w is a candidate unless a definite
// write x (not excluded) was invoked after w completed and completed before s_us.
Possible possible_during_by_definition(const std::vector<WriteOp>& ws, int64_t s_us, int64_t e_us,
                                       std::optional<uint64_t> exclude) {
  Possible p;
  bool initial = true;
  for (const WriteOp& w : ws) {
    if (exclude && w.id == *exclude) continue;
    if (w.definite && w.complete_us < s_us) initial = false;
    if (!(w.invoke_us < e_us)) continue;
    bool overwritten = false;
    for (const WriteOp& x : ws) {
      if (exclude && x.id == *exclude) continue;
      if (x.definite && w.complete_us != kNever && x.invoke_us > w.complete_us && x.complete_us < s_us)
        overwritten = true;
    }
    if (!overwritten) (w.like ? p.liked : p.not_liked) = true;
  }
  if (initial) p.not_liked = true;
  return p;
}

// The model answers every cache read of a run: it finds overwritten writes in one pass. Same
// answers as the definition, for any history of one pair.
RC_GTEST_PROP(LikesModelProps, PossibleDuringMatchesTheDefinition, ()) {
  const size_t n = *rc::gen::inRange<size_t>(0, 9);
  std::vector<WriteOp> ws;
  LikesModel m;
  for (size_t i = 0; i < n; ++i) {
    const int64_t invoke_us = *rc::gen::inRange<int64_t>(0, 50);
    const bool definite = *rc::gen::arbitrary<bool>();
    const int64_t complete_us = invoke_us + *rc::gen::inRange<int64_t>(0, 30);
    ws.push_back(w(i + 1, *rc::gen::arbitrary<bool>(), invoke_us, complete_us, definite));
    m.add(ws.back());
  }
  const int64_t s_us = *rc::gen::inRange<int64_t>(-5, 90);
  const int64_t e_us = s_us + *rc::gen::inRange<int64_t>(0, 40);
  const std::optional<uint64_t> exclude =
      *rc::gen::arbitrary<bool>() ? std::optional<uint64_t>(*rc::gen::inRange<uint64_t>(1, n + 2)) : std::nullopt;
  const Possible want = possible_during_by_definition(ws, s_us, e_us, exclude);
  const Possible got = m.possible_during(1, 7, s_us, e_us, exclude);
  RC_ASSERT(got.liked == want.liked);
  RC_ASSERT(got.not_liked == want.not_liked);
}

TEST(LikesModelTest, ParsesHistoryArgs) {
  int64_t a = 0, u = 0;
  EXPECT_TRUE(parse_args("asset=3 user=9 req=4", &a, &u));
  EXPECT_EQ(a, 3);
  EXPECT_EQ(u, 9);
  EXPECT_FALSE(parse_args("user=9", &a, &u));
}

}  // namespace
}  // namespace fl::likes::model
