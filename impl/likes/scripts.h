// Redis scripts of the hardened likes service (spec uses none: its writes are a plain pipeline).
//
// likes_put (KEYS value_key version_key; ARGV value version ttl_ms):
//   writes value_key=value and version_key=version (with PX ttl_ms when ttl_ms > 0; the version key
//   lives 5 min longer than its value, so an older put stays refused after the value expired) unless the
//   cached value is at least as new: skipped when version_key holds a version >= `version` and
//   value_key exists, or a version > `version` (value expired). Returns 1 when written, else 0.
//   Every cache write of hardened goes through it, so no fill, warm-up or reconciliation
//   overwrites a newer value written by a concurrent like or unlike (LIKE-8, LIKE-10).
// likes_apply (KEYS state_key state_version_key count_key count_version_key;
//              ARGV state state_version state_ttl_ms count count_ttl_ms count_version):
//   both puts atomically; returns {state_written, count_written}.
#pragma once

#include <memory>

#include "impl/ports/redis_script.h"

namespace fl::likes {

inline constexpr const char* kPutScript = "likes_put";
inline constexpr const char* kApplyScript = "likes_apply";

// Adds the likes scripts to `registry`.
void add_likes_scripts(ScriptRegistry& registry);
std::shared_ptr<const ScriptRegistry> likes_scripts();

}  // namespace fl::likes
