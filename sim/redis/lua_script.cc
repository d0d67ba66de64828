// run_lua: a script's Lua text run by Lua 5.1, as Redis 7.0's script_lua.c and eval.c run it.
//
// Lua 5.1 (Debian's liblua5.1, built as C) raises errors with longjmp, which skips C++
// destructors: every function here that Lua calls does its C++ work in a helper that returns
// first, and raises (lua_error) only with no C++ object alive on its own frame.
#include "sim/redis/lua_script.h"

#include <algorithm>
#include <cstring>

#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <lua.hpp>
extern "C" {
#include <lua-bitop.h>
#include <lua-cjson.h>
}

#include "impl/ports/assert.h"
#include "impl/ports/redis_script.h"
#include "sim/redis/commands.h"
#include "sim/redis/lua_cmsgpack.h"
#include "sim/redis/resp3.h"

namespace fl::sim::redis {

namespace {

constexpr const char* kChunkName = "@user_script";  // Redis 7.0's name for a script's text

// ---- rand48, as Redis's rand.c (math.random must not use the C library's generator) ---------

constexpr uint64_t kRand48Mask = (uint64_t{1} << 48) - 1;
constexpr int32_t kRand48Max = INT32_MAX;  // REDIS_LRAND48_MAX

int32_t lrand48_next(uint64_t* x) {
  *x = (*x * 0x5DEECE66DULL + 0xB) & kRand48Mask;
  return static_cast<int32_t>(*x >> 17);
}

uint64_t* rand_state(lua_State* L) { return static_cast<uint64_t*>(lua_touserdata(L, lua_upvalueindex(1))); }

// math.random as Redis's redis_math_random (Lua 5.1's math_random over rand48).
int math_random(lua_State* L) {
  const lua_Number r =
      static_cast<lua_Number>(lrand48_next(rand_state(L)) % kRand48Max) / static_cast<lua_Number>(kRand48Max);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      const int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      const int l = luaL_checkint(L, 1);
      const int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int math_randomseed(lua_State* L) {
  const int32_t seed = luaL_checkint(L, 1);
  *rand_state(L) = ((static_cast<uint64_t>(static_cast<uint32_t>(seed)) << 16) | 0x330E) & kRand48Mask;
  return 0;
}

// ---- reply <-> Lua ----------------------------------------------------------------------------

// A state's LuaFrame is its allocator's user data (new_sandbox): found without a table lookup.
LuaFrame* frame_of(lua_State* L) {
  void* frame = nullptr;
  lua_getallocf(L, &frame);
  return static_cast<LuaFrame*>(frame);
}

Ctx* ctx_of(lua_State* L) { return frame_of(L)->ctx; }

void push_field_table(lua_State* L, const char* field, const std::string& value) {
  lua_newtable(L);
  lua_pushlstring(L, value.data(), value.size());
  lua_setfield(L, -2, field);
}

// The field Redis sets in the error table of a failed redis.call/pcall (its error was counted in
// INFO errorstats when the command failed or was refused).
constexpr const char* kStatsCounted = "ignore_error_stats_update";

// luaExtractErrorInformation's ignore_err_stats_update: an error table at `index` marked so makes
// the script's error reply uncounted (Engine::script_error_counted).
void note_stats_counted(lua_State* L, int index) {
  lua_pushstring(L, kStatsCounted);
  lua_rawget(L, index);  // raw: a metamethod could raise outside the protected call
  if (lua_isboolean(L, -1) && lua_toboolean(L, -1) && ctx_of(L) != nullptr) ctx_of(L)->engine.script_error_counted();
  lua_pop(L, 1);
}

void push_reply(lua_State* L, const RedisReply& r, int protocol);

// The protocol the running script chose with redis.setresp (2 until it does: each run starts on
// RESP2, as scriptPrepareForRun resets it).
int script_protocol(lua_State* L) { return frame_of(L)->protocol; }

// The RESP3 types of a reply to a script that chose redis.setresp(3), as Lua values
// (redisProtocolToLuaType_Map/Set/Double/Bool/BigNumber/VerbatimString): {map={k=v}},
// {set={member=true}}, {double=n}, a boolean, {big_number=s}, {verbatim_string={format, string}}.
// Returns false for the types RESP2 shares (push_reply's).
bool push_resp3_reply(lua_State* L, const RedisReply& r) {
  using Resp3 = RedisReply::Resp3;
  if (r.kind == RedisReply::Kind::kNil || r.kind == RedisReply::Kind::kNilArray) {
    lua_pushnil(L);
    return true;
  }
  if (r.kind == RedisReply::Kind::kInteger && r.resp3 == Resp3::kBool) {
    lua_pushboolean(L, r.integer != 0);
    return true;
  }
  if (r.kind == RedisReply::Kind::kBulk && r.resp3 == Resp3::kDouble) {
    lua_newtable(L);
    lua_pushnumber(L, std::strtod(r.str.c_str(), nullptr));
    lua_setfield(L, -2, "double");
    return true;
  }
  if (r.kind == RedisReply::Kind::kBulk && r.resp3 == Resp3::kBigNumber) {
    push_field_table(L, "big_number", r.str);
    return true;
  }
  if (r.kind == RedisReply::Kind::kBulk && r.resp3 == Resp3::kVerbatim) {
    lua_newtable(L);
    push_field_table(L, "string", r.str);
    lua_pushstring(L, "txt");
    lua_setfield(L, -2, "format");
    lua_setfield(L, -2, "verbatim_string");
    return true;
  }
  if (r.kind != RedisReply::Kind::kArray || (r.resp3 != Resp3::kMap && r.resp3 != Resp3::kSet)) return false;
  const bool map = r.resp3 == Resp3::kMap;
  lua_newtable(L);
  lua_newtable(L);
  for (size_t i = 0; i < r.elements.size(); i += map ? 2 : 1) {
    push_reply(L, r.elements[i], 3);
    if (map && i + 1 < r.elements.size()) {
      push_reply(L, r.elements[i + 1], 3);
    } else {
      lua_pushboolean(L, 1);
    }
    if (lua_isnil(L, -2)) {
      lua_pop(L, 2);  // a nil key cannot index a table (lua_settable would raise)
      continue;
    }
    lua_settable(L, -3);
  }
  lua_setfield(L, -2, map ? "map" : "set");
  return true;
}

// A reply as a Lua value (Redis's redisProtocolToLuaType): integer -> number, bulk -> string,
// nil -> false, status -> {ok=...}, error -> {err=...}, array -> table; under RESP3 (`protocol`
// 3, redis.setresp) also push_resp3_reply's types.
void push_reply(lua_State* L, const RedisReply& r, int protocol) {
  // The slots this value needs (a string or number 1, a table with its field or element 2, a
  // RESP3 map 4), no more: a script may call with 7,999 arguments on a stack of 8,000.
  const bool scalar = r.kind == RedisReply::Kind::kInteger || r.kind == RedisReply::Kind::kNil ||
                      r.kind == RedisReply::Kind::kNilArray ||
                      (r.kind == RedisReply::Kind::kBulk && (protocol != 3 || r.resp3 == RedisReply::Resp3::kNone));
  if (!lua_checkstack(L, scalar ? 1 : 4)) {  // never raise here: the caller's reply is alive (file comment)
    if (lua_checkstack(L, 1)) lua_pushboolean(L, 0);
    return;
  }
  if (protocol == 3 && push_resp3_reply(L, r)) return;
  switch (r.kind) {
    case RedisReply::Kind::kInteger:
      lua_pushnumber(L, static_cast<lua_Number>(r.integer));
      return;
    case RedisReply::Kind::kBulk:
      lua_pushlstring(L, r.str.data(), r.str.size());
      return;
    case RedisReply::Kind::kStatus:
      push_field_table(L, "ok", r.str);
      return;
    case RedisReply::Kind::kError:
    case RedisReply::Kind::kTransportError:
      // redisProtocolToLuaType_Error: the command's error is in the stats already; a script that
      // returns or raises this table must not count it again.
      push_field_table(L, "err", r.str);
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, kStatsCounted);
      return;
    case RedisReply::Kind::kArray:
      lua_createtable(L, static_cast<int>(r.elements.size()), 0);
      for (size_t i = 0; i < r.elements.size(); ++i) {
        push_reply(L, r.elements[i], protocol);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      return;
    case RedisReply::Kind::kNil:
    case RedisReply::Kind::kNilArray:
      lua_pushboolean(L, 0);
      return;
  }
}

// sdstrim(s, "\r\n"): CR and LF off both ends.
std::string trim_crlf(std::string_view s) {
  const size_t first = s.find_first_not_of("\r\n");
  return first == std::string_view::npos ? "" : std::string(s.substr(first, s.find_last_not_of("\r\n") - first + 1));
}

// addReplyErrorFormatEx: an error reply is one line: CR and LF trimmed at its ends and turned
// into spaces inside it.
std::string error_line(std::string_view text) {
  std::string s = trim_crlf(text);
  std::replace(s.begin(), s.end(), '\r', ' ');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

RedisReply to_reply(lua_State* L, int index, int depth);

// The field `name` of the table at `t`, pushed (raw: a metamethod could raise outside the
// protected call); true when it has Lua type `type`, else popped.
bool push_typed_field(lua_State* L, int t, const char* name, int type) {
  lua_pushstring(L, name);
  lua_rawget(L, t);
  if (lua_type(L, -1) == type) return true;
  lua_pop(L, 1);
  return false;
}

// The elements of the map or set table on the top of the stack, in lua_next order: key, value
// for a map, the keys for a set.
std::vector<RedisReply> typed_elements(lua_State* L, bool map, int depth) {
  std::vector<RedisReply> out;
  const int table = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, table)) {
    out.push_back(to_reply(L, -2, depth + 1));
    if (map) out.push_back(to_reply(L, -1, depth + 1));
    lua_pop(L, 1);
  }
  return out;
}

// The RESP3 forms of a script's table, whatever its redis.setresp (luaReplyToRedisReply):
// {double=n}, {big_number=s}, {verbatim_string={format=f, string=s}}, {map={...}}, {set={...}}.
// The caller's protocol decides how they are written (a RESP2 client gets a bulk, or an array).
// Leaves the stack above `t` for the caller to reset.
std::optional<RedisReply> typed_table_reply(lua_State* L, int t, int depth) {
  using Resp3 = RedisReply::Resp3;
  if (push_typed_field(L, t, "double", LUA_TNUMBER)) {
    return RedisReply::bulk(format_double(lua_tonumber(L, -1))).as_resp3(Resp3::kDouble);
  }
  if (push_typed_field(L, t, "big_number", LUA_TSTRING)) {
    std::string digits = lua_tostring(L, -1);
    for (char& ch : digits) {
      if (ch == '\r' || ch == '\n') ch = ' ';  // sdsmapchars(big_num, "\r\n", "  ")
    }
    return RedisReply::bulk(std::move(digits)).as_resp3(Resp3::kBigNumber);
  }
  if (push_typed_field(L, t, "verbatim_string", LUA_TTABLE)) {
    const int v = lua_gettop(L);
    if (push_typed_field(L, v, "format", LUA_TSTRING) && push_typed_field(L, v, "string", LUA_TSTRING)) {
      size_t n = 0;
      const char* s = lua_tolstring(L, -1, &n);
      return RedisReply::bulk(std::string(s, n)).as_resp3(Resp3::kVerbatim);
    }
    lua_settop(L, t);
  }
  for (const bool map : {true, false}) {
    if (push_typed_field(L, t, map ? "map" : "set", LUA_TTABLE)) {
      return RedisReply::array(typed_elements(L, map, depth)).as_resp3(map ? Resp3::kMap : Resp3::kSet);
    }
  }
  return std::nullopt;
}

// The Lua value at `index` as a reply (Redis 7.0's luaReplyToRedisReply).
RedisReply to_reply(lua_State* L, int index, int depth) {
  if (depth > 200 || !lua_checkstack(L, 4)) return RedisReply::error("ERR reached lua stack limit");
  switch (lua_type(L, index)) {
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, index, &n);
      return RedisReply::bulk(std::string(s, n));
    }
    case LUA_TBOOLEAN:  // a RESP2 script's false is nil; a RESP3 script's a boolean
      if (script_protocol(L) == 3) {
        return RedisReply::integer_of(lua_toboolean(L, index) ? 1 : 0).as_resp3(RedisReply::Resp3::kBool);
      }
      return lua_toboolean(L, index) ? RedisReply::integer_of(1) : RedisReply::nil();
    case LUA_TNUMBER:
      return RedisReply::integer_of(static_cast<int64_t>(lua_tonumber(L, index)));
    case LUA_TTABLE: {
      const int t = lua_gettop(L) + 1;
      lua_pushvalue(L, index);
      for (const char* field : {"err", "ok"}) {
        lua_pushstring(L, field);
        lua_rawget(L, t);  // raw: a metamethod could raise outside the protected call
        if (lua_type(L, -1) == LUA_TSTRING) {
          std::string s = lua_tostring(L, -1);
          if (field[0] == 'e' && depth == 0) note_stats_counted(L, t);
          lua_settop(L, t - 1);
          return field[0] == 'e' ? RedisReply::error(error_line(std::move(s))) : RedisReply::status(std::move(s));
        }
        lua_pop(L, 1);
      }
      if (std::optional<RedisReply> typed = typed_table_reply(L, t, depth)) {
        lua_settop(L, t - 1);
        return std::move(*typed);
      }
      std::vector<RedisReply> out;
      for (int j = 1;; ++j) {
        lua_rawgeti(L, t, j);
        if (lua_isnil(L, -1)) break;
        out.push_back(to_reply(L, -1, depth + 1));
        lua_pop(L, 1);
      }
      lua_settop(L, t - 1);
      return RedisReply::array(std::move(out));
    }
    default:
      return RedisReply::nil();
  }
}

