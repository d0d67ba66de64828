#include "impl/combo/frontend_process.h"

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "impl/combo/frontend.h"
#include "impl/combo/messages.h"
#include "impl/combo/service.h"

namespace fl::combo {

namespace {

struct GatewayState {
  std::map<int64_t, std::set<std::string>> connections;  // activity -> client push services
};

struct ClientState {
  ClientState(Fixes f, int64_t activity, Screen* screen) : view(f, activity, screen) {}
  ContributionView view;
  uint64_t next_ref = 0;
};

int64_t draw_between(Runtime& rt, int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  return lo + static_cast<int64_t>(rt.random_u64() % static_cast<uint64_t>(hi - lo + 1));
}
double draw_unit(Runtime& rt) { return static_cast<double>(rt.random_u64() >> 11) / 9007199254740992.0; }
int64_t draw_exponential_ms(Runtime& rt, double mean_ms) {
  double u = draw_unit(rt);
  if (u < 1e-12) u = 1e-12;
  return static_cast<int64_t>(-mean_ms * std::log(u)) + 1;
}

// Runs one handler of the page and renders its list on the screen. An uncaught TypeError in the
// handler (spec) loses the update, as in the browser.
void update(Screen* screen, ClientState& st, const std::function<void()>& change) {
  try {
    change();
  } catch (const JsTypeError&) {}
  if (screen) screen->show(st.view.displayed());
}

Task<void> purchase_task(Runtime* rt, Rpc* rpc, Recorder* history, PurchaseRequest req, int64_t timeout_ms) {
  const uint64_t op = history->invoke(rt->process_name(), "purchase", req.describe());
  RpcResult r = co_await rpc->call(std::string(kActivityService) + ".purchase", make_message(req), timeout_ms * 1000);
  if (r.status == RpcStatus::kUnavailable) {
    history->complete(op, Outcome::kFail, "unavailable");
    co_return;
  }
  const PurchaseReply* reply = r.ok() ? message_as<PurchaseReply>(r.reply) : nullptr;
  if (reply == nullptr) {
    history->complete(op, Outcome::kInfo, rpc_status_name(r.status));
    co_return;
  }
  if (reply->ok) {
    history->complete(op, Outcome::kOk, reply->describe());
  } else {
    history->complete(op, reply->db_not_applied ? Outcome::kFail : Outcome::kInfo, reply->describe());
  }
}

Task<void> burst_task(Runtime* rt, Rpc* rpc, Recorder* history, ClientState* st, ClientOptions o) {
  const std::vector<std::string>& pool = o.items.empty() ? item_types() : o.items;
  const std::string item = pool[rt->random_u64() % pool.size()];
  const int64_t clicks = draw_between(*rt, 1, o.max_clicks);
  auto request = [&](int64_t n) {
    PurchaseRequest req;
    req.client_ref = std::string(rt->process_name()) + "-" + std::to_string(st->next_ref++);
    req.activity_id = o.activity_id;
    req.user_id = o.user_id;
    req.batch = n > 1;
    for (int64_t i = 0; i < n; ++i) req.lines.push_back(PurchaseLine{item, 1});
    return req;
  };
  if (o.boundary_probability > 0 && !o.boundary_gaps_ms.empty() && draw_unit(*rt) < o.boundary_probability) {
    const int64_t gap = o.boundary_gaps_ms[rt->random_u64() % o.boundary_gaps_ms.size()];
    rt->spawn("click", purchase_task(rt, rpc, history, request(1), o.rpc_timeout_ms));
    co_await rt->clock().sleep_ms(gap);
    if (rt->clock().now_ms() >= o.stop_clicking_local_ms) co_return;
    rt->spawn("click", purchase_task(rt, rpc, history, request(1), o.rpc_timeout_ms));
    co_return;
  }
  if (draw_unit(*rt) < o.batch_probability) {
    rt->spawn("batch", purchase_task(rt, rpc, history, request(clicks), o.rpc_timeout_ms));
    co_return;
  }
  for (int64_t i = 0; i < clicks; ++i) {
    if (i > 0) co_await rt->clock().sleep_ms(draw_between(*rt, 50, o.click_gap_max_ms));
    if (rt->clock().now_ms() >= o.stop_clicking_local_ms) co_return;
    rt->spawn("click", purchase_task(rt, rpc, history, request(1), o.rpc_timeout_ms));
  }
}

Task<void> click_loop(Runtime* rt, Rpc* rpc, Recorder* history, ClientState* st, ClientOptions o) {
  if (!o.script.empty()) {
    const int64_t boot_ms = rt->clock().now_ms();
    for (const ClientOptions::Click& c : o.script) {
      const int64_t wait = boot_ms + c.at_ms - rt->clock().now_ms();
      if (wait > 0) co_await rt->clock().sleep_ms(wait);
      PurchaseRequest req;
      req.client_ref = std::string(rt->process_name()) + "-" + std::to_string(st->next_ref++);
      req.activity_id = o.activity_id;
      req.user_id = o.user_id;
      req.lines.push_back(PurchaseLine{c.item_type, c.quantity});
      rt->spawn("click", purchase_task(rt, rpc, history, req, o.rpc_timeout_ms));
    }
    co_return;
  }
  if (o.bursts_per_s <= 0) co_return;
  const int64_t warm_up = o.start_clicking_local_ms - rt->clock().now_ms();
  if (warm_up > 0) co_await rt->clock().sleep_ms(warm_up);
  for (;;) {
    co_await rt->clock().sleep_ms(draw_exponential_ms(*rt, 1000.0 / o.bursts_per_s));
    if (rt->clock().now_ms() >= o.stop_clicking_local_ms) co_return;
    rt->spawn("burst", burst_task(rt, rpc, history, st, o));
  }
}

Task<void> poll_loop(Runtime* rt, Rpc* rpc, Recorder* history, Screen* screen, ClientState* st, ClientOptions o) {
  for (;;) {
    co_await rt->clock().sleep_ms(o.poll_interval_ms);
    const uint64_t op = history->invoke(rt->process_name(), "latest", "a=" + std::to_string(o.activity_id));
    RpcResult r = co_await rpc->call(std::string(kActivityService) + ".latest",
                                     make_message(LatestRequest{o.activity_id}), o.rpc_timeout_ms * 1000);
    const LatestReply* reply = r.ok() ? message_as<LatestReply>(r.reply) : nullptr;
    if (reply == nullptr || !reply->ok) {
      history->complete(op, r.ok() ? Outcome::kFail : Outcome::kInfo,
                        reply ? reply->describe() : rpc_status_name(r.status));
      continue;
    }
    history->complete(op, Outcome::kOk, reply->describe());
    update(screen, *st, [&] { st->view.on_poll_response(reply->records); });
  }
}

Task<void> ranking_once(Runtime* rt, Rpc* rpc, Recorder* history, ClientOptions o) {
  const int64_t wait = o.ranking_local_ms - rt->clock().now_ms();
  if (wait > 0) co_await rt->clock().sleep_ms(wait);
  const uint64_t op = history->invoke(rt->process_name(), "ranking", "a=" + std::to_string(o.activity_id));
  RpcResult r = co_await rpc->call(std::string(kActivityService) + ".ranking",
                                   make_message(RankingRequest{o.activity_id}), o.rpc_timeout_ms * 1000);
  const RankingReply* reply = r.ok() ? message_as<RankingReply>(r.reply) : nullptr;
  if (reply == nullptr || !reply->ok) {
    history->complete(op, Outcome::kInfo, reply ? reply->describe() : rpc_status_name(r.status));
  } else {
    history->complete(op, Outcome::kOk, reply->describe());
  }
}

Task<void> subscribe_loop(Runtime* rt, Rpc* rpc, Redis* redis, GatewayState* st, GatewayOptions o) {
  std::vector<std::string> channels;
  for (int64_t a : o.activities) channels.push_back(channel_of(a));
  for (;;) {
    auto broken = std::make_shared<bool>(false);
    RedisSubscriptionHandlers h;
    h.on_message = [rpc, st](const RedisPubSubMessage& m) {
      const std::optional<int64_t> activity = activity_of_channel(m.channel);
      if (!activity) return;
      auto it = st->connections.find(*activity);
      if (it == st->connections.end()) return;
      for (const std::string& client : it->second) rpc->send(client, make_message(WsPush{m.payload}));
    };
    h.on_broken = [broken](std::string_view) { *broken = true; };
    RedisSubscribeResult sub = co_await redis->subscribe(channels, std::move(h));
    while (sub.ok() && !*broken && sub.subscription->active()) co_await rt->clock().sleep_ms(100);
    co_await rt->clock().sleep_ms(o.resubscribe_delay_ms);
  }
}

}  // namespace

std::string push_service_of(std::string_view client_name) { return "ws." + std::string(client_name); }

Task<void> gateway_main(Runtime& rt, Rpc& rpc, Redis& redis, GatewayOptions options) {
  GatewayState st;
  GatewayState* s = &st;
  rpc.on_message(kGatewayService, [s](MessagePtr m) {
    if (const ConnectMessage* c = message_as<ConnectMessage>(m))
      s->connections[c->activity_id].insert(c->client_service);
  });
  co_await subscribe_loop(&rt, &rpc, &redis, &st, options);
}

Task<void> frontend_main(Runtime& rt, Rpc& rpc, Recorder& history, Screen* screen, ClientOptions o) {
  ClientState st(o.fixes, o.activity_id, screen);
  ClientState* s = &st;
  const std::string push = push_service_of(rt.process_name());
  rpc.on_message(push, [screen, s](MessagePtr m) {
    const WsPush* push_msg = message_as<WsPush>(m);
    if (push_msg == nullptr) return;
    const std::optional<Payload> payload = decode_payload(push_msg->payload);
    update(screen, *s, [&] { s->view.on_ws_message(payload); });
  });
  rt.spawn("clicks", click_loop(&rt, &rpc, &history, &st, o));
  rt.spawn("poll", poll_loop(&rt, &rpc, &history, screen, &st, o));
  if (o.ranking_local_ms > 0) rt.spawn("ranking", ranking_once(&rt, &rpc, &history, o));
  for (;;) {  // the WebSocket (re)connect heartbeat; keeps this frame (and `st`) alive
    rpc.send(kGatewayService, make_message(ConnectMessage{o.activity_id, push}));
    co_await rt.clock().sleep_ms(o.connect_interval_ms);
  }
}

}  // namespace fl::combo
