#include "impl/gifts/player.h"

namespace fl::gifts {

void Player::on_join(int64_t current_seq) {
  if (options_.fixes.has(GiftFix::kReconnectKeepSeq) && has_history()) return;
  // 003:L206: "客户端从此开始接收" from the current seq the server answers.
  expected_seq_ = current_seq + 1;
  while (!buffer_.empty() && buffer_.begin()->first < expected_seq_) {
    sink_(buffer_.begin()->second.token, "dropped:seq-below-expected");
    buffer_.erase(buffer_.begin());
  }
  drain();
}

void Player::reset() {
  for (const auto& [seq, e] : buffer_) sink_(e.token, "dropped:left-room");
  buffer_.clear();
  expected_seq_ =
      0;  // a room's seq (003:L24-35) means nothing in another; playedMsgIds is the client's own (003:L78-86)
}

void Player::receive(const GiftMsg& msg, uint64_t token, int64_t now_us) {
  if (played(msg.msg_id)) {  // 003:L80-82
    sink_(token, "dropped:played-msg-id");
    return;
  }
  if (msg.seq == expected_seq_) {
    play(Entry{msg, token, now_us});
    drain();
  } else if (msg.seq > expected_seq_) {
    auto [it, inserted] = buffer_.try_emplace(msg.seq, Entry{msg, token, now_us});
    if (!inserted) {  // buffer.put replaces the earlier message of that seq
      sink_(it->second.token, "dropped:replaced-in-buffer");
      it->second = Entry{msg, token, now_us};
    }
    if (buffer_.size() > options_.buffer_capacity) force_oldest();  // 003:L189
  } else {
    sink_(token, "dropped:seq-below-expected");  // 003:L186
  }
}

void Player::tick(int64_t now_us) {
  if (!options_.fixes.has(GiftFix::kGapTimeout)) return;
  while (!buffer_.empty() && now_us - buffer_.begin()->second.received_us >= options_.gap_timeout_us) force_oldest();
}

void Player::force_oldest() {
  Entry e = buffer_.begin()->second;
  buffer_.erase(buffer_.begin());
  expected_seq_ = e.msg.seq;
  play(e);
  drain();
}

void Player::play(const Entry& e) {
  if (played(e.msg.msg_id)) {  // a copy buffered under another seq was played meanwhile
    sink_(e.token, "dropped:played-msg-id");
  } else {
    played_order_.push_back(e.msg.msg_id);
    played_set_.insert(e.msg.msg_id);
    if (played_order_.size() > options_.played_capacity) {  // 003:L86 LRU
      played_set_.erase(played_order_.front());
      played_order_.pop_front();
    }
    sink_(e.token, "played");
  }
  expected_seq_ = e.msg.seq + 1;
}

void Player::drain() {
  // 003:L179-182: play what the buffer holds from expectedSeq on.
  for (auto it = buffer_.find(expected_seq_); it != buffer_.end(); it = buffer_.find(expected_seq_)) {
    Entry e = it->second;
    buffer_.erase(it);
    play(e);
  }
}

}  // namespace fl::gifts
