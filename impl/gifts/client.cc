#include "impl/gifts/client.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "impl/gifts/messages.h"

namespace fl::gifts {
namespace {

int64_t uniform(Runtime& rt, int64_t lo, int64_t hi) {
  return hi <= lo ? lo : lo + static_cast<int64_t>(rt.random_u64() % static_cast<uint64_t>(hi - lo + 1));
}
bool percent(Runtime& rt, int p) { return static_cast<int>(rt.random_u64() % 100) < p; }

std::string hex(uint64_t v) {
  static const char* d = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = d[v & 15];
  return s;
}

std::string deliver_args(const GiftMsg& m) {
  return "msg=" + m.msg_id + " room=" + m.room + " sender=" + std::to_string(m.sender) + " gift=" + m.gift +
         " count=" + std::to_string(m.count) + " seq=" + std::to_string(m.seq) +
         " ts=" + std::to_string(m.timestamp_ms);
}

struct ViewerState {
  ViewerState(Runtime& r, Rpc& p, Recorder& h, ViewerOptions o)
      : rt(r),
        rpc(p),
        history(h),
        options(std::move(o)),
        player(options.player, [this](uint64_t op, const std::string& outcome) {
          history.complete(op, outcome == "played" ? Outcome::kOk : Outcome::kFail, outcome);
        }) {}
  Runtime& rt;
  Rpc& rpc;
  Recorder& history;
  ViewerOptions options;
  Player player;
  size_t gateway = 0;
  std::string room = options.room;  // the room joined (changes with a room switch)
};

std::string service_of(const ViewerState& v) { return std::string(v.rt.process_name()) + ".push"; }

// Joins through gateway `v.gateway`, trying the next one until a join succeeds.
Task<void> connect(ViewerState& v) {
  for (;;) {
    const std::string gw = v.options.gateways[v.gateway % v.options.gateways.size()];
    const int64_t last = v.player.last_seq();
    const uint64_t op = v.history.invoke(v.rt.process_name(), "connect",
                                         "user=" + std::to_string(v.options.user) + " room=" + v.room + " gw=" + gw +
                                             " lastSeq=" + std::to_string(last));
    RpcResult r = co_await v.rpc.call(gw + ".join", make_message(JoinRoom{v.options.user, v.room, service_of(v), last}),
                                      v.options.rpc_timeout_us);
    const JoinReply* j = r.ok() ? message_as<JoinReply>(r.reply) : nullptr;
    if (j != nullptr && j->ok) {
      v.history.complete(op, Outcome::kOk, "seq=" + std::to_string(j->current_seq));
      v.player.on_join(j->current_seq);
      co_return;
    }
    v.history.complete(op, r.indeterminate() ? Outcome::kInfo : Outcome::kFail, "not joined");
    ++v.gateway;
    co_await v.rt.clock().sleep_ms(200);
  }
}

// 003:L193: leave the room and join another; the client forgets the room's seq (its playedMsgIds stay, 003:L78-86).
Task<void> switch_room(ViewerState& v, const std::string& gw) {
  v.rpc.send(gw + ".leave", make_message(Ping{v.options.user, v.room}));
  const auto& rooms = v.options.rooms;
  const size_t at = static_cast<size_t>(std::find(rooms.begin(), rooms.end(), v.room) - rooms.begin());
  v.room = rooms[(at + 1 + v.rt.random_u64() % (rooms.size() - 1)) % rooms.size()];
  v.player.reset();
  co_await connect(v);
}

}  // namespace

Task<void> run_viewer(Runtime& rt, Rpc& rpc, Recorder& history, ViewerOptions options) {
  auto v = std::make_shared<ViewerState>(rt, rpc, history, std::move(options));
  v->gateway = v->options.first_gateway;
  rpc.on_message(service_of(*v), [v](MessagePtr m) {
    const ClientPush* p = message_as<ClientPush>(m);
    if (p == nullptr) return;
    const uint64_t op = v->history.invoke(v->rt.process_name(), "deliver", deliver_args(p->msg));
    if (p->msg.room != v->room) {  // still in flight when the viewer switched rooms (003:L193)
      v->history.complete(op, Outcome::kFail, "dropped:left-room");
      return;
    }
    v->player.receive(p->msg, op, v->rt.clock().now_us());
  });
  if (v->options.player.fixes.has(GiftFix::kGapTimeout)) {
    rt.spawn("gap-timer", [](std::shared_ptr<ViewerState> v) -> Task<void> {
      for (;;) {
        co_await v->rt.clock().sleep_ms(200);
        v->player.tick(v->rt.clock().now_us());
      }
    }(v));
  }
  co_await rt.clock().sleep_us(v->options.start_delay_us);
  co_await connect(*v);
  const double p_reconnect = v->options.reconnects_per_min * static_cast<double>(v->options.ping_interval_us) / 60e6;
  for (;;) {
    co_await rt.clock().sleep_us(v->options.ping_interval_us);
    const std::string gw = v->options.gateways[v->gateway % v->options.gateways.size()];
    const bool voluntary = rt.clock().now_us() < v->options.stop_reconnects_at_us &&
                           static_cast<double>(rt.random_u64() % 1'000'000) < p_reconnect * 1e6;
    if (v->options.switches_per_min > 0 && rt.clock().now_us() < v->options.stop_reconnects_at_us &&
        v->options.rooms.size() > 1 &&
        static_cast<double>(rt.random_u64() % 1'000'000) <
            v->options.switches_per_min * 1e6 * static_cast<double>(v->options.ping_interval_us) / 60e6) {
      co_await switch_room(*v, gw);
      continue;
    }
    if (voluntary) {
      rpc.send(gw + ".leave", make_message(Ping{v->options.user, v->room}));
      ++v->gateway;
      co_await connect(*v);
      continue;
    }
    RpcResult r =
        co_await rpc.call(gw + ".ping", make_message(Ping{v->options.user, v->room}), v->options.rpc_timeout_us);
    const PingReply* pr = r.ok() ? message_as<PingReply>(r.reply) : nullptr;
    if (pr == nullptr || !pr->known) {
      ++v->gateway;  // the connection is gone: reconnect, reporting lastSeq (003:L206)
      co_await connect(*v);
    }
  }
}

namespace {

struct Click {
  std::string room, gift, request_id, intent;
};

// One click: attempts with the same requestId until an answer or the retries run out (003:L43).
Task<void> send_click(Runtime& rt, Rpc& rpc, Recorder& history, SenderOptions o, Click c) {
  for (int attempt = 0; attempt <= o.max_retries; ++attempt) {
    const uint64_t op = history.invoke(rt.process_name(), "send",
                                       "user=" + std::to_string(o.user) + " room=" + c.room + " gift=" + c.gift +
                                           " count=1 req=" + c.request_id + " intent=" + c.intent);
    RpcResult r =
        co_await rpc.call("gift.send", make_message(SendGift{o.user, c.room, c.gift, 1, c.request_id}), o.timeout_us);
    const SendReply* s = r.ok() ? message_as<SendReply>(r.reply) : nullptr;
    if (s != nullptr && s->status == SendReply::Status::kOk) {
      history.complete(op, Outcome::kOk, "order=" + std::to_string(s->order_id));
      co_return;
    }
    if (s != nullptr && s->status != SendReply::Status::kError) {
      history.complete(op, Outcome::kFail, send_status_name(s->status));
      co_return;
    }
    history.complete(op, r.status == RpcStatus::kUnavailable ? Outcome::kFail : Outcome::kInfo,
                     s != nullptr ? "error" : rpc_status_name(r.status));
    const bool long_wait = percent(rt, o.long_retry_percent);
    co_await rt.clock().sleep_ms(long_wait ? uniform(rt, 10'500, 13'000)
                                           : uniform(rt, o.retry_delay_min_ms, o.retry_delay_max_ms));
  }
}

}  // namespace

Task<void> run_sender(Runtime& rt, Rpc& rpc, Recorder& history, SenderOptions o) {
  std::map<std::string, std::pair<int64_t, std::string>> last_tap;  // room|gift -> (time, requestId)
  uint64_t intents = 0;
  co_await rt.clock().sleep_us(o.start_delay_us);
  auto click = [&](const std::string& room, const std::string& gift, const std::string& intent) {
    const int64_t now = rt.clock().now_us();
    std::string req = hex(rt.random_u64());  // 003:L49: a fresh UUID per click
    auto& last = last_tap[room + "|" + gift];
    if (o.fixes.has(GiftFix::kTapSameRequest) && now - last.first < 200'000) req = last.second;
    last = {now, req};
    rt.spawn("click", send_click(rt, rpc, history, o, Click{room, gift, req, intent}));
  };
  // A rate of 0 (a shrunk scenario) means no clicks: never divide by it.
  while (o.actions_per_s > 0 && rt.clock().now_us() < o.stop_at_us) {
    const double u = static_cast<double>(rt.random_u64() % 1'000'000 + 1) / 1e6;
    co_await rt.clock().sleep_us(static_cast<int64_t>(-std::log(u) / o.actions_per_s * 1e6));
    if (rt.clock().now_us() >= o.stop_at_us) break;
    const std::string room = o.rooms[rt.random_u64() % o.rooms.size()];
    const std::string gift = o.gifts[rt.random_u64() % o.gifts.size()];
    const std::string base = std::to_string(o.user) + "-" + std::to_string(++intents);
    if (percent(rt, o.burst_percent)) {  // 003:L105: up to 10 clicks in 3 s, each an intended gift
      const int clicks = static_cast<int>(uniform(rt, std::min(o.burst_min_clicks, 10), 10));
      for (int i = 0; i < clicks; ++i) {
        click(room, gift, base + "." + std::to_string(i));
        co_await rt.clock().sleep_ms(uniform(rt, 250, 320));
      }
    } else if (percent(rt, o.double_tap_percent)) {  // 003:L41: one intent, two taps
      click(room, gift, base);
      co_await rt.clock().sleep_ms(uniform(rt, 30, 150));
      click(room, gift, base);
    } else {
      click(room, gift, base);
    }
  }
}

}  // namespace fl::gifts
