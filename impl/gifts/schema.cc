#include "impl/gifts/schema.h"

namespace fl::gifts {

std::vector<std::string> schema_statements(bool txmsg, bool push_ledger) {
  std::vector<std::string> out = {
      "CREATE TABLE IF NOT EXISTS wallet (user_id INTEGER PRIMARY KEY, balance INTEGER NOT NULL)",
      // 003:L64: "唯一索引" on (userId, requestId)
      "CREATE TABLE IF NOT EXISTS gift_order (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER NOT NULL, "
      "request_id TEXT NOT NULL, room_id TEXT NOT NULL, gift_id TEXT NOT NULL, gift_count INTEGER NOT NULL, "
      "amount INTEGER NOT NULL, msg_id TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER)",
      "CREATE UNIQUE INDEX IF NOT EXISTS uk_gift_order_user_request ON gift_order(user_id, request_id)",
      // 003:L220
      "CREATE TABLE IF NOT EXISTS outbox_message (id INTEGER PRIMARY KEY AUTOINCREMENT, msg_id TEXT NOT NULL, "
      "payload TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL)",
  };
  if (txmsg) out.push_back("CREATE TABLE IF NOT EXISTS gift_tx (msg_id TEXT PRIMARY KEY, state TEXT NOT NULL)");
  if (push_ledger) {
    out.push_back(
        "CREATE TABLE IF NOT EXISTS push_ledger (room_id TEXT NOT NULL, seq INTEGER NOT NULL, "
        "msg_id TEXT NOT NULL UNIQUE, PRIMARY KEY (room_id, seq))");
  }
  return out;
}

std::string dedup_key(const std::string& request_id) { return "gift:dedup:" + request_id; }
std::string push_dedup_key(const std::string& room, const std::string& msg_id) {
  return "gift:push:" + room + ":" + msg_id;
}
std::string lock_key(const std::string& room, int64_t sender, const std::string& gift) {
  return "gift:batch:" + room + ":" + std::to_string(sender) + ":" + gift;
}
std::string count_key(const std::string& room, int64_t sender, const std::string& gift) {
  return "gift:batch:count:" + room + ":" + std::to_string(sender) + ":" + gift;
}
std::string online_key(const std::string& room) { return "gift:room:online:" + room; }
std::string seq_key(const std::string& room, bool at_push) { return (at_push ? "gift:pushseq:" : "gift:seq:") + room; }

}  // namespace fl::gifts
