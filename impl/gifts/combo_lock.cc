#include "impl/gifts/combo_lock.h"

#include <algorithm>

#include "impl/gifts/scripts.h"

namespace fl::gifts {
namespace {

bool failed(const RedisReply& r) { return r.is_transport_error() || r.is_error(); }
bool is_integer(const RedisReply& r, int64_t v) { return r.kind == RedisReply::Kind::kInteger && r.integer == v; }

}  // namespace

Task<bool> ComboLock::try_lock(const std::string& key, const std::string& owner) {
  const int64_t deadline_us = rt_.clock().now_us() + options_.wait_ms * 1000;
  const int64_t lease_ms = options_.watchdog ? options_.watchdog_timeout_ms : options_.lease_ms;
  for (;;) {
    bool taken = false;
    RedisReply r;
    if (options_.lua) {
      // 003:L147-152: 1 = taken (SET ... PX lease), 0 = held by someone.
      r = co_await redis_.script(kSeedLockScript, {key}, {owner, std::to_string(options_.lease_ms)});
      taken = is_integer(r, 1);
    } else {
      // Redisson's tryLockInnerAsync: nil = taken (or re-entered), else the holder's PTTL.
      r = co_await redis_.script(kLockScript, {key}, {std::to_string(lease_ms), owner});
      taken = r.kind == RedisReply::Kind::kNil;
    }
    if (taken) {
      if (options_.watchdog && !options_.lua && renewals_.count(key) == 0) {
        auto held = std::make_shared<bool>(true);
        renewals_[key] = held;
        rt_.spawn("redisson-watchdog", renew(key, owner, held));
      }
      co_return true;
    }
    if (failed(r) || rt_.clock().now_us() >= deadline_us) co_return false;
    co_await rt_.clock().sleep_us(std::min<int64_t>(20'000, deadline_us - rt_.clock().now_us()));
  }
}

Task<bool> ComboLock::unlock(const std::string& key, const std::string& owner) {
  if (options_.lua) {
    co_await redis_.script(kSeedUnlockScript, {key}, {owner});  // a 0 (not the owner) throws nothing
    co_return true;
  }
  RedisReply r = co_await redis_.script(kUnlockScript, {key}, {owner});
  // Redisson cancels the renewal on every unlock but a re-entrant one (0: still held).
  if (!is_integer(r, 0)) stop_renewal(key);
  co_return r.kind == RedisReply::Kind::kInteger;  // nil: IllegalMonitorStateException
}

// Redisson's watchdog (RedissonBaseLock.renewExpiration): every lockWatchdogTimeout / 3 it
// re-sets the lease while `owner` holds the lock; it stops at unlock, or when a renewal finds
// the lock gone (0) or fails.
Task<void> ComboLock::renew(std::string key, std::string owner, std::shared_ptr<bool> held) {
  for (;;) {
    co_await rt_.clock().sleep_ms(options_.watchdog_timeout_ms / 3);
    if (!*held) co_return;
    RedisReply r = co_await redis_.script(kRenewScript, {key}, {std::to_string(options_.watchdog_timeout_ms), owner});
    if (!*held) co_return;
    if (!is_integer(r, 1)) {
      stop_renewal(key);
      co_return;
    }
  }
}

void ComboLock::stop_renewal(const std::string& key) {
  auto it = renewals_.find(key);
  if (it == renewals_.end()) return;
  *it->second = false;
  renewals_.erase(it);
}

}  // namespace fl::gifts
