#include "sim/redis/protocol.h"

#include <algorithm>

namespace fl::sim::redis {

namespace {

// Appends describe_argv(argv) to *out, with no temporary strings: every message the network
// carries is described (its digest enters the fingerprint), so this runs for every request.
void append_argv(std::string* out, const std::vector<std::string>& argv) {
  const size_t start = out->size();
  for (const auto& a : argv) {
    if (out->size() > start) out->push_back(' ');  // so empty leading arguments add none
    if (a.size() > 64) {
      out->append(a, 0, 61).append("...");
    } else {
      out->append(a);
    }
  }
}

// An upper bound of the described length of argv (each argument elided to at most 64 bytes,
// plus its separator), so that the text is allocated once.
size_t described_size(const std::vector<std::string>& argv) {
  size_t n = 0;
  for (const auto& a : argv) n += std::min<size_t>(a.size(), 64) + 1;
  return n;
}

}  // namespace

std::string describe_argv(const std::vector<std::string>& argv) {
  std::string out;
  out.reserve(described_size(argv));
  append_argv(&out, argv);
  return out;
}

std::string RedisRequest::describe() const {
  switch (kind) {
    case Kind::kCommands: {
      size_t size = 0;
      for (const auto& c : commands) size += described_size(c) + 2;
      std::string out;
      out.reserve(size);
      for (const auto& c : commands) {
        if (!out.empty()) out += "; ";
        append_argv(&out, c);
      }
      return out;
    }
    case Kind::kSubscribe:
      return "subscribe#" + std::to_string(subscription_id) + " " +
             (commands.empty() ? std::string() : describe_argv(commands[0]));
    case Kind::kUnsubscribe:
      return "unsubscribe#" + std::to_string(subscription_id);
    case Kind::kCheck:
      return "check#" + std::to_string(subscription_id);
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
