// The client's playback logic of 003:L78-86, L173-189, L206, spec and with its fixes.
#include "impl/gifts/player.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace fl::gifts {
namespace {

struct Harness {
  explicit Harness(GiftFixes fixes = GiftFixes::spec())
      : player(PlayerOptions{.fixes = fixes}, [this](uint64_t t, const std::string& o) { outcome[t] = o; }) {}
  void receive(uint64_t token, int64_t seq, const std::string& id, int64_t now_us = 0) {
    GiftMsg m;
    m.msg_id = id;
    m.seq = seq;
    player.receive(m, token, now_us);
  }
  std::map<uint64_t, std::string> outcome;
  Player player;
};

TEST(GiftsPlayer, PlaysInOrderAndReordersFromTheBuffer) {
  Harness h;
  h.player.on_join(0);
  h.receive(1, 2, "b");
  EXPECT_EQ(h.outcome.count(1), 0u);  // buffered behind seq 1
  h.receive(2, 1, "a");
  EXPECT_EQ(h.outcome[2], "played");
  EXPECT_EQ(h.outcome[1], "played");
  EXPECT_EQ(h.player.last_seq(), 2);
}

// A room switch drops what the old room left buffered and forgets its seq, but not playedMsgIds:
// the seed keeps one set per client (003:L78-86). A message of the room it left, pushed again
// after it came back, is not played twice (explore-hardened-store-errors seed 4461).
TEST(GiftsPlayer, ResetDropsTheBufferAndTheSeqButKeepsPlayedMsgIds) {
  Harness h;
  h.player.on_join(0);
  h.receive(1, 1, "a");
  h.receive(2, 3, "c");  // buffered behind seq 2
  h.player.reset();
  EXPECT_EQ(h.outcome[2], "dropped:left-room");
  EXPECT_FALSE(h.player.has_history());
  EXPECT_EQ(h.player.last_seq(), 0);
  h.player.on_join(40);   // the new room's current seq
  h.receive(3, 41, "a");  // the msgId it played before the switch
  EXPECT_EQ(h.outcome[3], "dropped:played-msg-id");
  h.receive(4, 41, "d");
  EXPECT_EQ(h.outcome[4], "played");
}

TEST(GiftsPlayer, DropsDuplicatesByMsgIdAndBySeq) {
  Harness h;
  h.player.on_join(0);
  h.receive(1, 1, "a");
  h.receive(2, 1, "a");
  h.receive(3, 1, "other");
  EXPECT_EQ(h.outcome[2], "dropped:played-msg-id");
  EXPECT_EQ(h.outcome[3], "dropped:seq-below-expected");
}

TEST(GiftsPlayer, SpecStallsOnAGapUntilTheBufferOverflows) {
  Harness h;
  h.player.on_join(0);
  for (uint64_t i = 0; i < 50; ++i) h.receive(i, static_cast<int64_t>(i) + 2, "m" + std::to_string(i));
  h.player.tick(60'000'000);
  EXPECT_TRUE(h.outcome.empty());  // seq 1 never came: nothing plays
  h.receive(50, 52, "m50");        // the 51st forces the oldest out (003:L189)
  EXPECT_EQ(h.outcome.size(), 51u);
}

TEST(GiftsPlayer, GapTimeoutForcesTheOldestOut) {
  Harness h(GiftFixes::spec().with(GiftFix::kGapTimeout));
  h.player.on_join(0);
  h.receive(1, 3, "c", 0);
  h.player.tick(1'000'000);
  EXPECT_TRUE(h.outcome.empty());
  h.player.tick(2'000'000);
  EXPECT_EQ(h.outcome[1], "played");
}

TEST(GiftsPlayer, SpecReconnectJumpsToTheCurrentSeqAndDropsWhatIsInFlight) {
  Harness spec;
  spec.player.on_join(0);
  spec.receive(1, 1, "a");
  spec.player.on_join(5);  // reconnect: seq 2..5 are numbered but not delivered yet
  spec.receive(2, 3, "c");
  EXPECT_EQ(spec.outcome[2], "dropped:seq-below-expected");
  Harness fixed(GiftFixes::spec().with(GiftFix::kReconnectKeepSeq));
  fixed.player.on_join(0);
  fixed.receive(1, 1, "a");
  fixed.player.on_join(5);
  fixed.receive(2, 2, "b");
  EXPECT_EQ(fixed.outcome[2], "played");
}

}  // namespace
}  // namespace fl::gifts
