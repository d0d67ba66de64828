// More of Redis 7.0's core command table, each as its t_*.c / db.c / expire.c writes it:
// strings SETEX PSETEX GETSET MSET MSETNX APPEND INCRBYFLOAT; keys UNLINK TOUCH KEYS COPY TIME;
// hashes HMSET HMGET HEXISTS HKEYS HVALS HSTRLEN HINCRBYFLOAT; sets SMISMEMBER SMOVE; sorted
// sets ZRANK ZREVRANK; transactions UNWATCH. (EXPIREAT and PEXPIREAT are in keys.cc with EXPIRE;
// WATCH and EXEC's check are in Engine::dispatch and Engine::run_exec.)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

// util.c string2ld: strtold of the whole string, no leading space, NaN refused.
std::optional<long double> parse_long_double(const std::string& s) {
  if (s.empty() || s.size() > 5000 || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  char* end = nullptr;
  const long double v = std::strtold(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isnan(v)) return std::nullopt;
  return v;
}

// util.c ld2string(LD_STR_HUMAN): %.17Lf without trailing zeros (nor a trailing dot); "-0" is "0".
std::string format_long_double(long double v) {
  char buf[5600];
  int n = std::snprintf(buf, sizeof buf, "%.17Lf", v);
  if (n <= 0 || n >= static_cast<int>(sizeof buf)) return "0";
  std::string s(buf, static_cast<size_t>(n));
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

// SETEX/PSETEX: SET with a relative expiry that must be positive.
RedisReply set_with_expire(Ctx& c, bool seconds) {
  const std::optional<int64_t> v = parse_int64(c.arg(2));
  if (!v) return err_not_integer();
  const std::optional<int64_t> at_ms = expire_arg_at_ms(c, *v, seconds, /*relative=*/true);
  if (!at_ms) return err_expire(c);
  c.ks.put(c.arg(1), c.arg(3), *at_ms);
  c.notify(kNotifyString, "set", c.arg(1));  // setGenericCommand
  c.notify(kNotifyGeneric, "expire", c.arg(1));
  return RedisReply::ok();
}

RedisReply mset_generic(Ctx& c, bool nx) {
  if (c.argc() % 2 == 0) return err_arity(c.name());
  if (nx) {
    for (size_t j = 1; j < c.argc(); j += 2) {
      if (c.find(c.arg(j))) return RedisReply::integer_of(0);
    }
  }
  for (size_t j = 1; j < c.argc(); j += 2) {
    c.ks.put(c.arg(j), c.arg(j + 1));
    c.notify(kNotifyString, "set", c.arg(j));  // each key's 'new' and 'set' in turn
  }
  return nx ? RedisReply::integer_of(1) : RedisReply::ok();
}

}  // namespace

RedisReply cmd_setex(Ctx& c) { return set_with_expire(c, true); }
RedisReply cmd_psetex(Ctx& c) { return set_with_expire(c, false); }
RedisReply cmd_mset(Ctx& c) { return mset_generic(c, false); }
RedisReply cmd_msetnx(Ctx& c) { return mset_generic(c, true); }

RedisReply cmd_getset(Ctx& c) {
  std::string* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  RedisReply old = s ? RedisReply::bulk(*s) : RedisReply::nil();
  c.ks.put(c.arg(1), c.arg(2));  // drops the TTL, as SET does
  c.notify(kNotifyString, "set", c.arg(1));
  return old;
}

RedisReply cmd_append(Ctx& c) {
  std::string* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) {
    c.ks.put(c.arg(1), c.arg(2));
    c.notify(kNotifyString, "append", c.arg(1));
    return RedisReply::integer_of(static_cast<int64_t>(c.arg(2).size()));
  }
  if (s->size() + c.arg(2).size() > 512ULL * 1024 * 1024) {
    return RedisReply::error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  }
  *s += c.arg(2);                         // keeps the TTL
  c.find(c.arg(1))->big_encoding = true;  // appended in place: a raw string, as SETRANGE's
  c.notify(kNotifyString, "append", c.arg(1));
  return RedisReply::integer_of(static_cast<int64_t>(s->size()));
}

