// cmsgpack for the simulated Redis's Lua (lua_cmsgpack.h). Lua raises errors with longjmp, so no
// function here keeps a C++ object with a destructor on its frame across a Lua call; the msgpack-c
// buffers live in a userdata (Buffers) whose __gc frees them.
#include "sim/redis/lua_cmsgpack.h"

#include <msgpack.h>

#include <cmath>
#include <cstdint>
#include <lua.hpp>

namespace fl::sim::redis {

namespace {

constexpr int kMaxNesting = 16;  // LUACMSGPACK_MAX_NESTING
constexpr const char* kBuffersMeta = "faultline.cmsgpack.buffers";

struct Buffers {
  msgpack_sbuffer out;
  msgpack_packer packer;
  msgpack_unpacked unpacked;
};

int free_buffers(lua_State* L) {
  auto* b = static_cast<Buffers*>(luaL_checkudata(L, 1, kBuffersMeta));
  msgpack_sbuffer_destroy(&b->out);
  msgpack_unpacked_destroy(&b->unpacked);
  return 0;
}

// Pushes a fresh Buffers userdata (collected with the Lua state or after the call) and returns it.
Buffers* push_buffers(lua_State* L) {
  auto* b = static_cast<Buffers*>(lua_newuserdata(L, sizeof(Buffers)));
  msgpack_sbuffer_init(&b->out);
  msgpack_packer_init(&b->packer, &b->out, msgpack_sbuffer_write);
  msgpack_unpacked_init(&b->unpacked);
  if (luaL_newmetatable(L, kBuffersMeta)) {
    lua_pushcfunction(L, free_buffers);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return b;
}

// lua-cmsgpack's IS_INT64_EQUIVALENT: finite, integral and inside int64's range.
bool is_int64(lua_Number n) {
  return std::isfinite(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0 &&
         static_cast<lua_Number>(static_cast<int64_t>(n)) == n;
}

void encode_number(msgpack_packer* p, lua_Number n) {
  if (is_int64(n)) {
    msgpack_pack_int64(p, static_cast<int64_t>(n));
    return;
  }
  const auto f = static_cast<float>(n);
  if (static_cast<lua_Number>(f) == n) {
    msgpack_pack_float(p, f);
  } else {
    msgpack_pack_double(p, n);
  }
}

// table_is_an_array: every key a positive integral number and the largest equal to their count.
bool table_is_array(lua_State* L) {
  const int top = lua_gettop(L);
  luaL_checkstack(L, 2, "in function table_is_an_array");
  lua_Number max = 0, count = 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    const lua_Number n = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
    if (n <= 0 || !is_int64(n)) {
      lua_settop(L, top);
      return false;
    }
    if (n > max) max = n;
    ++count;
  }
  lua_settop(L, top);
  return max == count;
}

void encode_value(lua_State* L, msgpack_packer* p, int level);

// The table on the top of the stack, as an array or a map (mp_encode_lua_table).
void encode_table(lua_State* L, msgpack_packer* p, int level) {
  if (table_is_array(L)) {
    const size_t len = lua_objlen(L, -1);
    msgpack_pack_array(p, len);
    luaL_checkstack(L, 1, "in function mp_encode_lua_table_as_array");
    for (size_t j = 1; j <= len; ++j) {
      lua_pushnumber(L, static_cast<lua_Number>(j));
      lua_gettable(L, -2);
      encode_value(L, p, level + 1);
    }
    return;
  }
  luaL_checkstack(L, 3, "in function mp_encode_lua_table_as_map");
  size_t len = 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    ++len;
  }
  msgpack_pack_map(p, len);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pushvalue(L, -2);
    encode_value(L, p, level + 1);  // the key
    encode_value(L, p, level + 1);  // the value
  }
}

// Encodes the value on the top of the stack and pops it (mp_encode_lua_type).
void encode_value(lua_State* L, msgpack_packer* p, int level) {
  int type = lua_type(L, -1);
  if (type == LUA_TTABLE && level == kMaxNesting) type = LUA_TNIL;
  switch (type) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      msgpack_pack_str(p, len);
      msgpack_pack_str_body(p, s, len);
      break;
    }
    case LUA_TBOOLEAN:
      lua_toboolean(L, -1) ? msgpack_pack_true(p) : msgpack_pack_false(p);
      break;
    case LUA_TNUMBER:
      encode_number(p, lua_tonumber(L, -1));
      break;
    case LUA_TTABLE:
      encode_table(L, p, level);
      break;
    default:
      msgpack_pack_nil(p);
      break;
  }
  lua_pop(L, 1);
}

int pack(lua_State* L) {
  const int nargs = lua_gettop(L);
  if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  if (!lua_checkstack(L, nargs)) return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
  Buffers* b = push_buffers(L);
  for (int i = 1; i <= nargs; ++i) {
    lua_pushvalue(L, i);
    encode_value(L, &b->packer, 0);
  }
  lua_pushlstring(L, b->out.data, b->out.size);
  return 1;
}

