// Redis scripts: named atomic operations written twice, once in C++ (run by the simulated Redis)
// and once in Lua (run by a real redis-server through EVALSHA/EVAL).
//
// Contract
// - A RedisScript pairs a unique `name` with its Lua text and a C++ function `run`. `run` must do
//   what the Lua does, reply for reply: it reaches Redis only through ScriptCalls::call (the
//   counterpart of `redis.call`), and returns what the Lua script returns, converted as Redis
//   converts Lua values (number -> integer, truncated; string -> bulk; false/nil -> nil; true ->
//   integer 1; {ok=...} -> status; {err=...} -> error; table -> array up to the first nil).
// - `run` executes atomically: nothing else runs on that Redis until it returns. Like Lua's
//   redis.call, a command that fails does not undo earlier writes of the same script, and it
//   raises: the simulated Redis's ScriptCalls::call does not return an error reply, it ends the
//   script (the C++ code after it never runs) and the script replies with that error (an -OOM,
//   -READONLY, -WRONGTYPE ... of an inner call becomes the script's reply, as in Redis).
// - A ScriptRegistry is an ordinary value (no global registry): a system builds one with its
//   scripts and hands the same registry to the simulated Redis and to the real client, which
//   look scripts up by name, by the SHA1 of their Lua text (EVALSHA) or by the text (EVAL).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "impl/ports/redis_reply.h"

namespace fl {

// What a C++ script sees of Redis: `redis.call(...)`. An error reply raises (see above).
class ScriptCalls {
 public:
  virtual ~ScriptCalls() = default;
  // argv by value: a script builds it for this one call, and the simulated Redis keeps it (its
  // command log) without copying it again.
  virtual RedisReply call(std::vector<std::string> argv) = 0;
};

using ScriptFn = std::function<RedisReply(ScriptCalls& redis, const std::vector<std::string>& keys,
                                          const std::vector<std::string>& args)>;

struct RedisScript {
  std::string name;
  std::string lua;
  ScriptFn run;
};

class ScriptRegistry {
 public:
  // REQUIRES: no script of that name or Lua text is registered yet; script.run is set.
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
