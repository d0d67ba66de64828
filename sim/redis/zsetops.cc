// Sorted-set algebra, as t_zset.c zunionInterDiffGenericCommand serves it: ZUNION, ZINTER, ZDIFF,
// their STORE variants (WEIGHTS, AGGREGATE SUM|MIN|MAX, WITHSCORES) and ZINTERCARD (LIMIT).
// Plain sets count as sorted sets whose scores are all 1.
#include <algorithm>
#include <cmath>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

enum class SetOp : uint8_t { kUnion, kInter, kDiff };
enum class Aggregate : uint8_t { kSum, kMin, kMax };

// One input (zsetopsrc): its members and scores, or empty when the key is absent.
struct Source {
  std::vector<std::pair<std::string, double>> members;  // in the input's own order
  double weight = 1.0;
  size_t size() const { return members.size(); }
  const double* find(const std::string& m) const {
    for (const auto& [member, score] : members) {
      if (member == m) return &score;
    }
    return nullptr;
  }
};

// zunionInterAggregate: +inf + -inf sums to 0, not NaN.
void aggregate(double* target, double value, Aggregate a) {
  if (a == Aggregate::kSum) {
    *target += value;
    if (std::isnan(*target)) *target = 0.0;
  } else if (a == Aggregate::kMin) {
    *target = value < *target ? value : *target;
  } else {
    *target = value > *target ? value : *target;
  }
}

// The weighted score of an input's element (inf * 0 counts as 0).
double weighted(const Source& s, double score) {
  const double v = s.weight * score;
  return std::isnan(v) ? 0.0 : v;
}

// Reads the inputs; a key holding neither a set nor a sorted set is WRONGTYPE.
bool read_sources(Ctx& c, size_t first, size_t n, std::vector<Source>* out, RedisReply* error) {
  for (size_t j = first; j < first + n; ++j) {
    Source s;
    Entry* e = c.find(c.arg(j));
    if (e && e->type() == ValueType::kZSet) {
      for (const auto& [score, member] : std::get<ZSet>(e->value).order) s.members.emplace_back(member, score);
    } else if (e && e->type() == ValueType::kSet) {
      for (const auto& member : std::get<Set>(e->value)) s.members.emplace_back(member, 1.0);
    } else if (e) {
      *error = err_wrongtype();
      return false;
    }
    out->push_back(std::move(s));
  }
  return true;
}

struct OpOptions {
  Aggregate agg = Aggregate::kSum;
  bool withscores = false;
  int64_t limit = 0;  // ZINTERCARD: stop counting there; 0 = no limit
};

// The options after the keys, in zunionInterDiffGenericCommand's order and with its errors.
bool parse_op_options(const Ctx& c, size_t j, SetOp op, bool store, bool card_only, std::vector<Source>* src,
                      OpOptions* o, RedisReply* error) {
  const size_t n = src->size();
  while (j < c.argc()) {
    const size_t remaining = c.argc() - j;
    const std::string& opt = c.arg(j);
    if (op != SetOp::kDiff && !card_only && remaining >= n + 1 && iequals(opt, "weights")) {
      for (size_t i = 0; i < n; ++i) {
        auto w = parse_double(c.arg(j + 1 + i));
        if (!w) {
          *error = RedisReply::error("ERR weight value is not a float");
          return false;
        }
        (*src)[i].weight = *w;
      }
      j += n + 1;
    } else if (op != SetOp::kDiff && !card_only && remaining >= 2 && iequals(opt, "aggregate")) {
      const std::string& a = c.arg(j + 1);
      if (iequals(a, "sum"))
        o->agg = Aggregate::kSum;
      else if (iequals(a, "min"))
        o->agg = Aggregate::kMin;
      else if (iequals(a, "max"))
        o->agg = Aggregate::kMax;
      else
        return *error = err_syntax(), false;
      j += 2;
    } else if (!store && !card_only && iequals(opt, "withscores")) {
      o->withscores = true;
      ++j;
    } else if (card_only && remaining >= 2 && iequals(opt, "limit")) {
      auto v = parse_int64(c.arg(j + 1));
      if (!v || *v < 0) return *error = RedisReply::error("ERR LIMIT can't be negative"), false;
      o->limit = *v;
      j += 2;
    } else {
      *error = err_syntax();
      return false;
    }
  }
  return true;
}

using Result = std::map<std::string, double>;

Result op_union(const std::vector<Source>& src, Aggregate agg) {
  Result acc;
  for (const Source& s : src) {
    for (const auto& [member, score] : s.members) {
      auto [it, added] = acc.try_emplace(member, weighted(s, score));
      if (!added) aggregate(&it->second, weighted(s, score), agg);
    }
  }
  return acc;
}

