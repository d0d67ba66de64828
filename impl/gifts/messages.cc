#include "impl/gifts/messages.h"

#include <cstdlib>

namespace fl::gifts {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

bool parse_i64(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtoll(s.c_str(), &end, 10);
  return end == s.c_str() + s.size();
}

}  // namespace

std::string GiftMsg::encode() const {
  return msg_id + "|" + room + "|" + std::to_string(sender) + "|" + gift + "|" + std::to_string(count) + "|" +
         std::to_string(timestamp_ms) + "|" + std::to_string(seq);
}

std::optional<GiftMsg> GiftMsg::decode(const std::string& s) {
  const std::vector<std::string> f = split(s, '|');
  if (f.size() != 7) return std::nullopt;
  GiftMsg m;
  m.msg_id = f[0];
  m.room = f[1];
  m.gift = f[3];
  if (!parse_i64(f[2], &m.sender) || !parse_i64(f[4], &m.count) || !parse_i64(f[5], &m.timestamp_ms) ||
      !parse_i64(f[6], &m.seq)) {
    return std::nullopt;
  }
  return m;
}

std::string SendGift::describe() const {
  return "send user=" + std::to_string(user) + " room=" + room + " gift=" + gift + " count=" + std::to_string(count) +
         " req=" + request_id;
}

const char* send_status_name(SendReply::Status s) {
  switch (s) {
    case SendReply::Status::kOk:
      return "ok";
    case SendReply::Status::kDuplicate:
      return "duplicate";
    case SendReply::Status::kInsufficient:
      return "insufficient";
    case SendReply::Status::kError:
      return "error";
  }
  return "?";
}

std::string SendReply::describe() const {
  return std::string(send_status_name(status)) + (status == Status::kOk ? " order=" + std::to_string(order_id) : "");
}

std::string JoinRoom::describe() const {
  return "join user=" + std::to_string(user) + " room=" + room + " lastSeq=" + std::to_string(last_seq);
}

std::string JoinReply::describe() const { return ok ? "seq=" + std::to_string(current_seq) : "refused"; }

std::string Ping::describe() const { return "ping user=" + std::to_string(user) + " room=" + room; }

std::string Deliver::describe() const {
  std::string s = msg.describe() + " to";
  for (int64_t u : users) s += " " + std::to_string(u);
  return s;
}

}  // namespace fl::gifts
