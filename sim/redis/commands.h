// Internal to sim/redis: the command context and the per-family command functions the Engine
// dispatches to. Not for use outside sim/redis.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "impl/ports/redis_reply.h"
#include "sim/redis/engine.h"
#include "sim/redis/keyspace.h"

namespace fl::sim::redis {

// Everything one command execution may touch.
struct Ctx {
  Engine& engine;
  Keyspace& ks;
  Session& session;
  const std::vector<std::string>& argv;
  int64_t now_ms;
  bool in_script;  // inside EVAL/EVALSHA or EXEC: never block
  bool in_exec;
  bool from_script = false;  // a script's redis.call (Redis's CLIENT_SCRIPT caller)

  size_t argc() const { return argv.size(); }
  const std::string& arg(size_t i) const { return argv[i]; }
  // The live entry of `key` (lazy expiry applied), or null.
  Entry* find(const std::string& key);
  // The entry of `key` when it holds type T: *out = its value (or null if absent). Returns false
  // (and sets *error to WRONGTYPE) when the key holds another type.
  template <typename T>
  bool lookup(const std::string& key, T** out, RedisReply* error);
  // Marks `key` ready for blocked stream readers.
  void signal(const std::string& key);
  // A key of database `db` (not the session's) made ready for blocked readers (SWAPDB).
  void signal_in(int db, const std::string& key);
  // The command name in lower case, as Redis prints it in errors.
  std::string name() const;

  // Engine state beyond the keyspace (engine.cc).
  std::map<std::string, std::set<uint64_t>, std::less<>>& channels();
  std::map<std::string, std::set<uint64_t>, std::less<>>& patterns();
  std::vector<PubSubDelivery>& deliveries();
  // Engine::notify in the session's database, on the live keyspace only.
  void notify(uint32_t event_class, std::string_view event, const std::string& key);
  // The same in database `db` (COPY ... DB n).
  void notify_in(int db, uint32_t event_class, std::string_view event, const std::string& key);
  // After a removal from the collection at `key`: when it left the collection empty, deletes the
  // key and sends the "del" event Redis sends then (hdelCommand, sremCommand, zremGenericCommand,
  // listTypeTryDeletion). Returns whether it deleted.
  bool drop_if_empty(const std::string& key, bool empty);
  // Tells Engine's publish observer (if any) about a PUBLISH on the live keyspace.
  void observe_publish(const std::string& channel, const std::string& payload);
  std::map<std::string, std::string, std::less<>>& loaded_scripts();  // SHA1 -> the script's text
  std::map<std::string, FunctionLibrary>& libraries();                // FUNCTION LOAD's, by name
  EngineStats& stats();
  // redis.call from a script: runs argv atomically at this context's time, no blocking.
  // Takes argv by value: after the call it goes to the command observer (the command log).
  RedisReply call_nested(std::vector<std::string> argv);

  // The databases this command runs on (the live ones, or the durable copy an AOF replays into).
  bool live() const;
  std::vector<Keyspace>& dbs();
  EngineOptions& options();
  std::map<uint64_t, ClientInfo>& clients();
  int64_t start_ms() const;
  uint64_t random();
  // Lua's math.random state (Engine::lua_rand48_).
  uint64_t& lua_rand48();
  // ACL users by name (acl.h), and whether the session's user may run `argv` (its command and
  // its keys); nullopt when argv names no command.
  std::map<std::string, AclUser>& acl_users();
  std::optional<bool> acl_permits(const std::vector<std::string>& argv);
  // The Lua state EVAL scripts share (Engine::lua_eval_).
  LuaEvalState& lua_eval();
  // While set, the script's redis.call()s of writes and PUBLISH fail (EVAL_RO, EVALSHA_RO, a
  // script's no-writes flag).
  void set_script_read_only(bool read_only);
  bool script_read_only() const;
  // While set, the script's calls are never refused for memory (its allow-oom flag).
  void set_script_allow_oom(bool allow_oom);
  // A Lua script (eval) or function (!eval) starts and ends: SCRIPT KILL and FUNCTION KILL act on
  // it, and the engine's script hook runs (Engine::set_script_hook).
  void begin_script(bool eval);
  void end_script();
  // From the Lua count hook: runs the engine's script hook, if any. *has_hook says whether there
  // is one; returns whether SCRIPT KILL or FUNCTION KILL asked the script to end.
  bool script_hook(bool* has_hook);
  // SCRIPT KILL (eval) or FUNCTION KILL (!eval), as scriptKill answers.
  RedisReply kill_script(bool eval);
  Refusal refusal() const;
};

// Restores the session's database when a script ends: a SELECT inside a script moves its later
// redis.call()s, never its caller (each script starts on the caller's database: scriptPrepareForRun).
class KeepSessionDb {
 public:
  explicit KeepSessionDb(Session& session) : session_(session), db_(session.db) {}
  ~KeepSessionDb() { session_.db = db_; }
  KeepSessionDb(const KeepSessionDb&) = delete;
  KeepSessionDb& operator=(const KeepSessionDb&) = delete;