// ---- the redis table -------------------------------------------------------------------------

// The number at `index` as Redis 7.0 writes a command argument ("%.17g": 0.1 is
// "0.10000000000000001").
void push_number_text(lua_State* L, int index) {
  const double d = static_cast<double>(lua_tonumber(L, index));
  char buf[64];
  // An integer below 2^53 prints as its digits under "%.17g" (no exponent below 1e17): the
  // scripts' usual arguments (counts, TTLs, versions) skip snprintf. -0 keeps its sign there.
  if (d == std::floor(d) && std::fabs(d) < 9007199254740992.0 && !(d == 0 && std::signbit(d))) {
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(d));
    lua_pushlstring(L, buf, static_cast<size_t>(end - buf));
    return;
  }
  const int n = std::snprintf(buf, sizeof buf, "%.17g", d);
  lua_pushlstring(L, buf, n > 0 ? static_cast<size_t>(n) : 0);
}

constexpr const char* kArgumentsError = "ERR Lua redis lib command arguments must be strings or integers";

// The call's arguments 1..argc as a command's argv (a number as Lua prints it); false when one
// is neither a string nor a number.
bool read_command(lua_State* L, int argc, std::vector<std::string>* argv) {
  argv->reserve(static_cast<size_t>(argc));
  for (int j = 1; j <= argc; ++j) {
    const int type = lua_type(L, j);
    if (type != LUA_TNUMBER && type != LUA_TSTRING) return false;
    if (type == LUA_TNUMBER) {
      push_number_text(L, j);
    } else {
      lua_pushvalue(L, j);
    }
    size_t n = 0;
    const char* s = lua_tolstring(L, -1, &n);
    argv->emplace_back(s, n);
    lua_pop(L, 1);
  }
  return true;
}

