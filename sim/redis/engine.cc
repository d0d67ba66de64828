// Engine: command table, dispatch, MULTI/EXEC, pub/sub routing state, maintenance and
// persistence. The commands themselves live in one file per family.
#include "sim/redis/engine.h"

#include <algorithm>
#include <cassert>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

enum Flag : uint32_t {
  kWrite = 1,      // changes the keyspace: journaled for AOF
  kPubSubOk = 2,   // allowed in subscribed (RESP2 pub/sub) context
  kNoScript = 4,   // not allowed from scripts
};

struct Spec {
  std::string_view name;      // full name, lower case: "get", "xgroup|create"
  int arity;                  // Redis convention: n exact, -n at least n
  uint32_t flags;
  RedisReply (*fn)(Ctx&);
};

// Redis 7.0's arities and flags for the supported commands.
constexpr Spec kCommands[] = {
    {"get", 2, 0, cmd_get},           {"set", -3, kWrite, cmd_set},
    {"setnx", 3, kWrite, cmd_setnx},  {"incr", 2, kWrite, cmd_incr},
    {"incrby", 3, kWrite, cmd_incrby}, {"decr", 2, kWrite, cmd_decr},
    {"decrby", 3, kWrite, cmd_decrby}, {"mget", -2, 0, cmd_mget},
    {"del", -2, kWrite, cmd_del},     {"exists", -2, 0, cmd_exists},
    {"expire", -3, kWrite, cmd_expire}, {"pexpire", -3, kWrite, cmd_pexpire},
    {"ttl", 2, 0, cmd_ttl},           {"pttl", 2, 0, cmd_pttl},
    {"persist", 2, kWrite, cmd_persist}, {"type", 2, 0, cmd_type},
    {"hset", -4, kWrite, cmd_hset},   {"hsetnx", 4, kWrite, cmd_hsetnx},
    {"hget", 3, 0, cmd_hget},         {"hgetall", 2, 0, cmd_hgetall},
    {"hincrby", 4, kWrite, cmd_hincrby}, {"hdel", -3, kWrite, cmd_hdel},
    {"hlen", 2, 0, cmd_hlen},         {"sadd", -3, kWrite, cmd_sadd},
    {"srem", -3, kWrite, cmd_srem},   {"sismember", 3, 0, cmd_sismember},
    {"smembers", 2, 0, cmd_smembers}, {"scard", 2, 0, cmd_scard},
    {"zadd", -4, kWrite, cmd_zadd},   {"zincrby", 4, kWrite, cmd_zincrby},
    {"zscore", 3, 0, cmd_zscore},     {"zrem", -3, kWrite, cmd_zrem},
    {"zcard", 2, 0, cmd_zcard},       {"zrange", -4, 0, cmd_zrange},
    {"zrevrange", -4, 0, cmd_zrevrange}, {"xadd", -5, kWrite, cmd_xadd},
    {"xlen", 2, 0, cmd_xlen},         {"xrange", -4, 0, cmd_xrange},
    {"xrevrange", -4, 0, cmd_xrevrange}, {"xdel", -3, kWrite, cmd_xdel},
    {"xreadgroup", -7, kWrite, cmd_xreadgroup}, {"xack", -4, kWrite, cmd_xack},
    {"xpending", -3, 0, cmd_xpending}, {"xclaim", -6, kWrite, cmd_xclaim},
    {"xautoclaim", -6, kWrite, cmd_xautoclaim},
    {"publish", 3, 0, cmd_publish},
    {"subscribe", -2, kPubSubOk | kNoScript, cmd_subscribe},
    {"unsubscribe", -1, kPubSubOk | kNoScript, cmd_unsubscribe},
    {"eval", -3, kNoScript, cmd_eval}, {"evalsha", -3, kNoScript, cmd_evalsha},
    {"ping", -1, kPubSubOk, cmd_ping}, {"echo", 2, 0, cmd_echo},
    {"flushall", -1, kWrite, cmd_flushall}, {"dbsize", 1, 0, cmd_dbsize},
    // Handled by the engine itself (fn unused), listed for lookup and arity.
    {"multi", 1, kNoScript, nullptr}, {"exec", 1, kNoScript, nullptr},
    {"discard", 1, kNoScript, nullptr},
};

// Container commands: the subcommand decides arity and flags; cmd_xgroup / cmd_script switch
// on argv[1].
constexpr Spec kSubcommands[] = {
    {"xgroup|create", -5, kWrite, cmd_xgroup},     {"xgroup|destroy", 4, kWrite, cmd_xgroup},
    {"xgroup|createconsumer", 5, kWrite, cmd_xgroup}, {"xgroup|delconsumer", 5, kWrite, cmd_xgroup},
    {"xgroup|setid", -5, kWrite, cmd_xgroup},
    {"script|load", 3, kNoScript, cmd_script},     {"script|exists", -3, kNoScript, cmd_script},
    {"script|flush", -2, kNoScript, cmd_script},
};

