// Sorted-set commands: ZADD ZINCRBY ZSCORE ZMSCORE ZREM ZCARD ZPOPMIN ZPOPMAX. Order is Redis's: score, then member
// bytes. The range family is in zrange.cc, the set operations in zsetops.cc.
#include <algorithm>
#include <cmath>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

struct ZAddFlags {
  bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
};

enum class ZAddOutcome : uint8_t { kAdded, kUpdated, kUnchanged, kNop, kNaN };

// t_zset.c zsetAdd. A listpack stores a score as text (d2string, which writes -0 as "0"): a
// -0 written to a `listpack` zset reads back as 0; the reply (new_score) keeps the sign.
ZAddOutcome zset_add(ZSet& z, const std::string& member, double score, const ZAddFlags& f, double* new_score,
                     bool listpack) {
  const auto stored = [listpack](double s) { return listpack && s == 0 ? 0.0 : s; };
  auto it = z.scores.find(member);
  if (it != z.scores.end()) {
    if (f.nx) return ZAddOutcome::kNop;
    const double current = it->second;
    if (f.incr) {
      score += current;
      if (std::isnan(score)) return ZAddOutcome::kNaN;
    }
    if ((f.lt && score >= current) || (f.gt && score <= current)) return ZAddOutcome::kNop;
    *new_score = score;
    if (score == current) return ZAddOutcome::kUnchanged;
    z.put(member, stored(score));
    return ZAddOutcome::kUpdated;
  }
  if (f.xx) return ZAddOutcome::kNop;
  z.put(member, stored(score));
  *new_score = score;
  return ZAddOutcome::kAdded;
}

RedisReply err_nan() { return RedisReply::error("ERR resulting score is not a number (NaN)"); }

}  // namespace

RedisReply cmd_zadd(Ctx& c) {
  ZAddFlags f;
  size_t idx = 2;
  for (; idx < c.argc(); ++idx) {
    const std::string& opt = c.arg(idx);
    if (iequals(opt, "nx"))
      f.nx = true;
    else if (iequals(opt, "xx"))
      f.xx = true;
    else if (iequals(opt, "ch"))
      f.ch = true;
    else if (iequals(opt, "incr"))
      f.incr = true;
    else if (iequals(opt, "gt"))
      f.gt = true;
    else if (iequals(opt, "lt"))
      f.lt = true;
    else
      break;
  }
  const size_t elements = c.argc() - idx;
  if (elements == 0 || elements % 2 == 1) return err_syntax();
  if (f.nx && f.xx) return RedisReply::error("ERR XX and NX options at the same time are not compatible");
  if ((f.gt && f.nx) || (f.lt && f.nx) || (f.gt && f.lt)) {
    return RedisReply::error("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (f.incr && elements > 2) return RedisReply::error("ERR INCR option supports a single increment-element pair");
  std::vector<double> scores;
  for (size_t j = idx; j < c.argc(); j += 2) {
    auto s = parse_double(c.arg(j));
    if (!s) return err_not_float();
    scores.push_back(*s);
  }
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  int64_t added = 0, updated = 0, processed = 0;
  double new_score = 0;
  if (!z && !f.xx) {
    z = &std::get<ZSet>(c.ks.put(c.arg(1), ZSet{}).value);
    c.signal(c.arg(1));  // dbAdd: a client blocked on the key may pop now
  }
  const bool listpack = z && !c.find(c.arg(1))->big_encoding;
  for (size_t i = 0; z && i < scores.size(); ++i) {
    switch (zset_add(*z, c.arg(idx + 2 * i + 1), scores[i], f, &new_score, listpack)) {
      case ZAddOutcome::kNaN:
        return err_nan();
      case ZAddOutcome::kAdded:
        ++added;
        ++processed;
        break;
      case ZAddOutcome::kUpdated:
        ++updated;
        ++processed;
        break;
      case ZAddOutcome::kUnchanged:
        ++processed;
        break;
      case ZAddOutcome::kNop:
        break;
    }
  }
  if (added || updated) c.notify(kNotifyZset, f.incr ? "zincr" : "zadd", c.arg(1));
  if (f.incr) return processed ? RedisReply::bulk(format_double(new_score)) : RedisReply::nil();
  return RedisReply::integer_of(f.ch ? added + updated : added);
}

RedisReply cmd_zincrby(Ctx& c) {
  auto delta = parse_double(c.arg(2));
  if (!delta) return err_not_float();
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  if (!z) {
    z = &std::get<ZSet>(c.ks.put(c.arg(1), ZSet{}).value);
    c.signal(c.arg(1));  // dbAdd
  }
  ZAddFlags f;
  f.incr = true;
  double new_score = 0;
  const bool listpack = !c.find(c.arg(1))->big_encoding;
  if (zset_add(*z, c.arg(3), *delta, f, &new_score, listpack) == ZAddOutcome::kNaN) return err_nan();
  c.notify(kNotifyZset, "zincr", c.arg(1));
  return RedisReply::bulk(format_double(new_score));
}

RedisReply cmd_zscore(Ctx& c) {
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  if (!z) return RedisReply::nil();
  auto it = z->scores.find(c.arg(2));
  return it == z->scores.end() ? RedisReply::nil() : RedisReply::bulk(format_double(it->second));
}

RedisReply cmd_zmscore(Ctx& c) {
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  std::vector<RedisReply> out;
  for (size_t j = 2; j < c.argc(); ++j) {
    const double* score = nullptr;
    if (z) {
      auto it = z->scores.find(c.arg(j));
      if (it != z->scores.end()) score = &it->second;
    }
    out.push_back(score ? RedisReply::bulk(format_double(*score)) : RedisReply::nil());
  }
  return RedisReply::array(std::move(out));
}

namespace {

// genericZpopCommand: up to `count` members from the low (min) or high end, as a flat
// [member, score, ...] array (resp3.h nests it into pairs when a count was given).
RedisReply zpop(Ctx& c, bool min) {
  int64_t count = 1;
  if (c.argc() > 3) return err_syntax();
  if (c.argc() == 3) {
    // getPositiveLongFromObjectOrReply: one message for "not a number" and "negative".
    auto v = parse_int64(c.arg(2));
    if (!v || *v < 0) return RedisReply::error("ERR value is out of range, must be positive");
    count = *v;
  }
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  std::vector<RedisReply> out;
  while (z && count-- > 0 && z->size() > 0) {
    auto it = min ? z->order.begin() : std::prev(z->order.end());
    const auto [score, member] = *it;
    out.push_back(RedisReply::bulk(member));
    out.push_back(RedisReply::bulk(format_double(score)));
    z->erase(member);
  }
  if (z) c.drop_if_empty(c.arg(1), z->size() == 0);
  return RedisReply::array(std::move(out));
}

}  // namespace

RedisReply cmd_zpopmin(Ctx& c) { return zpop(c, true); }
RedisReply cmd_zpopmax(Ctx& c) { return zpop(c, false); }

RedisReply cmd_zrem(Ctx& c) {
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  if (!z) return RedisReply::integer_of(0);
  int64_t n = 0;
  for (size_t j = 2; j < c.argc(); ++j) n += z->erase(c.arg(j)) ? 1 : 0;
  if (n) c.notify(kNotifyZset, "zrem", c.arg(1));
  c.drop_if_empty(c.arg(1), z->size() == 0);
  return RedisReply::integer_of(n);
}

RedisReply cmd_zcard(Ctx& c) {
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  return RedisReply::integer_of(z ? static_cast<int64_t>(z->size()) : 0);
}

}  // namespace fl::sim::redis
