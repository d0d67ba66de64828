// Hash commands: HSET HSETNX HGET HGETALL HINCRBY HDEL HLEN. HGETALL answers in field order
// (real Redis: insertion order for small hashes, unspecified for large ones).
#include <limits>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

// The hash at argv[1], created when absent and `create`; null with *error on WRONGTYPE.
Hash* hash_for_write(Ctx& c, RedisReply* error, bool* ok) {
  Hash* h = nullptr;
  *ok = c.lookup(c.arg(1), &h, error);
  if (!*ok) return nullptr;
  if (!h) h = &std::get<Hash>(c.ks.put(c.arg(1), Hash{}).value);
  return h;
}

}  // namespace

RedisReply cmd_hset(Ctx& c) {
  if (c.argc() % 2 == 1) return err_arity("hset");
  RedisReply error;
  bool ok = false;
  Hash* h = hash_for_write(c, &error, &ok);
  if (!ok) return error;
  int64_t created = 0;
  for (size_t j = 2; j + 1 < c.argc(); j += 2) {
    auto [it, inserted] = h->insert_or_assign(c.arg(j), c.arg(j + 1));
    created += inserted ? 1 : 0;
  }
  c.notify(kNotifyHash, "hset", c.arg(1));
  return RedisReply::integer_of(created);
}

RedisReply cmd_hsetnx(Ctx& c) {
  RedisReply error;
  bool ok = false;
  Hash* h = hash_for_write(c, &error, &ok);
  if (!ok) return error;
  if (!h->try_emplace(c.arg(2), c.arg(3)).second) return RedisReply::integer_of(0);
  c.notify(kNotifyHash, "hset", c.arg(1));
  return RedisReply::integer_of(1);
}

RedisReply cmd_hget(Ctx& c) {
  Hash* h = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &h, &error)) return error;
  if (!h) return RedisReply::nil();
  auto it = h->find(c.arg(2));
  return it == h->end() ? RedisReply::nil() : RedisReply::bulk(it->second);
}

RedisReply cmd_hgetall(Ctx& c) {
  Hash* h = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &h, &error)) return error;
  std::vector<RedisReply> out;
  if (h) {
    for (const auto& [f, v] : *h) {
      out.push_back(RedisReply::bulk(f));
      out.push_back(RedisReply::bulk(v));
    }
  }
  return RedisReply::array(std::move(out));
}

RedisReply cmd_hincrby(Ctx& c) {
  auto delta = parse_int64(c.arg(3));
  if (!delta) return err_not_integer();
  RedisReply error;
  Hash* h = nullptr;
  if (!c.lookup(c.arg(1), &h, &error)) return error;
  int64_t current = 0;
  if (h) {
    auto it = h->find(c.arg(2));
    if (it != h->end()) {
      auto v = parse_int64(it->second);
      if (!v) return RedisReply::error("ERR hash value is not an integer");
      current = *v;
    }
  }
  if ((*delta < 0 && current < 0 && *delta < std::numeric_limits<int64_t>::min() - current) ||
      (*delta > 0 && current > 0 && *delta > std::numeric_limits<int64_t>::max() - current)) {
    return RedisReply::error("ERR increment or decrement would overflow");
  }
  if (!h) h = &std::get<Hash>(c.ks.put(c.arg(1), Hash{}).value);
  const int64_t result = current + *delta;
  (*h)[c.arg(2)] = std::to_string(result);
  c.notify(kNotifyHash, "hincrby", c.arg(1));
  return RedisReply::integer_of(result);
}

RedisReply cmd_hdel(Ctx& c) {
  Hash* h = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &h, &error)) return error;
  if (!h) return RedisReply::integer_of(0);
  int64_t n = 0;
  for (size_t j = 2; j < c.argc(); ++j) n += static_cast<int64_t>(h->erase(c.arg(j)));
  if (n) c.notify(kNotifyHash, "hdel", c.arg(1));
  c.drop_if_empty(c.arg(1), h->empty());
  return RedisReply::integer_of(n);
}

RedisReply cmd_hlen(Ctx& c) {
  Hash* h = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &h, &error)) return error;
  return RedisReply::integer_of(h ? static_cast<int64_t>(h->size()) : 0);
}

}  // namespace fl::sim::redis
