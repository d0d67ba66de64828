// The gifts DB (003:L66-68, L218-222): wallets, orders under the unique (user_id, request_id)
// index, and the local message table.
#pragma once

#include <string>
#include <vector>

namespace fl::gifts {

// `txmsg`: the transactional-message scheme (003:L225-231) adds gift_tx, the local transaction's
// state row that GF-TXMSG-CHECK-FENCE's check-back fences against. `push_ledger` (GF-PUSH-LEDGER)
// adds the push ledger: each pushed msgId's seq in its room, durable where a Redis counter is not.
std::vector<std::string> schema_statements(bool txmsg = false, bool push_ledger = false);

// Redis keys of the seed (003:L53, L92, L113, L120) and the room keys this build chose
// (docs/systems/gifts.md).
std::string dedup_key(const std::string& request_id);
std::string push_dedup_key(const std::string& room, const std::string& msg_id);
std::string lock_key(const std::string& room, int64_t sender, const std::string& gift);
std::string count_key(const std::string& room, int64_t sender, const std::string& gift);
std::string online_key(const std::string& room);
// spec: the seq the gift service assigns; GF-PUSH-SEQ: the seq assigned at push time.
std::string seq_key(const std::string& room, bool at_push);

}  // namespace fl::gifts
