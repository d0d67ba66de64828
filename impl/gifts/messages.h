// The gift message of 003:L25-33 and the RPC / push messages between the gifts processes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fl::gifts {

// 003:L25-33. Rooms are "room_N", users are numbers, gifts "gift_N". timestamp is the creating
// process's clock in ms (003:L31), seq the room's sequence number (003:L35).
struct GiftMsg {
  std::string msg_id;
  std::string room;
  int64_t sender = 0;
  std::string gift;
  int64_t count = 1;
  int64_t timestamp_ms = 0;
  int64_t seq = 0;

  // `msgId|roomId|senderId|giftId|giftCount|timestamp|seq`: the log record value and the outbox payload.
  std::string encode() const;
  static std::optional<GiftMsg> decode(const std::string& s);
  std::string describe() const { return encode(); }
};

// gift.send: one click's request (003:L49).
struct SendGift {
  int64_t user = 0;
  std::string room;
  std::string gift;
  int64_t count = 1;
  std::string request_id;
  std::string describe() const;
};

struct SendReply {
  enum class Status : uint8_t { kOk, kDuplicate, kInsufficient, kError };
  Status status = Status::kError;
  int64_t order_id = 0;  // kOk
  std::string describe() const;
};
const char* send_status_name(SendReply::Status s);

// <gw>.join: a viewer (re)connects to a gateway and reports its lastSeq (003:L206).
struct JoinRoom {
  int64_t user = 0;
  std::string room;
  std::string client_service;  // where the gateway forwards pushes
  int64_t last_seq = 0;        // 0: no history
  std::string describe() const;
};
struct JoinReply {
  bool ok = false;
  int64_t current_seq = 0;
  std::string describe() const;
};

// <gw>.ping: connection keep-alive; the gateway refreshes the heartbeat score (003:L15, L19).
struct Ping {
  int64_t user = 0;
  std::string room;
  std::string describe() const;
};
struct PingReply {
  bool known = false;
  std::string describe() const { return known ? "known" : "unknown"; }
};

// push -> gateway: one message for some of the gateway's users.
struct Deliver {
  GiftMsg msg;
  std::vector<int64_t> users;
  std::string describe() const;
};

// gateway -> client.
struct ClientPush {
  GiftMsg msg;
  std::string describe() const { return msg.describe(); }
};

}  // namespace fl::gifts