 private:
  Session& session_;
  int db_;
};

// A Lua script or function running: SCRIPT KILL / FUNCTION KILL and the engine's script hook see
// it (Ctx::begin_script) until it ends.
class ScriptRun {
 public:
  ScriptRun(Ctx& c, bool eval) : c_(c) { c_.begin_script(eval); }
  ~ScriptRun() { c_.end_script(); }
  ScriptRun(const ScriptRun&) = delete;
  ScriptRun& operator=(const ScriptRun&) = delete;

 private:
  Ctx& c_;
};

// The command table's view of one command (COMMAND INFO/COUNT/DOCS, refusals).
struct CommandMeta {
  std::string_view name;
  int arity;
  bool write, denyoom, keyless, loading_ok;
};
// Every top-level command, in table order; and one by name (lower case), or null.
std::vector<CommandMeta> command_table();
std::optional<CommandMeta> command_meta(std::string_view lower_name);
// Redis's stringmatchlen (glob: * ? [...] \\), case-sensitive unless nocase.
bool glob_match(std::string_view pattern, std::string_view s, bool nocase = false);
// The commands of an ACL category (+@scripting ...; acl.h), by table name; *known is false for a
// category the simulation does not model (then the list is empty). Categories: scripting,
// pubsub, transaction, connection, read (commands without kWrite that take keys), write.
// A script's flags from its "#!lua flags=..." first line (Redis 7.0's evalExtractShebangFlags);
// without one, the script runs in compatibility mode (shebang false). The error text (without
// "ERR ") of a shebang Redis refuses.
struct ScriptFlags {
  bool shebang = false;
  bool no_writes = false;
  bool allow_oom = false;
  size_t shebang_len = 0;  // up to, not including, the line feed
};
std::variant<ScriptFlags, std::string> shebang_flags(std::string_view body);
// The space-separated words of text[0, end): a "#!" first line (shebang_flags, FUNCTION LOAD's
// library metadata).
std::vector<std::string_view> words_before(std::string_view text, size_t end);
std::vector<std::string_view> commands_in_category(std::string_view category, bool* known);
// Whether `lower_name` names a command or subcommand ("get", "config|get", "config").
bool command_known(std::string_view lower_name);
// OBJECT ENCODING's answer for an entry under the engine's thresholds.
std::string encoding_of(const Entry& e, const EngineOptions& o);
// Marks a collection that outgrew its compact encoding (after every write to it).
void update_encoding(Entry& e, const EngineOptions& o);
// Estimated bytes of one key and its value.
int64_t entry_bytes(const std::string& key, const Entry& e);

// ---- Shared replies and parsing (util.cc).
RedisReply err_syntax();
RedisReply err_not_integer();
RedisReply err_not_float();
RedisReply err_wrongtype();
RedisReply err_arity(std::string_view fullname);
RedisReply bulk_array(const std::vector<std::string>& items);
// ASCII case folding. faultline never calls setlocale, so this is exactly what std::tolower does
// in the C locale (and what Redis's tolower does); inline, it costs no libc call per character.
constexpr char ascii_lower(char ch) { return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch; }
std::string lower(std::string_view s);
// *out = s in lower case, reusing out's buffer (no allocation when it is large enough).
void assign_lower(std::string* out, std::string_view s);
// Case-insensitive (ASCII) equality. Inline: option parsers call it for every argument.
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}
// Redis's string2ll: strict decimal int64 (no spaces, no '+', no leading zeros).
std::optional<int64_t> parse_int64(std::string_view s);
// Redis's getDoubleFromObject: strtod of the whole string, no spaces, inf accepted, NaN refused.
std::optional<double> parse_double(std::string_view s);
// addReplyDouble's text: "inf", "-inf", or %.17g.
std::string format_double(double d);
// LONG_MAX, the bound Redis checks counts against.
constexpr int64_t kLongMax = std::numeric_limits<int64_t>::max();
// "ERR invalid expire time in '<command>' command".
RedisReply err_expire(const Ctx& c);
// The absolute expiry, in ms of the Redis clock, of an expire argument `when` (seconds or ms,
// relative to now or absolute) as SET and SETEX take it; nullopt when Redis answers err_expire:
// not positive, or overflowing once scaled and added.
std::optional<int64_t> expire_arg_at_ms(const Ctx& c, int64_t when, bool seconds, bool relative);
// The count arguments of HRANDFIELD and ZRANDMEMBER: argv[2] an integer >= -LONG_MAX, then at most
// `with_word` (WITHVALUES, WITHSCORES), which halves the range. nullopt with *error set otherwise.
struct RandomCount {
  int64_t count = 0;
  bool with = false;
};
std::optional<RandomCount> parse_random_count(const Ctx& c, const char* with_word, RedisReply* error);
// signalKeyAsReady for a key a command just put in place (dbAdd): signals it when it holds a type
// a client may block on (list, sorted set, stream). admin.cc.
void signal_if_blockable(Ctx& c, int db, const std::string& key);
// notify-keyspace-events <-> kNotify* flags (keyspaceEventsStringToFlags/FlagsToString); nullopt
// for an unknown character. notify.cc.
std::optional<uint32_t> notify_flags_from_string(std::string_view s);
std::string notify_flags_to_string(uint32_t flags);
// splitmix64: advances *state and returns the next value of its stream.
uint64_t splitmix64(uint64_t* state);