// Runs the call of redis.call/pcall and pushes its reply's Lua value, or pushes an error message
// (a string) for arguments Redis refuses. Returns whether what it pushed is an error. Every C++
// object dies before it returns (see the file comment).
bool call_and_push(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc == 0) {
    lua_pushstring(L, "ERR Please specify at least one argument for this redis lib call");
    return true;
  }
  const int protocol = script_protocol(L);
  RedisReply reply;
  {
    std::vector<std::string> argv;
    if (!read_command(L, argc, &argv)) {
      lua_pushstring(L, kArgumentsError);
      return true;
    }
    lua_settop(L, 0);  // the arguments are in argv: their slots are the reply's (luaRedisGenericCommand)
    // call_nested takes argv; RESP3's shaping reads the command after it.
    const std::optional<std::vector<std::string>> command =
        protocol == 3 ? std::optional<std::vector<std::string>>(argv) : std::nullopt;
    reply = ctx_of(L)->call_nested(std::move(argv));
    if (command) shape_for_resp3(*command, &reply);
  }
  const bool error = reply.is_error() || reply.is_transport_error();
  push_reply(L, reply, protocol);
  return error;
}

// redis.call: an error reply (or refused arguments) raises, as an {err=...} table.
int redis_call(lua_State* L) {
  if (call_and_push(L)) {
    if (lua_isstring(L, -1)) {
      lua_newtable(L);
      lua_insert(L, -2);
      lua_setfield(L, -2, "err");
    }
    return lua_error(L);
  }
  return 1;
}

// redis.pcall: an error reply is returned as {err=...}.
int redis_pcall(lua_State* L) {
  if (call_and_push(L) && lua_isstring(L, -1)) {
    lua_newtable(L);
    lua_insert(L, -2);
    lua_setfield(L, -2, "err");
  }
  return 1;
}

// luaPushError + luaError: raises an {err=...} table, no position prefix.
int raise_error_table(lua_State* L, const char* message) {
  lua_newtable(L);
  lua_pushstring(L, message);
  lua_setfield(L, -2, "err");
  return lua_error(L);
}

// redis.acl_check_cmd(command, args...): whether the script's user may run that command on those
// arguments (its keys included); an unknown command raises, as luaRedisAclCheckCmdPermissionsCommand.
int redis_acl_check_cmd(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc == 0) return raise_error_table(L, "ERR Please specify at least one argument for this redis lib call");
  std::vector<std::string> argv;
  if (!read_command(L, argc, &argv)) return raise_error_table(L, kArgumentsError);
  const std::optional<bool> permitted = ctx_of(L)->acl_permits(argv);
  if (!permitted) return raise_error_table(L, "ERR Invalid command passed to redis.acl_check_cmd()");
  lua_pushboolean(L, *permitted ? 1 : 0);
  return 1;
}

// luaPushErrorBuff: pushes {err="<CODE> <msg>"} for "-CODE msg" (the code is what precedes the
// first space; none: ERR), or for "msg" (ERR), the message trimmed of CR and LF at both ends.
void push_error_buff(lua_State* L, std::string_view buffer) {
  std::string code = "ERR", msg(buffer);
  if (!buffer.empty() && buffer[0] == '-') {
    const size_t space = buffer.find(' ');
    if (space == std::string_view::npos) {
      msg = buffer.substr(1);
    } else {
      code = buffer.substr(1, space - 1);
      msg = buffer.substr(space + 1);
    }
  }
  const std::string text = code + " " + trim_crlf(msg);
  lua_newtable(L);
  lua_pushstring(L, text.c_str());  // a C string, as Redis's: a NUL ends it
  lua_setfield(L, -2, "err");
}

// luaRedisReturnSingleFieldTable and luaRedisErrorReplyCommand: a wrong argument is answered with
// an error table, not raised.
bool one_string_argument(lua_State* L) {
  if (lua_gettop(L) == 1 && lua_type(L, 1) == LUA_TSTRING) return true;
  push_error_buff(L, "wrong number or type of arguments");
  return false;
}

int redis_error_reply(lua_State* L) {
  if (!one_string_argument(L)) return 1;
  const char* err = lua_tostring(L, 1);  // a C string: up to a NUL
  push_error_buff(L, err[0] == '-' ? std::string(err) : "-" + std::string(err));
  return 1;
}

int redis_status_reply(lua_State* L) {
  if (!one_string_argument(L)) return 1;
  lua_newtable(L);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "ok");
  return 1;
}

// Pushes sha1_hex of the string at index 1; false when it is not one (nothing to raise).
bool push_sha1(lua_State* L) {
  if (lua_gettop(L) != 1 || !lua_isstring(L, 1)) return false;
  size_t n = 0;
  const char* s = lua_tolstring(L, 1, &n);
  const std::string hex = sha1_hex(std::string_view(s, n));
  lua_pushlstring(L, hex.data(), hex.size());
  return true;
}
int redis_sha1hex(lua_State* L) {
  if (!push_sha1(L)) return luaL_error(L, "wrong number of arguments");
  return 1;
}

