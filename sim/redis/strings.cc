// String commands: GET SET SETNX INCR INCRBY DECR DECRBY MGET GETDEL GETEX.
#include <limits>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

enum class ExpireUnit : uint8_t { kNone, kEx, kPx, kExAt, kPxAt };

// t_string.c parseExtendedStringArgumentsOrReply + getExpireMillisecondsOrReply for SET.
struct SetOptions {
  bool nx = false, xx = false, get = false, keepttl = false;
  ExpireUnit unit = ExpireUnit::kNone;
  const std::string* expire_arg = nullptr;
};

bool parse_set_options(const Ctx& c, SetOptions* o) {
  for (size_t j = 3; j < c.argc(); ++j) {
    const std::string& a = c.arg(j);
    const bool has_next = j + 1 < c.argc();
    if (iequals(a, "nx") && !o->xx) {
      o->nx = true;
    } else if (iequals(a, "xx") && !o->nx) {
      o->xx = true;
    } else if (iequals(a, "get")) {
      o->get = true;
    } else if (iequals(a, "keepttl") && o->unit == ExpireUnit::kNone) {
      o->keepttl = true;
    } else if (o->unit == ExpireUnit::kNone && !o->keepttl && has_next &&
               (iequals(a, "ex") || iequals(a, "px") || iequals(a, "exat") || iequals(a, "pxat"))) {
      o->unit = iequals(a, "ex")     ? ExpireUnit::kEx
                : iequals(a, "px")   ? ExpireUnit::kPx
                : iequals(a, "exat") ? ExpireUnit::kExAt
                                     : ExpireUnit::kPxAt;
      o->expire_arg = &c.arg(++j);
    } else {
      return false;
    }
  }
  return true;
}

// The absolute expiry in ms, or an error reply.
bool set_expire_at(const Ctx& c, const SetOptions& o, int64_t* at_ms, RedisReply* error) {
  auto v = parse_int64(*o.expire_arg);
  if (!v) {
    *error = err_not_integer();
    return false;
  }
  const bool seconds = o.unit == ExpireUnit::kEx || o.unit == ExpireUnit::kExAt;
  const bool relative = o.unit == ExpireUnit::kEx || o.unit == ExpireUnit::kPx;
  const std::optional<int64_t> when = expire_arg_at_ms(c, *v, seconds, relative);
  if (!when) {
    *error = err_expire(c);
    return false;
  }
  *at_ms = *when;
  return true;
}

RedisReply incr_by(Ctx& c, const std::string& key, int64_t delta) {
  std::string* s = nullptr;
  RedisReply error;
  if (!c.lookup(key, &s, &error)) return error;
  int64_t current = 0;
  if (s) {
    auto v = parse_int64(*s);
    if (!v) return err_not_integer();
    current = *v;
  }
  if ((delta < 0 && current < 0 && delta < std::numeric_limits<int64_t>::min() - current) ||
      (delta > 0 && current > 0 && delta > std::numeric_limits<int64_t>::max() - current)) {
    return RedisReply::error("ERR increment or decrement would overflow");
  }
  const int64_t result = current + delta;
  if (s) {
    *s = std::to_string(result);        // keeps the TTL, as INCR does
    c.find(key)->big_encoding = false;  // a new int-encoded object (after SETRANGE's raw one)
  } else {
    c.ks.put(key, std::to_string(result));
  }
  c.notify(kNotifyString, "incrby", key);
  return RedisReply::integer_of(result);
}

}  // namespace

RedisReply cmd_get(Ctx& c) {
  std::string* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  return s ? RedisReply::bulk(*s) : RedisReply::nil();
}