const Spec* find_spec(std::string_view lower_name) {
  for (const Spec& s : kCommands) {
    if (s.name == lower_name) return &s;
  }
  for (const Spec& s : kSubcommands) {
    if (s.name == lower_name) return &s;
  }
  return nullptr;
}

bool is_container(std::string_view lower_name) { return lower_name == "xgroup" || lower_name == "script"; }

bool arity_ok(const Spec& s, size_t argc) {
  return s.arity >= 0 ? argc == static_cast<size_t>(s.arity) : argc >= static_cast<size_t>(-s.arity);
}

// Looks up argv's command; on failure *error is the reply Redis's processCommand gives.
const Spec* resolve(const std::vector<std::string>& argv, RedisReply* error) {
  const std::string name = lower(argv[0]);
  if (is_container(name)) {
    if (argv.size() < 2) {
      *error = err_arity(name);
      return nullptr;
    }
    const Spec* sub = find_spec(name + "|" + lower(argv[1]));
    if (!sub) {
      std::string upper = name;
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      *error = RedisReply::error("ERR unknown subcommand '" + argv[1].substr(0, 128) + "'. Try " + upper +
                                 " HELP.");
      return nullptr;
    }
    if (!arity_ok(*sub, argv.size())) {
      *error = err_arity(sub->name);
      return nullptr;
    }
    return sub;
  }
  const Spec* spec = find_spec(name);
  if (!spec) {
    std::string args;
    for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
      const size_t room = 128 - args.size();
      args += "'" + argv[i].substr(0, room) + "' ";
    }
    *error = RedisReply::error("ERR unknown command '" + argv[0].substr(0, 128) +
                               "', with args beginning with: " + args);
    return nullptr;
  }
  if (!arity_ok(*spec, argv.size())) {
    *error = err_arity(spec->name);
    return nullptr;
  }
  return spec;
}

}  // namespace

// ---- Ctx (declared in commands.h).

Entry* Ctx::find(const std::string& key) {
  const uint64_t before = engine.stats_.expired_lazy;
  Entry* e = ks.find(key, now_ms, &engine.stats_.expired_lazy);
  // Redis propagates an expiry as a DEL to the AOF (deleteExpiredKeyAndPropagate): a restart must
  // not bring back a key that had expired and been deleted, even if the clock went back meanwhile.
  if (&ks == &engine.live_ && engine.stats_.expired_lazy != before) engine.journal_write({"DEL", key}, now_ms);
  return e;
}

void Ctx::signal(const std::string& key) {
  if (&ks == &engine.live_) engine.signaled_.insert(key);
}

std::string Ctx::name() const { return lower(argv[0]); }

std::map<std::string, std::set<uint64_t>, std::less<>>& Ctx::channels() { return engine.channels_; }
std::vector<PubSubDelivery>& Ctx::deliveries() { return engine.deliveries_; }
void Ctx::observe_publish(const std::string& channel, const std::string& payload) {
  if (engine.publish_observer_ && &ks == &engine.live_) engine.publish_observer_(channel, payload);
}
std::set<std::string>& Ctx::loaded_scripts() { return engine.loaded_scripts_; }
const ScriptRegistry* Ctx::scripts() const { return engine.options_.scripts.get(); }
EngineStats& Ctx::stats() { return engine.stats_; }

RedisReply Ctx::call_nested(const std::vector<std::string>& args) {
  if (args.empty()) return RedisReply::error("ERR Please specify at least one argument for this redis lib call");
  RedisReply error;
  const Spec* spec = resolve(args, &error);
  if (!spec) {
    if (error.str.rfind("ERR wrong number", 0) == 0) {
      return RedisReply::error("ERR Wrong number of args calling Redis command from script");
    }
    return RedisReply::error("ERR Unknown Redis command called from script");
  }
  if (spec->flags & kNoScript) return RedisReply::error("ERR This Redis command is not allowed from script");
  Ctx nested{engine, ks, session, args, now_ms, /*in_script=*/true, in_exec};
  RedisReply reply = spec->fn(nested);
  if ((spec->flags & kWrite) && !reply.is_error() && &ks == &engine.live_) {
    engine.journal_write(args, now_ms);
  }
  if (&ks == &engine.live_) engine.observe(args, reply, now_ms, 1);
  return reply;
}

// ---- Engine.

const char* persistence_mode_name(PersistenceMode m) {
  switch (m) {
    case PersistenceMode::kNone: return "none";
    case PersistenceMode::kAofEverysec: return "aof-everysec";
    case PersistenceMode::kSnapshot: return "snapshot";
  }
  return "?";
}