// redis.setresp(2|3): the protocol of the replies the script's later redis.call()s convert.
int redis_setresp(lua_State* L) {
  if (lua_gettop(L) != 1) return raise_error_table(L, "ERR redis.setresp() requires one argument.");
  const auto protocol = static_cast<int>(lua_tonumber(L, 1));
  if (protocol != 2 && protocol != 3) return raise_error_table(L, "ERR RESP version must be 2 or 3.");
  frame_of(L)->protocol = protocol;
  return 0;
}

// redis.log: the simulation keeps no server log; the arguments are checked as Redis checks them.
int redis_log(lua_State* L) {
  if (lua_gettop(L) < 2) return luaL_error(L, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) return luaL_error(L, "First argument must be a number (log level).");
  const lua_Number level = lua_tonumber(L, 1);
  if (level < 0 || level > 3) return luaL_error(L, "Invalid debug level.");
  return 0;
}

void register_redis_table(lua_State* L) {
  lua_newtable(L);
  const luaL_Reg fns[] = {{"call", redis_call},
                          {"pcall", redis_pcall},
                          {"error_reply", redis_error_reply},
                          {"status_reply", redis_status_reply},
                          {"sha1hex", redis_sha1hex},
                          {"log", redis_log},
                          {"setresp", redis_setresp},
                          {"acl_check_cmd", redis_acl_check_cmd},
                          {nullptr, nullptr}};
  luaL_register(L, nullptr, fns);
  const char* levels[] = {"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"};
  for (int i = 0; i < 4; ++i) {
    lua_pushnumber(L, i);
    lua_setfield(L, -2, levels[i]);
  }
  lua_setglobal(L, "redis");
}

// ---- the sandbox -----------------------------------------------------------------------------

// Every kHookEvery instructions: a server that serves clients while a script runs (the engine's
// script hook, redis-serve) gets its turn, and a script SCRIPT KILL or FUNCTION KILL asked to end
// raises "Script killed by user" (luaMaskCountHook). Without a hook a script that never ended
// would stop the simulated world (no other event runs while a script does): past
// kInstructionBudget Lua instructions (about a second of a real server's time) it ends with an
// error instead.
constexpr int kHookEvery = 100'000;
constexpr int64_t kInstructionBudget = 200'000'000;

void budget_hook(lua_State* L, lua_Debug*) {
  bool has_hook = false;
  Ctx* c = ctx_of(L);
  if (c != nullptr && c->script_hook(&has_hook)) {
    lua_sethook(L, budget_hook, LUA_MASKLINE, 0);  // every line raises again: a pcall cannot keep it alive
    lua_newtable(L);
    lua_pushstring(L, "ERR Script killed by user with SCRIPT KILL...");
    lua_setfield(L, -2, "err");
    lua_error(L);
  }
  if (has_hook) return;
  const int64_t steps = frame_of(L)->steps += kHookEvery;
  if (steps > kInstructionBudget) {
    luaL_error(L, "faultline: script ran past %d00000 instructions", static_cast<int>(kInstructionBudget / 100'000));
  }
}

void open_library(lua_State* L, const char* name, lua_CFunction open) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

// A library whose opener returns its table; Redis builds cjson with ENABLE_CJSON_GLOBAL, Debian
// does not, so the global is set here (bit's opener sets it too: the same table again).
void open_global_library(lua_State* L, const char* name, lua_CFunction open) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  lua_setglobal(L, name);
}

// math.random/randomseed over `state` (the engine's: Ctx::lua_rand48).
void replace_random(lua_State* L, uint64_t* state) {
  lua_getglobal(L, "math");
  lua_pushlightuserdata(L, state);
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, math_random, 1);
  lua_setfield(L, -3, "random");
  lua_pushcclosure(L, math_randomseed, 1);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);
}

// Global protection in C, as Redis 7.0's (luaProtectedTableError, the read-only table): the error
// handler below attributes an error raised in C to the script line that caused it.
int undefined_global(lua_State* L) {
  if (!lua_isstring(L, 2)) return luaL_error(L, "Second argument to luaProtectedTableError must be a string or number");
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", lua_tostring(L, 2));
}
int readonly_global(lua_State* L) { return luaL_error(L, "Attempt to modify a readonly table"); }

void protect_globals(lua_State* L) {
  lua_newtable(L);
  lua_pushcfunction(L, undefined_global);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, readonly_global);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, LUA_GLOBALSINDEX);
}

// Redis 7.0's __redis__err__handler: every error becomes {err=..., source=..., line=...}.
constexpr const char* kErrorHandler = R"lua(
local dbg = debug
__redis__err__handler = function(err)
  local i = dbg.getinfo(2, 'nSl')
  if i and i.what == 'C' then i = dbg.getinfo(3, 'nSl') end
  if type(err) ~= 'table' then err = {err = 'ERR ' .. tostring(err)} end
  if i then err['source'] = i.source; err['line'] = i.currentline end
  return err
end
debug = nil
)lua";

// unpack as Redis's patched lbaselib.c: stock Lua 5.1's computes the count in int, so
// unpack({}, -2, 2147483647) overflows and crashes the process; this one counts in unsigned and
// refuses with "too many results to unpack".
int safe_unpack(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int i = luaL_optint(L, 2, 1);
  const int e = luaL_opt(L, luaL_checkint, 3, static_cast<int>(lua_objlen(L, 1)));
  if (i > e) return 0;
  unsigned int n = static_cast<unsigned int>(e) - static_cast<unsigned int>(i);
  if (n >= static_cast<unsigned int>(INT_MAX) || !lua_checkstack(L, static_cast<int>(++n))) {
    return luaL_error(L, "too many results to unpack");
  }
  lua_rawgeti(L, 1, i);
  while (i++ < e) lua_rawgeti(L, 1, i);
  return static_cast<int>(n);
}

// loadstring as Redis 7.0.15's patched Lua: a binary chunk (string.dump's) is parsed as text, so
// it fails to compile ("unexpected symbol near 'char(27)'") instead of loading bytecode, which
// could crash the server. The chunk keeps its name, so the message is Redis's.
int text_loadstring(lua_State* L) {
  size_t size = 0;
  const char* s = luaL_checklstring(L, 1, &size);
  const char* chunkname = luaL_optstring(L, 2, s);
  int status = 0;
  if (size > 0 && s[0] == LUA_SIGNATURE[0]) {
    lua_pushliteral(L, " ");  // a leading space: no longer the signature
    lua_pushvalue(L, 1);
    lua_concat(L, 2);
    size_t text_size = 0;
    const char* text = lua_tolstring(L, -1, &text_size);
    status = luaL_loadbuffer(L, text, text_size, chunkname);
  } else {
    status = luaL_loadbuffer(L, s, size, chunkname);
  }
  if (status == 0) return 1;
  lua_pushnil(L);
  lua_insert(L, -2);
  return 2;
}

