// The sorted-set range family, as t_zset.c zrangeGenericCommand serves it: ZRANGE (rank, BYSCORE,
// BYLEX, REV, LIMIT, WITHSCORES), ZRANGESTORE, ZREVRANGE, Z[REV]RANGEBYSCORE, Z[REV]RANGEBYLEX,
// ZCOUNT and ZLEXCOUNT, and ZREMRANGEBYSCORE, ZREMRANGEBYLEX and ZREMRANGEBYRANK.
//
// Score and lex ranges are walked the way Redis walks a listpack: from the first element (the
// last one for REV) at or past the range's near end, then element by element while the far end
// holds. For members of equal score (what BYLEX is meant for) that is the lexicographic range;
// for mixed scores it reproduces Redis's "unspecified" answer of a small sorted set.
#include <algorithm>
#include <cmath>
#include <functional>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

using Item = std::pair<double, std::string>;

enum class RangeType : uint8_t { kAuto, kRank, kScore, kLex };
enum class Direction : uint8_t { kAuto, kForward, kReverse };

// zrangespec: a score interval.
struct ScoreRange {
  double min = 0, max = 0;
  bool minex = false, maxex = false;
};

// t_zset.c zslParseRange: strtod of the whole text after an optional '(' (an empty text is 0);
// NaN is refused.
bool parse_score_item(const std::string& s, double* value, bool* ex) {
  const char* p = s.c_str();
  *ex = p[0] == '(';
  if (*ex) ++p;
  char* end = nullptr;
  *value = std::strtod(p, &end);
  return *end == '\0' && !std::isnan(*value);
}

std::optional<ScoreRange> parse_score_range(const std::string& min, const std::string& max) {
  ScoreRange r;
  if (!parse_score_item(min, &r.min, &r.minex) || !parse_score_item(max, &r.max, &r.maxex)) return std::nullopt;
  return r;
}

// zlexrangespec: '-' and '+' are the strings below and above every member.
struct LexItem {
  enum class Kind : uint8_t { kMinusInf, kValue, kPlusInf } kind = Kind::kValue;
  std::string value;
  bool ex = false;
};

// t_zset.c zslParseLexRangeItem.
std::optional<LexItem> parse_lex_item(const std::string& s) {
  LexItem it;
  if (s.empty()) return std::nullopt;
  switch (s[0]) {
    case '+':
    case '-':
      if (s.size() != 1) return std::nullopt;
      it.kind = s[0] == '+' ? LexItem::Kind::kPlusInf : LexItem::Kind::kMinusInf;
      it.ex = true;
      return it;
    case '(':
    case '[':
      it.value = s.substr(1);
      it.ex = s[0] == '(';
      return it;
    default:
      return std::nullopt;
  }
}

