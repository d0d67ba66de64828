// Keyspace commands: DEL EXISTS EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL PERSIST TYPE DBSIZE FLUSHALL
// PING ECHO.
#include <limits>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

struct ExpireFlags {
  bool nx = false, xx = false, gt = false, lt = false;
};

// expire.c parseExtendedExpireArgumentsOrReply.
bool parse_expire_flags(const Ctx& c, ExpireFlags* f, RedisReply* error) {
  for (size_t j = 3; j < c.argc(); ++j) {
    const std::string& a = c.arg(j);
    if (iequals(a, "nx"))
      f->nx = true;
    else if (iequals(a, "xx"))
      f->xx = true;
    else if (iequals(a, "gt"))
      f->gt = true;
    else if (iequals(a, "lt"))
      f->lt = true;
    else {
      *error = RedisReply::error("ERR Unsupported option " + a);
      return false;
    }
  }
  if (f->nx && (f->xx || f->gt || f->lt)) {
    *error = RedisReply::error("ERR NX and XX, GT or LT options at the same time are not compatible");
    return false;
  }
  if (f->gt && f->lt) {
    *error = RedisReply::error("ERR GT and LT options at the same time are not compatible");
    return false;
  }
  return true;
}

// `absolute`: EXPIREAT/PEXPIREAT (a Unix time), else relative to now.
RedisReply expire_generic(Ctx& c, bool seconds, bool absolute) {
  ExpireFlags f;
  RedisReply error;
  if (!parse_expire_flags(c, &f, &error)) return error;
  auto parsed = parse_int64(c.arg(2));
  if (!parsed) return err_not_integer();
  const RedisReply bad_time = RedisReply::error("ERR invalid expire time in '" + c.name() + "' command");
  int64_t when = *parsed;
  if (seconds) {
    if (when > std::numeric_limits<int64_t>::max() / 1000 || when < std::numeric_limits<int64_t>::min() / 1000) {
      return bad_time;
    }
    when *= 1000;
  }
  if (!absolute) {
    if (when > std::numeric_limits<int64_t>::max() - c.now_ms) return bad_time;
    when += c.now_ms;
  }
  const std::string& key = c.arg(1);
  Entry* e = c.find(key);
  if (!e) return RedisReply::integer_of(0);
  const std::optional<int64_t> current = e->expire_at_ms;  // none = infinite
  if (f.nx && current) return RedisReply::integer_of(0);
  if (f.xx && !current) return RedisReply::integer_of(0);
  if (f.gt && (!current || when <= *current)) return RedisReply::integer_of(0);
  if (f.lt && current && when >= *current) return RedisReply::integer_of(0);
  if (when <= c.now_ms) {
    c.ks.erase(key);  // an expiry in the past deletes the key
    c.notify(kNotifyGeneric, "del", key);
  } else {
    c.ks.set_expire(key, when);
    c.notify(kNotifyGeneric, "expire", key);
  }
  return RedisReply::integer_of(1);
}

RedisReply ttl_generic(Ctx& c, bool seconds) {
  Entry* e = c.find(c.arg(1));
  if (!e) return RedisReply::integer_of(-2);
  if (!e->expire_at_ms) return RedisReply::integer_of(-1);
  int64_t ttl_ms = *e->expire_at_ms - c.now_ms;
  if (ttl_ms < 0) ttl_ms = 0;
  return RedisReply::integer_of(seconds ? (ttl_ms + 500) / 1000 : ttl_ms);
}

}  // namespace

RedisReply cmd_del(Ctx& c) {
  int64_t n = 0;
  for (size_t j = 1; j < c.argc(); ++j) {
    if (c.find(c.arg(j))) {
      c.ks.erase(c.arg(j));
      c.notify(kNotifyGeneric, "del", c.arg(j));
      ++n;
    }
  }
  return RedisReply::integer_of(n);
}

RedisReply cmd_exists(Ctx& c) {
  int64_t n = 0;
  for (size_t j = 1; j < c.argc(); ++j) {
    if (c.find(c.arg(j))) ++n;  // a key named twice counts twice, as in Redis
  }
  return RedisReply::integer_of(n);
}

RedisReply cmd_expire(Ctx& c) { return expire_generic(c, true, false); }
RedisReply cmd_pexpire(Ctx& c) { return expire_generic(c, false, false); }
RedisReply cmd_expireat(Ctx& c) { return expire_generic(c, true, true); }
RedisReply cmd_pexpireat(Ctx& c) { return expire_generic(c, false, true); }
RedisReply cmd_ttl(Ctx& c) { return ttl_generic(c, true); }
RedisReply cmd_pttl(Ctx& c) { return ttl_generic(c, false); }

RedisReply cmd_persist(Ctx& c) {
  Entry* e = c.find(c.arg(1));
  if (!e || !e->expire_at_ms) return RedisReply::integer_of(0);
  c.ks.set_expire(c.arg(1), std::nullopt);
  c.notify(kNotifyGeneric, "persist", c.arg(1));
  return RedisReply::integer_of(1);
}

RedisReply cmd_type(Ctx& c) {
  Entry* e = c.find(c.arg(1));
  return RedisReply::status(e ? value_type_name(e->type()) : "none");
}

RedisReply cmd_dbsize(Ctx& c) {
  // Like Redis, counts keys that expired but were not reclaimed yet.
  return RedisReply::integer_of(static_cast<int64_t>(c.ks.size()));
}

RedisReply cmd_flushall(Ctx& c) {
  if (c.argc() > 2) return err_syntax();
  if (c.argc() == 2 && !iequals(c.arg(1), "sync") && !iequals(c.arg(1), "async")) return err_syntax();
  for (Keyspace& ks : c.dbs()) ks.clear();  // every database; FLUSHDB clears only the selected one
  return RedisReply::ok();
}

RedisReply cmd_ping(Ctx& c) {
  if (c.argc() > 2) return err_arity("ping");
  if (c.session.subscribed()) {
    return RedisReply::array({RedisReply::bulk("pong"), RedisReply::bulk(c.argc() == 2 ? c.arg(1) : "")});
  }
  return c.argc() == 2 ? RedisReply::bulk(c.arg(1)) : RedisReply::status("PONG");
}

RedisReply cmd_echo(Ctx& c) { return RedisReply::bulk(c.arg(1)); }

}  // namespace fl::sim::redis
