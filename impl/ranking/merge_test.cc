// The handover vector and the ownership rule of 004:L83-85 as the normalizers and aggregators
// apply them.
#include "impl/ranking/merge.h"

#include <gtest/gtest.h>

namespace fl::ranking {
namespace {

TEST(HandoverVector, RoundTripsAndRejectsMalformedText) {
  const HandoverVector v = {{0, 17}, {1, 7}, {3, 0}};
  EXPECT_EQ(encode_vector(v), "0:17,1:7,3:0");
  EXPECT_EQ(decode_vector(encode_vector(v)), v);
  EXPECT_TRUE(decode_vector("").empty());
  for (const char* bad : {"0:", ":5", "0-5", "0:5,x:1", "0:-1", "0:99999999999999999999"}) {
    EXPECT_TRUE(decode_vector(bad).empty()) << bad;
  }
}

TEST(HandoverVector, OwnershipIsByTheStableOffsetAlone) {
  const HandoverVector v = {{0, 10}, {1, 3}};
  EXPECT_FALSE(owned_by_new_chain(v, 0, 9));
  EXPECT_TRUE(owned_by_new_chain(v, 0, 10));  // offset >= cutover_next_offset[p] (004:L84)
  EXPECT_TRUE(owned_by_new_chain(v, 1, 3));
  EXPECT_TRUE(owned_by_new_chain(v, 2, 0));  // no record at the barrier: all of it is new
}

TEST(OwnerTopic, ActiveCutoversMoveTheSourcePendingOnesHoldIt) {
  ScopeMapping m;
  m.cutovers.push_back(Cutover{"merge-1", "t_2", "t_1", "ACTIVE", {{0, 5}}, 2});
  m.cutovers.push_back(Cutover{"merge-2", "t_3", "t_1", "SHADOW_READY", {{0, 8}}, 3});
  bool held = false;
  EXPECT_EQ(owner_topic(m, "t_2", 0, 4, &held), "t_2");  // below the vector: the old baseline
  EXPECT_EQ(owner_topic(m, "t_2", 0, 5, &held), "t_1");
  EXPECT_FALSE(held);
  EXPECT_EQ(owner_topic(m, "t_3", 0, 7, &held), "t_3");
  EXPECT_FALSE(held);
  EXPECT_EQ(owner_topic(m, "t_3", 0, 8, &held), "t_3");  // waits for its cutover's end (004:L85)
  EXPECT_TRUE(held);
  held = false;
  EXPECT_EQ(owner_topic(m, "t_4", 0, 100, &held), "t_4");
  EXPECT_FALSE(held);
}

}  // namespace
}  // namespace fl::ranking
