#include "harness/real/hiredis_client.h"
#include "impl/ports/assert.h"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/time.h>

#include <poll.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <utility>

namespace fl::real {
namespace {

timeval to_timeval(int64_t ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

struct ArgvView {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  explicit ArgvView(const std::vector<std::string>& argv) {
    ptrs.reserve(argv.size());
    lens.reserve(argv.size());
    for (const auto& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
  }
};

// hiredis writes with write(2): a peer that closed the socket would raise SIGPIPE and kill the
// process. A client library must turn that into an error value, so SIGPIPE is ignored
// process-wide the first time any connection is opened.
void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] { ::signal(SIGPIPE, SIG_IGN); });
}

}  // namespace

RedisReply from_hiredis(const redisReply* r) {
  if (r == nullptr) return RedisReply::transport_error("no reply", true);
  switch (r->type) {
    case REDIS_REPLY_STRING:
      return RedisReply::bulk(std::string(r->str, r->len));
    case REDIS_REPLY_STATUS:
      return RedisReply::status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR:
      return RedisReply::error(std::string(r->str, r->len));
    case REDIS_REPLY_INTEGER:
      return RedisReply::integer_of(r->integer);
    case REDIS_REPLY_NIL:
      return RedisReply::nil();
    case REDIS_REPLY_ARRAY: {
      std::vector<RedisReply> elements;
      elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) elements.push_back(from_hiredis(r->element[i]));
      return RedisReply::array(std::move(elements));
    }
    default:
      return RedisReply::transport_error("unknown hiredis reply type", true);
  }
}

RedisConnection RedisConnection::unix_socket(std::string path, int64_t timeout_ms) {
  RedisConnection c;
  c.is_unix_ = true;
  c.endpoint_ = "unix:" + path;
  c.path_or_host_ = std::move(path);
  c.timeout_ms_ = timeout_ms;
  return c;
}

RedisConnection RedisConnection::tcp(std::string host, int port, int64_t timeout_ms) {
  RedisConnection c;
  c.is_unix_ = false;
  c.endpoint_ = host + ":" + std::to_string(port);
  c.path_or_host_ = std::move(host);
  c.port_ = port;
  c.timeout_ms_ = timeout_ms;
  return c;
}

RedisConnection::RedisConnection(RedisConnection&& o) noexcept { *this = std::move(o); }

RedisConnection& RedisConnection::operator=(RedisConnection&& o) noexcept {
  if (this != &o) {
    close();
    ctx_ = std::exchange(o.ctx_, nullptr);
    is_unix_ = o.is_unix_;
    path_or_host_ = std::move(o.path_or_host_);
    port_ = o.port_;
    timeout_ms_ = o.timeout_ms_;
    endpoint_ = std::move(o.endpoint_);
  }
  return *this;
}

RedisConnection::~RedisConnection() { close(); }

void RedisConnection::close() {
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
}

bool RedisConnection::connected() const { return ctx_ != nullptr && ctx_->err == 0; }

bool RedisConnection::connect(std::string* error) {
  ignore_sigpipe_once();
  close();
  timeval tv = to_timeval(timeout_ms_ > 0 ? timeout_ms_ : 5'000);
  ctx_ = is_unix_ ? redisConnectUnixWithTimeout(path_or_host_.c_str(), tv)
                  : redisConnectWithTimeout(path_or_host_.c_str(), port_, tv);
  if (ctx_ == nullptr || ctx_->err != 0) {
    if (error) *error = endpoint_ + ": " + (ctx_ ? ctx_->errstr : "cannot allocate context");
    close();
    return false;
  }
  if (timeout_ms_ > 0) redisSetTimeout(ctx_, tv);
  return true;
}

bool RedisConnection::ensure_connected(std::string* error) {
  if (connected()) return true;
  return connect(error);
}

void RedisConnection::set_timeout_ms(int64_t timeout_ms) {
  timeout_ms_ = timeout_ms;
  if (ctx_ != nullptr) redisSetTimeout(ctx_, to_timeval(timeout_ms));
}

RedisReply RedisConnection::broken(const std::string& what, bool indeterminate) {
  std::string why = endpoint_ + ": " + what;
  if (ctx_ != nullptr && ctx_->err != 0) why += ": " + std::string(ctx_->errstr);
  close();  // hiredis contexts are unusable after an error; reconnect next time
  return RedisReply::transport_error(why, indeterminate);
}

RedisReply RedisConnection::command(const std::vector<std::string>& argv) {
  FL_ASSERT(!argv.empty());
  std::string error;
  if (!ensure_connected(&error)) return RedisReply::transport_error(error, false);
  ArgvView v(argv);
  auto* r =
      static_cast<redisReply*>(redisCommandArgv(ctx_, static_cast<int>(argv.size()), v.ptrs.data(), v.lens.data()));
  if (r == nullptr) return broken("command failed", true);
  RedisReply out = from_hiredis(r);
  freeReplyObject(r);
  return out;
}

bool RedisConnection::send(const std::vector<std::string>& argv) {
  FL_ASSERT(!argv.empty());
  if (!ensure_connected(nullptr)) return false;
  ArgvView v(argv);
  if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), v.ptrs.data(), v.lens.data()) != REDIS_OK) {
    return false;
  }
  int done = 0;
  while (!done) {
    if (redisBufferWrite(ctx_, &done) != REDIS_OK) return false;
  }
  return true;
}

