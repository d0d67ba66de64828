// Pub/sub commands: PUBLISH SUBSCRIBE UNSUBSCRIBE (RESP2 semantics). Deliveries are queued on
// the engine; the server layer pushes them to subscriber connections (at most once).
#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

RedisReply confirmation(const char* kind, RedisReply channel, size_t count) {
  return RedisReply::array(
      {RedisReply::bulk(kind), std::move(channel), RedisReply::integer_of(static_cast<int64_t>(count))});
}

void unsubscribe_one(Ctx& c, const std::string& channel, std::vector<RedisReply>* out) {
  if (c.session.channels.erase(channel)) {
    auto it = c.channels().find(channel);
    if (it != c.channels().end()) {
      it->second.erase(c.session.id);
      if (it->second.empty()) c.channels().erase(it);
    }
  }
  out->push_back(confirmation("unsubscribe", RedisReply::bulk(channel), c.session.channels.size()));
}

}  // namespace

RedisReply cmd_publish(Ctx& c) {
  c.observe_publish(c.arg(1), c.arg(2));
  auto it = c.channels().find(c.arg(1));
  if (it == c.channels().end()) return RedisReply::integer_of(0);
  for (uint64_t session_id : it->second) { c.deliveries().push_back(PubSubDelivery{session_id, c.arg(1), c.arg(2)}); }
  return RedisReply::integer_of(static_cast<int64_t>(it->second.size()));
}

RedisReply cmd_subscribe(Ctx& c) {
  std::vector<RedisReply> out;
  for (size_t j = 1; j < c.argc(); ++j) {
    if (c.session.channels.insert(c.arg(j)).second) c.channels()[c.arg(j)].insert(c.session.id);
    out.push_back(confirmation("subscribe", RedisReply::bulk(c.arg(j)), c.session.channels.size()));
  }
  return RedisReply::array(std::move(out));
}

RedisReply cmd_unsubscribe(Ctx& c) {
  std::vector<RedisReply> out;
  if (c.argc() == 1) {
    // Redis walks its channel dict (unspecified order); we go in byte order.
    const std::set<std::string> all = c.session.channels;
    for (const auto& ch : all) unsubscribe_one(c, ch, &out);
    if (out.empty()) out.push_back(confirmation("unsubscribe", RedisReply::nil(), 0));
  } else {
    for (size_t j = 1; j < c.argc(); ++j) unsubscribe_one(c, c.arg(j), &out);
  }
  return RedisReply::array(std::move(out));
}

}  // namespace fl::sim::redis