RedisReply cmd_incrbyfloat(Ctx& c) {
  std::string* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  long double current = 0;
  if (s) {
    const std::optional<long double> v = parse_long_double(*s);
    if (!v) return RedisReply::error("ERR value is not a valid float");
    current = *v;
  }
  const std::optional<long double> incr = parse_long_double(c.arg(2));
  if (!incr) return RedisReply::error("ERR value is not a valid float");
  const long double result = current + *incr;
  if (std::isnan(result) || std::isinf(result)) return RedisReply::error("ERR increment would produce NaN or Infinity");
  const std::string text = format_long_double(result);
  if (s) {
    *s = text;  // keeps the TTL
  } else {
    c.ks.put(c.arg(1), text);
  }
  c.notify(kNotifyString, "incrbyfloat", c.arg(1));
  return RedisReply::bulk(text);
}

RedisReply cmd_unlink(Ctx& c) { return cmd_del(c); }

RedisReply cmd_touch(Ctx& c) {
  int64_t n = 0;
  for (size_t j = 1; j < c.argc(); ++j) {
    if (Entry* e = c.find(c.arg(j))) {
      e->access_ms = c.now_ms;
      ++n;
    }
  }
  return RedisReply::integer_of(n);
}

// KEYS pattern: the live keys that match, in the keyspace's (byte) order.
RedisReply cmd_keys(Ctx& c) {
  std::vector<std::string> names;
  for (const auto& [key, e] : c.ks.entries()) {
    if (e.expire_at_ms && *e.expire_at_ms <= c.now_ms) continue;  // logically expired
    if (glob_match(c.arg(1), key)) names.push_back(key);
  }
  return bulk_array(names);
}

// COPY source destination [DB destination-db] [REPLACE]
RedisReply cmd_copy(Ctx& c) {
  int64_t db = c.session.db;
  bool replace = false;
  for (size_t j = 3; j < c.argc(); ++j) {
    if (iequals(c.arg(j), "replace")) {
      replace = true;
    } else if (iequals(c.arg(j), "db") && j + 1 < c.argc()) {
      const std::optional<int64_t> v = parse_int64(c.arg(++j));
      if (!v || *v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max()) return err_not_integer();
      if (*v < 0 || *v >= kDatabases) return RedisReply::error("ERR DB index is out of range");
      db = *v;
    } else {
      return err_syntax();
    }
  }
  if (db == c.session.db && c.arg(1) == c.arg(2)) {
    return RedisReply::error("ERR source and destination objects are the same");
  }
  Entry* src = c.find(c.arg(1));
  if (!src) return RedisReply::integer_of(0);
  Keyspace& target = c.dbs()[static_cast<size_t>(db)];
  if (target.find(c.arg(2), c.now_ms) && !replace) return RedisReply::integer_of(0);
  const Value copied = src->value;
  const std::optional<int64_t> ttl = src->expire_at_ms;
  target.put(c.arg(2), copied, ttl);
  c.notify_in(static_cast<int>(db), kNotifyGeneric, "copy_to", c.arg(2));
  signal_if_blockable(c, db, c.arg(2));
  return RedisReply::integer_of(1);
}

// TIME: the Redis node's clock (simulated time), [seconds, microseconds].
RedisReply cmd_time(Ctx& c) {
  return RedisReply::array(
      {RedisReply::bulk(std::to_string(c.now_ms / 1000)), RedisReply::bulk(std::to_string(c.now_ms % 1000 * 1000))});
}

RedisReply cmd_hmset(Ctx& c) {
  if (c.argc() % 2 == 1) return err_arity("hmset");
  RedisReply reply = cmd_hset(c);
  return reply.is_error() ? reply : RedisReply::ok();
}

RedisReply cmd_hmget(Ctx& c) {
  Hash* h = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &h, &error)) return error;
  std::vector<RedisReply> out;
  for (size_t j = 2; j < c.argc(); ++j) {
    auto it = h ? h->find(c.arg(j)) : Hash::iterator{};
    out.push_back(h && it != h->end() ? RedisReply::bulk(it->second) : RedisReply::nil());
  }
  return RedisReply::array(std::move(out));
}

RedisReply cmd_hexists(Ctx& c) {
  Hash* h = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &h, &error)) return error;
  return RedisReply::integer_of(h && h->count(c.arg(2)) ? 1 : 0);
}

