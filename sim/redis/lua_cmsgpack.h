// The `cmsgpack` library Redis 7.0 loads into its scripts (deps/lua/src/lua_cmsgpack.c, "lua-cmsgpack
// 0.4.0"), for the simulated Redis's Lua (lua_script.cc). Debian has no package of it; the bytes
// are written and read by msgpack-c (libmsgpack-dev), the Lua side follows lua-cmsgpack's rules.
//
// Contract
// - cmsgpack.pack(v1, ...) returns the MessagePack encodings of its arguments, concatenated; no
//   argument raises "MessagePack pack needs input.". nil and values without a MessagePack type
//   (functions, userdata, threads) encode as nil; a number with an exact int64 value as the
//   smallest integer form (positive values unsigned), any other number as a float32 when the float
//   holds it exactly, else a float64; a string as str (fixstr, str8, str16, str32); a table whose
//   keys are exactly 1..n as an array of its n values, any other as a map in lua_next order; a table
//   nested 16 deep encodes as nil (circular references end there).
// - cmsgpack.unpack(s) returns every value encoded in s; cmsgpack.unpack_one(s [, offset]) the
//   offset after the first value (-1 when s ends there) and that value; cmsgpack.unpack_limit(s,
//   limit [, offset]) the same for up to `limit` values (limit and offset both 0: like unpack, no
//   offset). Integers and floats decode to numbers, str to strings, arrays to tables indexed from
//   1, maps to tables. A truncated input raises "Missing bytes in input.", an unknown or unsupported
//   type (bin, ext, 0xc1) "Bad data format in input.".
// - Errors are Lua errors; buffers live in a userdata that the collector frees, so an error
//   raised half-way (a metamethod, a nil map key) leaks nothing.
#pragma once

struct lua_State;

namespace fl::sim::redis {

// The opener: pushes the cmsgpack table (pack, unpack, unpack_one, unpack_limit, _NAME, _VERSION,
// _COPYRIGHT, _DESCRIPTION) and returns 1.
int luaopen_cmsgpack(lua_State* L);

}  // namespace fl::sim::redis
