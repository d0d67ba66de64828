#include "sim/redis/keyspace.h"

#include <cassert>

namespace fl::sim::redis {

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kString: return "string";
    case ValueType::kHash: return "hash";
    case ValueType::kSet: return "set";
    case ValueType::kZSet: return "zset";
    case ValueType::kStream: return "stream";
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
  assert(order.size() == scores.size());
}

bool ZSet::erase(const std::string& member) {
  auto it = scores.find(member);
  if (it == scores.end()) return false;
  order.erase({it->second, member});
  scores.erase(it);
  assert(order.size() == scores.size());
  return true;
}

Keyspace::Keyspace(const Keyspace& other) : entries_(other.entries_), expires_(other.expires_) { rebuild_index(); }

Keyspace& Keyspace::operator=(const Keyspace& other) {
  if (this == &other) return *this;
  entries_ = other.entries_;
  expires_ = other.expires_;
  rebuild_index();
  return *this;
}

Keyspace::Keyspace(Keyspace&& other) noexcept
    : entries_(std::move(other.entries_)), index_(std::move(other.index_)), expires_(std::move(other.expires_)) {
  other.clear();  // no index entry may outlive the nodes it names
}

Keyspace& Keyspace::operator=(Keyspace&& other) noexcept {
  if (this == &other) return *this;
  entries_ = std::move(other.entries_);
  index_ = std::move(other.index_);
  expires_ = std::move(other.expires_);
  other.clear();
  return *this;
}

void Keyspace::rebuild_index() {
  index_.clear();
  index_.reserve(entries_.size());
  for (auto it = entries_.begin(); it != entries_.end(); ++it) index_.emplace(it->first, it);
}

Entry* Keyspace::find(const std::string& key, int64_t now_ms, uint64_t* expired_counter) {
  auto at = index_.find(key);
  if (at == index_.end()) return nullptr;
  const Entries::iterator it = at->second;
  if (it->second.expire_at_ms && *it->second.expire_at_ms <= now_ms) {
    // Lazy expiry: a key is gone the moment it is looked at after its deadline.
    expires_.erase(key);
    index_.erase(at);
    entries_.erase(it);
    if (expired_counter) ++*expired_counter;
    return nullptr;
  }
  return &it->second;
}

Entry& Keyspace::put(const std::string& key, Value value, std::optional<int64_t> expire_at_ms) {
  auto at = index_.find(key);
  const bool fresh = at == index_.end();
  if (fresh) {
    const Entries::iterator it = entries_.try_emplace(key).first;
    at = index_.emplace(it->first, it).first;
  }
  Entry& e = at->second->second;
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
  auto at = index_.find(key);
  if (at == index_.end()) return false;
  const Entries::iterator it = at->second;
  if (it->second.expire_at_ms) expires_.erase(key);
  index_.erase(at);  // before the node its view points into
  entries_.erase(it);
  assert(index_.size() == entries_.size());
  return true;
}

void Keyspace::set_expire(const std::string& key, std::optional<int64_t> at_ms) {
  auto at = index_.find(key);
  assert(at != index_.end());
  at->second->second.expire_at_ms = at_ms;
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
