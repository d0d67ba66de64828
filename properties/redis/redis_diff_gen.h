// RapidCheck generators of Redis command sequences for the differential suite.
//
// A small key space (a few keys per type, plus cross-type picks that provoke WRONGTYPE) and
// small value pools, so that sequences collide on keys, fields, members, stream ids, groups and
// consumers. Covered: every command issue 3 lists with its options (strings, keys/TTLs, hashes,
// sets, sorted sets, streams with consumer groups, pending entries, XCLAIM/XAUTOCLAIM, pub/sub,
// MULTI/EXEC/DISCARD, PING/FLUSHALL/DBSIZE), the scripts of diff_scripts.h through
// EVAL/EVALSHA/SCRIPT, malformed commands (arity and syntax errors), real waits (expiry,
// idle times) and XREADGROUP BLOCK woken by another connection's XADD.
#pragma once

#include <vector>

#include <rapidcheck.h>

#include "properties/redis/redis_diff.h"

namespace fl::redis_diff {

rc::Gen<Step> gen_step();
// Sequences of up to max_steps steps.
rc::Gen<std::vector<Step>> gen_sequence(int max_steps);

// Argument boundaries, for every command the simulated Redis implements that takes a number,
// an id, a cursor or a range: int64/int32/uint64 edges and one past them, 0, -1, float and
// non-numeric text where an integer is expected, NaN/inf/overflowing floats, huge COUNT/LIMIT/
// numkeys, TTLs where seconds*1000 or now+ms overflow, stream ids at uint64's edge, database
// indexes, HELLO versions and CONFIG SET integers; and value boundaries (INT64_MAX stored, then
// INCR) for the commands without numeric arguments. A fixed prelude puts one key of each type
// and a consumer group with a pending entry in place; all steps run on connection 0. Values
// stay such that neither server allocates much (SETRANGE offsets either write little or fail;
// HRANDFIELD counts are small or refused; BLOCK only with refused timeouts).
rc::Gen<Step> gen_boundary_step();
rc::Gen<std::vector<Step>> gen_boundary_sequence(int max_steps);

}  // namespace fl::redis_diff

namespace rc {
template <>
struct Arbitrary<fl::redis_diff::Step> {
  static Gen<fl::redis_diff::Step> arbitrary() { return fl::redis_diff::gen_step(); }
};
}  // namespace rc

namespace fl::redis_diff {
// RapidCheck prints counterexamples with this.
inline void showValue(const Step& s, std::ostream& os) { os << s.describe(); }
}  // namespace fl::redis_diff
