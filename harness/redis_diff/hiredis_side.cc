#include "harness/redis_diff/hiredis_side.h"
#include "impl/ports/assert.h"

#include <stdexcept>
#include <utility>

namespace fl::redis_diff {

using Kind = RedisReply::Kind;

HiredisSide::HiredisSide(std::string name, std::function<real::RedisConnection()> make_connection)
    : name_(std::move(name)), make_connection_(std::move(make_connection)) {
  reset();
}

void HiredisSide::reset() {
  conns_.clear();
  for (int c = 0; c < kClients; ++c) {
    pending_[c].reset();
    conns_.push_back(make_connection_());
    subscribed_[c].clear();
    inbox_[c].clear();
  }
  RedisReply f = conns_[0].command({"FLUSHALL"});
  RedisReply s = conns_[0].command({"SCRIPT", "FLUSH"});
  // What a sequence may have changed with CONFIG SET, back to Redis 7.0's defaults.
  RedisReply c =
      conns_[0].command({"CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", "noeviction", "maxmemory-samples", "5",
                         "hash-max-listpack-entries", "128", "hash-max-listpack-value", "64", "set-max-intset-entries",
                         "512", "zset-max-listpack-entries", "128", "zset-max-listpack-value", "64"});
  if (f != RedisReply::ok() || s != RedisReply::ok() || c != RedisReply::ok()) {
    throw std::runtime_error(name_ + ": cannot reset: " + f.describe() + " / " + s.describe() + " / " + c.describe());
  }
}

RedisReply HiredisSide::read(int client) {
  for (int guard = 0; guard < 100'000; ++guard) {
    RedisReply r = conns_[client].read_reply();
    if (!subscribed_[client].empty() && is_message_push(r)) {
      inbox_[client].push_back({r.elements[1].str, r.elements[2].str});
      continue;
    }
    return r;
  }
  return RedisReply::transport_error("redis_diff: endless pushes", true);
}

void HiredisSide::begin(int client, const std::vector<std::string>& argv) {
  FL_ASSERT(client >= 0 && client < kClients && !pending_[client]);
  send_failed_[client] = !conns_[client].send(argv);
  pending_[client] = argv;
}

RedisReply HiredisSide::finish(int client) {
  FL_ASSERT(pending_[client]);
  std::vector<std::string> argv = std::move(*pending_[client]);
  pending_[client].reset();
  if (send_failed_[client]) return RedisReply::transport_error(name_ + ": send failed", false);
  const std::string cmd = upper(argv[0]);
  if (cmd == "SUBSCRIBE" || cmd == "UNSUBSCRIBE") return read_subscription_replies(client, argv);
  return read(client);
}

RedisReply HiredisSide::read_subscription_replies(int client, const std::vector<std::string>& argv) {
  RedisReply first = read(client);
  if (!is_confirmation(first)) return first;  // an error, or QUEUED inside MULTI
  std::vector<RedisReply> confirmations{first};
  auto note = [&](const RedisReply& r) {
    if (r.elements[1].kind != Kind::kBulk) return;
    if (r.elements[0].str == "subscribe") {
      subscribed_[client].insert(r.elements[1].str);
    } else {
      subscribed_[client].erase(r.elements[1].str);
    }
  };
  note(first);
  // One confirmation per named channel; without names, until the count reaches 0.
  const size_t named = argv.size() - 1;
  while (named > 0 ? confirmations.size() < named : confirmations.back().elements[2].integer > 0) {
    RedisReply r = read(client);
    if (!is_confirmation(r)) {
      confirmations.push_back(r);
      break;
    }
    note(r);
    confirmations.push_back(std::move(r));
  }
  return RedisReply::array(std::move(confirmations));
}

std::vector<RedisPubSubMessage> HiredisSide::take_messages(int client, int64_t wait_ms) {
  if (conns_[client].connected()) {
    RedisReply r;
    int64_t wait = inbox_[client].empty() ? wait_ms : 0;
    while (conns_[client].try_read_reply(wait, &r)) {
      wait = 0;
      if (r.is_transport_error()) break;
      if (is_message_push(r)) {
        inbox_[client].push_back({r.elements[1].str, r.elements[2].str});
      } else {
        inbox_[client].push_back({"<unexpected reply>", r.describe()});
      }
    }
  }
  std::vector<RedisPubSubMessage> out;
  out.swap(inbox_[client]);
  return out;
}

}  // namespace fl::redis_diff
