#include "sim/redis/keyspace.h"
#include "impl/ports/assert.h"

namespace fl::sim::redis {

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kString:
      return "string";
    case ValueType::kHash:
      return "hash";
    case ValueType::kSet:
      return "set";
    case ValueType::kZSet:
      return "zset";
    case ValueType::kStream:
      return "stream";
    case ValueType::kList:
      return "list";
  }
  return "none";
}

void ZSet::put(const std::string& member, double score) {
  auto [it, inserted] = scores.try_emplace(member, score);
  if (!inserted) {
    order.erase({it->second, member});
    it->second = score;
  }
  order.emplace(score, member);
  FL_ASSERT(order.size() == scores.size());
}

bool ZSet::erase(const std::string& member) {
  auto it = scores.find(member);
  if (it == scores.end()) return false;
  order.erase({it->second, member});
  scores.erase(it);
  FL_ASSERT(order.size() == scores.size());
  return true;
}

Entry* Keyspace::find(const std::string& key, int64_t now_ms, uint64_t* expired_counter) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  if (it->second.expire_at_ms && *it->second.expire_at_ms <= now_ms) {
    // Lazy expiry: a key is gone the moment it is looked at after its deadline.
    note_removed(key, it->second);
    expires_.erase(key);
    entries_.erase(it);
    if (expired_counter) ++*expired_counter;
    return nullptr;
  }
  return &it->second;
}

Entry& Keyspace::put(const std::string& key, Value value, std::optional<int64_t> expire_at_ms) {
  auto [it, fresh] = entries_.try_emplace(key);
  Entry& e = it->second;
  if (!fresh) note_removed(key, e);  // dbOverwrite
  if (fresh && track_new_) new_keys_.push_back(key);
  // expires_ mirrors the entries that have a TTL, so only a key that had one is listed there:
  // the usual write (a new key, or one without a TTL) costs a single lookup in each map at most.
  if (expire_at_ms) {
    expires_.insert_or_assign(key, *expire_at_ms);
  } else if (!fresh && e.expire_at_ms) {
    expires_.erase(key);
  }
  e.value = std::move(value);
  e.expire_at_ms = expire_at_ms;
  e.big_encoding = false;
  e.lfu_counter = 5;  // a new object (LFU_INIT_VAL); its clocks start at the write
  e.lfu_minute = 0;
  e.access_ms = 0;
  return e;
}

bool Keyspace::erase(const std::string& key) {
  // One lookup, and a second only for a key with a TTL (expires_ lists exactly those).
  auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  note_removed(key, it->second);
  if (it->second.expire_at_ms) expires_.erase(key);
  entries_.erase(it);
  return true;
}

void Keyspace::set_expire(const std::string& key, std::optional<int64_t> at_ms) {
  auto it = entries_.find(key);
  FL_ASSERT(it != entries_.end());
  it->second.expire_at_ms = at_ms;
  if (at_ms) {
    expires_[key] = *at_ms;
  } else {
    expires_.erase(key);
  }
}

size_t Keyspace::purge_expired(int64_t now_ms) {
  std::vector<std::string> dead;
  for (const auto& [key, at_ms] : expires_) {
    if (at_ms <= now_ms) dead.push_back(key);
  }
  for (const auto& key : dead) erase(key);
  return dead.size();
}

}  // namespace fl::sim::redis
