// Sorted-set pops across keys and random members, as Redis 7.0's t_zset.c serves them: ZMPOP,
// the blocking BZMPOP BZPOPMIN BZPOPMAX, and ZRANDMEMBER. A blocking pop that finds every key
// empty parks the session on them (block_on, lists.cc); a write that creates a sorted set signals
// its key (dbAdd's signalKeyAsReady) and the server re-executes the parked command.
#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

// Removes and returns the lowest (min) or highest member of a non-empty set.
std::pair<std::string, double> pop_one(ZSet& z, bool min) {
  const auto it = min ? z.order.begin() : std::prev(z.order.end());
  std::pair<std::string, double> out{it->second, it->first};
  z.erase(out.first);
  return out;
}

// ZMPOP/BZMPOP: [key, [[member, score], ...]] from the first non-empty set; nil_array when none.
RedisReply zmpop_first(Ctx& c, const MpopArgs& a, bool* found) {
  *found = false;
  for (const std::string& key : a.keys) {
    ZSet* z = nullptr;
    RedisReply error;
    if (!lookup_blocking_source(c, key, &z, &error)) return error;
    if (!z) continue;
    std::vector<RedisReply> pairs;
    for (int64_t i = 0; i < a.count && z->size() > 0; ++i) {
      auto [member, score] = pop_one(*z, a.from_first);
      pairs.push_back(RedisReply::array({RedisReply::bulk(std::move(member)), RedisReply::bulk(format_double(score))}));
    }
    c.drop_if_empty(key, z->size() == 0);
    *found = true;
    return RedisReply::array({RedisReply::bulk(key), RedisReply::array(std::move(pairs))});
  }
  return RedisReply::nil_array();
}

// BZPOPMIN/BZPOPMAX key [key ...] timeout: [key, member, score] of the first non-empty set.
RedisReply blocking_zpop(Ctx& c, bool min) {
  RedisReply error;
  const std::optional<int64_t> timeout_ms = parse_timeout_ms(c.arg(c.argc() - 1), &error);
  if (!timeout_ms) return error;
  std::vector<std::string> keys(c.argv.begin() + 1, c.argv.end() - 1);
  for (const std::string& key : keys) {
    ZSet* z = nullptr;
    if (!lookup_blocking_source(c, key, &z, &error)) return error;
    if (!z) continue;
    auto [member, score] = pop_one(*z, min);
    c.drop_if_empty(key, z->size() == 0);
    return RedisReply::array(
        {RedisReply::bulk(key), RedisReply::bulk(std::move(member)), RedisReply::bulk(format_double(score))});
  }
  return block_on(c, keys, *timeout_ms);
}

void emit_member(std::vector<RedisReply>* out, const std::string& member, double score, bool withscores) {
  out->push_back(RedisReply::bulk(member));
  if (withscores) out->push_back(RedisReply::bulk(format_double(score)));
}

const std::pair<const std::string, double>& random_member(Ctx& c, const ZSet& z) {
  return *std::next(z.scores.begin(), static_cast<long>(c.random() % z.size()));
}

// zrandmemberWithCountCommand, its cases as hrandfield.cc's: a negative count (or 1) samples with
// repetition; a count at least the size returns the whole set; otherwise distinct members.
RedisReply zrandmember_with_count(Ctx& c, int64_t l, bool withscores) {
  ZSet* z = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &z, &error)) return error;
  if (!z || l == 0) return RedisReply::array({});
  std::vector<RedisReply> out;
  if (l < 0 || l == 1) {
    const int64_t count = l < 0 ? -l : l;
    for (int64_t i = 0; i < count; ++i) {
      const auto& [member, score] = random_member(c, *z);
      emit_member(&out, member, score, withscores);
    }
    return RedisReply::array(std::move(out));
  }
  if (static_cast<uint64_t>(l) >= z->size()) {
    for (const auto& [member, score] : z->scores) emit_member(&out, member, score, withscores);
    return RedisReply::array(std::move(out));
  }
  std::map<std::string, double> pool = z->scores;
  while (pool.size() > static_cast<size_t>(l)) {
    pool.erase(std::next(pool.begin(), static_cast<long>(c.random() % pool.size())));
  }
  for (const auto& [member, score] : pool) emit_member(&out, member, score, withscores);
  return RedisReply::array(std::move(out));
}

}  // namespace

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
RedisReply cmd_zmpop(Ctx& c) {
  RedisReply error;
  const std::optional<MpopArgs> a = parse_mpop(c, 1, "min", "max", &error);
  if (!a) return error;
  bool found = false;
  return zmpop_first(c, *a, &found);
}

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
RedisReply cmd_bzmpop(Ctx& c) {
  RedisReply error;
  const std::optional<int64_t> timeout_ms = parse_timeout_ms(c.arg(1), &error);
  if (!timeout_ms) return error;
  const std::optional<MpopArgs> a = parse_mpop(c, 2, "min", "max", &error);
  if (!a) return error;
  bool found = false;
  RedisReply reply = zmpop_first(c, *a, &found);
  if (found || reply.is_error()) return reply;
  return block_on(c, a->keys, *timeout_ms);
}

RedisReply cmd_bzpopmin(Ctx& c) { return blocking_zpop(c, true); }
RedisReply cmd_bzpopmax(Ctx& c) { return blocking_zpop(c, false); }

// ZRANDMEMBER key [count [WITHSCORES]]
RedisReply cmd_zrandmember(Ctx& c) {
  if (c.argc() >= 3) {
    RedisReply error;
    const std::optional<RandomCount> n = parse_random_count(c, "withscores", &error);
    return n ? zrandmember_with_count(c, n->count, n->with) : error;
  }
  return random_element<ZSet>(c, random_member);
}

}  // namespace fl::sim::redis
