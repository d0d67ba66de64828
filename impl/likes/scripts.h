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
//   both puts atomically; returns {state_written, count_written}. With two more keys
//   (state_lease_key count_lease_key, LK-FILL-LEASE) it first deletes both fill leases (a fill that
//   read the DB before this write's commit can no longer write), and writes each value only over a
//   version key it can compare with: with none (never written, or evicted) it deletes the value
//   instead, so no stale apply writes over a newer value whose floor was evicted; the next read
//   fills it under a lease.
// likes_lease (KEYS lease_key...; ARGV token ttl_ms), LK-FILL-LEASE: sets every lease_key to `token`
//   (PX ttl_ms), superseding any earlier lease. Taken before a fill or repair reads the DB. Returns
//   the number of keys.
// likes_fill (KEYS value_key version_key lease_key; ARGV value version ttl_ms token), LK-FILL-LEASE:
//   the put of likes_put only while lease_key still holds `token` (deleting the lease); else 0. A
//   write that committed after the lease was taken deleted it, so a fill or repair that read the
//   DB before that commit is refused even when Redis evicted the value and its version key; an
//   evicted or expired lease refuses too (memcache's leases). Returns 1 when written, else 0.
#pragma once

#include <memory>

#include "impl/ports/redis_script.h"

namespace fl::likes {

inline constexpr const char* kPutScript = "likes_put";
inline constexpr const char* kApplyScript = "likes_apply";
inline constexpr const char* kLeaseScript = "likes_lease";
inline constexpr const char* kFillScript = "likes_fill";

// Adds the likes scripts to `registry`.
void add_likes_scripts(ScriptRegistry& registry);
std::shared_ptr<const ScriptRegistry> likes_scripts();

}  // namespace fl::likes
