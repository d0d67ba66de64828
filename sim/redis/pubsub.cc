// Pub/sub commands: PUBLISH SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE and PUBSUB
// CHANNELS|NUMSUB|NUMPAT (RESP2 semantics, pubsub.c). Deliveries are queued on the engine; the
// server layer pushes them to subscriber connections (at most once). Where Redis walks a dict
// (UNSUBSCRIBE with no channel, the patterns a message matches) the engine goes in byte order.
#include "impl/ports/assert.h"
#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

RedisReply confirmation(const char* kind, RedisReply channel, size_t count) {
  return RedisReply::array(
      {RedisReply::bulk(kind), std::move(channel), RedisReply::integer_of(static_cast<int64_t>(count))});
}

using Registry = std::map<std::string, std::set<uint64_t>, std::less<>>;

// The session's subscriptions of one kind (channels or patterns) and the engine's registry of it.
struct Kind {
  std::set<std::string>& mine;
  Registry& all;
  const char* subscribe;
  const char* unsubscribe;
};

Kind channels_of(Ctx& c) { return {c.session.channels, c.channels(), "subscribe", "unsubscribe"}; }
Kind patterns_of(Ctx& c) { return {c.session.patterns, c.patterns(), "psubscribe", "punsubscribe"}; }

size_t subscriptions(const Ctx& c) { return c.session.channels.size() + c.session.patterns.size(); }

void unsubscribe_one(Ctx& c, const Kind& k, const std::string& name, std::vector<RedisReply>* out) {
  if (k.mine.erase(name)) {
    auto it = k.all.find(name);
    if (it != k.all.end()) {
      it->second.erase(c.session.id);
      if (it->second.empty()) k.all.erase(it);
    }
  }
  out->push_back(confirmation(k.unsubscribe, RedisReply::bulk(name), subscriptions(c)));
}

RedisReply subscribe_generic(Ctx& c, const Kind& k) {
  std::vector<RedisReply> out;
  for (size_t j = 1; j < c.argc(); ++j) {
    if (k.mine.insert(c.arg(j)).second) k.all[c.arg(j)].insert(c.session.id);
    out.push_back(confirmation(k.subscribe, RedisReply::bulk(c.arg(j)), subscriptions(c)));
  }
  return RedisReply::array(std::move(out));
}

RedisReply unsubscribe_generic(Ctx& c, const Kind& k) {
  std::vector<RedisReply> out;
  if (c.argc() == 1) {
    const std::set<std::string> every = k.mine;
    for (const auto& name : every) unsubscribe_one(c, k, name, &out);
    if (out.empty()) out.push_back(confirmation(k.unsubscribe, RedisReply::nil(), subscriptions(c)));
  } else {
    for (size_t j = 1; j < c.argc(); ++j) unsubscribe_one(c, k, c.arg(j), &out);
  }
  return RedisReply::array(std::move(out));
}

}  // namespace

int64_t Engine::publish_message(const std::string& channel, const std::string& payload) {
  int64_t receivers = 0;
  if (auto it = channels_.find(channel); it != channels_.end()) {
    for (uint64_t session_id : it->second) deliveries_.push_back(PubSubDelivery{session_id, channel, payload, ""});
    receivers += static_cast<int64_t>(it->second.size());
  }
  for (const auto& [pattern, sessions] : patterns_) {
    if (!glob_match(pattern, channel)) continue;
    for (uint64_t session_id : sessions) deliveries_.push_back(PubSubDelivery{session_id, channel, payload, pattern});
    receivers += static_cast<int64_t>(sessions.size());
  }
  return receivers;
}

RedisReply cmd_publish(Ctx& c) {
  c.observe_publish(c.arg(1), c.arg(2));
  return RedisReply::integer_of(c.engine.publish_message(c.arg(1), c.arg(2)));
}

RedisReply cmd_subscribe(Ctx& c) { return subscribe_generic(c, channels_of(c)); }
RedisReply cmd_unsubscribe(Ctx& c) { return unsubscribe_generic(c, channels_of(c)); }
RedisReply cmd_psubscribe(Ctx& c) { return subscribe_generic(c, patterns_of(c)); }
RedisReply cmd_punsubscribe(Ctx& c) { return unsubscribe_generic(c, patterns_of(c)); }

// PUBSUB CHANNELS [pattern] | NUMSUB [channel ...] | NUMPAT
RedisReply cmd_pubsub(Ctx& c) {
  const std::string sub = lower(c.arg(1));
  if (sub == "channels" && c.argc() <= 3) {
    std::vector<std::string> names;
    for (const auto& [channel, sessions] : c.channels()) {
      if (c.argc() == 2 || glob_match(c.arg(2), channel)) names.push_back(channel);
    }
    return bulk_array(names);
  }
  if (sub == "numsub") {
    std::vector<RedisReply> out;
    for (size_t j = 2; j < c.argc(); ++j) {
      const auto it = c.channels().find(c.arg(j));
      out.push_back(RedisReply::bulk(c.arg(j)));
      out.push_back(RedisReply::integer_of(it == c.channels().end() ? 0 : static_cast<int64_t>(it->second.size())));
    }
    return RedisReply::array(std::move(out));
  }
  if (sub == "channels") {  // addReplySubcommandSyntaxError: CHANNELS takes one pattern at most
    return RedisReply::error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1) +
                             "'. Try PUBSUB HELP.");
  }
  FL_ASSERT(sub == "numpat");  // the command table routes only these three here
  return RedisReply::integer_of(static_cast<int64_t>(c.patterns().size()));
}

}  // namespace fl::sim::redis