// ---- Command families. Each returns the reply; argv arity is already checked.
// strings.cc
RedisReply cmd_get(Ctx& c);
RedisReply cmd_set(Ctx& c);
RedisReply cmd_setnx(Ctx& c);
RedisReply cmd_incr(Ctx& c);
RedisReply cmd_incrby(Ctx& c);
RedisReply cmd_decr(Ctx& c);
RedisReply cmd_decrby(Ctx& c);
RedisReply cmd_mget(Ctx& c);
RedisReply cmd_getdel(Ctx& c);
RedisReply cmd_getex(Ctx& c);
// keys.cc
RedisReply cmd_del(Ctx& c);
RedisReply cmd_exists(Ctx& c);
RedisReply cmd_expire(Ctx& c);
RedisReply cmd_pexpire(Ctx& c);
RedisReply cmd_ttl(Ctx& c);
RedisReply cmd_pttl(Ctx& c);
RedisReply cmd_persist(Ctx& c);
RedisReply cmd_type(Ctx& c);
RedisReply cmd_dbsize(Ctx& c);
RedisReply cmd_flushall(Ctx& c);
RedisReply cmd_ping(Ctx& c);
RedisReply cmd_echo(Ctx& c);
// hashes.cc
RedisReply cmd_hset(Ctx& c);
RedisReply cmd_hsetnx(Ctx& c);
RedisReply cmd_hget(Ctx& c);
RedisReply cmd_hgetall(Ctx& c);
RedisReply cmd_hincrby(Ctx& c);
RedisReply cmd_hdel(Ctx& c);
RedisReply cmd_hlen(Ctx& c);
// sets.cc
RedisReply cmd_sadd(Ctx& c);
RedisReply cmd_srem(Ctx& c);
RedisReply cmd_sismember(Ctx& c);
RedisReply cmd_smembers(Ctx& c);
RedisReply cmd_scard(Ctx& c);
RedisReply cmd_sintercard(Ctx& c);
RedisReply cmd_sinter(Ctx& c);
RedisReply cmd_sunion(Ctx& c);
RedisReply cmd_sdiff(Ctx& c);
RedisReply cmd_sinterstore(Ctx& c);
RedisReply cmd_sunionstore(Ctx& c);
RedisReply cmd_sdiffstore(Ctx& c);
// zsets.cc
RedisReply cmd_zadd(Ctx& c);
RedisReply cmd_zincrby(Ctx& c);
RedisReply cmd_zscore(Ctx& c);
RedisReply cmd_zmscore(Ctx& c);
RedisReply cmd_zpopmin(Ctx& c);
RedisReply cmd_zpopmax(Ctx& c);
RedisReply cmd_zrem(Ctx& c);
RedisReply cmd_zcard(Ctx& c);
RedisReply cmd_zrange(Ctx& c);
RedisReply cmd_zrevrange(Ctx& c);
// zrange.cc
RedisReply cmd_zrangestore(Ctx& c);
RedisReply cmd_zrangebyscore(Ctx& c);
RedisReply cmd_zrevrangebyscore(Ctx& c);
RedisReply cmd_zrangebylex(Ctx& c);
RedisReply cmd_zrevrangebylex(Ctx& c);
RedisReply cmd_zcount(Ctx& c);
RedisReply cmd_zlexcount(Ctx& c);
RedisReply cmd_zremrangebyscore(Ctx& c);
RedisReply cmd_zremrangebylex(Ctx& c);
RedisReply cmd_zremrangebyrank(Ctx& c);
// zsetops.cc
RedisReply cmd_zunion(Ctx& c);
RedisReply cmd_zinter(Ctx& c);
RedisReply cmd_zdiff(Ctx& c);
RedisReply cmd_zunionstore(Ctx& c);
RedisReply cmd_zinterstore(Ctx& c);
RedisReply cmd_zdiffstore(Ctx& c);
RedisReply cmd_zintercard(Ctx& c);
// hrandfield.cc
RedisReply cmd_hrandfield(Ctx& c);
// strings_range.cc
RedisReply cmd_setrange(Ctx& c);
RedisReply cmd_getrange(Ctx& c);
RedisReply cmd_strlen(Ctx& c);
RedisReply cmd_lcs(Ctx& c);
// core_more.cc
RedisReply cmd_setex(Ctx& c);
RedisReply cmd_psetex(Ctx& c);
RedisReply cmd_getset(Ctx& c);
RedisReply cmd_mset(Ctx& c);
RedisReply cmd_msetnx(Ctx& c);
RedisReply cmd_append(Ctx& c);
RedisReply cmd_incrbyfloat(Ctx& c);
RedisReply cmd_unlink(Ctx& c);
RedisReply cmd_touch(Ctx& c);
RedisReply cmd_keys(Ctx& c);
RedisReply cmd_copy(Ctx& c);
RedisReply cmd_time(Ctx& c);
RedisReply cmd_hmset(Ctx& c);
RedisReply cmd_hmget(Ctx& c);
RedisReply cmd_hexists(Ctx& c);
RedisReply cmd_hkeys(Ctx& c);
RedisReply cmd_hvals(Ctx& c);
RedisReply cmd_hstrlen(Ctx& c);
RedisReply cmd_hincrbyfloat(Ctx& c);
RedisReply cmd_smismember(Ctx& c);
RedisReply cmd_smove(Ctx& c);
RedisReply cmd_zrank(Ctx& c);
RedisReply cmd_zrevrank(Ctx& c);
RedisReply cmd_expireat(Ctx& c);
RedisReply cmd_pexpireat(Ctx& c);
RedisReply cmd_watch(Ctx& c);  // WATCH itself is served by Engine::dispatch (it snapshots the keys)
RedisReply cmd_unwatch(Ctx& c);
// set_random.cc
RedisReply cmd_spop(Ctx& c);
RedisReply cmd_srandmember(Ctx& c);
RedisReply cmd_memory_usage(Ctx& c);
// lists.cc
// Blocking commands (lists, sorted sets): a timeout argument in seconds as a double
// (getTimeoutFromObjectOrReply), in ms, 0 = forever; and parking the session on `keys`, answered
// with a null array at once when the call may not block (in EXEC or a script) or on its timeout.
std::optional<int64_t> parse_timeout_ms(const std::string& s, RedisReply* error);
RedisReply block_on(Ctx& c, const std::vector<std::string>& keys, int64_t timeout_ms);
// LMPOP/ZMPOP's tail from argv[first]: numkeys key [key ...] FIRST_END|LAST_END [COUNT count].
struct MpopArgs {
  std::vector<std::string> keys;
  bool from_first = true;  // LEFT (lists), MIN (sorted sets)
  int64_t count = 1;
};
std::optional<MpopArgs> parse_mpop(const Ctx& c, size_t first, const char* first_end, const char* last_end,
                                   RedisReply* error);