// LuaBitOp's barg: the number rounded to an integer (the 2^52+2^51 trick), its low 32 bits; a
// non-number raises "number expected".
uint32_t bit_arg(lua_State* L, int idx) {
  const lua_Number n = lua_tonumber(L, idx) + 6755399441055744.0;
  uint64_t bits = 0;
  std::memcpy(&bits, &n, sizeof bits);
  const auto b = static_cast<uint32_t>(bits);
  if (b == 0 && !lua_isnumber(L, idx)) luaL_typerror(L, idx, "number");
  return b;
}

// bit.tohex as Redis's patched lua_bit.c: Debian's LuaBitOp 1.0.2 negates a width of INT32_MIN,
// overflows and writes outside its buffer (bit.tohex(65535, -2147483648) crashed the server).
int safe_tohex(lua_State* L) {
  uint32_t b = bit_arg(L, 1);
  int32_t n = lua_isnone(L, 2) ? 8 : static_cast<int32_t>(bit_arg(L, 2));
  const char* digits = "0123456789abcdef";
  if (n == INT32_MIN) n = INT32_MIN + 1;
  if (n < 0) {
    n = -n;
    digits = "0123456789ABCDEF";
  }
  if (n > 8) n = 8;
  char buf[8];
  for (int i = n; --i >= 0;) {
    buf[i] = digits[b & 15];
    b >>= 4;
  }
  lua_pushlstring(L, buf, static_cast<size_t>(n));
  return 1;
}

// ---- read-only tables (Redis 7.0.15's lua_enablereadonlytable, for EVAL's shared state) -------
//
// Redis marks _G, every library table, their metatables and the string metatable read-only: a
// write raises "Attempt to modify a readonly table", reads and traversals work. Stock Lua 5.1
// has no such flag, so each of those tables is replaced by an empty proxy whose __index is the
// table and whose __newindex raises; rawget, rawset, next, pairs, getmetatable, setmetatable and
// table.insert see through a proxy (or refuse it) as Redis's do. Nothing else in the sandbox
// writes a table raw that a script did not create (table.remove and table.sort write nothing to a
// table without array items); the debug build checks after every run that each proxy is empty.

constexpr const char* kProxiesField = "faultline.proxies";      // proxy -> the table it guards
constexpr const char* kProxyOfField = "faultline.proxy_of";     // guarded table -> its proxy
constexpr const char* kRealGlobalsField = "faultline.globals";  // the table the _G proxy guards

// Pushes the table the value at `index` guards if it is a proxy, else the value itself.
void push_guarded(lua_State* L, int index) {
  index = index > 0 ? index : lua_gettop(L) + index + 1;
  lua_getfield(L, LUA_REGISTRYINDEX, kProxiesField);
  lua_pushvalue(L, index);
  lua_rawget(L, -2);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushvalue(L, index);
  }
  lua_remove(L, -2);
}

bool is_proxy(lua_State* L, int index) {
  index = index > 0 ? index : lua_gettop(L) + index + 1;
  lua_getfield(L, LUA_REGISTRYINDEX, kProxiesField);
  lua_pushvalue(L, index);
  lua_rawget(L, -2);
  const bool proxy = !lua_isnil(L, -1);
  lua_pop(L, 2);
  return proxy;
}

// A C-level write refused: the message without a position, as lua_enablereadonlytable's.
int raise_readonly(lua_State* L) {
  lua_pushstring(L, "Attempt to modify a readonly table");
  return lua_error(L);
}

int readonly_rawget(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  push_guarded(L, 1);
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

int readonly_rawset(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (is_proxy(L, 1)) return raise_readonly(L);
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

int readonly_next(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  push_guarded(L, 1);
  lua_replace(L, 1);
  if (lua_next(L, 1) != 0) return 2;
  lua_pushnil(L);
  return 1;
}

int readonly_pairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, lua_upvalueindex(1));  // readonly_next
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

// getmetatable: a proxy's is the guarded table's (itself behind a proxy), and so is a string's.
int readonly_getmetatable(lua_State* L) {
  luaL_checkany(L, 1);
  push_guarded(L, 1);
  if (!lua_getmetatable(L, -1)) {
    lua_pushnil(L);
    return 1;
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyOfField);
  lua_pushvalue(L, -2);
  lua_rawget(L, -2);
  if (!lua_isnil(L, -1)) return 1;
  lua_pop(L, 2);
  luaL_getmetafield(L, 1, "__metatable");
  return 1;
}

int readonly_setmetatable(lua_State* L) {
  const int t = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argcheck(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table expected");
  if (is_proxy(L, 1)) return raise_readonly(L);
  if (luaL_getmetafield(L, 1, "__metatable")) luaL_error(L, "cannot change a protected metatable");
  lua_settop(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

// table.insert writes its table raw: on a proxy it refuses, as Redis's read-only tables do;
// otherwise the library's own function (upvalue 1) runs. (remove and sort write nothing to a
// table without array items, which every shared table is; setn always raises.)
int readonly_table_write(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  if (is_proxy(L, 1)) return raise_readonly(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// The proxy of the table at `index` (made once; the table's table-valued fields are replaced by
// their proxies first, as luaSetTableProtectionRecursively walks them). Pushes the proxy.
void push_proxy(lua_State* L, int index) {
  index = index > 0 ? index : lua_gettop(L) + index + 1;
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyOfField);
  lua_pushvalue(L, index);
  lua_rawget(L, -2);
  if (!lua_isnil(L, -1)) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  lua_newtable(L);  // the proxy
  const int proxy = lua_gettop(L);
  lua_pushvalue(L, index);
  lua_pushvalue(L, proxy);
  lua_rawset(L, -4);  // proxy_of[table] = proxy
  lua_getfield(L, LUA_REGISTRYINDEX, kProxiesField);
  lua_pushvalue(L, proxy);
  lua_pushvalue(L, index);
  lua_rawset(L, -3);  // proxies[proxy] = table
  lua_pop(L, 1);
  lua_createtable(L, 0, 2);
  lua_pushvalue(L, index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, readonly_global);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, proxy);
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    if (lua_istable(L, -1) && !lua_rawequal(L, -1, index)) {
      push_proxy(L, -1);
      lua_pushvalue(L, -3);
      lua_insert(L, -2);
      lua_rawset(L, index);  // an existing key: the traversal goes on
    }
    lua_pop(L, 1);
  }
  if (lua_getmetatable(L, index)) {
    push_proxy(L, -1);
    lua_pop(L, 2);
  }
  lua_remove(L, proxy - 1);  // proxy_of
}

// Puts EVAL's state behind proxies: _G, its table-valued globals, their metatables and the
// string metatable; the base library's raw functions see through them. REQUIRES: a new_sandbox.
void make_readonly(lua_State* L) {
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxiesField);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxyOfField);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  const int globals = lua_gettop(L);
  lua_pushvalue(L, globals);
  lua_setfield(L, LUA_REGISTRYINDEX, kRealGlobalsField);
  const luaL_Reg raw[] = {{"rawget", readonly_rawget},
                          {"rawset", readonly_rawset},
                          {"next", readonly_next},
                          {"getmetatable", readonly_getmetatable},
                          {"setmetatable", readonly_setmetatable},
                          {nullptr, nullptr}};
  luaL_register(L, nullptr, raw);  // into _G, on top: each name exists, so no __newindex runs
  lua_pushstring(L, "pairs");
  lua_pushstring(L, "next");
  lua_rawget(L, globals);
  lua_pushcclosure(L, readonly_pairs, 1);
  lua_rawset(L, globals);
  lua_pushstring(L, "table");
  lua_rawget(L, globals);
  lua_getfield(L, -1, "insert");
  lua_pushcclosure(L, readonly_table_write, 1);
  lua_setfield(L, -2, "insert");
  lua_pop(L, 1);
  lua_pushstring(L, "_G");
  lua_pushnil(L);
  lua_rawset(L, globals);  // not walked as a field: _G is set to the proxy below
  push_proxy(L, globals);
  lua_pushstring(L, "");  // walking it makes its __index the string library's proxy
  lua_getmetatable(L, -1);
  push_proxy(L, -1);
  lua_pop(L, 3);
  lua_pushstring(L, "_G");
  lua_pushvalue(L, -2);
  lua_rawset(L, globals);
  lua_replace(L, LUA_GLOBALSINDEX);  // the proxy: every later chunk's environment
  lua_pop(L, 1);
}

#ifndef NDEBUG
// Whether every proxy is still empty (a raw write the wrappers missed would fill one).
bool proxies_untouched(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kProxiesField);
  bool untouched = true;
  lua_pushnil(L);
  while (untouched && lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    lua_pushnil(L);
    if (lua_next(L, -2) != 0) {
      untouched = false;
      lua_pop(L, 3);
      break;
    }
  }
  lua_pop(L, 1);
  return untouched;
}
#endif

