// Script commands: EVAL EVALSHA EVAL_RO EVALSHA_RO SCRIPT LOAD|EXISTS|FLUSH|KILL. Every script is
// run atomically by Lua (sim/redis/lua_script.h), its redis.call()s through the engine.
#include <algorithm>

#include "sim/redis/commands.h"
#include "sim/redis/lua_script.h"

namespace fl::sim::redis {

namespace {

// Redis validates numkeys before it looks the script up (evalGenericCommand), so a bad count
// wins over NOSCRIPT. Found by the differential suite (properties/redis).
std::optional<RedisReply> numkeys_error(Ctx& c) {
  auto numkeys = parse_int64(c.arg(2));
  if (!numkeys) return err_not_integer();
  if (*numkeys > static_cast<int64_t>(c.argc() - 3)) {
    return RedisReply::error("ERR Number of keys can't be greater than number of args");
  }
  if (*numkeys < 0) return RedisReply::error("ERR Number of keys can't be negative");
  return std::nullopt;
}

}  // namespace

std::pair<std::vector<std::string>, std::vector<std::string>> keys_and_args(const Ctx& c) {
  const int64_t numkeys = *parse_int64(c.arg(2));
  const auto keys_begin = c.argv.begin() + 3;
  const auto keys_end = keys_begin + numkeys;
  return {std::vector<std::string>(keys_begin, keys_end), std::vector<std::string>(keys_end, c.argv.end())};
}

RedisReply cmd_eval(Ctx& c) {
  if (auto e = numkeys_error(c)) return *e;
  const std::string sha = sha1_hex(c.arg(1));
  c.loaded_scripts().try_emplace(sha, c.arg(1));  // EVAL caches the script, as Redis does
  auto [keys, args] = keys_and_args(c);
  return run_lua(c, sha, c.arg(1), keys, args);
}

RedisReply cmd_evalsha(Ctx& c) {
  const auto noscript = [] { return RedisReply::error("NOSCRIPT No matching script. Please use EVAL."); };
  // evalShaCommand: a SHA1 of the wrong length cannot match, NOSCRIPT before numkeys is parsed.
  const std::string& given = c.arg(1);
  char folded[40];
  if (given.size() != sizeof folded) return noscript();
  if (auto e = numkeys_error(c)) return *e;
  // The SHA1 folded in a buffer, not a new string: EVALSHA is the seed systems' hottest command.
  std::transform(given.begin(), given.end(), folded, ascii_lower);
  const std::string_view sha(folded, sizeof folded);
  auto loaded = c.loaded_scripts().find(sha);
  if (loaded == c.loaded_scripts().end()) return noscript();
  const std::string body = loaded->second;  // a copy: the cache may change while the script runs
  auto [keys, args] = keys_and_args(c);
  return run_lua(c, sha, body, keys, args);
}

// The read-only variants (Redis 7.0): the same script, its writes and PUBLISHes refused with an
// error redis.call raises and redis.pcall returns.
RedisReply cmd_eval_ro(Ctx& c) {
  c.set_script_read_only(true);
  RedisReply reply = cmd_eval(c);
  c.set_script_read_only(false);
  return reply;
}

RedisReply cmd_evalsha_ro(Ctx& c) {
  c.set_script_read_only(true);
  RedisReply reply = cmd_evalsha(c);
  c.set_script_read_only(false);
  return reply;
}

RedisReply cmd_script(Ctx& c) {
  const std::string sub = lower(c.arg(1));
  if (sub == "load") {
    const std::string sha = sha1_hex(c.arg(2));
    c.loaded_scripts().try_emplace(sha, c.arg(2));
    return RedisReply::bulk(sha);
  }
  if (sub == "exists") {
    std::vector<RedisReply> out;
    for (size_t j = 2; j < c.argc(); ++j) {
      out.push_back(RedisReply::integer_of(c.loaded_scripts().count(lower(c.arg(j))) ? 1 : 0));
    }
    return RedisReply::array(std::move(out));
  }
  if (sub == "kill") return c.kill_script(/*eval=*/true);
  // flush [ASYNC|SYNC]
  if (c.argc() > 3 || (c.argc() == 3 && !iequals(c.arg(2), "async") && !iequals(c.arg(2), "sync"))) {
    return RedisReply::error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
  }
  c.loaded_scripts().clear();
  c.lua_eval().reset();  // scriptingReset: a new Lua state
  return RedisReply::ok();
}

}  // namespace fl::sim::redis
