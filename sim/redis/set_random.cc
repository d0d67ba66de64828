// SPOP key [count] and SRANDMEMBER key [count], as t_set.c serves them.
// SPOP writes, and an AOF or snapshot replay re-executes it on the durable copy, where the
// engine's random stream stands elsewhere: its choices are therefore drawn from a stream seeded by
// the command itself (key, set size, the Redis clock), so a replay pops the same members.
// SRANDMEMBER only reads and draws from the engine's stream, as HRANDFIELD does.
#include <algorithm>
#include <limits>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

// splitmix64 over a seed made of what the command sees.
class CommandRandom {
 public:
  CommandRandom(const std::string& key, size_t size, int64_t now_ms) {
    uint64_t h = 1469598103934665603ULL;  // FNV-1a
    for (unsigned char ch : key) h = (h ^ ch) * 1099511628211ULL;
    state_ = h ^ (static_cast<uint64_t>(size) * 0x9e3779b97f4a7c15ULL) ^ static_cast<uint64_t>(now_ms);
  }
  uint64_t next() { return splitmix64(&state_); }

 private:
  uint64_t state_ = 0;
};

Set::iterator nth(Set& s, uint64_t r) { return std::next(s.begin(), static_cast<long>(r % s.size())); }

}  // namespace

RedisReply cmd_spop(Ctx& c) {
  if (c.argc() > 3) return err_syntax();
  std::optional<int64_t> count;
  if (c.argc() == 3) {
    count = parse_int64(c.arg(2));
    if (!count || *count < 0) return RedisReply::error("ERR value is out of range, must be positive");
  }
  Set* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) return count ? RedisReply::array({}) : RedisReply::nil();
  CommandRandom rng(c.arg(1), s->size(), c.now_ms);
  std::vector<std::string> popped;
  const int64_t n = count ? std::min<int64_t>(*count, static_cast<int64_t>(s->size())) : 1;
  for (int64_t i = 0; i < n; ++i) {
    auto it = nth(*s, rng.next());
    popped.push_back(*it);
    s->erase(it);
  }
  c.drop_if_empty(c.arg(1), s->empty());
  if (!count) return RedisReply::bulk(std::move(popped.front()));
  std::sort(popped.begin(), popped.end());  // members answer in byte order, as SMEMBERS's do
  return bulk_array(popped);
}

RedisReply cmd_srandmember(Ctx& c) {
  if (c.argc() > 3) return err_syntax();
  std::optional<int64_t> count;
  if (c.argc() == 3) {
    count = parse_int64(c.arg(2));
    if (!count) return err_not_integer();
    if (*count < -kLongMax) {
      return RedisReply::error(
          "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
    }
  }
  Set* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) return count ? RedisReply::array({}) : RedisReply::nil();
  if (!count) return RedisReply::bulk(*nth(*s, c.random()));
  std::vector<std::string> out;
  if (*count < 0) {  // with repetition
    for (int64_t i = 0; i < -*count; ++i) out.push_back(*nth(*s, c.random()));
    return bulk_array(out);
  }
  if (static_cast<uint64_t>(*count) >= s->size()) return bulk_array(std::vector<std::string>(s->begin(), s->end()));
  Set pool = *s;
  while (pool.size() > static_cast<size_t>(*count)) pool.erase(nth(pool, c.random()));
  return bulk_array(std::vector<std::string>(pool.begin(), pool.end()));
}

}  // namespace fl::sim::redis
