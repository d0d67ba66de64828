#include "impl/combo/frontend.h"

#include <gtest/gtest.h>

namespace fl::combo {
namespace {

ContributionRecord rec(int64_t id, int64_t qty, int64_t at, int64_t item = 1) {
  ContributionRecord r;
  r.id = id;
  r.activity_id = 1;
  r.user_id = 3;
  r.item_id = item;
  r.item_type = "rose";
  r.item_name = "玫瑰";
  r.item_icon = "icon";
  r.nickname = "u\"3";
  r.quantity = r.combo_count = qty;
  r.created_at = at;
  return r;
}

TEST(ComboRecord, PayloadRoundTrips) {
  const ContributionRecord r = rec(12, 3, 1767225600123);
  const auto p = decode_payload(encode_payload(1, r));
  ASSERT_TRUE(p && p->record);
  EXPECT_EQ(*p->record, r);
  EXPECT_EQ(p->type, "contributions_response");
  EXPECT_FALSE(decode_payload("{\"activity_id\":").has_value());
  EXPECT_EQ(activity_of_channel(channel_of(42)), 42);
}

TEST(ContributionView, SpecDropsAMergedPushBehindANewerRow) {
  // §5.4's `record.id > highestIdRef()`: the merged window (id 5, qty 3) loses to a newer row 9.
  ContributionView v(Fixes::spec(), 1);
  v.on_poll_response({rec(9, 1, 2000, 2)});
  v.on_ws_message(Payload{1, "contributions_response", rec(5, 3, 1000)});
  ASSERT_EQ(v.displayed().size(), 1u);
  EXPECT_EQ(v.displayed()[0].id, 9);
}

TEST(ContributionView, HardenedReplacesByIdAndKeepsTheNewestFive) {
  ContributionView v(Fixes::hardened(combo_fixes()), 1);
  v.on_poll_response({rec(5, 1, 1000)});
  v.on_ws_message(Payload{1, "contributions_response", rec(5, 3, 1000)});
  ASSERT_EQ(v.displayed().size(), 1u);
  EXPECT_EQ(v.displayed()[0].quantity, 3);
  for (int i = 0; i < 6; ++i) v.on_ws_message(Payload{1, "contributions_response", rec(10 + i, 1, 2000 + i, 2)});
  ASSERT_EQ(v.displayed().size(), kMaxRecords);
  EXPECT_EQ(v.displayed().front().id, 15);
  EXPECT_EQ(v.displayed().back().id, 11);
}

TEST(ContributionView, SpecPollThrowsOnGoNilSlots) {
  ContributionView v(Fixes::spec(), 1);
  EXPECT_THROW(v.on_poll_response({rec(2, 2, 1000), std::nullopt}), JsTypeError);
}

}  // namespace
}  // namespace fl::combo
