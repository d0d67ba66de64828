#include "sim/redis/client.h"

#include <cstdlib>

#include "sim/redis/commands.h"
#include "impl/ports/assert.h"

namespace fl::sim::redis {

namespace {

constexpr int64_t kForeverUs = 365LL * 24 * 3600 * 1'000'000;

// A blocking list pop's timeout in seconds (BLPOP BRPOP BRPOPLPUSH BLMOVE: the last argument;
// BLMPOP: the first), as extra call time; 0 when argv is none of them.
int64_t list_block_allowance_us(const std::vector<std::string>& argv) {
  const std::string& name = argv[0];
  const bool last =
      iequals(name, "blpop") || iequals(name, "brpop") || iequals(name, "brpoplpush") || iequals(name, "blmove");
  if (!last && !iequals(name, "blmpop")) return 0;
  if (argv.size() < 2) return 0;
  const double secs = std::atof((last ? argv.back() : argv[1]).c_str());
  return secs <= 0 ? kForeverUs : static_cast<int64_t>(secs * 1e6) + 1000;
}

// Extra call timeout for XREADGROUP ... BLOCK ms and the blocking list pops, so the server's wait
// is not cut short.
int64_t block_allowance_us(const std::vector<std::string>& argv) {
  // Compared in place, not lowered into copies: this runs for every command a client sends.
  if (argv.empty()) return 0;
  if (argv[0].size() > 1 && (argv[0][0] == 'b' || argv[0][0] == 'B')) return list_block_allowance_us(argv);
  if (!iequals(argv[0], "xreadgroup")) return 0;
  for (size_t i = 1; i + 1 < argv.size(); ++i) {
    const std::string& opt = argv[i];
    if (iequals(opt, "streams")) break;
    if (iequals(opt, "block")) {
      const int64_t ms = std::atoll(argv[i + 1].c_str());
      return ms == 0 ? kForeverUs : ms * 1000;
    }
  }
  return 0;
}

// `verb script numkeys keys... args...`, allocated once.
std::vector<std::string> script_argv(const char* verb, const std::string& script, const std::vector<std::string>& keys,
                                     const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.emplace_back(verb);
  argv.push_back(script);
  argv.push_back(std::to_string(keys.size()));
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace

struct Client::SubState {
  uint64_t id = 0;
  uint64_t epoch = 0;
  std::vector<std::string> channels;
  RedisSubscriptionHandlers handlers;
  bool active = true;
};

class Client::Subscription final : public RedisSubscription {
 public:
  Subscription(Client* client, std::shared_ptr<bool> client_alive, std::shared_ptr<SubState> state)
      : client_(client), client_alive_(std::move(client_alive)), state_(std::move(state)) {}
  ~Subscription() override {
    const bool was_active = state_->active;
    state_->active = false;
    if (!*client_alive_) return;
    client_->subs_.erase(state_->id);
    if (!was_active || !client_->process_.alive()) return;
    // Best-effort UNSUBSCRIBE; nobody waits for its reply.
    RedisRequest req;
    req.kind = RedisRequest::Kind::kUnsubscribe;
    req.subscription_id = state_->id;
    client_->process_.spawn("redis-unsubscribe", [](Client* c, RedisRequest r) -> Task<void> {
      co_await c->send(std::move(r), 1, 0);
    }(client_, std::move(req)));
  }
  bool active() const override { return state_->active; }
  const std::vector<std::string>& channels() const override { return state_->channels; }

 private:
  Client* client_;
  std::shared_ptr<bool> client_alive_;
  std::shared_ptr<SubState> state_;
};

Client::Client(Process& process, ClientOptions options)
    : process_(process),
      options_(std::move(options)),
      push_service_(options_.service + ".push." + std::string(process.process_name())),
      alive_(std::make_shared<bool>(true)) {
  FL_ASSERT(options_.timeout_us > 0);
  FL_ASSERT(options_.check_interval_us > 0);
}

Client::~Client() { *alive_ = false; }

Task<std::vector<RedisReply>> Client::send(RedisRequest request, size_t expected_replies, int64_t extra_timeout_us) {
  // Nothing of `this` is touched after the co_await: the Client may be gone by then.
  const int64_t timeout_us = options_.timeout_us + extra_timeout_us;
  request.client = std::string(process_.process_name());
  RpcResult result = co_await process_.rpc().call(options_.service, make_message(std::move(request)), timeout_us);
  if (result.ok()) {
    const RedisResponse* response = message_as<RedisResponse>(result.reply);
    if (response && response->replies.size() == expected_replies) co_return response->replies;
    co_return std::vector<RedisReply>(expected_replies, RedisReply::transport_error("malformed response", true));
  }
  const RedisReply failure = RedisReply::transport_error(rpc_status_name(result.status), result.indeterminate());
  co_return std::vector<RedisReply>(expected_replies, failure);
}

Task<RedisReply> Client::command(std::vector<std::string> argv) {
  const int64_t extra_us = block_allowance_us(argv);
  RedisRequest req;
  req.commands.push_back(std::move(argv));
  std::vector<RedisReply> replies = co_await send(std::move(req), 1, extra_us);
  co_return std::move(replies[0]);
}

Task<std::vector<RedisReply>> Client::pipeline(std::vector<std::vector<std::string>> cmds) {
  if (cmds.empty()) co_return std::vector<RedisReply>{};
  const int64_t extra_us = block_allowance_us(cmds.back());
  const size_t n = cmds.size();
  RedisRequest req;
  req.commands = std::move(cmds);
  co_return co_await send(std::move(req), n, extra_us);
}

Task<RedisReply> Client::script(std::string_view name, std::vector<std::string> keys, std::vector<std::string> args) {
  const RedisScript* s = options_.scripts ? options_.scripts->by_name(name) : nullptr;
  if (!s) co_return RedisReply::error("ERR faultline: unknown script '" + std::string(name) + "'");
  // The registry is shared and immutable: holding it keeps `s` valid after suspending, even if
  // this Client is gone by then.
  const std::shared_ptr<const ScriptRegistry> scripts = options_.scripts;
  RedisReply reply = co_await command(script_argv("EVALSHA", scripts->sha1_of(name), keys, args));
  if (reply.is_error() && reply.str.rfind("NOSCRIPT", 0) == 0) {
    // Rare (the server restarted and forgot its scripts): only then is argv built a second time.
    reply = co_await command(script_argv("EVAL", s->lua, keys, args));
  }
  co_return std::move(reply);
}

Task<RedisSubscribeResult> Client::subscribe(std::vector<std::string> channels, RedisSubscriptionHandlers handlers) {
  if (subs_.empty()) {
    // (Re-)register the push receiver; registering again replaces the previous one.
    process_.rpc().on_message(push_service_, [this, alive = alive_](MessagePtr m) {
      if (*alive) on_push(m);
    });
  }
  auto state = std::make_shared<SubState>();
  do { state->id = process_.random_u64(); } while (state->id == 0 || subs_.count(state->id));
  state->epoch = process_.connection_epoch();
  state->channels = channels;
  state->handlers = std::move(handlers);
  subs_[state->id] = state;

  RedisRequest req;
  req.kind = RedisRequest::Kind::kSubscribe;
  req.subscription_id = state->id;
  req.subscriber_process = std::string(process_.process_name());
  req.subscriber_incarnation = process_.incarnation();
  req.subscriber_epoch = state->epoch;
  req.push_service = push_service_;
  std::vector<std::string> argv{"SUBSCRIBE"};
  argv.insert(argv.end(), channels.begin(), channels.end());
  req.commands.push_back(std::move(argv));
  std::shared_ptr<bool> alive = alive_;
  std::vector<RedisReply> replies = co_await send(std::move(req), 1, 0);
  RedisSubscribeResult result;
  result.reply = std::move(replies[0]);
  if (!*alive) co_return std::move(result);
  if (result.reply.kind != RedisReply::Kind::kArray || !state->active) {
    state->active = false;
    subs_.erase(state->id);
    if (result.reply.is_transport_error() && result.reply.indeterminate) {
      // The server may hold the subscription: tell it to drop it (best effort).
      RedisRequest drop;
      drop.kind = RedisRequest::Kind::kUnsubscribe;
      drop.subscription_id = state->id;
      process_.spawn("redis-unsubscribe", [](Client* c, RedisRequest r) -> Task<void> {
        co_await c->send(std::move(r), 1, 0);
      }(this, std::move(drop)));
    }
    co_return std::move(result);
  }
  process_.spawn("redis-subscription-check", health_check(state));
  result.subscription = std::make_unique<Subscription>(this, alive_, state);
  co_return std::move(result);
}

void Client::on_push(const MessagePtr& message) {
  const RedisPush* push = message_as<RedisPush>(message);
  if (!push) return;
  auto it = subs_.find(push->subscription_id);
  if (it == subs_.end() || !it->second->active) return;  // an old or closed subscription
  std::shared_ptr<SubState> state = it->second;          // the handler may unsubscribe
  if (state->handlers.on_message) state->handlers.on_message(RedisPubSubMessage{push->channel, push->payload});
}

Task<void> Client::health_check(std::shared_ptr<SubState> state) {
  std::shared_ptr<bool> alive = alive_;
  Process& process = process_;
  const int64_t interval_us = options_.check_interval_us;
  while (state->active) {
    co_await process.clock().sleep_us(interval_us);
    if (!*alive || !state->active) co_return;
    std::string broken;
    if (process.connection_epoch() != state->epoch) {
      broken = "connection reset";
    } else {
      RedisRequest req;
      req.kind = RedisRequest::Kind::kCheck;
      req.subscription_id = state->id;
      std::vector<RedisReply> replies = co_await send(std::move(req), 1, 0);
      if (!*alive || !state->active) co_return;
      const RedisReply& r = replies[0];
      if (r.is_transport_error())
        broken = "health check failed: " + r.str;
      else if (r.kind != RedisReply::Kind::kInteger || r.integer != 1)
        broken = "subscription lost by the server";
    }
    if (broken.empty()) continue;
    state->active = false;
    subs_.erase(state->id);
    if (state->handlers.on_broken) state->handlers.on_broken(broken);
    co_return;
  }
}

}  // namespace fl::sim::redis
