// Lua scripts as Redis 7.0 runs them: a script's text run by Lua 5.1 (the version Redis 7.0
// embeds), its redis.call()s through the engine.
//
// Contract
// - run_lua(c, body, keys, args) runs `body` atomically at c's time and returns the script's reply,
//   converted as Redis 7.0 converts Lua values (number -> integer, truncated; string -> bulk;
//   false/nil -> nil; true -> integer 1; {ok=s} -> status; {err=s} -> error; a table -> array up
//   to its first nil, each element converted the same way).
// - The script sees KEYS and ARGV, and `redis` with call, pcall, error_reply, status_reply,
//   sha1hex, log (a no-op: the simulation keeps no server log) and setresp (2 at each run's start;
//   under 3 a call's reply converts with RESP3's types: {map=}, {set=}, {double=}, nil, booleans,
//   {big_number=}, {verbatim_string=}). A call's arguments leave the stack before its reply is
//   pushed, so a call with 7,999 arguments works. redis.call raises on an error
//   reply (the script ends with that error, " script: <sha>, on @user_script:<line>." appended as
//   Redis 7.0 does; writes made before it stay); redis.pcall returns it as {err=...}.
// - Sandbox as Redis 7.0: the base, table, string and math libraries, cjson (2.1.0), bit
//   (LuaBitOp 1.0.2, with Redis's patched bit.tohex) and cmsgpack (lua_cmsgpack.h); no os, io,
//   loadfile, dofile, print, and not the deprecated newproxy, setfenv, getfenv; reading an
//   undefined global or writing a new global raises. struct is missing (no Debian package): a
//   script naming it reads an undefined global. The script's returned tables {double=},
//   {big_number=}, {verbatim_string=}, {map=}, {set=} and, under RESP3, its booleans reach the
//   caller as those RESP3 types (a verbatim string always as format txt). Redis 7.0's vendored Lua also marks every library table read-only ("Attempt
//   to modify a readonly table"); stock Lua 5.1 cannot, so a script here may overwrite a library
//   field or an existing global for the rest of its own run (the state is fresh per run). math.random and
//   math.randomseed are Redis's rand48 over the engine's state (Ctx::lua_rand48): rand.c's
//   initial state at each start, shared by the server's scripts, never reseeded per script (what
//   redis-server 7.0.15 does), so the draws depend only on the scripts the server ran.
// - Deterministic: one fresh Lua state per run; nothing reads the clock, the environment or
//   the C library's random generator.
// - Long scripts: every 100,000 instructions the engine's script hook runs (Engine::set_script_hook:
//   redis-serve serves other clients from it, -BUSY after busy-reply-threshold, and SCRIPT KILL /
//   FUNCTION KILL end a script that has not written with "ERR Script killed by user with SCRIPT
//   KILL...", raised again at every line so that pcall cannot catch it for good). Without a hook
//   (the simulation) a script past 200 million Lua instructions ends with an error: the simulated
//   world stands still while a script runs.
// EVAL_RO and EVALSHA_RO run the same way with writes and PUBLISH refused (scripts.cc).
// unpack is Redis's patched one (stock Lua 5.1's overflows on a huge range and crashes).
// A SELECT inside a script moves its later calls, never its caller; XREAD/XREADGROUP with BLOCK
// is refused from a script, as Redis refuses it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "impl/ports/redis_reply.h"

namespace fl::sim::redis {

struct Ctx;

RedisReply run_lua(Ctx& c, std::string_view body, const std::vector<std::string>& keys,
                   const std::vector<std::string>& args);

// Redis functions (FUNCTION LOAD, FCALL, Redis 7.0's function_lua.c): a library is
// "#!lua name=<library>\n<code>", whose code registers each function with
// redis.register_function(name, callback) or redis.register_function{function_name=...,
// callback=..., flags={...}}. Loading runs the code with only register_function and log in
// `redis` (redis.call is not there, as in Redis); each FCALL runs it again in a fresh state, then
// calls the function with KEYS and ARGV as its two arguments. Errors end " script: <function>,
// on @user_function:<line>.".
struct FunctionLibrary {
  std::string name;
  std::string code;                       // the text after the metadata line
  std::map<std::string, bool> functions;  // name -> registered with the no-writes flag
};
std::variant<FunctionLibrary, RedisReply> load_function_library(Ctx& c, std::string_view source);
RedisReply call_function(Ctx& c, const FunctionLibrary& library, const std::string& function,
                         const std::vector<std::string>& keys, const std::vector<std::string>& args);

}  // namespace fl::sim::redis
