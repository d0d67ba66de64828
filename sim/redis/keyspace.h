// Keyspace: the data of a simulated Redis database and its value types. Plain copyable values
// (a snapshot is a copy), ordered containers only, so that every iteration is deterministic.
#pragma once

#include <compare>
#include <deque>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace fl::sim::redis {

// A stream entry id <ms>-<seq>.
struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;
  auto operator<=>(const StreamId&) const = default;
  std::string str() const { return std::to_string(ms) + "-" + std::to_string(seq); }
  static constexpr StreamId max() { return {UINT64_MAX, UINT64_MAX}; }
};

struct PendingEntry {
  std::string consumer;
  int64_t delivery_time_ms = 0;
  uint64_t delivery_count = 0;
  bool operator==(const PendingEntry&) const = default;
};

struct Consumer {
  int64_t seen_time_ms = 0;
  std::set<StreamId> pending;
  bool operator==(const Consumer&) const = default;
};

struct ConsumerGroup {
  StreamId last_delivered;
  int64_t entries_read = -1;  // Redis 7.0 lag tracking; -1 = unknown
  std::map<StreamId, PendingEntry> pel;
  std::map<std::string, Consumer> consumers;
  bool operator==(const ConsumerGroup&) const = default;
};

// Redis stores a stream as a radix tree of listpack nodes of at most stream-node-max-entries
// (100) entries, deleted ones included; approximate trimming (MAXLEN ~) removes whole nodes
// only, so the node layout is observable and is modelled. (The 4096-byte node limit is not.)
inline constexpr uint64_t kStreamNodeMaxEntries = 100;

struct StreamNode {
  uint64_t slots = 0;  // entries ever appended to this node (live + deleted)
  uint64_t live = 0;   // entries not deleted
  bool operator==(const StreamNode&) const = default;
};

struct Stream {
  std::map<StreamId, std::vector<std::string>> entries;  // id -> field, value, field, value...
  std::map<StreamId, StreamNode> nodes;                  // by the node's first (master) id
  StreamId last_id;
  StreamId max_deleted_id;
  uint64_t entries_added = 0;
  std::map<std::string, ConsumerGroup> groups;
  bool operator==(const Stream&) const = default;
};

// A sorted set: member -> score, plus the (score, member) order ZRANGE walks.
struct ZSet {
  std::map<std::string, double> scores;
  std::set<std::pair<double, std::string>> order;
  void put(const std::string& member, double score);
  bool erase(const std::string& member);
  size_t size() const { return scores.size(); }
  bool operator==(const ZSet&) const = default;
};

using Hash = std::map<std::string, std::string>;
using Set = std::set<std::string>;
using List = std::deque<std::string>;  // head first
// New types go last: ValueType is the variant's index.
using Value = std::variant<std::string, Hash, Set, ZSet, Stream, List>;

enum class ValueType : uint8_t { kString, kHash, kSet, kZSet, kStream, kList };
const char* value_type_name(ValueType t);  // "string", "hash", "set", "zset", "stream", "list"

struct Entry {
  Value value;
  std::optional<int64_t> expire_at_ms;  // absolute, on the Redis node's clock
  // Object metadata Redis keeps in robj (OBJECT IDLETIME/FREQ, eviction): the last access on
  // the node's clock, the LFU logarithmic counter and the minute it was last decremented.
  int64_t access_ms = 0;
  uint8_t lfu_counter = 5;  // LFU_INIT_VAL
  int64_t lfu_minute = 0;
  // The collection left its compact encoding (listpack/intset -> hashtable/skiplist): Redis
  // never converts back, so this is sticky until the value is replaced.
  bool big_encoding = false;
  ValueType type() const { return static_cast<ValueType>(value.index()); }
};

// Keys and their expiry times. Lookups that honour TTLs take now_ms and delete an expired key
// on the way (Redis's lazy expiry).
class Keyspace {
 public:
  // The live entry of `key`, or null (deleting it first when it has expired at now_ms).
  Entry* find(const std::string& key, int64_t now_ms, uint64_t* expired_counter = nullptr);
  // Creates or replaces `key` with `value`, with the TTL `expire_at_ms` (none by default).
  Entry& put(const std::string& key, Value value, std::optional<int64_t> expire_at_ms = std::nullopt);
  bool erase(const std::string& key);
  void set_expire(const std::string& key, std::optional<int64_t> at_ms);
  void clear() {
    for (const auto& [key, e] : entries_) note_removed(key, e);
    entries_.clear();
    expires_.clear();
  }
  // The stream keys deleted, overwritten or flushed since the last call, in that order: Redis
  // signals each (dbGenericDelete, dbOverwrite, emptyDb) so that clients blocked in XREADGROUP on
  // it learn at once that it is gone.
  std::vector<std::string> take_removed_streams() { return std::exchange(removed_streams_, {}); }
  bool has_removed_streams() const { return !removed_streams_.empty(); }
  // While on, put() lists each key it adds (not one it replaces) until take_new_keys(): Redis's
  // dbAdd, which fires the 'new' keyspace event. Off by default and in every copy's use but the
  // engine's live databases (Engine::track_new_keys).
  void track_new_keys(bool on) {
    track_new_ = on;
    if (!on) new_keys_.clear();
  }
  bool has_new_keys() const { return !new_keys_.empty(); }
  std::vector<std::string> take_new_keys() { return std::exchange(new_keys_, {}); }

  size_t size() const { return entries_.size(); }
  const std::map<std::string, Entry>& entries() const { return entries_; }
  const std::map<std::string, int64_t>& expires() const { return expires_; }
  // Deletes every key whose TTL has passed at now_ms; returns how many.
  size_t purge_expired(int64_t now_ms);

 private:
  void note_removed(const std::string& key, const Entry& e) {
    if (std::holds_alternative<Stream>(e.value)) removed_streams_.push_back(key);
  }

  std::map<std::string, Entry> entries_;
  // Keys with a TTL -> expire_at_ms: a mirror of the entries whose expire_at_ms is set, exactly
  // (put, erase and set_expire keep it so, and rely on it to skip needless lookups).
  std::map<std::string, int64_t> expires_;
  std::vector<std::string> removed_streams_;
  bool track_new_ = false;
  std::vector<std::string> new_keys_;
};

}  // namespace fl::sim::redis
