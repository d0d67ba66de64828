#include "sim/redis/protocol.h"

namespace fl::sim::redis {

std::string describe_argv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += a.size() > 64 ? a.substr(0, 61) + "..." : a;
  }
  return out;
}

std::string RedisRequest::describe() const {
  switch (kind) {
    case Kind::kCommands: {
      std::string out;
      for (const auto& c : commands) {
        if (!out.empty()) out += "; ";
        out += describe_argv(c);
      }
      return out;
    }
    case Kind::kSubscribe:
      return "subscribe#" + std::to_string(subscription_id) + " " +
             (commands.empty() ? std::string() : describe_argv(commands[0]));
    case Kind::kUnsubscribe: return "unsubscribe#" + std::to_string(subscription_id);
    case Kind::kCheck: return "check#" + std::to_string(subscription_id);
  }
  return "?";
}

std::string RedisResponse::describe() const {
  std::string out;
  for (const auto& r : replies) {
    if (!out.empty()) out += "; ";
    out += r.describe();
  }
  return out;
}

std::string RedisPush::describe() const {
  return "push#" + std::to_string(subscription_id) + " " + channel + ": " + payload;
}

}  // namespace fl::sim::redis
