// The surface clients and tools use besides data commands: databases (SELECT MOVE SWAPDB
// FLUSHDB), HELLO, CLIENT, INFO, CONFIG, COMMAND, FUNCTION/FCALL, DEBUG, OBJECT, MEMORY USAGE, RENAME(NX),
// RANDOMKEY, the SCAN family and EXPIRETIME. Texts are Redis 7.0.15's, checked against a real
// server by the differential suite (harness/redis_diff) where the reply is deterministic.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "sim/redis/commands.h"
#include "sim/redis/eviction_policies.h"

namespace fl::sim::redis {

namespace {

constexpr const char* kVersion = "7.0.15";

RedisReply err_db_range() { return RedisReply::error("ERR DB index is out of range"); }

// getIntFromObjectOrReply with Redis's int range (the caller's own message for both failures).
std::optional<int> parse_int(const std::string& s) {
  auto v = parse_int64(s);
  if (!v || *v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(*v);
}

// getIntFromObjectOrReply without a message: a non-integer and an integer beyond int's range
// are told apart (getRangeLongFromObjectOrReply's "value must between").
bool parse_int_or_reply(const std::string& s, int* out, RedisReply* error) {
  auto v = parse_int64(s);
  if (!v) return *error = err_not_integer(), false;
  if (*v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max()) {
    *error = RedisReply::error("ERR value is out of range, value must between -2147483648 and 2147483647");
    return false;
  }
  *out = static_cast<int>(*v);
  return true;
}

std::string upper_name(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

RedisReply unknown_subcommand(const Ctx& c) {
  return RedisReply::error("ERR unknown subcommand '" + c.arg(1).substr(0, 128) + "'. Try " + upper_name(c.arg(0)) +
                           " HELP.");
}

bool valid_client_name(const std::string& name) {
  return std::all_of(name.begin(), name.end(), [](char ch) { return ch >= '!' && ch <= '~'; });
}

RedisReply err_client_name() {
  return RedisReply::error("ERR Client names cannot contain spaces, newlines or special characters.");
}

// Moves the live entry `key` of `from` to `to` as `new_key`, with its TTL and object metadata
// (MOVE, RENAME keep the object: encoding, LRU/LFU data).
void move_entry(Keyspace& from, const std::string& key, Entry& e, Keyspace& to, const std::string& new_key) {
  Entry moved = std::move(e);
  from.erase(key);
  Entry& placed = to.put(new_key, std::move(moved.value));
  placed.big_encoding = moved.big_encoding;
  placed.access_ms = moved.access_ms;
  placed.lfu_counter = moved.lfu_counter;
  placed.lfu_minute = moved.lfu_minute;
  if (moved.expire_at_ms) to.set_expire(new_key, moved.expire_at_ms);
}

}  // namespace

// ---- Databases.

void signal_if_blockable(Ctx& c, int db, const std::string& key) {
  const auto& entries = c.dbs()[static_cast<size_t>(db)].entries();
  const auto it = entries.find(key);
  if (it == entries.end()) return;
  const ValueType t = it->second.type();
  if (t == ValueType::kList || t == ValueType::kZSet || t == ValueType::kStream) c.signal_in(db, key);
}

RedisReply cmd_select(Ctx& c) {
  int db = 0;
  RedisReply error;
  if (!parse_int_or_reply(c.arg(1), &db, &error)) return error;
  if (db < 0 || db >= kDatabases) return err_db_range();
  c.session.db = db;
  return RedisReply::ok();
}

RedisReply cmd_move(Ctx& c) {
  int db = 0;
  RedisReply error;
  if (!parse_int_or_reply(c.arg(2), &db, &error)) return error;
  if (db < 0 || db >= kDatabases) return err_db_range();
  if (db == c.session.db) return RedisReply::error("ERR source and destination objects are the same");
  Entry* e = c.find(c.arg(1));
  if (!e) return RedisReply::integer_of(0);
  Keyspace& dst = c.dbs()[static_cast<size_t>(db)];
  if (dst.find(c.arg(1), c.now_ms)) return RedisReply::integer_of(0);
  move_entry(c.ks, c.arg(1), *e, dst, c.arg(1));
  c.notify(kNotifyGeneric, "move_from", c.arg(1));  // moveCommand
  c.notify_in(db, kNotifyGeneric, "move_to", c.arg(1));
  signal_if_blockable(c, db, c.arg(1));
  return RedisReply::integer_of(1);
}

RedisReply cmd_swapdb(Ctx& c) {
  auto a = parse_int(c.arg(1));
  if (!a) return RedisReply::error("ERR invalid first DB index");
  auto b = parse_int(c.arg(2));
  if (!b) return RedisReply::error("ERR invalid second DB index");
  if (*a < 0 || *a >= kDatabases || *b < 0 || *b >= kDatabases) return err_db_range();
  std::swap(c.dbs()[static_cast<size_t>(*a)], c.dbs()[static_cast<size_t>(*b)]);
  // scanDatabaseForReadyKeys on both: a client blocked on a list, sorted set or stream of either
  // database is re-run against the value now there (Redis 7.0 dbSwapDatabases).
  for (int db : {*a, *b}) {
    for (const auto& [key, entry] : c.dbs()[static_cast<size_t>(db)].entries()) signal_if_blockable(c, db, key);
  }
  return RedisReply::ok();
}

RedisReply cmd_flushdb(Ctx& c) {
  if (c.argc() > 2) return err_syntax();
  if (c.argc() == 2 && !iequals(c.arg(1), "sync") && !iequals(c.arg(1), "async")) return err_syntax();
  c.ks.clear();
  return RedisReply::ok();
}

// ---- HELLO and CLIENT.

RedisReply cmd_hello(Ctx& c) {
  size_t j = 1;
  int protocol = c.session.protocol;  // HELLO without a version keeps the connection's protocol
  if (c.argc() >= 2) {
    auto ver = parse_int64(c.arg(1));
    if (!ver) return RedisReply::error("ERR Protocol version is not an integer or out of range");
    if (*ver != 2 && *ver != 3) return RedisReply::error("NOPROTO unsupported protocol version");
    protocol = static_cast<int>(*ver);
    j = 2;
  }
  std::string name;
  bool set_name = false;
  for (; j < c.argc(); ++j) {
    const bool more = j + 1 < c.argc();
    if (iequals(c.arg(j), "auth") && j + 2 < c.argc()) {
      const auto user = c.acl_users().find(c.arg(j + 1));  // ACL SETUSER's users (acl.h)
      if (user == c.acl_users().end() || !user->second.on ||
          (!user->second.nopass && !user->second.passwords.count(c.arg(j + 2)))) {
        return RedisReply::error("WRONGPASS invalid username-password pair or user is disabled.");
      }
      c.session.user = c.arg(j + 1);
      j += 2;
    } else if (iequals(c.arg(j), "setname") && more) {
      name = c.arg(++j);
      if (!valid_client_name(name)) return err_client_name();
      set_name = true;
    } else {
      return RedisReply::error("ERR Syntax error in HELLO option '" + c.arg(j) + "'");
    }
  }
  if (set_name) c.session.name = name;
  c.session.protocol = protocol;
  auto kv = [](const char* k, RedisReply v) { return std::vector<RedisReply>{RedisReply::bulk(k), std::move(v)}; };
  std::vector<RedisReply> out;
  for (auto pair : {kv("server", RedisReply::bulk("redis")), kv("version", RedisReply::bulk(kVersion)),
                    kv("proto", RedisReply::integer_of(protocol)),
                    kv("id", RedisReply::integer_of(static_cast<int64_t>(c.session.id))),
                    kv("mode", RedisReply::bulk("standalone")), kv("role", RedisReply::bulk("master")),
                    kv("modules", RedisReply::array({}))}) {
    for (auto& r : pair) out.push_back(std::move(r));
  }
  return RedisReply::array(std::move(out)).as_resp3(RedisReply::Resp3::kMap);
}

namespace {

std::string client_line(uint64_t id, const ClientInfo& info, const Session* self, int64_t now_ms,
                        const std::string& cmd) {
  const int64_t age = std::max<int64_t>(0, (now_ms - info.created_ms) / 1000);
  const int64_t idle = std::max<int64_t>(0, (now_ms - info.last_ms) / 1000);
  const std::string name = self ? self->name : info.name;
  const int db = self ? self->db : info.db;
  const size_t sub = self ? self->channels.size() : 0;
  const int multi = self && self->in_multi ? static_cast<int>(self->queued.size()) : -1;
  return "id=" + std::to_string(id) + " addr=sim:" + std::to_string(id) + " laddr=sim:0 fd=-1 name=" + name +
         " age=" + std::to_string(age) + " idle=" + std::to_string(self ? 0 : idle) +
         " flags=N db=" + std::to_string(db) + " sub=" + std::to_string(sub) +
         " psub=0 ssub=0 multi=" + std::to_string(multi) +
         " qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=" +
         (self ? cmd : info.last_command) +
         " user=default redir=-1 resp=" + std::to_string(self ? self->protocol : info.protocol) + "\n";
}

}  // namespace

RedisReply cmd_client(Ctx& c) {
  const std::string sub = lower(c.arg(1));
  if (sub == "setname") {
    if (!valid_client_name(c.arg(2))) return err_client_name();
    c.session.name = c.arg(2);
    return RedisReply::ok();
  }
  if (sub == "getname") return c.session.name.empty() ? RedisReply::nil() : RedisReply::bulk(c.session.name);
  if (sub == "id") return RedisReply::integer_of(static_cast<int64_t>(c.session.id));
  const auto& clients = c.clients();
  const ClientInfo none{};
  auto self_info = clients.find(c.session.id);
  const ClientInfo& mine = self_info == clients.end() ? none : self_info->second;
  if (sub == "info") return RedisReply::bulk(client_line(c.session.id, mine, &c.session, c.now_ms, "client|info"));
  // CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...]
  std::set<uint64_t> ids;
  for (size_t j = 2; j < c.argc(); ++j) {
    if (iequals(c.arg(j), "type") && j + 1 < c.argc()) {
      const std::string t = lower(c.arg(++j));
      if (t != "normal" && t != "master" && t != "replica" && t != "slave" && t != "pubsub") {
        return RedisReply::error("ERR Unknown client type '" + c.arg(j) + "'");
      }
    } else if (iequals(c.arg(j), "id") && j + 1 < c.argc()) {
      for (++j; j < c.argc(); ++j) {
        auto id = parse_int64(c.arg(j));
        if (!id || *id <= 0) return RedisReply::error("ERR Invalid client ID");
        ids.insert(static_cast<uint64_t>(*id));
      }
    } else {
      return err_syntax();
    }
  }
  std::string out;
  for (const auto& [id, info] : clients) {
    if (!ids.empty() && !ids.count(id)) continue;
    const bool self = id == c.session.id;
    out += client_line(id, info, self ? &c.session : nullptr, c.now_ms, "client|list");
  }
  return RedisReply::bulk(out);
}

// ---- INFO.

namespace {

std::string human_bytes(int64_t n) {
  char buf[64];
  const double d = static_cast<double>(n);
  if (n < 1024)
    std::snprintf(buf, sizeof buf, "%lldB", static_cast<long long>(n));
  else if (n < 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.2fK", d / 1024);
  else if (n < 1024LL * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.2fM", d / (1024 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.2fG", d / (1024.0 * 1024 * 1024));
  return buf;
}

struct InfoLines {
  std::string text;
  void add(const std::string& k, const std::string& v) { text += k + ":" + v + "\r\n"; }
  void add(const std::string& k, int64_t v) { add(k, std::to_string(v)); }
};

std::string info_section(Ctx& c, const std::string& name) {
  InfoLines l;
  const EngineStats& st = c.stats();
  const EngineOptions& o = c.options();
  const int64_t uptime_s = c.start_ms() < 0 ? 0 : std::max<int64_t>(0, (c.now_ms - c.start_ms()) / 1000);
  if (name == "server") {
    l.text = "# Server\r\n";
    l.add("redis_version", kVersion);
    l.add("redis_mode", "standalone");
    l.add("os", "faultline simulated Redis");
    l.add("arch_bits", 64);
    l.add("process_id", 1);
    l.add("uptime_in_seconds", uptime_s);
    l.add("uptime_in_days", uptime_s / 86400);
    l.add("hz", 10);
    l.add("executable", "faultline");
  } else if (name == "clients") {
    l.text = "# Clients\r\n";
    l.add("connected_clients", static_cast<int64_t>(c.clients().size()));
    l.add("blocked_clients", static_cast<int64_t>(c.engine.blocked_clients()));
  } else if (name == "memory") {
    const int64_t used = c.engine.used_memory();
    l.text = "# Memory\r\n";
    l.add("used_memory", used);
    l.add("used_memory_human", human_bytes(used));
    l.add("maxmemory", o.maxmemory);
    l.add("maxmemory_human", human_bytes(o.maxmemory));
    l.add("maxmemory_policy", o.maxmemory_policy);
    l.add("number_of_cached_scripts", static_cast<int64_t>(c.loaded_scripts().size()));
  } else if (name == "persistence") {
    l.text = "# Persistence\r\n";
    l.add("loading", c.refusal() == Refusal::kLoading ? 1 : 0);
    l.add("rdb_bgsave_in_progress", 0);
    l.add("rdb_saves", static_cast<int64_t>(st.snapshots));
    l.add("aof_enabled", o.persistence == PersistenceMode::kAofEverysec ? 1 : 0);
    l.add("aof_rewrite_in_progress", 0);
    l.add("faultline_persistence", persistence_mode_name(o.persistence));
    l.add("faultline_fsyncs", static_cast<int64_t>(st.fsyncs));
  } else if (name == "stats") {
    l.text = "# Stats\r\n";
    l.add("total_commands_processed", static_cast<int64_t>(st.commands));
    l.add("expired_keys", static_cast<int64_t>(st.expired_lazy + st.expired_active));
    l.add("evicted_keys", static_cast<int64_t>(st.evicted));
    l.add("keyspace_hits", static_cast<int64_t>(st.keyspace_hits));
    l.add("keyspace_misses", static_cast<int64_t>(st.keyspace_misses));
    l.add("pubsub_channels", static_cast<int64_t>(c.channels().size()));
    l.add("pubsub_patterns", static_cast<int64_t>(c.patterns().size()));
    uint64_t error_replies = 0;  // stat_total_error_replies: every error errorstats counts
    for (const auto& [prefix, count] : c.engine.error_stats()) error_replies += count;
    l.add("total_error_replies", static_cast<int64_t>(error_replies));
    l.add("faultline_refused_commands", static_cast<int64_t>(st.refused));
  } else if (name == "replication") {
    l.text = "# Replication\r\n";
    l.add("role", c.refusal() == Refusal::kReadonly ? "slave" : "master");
    l.add("connected_slaves", 0);
    l.add("master_repl_offset", 0);
  } else if (name == "cpu") {  // the simulation charges no CPU time to the server
    l.text = "# CPU\r\n";
    for (const char* field : {"used_cpu_sys", "used_cpu_user", "used_cpu_sys_children", "used_cpu_user_children",
                              "used_cpu_sys_main_thread", "used_cpu_user_main_thread"}) {
      l.add(field, "0.000000");
    }
  } else if (name == "commandstats") {
    l.text = "# Commandstats\r\n";
    for (const auto& [command, n] : c.engine.command_stats()) {
      l.add("cmdstat_" + std::string(command),
            "calls=" + std::to_string(n.calls) + ",usec=0,usec_per_call=0.00,rejected_calls=" +
                std::to_string(n.rejected) + ",failed_calls=" + std::to_string(n.failed));
    }
  } else if (name == "errorstats") {
    l.text = "# Errorstats\r\n";
    for (const auto& [prefix, count] : c.engine.error_stats()) {
      l.add("errorstat_" + prefix, "count=" + std::to_string(count));
    }
  } else if (name == "keyspace") {
    l.text = "# Keyspace\r\n";
    for (int db = 0; db < kDatabases; ++db) {
      const Keyspace& ks = c.dbs()[static_cast<size_t>(db)];
      if (ks.size() == 0) continue;
      int64_t ttl_sum = 0;
      for (const auto& [key, at] : ks.expires()) ttl_sum += std::max<int64_t>(0, at - c.now_ms);
      const int64_t avg = ks.expires().empty() ? 0 : ttl_sum / static_cast<int64_t>(ks.expires().size());
      l.add("db" + std::to_string(db), "keys=" + std::to_string(ks.size()) + ",expires=" +
                                           std::to_string(ks.expires().size()) + ",avg_ttl=" + std::to_string(avg));
    }
  } else {
    return "";
  }
  return l.text;
}

}  // namespace

RedisReply cmd_info(Ctx& c) {
  // genRedisInfoString's sets: default, and all/everything adding commandstats.
  static const std::vector<std::string> kDefault = {"server",      "clients", "memory",     "persistence", "stats",
                                                    "replication", "cpu",     "errorstats", "keyspace"};
  std::vector<std::string> sections;
  for (size_t j = 1; j < c.argc(); ++j) {
    const std::string s = lower(c.arg(j));
    if (s == "default" || s == "all" || s == "everything") {
      sections.insert(sections.end(), kDefault.begin(), kDefault.end());
      if (s != "default") sections.push_back("commandstats");
    } else {
      sections.push_back(s);
    }
  }
  if (sections.empty()) sections = kDefault;
  std::string out;
  std::set<std::string> done;
  for (const std::string& s : sections) {
    if (!done.insert(s).second) continue;
    const std::string text = info_section(c, s);
    if (text.empty()) continue;
    if (!out.empty()) out += "\r\n";
    out += text;
  }
  return RedisReply::bulk(out);
}

// ---- CONFIG.

const std::vector<std::string>& eviction_policies() {
  static const std::vector<std::string> p = {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                                             "allkeys-lru",  "allkeys-lfu",  "allkeys-random",  "noeviction"};
  return p;
}

namespace {

// memtoull: a byte count with an optional b/k/kb/m/mb/g/gb unit, as Redis reads it: no digits
// is 0 ("" and "kb" too), digits beyond uint64 saturate (strtoull), the unit multiplies modulo
// 2^64, and the caller takes the result as a signed long long (so huge counts fail its range).
std::optional<int64_t> parse_memory(const std::string& s) {
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits >= 128) return std::nullopt;  // memtoull's digit buffer
  const std::string unit = lower(s.substr(digits));
  uint64_t mul = 1;
  if (unit.empty() || unit == "b")
    mul = 1;
  else if (unit == "k")
    mul = 1000;
  else if (unit == "kb")
    mul = 1024;
  else if (unit == "m")
    mul = 1000 * 1000;
  else if (unit == "mb")
    mul = 1024 * 1024;
  else if (unit == "g")
    mul = 1000ULL * 1000 * 1000;
  else if (unit == "gb")
    mul = 1024ULL * 1024 * 1024;
  else
    return std::nullopt;
  uint64_t n = 0;
  for (size_t i = 0; i < digits; ++i) {
    const auto d = static_cast<uint64_t>(s[i] - '0');
    if (n > (std::numeric_limits<uint64_t>::max() - d) / 10) {
      n = std::numeric_limits<uint64_t>::max();  // strtoull's ERANGE value, not an error here
      break;
    }
    n = n * 10 + d;
  }
  return static_cast<int64_t>(n * mul);
}

struct Param {
  const char* name;
  int64_t EngineOptions::*number;  // null: maxmemory-policy or read-only
  bool memory;                     // parsed by memtoull
  int64_t min, max;
};

// The parameters the model honours (CONFIG SET changes the engine's behaviour).
const std::vector<Param>& params() {
  static const std::vector<Param> p = {
      {"maxmemory", &EngineOptions::maxmemory, true, 0, std::numeric_limits<int64_t>::max()},
      {"maxmemory-policy", nullptr, false, 0, 0},
      {"maxmemory-samples", nullptr, false, 1, std::numeric_limits<int>::max()},
      {"lfu-log-factor", nullptr, false, 0, std::numeric_limits<int>::max()},
      {"lfu-decay-time", nullptr, false, 0, std::numeric_limits<int>::max()},
      {"hash-max-listpack-entries", &EngineOptions::hash_max_listpack_entries, false, 0,
       std::numeric_limits<int64_t>::max()},
      {"hash-max-listpack-value", &EngineOptions::hash_max_listpack_value, true, 0,
       std::numeric_limits<int64_t>::max()},
      {"set-max-intset-entries", &EngineOptions::set_max_intset_entries, false, 0, std::numeric_limits<int64_t>::max()},
      {"zset-max-listpack-entries", &EngineOptions::zset_max_listpack_entries, false, 0,
       std::numeric_limits<int64_t>::max()},
      {"zset-max-listpack-value", &EngineOptions::zset_max_listpack_value, true, 0,
       std::numeric_limits<int64_t>::max()},
      {"list-max-listpack-size", &EngineOptions::list_max_listpack_size, false, std::numeric_limits<int>::min(),
       std::numeric_limits<int>::max()},
      {"list-compress-depth", &EngineOptions::list_compress_depth, false, 0, std::numeric_limits<int>::max()},
      {"stream-node-max-entries", &EngineOptions::stream_node_max_entries, false, 0,
       std::numeric_limits<int64_t>::max()},
      {"busy-reply-threshold", &EngineOptions::busy_reply_threshold_ms, false, 0, std::numeric_limits<int64_t>::max()},
      {"min-replicas-to-write", &EngineOptions::min_replicas_to_write, false, 0, std::numeric_limits<int>::max()},
      {"min-replicas-max-lag", &EngineOptions::min_replicas_max_lag_s, false, 0, std::numeric_limits<int>::max()},
  };
  return p;
}

// Redis 7.0's names from before listpack replaced ziplist: CONFIG SET and GET take them too.
const std::vector<std::pair<std::string, std::string>>& param_aliases() {
  static const std::vector<std::pair<std::string, std::string>> a = {
      {"hash-max-ziplist-entries", "hash-max-listpack-entries"}, {"hash-max-ziplist-value", "hash-max-listpack-value"},
      {"zset-max-ziplist-entries", "zset-max-listpack-entries"}, {"zset-max-ziplist-value", "zset-max-listpack-value"},
      {"list-max-ziplist-size", "list-max-listpack-size"},       {"lua-time-limit", "busy-reply-threshold"},
      {"min-slaves-to-write", "min-replicas-to-write"},          {"min-slaves-max-lag", "min-replicas-max-lag"},
  };
  return a;
}

const std::string& canonical_param(const std::string& name) {
  for (const auto& [alias, canonical] : param_aliases()) {
    if (name == alias) return canonical;
  }
  return name;
}

// Parameters shown by CONFIG GET but fixed by the model (set them in the scenario instead).
std::vector<std::pair<std::string, std::string>> fixed_params(const EngineOptions& o) {
  return {{"databases", std::to_string(kDatabases)},
          {"hz", "10"},
          {"appendonly", o.persistence == PersistenceMode::kAofEverysec ? "yes" : "no"},
          {"appendfsync", "everysec"},
          {"save",
           o.persistence == PersistenceMode::kSnapshot ? std::to_string(o.snapshot_interval_ms / 1000) + " 1" : ""}};
}

int* int_field(EngineOptions& o, const std::string& name) {
  if (name == "maxmemory-samples") return &o.maxmemory_samples;
  if (name == "lfu-log-factor") return &o.lfu_log_factor;
  if (name == "lfu-decay-time") return &o.lfu_decay_time;
  return nullptr;
}

std::string param_value(EngineOptions& o, const Param& p) {
  const std::string name = p.name;
  if (name == "maxmemory-policy") return o.maxmemory_policy;
  if (int* f = int_field(o, name)) return std::to_string(*f);
  return std::to_string(o.*(p.number));
}

RedisReply config_set_failed(const std::string& name, const std::string& why) {
  return RedisReply::error("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + why);
}

// Applies one name/value to `o`; an error reply when the value is refused.
std::optional<RedisReply> set_param(EngineOptions& o, const std::string& name, const std::string& value) {
  if (name == "notify-keyspace-events") {
    const std::optional<uint32_t> flags = notify_flags_from_string(value);
    if (!flags) return config_set_failed(name, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
    o.notify_keyspace_events = *flags;
    return std::nullopt;
  }
  for (const Param& p : params()) {
    if (canonical_param(name) != p.name) continue;
    if (name == "maxmemory-policy") {
      const auto& pol = eviction_policies();
      const std::string v = lower(value);
      if (std::find(pol.begin(), pol.end(), v) == pol.end()) {
        std::string list;
        for (const auto& x : pol) list += (list.empty() ? "" : ", ") + x;
        return config_set_failed(name, "argument(s) must be one of the following: " + list);
      }
      o.maxmemory_policy = v;
      return std::nullopt;
    }
    std::optional<int64_t> v = p.memory ? parse_memory(value) : parse_int64(value);
    if (!v) {
      return config_set_failed(
          name, p.memory ? "argument must be a memory value" : "argument couldn't be parsed into an integer");
    }
    if (*v < p.min || *v > p.max) {
      return config_set_failed(
          name, "argument must be between " + std::to_string(p.min) + " and " + std::to_string(p.max) + " inclusive");
    }
    if (int* f = int_field(o, name))
      *f = static_cast<int>(*v);
    else
      o.*(p.number) = *v;
    return std::nullopt;
  }
  // Real parameters the model fixes or ignores get a clear error; names Redis does not know
  // get Redis's own.
  static const std::set<std::string> kNotModelled = {"timeout",
                                                     "tcp-keepalive",
                                                     "requirepass",
                                                     "loglevel",
                                                     "appendfsync",
                                                     "slowlog-log-slower-than",
                                                     "slowlog-max-len",
                                                     "maxclients",
                                                     "lazyfree-lazy-eviction",
                                                     "activedefrag",
                                                     "maxmemory-eviction-tenacity",
                                                     "maxmemory-clients",
                                                     "client-output-buffer-limit",
                                                     "latency-tracking",
                                                     "dir",
                                                     "dbfilename"};
  bool fixed = kNotModelled.count(name) > 0;
  for (const auto& [fixed_name, current] : fixed_params(o)) {
    if (fixed_name != name) continue;
    if (value == current) return std::nullopt;  // what it already is (`save ""`, `appendonly no`): a no-op
    fixed = true;
  }
  if (fixed) {
    return config_set_failed(name,
                             "faultline: not modelled by the simulated Redis (it honours maxmemory, "
                             "maxmemory-policy, maxmemory-samples, lfu-log-factor, lfu-decay-time and the "
                             "encoding thresholds; persistence is set in the scenario)");
  }
  return RedisReply::error("ERR Unknown option or number of arguments for CONFIG SET - '" + name + "'");
}

}  // namespace

RedisReply cmd_config(Ctx& c) {
  const std::string sub = lower(c.arg(1));
  EngineOptions& o = c.options();
  if (sub == "get") {
    std::vector<std::pair<std::string, std::string>> all;
    for (const Param& p : params()) all.emplace_back(p.name, param_value(o, p));
    for (const auto& [alias, canonical] : param_aliases()) {
      for (const Param& p : params()) {
        if (canonical == p.name) all.emplace_back(alias, param_value(o, p));
      }
    }
    all.emplace_back("notify-keyspace-events", notify_flags_to_string(o.notify_keyspace_events));
    for (auto& kv : fixed_params(o)) all.push_back(std::move(kv));
    std::vector<RedisReply> out;
    for (const auto& [name, value] : all) {
      bool hit = false;
      for (size_t j = 2; j < c.argc() && !hit; ++j) hit = glob_match(lower(c.arg(j)), name, true);
      if (!hit) continue;
      out.push_back(RedisReply::bulk(name));
      out.push_back(RedisReply::bulk(value));
    }
    return RedisReply::array(std::move(out));
  }
  if (sub == "set") {
    if (c.argc() % 2 != 0) return err_arity("config|set");
    EngineOptions next = o;
    std::set<std::string> seen;
    for (size_t j = 2; j + 1 < c.argc(); j += 2) {
      const std::string name = lower(c.arg(j));
      if (!seen.insert(name).second) return config_set_failed(name, "duplicate parameter");
      if (auto error = set_param(next, name, c.arg(j + 1))) return *error;
    }
    o = next;
    c.engine.track_new_keys();  // 'n' in notify-keyspace-events
    // updateMaxmemory: a lowered limit evicts at once (startEvictionTimeProc).
    c.engine.perform_evictions(c.now_ms);
    return RedisReply::ok();
  }
  if (sub == "resetstat") {
    EngineStats& st = c.stats();
    st.keyspace_hits = st.keyspace_misses = st.evicted = st.expired_lazy = st.expired_active = 0;
    st.commands = 0;
    c.engine.reset_command_stats();
    return RedisReply::ok();
  }
  return RedisReply::error("ERR The server is running without a config file");  // REWRITE
}

// ---- COMMAND.

namespace {

RedisReply command_info(const CommandMeta& m) {
  std::vector<RedisReply> flags;
  flags.push_back(RedisReply::status(m.write ? "write" : "readonly"));
  if (m.denyoom) flags.push_back(RedisReply::status("denyoom"));
  if (m.loading_ok) flags.push_back(RedisReply::status("loading"));
  const int64_t key = m.keyless ? 0 : 1;
  return RedisReply::array({RedisReply::bulk(std::string(m.name)), RedisReply::integer_of(m.arity),
                            RedisReply::array(std::move(flags)), RedisReply::integer_of(key),
                            RedisReply::integer_of(key), RedisReply::integer_of(key), RedisReply::array({}),
                            RedisReply::array({}), RedisReply::array({}), RedisReply::array({})});
}

}  // namespace

RedisReply cmd_command(Ctx& c) {
  const std::vector<CommandMeta> table = command_table();
  if (c.argc() == 1) {
    std::vector<RedisReply> out;
    for (const auto& m : table) out.push_back(command_info(m));
    return RedisReply::array(std::move(out));
  }
  const std::string sub = lower(c.arg(1));
  if (sub == "count" && c.argc() == 2) return RedisReply::integer_of(static_cast<int64_t>(table.size()));
  if (sub == "list") {
    std::vector<std::string> names;
    for (const auto& m : table) names.emplace_back(m.name);
    return bulk_array(names);
  }
  if (sub == "info" || sub == "docs") {
    std::vector<RedisReply> out;
    const bool all = c.argc() == 2;
    for (const auto& m : table) {
      bool wanted = all;
      for (size_t j = 2; j < c.argc() && !wanted; ++j) wanted = lower(c.arg(j)) == m.name;
      if (!wanted) continue;
      if (sub == "info") {
        out.push_back(command_info(m));
      } else {
        out.push_back(RedisReply::bulk(std::string(m.name)));
        out.push_back(RedisReply::array({RedisReply::bulk("summary"),
                                         RedisReply::bulk("faultline simulated Redis: " + std::string(m.name)),
                                         RedisReply::bulk("since"), RedisReply::bulk("1.0.0"),
                                         RedisReply::bulk("group"), RedisReply::bulk("generic")}));
      }
    }
    if (sub == "info" && !all) {
      // One element per name asked, nil for unknown commands.
      std::vector<RedisReply> ordered;
      for (size_t j = 2; j < c.argc(); ++j) {
        auto m = command_meta(lower(c.arg(j)));
        ordered.push_back(m ? command_info(*m) : RedisReply::nil_array());
      }
      return RedisReply::array(std::move(ordered));
    }
    return RedisReply::array(std::move(out));
  }
  if (sub == "count") return err_arity("command|count");
  return unknown_subcommand(c);
}

// ---- FUNCTION, FCALL, DEBUG.

namespace {

// FUNCTION LOAD [REPLACE] code: the library's name.
RedisReply function_load(Ctx& c) {
  bool replace = false;
  size_t j = 2;
  for (; j + 1 < c.argc(); ++j) {
    if (!iequals(c.arg(j), "replace")) return RedisReply::error("ERR Unknown option given: " + c.arg(j));
    replace = true;
  }
  if (j + 1 != c.argc()) return RedisReply::error("ERR Function code is missing");  // FUNCTION LOAD alone
  std::variant<FunctionLibrary, RedisReply> loaded = load_function_library(c, c.arg(j));
  if (auto* error = std::get_if<RedisReply>(&loaded)) return std::move(*error);
  FunctionLibrary& lib = std::get<FunctionLibrary>(loaded);
  auto& libraries = c.libraries();
  if (libraries.count(lib.name) && !replace) return RedisReply::error("ERR Library '" + lib.name + "' already exists");
  for (const auto& [name, other] : libraries) {
    if (name == lib.name) continue;
    for (const auto& [function, no_writes] : lib.functions) {
      if (other.functions.count(function)) return RedisReply::error("ERR Function " + function + " already exists");
    }
  }
  const std::string name = lib.name;
  libraries[name] = std::move(lib);
  return RedisReply::bulk(name);
}

// FUNCTION LIST [WITHCODE] [LIBRARYNAME pattern]: per library its name, engine, functions and
// (WITHCODE) code, as functionListCommand replies.
RedisReply function_list(Ctx& c) {
  bool with_code = false;
  const std::string* pattern = nullptr;
  for (size_t j = 2; j < c.argc(); ++j) {
    if (iequals(c.arg(j), "withcode") && !with_code) {
      with_code = true;
    } else if (iequals(c.arg(j), "libraryname") && !pattern && j + 1 < c.argc()) {
      pattern = &c.arg(++j);
    } else {
      return RedisReply::error("ERR Unknown argument " + c.arg(j));
    }
  }
  std::vector<RedisReply> out;
  for (const auto& [name, lib] : c.libraries()) {
    if (pattern && !glob_match(*pattern, name)) continue;
    std::vector<RedisReply> functions;
    for (const auto& [function, no_writes] : lib.functions) {
      std::vector<RedisReply> flags;
      if (no_writes) flags.push_back(RedisReply::status("no-writes"));
      functions.push_back(
          RedisReply::array({RedisReply::bulk("name"), RedisReply::bulk(function), RedisReply::bulk("description"),
                             RedisReply::nil(), RedisReply::bulk("flags"), RedisReply::array(std::move(flags))}));
    }
    std::vector<RedisReply> entry = {RedisReply::bulk("library_name"), RedisReply::bulk(name),
                                     RedisReply::bulk("engine"),       RedisReply::bulk("LUA"),
                                     RedisReply::bulk("functions"),    RedisReply::array(std::move(functions))};
    if (with_code) {
      entry.push_back(RedisReply::bulk("library_code"));
      entry.push_back(RedisReply::bulk("#!lua name=" + name + lib.code));
    }
    out.push_back(RedisReply::array(std::move(entry)));
  }
  return RedisReply::array(std::move(out));
}

// fcallCommandGeneric: the function is looked up before numkeys is read.
RedisReply fcall_generic(Ctx& c, bool read_only) {
  for (const auto& [name, lib] : c.libraries()) {
    const auto f = lib.functions.find(c.arg(1));
    if (f == lib.functions.end()) continue;
    const std::optional<int64_t> numkeys = parse_int64(c.arg(2));
    if (!numkeys) return RedisReply::error("ERR Bad number of keys provided");
    if (*numkeys > static_cast<int64_t>(c.argc() - 3)) {
      return RedisReply::error("ERR Number of keys can't be greater than number of args");
    }
    if (*numkeys < 0) return RedisReply::error("ERR Number of keys can't be negative");
    if (read_only && !f->second) {
      return RedisReply::error("ERR Can not execute a script with write flag using *_ro command.");
    }
    const auto [keys, args] = keys_and_args(c);
    const FunctionLibrary library = lib;  // a copy: the function may reload its own library
    c.set_script_read_only(f->second);
    RedisReply reply = call_function(c, library, c.arg(1), keys, args);
    c.set_script_read_only(false);
    return reply;
  }
  return RedisReply::error("ERR Function not found");
}

}  // namespace

RedisReply cmd_function(Ctx& c) {
  const std::string sub = lower(c.arg(1));
  if (sub == "load") return function_load(c);
  if (sub == "list") return function_list(c);
  if (sub == "flush") {
    if (c.argc() > 3 || (c.argc() == 3 && !iequals(c.arg(2), "sync") && !iequals(c.arg(2), "async"))) {
      return RedisReply::error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    }
    c.libraries().clear();
    return RedisReply::ok();
  }
  if (sub == "delete" && c.argc() == 3) {
    if (!c.libraries().erase(c.arg(2))) return RedisReply::error("ERR Library not found");
    return RedisReply::ok();
  }
  if (sub == "kill") return c.kill_script(/*eval=*/false);
  return unknown_subcommand(c);
}

RedisReply cmd_fcall(Ctx& c) { return fcall_generic(c, false); }
RedisReply cmd_fcall_ro(Ctx& c) { return fcall_generic(c, true); }

// The simulated Redis is a standalone server: CLUSTER answers as redis-server without
// cluster-enabled does (and, flagged noscript, refuses scripts first).
RedisReply cmd_cluster(Ctx&) { return RedisReply::error("ERR This instance has cluster support disabled"); }

RedisReply cmd_debug(Ctx&) { return RedisReply::error("ERR faultline: DEBUG is not supported by the simulated Redis"); }

// ---- OBJECT.

RedisReply cmd_object(Ctx& c) {
  const std::string sub = lower(c.arg(1));
  if (sub == "help") {
    return bulk_array({"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "ENCODING <key>",
                       "FREQ <key>", "IDLETIME <key>", "REFCOUNT <key>", "HELP"});
  }
  // objectCommandLookup: no touch (the LRU/LFU data stays as it was).
  const Entry* e = c.ks.find(c.arg(2), c.now_ms, &c.stats().expired_lazy);
  if (!e) return RedisReply::nil();
  const EngineOptions& o = c.options();
  const bool lfu = o.maxmemory_policy.find("lfu") != std::string::npos;
  const std::string note =
      " Please note that when switching between policies at runtime LRU and LFU data will take some time to "
      "adjust.";
  if (sub == "encoding") return RedisReply::bulk(encoding_of(*e, o));
  if (sub == "refcount") {
    // Integers 0..9999 are shared objects (OBJ_SHARED_REFCOUNT) unless an LRU/LFU policy
    // needs per-key metadata (MAXMEMORY_FLAG_NO_SHARED_INTEGERS).
    const bool no_shared = o.maxmemory > 0 && (o.maxmemory_policy.ends_with("lru") || lfu);
    if (const auto* s = std::get_if<std::string>(&e->value); s && !no_shared) {
      auto v = parse_int64(*s);
      if (v && *v >= 0 && *v < 10000) return RedisReply::integer_of(std::numeric_limits<int>::max());
    }
    return RedisReply::integer_of(1);
  }
  if (sub == "idletime") {
    if (lfu) return RedisReply::error("ERR An LFU maxmemory policy is selected, idle time not tracked." + note);
    return RedisReply::integer_of(std::max<int64_t>(0, c.now_ms / 1000 - e->access_ms / 1000));
  }
  // freq
  if (!lfu) {
    return RedisReply::error("ERR An LFU maxmemory policy is not selected, access frequency not tracked." + note);
  }
  const int64_t minute = c.now_ms / 60'000;
  int64_t counter = e->lfu_counter;
  if (o.lfu_decay_time > 0 && minute > e->lfu_minute) {
    counter = std::max<int64_t>(0, counter - (minute - e->lfu_minute) / o.lfu_decay_time);
  }
  return RedisReply::integer_of(counter);
}

// ---- RENAME, RANDOMKEY, EXPIRETIME.

namespace {

RedisReply rename_generic(Ctx& c, bool nx) {
  Entry* e = c.find(c.arg(1));
  if (!e) return RedisReply::error("ERR no such key");
  if (c.arg(1) == c.arg(2)) return nx ? RedisReply::integer_of(0) : RedisReply::ok();
  if (c.find(c.arg(2))) {
    if (nx) return RedisReply::integer_of(0);
    c.ks.erase(c.arg(2));
    e = c.find(c.arg(1));
  }
  move_entry(c.ks, c.arg(1), *e, c.ks, c.arg(2));
  c.notify(kNotifyGeneric, "rename_from", c.arg(1));  // renameGenericCommand
  c.notify(kNotifyGeneric, "rename_to", c.arg(2));
  signal_if_blockable(c, c.session.db, c.arg(2));
  return nx ? RedisReply::integer_of(1) : RedisReply::ok();
}

RedisReply expiretime_generic(Ctx& c, bool ms) {
  Entry* e = c.find(c.arg(1));
  if (!e) return RedisReply::integer_of(-2);
  if (!e->expire_at_ms) return RedisReply::integer_of(-1);
  // Rounded to the nearest second without the overflow of (at + 500) / 1000 near INT64_MAX.
  const int64_t at = *e->expire_at_ms;
  return RedisReply::integer_of(ms ? at : at / 1000 + (at % 1000 >= 500 ? 1 : 0));
}

}  // namespace

// MEMORY USAGE key [SAMPLES count]: the engine's estimate of the key's bytes (the same estimate
// maxmemory and eviction use), nil for a missing key.
RedisReply cmd_memory_usage(Ctx& c) {
  for (size_t j = 3; j < c.argc(); j += 2) {
    if (!iequals(c.arg(j), "samples") || j + 1 >= c.argc()) return err_syntax();
    const std::optional<int64_t> v = parse_int64(c.arg(j + 1));
    if (!v) return err_not_integer();
    if (*v < 0) return RedisReply::error("ERR value is out of range, must be positive");
  }
  Entry* e = c.find(c.arg(2));
  if (!e) return RedisReply::nil();
  return RedisReply::integer_of(entry_bytes(c.arg(2), *e));
}

RedisReply cmd_rename(Ctx& c) { return rename_generic(c, false); }
RedisReply cmd_renamenx(Ctx& c) { return rename_generic(c, true); }
RedisReply cmd_expiretime(Ctx& c) { return expiretime_generic(c, false); }
RedisReply cmd_pexpiretime(Ctx& c) { return expiretime_generic(c, true); }

RedisReply cmd_randomkey(Ctx& c) {
  // dbRandomKey: a random key; one found expired is deleted and another drawn.
  while (c.ks.size() > 0) {
    auto it = std::next(c.ks.entries().begin(), static_cast<long>(c.random() % c.ks.size()));
    const std::string key = it->first;
    if (c.find(key)) return RedisReply::bulk(key);
  }
  return RedisReply::nil();
}

// ---- SCAN family.

namespace {

// The order SCAN walks the keys in: a fixed 64-bit FNV-1a hash (never 0, so that cursor 0 means
// "from the start"), then the key. A cursor is the hash to resume from: keys present for the
// whole scan are returned exactly once, whatever is added or deleted meanwhile.
uint64_t scan_hash(const std::string& key) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : key) h = (h ^ ch) * 1099511628211ULL;
  return h == 0 ? 1 : h;
}

struct ScanArgs {
  uint64_t cursor = 0;
  std::string match;  // empty: everything
  int64_t count = 10;
  std::string type;
};

// SCAN's cursor and options; with `options` false the cursor only (H/S/ZSCAN check their key
// between the two).
std::optional<RedisReply> parse_scan(const Ctx& c, size_t cursor_at, bool allow_type, ScanArgs* a,
                                     bool options = true) {
  const std::string& cur = c.arg(cursor_at);
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(cur.c_str(), &end, 10);
  // parseScanCursorOrReply: strtoul's whole string, no leading space. Like strtoul, an empty
  // cursor is 0 and a negative one wraps ("-1" is the largest cursor).
  if (std::isspace(static_cast<unsigned char>(cur[0])) || *end != '\0' || errno == ERANGE) {
    return RedisReply::error("ERR invalid cursor");
  }
  a->cursor = v;
  if (!options) return std::nullopt;
  for (size_t j = cursor_at + 1; j < c.argc(); j += 2) {
    if (j + 1 >= c.argc()) return err_syntax();
    if (iequals(c.arg(j), "count")) {
      auto n = parse_int64(c.arg(j + 1));
      if (!n) return err_not_integer();
      if (*n < 1) return err_syntax();
      a->count = *n;
    } else if (iequals(c.arg(j), "match")) {
      a->match = c.arg(j + 1) == "*" ? "" : c.arg(j + 1);
    } else if (allow_type && iequals(c.arg(j), "type")) {
      a->type = lower(c.arg(j + 1));
    } else {
      return err_syntax();
    }
  }
  return std::nullopt;
}

RedisReply scan_reply(uint64_t next, std::vector<RedisReply> items) {
  return RedisReply::array({RedisReply::bulk(std::to_string(next)), RedisReply::array(std::move(items))});
}

// HSCAN/SSCAN/ZSCAN: the whole collection in one reply, cursor 0 (what Redis does for its compact
// encodings; COUNT is only a hint for the others).
template <typename T, typename Emit>
RedisReply collection_scan(Ctx& c, Emit emit) {
  ScanArgs a;
  if (auto error = parse_scan(c, 2, false, &a, /*options=*/false)) return *error;
  // hscanCommand & co: cursor, then the key (missing: an empty scan; WRONGTYPE), then options.
  T* v = nullptr;
  RedisReply error;
  if (!c.lookup<T>(c.arg(1), &v, &error)) return error;
  if (!v) return scan_reply(0, {});
  if (auto e = parse_scan(c, 2, false, &a)) return *e;
  std::vector<RedisReply> items;
  emit(*v, [&](const std::string& member, const std::string* value) {
    if (!a.match.empty() && !glob_match(a.match, member)) return;
    items.push_back(RedisReply::bulk(member));
    if (value) items.push_back(RedisReply::bulk(*value));
  });
  return scan_reply(0, std::move(items));
}

}  // namespace

RedisReply cmd_scan(Ctx& c) {
  ScanArgs a;
  if (auto error = parse_scan(c, 1, true, &a)) return *error;
  std::vector<std::pair<uint64_t, std::string>> order;
  for (const auto& [key, e] : c.ks.entries()) {
    const uint64_t h = scan_hash(key);
    if (h >= a.cursor) order.emplace_back(h, key);
  }
  std::sort(order.begin(), order.end());
  std::vector<RedisReply> items;
  uint64_t next = 0;
  size_t i = 0;
  for (; i < order.size(); ++i) {
    if (static_cast<int64_t>(i) >= a.count && order[i].first != order[i - 1].first) {
      next = order[i].first;
      break;
    }
    const std::string& key = order[i].second;
    Entry* e = c.find(key);  // expired keys are reclaimed, not returned
    if (!e) continue;
    if (!a.match.empty() && !glob_match(a.match, key)) continue;
    if (!a.type.empty() && a.type != value_type_name(e->type())) continue;
    items.push_back(RedisReply::bulk(key));
  }
  return scan_reply(next, std::move(items));
}

RedisReply cmd_hscan(Ctx& c) {
  return collection_scan<Hash>(c, [](const Hash& h, auto add) {
    for (const auto& [f, v] : h) add(f, &v);
  });
}

RedisReply cmd_sscan(Ctx& c) {
  return collection_scan<Set>(c, [](const Set& s, auto add) {
    for (const auto& m : s) add(m, nullptr);
  });
}

namespace {

// A score as a listpack holds it (d2string): an integral score within +-LLONG_MAX/2 as an
// integer ("4611686018427387904", where %.17g writes 4.6116860184273879e+18), else %.17g. ZSCAN
// answers the stored text (the zsets it serves whole are listpacks).
std::string listpack_score(double d) {
  constexpr double kHalf = static_cast<double>(std::numeric_limits<int64_t>::max() / 2);
  if (d >= -kHalf && d <= kHalf && static_cast<double>(static_cast<int64_t>(d)) == d) {
    return std::to_string(static_cast<int64_t>(d));
  }
  return format_double(d);
}

}  // namespace

RedisReply cmd_zscan(Ctx& c) {
  return collection_scan<ZSet>(c, [](const ZSet& z, auto add) {
    for (const auto& [score, m] : z.order) {
      const std::string s = listpack_score(score);
      add(m, &s);
    }
  });
}

}  // namespace fl::sim::redis
