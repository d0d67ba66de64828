#include "model/likes/model.h"

#include <gtest/gtest.h>

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

TEST(LikesModelTest, ParsesHistoryArgs) {
  int64_t a = 0, u = 0;
  EXPECT_TRUE(parse_args("asset=3 user=9 req=4", &a, &u));
  EXPECT_EQ(a, 3);
  EXPECT_EQ(u, 9);
  EXPECT_FALSE(parse_args("user=9", &a, &u));
}

}  // namespace
}  // namespace fl::likes::model