RedisReply cmd_lpush(Ctx& c);
RedisReply cmd_rpush(Ctx& c);
RedisReply cmd_lpushx(Ctx& c);
RedisReply cmd_rpushx(Ctx& c);
RedisReply cmd_lpop(Ctx& c);
RedisReply cmd_rpop(Ctx& c);
RedisReply cmd_llen(Ctx& c);
RedisReply cmd_lrange(Ctx& c);
RedisReply cmd_lindex(Ctx& c);
RedisReply cmd_lset(Ctx& c);
RedisReply cmd_lrem(Ctx& c);
RedisReply cmd_ltrim(Ctx& c);
RedisReply cmd_linsert(Ctx& c);
RedisReply cmd_lpos(Ctx& c);
RedisReply cmd_lmove(Ctx& c);
RedisReply cmd_rpoplpush(Ctx& c);
RedisReply cmd_lmpop(Ctx& c);
RedisReply cmd_blpop(Ctx& c);
RedisReply cmd_brpop(Ctx& c);
RedisReply cmd_blmove(Ctx& c);
RedisReply cmd_brpoplpush(Ctx& c);
RedisReply cmd_blmpop(Ctx& c);
// bits.cc
RedisReply cmd_setbit(Ctx& c);
RedisReply cmd_getbit(Ctx& c);
// sort.cc
RedisReply cmd_sort(Ctx& c);
RedisReply cmd_sort_ro(Ctx& c);
// zset_pop.cc
RedisReply cmd_zmpop(Ctx& c);
RedisReply cmd_bzmpop(Ctx& c);
RedisReply cmd_bzpopmin(Ctx& c);
RedisReply cmd_bzpopmax(Ctx& c);
RedisReply cmd_zrandmember(Ctx& c);
// xinfo.cc
RedisReply cmd_xinfo(Ctx& c);
// Redis 7.0's consumer-group read counter arithmetic (xinfo.cc): the first live entry's id (0-0
// when empty); whether an XDEL tombstone lies at or after `start`; the estimated entries-read
// counter of `id` (streamEstimateDistanceFromFirstEverEntry), -1 when unknown.
StreamId stream_first_id(const Stream& s);
bool stream_range_has_tombstones(const Stream& s, const StreamId& start);
int64_t stream_estimate_entries_read(const Stream& s, const StreamId& id);
// streams.cc
RedisReply cmd_xadd(Ctx& c);
RedisReply cmd_xtrim(Ctx& c);
RedisReply cmd_xlen(Ctx& c);
RedisReply cmd_xrange(Ctx& c);
RedisReply cmd_xrevrange(Ctx& c);
RedisReply cmd_xdel(Ctx& c);
RedisReply cmd_xgroup(Ctx& c);
RedisReply cmd_xreadgroup(Ctx& c);
RedisReply cmd_xread(Ctx& c);
RedisReply cmd_xack(Ctx& c);
RedisReply cmd_xpending(Ctx& c);
RedisReply cmd_xclaim(Ctx& c);
RedisReply cmd_xautoclaim(Ctx& c);
// pubsub.cc
RedisReply cmd_publish(Ctx& c);
RedisReply cmd_psubscribe(Ctx& c);
RedisReply cmd_punsubscribe(Ctx& c);
RedisReply cmd_pubsub(Ctx& c);
RedisReply cmd_subscribe(Ctx& c);
RedisReply cmd_unsubscribe(Ctx& c);
// admin.cc
RedisReply cmd_select(Ctx& c);
RedisReply cmd_move(Ctx& c);
RedisReply cmd_swapdb(Ctx& c);
RedisReply cmd_flushdb(Ctx& c);
RedisReply cmd_hello(Ctx& c);
RedisReply cmd_acl(Ctx& c);
RedisReply cmd_auth(Ctx& c);
RedisReply cmd_client(Ctx& c);
RedisReply cmd_info(Ctx& c);
RedisReply cmd_config(Ctx& c);
RedisReply cmd_command(Ctx& c);
RedisReply cmd_function(Ctx& c);
RedisReply cmd_fcall(Ctx& c);
RedisReply cmd_fcall_ro(Ctx& c);
RedisReply cmd_debug(Ctx& c);
RedisReply cmd_cluster(Ctx& c);
RedisReply cmd_object(Ctx& c);
RedisReply cmd_rename(Ctx& c);
RedisReply cmd_renamenx(Ctx& c);
RedisReply cmd_randomkey(Ctx& c);
RedisReply cmd_scan(Ctx& c);
RedisReply cmd_hscan(Ctx& c);
RedisReply cmd_sscan(Ctx& c);
RedisReply cmd_zscan(Ctx& c);
RedisReply cmd_expiretime(Ctx& c);
RedisReply cmd_pexpiretime(Ctx& c);
// scripts.cc
// The keys and args of EVAL-like and FCALL-like argv (after numkeys, argv[2]). REQUIRES: numkeys
// parsed and checked against argc.
std::pair<std::vector<std::string>, std::vector<std::string>> keys_and_args(const Ctx& c);
RedisReply cmd_eval(Ctx& c);
RedisReply cmd_evalsha(Ctx& c);
RedisReply cmd_eval_ro(Ctx& c);
RedisReply cmd_evalsha_ro(Ctx& c);
RedisReply cmd_script(Ctx& c);

template <typename T>
bool Ctx::lookup(const std::string& key, T** out, RedisReply* error) {
  Entry* e = find(key);
  if (!e) {
    *out = nullptr;
    return true;
  }
  T* v = std::get_if<T>(&e->value);
  if (!v) {
    *error = err_wrongtype();
    return false;
  }
  *out = v;
  return true;
}

// The collection a blocking pop reads. A woken pop finds a key that another type took meanwhile
// not ready (serveClientsBlockedOnKey serves only the type it waits on) and waits on: *out = null,
// true. A new call gets WRONGTYPE: false.
template <typename T>
bool lookup_blocking_source(Ctx& c, const std::string& key, T** out, RedisReply* error) {
  if (c.lookup(key, out, error)) return true;
  if (!c.session.woken) return false;
  *out = nullptr;
  return true;
}

// The no-count form of HRANDFIELD and ZRANDMEMBER: nil for a missing key, else the name of the
// element pick(c, collection) chose.
template <typename T, typename Pick>
RedisReply random_element(Ctx& c, Pick pick) {
  T* collection = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &collection, &error)) return error;
  if (!collection) return RedisReply::nil();
  return RedisReply::bulk(pick(c, *collection).first);
}

}  // namespace fl::sim::redis
