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

std::vector<std::string_view> words_before(std::string_view text, size_t end) {
  std::vector<std::string_view> words;
  for (size_t i = 0; i < end;) {
    const size_t space = std::min(text.find(' ', i), end);
    if (space > i) words.push_back(text.substr(i, space - i));
    i = space + 1;
  }
  return words;
}

std::variant<ScriptFlags, std::string> shebang_flags(std::string_view body) {
  ScriptFlags flags;
  if (body.substr(0, 2) != "#!") return flags;
  const size_t end = body.find('\n');
  if (end == std::string_view::npos) return std::string("Invalid script shebang");
  flags.shebang = true;
  flags.shebang_len = end;
  const std::vector<std::string_view> parts = words_before(body, end);
  if (parts.empty()) return std::string("Invalid engine in script shebang");
  if (parts[0] != "#!lua") return "Unexpected engine in script shebang: " + std::string(parts[0]);
  for (size_t j = 1; j < parts.size(); ++j) {
    if (parts[j].substr(0, 6) != "flags=") return "Unknown lua shebang option: " + std::string(parts[j]);
    std::string_view list = parts[j].substr(6);
    while (!list.empty()) {
      const size_t comma = list.find(',');
      const std::string_view flag = list.substr(0, comma);
      if (flag == "no-writes") {
        flags.no_writes = true;
      } else if (flag == "allow-oom") {
        flags.allow_oom = true;
      } else if (flag != "allow-stale" && flag != "no-cluster" && flag != "allow-cross-slot-keys") {
        return "Unexpected flag in script shebang: " + std::string(flag);
      }
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
  }
  return flags;
}

namespace {

// Runs `body` (its shebang line, if any, left out but its line feed kept, so line numbers stay
// the user's) with its flags: no-writes runs it read-only, allow-oom lets its calls past OOM.
RedisReply run_with_flags(Ctx& c, std::string_view sha, std::string_view body) {
  const auto parsed = shebang_flags(body);
  if (const std::string* error = std::get_if<std::string>(&parsed)) return RedisReply::error("ERR " + *error);
  const ScriptFlags& flags = std::get<ScriptFlags>(parsed);
  const bool was_read_only = c.script_read_only();
  if (flags.no_writes) c.set_script_read_only(true);
  c.set_script_allow_oom(flags.allow_oom);
  auto [keys, args] = keys_and_args(c);
  RedisReply reply = run_lua(c, sha, body.substr(flags.shebang_len), keys, args);
  c.set_script_allow_oom(false);
  c.set_script_read_only(was_read_only);
  return reply;
}

// Redis's luaCreateFunction, which EVAL and SCRIPT LOAD share: a script whose shebang is invalid
// or that does not compile is answered its error and not cached; otherwise it is compiled into
// EVAL's state and cached by its SHA1 (a script already cached is neither parsed nor compiled).
std::optional<RedisReply> create_function(Ctx& c, const std::string& sha, const std::string& text) {
  if (c.loaded_scripts().count(sha)) return std::nullopt;
  const auto parsed = shebang_flags(text);
  if (const std::string* error = std::get_if<std::string>(&parsed)) return RedisReply::error("ERR " + *error);
  const std::string_view body = std::string_view(text).substr(std::get<ScriptFlags>(parsed).shebang_len);
  if (auto error = compile_lua(c, sha, body)) return error;
  c.loaded_scripts().emplace(sha, text);
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
  if (auto error = create_function(c, sha, c.arg(1))) return *error;
  return run_with_flags(c, sha, c.arg(1));
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
  return run_with_flags(c, sha, body);
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
    if (auto error = create_function(c, sha, c.arg(2))) return *error;
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
