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