RedisReply RedisConnection::read_reply() {
  if (!connected()) return RedisReply::transport_error(endpoint_ + ": not connected", false);
  void* raw = nullptr;
  if (redisGetReply(ctx_, &raw) != REDIS_OK) return broken("read failed", true);
  auto* r = static_cast<redisReply*>(raw);
  RedisReply out = from_hiredis(r);
  freeReplyObject(r);
  return out;
}

bool RedisConnection::try_read_reply(int64_t timeout_ms, RedisReply* reply) {
  if (!connected()) {
    *reply = RedisReply::transport_error(endpoint_ + ": not connected", false);
    return true;
  }
  void* raw = nullptr;
  if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) {
    *reply = broken("protocol error", true);
    return true;
  }
  if (raw == nullptr) {
    pollfd p{ctx_->fd, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(timeout_ms));
    if (n <= 0) return false;
    if (redisBufferRead(ctx_) != REDIS_OK) {
      *reply = broken("read failed", true);
      return true;
    }
    if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) {
      *reply = broken("protocol error", true);
      return true;
    }
    if (raw == nullptr) return false;  // a partial reply; the rest comes later
  }
  auto* r = static_cast<redisReply*>(raw);
  *reply = from_hiredis(r);
  freeReplyObject(r);
  return true;
}

std::vector<RedisReply> RedisConnection::pipeline(const std::vector<std::vector<std::string>>& commands) {
  std::vector<RedisReply> out;
  out.reserve(commands.size());
  std::string error;
  if (!ensure_connected(&error)) {
    for (size_t i = 0; i < commands.size(); ++i) out.push_back(RedisReply::transport_error(error, false));
    return out;
  }
  for (const auto& argv : commands) {
    FL_ASSERT(!argv.empty());
    ArgvView v(argv);
    redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), v.ptrs.data(), v.lens.data());
  }
  for (size_t i = 0; i < commands.size(); ++i) {
    if (!connected()) {
      out.push_back(RedisReply::transport_error(endpoint_ + ": connection lost in pipeline", true));
      continue;
    }
    void* raw = nullptr;
    if (redisGetReply(ctx_, &raw) != REDIS_OK) {
      out.push_back(broken("pipeline read failed", true));
      continue;
    }
    auto* r = static_cast<redisReply*>(raw);
    out.push_back(from_hiredis(r));
    freeReplyObject(r);
  }
  return out;
}

}  // namespace fl::real

// ---------------------------------------------------------------------------------------------
// RealRedis

namespace fl::real {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<int64_t> block_timeout_ms(const std::vector<std::string>& argv) {
  if (argv.empty() || !(iequals(argv[0], "XREADGROUP") || iequals(argv[0], "XREAD"))) return std::nullopt;
  for (size_t i = 1; i + 1 < argv.size(); ++i) {
    if (iequals(argv[i], "STREAMS")) return std::nullopt;
    if (iequals(argv[i], "BLOCK")) {
      try {
        return std::stoll(argv[i + 1]);
      } catch (...) { return std::nullopt; }
    }
  }
  return std::nullopt;
}

struct RealRedis::Subscribers {
  std::vector<Subscription*> live;
};

class RealRedis::Subscription final : public RedisSubscription {
 public:
  Subscription(std::shared_ptr<Subscribers> registry, RedisConnection conn, std::vector<std::string> channels,
               RedisSubscriptionHandlers handlers)
      : registry_(std::move(registry)),
        conn_(std::move(conn)),
        channels_(std::move(channels)),
        handlers_(std::move(handlers)) {
    registry_->live.push_back(this);
  }
  ~Subscription() override {
    std::erase(registry_->live, this);
    if (active_) {
      std::vector<std::string> argv{"UNSUBSCRIBE"};
      argv.insert(argv.end(), channels_.begin(), channels_.end());
      (void)conn_.send(argv);  // best effort; the connection closes right after anyway
    }
  }
  bool active() const override { return active_; }
  const std::vector<std::string>& channels() const override { return channels_; }

  // Delivers what is buffered (waiting up to timeout_ms for the first message).
  size_t poll(int64_t timeout_ms) {
    size_t delivered = 0;
    RedisReply r;
    int64_t wait_ms = timeout_ms;
    while (active_ && conn_.try_read_reply(wait_ms, &r)) {
      wait_ms = 0;
      if (r.is_transport_error()) {
        active_ = false;
        if (handlers_.on_broken) handlers_.on_broken(r.str);
        break;
      }
      if (r.kind == RedisReply::Kind::kArray && r.elements.size() == 3 &&
          r.elements[0].kind == RedisReply::Kind::kBulk && r.elements[0].str == "message") {
        ++delivered;
        if (handlers_.on_message) handlers_.on_message({r.elements[1].str, r.elements[2].str});
      }
    }
    return delivered;
  }

