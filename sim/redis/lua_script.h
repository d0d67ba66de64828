// Lua scripts as Redis 7.0 runs them: a script's text run by Lua 5.1 (the version Redis 7.0
// embeds), its redis.call()s through the engine.
//
// Contract
// - run_lua(c, sha1, body, keys, args) runs `body` (whose SHA1 is `sha1`, lowercase hex) atomically
//   at c's time and returns the script's reply,
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
//   undefined global or writing any global raises. struct is missing (no Debian package): a
//   script naming it reads an undefined global. The script's returned tables {double=},
//   {big_number=}, {verbatim_string=}, {map=}, {set=} and, under RESP3, its booleans reach the
//   caller as those RESP3 types (a verbatim string always as format txt). math.random and
//   math.randomseed are Redis's rand48 over the engine's state (Ctx::lua_rand48): rand.c's
//   initial state at each start, shared by the server's scripts, never reseeded per script (what
//   redis-server 7.0.15 does), so the draws depend only on the scripts the server ran.
// - One state per server, as Redis keeps one (scriptingInit): the libraries and the sandbox are
//   set up once, each script is compiled once (cached by its SHA1, as Redis's f_<sha>) and every
//   run starts on RESP2 with fresh KEYS and ARGV. As in Redis 7.0.15, _G, every library table,
//   their metatables and the string metatable are read-only: a write raises "Attempt to modify a
//   readonly table" (stock Lua 5.1 has no such flag: each is an empty proxy, lua_script.cc), so
//   no script sees another's changes. SCRIPT FLUSH and a restart drop the state.
// - Deterministic: nothing reads the clock, the environment or the C library's random generator;
//   Lua's own allocator and collector depend only on the scripts the server ran.
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

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "impl/ports/redis_reply.h"

struct lua_State;

namespace fl::sim::redis {

struct Ctx;

// What a state's C functions need of the run in progress (lua_script.cc keeps it as the state's
// allocator data): its context, the protocol redis.setresp chose, the instructions run.
struct LuaFrame {
  Ctx* ctx = nullptr;
  int protocol = 2;
  int64_t steps = 0;
};

// The Lua state a server's EVAL scripts share (see the contract above). Owned by the engine;
// not copyable. reset() drops the state (SCRIPT FLUSH, a restart); the next run makes a new one.
class LuaEvalState {
 public:
  LuaEvalState() = default;
  ~LuaEvalState();
  LuaEvalState(const LuaEvalState&) = delete;
  LuaEvalState& operator=(const LuaEvalState&) = delete;
  void reset();

 private:
  friend RedisReply run_lua(Ctx& c, std::string_view sha1, std::string_view body, const std::vector<std::string>& keys,
                            const std::vector<std::string>& args);
  friend std::optional<RedisReply> compile_lua(Ctx& c, std::string_view sha1, std::string_view body);
  // The state, made (sandboxed, read-only, its stack slots pushed) at the first use.
  lua_State* state(Ctx& c);
  lua_State* state_ = nullptr;
  LuaFrame frame_;
};

RedisReply run_lua(Ctx& c, std::string_view sha1, std::string_view body, const std::vector<std::string>& keys,
                   const std::vector<std::string>& args);
// Compiles `body` into EVAL's state under `sha1` (Redis's luaCreateFunction, which SCRIPT LOAD and
// EVAL call before caching a script): the compile error Redis answers, or none when the function
// is cached (a later run_lua of the same SHA1 reuses it).
std::optional<RedisReply> compile_lua(Ctx& c, std::string_view sha1, std::string_view body);

// Redis functions (FUNCTION LOAD, FCALL, Redis 7.0's function_lua.c): a library is
// "#!lua name=<library>\n<code>", whose code registers each function with
// redis.register_function(name, callback) or redis.register_function{function_name=...,
// callback=..., flags={...}}. Loading runs the code with only register_function and log in
// `redis` (redis.call is not there, as in Redis); each FCALL runs it again in a fresh state, then
// calls the function with KEYS and ARGV as its two arguments; its globals and libraries are
// read-only as EVAL's. Errors end " script: <function>, on @user_function:<line>.".
struct FunctionLibrary {
  std::string name;
  std::string code;                       // the text after the metadata line
  std::map<std::string, bool> functions;  // name -> registered with the no-writes flag
};
std::variant<FunctionLibrary, RedisReply> load_function_library(Ctx& c, std::string_view source);
RedisReply call_function(Ctx& c, const FunctionLibrary& library, const std::string& function,
                         const std::vector<std::string>& keys, const std::vector<std::string>& args);

}  // namespace fl::sim::redis
