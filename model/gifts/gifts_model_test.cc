// The gifts model's contract (model/gifts/model.h): the history's `k=v` args, and GIFT-6's unit
// of conservation, Σ giftCount per (room, sender, giftId) over the charged gifts (003:L105,
// L113-121, L137: the combo lock and its count are keyed by roomId + senderId + giftId).
#include "model/gifts/model.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace fl::gifts::model {
namespace {

// A permutation of `v` drawn by RapidCheck (this RapidCheck has no gen::shuffle).
template <typename T>
std::vector<T> shuffled(std::vector<T> v) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[*rc::gen::inRange<size_t>(0, i)]);
  return v;
}

ChargedGift gift(const std::string& room, int64_t user, const std::string& gift_id, int64_t count,
                 const std::string& req = "r") {
  ChargedGift g;
  g.order.room = room;
  g.order.user = user;
  g.order.gift = gift_id;
  g.order.count = count;
  g.order.request_id = req;
  return g;
}

TEST(GiftsModelTest, DescribeNamesRoomSenderAndGift) {
  EXPECT_EQ(describe(GiftKey{"room_9527", 7, "gift_aurora_town"}), "room_9527/7/gift_aurora_town");
  EXPECT_EQ(describe(GiftKey{"", 0, ""}), "/0/");
}

TEST(GiftsModelTest, ParseArgsSplitsKeyValuePairs) {
  const auto a = parse_args("user=3 req=r-1 room=room_9527");
  EXPECT_EQ(a, (std::map<std::string, std::string>{{"user", "3"}, {"req", "r-1"}, {"room", "room_9527"}}));
}

TEST(GiftsModelTest, ParseArgsEdgeCases) {
  EXPECT_TRUE(parse_args("").empty());
  EXPECT_TRUE(parse_args("   ").empty());
  // A token without '=' is no pair; extra spaces make no empty keys.
  EXPECT_EQ(parse_args("flag  user=3 "), (std::map<std::string, std::string>{{"user", "3"}}));
  // The value is everything after the first '=' (a wire message may carry '=').
  EXPECT_EQ(parse_args("msg=a=b"), (std::map<std::string, std::string>{{"msg", "a=b"}}));
  // An empty value is a present key with an empty value.
  const auto e = parse_args("req= user=1");
  ASSERT_EQ(e.count("req"), 1u);
  EXPECT_EQ(e.at("req"), "");
}

TEST(GiftsModelTest, ArgIntReadsIntegersAndFallsBack) {
  const auto a = parse_args("user=42 lastSeq=-3 seq= big=9000000000");
  EXPECT_EQ(arg_int(a, "user"), 42);
  EXPECT_EQ(arg_int(a, "lastSeq"), -3);
  EXPECT_EQ(arg_int(a, "big"), 9'000'000'000);
  // Missing or empty: the fallback (0 unless given).
  EXPECT_EQ(arg_int(a, "seq"), 0);
  EXPECT_EQ(arg_int(a, "seq", -1), -1);
  EXPECT_EQ(arg_int(a, "count"), 0);
  EXPECT_EQ(arg_int(a, "count", 5), 5);
  EXPECT_EQ(arg_int({}, "user", -1), -1);
}

TEST(GiftsModelTest, TotalsOfNothingIsEmpty) { EXPECT_TRUE(totals({}).empty()); }

TEST(GiftsModelTest, TotalsSumGiftCountPerRoomSenderAndGift) {
  // A burst of one sender's gifts sums into one key (003:L105: 10 taps, one giftCount=10); each
  // component of the key separates.
  const std::vector<ChargedGift> gs = {gift("r1", 1, "g", 1, "a"), gift("r1", 1, "g", 1, "b"),
                                       gift("r1", 1, "g", 8, "c"), gift("r2", 1, "g", 2),
                                       gift("r1", 2, "g", 3),      gift("r1", 1, "h", 4)};
  const std::map<GiftKey, int64_t> want = {
      {GiftKey{"r1", 1, "g"}, 10}, {GiftKey{"r2", 1, "g"}, 2}, {GiftKey{"r1", 2, "g"}, 3}, {GiftKey{"r1", 1, "h"}, 4}};
  EXPECT_EQ(totals(gs), want);
}

TEST(GiftsModelTest, TotalsIgnoreTimesAndIdentities) {
  // What is owed depends on what was charged, not on when it committed or reached the log, nor on
  // its request or message id.
  ChargedGift a = gift("r1", 1, "g", 2, "req-a");
  ChargedGift b = gift("r1", 1, "g", 3, "req-b");
  a.order.msg_id = "m1";
  a.commit_us = 10;
  a.first_append_us = -1;
  b.order.msg_id = "m2";
  b.commit_us = 5'000'000;
  b.first_append_us = 6'000'000;
  b.creator = "gift-service-2";
  EXPECT_EQ(totals({a, b}), (std::map<GiftKey, int64_t>{{GiftKey{"r1", 1, "g"}, 5}}));
}

std::vector<ChargedGift> gen_gifts() {
  const size_t n = *rc::gen::inRange<size_t>(0, 12);
  std::vector<ChargedGift> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(gift(*rc::gen::element<std::string>("r1", "r2"), *rc::gen::inRange<int64_t>(1, 4),
                       *rc::gen::element<std::string>("g", "h"), *rc::gen::inRange<int64_t>(1, 12),
                       "req" + std::to_string(i)));
  }
  return out;
}

// The totals are a function of the set of charged gifts: the order the DB returned them in does
// not matter.
RC_GTEST_PROP(GiftsModelProps, TotalsAreInvariantUnderOrder, ()) {
  const std::vector<ChargedGift> gs = gen_gifts();
  RC_ASSERT(totals(shuffled(gs)) == totals(gs));
}

// Conservation splits over any partition of the gifts (totals(a ++ b) = totals(a) + totals(b)),
// and no gift is lost or counted twice: the grand total is Σ giftCount.
RC_GTEST_PROP(GiftsModelProps, TotalsAreAdditive, ()) {
  const std::vector<ChargedGift> a = gen_gifts(), b = gen_gifts();
  std::vector<ChargedGift> ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  std::map<GiftKey, int64_t> want = totals(a);
  for (const auto& [k, n] : totals(b)) want[k] += n;
  RC_ASSERT(totals(ab) == want);
  int64_t sum = 0, grand = 0;
  for (const ChargedGift& g : ab) sum += g.order.count;
  for (const auto& [k, n] : totals(ab)) grand += n;
  RC_ASSERT(grand == sum);
}

}  // namespace
}  // namespace fl::gifts::model
