// The toy visit counter's one Redis script (docs/systems/toy.md), in Lua and in C++
// (impl/ports/redis_script.h).
//
// toy_visit (KEYS counter_key seen_key; ARGV request_id): records the visit's request id with
//   SET seen_key request_id NX and INCRs counter_key only when that SET wrote (the id is new).
//   Returns the counter after the visit (an integer; 0 when a repeated id finds no counter).
//   A retried or duplicated visit carries the same request id, so it is counted once (TOY-1).
//   Only hardened runs it (fix TOY-DEDUP); spec sends a plain INCR counter_key.
//
// Keys: the counter is kCounterKey; a visit's seen key is seen_key(request_id). The judges read
// the counter key by that name (what the design says the counter is), nothing else of the toy.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "impl/ports/redis_script.h"

namespace fl::toy {

inline constexpr const char* kVisitScript = "toy_visit";
inline constexpr const char* kCounterKey = "toy:visits";
inline constexpr const char* kSeenKeyPrefix = "toy:seen:";

inline std::string seen_key(std::string_view request_id) { return kSeenKeyPrefix + std::string(request_id); }

// Adds toy_visit to `registry`. REQUIRES: no script of that name is registered yet.
void add_toy_scripts(ScriptRegistry& registry);
// A registry holding the toy's scripts (for the simulated Redis, a real client, redis-serve).
std::shared_ptr<const ScriptRegistry> toy_scripts();

}  // namespace fl::toy