std::optional<PersistenceMode> parse_persistence_mode(std::string_view name) {
  if (name == "none") return PersistenceMode::kNone;
  if (name == "aof-everysec" || name == "aof") return PersistenceMode::kAofEverysec;
  if (name == "snapshot" || name == "rdb") return PersistenceMode::kSnapshot;
  return std::nullopt;
}

Engine::Engine(EngineOptions options) : options_(std::move(options)) {
  assert(options_.aof_fsync_interval_ms > 0);
  assert(options_.snapshot_interval_ms > 0);
  assert(options_.active_expire_keys_per_loop > 0);
}

Engine::~Engine() = default;

RedisReply Engine::execute(Session& session, const std::vector<std::string>& argv, int64_t now_ms) {
  ++stats_.commands;
  session.blocked.reset();
  if (argv.empty()) return RedisReply::error("ERR empty command");
  RedisReply reply = dispatch(session, argv, now_ms, /*in_script=*/false);
  observe(argv, reply, now_ms, 0);
  return reply;
}

namespace {

// Redis's rejectCommand: a command refused before it runs (unknown, wrong arity, not allowed
// in subscribed context) flags an open transaction, and a refused EXEC aborts the transaction
// with "EXECABORT Transaction discarded because of: <reason>" (execCommandAbort). Found by the
// differential suite (properties/redis).
RedisReply reject(Session& session, const std::vector<std::string>& argv, RedisReply error) {
  if (iequals(argv[0], "exec")) {
    session.in_multi = false;
    session.multi_dirty = false;
    session.queued.clear();
    std::string reason = error.str.rfind("ERR ", 0) == 0 ? error.str.substr(4) : error.str;
    return RedisReply::error("EXECABORT Transaction discarded because of: " + reason);
  }
  if (session.in_multi) session.multi_dirty = true;  // EXEC will answer EXECABORT
  return error;
}

}  // namespace

RedisReply Engine::dispatch(Session& session, const std::vector<std::string>& argv, int64_t now_ms,
                            bool in_script) {
  RedisReply error;
  const Spec* spec = resolve(argv, &error);
  if (!spec) return reject(session, argv, std::move(error));
  const std::string_view name = spec->name;
  if (!session.channels.empty() && !(spec->flags & kPubSubOk)) {
    return reject(session, argv,
                  RedisReply::error("ERR Can't execute '" + std::string(name) +
                                    "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
                                    "allowed in this context"));
  }
  if (name == "multi") {
    if (session.in_multi) return RedisReply::error("ERR MULTI calls can not be nested");
    session.in_multi = true;
    session.multi_dirty = false;
    session.queued.clear();
    return RedisReply::ok();
  }
  if (name == "exec") {
    if (!session.in_multi) return RedisReply::error("ERR EXEC without MULTI");
    return run_exec(session, now_ms);
  }
  if (name == "discard") {
    if (!session.in_multi) return RedisReply::error("ERR DISCARD without MULTI");
    session.in_multi = false;
    session.multi_dirty = false;
    session.queued.clear();
    return RedisReply::ok();
  }
  if (session.in_multi) {
    session.queued.push_back(argv);
    return RedisReply::status("QUEUED");
  }
  Ctx ctx{*this, live_, session, argv, now_ms, in_script, /*in_exec=*/false};
  RedisReply reply = spec->fn(ctx);
  if ((spec->flags & kWrite) && !reply.is_error()) journal_write(argv, now_ms);
  return reply;
}

RedisReply Engine::run_exec(Session& session, int64_t now_ms) {
  std::vector<std::vector<std::string>> queued = std::move(session.queued);
  const bool dirty = session.multi_dirty;
  session.in_multi = false;
  session.multi_dirty = false;
  session.queued.clear();
  if (dirty) return RedisReply::error("EXECABORT Transaction discarded because of previous errors.");
  std::vector<RedisReply> replies;
  replies.reserve(queued.size());
  for (const auto& argv : queued) {
    RedisReply error;
    const Spec* spec = resolve(argv, &error);
    assert(spec && "queued commands were resolved when queued");
    if (!spec) {
      replies.push_back(error);
      continue;
    }
    Ctx ctx{*this, live_, session, argv, now_ms, /*in_script=*/true, /*in_exec=*/true};
    RedisReply reply = spec->fn(ctx);
    if ((spec->flags & kWrite) && !reply.is_error()) journal_write(argv, now_ms);
    observe(argv, reply, now_ms, 1);
    replies.push_back(std::move(reply));
  }
  return RedisReply::array(std::move(replies));
}

