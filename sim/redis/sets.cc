// Set commands: SADD SREM SISMEMBER SMEMBERS SCARD. SMEMBERS answers in byte order (real Redis:
// numeric order for small integer sets, unspecified otherwise).
#include "sim/redis/commands.h"

namespace fl::sim::redis {

RedisReply cmd_sadd(Ctx& c) {
  Set* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) s = &std::get<Set>(c.ks.put(c.arg(1), Set{}).value);
  int64_t added = 0;
  for (size_t j = 2; j < c.argc(); ++j) added += s->insert(c.arg(j)).second ? 1 : 0;
  return RedisReply::integer_of(added);
}

RedisReply cmd_srem(Ctx& c) {
  Set* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) return RedisReply::integer_of(0);
  int64_t removed = 0;
  for (size_t j = 2; j < c.argc(); ++j) removed += static_cast<int64_t>(s->erase(c.arg(j)));
  if (s->empty()) c.ks.erase(c.arg(1));
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
