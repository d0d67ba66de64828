// The client's playback logic (003:L78-86, L173-189, L206), without I/O so it is unit-tested.
//
// receive(): a msgId in playedMsgIds is skipped (003:L80-82); seq == expectedSeq plays and drains
// the buffer (003:L175-182); seq > expectedSeq is buffered (003:L184); seq < expectedSeq is a
// duplicate and dropped (003:L186). When the buffer holds more than 50 the oldest is force-played
// (003:L189). playedMsgIds keeps the last 1000 (003:L86). Every received message ends as exactly
// one Outcome handed to the sink: played, or dropped with a reason.
// GF-GAP-TIMEOUT: tick() force-plays the oldest buffered message once it waited `gap_timeout_us`.
// GF-RECONNECT-KEEP-SEQ: on_join() keeps expectedSeq when the client has history.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "impl/gifts/fixes.h"
#include "impl/gifts/messages.h"

namespace fl::gifts {

struct PlayerOptions {
  GiftFixes fixes = GiftFixes::spec();
  size_t played_capacity = 1000;  // 003:L86
  size_t buffer_capacity = 50;    // 003:L189
  int64_t gap_timeout_us = 2'000'000;
};

class Player {
 public:
  // (token of the received message, "played" or "dropped:<reason>")
  using Sink = std::function<void(uint64_t token, const std::string& outcome)>;
  Player(PlayerOptions options, Sink sink) : options_(options), sink_(std::move(sink)) {}

  // 003:L206: the (re)join's answer, the room's current seq.
  void on_join(int64_t current_seq);
  void receive(const GiftMsg& msg, uint64_t token, int64_t now_us);
  void tick(int64_t now_us);
  // Leaving the room (a room switch, 003:L193): every buffered message is dropped as
  // "dropped:left-room" and the client starts over without a seq (expectedSeq). playedMsgIds stays:
  // the seed keeps one set per client, bounded only by its LRU (003:L78-86).
  void reset();
  // The last seq played (reported as lastSeq on reconnect); 0 without history.
  int64_t last_seq() const { return expected_seq_ > 0 ? expected_seq_ - 1 : 0; }
  bool has_history() const { return expected_seq_ > 0; }
  size_t buffered() const { return buffer_.size(); }

 private:
  struct Entry {
    GiftMsg msg;
    uint64_t token = 0;
    int64_t received_us = 0;
  };
  void play(const Entry& e);
  void drain();
  void force_oldest();
  bool played(const std::string& msg_id) const { return played_set_.count(msg_id) > 0; }

  PlayerOptions options_;
  Sink sink_;
  int64_t expected_seq_ = 0;
  std::deque<std::string> played_order_;
  std::set<std::string> played_set_;
  std::map<int64_t, Entry> buffer_;
};

}  // namespace fl::gifts
