// run_lua: a script's Lua text run by Lua 5.1, as Redis 7.0's script_lua.c and eval.c run it.
//
// Lua 5.1 (Debian's liblua5.1, built as C) raises errors with longjmp, which skips C++
// destructors: every function here that Lua calls does its C++ work in a helper that returns
// first, and raises (lua_error) only with no C++ object alive on its own frame.
#include "sim/redis/lua_script.h"

#include <cstring>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <lua.hpp>
extern "C" {
#include <lua-bitop.h>
#include <lua-cjson.h>
}

#include "impl/ports/redis_script.h"
#include "sim/redis/commands.h"

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

Ctx* ctx_of(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "faultline.ctx");
  Ctx* c = static_cast<Ctx*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return c;
}

void push_field_table(lua_State* L, const char* field, const std::string& value) {
  lua_newtable(L);
  lua_pushlstring(L, value.data(), value.size());
  lua_setfield(L, -2, field);
}

// A reply as a Lua value (Redis's redisProtocolToLuaType): integer -> number, bulk -> string,
// nil -> false, status -> {ok=...}, error -> {err=...}, array -> table.
void push_reply(lua_State* L, const RedisReply& r) {
  if (!lua_checkstack(L, 4)) {  // never raise here: the caller's reply is alive (file comment)
    lua_pushboolean(L, 0);
    return;
  }
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
      push_field_table(L, "err", r.str);
      return;
    case RedisReply::Kind::kArray:
      lua_createtable(L, static_cast<int>(r.elements.size()), 0);
      for (size_t i = 0; i < r.elements.size(); ++i) {
        push_reply(L, r.elements[i]);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      return;
    case RedisReply::Kind::kNil:
    case RedisReply::Kind::kNilArray:
      lua_pushboolean(L, 0);
      return;
  }
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
    case LUA_TBOOLEAN:
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
          lua_settop(L, t - 1);
          return field[0] == 'e' ? RedisReply::error(std::move(s)) : RedisReply::status(std::move(s));
        }
        lua_pop(L, 1);
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
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(lua_tonumber(L, index)));
  lua_pushlstring(L, buf, n > 0 ? static_cast<size_t>(n) : 0);
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
  RedisReply reply;
  {
    std::vector<std::string> argv;
    argv.reserve(static_cast<size_t>(argc));
    for (int j = 1; j <= argc; ++j) {
      if (lua_type(L, j) == LUA_TNUMBER) {
        push_number_text(L, j);
      } else if (lua_type(L, j) == LUA_TSTRING) {
        lua_pushvalue(L, j);
      } else {
        lua_pushstring(L, "ERR Lua redis lib command arguments must be strings or integers");
        return true;
      }
      size_t n = 0;
      const char* s = lua_tolstring(L, -1, &n);
      argv.emplace_back(s, n);
      lua_pop(L, 1);
    }
    reply = ctx_of(L)->call_nested(std::move(argv));
  }
  const bool error = reply.is_error() || reply.is_transport_error();
  push_reply(L, reply);
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

int redis_reply_table(lua_State* L, const char* field) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    return luaL_error(L, "wrong number or type of arguments");
  }
  lua_newtable(L);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, field);
  return 1;
}
int redis_error_reply(lua_State* L) { return redis_reply_table(L, "err"); }
int redis_status_reply(lua_State* L) { return redis_reply_table(L, "ok"); }

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
                          {nullptr, nullptr}};
  for (const luaL_Reg* f = fns; f->name != nullptr; ++f) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, -2, f->name);
  }
  const char* levels[] = {"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"};
  for (int i = 0; i < 4; ++i) {
    lua_pushnumber(L, i);
    lua_setfield(L, -2, levels[i]);
  }
  lua_setglobal(L, "redis");
}

// ---- the sandbox -----------------------------------------------------------------------------

// A script that never ends would stop the simulated world (no other event runs while a script
// does). Redis answers other clients -BUSY and waits for SCRIPT KILL; until that exists, a script
// past kInstructionBudget Lua instructions (about a second of a real server's time) ends with an
// error instead.
constexpr int kHookEvery = 100'000;
constexpr int64_t kInstructionBudget = 200'000'000;