// sdscmplex: member vs a range item.
int cmp_lex(const std::string& member, const LexItem& item) {
  if (item.kind == LexItem::Kind::kMinusInf) return 1;
  if (item.kind == LexItem::Kind::kPlusInf) return -1;
  const int c = member.compare(item.value);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// The two ends of a range as predicates over items.
struct Ends {
  std::function<bool(const Item&)> gte_min, lte_max;
};

Ends score_ends(const ScoreRange& r) {
  return {[r](const Item& i) { return r.minex ? i.first > r.min : i.first >= r.min; },
          [r](const Item& i) { return r.maxex ? i.first < r.max : i.first <= r.max; }};
}

Ends lex_ends(const LexItem& min, const LexItem& max) {
  return {[min](const Item& i) { return min.ex ? cmp_lex(i.second, min) > 0 : cmp_lex(i.second, min) >= 0; },
          [max](const Item& i) { return max.ex ? cmp_lex(i.second, max) < 0 : cmp_lex(i.second, max) <= 0; }};
}

// zzlFirstInRange/zzlLastInRange, the offset skip and the LIMIT walk of genericZrangebyscore/
// bylexCommand over the listpack order.
std::vector<Item> walk_range(const ZSet& z, const Ends& ends, bool reverse, int64_t offset, int64_t limit) {
  std::vector<Item> items(z.order.begin(), z.order.end());
  std::vector<Item> out;
  // zzlIsInRange/zzlIsInLexRange: the last element reaches the min, the first the max.
  if (items.empty() || !ends.gte_min(items.back()) || !ends.lte_max(items.front())) return out;
  if (reverse) std::reverse(items.begin(), items.end());
  const auto& near = reverse ? ends.lte_max : ends.gte_min;
  const auto& far = reverse ? ends.gte_min : ends.lte_max;
  size_t i = 0;
  while (i < items.size() && !near(items[i])) ++i;
  if (i == items.size() || !far(items[i])) return out;
  // A negative offset skips everything (Redis's `while (eptr && offset--)`); a negative limit
  // takes all. Counted without decrementing, so INT64_MIN cannot overflow.
  const size_t left = items.size() - i;
  i += offset < 0 ? left : std::min<size_t>(left, static_cast<uint64_t>(offset));
  for (; i < items.size() && (limit < 0 || static_cast<int64_t>(out.size()) < limit) && far(items[i]); ++i) {
    out.push_back(items[i]);
  }
  return out;
}

// genericZrangebyrankCommand.
std::vector<Item> rank_range(const ZSet& z, int64_t start, int64_t end, bool reverse) {
  const int64_t len = static_cast<int64_t>(z.size());
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  std::vector<Item> out;
  if (start > end || start >= len) return out;
  if (end >= len) end = len - 1;
  std::vector<Item> items(z.order.begin(), z.order.end());
  if (reverse) std::reverse(items.begin(), items.end());
  out.assign(items.begin() + start, items.begin() + end + 1);
  return out;
}

// Where the range goes: the client (ZRANGE & co.) or a destination key (ZRANGESTORE).
RedisReply emit(Ctx& c, const std::vector<Item>& items, bool withscores, const std::string* store_to) {
  if (store_to) {
    if (items.empty()) {
      c.ks.erase(*store_to);
      return RedisReply::integer_of(0);
    }
    ZSet z;
    for (const auto& [score, member] : items) z.put(member, score);
    c.ks.put(*store_to, std::move(z));
    c.signal(*store_to);  // setKey: a client blocked on the key may pop now
    return RedisReply::integer_of(static_cast<int64_t>(items.size()));
  }
  std::vector<RedisReply> out;
  for (const auto& [score, member] : items) {
    out.push_back(RedisReply::bulk(member));
    if (withscores) out.push_back(RedisReply::bulk(format_double(score)));
  }
  return RedisReply::array(std::move(out));
}

struct RangeOptions {
  bool withscores = false;
  int64_t offset = 0, limit = -1;
  RangeType type = RangeType::kAuto;
  Direction dir = Direction::kAuto;
};

// Step 1 of zrangeGenericCommand: the options after <src> <min> <max>.
bool parse_options(const Ctx& c, size_t first, bool store, RangeOptions* o, RedisReply* error) {
  for (size_t j = first; j < c.argc(); ++j) {
    const size_t left = c.argc() - j - 1;
    const std::string& opt = c.arg(j);
    if (!store && iequals(opt, "withscores")) {
      o->withscores = true;
    } else if (iequals(opt, "limit") && left >= 2) {
      auto off = parse_int64(c.arg(j + 1));
      auto lim = off ? parse_int64(c.arg(j + 2)) : std::nullopt;
      if (!off || !lim) {
        *error = err_not_integer();
        return false;
      }
      o->offset = *off;
      o->limit = *lim;
      j += 2;
    } else if (o->dir == Direction::kAuto && iequals(opt, "rev")) {
      o->dir = Direction::kReverse;
    } else if (o->type == RangeType::kAuto && iequals(opt, "bylex")) {
      o->type = RangeType::kLex;
    } else if (o->type == RangeType::kAuto && iequals(opt, "byscore")) {
      o->type = RangeType::kScore;
    } else {
      *error = err_syntax();
      return false;
    }
  }
  return true;
}

// t_zset.c zrangeGenericCommand. `start` is the index of <src> (the key); a ZRANGESTORE passes
// its destination as store_to.
RedisReply zrange_generic(Ctx& c, size_t start, const std::string* store_to, RangeType type, Direction dir) {
  RangeOptions o;
  o.type = type;
  o.dir = dir;
  RedisReply error;
  if (!parse_options(c, start + 3, store_to != nullptr, &o, &error)) return error;
  if (o.dir == Direction::kAuto) o.dir = Direction::kForward;
  if (o.type == RangeType::kAuto) o.type = RangeType::kRank;
  // Redis tests the LIMIT value, not its presence: "LIMIT 0 -1" passes with a rank range.
  if (o.limit != -1 && o.type == RangeType::kRank) {
    return RedisReply::error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (o.withscores && o.type == RangeType::kLex) {
    return RedisReply::error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  }
  const bool reverse = o.dir == Direction::kReverse;
  size_t min_idx = start + 1, max_idx = start + 2;
  if (reverse && o.type != RangeType::kRank) std::swap(min_idx, max_idx);  // given as max, min
  std::optional<int64_t> rs, re;
  std::optional<ScoreRange> score;
  std::optional<LexItem> lmin, lmax;
  if (o.type == RangeType::kRank) {
    rs = parse_int64(c.arg(min_idx));
    re = rs ? parse_int64(c.arg(max_idx)) : std::nullopt;
    if (!rs || !re) return err_not_integer();
  } else if (o.type == RangeType::kScore) {
    score = parse_score_range(c.arg(min_idx), c.arg(max_idx));
    if (!score) return RedisReply::error("ERR min or max is not a float");
  } else {
    lmin = parse_lex_item(c.arg(min_idx));
    lmax = lmin ? parse_lex_item(c.arg(max_idx)) : std::nullopt;
    if (!lmin || !lmax) return RedisReply::error("ERR min or max not valid string range item");
  }
  ZSet* z = nullptr;
  if (!c.lookup(c.arg(start), &z, &error)) return error;
  std::vector<Item> items;
  if (z && o.type == RangeType::kRank) items = rank_range(*z, *rs, *re, reverse);
  if (z && o.type == RangeType::kScore) items = walk_range(*z, score_ends(*score), reverse, o.offset, o.limit);
  if (z && o.type == RangeType::kLex) items = walk_range(*z, lex_ends(*lmin, *lmax), reverse, o.offset, o.limit);
  return emit(c, items, o.withscores, store_to);
}

// ZCOUNT / ZLEXCOUNT: the range is parsed before the key is looked up.
RedisReply count_in(Ctx& c, const std::optional<Ends>& ends, const char* parse_error) {
  if (!ends) return RedisReply::error(parse_error);
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  if (!z) return RedisReply::integer_of(0);
  return RedisReply::integer_of(static_cast<int64_t>(walk_range(*z, *ends, false, 0, -1).size()));
}

// zremrangeGenericCommand: the range is parsed first, then the key looked up; the members in range
// are removed and an emptied key deleted.
RedisReply remove_range(Ctx& c, const std::function<std::vector<Item>(const ZSet&)>& select) {
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  if (!z) return RedisReply::integer_of(0);
  const std::vector<Item> items = select(*z);
  for (const Item& i : items) z->erase(i.second);
  c.drop_if_empty(c.arg(1), z->size() == 0);
  return RedisReply::integer_of(static_cast<int64_t>(items.size()));
}

}  // namespace

RedisReply cmd_zremrangebyscore(Ctx& c) {
  const std::optional<ScoreRange> r = parse_score_range(c.arg(2), c.arg(3));
  if (!r) return RedisReply::error("ERR min or max is not a float");
  return remove_range(c, [&](const ZSet& z) { return walk_range(z, score_ends(*r), false, 0, -1); });
}

RedisReply cmd_zremrangebylex(Ctx& c) {
  const std::optional<LexItem> min = parse_lex_item(c.arg(2));
  const std::optional<LexItem> max = min ? parse_lex_item(c.arg(3)) : std::nullopt;
  if (!min || !max) return RedisReply::error("ERR min or max not valid string range item");
  return remove_range(c, [&](const ZSet& z) { return walk_range(z, lex_ends(*min, *max), false, 0, -1); });
}

RedisReply cmd_zremrangebyrank(Ctx& c) {
  const std::optional<int64_t> start = parse_int64(c.arg(2)), end = parse_int64(c.arg(3));
  if (!start || !end) return err_not_integer();
  return remove_range(c, [&](const ZSet& z) { return rank_range(z, *start, *end, false); });
}

RedisReply cmd_zrange(Ctx& c) { return zrange_generic(c, 1, nullptr, RangeType::kAuto, Direction::kAuto); }
RedisReply cmd_zrangestore(Ctx& c) { return zrange_generic(c, 2, &c.arg(1), RangeType::kAuto, Direction::kAuto); }
RedisReply cmd_zrevrange(Ctx& c) { return zrange_generic(c, 1, nullptr, RangeType::kRank, Direction::kReverse); }
RedisReply cmd_zrangebyscore(Ctx& c) { return zrange_generic(c, 1, nullptr, RangeType::kScore, Direction::kForward); }
RedisReply cmd_zrevrangebyscore(Ctx& c) {
  return zrange_generic(c, 1, nullptr, RangeType::kScore, Direction::kReverse);
}
RedisReply cmd_zrangebylex(Ctx& c) { return zrange_generic(c, 1, nullptr, RangeType::kLex, Direction::kForward); }
RedisReply cmd_zrevrangebylex(Ctx& c) { return zrange_generic(c, 1, nullptr, RangeType::kLex, Direction::kReverse); }

RedisReply cmd_zcount(Ctx& c) {
  auto r = parse_score_range(c.arg(2), c.arg(3));
  return count_in(c, r ? std::optional<Ends>(score_ends(*r)) : std::nullopt, "ERR min or max is not a float");
}

RedisReply cmd_zlexcount(Ctx& c) {
  auto min = parse_lex_item(c.arg(2));
  auto max = min ? parse_lex_item(c.arg(3)) : std::nullopt;
  return count_in(c, min && max ? std::optional<Ends>(lex_ends(*min, *max)) : std::nullopt,
                  "ERR min or max not valid string range item");
}

}  // namespace fl::sim::redis
