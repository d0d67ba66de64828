// Memory accounting, maxmemory eviction (Redis 7.0's evict.c) and object encodings (object.c,
// t_hash.c, t_set.c, t_zset.c thresholds).
//
// Eviction follows performEvictions: before each command, while the estimated used memory is
// above maxmemory, pick a victim and delete it. The LRU, LFU and volatile-ttl policies keep
// Redis's 16-entry eviction pool, fed each round by maxmemory-samples keys per database taken
// as a contiguous run from a random start (dictGetSomeKeys); the random policies pick a random
// key from the next non-empty database in round robin. Randomness is the engine's seeded
// stream, so a simulated run evicts the same keys on every replay.
#include <algorithm>
#include <limits>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

// A fresh Redis 7.0 reports about this much used_memory before any key exists.
constexpr int64_t kBaseUsedMemory = 880'000;
constexpr size_t kPoolSize = 16;  // EVPOOL_SIZE

int64_t string_bytes(const std::string& s) { return static_cast<int64_t>(s.size()) + 8; }

struct ValueBytes {
  int64_t operator()(const std::string& s) const { return string_bytes(s); }
  int64_t operator()(const Hash& h) const {
    int64_t n = 0;
    for (const auto& [f, v] : h) n += string_bytes(f) + string_bytes(v) + 24;
    return n;
  }
  int64_t operator()(const Set& set) const {
    int64_t n = 0;
    for (const auto& m : set) n += string_bytes(m) + 24;
    return n;
  }
  int64_t operator()(const ZSet& z) const {
    int64_t n = 0;
    for (const auto& [m, score] : z.scores) n += string_bytes(m) + 40;
    return n;
  }
  int64_t operator()(const List& l) const {
    int64_t n = 32;
    for (const auto& v : l) n += string_bytes(v) + 8;
    return n;
  }
  int64_t operator()(const Stream& st) const {
    int64_t n = 64;
    for (const auto& [id, fields] : st.entries) {
      n += 16;
      for (const auto& f : fields) n += string_bytes(f);
    }
    for (const auto& [name, g] : st.groups) n += 64 + static_cast<int64_t>(g.pel.size()) * 48;
    return n;
  }
};

bool is_volatile_policy(const std::string& p) { return p.rfind("volatile-", 0) == 0; }

}  // namespace

int64_t entry_bytes(const std::string& key, const Entry& e) {
  // dictEntry + robj + the key's sds, an expires entry, and the value.
  return 48 + string_bytes(key) + (e.expire_at_ms ? 24 : 0) + std::visit(ValueBytes{}, e.value);
}

int64_t Engine::used_memory() const {
  int64_t n = kBaseUsedMemory;
  for (const Keyspace& ks : live_) {
    for (const auto& [key, e] : ks.entries()) n += entry_bytes(key, e);
  }
  return n;
}

void Engine::evict_one(int db, const std::string& key, int64_t now_ms) {
  live_[static_cast<size_t>(db)].erase(key);
  ++stats_.evicted;
  // An eviction is a DEL as far as the AOF and the judges' command log are concerned.
  journal_del(key, now_ms, db);
  notify(db, kNotifyEvicted, "evicted", key);
  if (eviction_observer_) eviction_observer_(db, key);
}