// lauxlib's allocator, with the state's LuaFrame as its user data.
void* frame_alloc(void*, void* ptr, size_t, size_t size) {
  if (size == 0) {
    std::free(ptr);
    return nullptr;
  }
  return std::realloc(ptr, size);
}

int lua_panic(lua_State* L) {
  std::fprintf(stderr, "PANIC: unprotected error in call to Lua API (%s)\n", lua_tostring(L, -1));
  return 0;
}

// A fresh state with Redis's libraries and the sandbox, `frame` its LuaFrame (which must outlive
// it); nullptr when Lua cannot allocate.
lua_State* new_sandbox(uint64_t* rand48, LuaFrame* frame) {
  lua_State* L = lua_newstate(frame_alloc, frame);
  if (L == nullptr) return nullptr;
  lua_atpanic(L, lua_panic);
  open_library(L, "", luaopen_base);
  open_library(L, LUA_TABLIBNAME, luaopen_table);
  open_library(L, LUA_STRLIBNAME, luaopen_string);
  open_library(L, LUA_MATHLIBNAME, luaopen_math);
  open_library(L, LUA_DBLIBNAME, luaopen_debug);  // for the error handler only; removed below
  // Redis 7.0 also loads cjson, struct, cmsgpack and bit (scriptingInit). Debian ships cjson 2.1.0
  // and LuaBitOp 1.0.2, the versions Redis vendors; cmsgpack is lua_cmsgpack.cc over msgpack-c;
  // struct has no Debian package, so a script naming it reads an undeclared global (docs/redis.md).
  open_global_library(L, "cjson", luaopen_cjson);
  open_global_library(L, "bit", luaopen_bit);
  lua_getglobal(L, "bit");
  lua_pushcfunction(L, safe_tohex);
  lua_setfield(L, -2, "tohex");
  lua_pop(L, 1);
  open_global_library(L, "cmsgpack", luaopen_cmsgpack);
  // Globals outside Redis's allow lists (script_lua.c): the deny list, and the deprecated
  // builtins its luaNewIndexAllowList drops unless lua-enable-deprecated-api is set.
  for (const char* removed : {"loadfile", "dofile", "print", "newproxy", "setfenv", "getfenv"}) {
    lua_pushnil(L);
    lua_setglobal(L, removed);
  }
  lua_pushcfunction(L, safe_unpack);
  lua_setglobal(L, "unpack");
  lua_pushcfunction(L, text_loadstring);
  lua_setglobal(L, "loadstring");
  replace_random(L, rand48);
  register_redis_table(L);
  if (luaL_loadbuffer(L, kErrorHandler, std::char_traits<char>::length(kErrorHandler), "@faultline_sandbox") != 0 ||
      lua_pcall(L, 0, 0, 0) != 0) {
    lua_close(L);
    return nullptr;
  }
  protect_globals(L);
  return L;
}

