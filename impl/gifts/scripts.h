// Redis scripts of the gifts push service (Lua, impl/ports/redis_script.h).
//
// spec (003:L114-118, L145: Redisson's RLock is Lua underneath):
//   redisson_lock   KEYS lock; ARGV lease_ms owner. Redisson's tryLockInnerAsync: takes or re-enters
//                   the lock (hash owner -> hold count, PEXPIRE lease; HGET stands for HEXISTS) and returns nil, or returns
//                   the holder's PTTL.
//   redisson_unlock KEYS lock; ARGV owner. nil when `owner` does not hold it (the client throws
//                   IllegalMonitorStateException), else 0 (still re-entered) or 1 (released).
//   redisson_renew  KEYS lock; ARGV lease_ms owner. The watchdog's renewExpirationAsync: PEXPIRE lease
//                   and 1 while `owner` holds the lock, else 0 (the watchdog stops).
// spec with the scenario option lock: lua (003:L143-154, the hand-written script):
//   gift_lua_lock    KEYS lock; ARGV owner lease_ms. 003:L147-152 verbatim: 1 when it SET the key
//                    (value owner, PX lease), 0 when the key exists. No renewal.
//   gift_lua_unlock  KEYS lock; ARGV owner. Compare-and-delete (the owner check of 003:L154):
//                    1 when it deleted the owner's key, 0 otherwise.
// hardened (GF-COMBO-ATOMIC):
//   gift_batch_add   KEYS window member open ready due; ARGV msgId count now_ms window_ms threshold
//                    room sender gift [close_stale]. 0 when msgId was already counted (redelivery),
//                    else adds it to the window (opened with a deadline in `open`), and moves the
//                    window to the ready set when its total reaches the threshold (returns 2; else
//                    1). close_stale = 1 (GF-WINDOW-DEADLINE): a window whose deadline (its ts +
//                    window_ms) is not after now_ms is moved to the ready set first, so the gift
//                    opens a new window instead of joining it.
//   gift_batch_close KEYS open ready due; ARGV now_ms. Moves every window whose deadline passed to
//                    the ready set; returns how many.
//   gift_ready_claim KEYS ready due; ARGV now_ms lease_ms max. Claims up to `max` ready batches due
//                    by now (pushing their due time lease_ms ahead, so a pusher that dies leaves them
//                    to another) and returns their payloads (GiftMsg::encode).
#pragma once

#include <memory>

#include "impl/ports/redis_script.h"

namespace fl::gifts {

inline constexpr const char* kLockScript = "redisson_lock";
inline constexpr const char* kUnlockScript = "redisson_unlock";
inline constexpr const char* kRenewScript = "redisson_renew";
inline constexpr const char* kSeedLockScript = "gift_lua_lock";
inline constexpr const char* kSeedUnlockScript = "gift_lua_unlock";
inline constexpr const char* kBatchAddScript = "gift_batch_add";
inline constexpr const char* kBatchCloseScript = "gift_batch_close";
inline constexpr const char* kReadyClaimScript = "gift_ready_claim";

std::shared_ptr<const ScriptRegistry> gifts_scripts();

}  // namespace fl::gifts