 private:
  std::shared_ptr<Subscribers> registry_;
  RedisConnection conn_;
  std::vector<std::string> channels_;
  RedisSubscriptionHandlers handlers_;
  bool active_ = true;
};

RealRedis::RealRedis(std::function<RedisConnection()> make_connection, std::shared_ptr<const ScriptRegistry> scripts)
    : make_connection_(std::move(make_connection)),
      scripts_(std::move(scripts)),
      conn_(make_connection_()),
      timeout_ms_(conn_.timeout_ms()),
      subscribers_(std::make_shared<Subscribers>()) {}

RealRedis::~RealRedis() = default;

std::unique_ptr<RealRedis> RealRedis::unix_socket(const std::string& path,
                                                  std::shared_ptr<const ScriptRegistry> scripts, int64_t timeout_ms) {
  return std::make_unique<RealRedis>([path, timeout_ms] { return RedisConnection::unix_socket(path, timeout_ms); },
                                     std::move(scripts));
}

std::unique_ptr<RealRedis> RealRedis::tcp(const std::string& host, int port,
                                          std::shared_ptr<const ScriptRegistry> scripts, int64_t timeout_ms) {
  return std::make_unique<RealRedis>([host, port, timeout_ms] { return RedisConnection::tcp(host, port, timeout_ms); },
                                     std::move(scripts));
}

RedisReply RealRedis::command_sync(const std::vector<std::string>& argv) {
  std::optional<int64_t> block_ms = block_timeout_ms(argv);
  if (!block_ms) return conn_.command(argv);
  // BLOCK 0 waits forever; otherwise allow the block time plus the usual timeout.
  conn_.set_timeout_ms(*block_ms == 0 ? 0 : *block_ms + timeout_ms_);
  RedisReply r = conn_.command(argv);
  conn_.set_timeout_ms(timeout_ms_);
  return r;
}

std::vector<RedisReply> RealRedis::pipeline_sync(const std::vector<std::vector<std::string>>& cmds) {
  std::vector<RedisReply> replies = conn_.pipeline(cmds);
  for (const RedisReply& r : replies) {
    if (r.is_transport_error()) return std::vector<RedisReply>(replies.size(), r);
  }
  return replies;
}

RedisReply RealRedis::script_sync(std::string_view name, const std::vector<std::string>& keys,
                                  const std::vector<std::string>& args) {
  const RedisScript* s = scripts_ ? scripts_->by_name(name) : nullptr;
  if (s == nullptr) return RedisReply::error("ERR faultline: unknown script '" + std::string(name) + "'");
  std::vector<std::string> argv{"EVALSHA", scripts_->sha1_of(name), std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  RedisReply r = conn_.command(argv);
  if (r.is_error() && r.str.rfind("NOSCRIPT", 0) == 0) {
    argv[0] = "EVAL";
    argv[1] = s->lua;
    r = conn_.command(argv);
  }
  return r;
}

Task<RedisReply> RealRedis::command(std::vector<std::string> argv) { co_return command_sync(argv); }

Task<std::vector<RedisReply>> RealRedis::pipeline(std::vector<std::vector<std::string>> cmds) {
  co_return pipeline_sync(cmds);
}

Task<RedisReply> RealRedis::script(std::string_view name, std::vector<std::string> keys,
                                   std::vector<std::string> args) {
  co_return script_sync(name, keys, args);
}

Task<RedisSubscribeResult> RealRedis::subscribe(std::vector<std::string> channels, RedisSubscriptionHandlers handlers) {
  RedisSubscribeResult result;
  if (channels.empty()) {
    result.reply = RedisReply::error("ERR wrong number of arguments for 'subscribe' command");
    co_return result;
  }
  RedisConnection conn = make_connection_();
  std::vector<std::string> argv{"SUBSCRIBE"};
  argv.insert(argv.end(), channels.begin(), channels.end());
  if (!conn.send(argv)) {
    result.reply = RedisReply::transport_error(conn.endpoint() + ": cannot send SUBSCRIBE", false);
    co_return result;
  }
  std::vector<RedisReply> confirmations;
  for (size_t i = 0; i < channels.size(); ++i) {
    RedisReply r = conn.read_reply();
    if (!r.ok_reply()) {
      result.reply = r;
      co_return result;
    }
    confirmations.push_back(std::move(r));
  }
  result.reply = RedisReply::array(std::move(confirmations));
  result.subscription =
      std::make_unique<Subscription>(subscribers_, std::move(conn), std::move(channels), std::move(handlers));
  co_return result;
}

size_t RealRedis::poll_subscriptions(int64_t timeout_ms) {
  size_t delivered = 0;
  std::vector<Subscription*> live = subscribers_->live;  // handlers may destroy subscriptions
  for (size_t i = 0; i < live.size(); ++i) {
    if (std::find(subscribers_->live.begin(), subscribers_->live.end(), live[i]) == subscribers_->live.end()) {
      continue;
    }
    // Only the first subscription waits; the rest just drain what is buffered.
    delivered += live[i]->poll(i == 0 ? timeout_ms : 0);
  }
  return delivered;
}

}  // namespace fl::real