// Pushes a Lua array (1-based) of the strings: KEYS and ARGV for a script, a function's arguments.
void push_string_array(lua_State* L, const std::vector<std::string>& values) {
  lua_createtable(L, static_cast<int>(values.size()), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    lua_pushlstring(L, values[i].data(), values[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

// EVAL's shared state keeps these on its stack between runs (run_lua), so that a run finds them
// by index instead of by a name looked up in a table.
constexpr int kHandlerSlot = 1;   // __redis__err__handler
constexpr int kCompiledSlot = 2;  // SHA1 -> the script's compiled function
constexpr int kGlobalsSlot = 3;   // the table the _G proxy guards
constexpr int kKeysSlot = 4;      // the string "KEYS"
constexpr int kArgvSlot = 5;      // the string "ARGV"
constexpr int kSlots = 5;

// Pushes the slots above. REQUIRES: a state made read-only, its stack empty.
void push_slots(lua_State* L) {
  FL_ASSERT(lua_gettop(L) == 0);
  lua_getfield(L, LUA_REGISTRYINDEX, kRealGlobalsField);
  lua_getfield(L, -1, "__redis__err__handler");
  lua_newtable(L);
  lua_pushvalue(L, -3);
  lua_remove(L, 1);
  lua_pushliteral(L, "KEYS");
  lua_pushliteral(L, "ARGV");
  FL_ASSERT(lua_gettop(L) == kSlots && lua_isfunction(L, kHandlerSlot));
}

// Sets KEYS or ARGV (the string at `name_slot`) past the read-only proxy.
void set_array_global(lua_State* L, int name_slot, const std::vector<std::string>& values) {
  lua_pushvalue(L, name_slot);
  push_string_array(L, values);
  lua_rawset(L, kGlobalsSlot);
}

// The script's error as Redis 7.0 answers it: "<err> script: <sha>, on @user_script:<line>."
RedisReply error_reply(lua_State* L, std::string_view sha) {
  std::string msg = "ERR unknown error", source = "?", line = "?";
  if (lua_istable(L, -1)) {
    auto field = [L](const char* name) {  // raw: a metamethod could raise outside the protected call
      lua_pushstring(L, name);
      lua_rawget(L, -2);
    };
    field("err");
    if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
    lua_pop(L, 1);
    field("source");
    if (lua_isstring(L, -1)) source = lua_tostring(L, -1);
    lua_pop(L, 1);
    field("line");
    if (lua_isnumber(L, -1)) line = std::to_string(static_cast<int64_t>(lua_tonumber(L, -1)));
    lua_pop(L, 1);
    note_stats_counted(L, lua_gettop(L));
  } else if (lua_isstring(L, -1)) {
    msg = std::string("ERR ") + lua_tostring(L, -1);
  }
  return RedisReply::error(error_line(msg + " script: " + std::string(sha) + ", on " + source + ":" + line + "."));
}

// Pushes the script's function: compiled at its first run, then taken from the state's cache by
// its SHA1 (Redis's f_<sha>); on a compile error pushes the message and returns false.
bool push_compiled(lua_State* L, std::string_view sha1, std::string_view body) {
  lua_pushlstring(L, sha1.data(), sha1.size());
  lua_rawget(L, kCompiledSlot);
  if (lua_isfunction(L, -1)) return true;
  lua_pop(L, 1);
  if (luaL_loadbuffer(L, body.data(), body.size(), kChunkName) != 0) return false;
  lua_pushlstring(L, sha1.data(), sha1.size());
  lua_pushvalue(L, -2);
  lua_rawset(L, kCompiledSlot);
  return true;
}

// REQUIRES: L is EVAL's shared state, its stack holding only the slots.
RedisReply run_in(lua_State* L, Ctx& c, std::string_view sha1, std::string_view body,
                  const std::vector<std::string>& keys, const std::vector<std::string>& args) {
  *frame_of(L) = LuaFrame{&c, 2, 0};  // each run starts on RESP2 (scriptPrepareForRun)
  lua_sethook(L, budget_hook, LUA_MASKCOUNT, kHookEvery);
  if (!push_compiled(L, sha1, body)) {
    std::string why = lua_isstring(L, -1) ? lua_tostring(L, -1) : "unknown error";
    return RedisReply::error("ERR Error compiling script (new function): " + why);
  }
  set_array_global(L, kKeysSlot, keys);
  set_array_global(L, kArgvSlot, args);
  if (lua_pcall(L, 0, 1, kHandlerSlot) != 0) return error_reply(L, sha1);
  return to_reply(L, -1, 0);
}

// ---- functions (function_lua.c, functions.c) --------------------------------------------------

constexpr const char* kFunctionChunkName = "@user_function";
constexpr const char* kFunctionsRegistry = "faultline.functions";  // name -> {callback, no_writes}

bool valid_function_name(const char* s, size_t n) {
  if (n == 0) return false;
  for (size_t i = 0; i < n; ++i) {
    const char ch = s[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_')) return false;
  }
  return true;
}

// The flags table at `index`: false on an unknown flag (luaRegisterFunctionReadFlags).
bool read_function_flags(lua_State* L, int index, bool* no_writes) {
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    if (lua_type(L, -1) != LUA_TSTRING) {
      lua_pop(L, 2);
      return false;
    }
    const char* flag = lua_tostring(L, -1);
    if (std::strcmp(flag, "no-writes") == 0) {
      *no_writes = true;
    } else if (std::strcmp(flag, "allow-oom") != 0 && std::strcmp(flag, "allow-stale") != 0 &&
               std::strcmp(flag, "no-cluster") != 0 && std::strcmp(flag, "allow-cross-slot-keys") != 0) {
      lua_pop(L, 2);
      return false;
    }
    lua_pop(L, 1);
  }
  return true;
}

// redis.register_function's named form: the name, callback and flags left at 2, 3 and 4; the
// error text, or null.
const char* read_named_registration(lua_State* L, bool* no_writes) {
  lua_pushnil(L);  // slots 2, 3, 4: function_name, callback, flags
  lua_pushnil(L);
  lua_pushnil(L);
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING) return "named argument key given to redis.register_function is not a string";
    const char* key = lua_tostring(L, -2);
    int slot = 0;
    if (std::strcmp(key, "function_name") == 0) {
      if (!lua_isstring(L, -1)) return "function_name argument given to redis.register_function must be a string";
      slot = 2;
    } else if (std::strcmp(key, "callback") == 0) {
      if (!lua_isfunction(L, -1)) return "callback argument given to redis.register_function must be a function";
      slot = 3;
    } else if (std::strcmp(key, "flags") == 0) {
      if (!lua_istable(L, -1))
        return "flags argument to redis.register_function must be a table representing function flags";
      if (!read_function_flags(L, lua_gettop(L), no_writes)) return "unknown flag given";
      slot = 4;
    } else if (std::strcmp(key, "description") == 0) {
      if (!lua_isstring(L, -1)) return "description argument given to redis.register_function must be a string";
    } else {
      return "unknown argument given to redis.register_function";
    }
    if (slot)
      lua_replace(L, slot);  // pops the value into its slot
    else
      lua_pop(L, 1);
  }
  if (lua_isnil(L, 2)) return "redis.register_function must get a function name argument";
  if (lua_isnil(L, 3)) return "redis.register_function must get a callback argument";
  return nullptr;
}

// The load-time `redis` table's __index: a field the library API lacks (redis.call while loading).
int load_api_index(lua_State* L) {
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", lua_tostring(L, 2));
}

// Raises `message` without luaL_error's position prefix, as Redis's luaPushError + lua_error.
int raise_plain(lua_State* L, const char* message) {
  lua_pushstring(L, message);
  return lua_error(L);
}

// redis.register_function(name, callback) or redis.register_function{...}: records the callback
// in the registry. No C++ object lives on this frame (luaL_error longjmps).
int redis_register_function(lua_State* L) {
  bool no_writes = false;
  const char* error = nullptr;
  if (lua_gettop(L) == 1) {
    if (!lua_istable(L, 1)) {
      error =
          "calling redis.register_function with a single argument is only applicable to Lua table (representing "
          "named arguments).";
    } else {
      error = read_named_registration(L, &no_writes);
    }
  } else if (lua_gettop(L) == 2) {
    if (!lua_isstring(L, 1))
      error = "first argument to redis.register_function must be a string";
    else if (!lua_isfunction(L, 2))
      error = "second argument to redis.register_function must be a function";
    lua_pushvalue(L, 2);  // the named form's layout: 2 the name, 3 the callback
    lua_pushvalue(L, 1);
    lua_replace(L, 2);
  } else {
    error = "wrong number of arguments to redis.register_function";
  }
  if (error) return raise_plain(L, error);
  size_t n = 0;
  const char* name = lua_tolstring(L, 2, &n);
  if (!valid_function_name(name, n)) {
    // Redis 7.0.15's text names libraries here too (functionLibCreateFunction).
    return raise_plain(L,
                       "Library names can only contain letters, numbers, or underscores(_) and must be at least one "
                       "character long");
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kFunctionsRegistry);
  const int registry = lua_gettop(L);
  lua_pushvalue(L, 2);
  lua_rawget(L, registry);
  if (!lua_isnil(L, -1)) return raise_plain(L, "Function already exists in the library");
  lua_pop(L, 1);
  lua_pushvalue(L, 2);
  lua_newtable(L);
  lua_pushvalue(L, 3);
  lua_setfield(L, -2, "callback");
  lua_pushboolean(L, no_writes ? 1 : 0);
  lua_setfield(L, -2, "no_writes");
  lua_rawset(L, registry);
  return 0;
}

// A fresh sandbox that runs a library's code: `redis` gains register_function, and while loading
// (`loading`) keeps only it, log and the log levels. The library's top level has run when this
// returns null; otherwise the error.
std::optional<std::string> run_library(lua_State* L, Ctx& c, std::string_view code, bool loading) {
  *frame_of(L) = LuaFrame{&c, 2, 0};
  lua_sethook(L, budget_hook, LUA_MASKCOUNT, kHookEvery);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kFunctionsRegistry);
  lua_getglobal(L, "redis");
  if (loading) {
    for (const char* absent : {"call", "pcall", "error_reply", "status_reply", "sha1hex", "acl_check_cmd"}) {
      lua_pushnil(L);
      lua_setfield(L, -2, absent);
    }
    lua_newtable(L);  // the load-time API raises on any other field, as Redis's does
    lua_pushcfunction(L, load_api_index);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
  }
  lua_pushcfunction(L, redis_register_function);
  lua_setfield(L, -2, "register_function");
  lua_pop(L, 1);
  make_readonly(L);  // the library's globals and libraries are read-only, as EVAL's
  if (luaL_loadbuffer(L, code.data(), code.size(), kFunctionChunkName) != 0) {
    return std::string("Error compiling function: ") + (lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
  }
  lua_getglobal(L, "__redis__err__handler");
  lua_insert(L, -2);
  if (lua_pcall(L, 0, 0, -2) != 0) {
    std::string why = "unknown error";
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) why = lua_tostring(L, -1);
      lua_pop(L, 1);
    }
    return "Error registering functions: " + why;
  }
  lua_pop(L, 1);  // the handler
  return std::nullopt;
}

}  // namespace