RedisReply cmd_set(Ctx& c) {
  SetOptions o;
  if (!parse_set_options(c, &o)) return err_syntax();
  int64_t at_ms = 0;
  RedisReply error;
  if (o.unit != ExpireUnit::kNone && !set_expire_at(c, o, &at_ms, &error)) return error;
  const std::string& key = c.arg(1);
  Entry* e = c.find(key);
  RedisReply old = RedisReply::nil();
  if (o.get && e) {
    const std::string* s = std::get_if<std::string>(&e->value);
    if (!s) return err_wrongtype();
    old = RedisReply::bulk(*s);
  }
  if ((o.nx && e) || (o.xx && !e)) return o.get ? old : RedisReply::nil();
  std::optional<int64_t> ttl = (o.keepttl && e) ? e->expire_at_ms : std::nullopt;
  if (o.unit != ExpireUnit::kNone) ttl = at_ms;
  c.ks.put(key, c.arg(2), ttl);
  c.notify(kNotifyString, "set", key);
  if (o.unit != ExpireUnit::kNone) c.notify(kNotifyGeneric, "expire", key);
  return o.get ? old : RedisReply::ok();
}

RedisReply cmd_setnx(Ctx& c) {
  if (c.find(c.arg(1))) return RedisReply::integer_of(0);
  c.ks.put(c.arg(1), c.arg(2));
  c.notify(kNotifyString, "set", c.arg(1));
  return RedisReply::integer_of(1);
}

RedisReply cmd_incr(Ctx& c) { return incr_by(c, c.arg(1), 1); }
RedisReply cmd_decr(Ctx& c) { return incr_by(c, c.arg(1), -1); }

RedisReply cmd_incrby(Ctx& c) {
  auto delta = parse_int64(c.arg(2));
  if (!delta) return err_not_integer();
  return incr_by(c, c.arg(1), *delta);
}

RedisReply cmd_decrby(Ctx& c) {
  auto delta = parse_int64(c.arg(2));
  if (!delta) return err_not_integer();
  if (*delta == std::numeric_limits<int64_t>::min()) return RedisReply::error("ERR decrement would overflow");
  return incr_by(c, c.arg(1), -*delta);
}

RedisReply cmd_mget(Ctx& c) {
  std::vector<RedisReply> out;
  for (size_t j = 1; j < c.argc(); ++j) {
    Entry* e = c.find(c.arg(j));
    const std::string* s = e ? std::get_if<std::string>(&e->value) : nullptr;
    out.push_back(s ? RedisReply::bulk(*s) : RedisReply::nil());
  }
  return RedisReply::array(std::move(out));
}

}  // namespace fl::sim::redis

namespace fl::sim::redis {

RedisReply cmd_getdel(Ctx& c) {
  std::string* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) return RedisReply::nil();
  RedisReply value = RedisReply::bulk(*s);
  c.ks.erase(c.arg(1));
  return value;
}

// GETEX key [EX s | PX ms | EXAT ts | PXAT ts | PERSIST]: the options are parsed first, then the
// key is looked up, then the expire time validated (getexCommand's order).
RedisReply cmd_getex(Ctx& c) {
  SetOptions o;
  bool persist = false;
  for (size_t j = 2; j < c.argc(); ++j) {
    const std::string& a = c.arg(j);
    if (iequals(a, "persist") && o.unit == ExpireUnit::kNone && !persist) {
      persist = true;
    } else if (o.unit == ExpireUnit::kNone && !persist && j + 1 < c.argc() &&
               (iequals(a, "ex") || iequals(a, "px") || iequals(a, "exat") || iequals(a, "pxat"))) {
      o.unit = iequals(a, "ex")     ? ExpireUnit::kEx
               : iequals(a, "px")   ? ExpireUnit::kPx
               : iequals(a, "exat") ? ExpireUnit::kExAt
                                    : ExpireUnit::kPxAt;
      o.expire_arg = &c.arg(++j);
    } else {
      return err_syntax();
    }
  }
  std::string* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) return RedisReply::nil();
  int64_t at_ms = 0;
  if (o.unit != ExpireUnit::kNone && !set_expire_at(c, o, &at_ms, &error)) return error;
  RedisReply value = RedisReply::bulk(*s);
  if (o.unit != ExpireUnit::kNone) {
    if (at_ms <= c.now_ms)
      c.ks.erase(c.arg(1));  // an expiry in the past deletes the key
    else
      c.ks.set_expire(c.arg(1), at_ms);
  } else if (persist) {
    c.ks.set_expire(c.arg(1), std::nullopt);
  }
  return value;
}

}  // namespace fl::sim::redis
