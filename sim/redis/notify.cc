// Keyspace notifications, as Redis 7.0's notify.c sends them: with notify-keyspace-events set, an
// event of an enabled class on a key publishes `__keyspace@<db>__:<key>` <event> (K) and
// `__keyevent@<db>__:<event>` <key> (E) to the channel and pattern subscribers, as PUBLISH would.
// The events emitted are listed in docs/redis.md.
#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

struct FlagChar {
  char ch;
  uint32_t flag;
};

// keyspaceEventsStringToFlags's characters, in keyspaceEventsFlagsToString's order.
constexpr FlagChar kClassChars[] = {{'g', kNotifyGeneric}, {'$', kNotifyString},  {'l', kNotifyList},
                                    {'s', kNotifySet},     {'h', kNotifyHash},    {'z', kNotifyZset},
                                    {'x', kNotifyExpired}, {'e', kNotifyEvicted}, {'t', kNotifyStream},
                                    {'d', kNotifyModule},  {'n', kNotifyNew}};

}  // namespace

std::optional<uint32_t> notify_flags_from_string(std::string_view s) {
  uint32_t flags = 0;
  for (char ch : s) {
    if (ch == 'A') {
      flags |= kNotifyAll;
    } else if (ch == 'K') {
      flags |= kNotifyKeyspace;
    } else if (ch == 'E') {
      flags |= kNotifyKeyevent;
    } else if (ch == 'm') {
      flags |= kNotifyKeyMiss;
    } else {
      bool known = false;
      for (const FlagChar& f : kClassChars) {
        if (f.ch == ch) {
          flags |= f.flag;
          known = true;
        }
      }
      if (!known) return std::nullopt;
    }
  }
  return flags;
}

std::string notify_flags_to_string(uint32_t flags) {
  std::string out;
  if ((flags & kNotifyAll) == kNotifyAll) {
    out += 'A';
  } else {
    for (const FlagChar& f : kClassChars) {
      if (flags & f.flag) out += f.ch;
    }
  }
  if (flags & kNotifyKeyspace) out += 'K';
  if (flags & kNotifyKeyevent) out += 'E';
  if (flags & kNotifyKeyMiss) out += 'm';
  return out;
}

void Engine::notify(int db, uint32_t event_class, std::string_view event, const std::string& key) {
  const uint32_t flags = options_.notify_keyspace_events;
  if (!(flags & event_class)) return;
  const std::string prefix = "@" + std::to_string(db) + "__:";
  if (flags & kNotifyKeyspace) publish_message("__keyspace" + prefix + key, std::string(event));
  if (flags & kNotifyKeyevent) publish_message("__keyevent" + prefix + std::string(event), key);
}

void Engine::announce_new_keys() {
  if (!(options_.notify_keyspace_events & kNotifyNew)) return;
  for (size_t db = 0; db < live_.size(); ++db) {
    if (!live_[db].has_new_keys()) continue;
    for (const std::string& key : live_[db].take_new_keys()) notify(static_cast<int>(db), kNotifyNew, "new", key);
  }
}

void Engine::track_new_keys() {
  const bool on = (options_.notify_keyspace_events & kNotifyNew) != 0;
  for (Keyspace& ks : live_) ks.track_new_keys(on);
  for (Keyspace& ks : durable_) ks.track_new_keys(false);
}

void Ctx::notify(uint32_t event_class, std::string_view event, const std::string& key) {
  notify_in(session.db, event_class, event, key);
}

void Ctx::notify_in(int db, uint32_t event_class, std::string_view event, const std::string& key) {
  if (!live()) return;
  engine.announce_new_keys();
  engine.notify(db, event_class, event, key);
}

bool Ctx::drop_if_empty(const std::string& key, bool empty) {
  if (!empty) return false;
  ks.erase(key);
  notify(kNotifyGeneric, "del", key);
  return true;
}

}  // namespace fl::sim::redis