// Walks the smallest input; `limit` stops a ZINTERCARD count early.
Result op_inter(const std::vector<Source>& src, Aggregate agg, int64_t limit, int64_t* card) {
  Result out;
  *card = 0;
  if (src[0].size() == 0) return out;
  for (const auto& [member, score0] : src[0].members) {
    double score = weighted(src[0], score0);
    size_t j = 1;
    for (; j < src.size(); ++j) {
      const double* v = src[j].find(member);
      if (!v) break;
      aggregate(&score, src[j].weight * *v, agg);
    }
    if (j != src.size()) continue;
    out[member] = score;
    if (limit && ++*card >= limit) break;
  }
  *card = static_cast<int64_t>(out.size());
  return out;
}

// zdiff: the first input's elements (with their scores) found in no other input.
Result op_diff(const std::vector<Source>& src) {
  Result out;
  for (const auto& [member, score] : src[0].members) {
    bool elsewhere = false;
    for (size_t j = 1; j < src.size() && !elsewhere; ++j) elsewhere = src[j].find(member) != nullptr;
    if (!elsewhere) out[member] = score;
  }
  return out;
}

RedisReply reply_or_store(Ctx& c, const Result& r, const std::string* dst, bool withscores) {
  ZSet z;
  for (const auto& [member, score] : r) z.put(member, score);
  if (dst) {
    if (z.size() == 0) {
      c.ks.erase(*dst);
      return RedisReply::integer_of(0);
    }
    const auto n = static_cast<int64_t>(z.size());
    c.ks.put(*dst, std::move(z));
    c.signal(*dst);  // setKey: a client blocked on the key may pop now
    return RedisReply::integer_of(n);
  }
  std::vector<RedisReply> out;
  for (const auto& [score, member] : z.order) {
    out.push_back(RedisReply::bulk(member));
    if (withscores) out.push_back(RedisReply::bulk(format_double(score)));
  }
  return RedisReply::array(std::move(out));
}

// zunionInterDiffGenericCommand: numkeys at argv[numkeys_idx]; dst for the STORE variants.
RedisReply zset_op(Ctx& c, size_t numkeys_idx, const std::string* dst, SetOp op, bool card_only) {
  auto setnum = parse_int64(c.arg(numkeys_idx));
  if (!setnum) return err_not_integer();
  if (*setnum < 1) return RedisReply::error("ERR at least 1 input key is needed for '" + c.name() + "' command");
  if (*setnum > static_cast<int64_t>(c.argc() - (numkeys_idx + 1))) return err_syntax();
  const size_t n = static_cast<size_t>(*setnum);
  std::vector<Source> src;
  RedisReply error;
  if (!read_sources(c, numkeys_idx + 1, n, &src, &error)) return error;
  OpOptions o;
  if (!parse_op_options(c, numkeys_idx + 1 + n, op, dst != nullptr, card_only, &src, &o, &error)) return error;
  // Smallest input first (Redis's qsort by cardinality, stable for the small arrays here): it
  // fixes the order in which scores are aggregated.
  if (op != SetOp::kDiff) {
    std::stable_sort(src.begin(), src.end(), [](const Source& a, const Source& b) { return a.size() < b.size(); });
  }
  int64_t card = 0;
  Result r = op == SetOp::kUnion   ? op_union(src, o.agg)
             : op == SetOp::kInter ? op_inter(src, o.agg, card_only ? o.limit : 0, &card)
                                   : op_diff(src);
  if (card_only) return RedisReply::integer_of(card);
  return reply_or_store(c, r, dst, o.withscores);
}

}  // namespace

RedisReply cmd_zunion(Ctx& c) { return zset_op(c, 1, nullptr, SetOp::kUnion, false); }
RedisReply cmd_zinter(Ctx& c) { return zset_op(c, 1, nullptr, SetOp::kInter, false); }
RedisReply cmd_zdiff(Ctx& c) { return zset_op(c, 1, nullptr, SetOp::kDiff, false); }
RedisReply cmd_zunionstore(Ctx& c) { return zset_op(c, 2, &c.arg(1), SetOp::kUnion, false); }
RedisReply cmd_zinterstore(Ctx& c) { return zset_op(c, 2, &c.arg(1), SetOp::kInter, false); }
RedisReply cmd_zdiffstore(Ctx& c) { return zset_op(c, 2, &c.arg(1), SetOp::kDiff, false); }
RedisReply cmd_zintercard(Ctx& c) { return zset_op(c, 1, nullptr, SetOp::kInter, true); }

}  // namespace fl::sim::redis
