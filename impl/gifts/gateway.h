// A WebSocket gateway (003:L15): keeps userId -> connection, refreshes the room's online sorted
// set (score = heartbeat time, 003:L19) on join and ping, forwards pushes to its connections and
// answers a reconnect with the room's current seq (003:L206: no history is kept).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "impl/gifts/fixes.h"
#include "impl/gifts/messages.h"
#include "impl/ports/redis.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"

namespace fl::gifts {

class Gateway {
 public:
  // `name` is the gateway's service prefix: `<name>.join`, `<name>.ping`, `<name>.leave`, `<name>.deliver`.
  // `sql` holds the push ledger whose highest seq a join answers (GF-PUSH-LEDGER); spec never uses it.
  Gateway(Runtime& rt, Rpc& rpc, Redis& redis, Sql& sql, std::string name, GiftFixes fixes);
  // Registers the services, then idles until the process dies.
  Task<void> run();

 private:
  struct Connection {
    std::string room;
    std::string client_service;
  };
  Task<MessagePtr> join(JoinRoom request);
  Task<MessagePtr> ping(Ping request);
  Task<std::optional<int64_t>> current_seq(const std::string& room);
  void deliver(const Deliver& d);
  std::string member(int64_t user) const { return std::to_string(user) + "@" + name_; }

  Runtime& rt_;
  Rpc& rpc_;
  Redis& redis_;
  Sql& sql_;
  std::string name_;
  GiftFixes fixes_;
  std::map<int64_t, Connection> connections_;
};

}  // namespace fl::gifts
