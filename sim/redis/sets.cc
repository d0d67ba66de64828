// Set commands: SADD SREM SISMEMBER SMEMBERS SCARD SINTER SUNION SDIFF (and their STORE forms)
// SINTERCARD. Members answer in byte order (real Redis: numeric order for small integer sets,
// unspecified otherwise).
#include <algorithm>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

RedisReply cmd_sadd(Ctx& c) {
  Set* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) s = &std::get<Set>(c.ks.put(c.arg(1), Set{}).value);
  int64_t added = 0;
  for (size_t j = 2; j < c.argc(); ++j) added += s->insert(c.arg(j)).second ? 1 : 0;
  if (added) c.notify(kNotifySet, "sadd", c.arg(1));
  return RedisReply::integer_of(added);
}

RedisReply cmd_srem(Ctx& c) {
  Set* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) return RedisReply::integer_of(0);
  int64_t removed = 0;
  for (size_t j = 2; j < c.argc(); ++j) removed += static_cast<int64_t>(s->erase(c.arg(j)));
  if (removed) c.notify(kNotifySet, "srem", c.arg(1));
  c.drop_if_empty(c.arg(1), s->empty());
  return RedisReply::integer_of(removed);
}

RedisReply cmd_sismember(Ctx& c) {
  Set* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  return RedisReply::integer_of(s && s->count(c.arg(2)) ? 1 : 0);
}

RedisReply cmd_smembers(Ctx& c) {
  Set* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  return bulk_array(s ? std::vector<std::string>(s->begin(), s->end()) : std::vector<std::string>{});
}

RedisReply cmd_scard(Ctx& c) {
  Set* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  return RedisReply::integer_of(s ? static_cast<int64_t>(s->size()) : 0);
}

}  // namespace fl::sim::redis

namespace fl::sim::redis {

// SINTERCARD numkeys key [key ...] [LIMIT limit]
RedisReply cmd_sintercard(Ctx& c) {
  auto numkeys = parse_int64(c.arg(1));
  if (!numkeys || *numkeys <= 0) return RedisReply::error("ERR numkeys should be greater than 0");
  if (*numkeys > static_cast<int64_t>(c.argc()) - 2) {
    return RedisReply::error("ERR Number of keys can't be greater than number of args");
  }
  const size_t first = 2, end = first + static_cast<size_t>(*numkeys);
  int64_t limit = 0;
  for (size_t j = end; j < c.argc(); j += 2) {
    if (!iequals(c.arg(j), "limit") || j + 1 >= c.argc()) return err_syntax();
    // getPositiveLongFromObjectOrReply: one message for "not a number" and "negative" (found by
    // the differential suite).
    auto v = parse_int64(c.arg(j + 1));
    if (!v || *v < 0) return RedisReply::error("ERR LIMIT can't be negative");
    limit = *v;
  }
  std::vector<const Set*> sets;
  RedisReply error;
  bool empty = false;
  for (size_t j = first; j < end; ++j) {
    Set* s = nullptr;
    if (!c.lookup(c.arg(j), &s, &error)) return error;
    if (!s)
      empty = true;
    else
      sets.push_back(s);
  }
  if (empty) return RedisReply::integer_of(0);
  std::sort(sets.begin(), sets.end(), [](const Set* a, const Set* b) { return a->size() < b->size(); });
  int64_t n = 0;
  for (const std::string& m : *sets.front()) {
    if (std::all_of(sets.begin() + 1, sets.end(), [&](const Set* s) { return s->count(m) > 0; })) ++n;
    if (limit && n >= limit) break;
  }
  return RedisReply::integer_of(n);
}

}  // namespace fl::sim::redis

namespace fl::sim::redis {

namespace {

enum class SetAlgebra : uint8_t { kInter, kUnion, kDiff };

// sinterGenericCommand / sunionDiffGenericCommand: the keys from argv[first] on. A missing key is
// the empty set (so SINTER with one missing key is empty); a key of another type is WRONGTYPE.
bool set_algebra(Ctx& c, size_t first, SetAlgebra op, Set* out, RedisReply* error) {
  for (size_t j = first; j < c.argc(); ++j) {
    Set* s = nullptr;
    if (!c.lookup(c.arg(j), &s, error)) return false;
    const Set empty;
    const Set& in = s ? *s : empty;
    if (j == first) {
      *out = in;
    } else if (op == SetAlgebra::kUnion) {
      out->insert(in.begin(), in.end());
    } else if (op == SetAlgebra::kInter) {
      std::erase_if(*out, [&](const std::string& m) { return in.count(m) == 0; });
    } else {
      std::erase_if(*out, [&](const std::string& m) { return in.count(m) > 0; });
    }
  }
  return true;
}

RedisReply set_algebra_reply(Ctx& c, SetAlgebra op) {
  Set result;
  RedisReply error;
  if (!set_algebra(c, 1, op, &result, &error)) return error;
  return bulk_array(std::vector<std::string>(result.begin(), result.end()));
}

// The STORE forms overwrite the destination whatever its type, and delete it when empty.
RedisReply set_algebra_store(Ctx& c, SetAlgebra op) {
  Set result;
  RedisReply error;
  if (!set_algebra(c, 2, op, &result, &error)) return error;
  const int64_t n = static_cast<int64_t>(result.size());
  c.ks.erase(c.arg(1));
  if (n > 0) c.ks.put(c.arg(1), std::move(result));
  return RedisReply::integer_of(n);
}

}  // namespace

RedisReply cmd_sinter(Ctx& c) { return set_algebra_reply(c, SetAlgebra::kInter); }
RedisReply cmd_sunion(Ctx& c) { return set_algebra_reply(c, SetAlgebra::kUnion); }
RedisReply cmd_sdiff(Ctx& c) { return set_algebra_reply(c, SetAlgebra::kDiff); }
RedisReply cmd_sinterstore(Ctx& c) { return set_algebra_store(c, SetAlgebra::kInter); }
RedisReply cmd_sunionstore(Ctx& c) { return set_algebra_store(c, SetAlgebra::kUnion); }
RedisReply cmd_sdiffstore(Ctx& c) { return set_algebra_store(c, SetAlgebra::kDiff); }

}  // namespace fl::sim::redis