void budget_hook(lua_State* L, lua_Debug*) {
  lua_getfield(L, LUA_REGISTRYINDEX, "faultline.steps");
  const int64_t steps = static_cast<int64_t>(lua_tonumber(L, -1)) + kHookEvery;
  lua_pop(L, 1);
  lua_pushnumber(L, static_cast<lua_Number>(steps));
  lua_setfield(L, LUA_REGISTRYINDEX, "faultline.steps");
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

// A fresh state with Redis's libraries and the sandbox; nullptr when Lua cannot allocate.
lua_State* new_sandbox(uint64_t* rand48) {
  lua_State* L = luaL_newstate();
  if (L == nullptr) return nullptr;
  open_library(L, "", luaopen_base);
  open_library(L, LUA_TABLIBNAME, luaopen_table);
  open_library(L, LUA_STRLIBNAME, luaopen_string);
  open_library(L, LUA_MATHLIBNAME, luaopen_math);
  open_library(L, LUA_DBLIBNAME, luaopen_debug);  // for the error handler only; removed below
  // Redis 7.0 also loads cjson, struct, cmsgpack and bit (scriptingInit). Debian ships cjson 2.1.0
  // and LuaBitOp 1.0.2, the versions Redis vendors; struct and cmsgpack have no Debian package, so
  // a script naming them reads an undeclared global (docs/redis.md).
  open_global_library(L, "cjson", luaopen_cjson);
  open_global_library(L, "bit", luaopen_bit);
  for (const char* removed : {"loadfile", "dofile"}) {
    lua_pushnil(L);
    lua_setglobal(L, removed);
  }
  lua_pushcfunction(L, safe_unpack);
  lua_setglobal(L, "unpack");
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

void set_array_global(lua_State* L, const char* name, const std::vector<std::string>& values) {
  lua_pushstring(L, name);
  push_string_array(L, values);
  lua_rawset(L, LUA_GLOBALSINDEX);  // past the read-only metatable
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
  } else if (lua_isstring(L, -1)) {
    msg = std::string("ERR ") + lua_tostring(L, -1);
  }
  return RedisReply::error(msg + " script: " + std::string(sha) + ", on " + source + ":" + line + ".");
}

RedisReply run_in(lua_State* L, Ctx& c, std::string_view body, const std::vector<std::string>& keys,
                  const std::vector<std::string>& args) {
  lua_pushlightuserdata(L, &c);
  lua_setfield(L, LUA_REGISTRYINDEX, "faultline.ctx");
  lua_pushnumber(L, 0);
  lua_setfield(L, LUA_REGISTRYINDEX, "faultline.steps");
  lua_sethook(L, budget_hook, LUA_MASKCOUNT, kHookEvery);
  lua_getglobal(L, "__redis__err__handler");
  const int handler = lua_gettop(L);
  if (luaL_loadbuffer(L, body.data(), body.size(), kChunkName) != 0) {
    std::string why = lua_isstring(L, -1) ? lua_tostring(L, -1) : "unknown error";
    return RedisReply::error("ERR Error compiling script (new function): " + why);
  }
  set_array_global(L, "KEYS", keys);
  set_array_global(L, "ARGV", args);
  if (lua_pcall(L, 0, 1, handler) != 0) return error_reply(L, sha1_hex(body));
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
  lua_pushlightuserdata(L, &c);
  lua_setfield(L, LUA_REGISTRYINDEX, "faultline.ctx");
  lua_pushnumber(L, 0);
  lua_setfield(L, LUA_REGISTRYINDEX, "faultline.steps");
  lua_sethook(L, budget_hook, LUA_MASKCOUNT, kHookEvery);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kFunctionsRegistry);
  lua_getglobal(L, "redis");
  if (loading) {
    for (const char* absent : {"call", "pcall", "error_reply", "status_reply", "sha1hex"}) {
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
  std::vector<std::string> parts;
  for (size_t i = 0; i < eol;) {
    const size_t space = std::min(source.find(' ', i), eol);
    if (space > i) parts.emplace_back(source.substr(i, space - i));
    i = space + 1;
  }
  if (parts.empty()) return RedisReply::error("ERR Invalid library metadata");
  FunctionLibrary lib;
  const std::string engine = parts[0].substr(2);
  bool named = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].size() >= 5 && iequals(std::string_view(parts[i]).substr(0, 5), "name=")) {
      if (named) return RedisReply::error("ERR Invalid metadata value, name argument was given multiple times");
      lib.name = parts[i].substr(5);
      named = true;
    } else {
      return RedisReply::error("ERR Invalid metadata value given: " + parts[i]);
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
  lua_State* L = new_sandbox(&c.lua_rand48());
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
  lua_State* L = new_sandbox(&c.lua_rand48());
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

RedisReply run_lua(Ctx& c, std::string_view body, const std::vector<std::string>& keys,
                   const std::vector<std::string>& args) {
  lua_State* L = new_sandbox(&c.lua_rand48());
  if (L == nullptr) return RedisReply::error("ERR faultline: cannot start a Lua state");
  RedisReply reply = run_in(L, c, body, keys, args);
  lua_close(L);
  return reply;
}

}  // namespace fl::sim::redis
