// Sorted-set commands: ZADD ZINCRBY ZSCORE ZREM ZCARD ZRANGE (rank and BYSCORE, REV, LIMIT,
// WITHSCORES) ZREVRANGE. Order is Redis's: score, then member bytes.
#include <algorithm>
#include <cmath>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

struct ZAddFlags {
  bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
};

enum class ZAddOutcome : uint8_t { kAdded, kUpdated, kUnchanged, kNop, kNaN };

// t_zset.c zsetAdd.
ZAddOutcome zset_add(ZSet& z, const std::string& member, double score, const ZAddFlags& f, double* new_score) {
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
    z.put(member, score);
    return ZAddOutcome::kUpdated;
  }
  if (f.xx) return ZAddOutcome::kNop;
  z.put(member, score);
  *new_score = score;
  return ZAddOutcome::kAdded;
}

RedisReply err_nan() { return RedisReply::error("ERR resulting score is not a number (NaN)"); }

struct ScoreBound {
  double value = 0;
  bool exclusive = false;
};

// t_zset.c zslParseRangeItem.
std::optional<ScoreBound> parse_score_bound(const std::string& s) {
  ScoreBound b;
  std::string_view text = s;
  if (!text.empty() && text[0] == '(') {
    b.exclusive = true;
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  const std::string buf(text);
  char* end = nullptr;
  b.value = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || std::isnan(b.value)) return std::nullopt;
  return b;
}

bool above_min(double score, const ScoreBound& min) { return min.exclusive ? score > min.value : score >= min.value; }
bool below_max(double score, const ScoreBound& max) { return max.exclusive ? score < max.value : score <= max.value; }

void emit(std::vector<RedisReply>* out, const std::pair<double, std::string>& item, bool withscores) {
  out->push_back(RedisReply::bulk(item.second));
  if (withscores) out->push_back(RedisReply::bulk(format_double(item.first)));
}

struct RangeArgs {
  bool withscores = false, reverse = false, by_score = false, by_lex = false, limit = false;
  int64_t offset = 0, count = -1;
};

RedisReply range_by_rank(const ZSet* z, const Ctx& c, size_t min_idx, size_t max_idx, const RangeArgs& a) {
  auto start = parse_int64(c.arg(min_idx));
  auto end = parse_int64(c.arg(max_idx));
  if (!start || !end) return err_not_integer();
  std::vector<RedisReply> out;
  if (!z) return RedisReply::array({});
  const int64_t len = static_cast<int64_t>(z->size());
  int64_t s = *start < 0 ? len + *start : *start;
  int64_t e = *end < 0 ? len + *end : *end;
  if (s < 0) s = 0;
  if (s > e || s >= len) return RedisReply::array({});
  if (e >= len) e = len - 1;
  std::vector<std::pair<double, std::string>> items(z->order.begin(), z->order.end());
  for (int64_t i = s; i <= e; ++i) {
    const auto& item = a.reverse ? items[static_cast<size_t>(len - 1 - i)] : items[static_cast<size_t>(i)];
    emit(&out, item, a.withscores);
  }
  return RedisReply::array(std::move(out));
}

RedisReply range_by_score(const ZSet* z, const Ctx& c, size_t min_idx, size_t max_idx, const RangeArgs& a) {
  auto min = parse_score_bound(c.arg(min_idx));
  auto max = parse_score_bound(c.arg(max_idx));
  if (!min || !max) return RedisReply::error("ERR min or max is not a float");
  std::vector<RedisReply> out;
  if (!z) return RedisReply::array({});
  std::vector<std::pair<double, std::string>> items;
  for (const auto& item : z->order) {
    if (above_min(item.first, *min) && below_max(item.first, *max)) items.push_back(item);
  }
  if (a.reverse) std::reverse(items.begin(), items.end());
  if (a.offset < 0) return RedisReply::array({});
  int64_t remaining = a.count;
  for (size_t i = static_cast<size_t>(a.offset); i < items.size() && remaining != 0; ++i) {
    emit(&out, items[i], a.withscores);
    if (remaining > 0) --remaining;
  }
  return RedisReply::array(std::move(out));
}

