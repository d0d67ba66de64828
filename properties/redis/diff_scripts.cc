#include "properties/redis/diff_scripts.h"

namespace fl::redis_diff {
namespace {

RedisScript cas_delete() {
  return {"cas_delete",
          "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
          "  return redis.call('DEL', KEYS[1])\n"
          "end\n"
          "return 0\n"};
}

RedisScript incr_ttl() {
  return {"incr_ttl",
          "local v = redis.call('INCRBY', KEYS[1], ARGV[1])\n"
          "if v == tonumber(ARGV[1]) then\n"
          "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
          "end\n"
          "return v\n"};
}

RedisScript zadd_top() {
  return {"zadd_top",
          "redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])\n"
          "return redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1, 'WITHSCORES')\n"};
}

RedisScript ack_del() {
  return {"ack_del",
          "local n = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])\n"
          "redis.call('XDEL', KEYS[1], ARGV[2])\n"
          "return n\n"};
}

RedisScript hsum() {
  return {"hsum",
          "local a = tonumber(redis.call('HGET', KEYS[1], ARGV[1])) or 0\n"
          "local b = tonumber(redis.call('HGET', KEYS[1], ARGV[2])) or 0\n"
          "return a + b\n"};
}

RedisScript list_mix() {
  return {"list_mix",
          "local n = redis.call('INCR', KEYS[1])\n"
          "return {n, redis.call('GET', KEYS[1]), false, 'x', {1, 'y'}, 3.99, true}\n"};
}

RedisScript ok_or_err() {
  return {"ok_or_err",
          "if redis.call('EXISTS', KEYS[1]) == 1 then\n"
          "  return {ok='DONE'}\n"
          "end\n"
          "return {err='ERR missing key'}\n"};
}

}  // namespace

std::shared_ptr<const ScriptRegistry> diff_scripts() {
  auto reg = std::make_shared<ScriptRegistry>();
  for (auto s : {cas_delete(), incr_ttl(), zadd_top(), ack_del(), hsum(), list_mix(), ok_or_err()}) {
    reg->add(std::move(s));
  }
  return reg;
}

std::vector<ScriptShape> diff_script_shapes() {
  return {{"ack_del", 1, 2},  {"cas_delete", 1, 1}, {"hsum", 1, 2},    {"incr_ttl", 1, 2},
          {"list_mix", 1, 0}, {"ok_or_err", 1, 0},  {"zadd_top", 1, 3}};
}

}  // namespace fl::redis_diff