// One round of the pool policies (evictionPoolPopulate + the pick); false when no key exists.
bool Engine::evict_round(int64_t now_ms) {
  const std::string& policy = options_.maxmemory_policy;
  const bool volatile_only = is_volatile_policy(policy);
  const size_t samples = static_cast<size_t>(std::max(1, options_.maxmemory_samples));
  size_t total = 0;
  for (int db = 0; db < kDatabases; ++db) {
    Keyspace& ks = live_[static_cast<size_t>(db)];
    std::vector<std::string> keys;
    auto take = [&](const auto& dict) {
      total += dict.size();
      if (dict.empty()) return;
      auto it = dict.begin();
      if (dict.size() > samples) std::advance(it, static_cast<long>(next_random() % dict.size()));
      for (size_t i = 0; i < std::min(samples, dict.size()); ++i, ++it) {
        if (it == dict.end()) it = dict.begin();
        keys.push_back(it->first);
      }
    };
    if (volatile_only)
      take(ks.expires());
    else
      take(ks.entries());
    for (const std::string& key : keys) {
      const Entry& e = ks.entries().at(key);
      uint64_t idle = 0;
      if (policy.ends_with("lru")) {
        // Redis's LRU clock ticks once a second (LRU_CLOCK_RESOLUTION 1000 ms).
        idle = static_cast<uint64_t>(std::max<int64_t>(0, now_ms / 1000 - e.access_ms / 1000)) * 1000;
      } else if (policy.ends_with("lfu")) {
        idle = 255 - e.lfu_counter;
      } else {  // volatile-ttl: the sooner it expires, the better a candidate
        idle = std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(e.expire_at_ms.value_or(0));
      }
      size_t k = 0;
      while (k < evict_pool_.size() && evict_pool_[k].idle < idle) ++k;
      if (k == 0 && evict_pool_.size() == kPoolSize) continue;  // worse than everything pooled
      if (evict_pool_.size() == kPoolSize) {
        evict_pool_.erase(evict_pool_.begin());
        --k;
      }
      evict_pool_.insert(evict_pool_.begin() + static_cast<long>(k), PoolEntry{idle, db, key});
    }
  }
  if (total == 0) return false;
  while (!evict_pool_.empty()) {
    PoolEntry best = std::move(evict_pool_.back());
    evict_pool_.pop_back();
    const Keyspace& ks = live_[static_cast<size_t>(best.db)];
    const bool present = volatile_only ? ks.expires().count(best.key) > 0 : ks.entries().count(best.key) > 0;
    if (present) {
      evict_one(best.db, best.key, now_ms);
      return true;
    }
  }
  return true;  // every pooled key was gone (a ghost): sample again
}

bool Engine::perform_evictions(int64_t now_ms) {
  if (options_.maxmemory <= 0) return true;
  int64_t used = used_memory();
  if (used <= options_.maxmemory) return true;
  const std::string& policy = options_.maxmemory_policy;
  if (policy == "noeviction") return false;
  const bool volatile_only = is_volatile_policy(policy);
  for (int guard = 0; used > options_.maxmemory && guard < 1'000'000; ++guard) {
    if (policy.ends_with("random")) {
      bool found = false;
      for (int i = 0; i < kDatabases && !found; ++i) {
        const int db = next_random_db_ = (next_random_db_ + 1) % kDatabases;
        const Keyspace& ks = live_[static_cast<size_t>(db)];
        const size_t n = volatile_only ? ks.expires().size() : ks.size();
        if (n == 0) continue;
        const size_t pick = static_cast<size_t>(next_random() % n);
        const std::string key = volatile_only ? std::next(ks.expires().begin(), static_cast<long>(pick))->first
                                              : std::next(ks.entries().begin(), static_cast<long>(pick))->first;
        used -= entry_bytes(key, ks.entries().at(key));
        evict_one(db, key, now_ms);
        found = true;
      }
      if (!found) return false;
      continue;
    }
    const size_t before = stats_.evicted;
    if (!evict_round(now_ms)) return false;
    if (stats_.evicted != before) used = used_memory();
  }
  return used <= options_.maxmemory;
}

// ---- Encodings.

namespace {

bool is_int_string(const std::string& s) { return s.size() <= 20 && parse_int64(s).has_value(); }

bool hash_fits(const Hash& h, const EngineOptions& o) {
  if (static_cast<int64_t>(h.size()) > o.hash_max_listpack_entries) return false;
  for (const auto& [f, v] : h) {
    if (static_cast<int64_t>(f.size()) > o.hash_max_listpack_value ||
        static_cast<int64_t>(v.size()) > o.hash_max_listpack_value) {
      return false;
    }
  }
  return true;
}

bool set_fits(const Set& s, const EngineOptions& o) {
  if (static_cast<int64_t>(s.size()) > o.set_max_intset_entries) return false;
  return std::all_of(s.begin(), s.end(), [](const std::string& m) { return is_int_string(m); });
}

bool zset_fits(const ZSet& z, const EngineOptions& o) {
  if (static_cast<int64_t>(z.size()) > o.zset_max_listpack_entries) return false;
  for (const auto& [m, score] : z.scores) {
    if (static_cast<int64_t>(m.size()) > o.zset_max_listpack_value) return false;
  }
  return true;
}

}  // namespace

