// HRANDFIELD key [count [WITHVALUES]], as t_hash.c hrandfieldCommand serves it. The choices come
// from the engine's random stream (EngineOptions::random_seed), so a run replays exactly.
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

RedisReply cmd_hrandfield(Ctx& c) {
  if (c.argc() >= 3) {
    auto l = parse_int64(c.arg(2));
    if (!l) return err_not_integer();
    if (*l < -kLongMax) {
      return RedisReply::error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
    }
    if (c.argc() > 4 || (c.argc() == 4 && !iequals(c.arg(3), "withvalues"))) return err_syntax();
    const bool withvalues = c.argc() == 4;
    if (withvalues && (*l < -kLongMax / 2 || *l > kLongMax / 2)) return RedisReply::error("ERR value is out of range");
    return with_count(c, *l, withvalues);
  }
  Hash* h = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &h, &error)) return error;
  if (!h) return RedisReply::nil();
  return RedisReply::bulk(random_field(c, *h).first);
}

}  // namespace fl::sim::redis
