// HRANDFIELD key [count [WITHVALUES]], as t_hash.c hrandfieldCommand serves it, and the count
// parsing ZRANDMEMBER shares. The choices come from the engine's random stream
// (EngineOptions::random_seed), so a run replays exactly.
#include <limits>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

void emit_field(std::vector<RedisReply>* out, const std::pair<const std::string, std::string>& fv, bool withvalues) {
  out->push_back(RedisReply::bulk(fv.first));
  if (withvalues) out->push_back(RedisReply::bulk(fv.second));
}

const std::pair<const std::string, std::string>& random_field(Ctx& c, const Hash& h) {
  return *std::next(h.begin(), static_cast<long>(c.random() % h.size()));
}

// hrandfieldWithCountCommand.
RedisReply with_count(Ctx& c, int64_t l, bool withvalues) {
  Hash* h = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &h, &error)) return error;
  if (!h || l == 0) return RedisReply::array({});
  std::vector<RedisReply> out;
  // CASE 1: a negative count samples with repetition (and so does a count of 1).
  if (l < 0 || l == 1) {
    const int64_t count = l < 0 ? -l : l;
    for (int64_t i = 0; i < count; ++i) emit_field(&out, random_field(c, *h), withvalues);
    return RedisReply::array(std::move(out));
  }
  // CASE 2: the whole hash.
  if (static_cast<uint64_t>(l) >= h->size()) {
    for (const auto& fv : *h) emit_field(&out, fv, withvalues);
    return RedisReply::array(std::move(out));
  }
  // CASE 3/4: `l` distinct fields: drop random ones from a copy until `l` remain.
  Hash pool = *h;
  while (pool.size() > static_cast<size_t>(l)) {
    pool.erase(std::next(pool.begin(), static_cast<long>(c.random() % pool.size())));
  }
  for (const auto& fv : pool) emit_field(&out, fv, withvalues);
  return RedisReply::array(std::move(out));
}

}  // namespace

std::optional<RandomCount> parse_random_count(const Ctx& c, const char* with_word, RedisReply* error) {
  const std::optional<int64_t> l = parse_int64(c.arg(2));
  if (!l) {
    *error = err_not_integer();
    return std::nullopt;
  }
  if (*l < -kLongMax) {
    *error =
        RedisReply::error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
    return std::nullopt;
  }
  if (c.argc() > 4 || (c.argc() == 4 && !iequals(c.arg(3), with_word))) {
    *error = err_syntax();
    return std::nullopt;
  }
  const bool with = c.argc() == 4;
  if (with && (*l < -kLongMax / 2 || *l > kLongMax / 2)) {
    *error = RedisReply::error("ERR value is out of range");
    return std::nullopt;
  }
  return RandomCount{*l, with};
}

RedisReply cmd_hrandfield(Ctx& c) {
  if (c.argc() >= 3) {
    RedisReply error;
    const std::optional<RandomCount> n = parse_random_count(c, "withvalues", &error);
    return n ? with_count(c, n->count, n->with) : error;
  }
  return random_element<Hash>(c, random_field);
}

}  // namespace fl::sim::redis