void update_encoding(Entry& e, const EngineOptions& o) {
  if (e.big_encoding) return;  // Redis never converts back to the compact encoding
  if (const Hash* h = std::get_if<Hash>(&e.value))
    e.big_encoding = !hash_fits(*h, o);
  else if (const Set* s = std::get_if<Set>(&e.value))
    e.big_encoding = !set_fits(*s, o);
  else if (const ZSet* z = std::get_if<ZSet>(&e.value))
    e.big_encoding = !zset_fits(*z, o);
}

std::string encoding_of(const Entry& e, const EngineOptions& o) {
  switch (e.type()) {
    case ValueType::kString: {
      // tryObjectEncoding: integers that fit a long are "int"; up to 44 bytes "embstr".
      const std::string& s = std::get<std::string>(e.value);
      if (e.big_encoding) return "raw";  // written in place (SETRANGE): an unshared raw sds
      if (is_int_string(s)) return "int";
      return s.size() <= 44 ? "embstr" : "raw";
    }
    case ValueType::kHash:
      return e.big_encoding || !hash_fits(std::get<Hash>(e.value), o) ? "hashtable" : "listpack";
    case ValueType::kSet:
      return e.big_encoding || !set_fits(std::get<Set>(e.value), o) ? "hashtable" : "intset";
    case ValueType::kZSet:
      return e.big_encoding || !zset_fits(std::get<ZSet>(e.value), o) ? "skiplist" : "listpack";
    case ValueType::kStream:
      return "stream";
    case ValueType::kList:
      return "quicklist";  // Redis 7.0 keeps every list as a quicklist (listpack lists came in 7.2)
  }
  return "unknown";
}

// ---- Glob matching (util.c stringmatchlen).

namespace {

// `skip_longer`: the rest of the pattern after some '*' matched no suffix of the string, so no
// earlier '*' can match by taking more characters (stringmatchlen_impl's skipLongerMatches); and
// past 1,000 nested stars the answer is no match. Both keep an abusive pattern such as
// KEYS "*?*?...*?" linear, as in Redis 7.0.
bool glob_impl(std::string_view p, std::string_view s, bool nocase, bool* skip_longer, int nesting) {
  if (nesting > 1000) return false;
  auto fold = [nocase](char ch) {
    return nocase ? static_cast<char>(std::tolower(static_cast<unsigned char>(ch))) : ch;
  };
  size_t pi = 0, si = 0;
  while (pi < p.size()) {
    switch (p[pi]) {
      case '*': {
        while (pi + 1 < p.size() && p[pi + 1] == '*') ++pi;
        if (pi + 1 == p.size()) return true;
        for (size_t k = si; k <= s.size(); ++k) {
          if (glob_impl(p.substr(pi + 1), s.substr(k), nocase, skip_longer, nesting + 1)) return true;
          if (*skip_longer) return false;
        }
        *skip_longer = true;
        return false;
      }
      case '?':
        if (si >= s.size()) return false;
        ++si;
        break;
      case '[': {
        if (si >= s.size()) return false;
        ++pi;
        const bool negate = pi < p.size() && p[pi] == '^';
        if (negate) ++pi;
        bool match = false;
        while (pi < p.size() && p[pi] != ']') {
          if (p[pi] == '\\' && pi + 1 < p.size()) {
            ++pi;
            if (fold(p[pi]) == fold(s[si])) match = true;
          } else if (pi + 2 < p.size() && p[pi + 1] == '-') {
            char lo = fold(p[pi]), hi = fold(p[pi + 2]);
            if (lo > hi) std::swap(lo, hi);
            const char c = fold(s[si]);
            if (c >= lo && c <= hi) match = true;
            pi += 2;
          } else if (fold(p[pi]) == fold(s[si])) {
            match = true;
          }
          ++pi;
        }
        if (negate) match = !match;
        if (!match) return false;
        ++si;
        break;
      }
      case '\\':
        if (pi + 1 < p.size()) ++pi;
        [[fallthrough]];
      default:
        if (si >= s.size() || fold(p[pi]) != fold(s[si])) return false;
        ++si;
        break;
    }
    ++pi;
  }
  return si == s.size();
}

}  // namespace

bool glob_match(std::string_view p, std::string_view s, bool nocase) {
  bool skip_longer = false;
  return glob_impl(p, s, nocase, &skip_longer, 0);
}

}  // namespace fl::sim::redis