std::vector<std::string> Engine::take_signaled_keys() {
  std::vector<std::string> out(signaled_.begin(), signaled_.end());
  signaled_.clear();
  return out;
}

std::vector<PubSubDelivery> Engine::take_deliveries() {
  std::vector<PubSubDelivery> out = std::move(deliveries_);
  deliveries_.clear();
  return out;
}

void Engine::close_session(Session& session) {
  for (const auto& ch : session.channels) {
    auto it = channels_.find(ch);
    if (it == channels_.end()) continue;
    it->second.erase(session.id);
    if (it->second.empty()) channels_.erase(it);
  }
  session.channels.clear();
  session.in_multi = false;
  session.multi_dirty = false;
  session.queued.clear();
  session.blocked.reset();
}

// ---- Maintenance and persistence.

void Engine::tick(int64_t now_ms) {
  active_expire_cycle(now_ms);
  persist_if_due(now_ms);
}

size_t Engine::active_expire_cycle(int64_t now_ms) {
  // Like Redis's activeExpireCycle, bounded work per cycle; a round-robin cursor over the keys
  // with a TTL replaces random sampling so that the cycle is deterministic.
  size_t total = 0;
  const auto& expires = live_.expires();
  for (int loop = 0; loop < options_.active_expire_max_loops && !expires.empty(); ++loop) {
    std::vector<std::string> sample;
    auto it = expires.upper_bound(expire_cursor_);
    const size_t want = std::min<size_t>(options_.active_expire_keys_per_loop, expires.size());
    while (sample.size() < want) {
      if (it == expires.end()) it = expires.begin();
      sample.push_back(it->first);
      ++it;
    }
    expire_cursor_ = sample.back();
    size_t expired = 0;
    for (const auto& key : sample) {
      auto at = expires.find(key);
      if (at != expires.end() && at->second <= now_ms) {
        live_.erase(key);
        journal_write({"DEL", key}, now_ms);  // propagated like a lazy expiry (Ctx::find)
        ++expired;
      }
    }
    total += expired;
    // Redis repeats while more than 25% of the sample had expired (ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE... 10% in 7.0
    // with effort 1; we keep the classic 25%).
    if (expired * 4 <= sample.size()) break;
  }
  stats_.expired_active += total;
  return total;
}

void Engine::journal_write(const std::vector<std::string>& argv, int64_t now_ms) {
  if (options_.persistence != PersistenceMode::kAofEverysec) return;
  unsynced_.emplace_back(argv, now_ms);
}

void Engine::persist_if_due(int64_t now_ms) {
  if (options_.persistence == PersistenceMode::kNone) return;
  if (last_persist_ms_ < 0 || now_ms < last_persist_ms_) {
    last_persist_ms_ = now_ms;  // first tick, or the clock went back: restart the period
    return;
  }
  if (options_.persistence == PersistenceMode::kAofEverysec) {
    if (now_ms - last_persist_ms_ < options_.aof_fsync_interval_ms) return;
    // fsync: the journaled writes become durable. Replaying them on the durable copy reproduces
    // the live state because execution is a pure function of (state, argv, now_ms).
    Session replay_session;
    for (const auto& [argv, at_ms] : unsynced_) {
      RedisReply error;
      const Spec* spec = resolve(argv, &error);
      assert(spec);
      if (!spec) continue;
      Ctx ctx{*this, durable_, replay_session, argv, at_ms, /*in_script=*/true, /*in_exec=*/false};
      spec->fn(ctx);
    }
    unsynced_.clear();
    ++stats_.fsyncs;
  } else {
    if (now_ms - last_persist_ms_ < options_.snapshot_interval_ms) return;
    durable_ = live_;
    ++stats_.snapshots;
  }
  last_persist_ms_ = now_ms;
}

void Engine::recover(int64_t now_ms) {
  switch (options_.persistence) {
    case PersistenceMode::kNone: live_.clear(); break;
    case PersistenceMode::kAofEverysec: live_ = durable_; break;
    case PersistenceMode::kSnapshot: live_ = durable_; break;
  }
  unsynced_.clear();
  // Loading an AOF or RDB drops keys that expired meanwhile; Redis's expiry then appends their
  // DELs to the AOF, so a later restart on a clock that went back does not bring them back.
  std::vector<std::string> expired;
  for (const auto& [key, at_ms] : live_.expires()) {
    if (at_ms <= now_ms) expired.push_back(key);
  }
  live_.purge_expired(now_ms);
  for (const std::string& key : expired) journal_write({"DEL", key}, now_ms);
  channels_.clear();
  deliveries_.clear();
  signaled_.clear();
  loaded_scripts_.clear();
  expire_cursor_.clear();
  last_persist_ms_ = now_ms;
  ++stats_.recoveries;
}

}  // namespace fl::sim::redis