// A decoded object's tree holds only what lua-cmsgpack reads: no bin, no ext.
bool decodable(const msgpack_object& o) {
  switch (o.type) {
    case MSGPACK_OBJECT_BIN:
    case MSGPACK_OBJECT_EXT:
      return false;
    case MSGPACK_OBJECT_ARRAY:
      for (uint32_t i = 0; i < o.via.array.size; ++i) {
        if (!decodable(o.via.array.ptr[i])) return false;
      }
      return true;
    case MSGPACK_OBJECT_MAP:
      for (uint32_t i = 0; i < o.via.map.size; ++i) {
        if (!decodable(o.via.map.ptr[i].key) || !decodable(o.via.map.ptr[i].val)) return false;
      }
      return true;
    default:
      return true;
  }
}

void push_object(lua_State* L, const msgpack_object& o) {
  luaL_checkstack(L, 3, "in function mp_decode_to_lua_type");
  switch (o.type) {
    case MSGPACK_OBJECT_NIL:
      lua_pushnil(L);
      break;
    case MSGPACK_OBJECT_BOOLEAN:
      lua_pushboolean(L, o.via.boolean ? 1 : 0);
      break;
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
      lua_pushnumber(L, static_cast<lua_Number>(o.via.u64));
      break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
      lua_pushnumber(L, static_cast<lua_Number>(o.via.i64));
      break;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
      lua_pushnumber(L, o.via.f64);
      break;
    case MSGPACK_OBJECT_STR:
      lua_pushlstring(L, o.via.str.ptr, o.via.str.size);
      break;
    case MSGPACK_OBJECT_ARRAY:
      lua_newtable(L);
      for (uint32_t i = 0; i < o.via.array.size; ++i) {
        lua_pushnumber(L, static_cast<lua_Number>(i + 1));
        push_object(L, o.via.array.ptr[i]);
        lua_settable(L, -3);
      }
      break;
    case MSGPACK_OBJECT_MAP:
      lua_newtable(L);
      for (uint32_t i = 0; i < o.via.map.size; ++i) {
        push_object(L, o.via.map.ptr[i].key);
        push_object(L, o.via.map.ptr[i].val);
        lua_settable(L, -3);  // a nil key raises "table index is nil", as in lua-cmsgpack
      }
      break;
    default:
      lua_pushnil(L);  // unreachable: decodable() refused the rest
      break;
  }
}

// mp_unpack_full: the string is argument 1 and the only value on the stack.
int unpack_full(lua_State* L, lua_Integer limit, lua_Integer offset) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  const bool decode_all = limit == 0 && offset == 0;
  if (offset < 0 || limit < 0) {
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  Buffers* b = push_buffers(L);
  const int buffers_index = lua_gettop(L);
  size_t at = static_cast<size_t>(offset);
  int count = 0;
  for (; at < len && (decode_all || count < limit); ++count) {
    const msgpack_unpack_return r = msgpack_unpack_next(&b->unpacked, s, len, &at);
    if (r == MSGPACK_UNPACK_CONTINUE) return luaL_error(L, "Missing bytes in input.");
    if (r != MSGPACK_UNPACK_SUCCESS && r != MSGPACK_UNPACK_EXTRA_BYTES) {
      return luaL_error(L, "Bad data format in input.");
    }
    if (!decodable(b->unpacked.data)) return luaL_error(L, "Bad data format in input.");
    push_object(L, b->unpacked.data);
  }
  lua_remove(L, buffers_index);
  if (!decode_all) {
    lua_pushnumber(L, at == len ? -1 : static_cast<lua_Number>(at));
    lua_insert(L, 2);  // the offset first, before the values
    ++count;
  }
  return count;
}

int unpack(lua_State* L) { return unpack_full(L, 0, 0); }

int unpack_one(lua_State* L) {
  const lua_Integer offset = luaL_optinteger(L, 2, 0);
  lua_settop(L, 1);
  return unpack_full(L, 1, offset);
}

int unpack_limit(lua_State* L) {
  const lua_Integer limit = luaL_checkinteger(L, 2);
  const lua_Integer offset = luaL_optinteger(L, 3, 0);
  lua_settop(L, 1);
  return unpack_full(L, limit, offset);
}

}  // namespace

int luaopen_cmsgpack(lua_State* L) {
  static constexpr luaL_Reg kFunctions[] = {{"pack", pack},
                                            {"unpack", unpack},
                                            {"unpack_one", unpack_one},
                                            {"unpack_limit", unpack_limit},
                                            {nullptr, nullptr}};
  lua_newtable(L);
  for (const luaL_Reg* f = kFunctions; f->name != nullptr; ++f) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, -2, f->name);
  }
  const char* fields[][2] = {{"_NAME", "cmsgpack"},
                             {"_VERSION", "lua-cmsgpack 0.4.0"},
                             {"_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo"},
                             {"_DESCRIPTION", "MessagePack C implementation for Lua"}};
  for (const auto& [name, value] : fields) {
    lua_pushstring(L, value);
    lua_setfield(L, -2, name);
  }
  return 1;
}

}  // namespace fl::sim::redis