// t_zset.c zrangeGenericCommand; `first_opt` is the index of the first option.
RedisReply zrange_generic(Ctx& c, RangeArgs a, bool rank_only) {
  for (size_t j = 4; j < c.argc(); ++j) {
    const size_t left = c.argc() - j - 1;
    const std::string& opt = c.arg(j);
    if (iequals(opt, "withscores")) {
      a.withscores = true;
    } else if (iequals(opt, "limit") && left >= 2) {
      auto off = parse_int64(c.arg(j + 1));
      auto cnt = parse_int64(c.arg(j + 2));
      if (!off || !cnt) return err_not_integer();
      a.limit = true;
      a.offset = *off;
      a.count = *cnt;
      j += 2;
    } else if (!rank_only && !a.reverse && iequals(opt, "rev")) {
      a.reverse = true;
    } else if (!rank_only && !a.by_score && !a.by_lex && iequals(opt, "bylex")) {
      a.by_lex = true;
    } else if (!rank_only && !a.by_score && !a.by_lex && iequals(opt, "byscore")) {
      a.by_score = true;
    } else {
      return err_syntax();
    }
  }
  if (a.limit && !a.by_score && !a.by_lex) {
    return RedisReply::error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (a.withscores && a.by_lex) {
    return RedisReply::error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  }
  if (a.by_lex) return RedisReply::error("ERR faultline: ZRANGE BYLEX is not simulated");
  size_t min_idx = 2, max_idx = 3;
  if (a.reverse && a.by_score) std::swap(min_idx, max_idx);
  ZSet* z = nullptr;
  RedisReply error;
  // Redis parses the range before looking the key up.
  if (a.by_score) {
    if (!parse_score_bound(c.arg(min_idx)) || !parse_score_bound(c.arg(max_idx))) {
      return RedisReply::error("ERR min or max is not a float");
    }
  } else if (!parse_int64(c.arg(min_idx)) || !parse_int64(c.arg(max_idx))) {
    return err_not_integer();
  }
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  return a.by_score ? range_by_score(z, c, min_idx, max_idx, a) : range_by_rank(z, c, min_idx, max_idx, a);
}

}  // namespace

RedisReply cmd_zadd(Ctx& c) {
  ZAddFlags f;
  size_t idx = 2;
  for (; idx < c.argc(); ++idx) {
    const std::string& opt = c.arg(idx);
    if (iequals(opt, "nx")) f.nx = true;
    else if (iequals(opt, "xx")) f.xx = true;
    else if (iequals(opt, "ch")) f.ch = true;
    else if (iequals(opt, "incr")) f.incr = true;
    else if (iequals(opt, "gt")) f.gt = true;
    else if (iequals(opt, "lt")) f.lt = true;
    else break;
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
  if (!z && !f.xx) z = &std::get<ZSet>(c.ks.put(c.arg(1), ZSet{}).value);
  for (size_t i = 0; z && i < scores.size(); ++i) {
    switch (zset_add(*z, c.arg(idx + 2 * i + 1), scores[i], f, &new_score)) {
      case ZAddOutcome::kNaN: return err_nan();
      case ZAddOutcome::kAdded: ++added; ++processed; break;
      case ZAddOutcome::kUpdated: ++updated; ++processed; break;
      case ZAddOutcome::kUnchanged: ++processed; break;
      case ZAddOutcome::kNop: break;
    }
  }
  if (f.incr) return processed ? RedisReply::bulk(format_double(new_score)) : RedisReply::nil();
  return RedisReply::integer_of(f.ch ? added + updated : added);
}

RedisReply cmd_zincrby(Ctx& c) {
  auto delta = parse_double(c.arg(2));
  if (!delta) return err_not_float();
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  if (!z) z = &std::get<ZSet>(c.ks.put(c.arg(1), ZSet{}).value);
  ZAddFlags f;
  f.incr = true;
  double new_score = 0;
  if (zset_add(*z, c.arg(3), *delta, f, &new_score) == ZAddOutcome::kNaN) return err_nan();
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

RedisReply cmd_zrem(Ctx& c) {
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  if (!z) return RedisReply::integer_of(0);
  int64_t n = 0;
  for (size_t j = 2; j < c.argc(); ++j) n += z->erase(c.arg(j)) ? 1 : 0;
  if (z->size() == 0) c.ks.erase(c.arg(1));
  return RedisReply::integer_of(n);
}

RedisReply cmd_zcard(Ctx& c) {
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  return RedisReply::integer_of(z ? static_cast<int64_t>(z->size()) : 0);
}

RedisReply cmd_zrange(Ctx& c) { return zrange_generic(c, RangeArgs{}, false); }

RedisReply cmd_zrevrange(Ctx& c) {
  RangeArgs a;
  a.reverse = true;
  return zrange_generic(c, a, true);
}

}  // namespace fl::sim::redis
