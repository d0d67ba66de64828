// Reference model of the gifts system (seed 003), computed from world observations only: the
// orders read back from the DB, the SQL server's commit log and the log broker's records.
//
// A charged gift is an order row; its commit time is the world time at which the DB committed the
// transaction that wrote it, its first append the world time the broker first stored a record
// carrying its msgId. The model says, per (room, sender, giftId), how many gifts every viewer
// online throughout must end up playing (GIFT-5, GIFT-6), and which gifts an allowed cause
// (expiry, a Redis data loss) may excuse.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace fl::gifts::model {

struct Order {
  int64_t id = 0;
  int64_t user = 0;
  std::string request_id;
  std::string room;
  std::string gift;
  int64_t count = 0;
  int64_t amount = 0;
  std::string msg_id;
};

struct ChargedGift {
  Order order;
  int64_t sent_us = -1;          // the first attempt of its request (the message is stamped after it)
  int64_t attempt_us = -1;       // the attempt whose commit wrote it (the world's cause of the commit;
                                 // its message is stamped after it); sent_us when unknown
  int64_t commit_us = -1;        // -1: no commit observed (the row survived without one: impossible)
  int64_t first_append_us = -1;  // -1: never reached the log
  std::string creator;           // the process whose commit wrote it (its clock stamped the message)
};

// (room, sender, giftId): the unit of GIFT-6's conservation.
using GiftKey = std::tuple<std::string, int64_t, std::string>;
std::string describe(const GiftKey& k);

// `k=v k=v` (the history's args) as a map.
std::map<std::string, std::string> parse_args(const std::string& args);
int64_t arg_int(const std::map<std::string, std::string>& args, const std::string& key, int64_t fallback = 0);

// Σ giftCount per key over `gifts`.
std::map<GiftKey, int64_t> totals(const std::vector<ChargedGift>& gifts);

}  // namespace fl::gifts::model