static RedisReply hash_column(Ctx& c, bool keys) {
  Hash* h = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &h, &error)) return error;
  std::vector<std::string> out;
  if (h) {
    for (const auto& [f, v] : *h) out.push_back(keys ? f : v);
  }
  return bulk_array(out);
}

RedisReply cmd_hkeys(Ctx& c) { return hash_column(c, true); }
RedisReply cmd_hvals(Ctx& c) { return hash_column(c, false); }

RedisReply cmd_hstrlen(Ctx& c) {
  Hash* h = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &h, &error)) return error;
  if (!h) return RedisReply::integer_of(0);
  auto it = h->find(c.arg(2));
  return RedisReply::integer_of(it == h->end() ? 0 : static_cast<int64_t>(it->second.size()));
}

RedisReply cmd_hincrbyfloat(Ctx& c) {
  const std::optional<long double> incr = parse_long_double(c.arg(3));
  if (!incr) return RedisReply::error("ERR value is not a valid float");
  Hash* h = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &h, &error)) return error;
  long double current = 0;
  if (h) {
    auto it = h->find(c.arg(2));
    if (it != h->end()) {
      const std::optional<long double> v = parse_long_double(it->second);
      if (!v) return RedisReply::error("ERR hash value is not a float");
      current = *v;
    }
  }
  const long double result = current + *incr;
  if (std::isnan(result) || std::isinf(result)) return RedisReply::error("ERR increment would produce NaN or Infinity");
  const std::string text = format_long_double(result);
  if (!h) h = &std::get<Hash>(c.ks.put(c.arg(1), Hash{}).value);
  (*h)[c.arg(2)] = text;
  c.notify(kNotifyHash, "hincrbyfloat", c.arg(1));
  return RedisReply::bulk(text);
}

RedisReply cmd_smismember(Ctx& c) {
  Set* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  std::vector<RedisReply> out;
  for (size_t j = 2; j < c.argc(); ++j) out.push_back(RedisReply::integer_of(s && s->count(c.arg(j)) ? 1 : 0));
  return RedisReply::array(std::move(out));
}

// SMOVE source destination member
RedisReply cmd_smove(Ctx& c) {
  Set* src = nullptr;
  Set* dst = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &src, &error)) return error;
  if (!c.lookup(c.arg(2), &dst, &error)) return error;
  if (!src) return RedisReply::integer_of(0);
  if (c.arg(1) == c.arg(2)) return RedisReply::integer_of(src->count(c.arg(3)) ? 1 : 0);
  if (src->erase(c.arg(3)) == 0) return RedisReply::integer_of(0);
  const std::string member = c.arg(3);
  c.notify(kNotifySet, "srem", c.arg(1));  // smoveCommand: srem, del when emptied, sadd
  c.drop_if_empty(c.arg(1), src->empty());
  if (!c.lookup(c.arg(2), &dst, &error)) return error;
  if (!dst) dst = &std::get<Set>(c.ks.put(c.arg(2), Set{}).value);
  if (dst->insert(member).second) c.notify(kNotifySet, "sadd", c.arg(2));
  return RedisReply::integer_of(1);
}

// ZRANK/ZREVRANK key member: the member's 0-based position in score order.
static RedisReply zrank(Ctx& c, bool reverse) {
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  if (!z) return RedisReply::nil();
  auto it = z->scores.find(c.arg(2));
  if (it == z->scores.end()) return RedisReply::nil();
  const auto pos = z->order.find({it->second, it->first});
  const int64_t rank = std::distance(z->order.begin(), pos);
  return RedisReply::integer_of(reverse ? static_cast<int64_t>(z->size()) - 1 - rank : rank);
}

// Engine::dispatch answers WATCH before it gets here (it snapshots the watched keys); reached
// only from a queued transaction, where Redis refuses it too.
RedisReply cmd_watch(Ctx&) { return RedisReply::error("ERR WATCH inside MULTI is not allowed"); }

// UNWATCH, also when queued in a transaction (EXEC has dropped the watches by then).
RedisReply cmd_unwatch(Ctx& c) {
  c.session.watched.clear();
  return RedisReply::ok();
}

RedisReply cmd_zrank(Ctx& c) { return zrank(c, false); }
RedisReply cmd_zrevrank(Ctx& c) { return zrank(c, true); }

}  // namespace fl::sim::redis
