// Redis scripts: named atomic operations, each one Lua text that the simulated Redis
// (sim/redis/lua_script.h) and a real redis-server run alike, through EVALSHA and EVAL.
//
// Contract
// - A RedisScript pairs a unique `name` with its Lua text.
// - A ScriptRegistry is an ordinary value (no global registry): a system builds one with its
//   scripts and hands the same registry to the simulated Redis's clients and to the real client,
//   which look scripts up by name, by the SHA1 of their Lua text (EVALSHA) or by the text (EVAL).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "impl/ports/redis_reply.h"

namespace fl {

struct RedisScript {
  std::string name;
  std::string lua;
};

class ScriptRegistry {
 public:
  // REQUIRES: no script of that name or Lua text is registered yet.
  void add(RedisScript script);

  const RedisScript* by_name(std::string_view name) const;
  // `sha1_hex` is matched case-insensitively, as Redis does.
  const RedisScript* by_sha1(std::string_view sha1_hex) const;
  const RedisScript* by_lua(std::string_view lua) const;
  // SHA1 (lowercase hex) of the named script's Lua text. REQUIRES: the name is registered.
  const std::string& sha1_of(std::string_view name) const;
  std::vector<std::string> names() const;  // sorted
  size_t size() const { return scripts_.size(); }

 private:
  std::map<std::string, RedisScript, std::less<>> scripts_;  // by name
  std::map<std::string, std::string, std::less<>> sha_to_name_;
};

// SHA-1 of `data` as 40 lowercase hex digits (what Redis's SCRIPT LOAD returns).
std::string sha1_hex(std::string_view data);

}  // namespace fl
