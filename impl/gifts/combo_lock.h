// The combo step's lock (003:L113-133): Redisson's RLock as Redisson behaves, or the hand-written
// Lua lock of 003:L143-154 (scenario option lock: lua).
//
// Contract
// - try_lock(key, owner) waits up to `wait_ms` (retrying every 20 ms) and returns whether `owner`
//   now holds `key`. RLock is re-entrant (a hash owner -> hold count). With an explicit lease
//   (tryLock(wait, lease), the seed's 003:L118) the lock lives `lease_ms` and is never renewed.
//   Without one (`watchdog`, tryLock(wait)) Redisson takes it for lockWatchdogTimeout (30 s) and
//   its watchdog renews it every third of that while this object's process lives and holds it.
// - unlock(key, owner) releases one hold and returns false when `owner` does not hold the lock:
//   RLock's IllegalMonitorStateException, which fails the message's handling (003:L131-132). The
//   Lua lock's compare-and-delete release never throws (returns true).
// - The watchdog is a task of the calling process: it dies with it, so a crashed holder's lock
//   expires lockWatchdogTimeout after the last renewal.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "impl/ports/redis.h"
#include "impl/ports/runtime.h"

namespace fl::gifts {

struct ComboLockOptions {
  int64_t wait_ms = 100;                 // 003:L118
  int64_t lease_ms = 3000;               // 003:L118
  bool lua = false;                      // 003:L147-152 instead of RLock
  bool watchdog = false;                 // RLock without a lease (Redisson's watchdog renews it)
  int64_t watchdog_timeout_ms = 30'000;  // Redisson Config.lockWatchdogTimeout default
};

class ComboLock {
 public:
  ComboLock(Runtime& rt, Redis& redis, ComboLockOptions options) : rt_(rt), redis_(redis), options_(options) {}
  Task<bool> try_lock(const std::string& key, const std::string& owner);
  Task<bool> unlock(const std::string& key, const std::string& owner);

 private:
  Task<void> renew(std::string key, std::string owner, std::shared_ptr<bool> held);
  void stop_renewal(const std::string& key);

  Runtime& rt_;
  Redis& redis_;
  ComboLockOptions options_;
  std::map<std::string, std::shared_ptr<bool>> renewals_;  // watchdog: lock key -> still held
};

}  // namespace fl::gifts