std::variant<FunctionLibrary, RedisReply> load_function_library(Ctx& c, std::string_view source) {
  if (source.substr(0, 2) != "#!") return RedisReply::error("ERR Missing library metadata");
  const size_t eol = source.find('\n');
  if (eol == std::string_view::npos) return RedisReply::error("ERR Invalid library metadata");
  const std::vector<std::string_view> parts = words_before(source, eol);
  if (parts.empty()) return RedisReply::error("ERR Invalid library metadata");
  FunctionLibrary lib;
  const std::string engine(parts[0].substr(2));
  bool named = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].size() >= 5 && iequals(parts[i].substr(0, 5), "name=")) {
      if (named) return RedisReply::error("ERR Invalid metadata value, name argument was given multiple times");
      lib.name = parts[i].substr(5);
      named = true;
    } else {
      return RedisReply::error("ERR Invalid metadata value given: " + std::string(parts[i]));
    }
  }
  if (!named) return RedisReply::error("ERR Library name was not given");
  if (!valid_function_name(lib.name.data(), lib.name.size())) {
    return RedisReply::error(
        "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character "
        "long");
  }
  if (!iequals(engine, "lua")) return RedisReply::error("ERR Engine '" + engine + "' not found");
  lib.code = std::string(source.substr(eol));
  LuaFrame frame;
  lua_State* L = new_sandbox(&c.lua_rand48(), &frame);
  if (L == nullptr) return RedisReply::error("ERR faultline: cannot start a Lua state");
  if (std::optional<std::string> error = run_library(L, c, lib.code, /*loading=*/true)) {
    lua_close(L);
    return RedisReply::error("ERR " + *error);
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kFunctionsRegistry);
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_getfield(L, -1, "no_writes");
    lib.functions[lua_tostring(L, -3)] = lua_toboolean(L, -1) != 0;
    lua_pop(L, 2);
  }
  lua_close(L);
  if (lib.functions.empty()) return RedisReply::error("ERR No functions registered");
  return lib;
}

RedisReply call_function(Ctx& c, const FunctionLibrary& library, const std::string& function,
                         const std::vector<std::string>& keys, const std::vector<std::string>& args) {
  const KeepSessionDb keep_db(c.session);
  const ScriptRun run(c, /*eval=*/false);
  LuaFrame frame;
  lua_State* L = new_sandbox(&c.lua_rand48(), &frame);
  if (L == nullptr) return RedisReply::error("ERR faultline: cannot start a Lua state");
  if (std::optional<std::string> error = run_library(L, c, library.code, /*loading=*/false)) {
    lua_close(L);
    return RedisReply::error("ERR " + *error);
  }
  lua_getglobal(L, "__redis__err__handler");
  const int handler = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, kFunctionsRegistry);
  lua_getfield(L, -1, function.c_str());
  lua_getfield(L, -1, "callback");
  push_string_array(L, keys);
  push_string_array(L, args);
  RedisReply reply = lua_pcall(L, 2, 1, handler) != 0 ? error_reply(L, function) : to_reply(L, -1, 0);
  lua_close(L);
  return reply;
}

lua_State* LuaEvalState::state(Ctx& c) {
  if (state_ == nullptr) {
    state_ = new_sandbox(&c.lua_rand48(), &frame_);
    if (state_ != nullptr) {
      make_readonly(state_);
      push_slots(state_);
    }
  }
  return state_;
}

std::optional<RedisReply> compile_lua(Ctx& c, std::string_view sha1, std::string_view body) {
  lua_State* L = c.lua_eval().state(c);
  if (L == nullptr) return RedisReply::error("ERR faultline: cannot start a Lua state");
  std::optional<RedisReply> error;
  if (!push_compiled(L, sha1, body)) {
    error = RedisReply::error("ERR Error compiling script (new function): " +
                              std::string(lua_isstring(L, -1) ? lua_tostring(L, -1) : "unknown error"));
  }
  lua_settop(L, kSlots);
  return error;
}

RedisReply run_lua(Ctx& c, std::string_view sha1, std::string_view body, const std::vector<std::string>& keys,
                   const std::vector<std::string>& args) {
  const KeepSessionDb keep_db(c.session);
  const ScriptRun run(c, /*eval=*/true);
  LuaEvalState& shared = c.lua_eval();
  lua_State* L = shared.state(c);
  if (L == nullptr) return RedisReply::error("ERR faultline: cannot start a Lua state");
  RedisReply reply = run_in(L, c, sha1, body, keys, args);
  lua_settop(L, kSlots);
  shared.frame_.ctx = nullptr;  // the run's context ends with it
#ifndef NDEBUG
  // No script can write a proxy (the wrappers above refuse every raw write to one); the debug
  // build re-derives it after every run.
  FL_ASSERT(proxies_untouched(L) && "a script wrote a read-only table raw");
#endif
  return reply;
}

LuaEvalState::~LuaEvalState() { reset(); }

void LuaEvalState::reset() {
  if (state_ != nullptr) lua_close(state_);
  state_ = nullptr;
}

}  // namespace fl::sim::redis
