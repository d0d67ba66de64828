#include "impl/gifts/gateway.h"

#include "impl/gifts/schema.h"

namespace fl::gifts {

namespace {
constexpr int64_t kExpiryMs = 10'000;  // 003:L200
}  // namespace

Gateway::Gateway(Runtime& rt, Rpc& rpc, Redis& redis, Sql& sql, std::string name, GiftFixes fixes)
    : rt_(rt), rpc_(rpc), redis_(redis), sql_(sql), name_(std::move(name)), fixes_(fixes) {}

Task<void> Gateway::run() {
  rpc_.serve(name_ + ".join", [this](MessagePtr m) -> Task<MessagePtr> {
    const JoinRoom* r = message_as<JoinRoom>(m);
    if (r == nullptr) co_return make_message(JoinReply{});
    co_return co_await join(*r);
  });
  rpc_.serve(name_ + ".ping", [this](MessagePtr m) -> Task<MessagePtr> {
    const Ping* r = message_as<Ping>(m);
    if (r == nullptr) co_return make_message(PingReply{});
    co_return co_await ping(*r);
  });
  rpc_.on_message(name_ + ".leave", [this](MessagePtr m) {
    const Ping* r = message_as<Ping>(m);
    if (r == nullptr || !connections_.erase(r->user)) return;
    rt_.spawn("leave", [](Redis& redis, std::string key, std::string member) -> Task<void> {
      co_await redis.command({"ZREM", key, member});
    }(redis_, online_key(r->room), member(r->user)));
  });
  rpc_.on_message(name_ + ".deliver", [this](MessagePtr m) {
    if (const Deliver* d = message_as<Deliver>(m)) deliver(*d);
  });
  for (;;) co_await rt_.clock().sleep_ms(3'600'000);
}

Task<MessagePtr> Gateway::join(JoinRoom request) {
  RedisReply z = co_await redis_.command(
      {"ZADD", online_key(request.room), std::to_string(rt_.clock().now_ms()), member(request.user)});
  if (!reply_integer(z)) co_return make_message(JoinReply{});
  // 003:L206: no history, so the answer is the room's current seq.
  const std::optional<int64_t> seq = co_await current_seq(request.room);
  if (!seq) co_return make_message(JoinReply{});
  connections_[request.user] = Connection{request.room, request.client_service};
  co_return make_message(JoinReply{true, *seq});
}

// The room's current seq: its counter in Redis, or with GF-PUSH-LEDGER the highest seq the push
// ledger handed out (a Redis counter rolled back by a crash would answer below seqs already pushed).
Task<std::optional<int64_t>> Gateway::current_seq(const std::string& room) {
  if (fixes_.has(GiftFix::kPushSeq) && fixes_.has(GiftFix::kPushLedger)) {
    SqlResult r = co_await sql_.exec("SELECT COALESCE(MAX(seq), 0) FROM push_ledger WHERE room_id = ?", room);
    const std::optional<SqlValue> v = r.ok() ? r.scalar() : std::nullopt;
    if (!v || v->type() != SqlValue::Type::kInteger) co_return std::nullopt;
    co_return v->as_int();
  }
  RedisReply seq = co_await redis_.command({"GET", seq_key(room, fixes_.has(GiftFix::kPushSeq))});
  if (seq.is_transport_error() || seq.is_error()) co_return std::nullopt;
  co_return reply_as_int64(seq).value_or(0);
}

Task<MessagePtr> Gateway::ping(Ping request) {
  auto it = connections_.find(request.user);
  if (it == connections_.end()) co_return make_message(PingReply{false});
  co_await redis_.command(
      {"ZADD", online_key(request.room), std::to_string(rt_.clock().now_ms()), member(request.user)});
  co_return make_message(PingReply{true});
}

void Gateway::deliver(const Deliver& d) {
  // GF-EXPIRY-AT-GATEWAY: 003:L197-202's check once more at the last server hop.
  const bool expired = rt_.clock().now_ms() - d.msg.timestamp_ms > kExpiryMs;
  if (fixes_.has(GiftFix::kExpiryAtGateway) && expired) return;
  for (int64_t user : d.users) {
    auto it = connections_.find(user);
    if (it == connections_.end() || it->second.room != d.msg.room) continue;
    rpc_.send(it->second.client_service, make_message(ClientPush{d.msg}));
  }
}

}  // namespace fl::gifts
