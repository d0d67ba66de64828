// Engine: command table, dispatch, MULTI/EXEC, pub/sub routing state, maintenance and
// persistence. The commands themselves live in one file per family.
#include "sim/redis/engine.h"
#include "sim/redis/resp3.h"

#include <algorithm>
#include <iterator>

#include "sim/redis/commands.h"
#include "impl/ports/assert.h"

namespace fl::sim::redis {

// Redis's shared.noreplicaserr.
constexpr const char* kNoReplicasError = "NOREPLICAS Not enough good replicas to write.";

namespace {

enum Flag : uint32_t {
  kWrite = 1,          // changes the keyspace: journaled for AOF
  kPubSubOk = 2,       // allowed in subscribed (RESP2 pub/sub) context
  kNoScript = 4,       // not allowed from scripts
  kDenyOom = 8,        // refused with -OOM when used memory stays above maxmemory
  kNoKeys = 16,        // takes no key (COMMAND INFO's key positions are 0)
  kLoadingOk = 32,     // runs while the node loads its data (Redis's CMD_LOADING)
  kMayReplicate = 64,  // not a keyspace write, but propagated (PUBLISH): refused to read-only scripts
};

struct Spec {
  std::string_view name;  // full name, lower case: "get", "xgroup|create"
  int arity;              // Redis convention: n exact, -n at least n
  uint32_t flags;
  RedisReply (*fn)(Ctx&);
};

constexpr uint32_t kW = kWrite, kWD = kWrite | kDenyOom, kAdmin = kNoKeys | kLoadingOk;

// Redis 7.0's arities and flags for the supported commands.
constexpr Spec kCommands[] = {
    {"get", 2, 0, cmd_get},
    {"set", -3, kWD, cmd_set},
    {"setnx", 3, kWD, cmd_setnx},
    {"incr", 2, kWD, cmd_incr},
    {"incrby", 3, kWD, cmd_incrby},
    {"decr", 2, kWD, cmd_decr},
    {"decrby", 3, kWD, cmd_decrby},
    {"mget", -2, 0, cmd_mget},
    {"getdel", 2, kW, cmd_getdel},
    {"getex", -2, kW, cmd_getex},
    {"del", -2, kW, cmd_del},
    {"exists", -2, 0, cmd_exists},
    {"expire", -3, kW, cmd_expire},
    {"pexpire", -3, kW, cmd_pexpire},
    {"ttl", 2, 0, cmd_ttl},
    {"pttl", 2, 0, cmd_pttl},
    {"expiretime", 2, 0, cmd_expiretime},
    {"pexpiretime", 2, 0, cmd_pexpiretime},
    {"persist", 2, kW, cmd_persist},
    {"type", 2, 0, cmd_type},
    {"rename", 3, kW, cmd_rename},
    {"renamenx", 3, kW, cmd_renamenx},
    {"randomkey", 1, kNoKeys, cmd_randomkey},
    {"scan", -2, kNoKeys, cmd_scan},
    {"move", 3, kW, cmd_move},
    {"object", -2, 0, nullptr},
    {"memory", -2, kNoKeys, nullptr},
    {"spop", -2, kW, cmd_spop},
    {"srandmember", -2, 0, cmd_srandmember},
    {"hset", -4, kWD, cmd_hset},
    {"hsetnx", 4, kWD, cmd_hsetnx},
    {"hget", 3, 0, cmd_hget},
    {"hgetall", 2, 0, cmd_hgetall},
    {"hincrby", 4, kWD, cmd_hincrby},
    {"hdel", -3, kW, cmd_hdel},
    {"hlen", 2, 0, cmd_hlen},
    {"hscan", -3, 0, cmd_hscan},
    {"sadd", -3, kWD, cmd_sadd},
    {"srem", -3, kW, cmd_srem},
    {"sismember", 3, 0, cmd_sismember},
    {"smembers", 2, 0, cmd_smembers},
    {"scard", 2, 0, cmd_scard},
    {"sscan", -3, 0, cmd_sscan},
    {"sintercard", -3, 0, cmd_sintercard},
    {"sinter", -2, 0, cmd_sinter},
    {"sunion", -2, 0, cmd_sunion},
    {"sdiff", -2, 0, cmd_sdiff},
    {"sinterstore", -3, kWD, cmd_sinterstore},
    {"sunionstore", -3, kWD, cmd_sunionstore},
    {"sdiffstore", -3, kWD, cmd_sdiffstore},
    {"zadd", -4, kWD, cmd_zadd},
    {"zincrby", 4, kWD, cmd_zincrby},
    {"zscore", 3, 0, cmd_zscore},
    {"zrem", -3, kW, cmd_zrem},
    {"zmscore", -3, 0, cmd_zmscore},
    {"zpopmin", -2, kW, cmd_zpopmin},
    {"zpopmax", -2, kW, cmd_zpopmax},
    {"zmpop", -4, kW | kNoKeys, cmd_zmpop},
    {"bzmpop", -5, kW | kNoKeys, cmd_bzmpop},
    {"bzpopmin", -3, kW | kNoScript, cmd_bzpopmin},
    {"bzpopmax", -3, kW | kNoScript, cmd_bzpopmax},
    {"zrandmember", -2, 0, cmd_zrandmember},
    {"sort", -2, kWD, cmd_sort},
    {"sort_ro", -2, 0, cmd_sort_ro},
    {"zcard", 2, 0, cmd_zcard},
    {"zrange", -4, 0, cmd_zrange},
    {"zrevrange", -4, 0, cmd_zrevrange},
    {"zscan", -3, 0, cmd_zscan},
    {"zrangestore", -5, kWD, cmd_zrangestore},
    {"zrangebyscore", -4, 0, cmd_zrangebyscore},
    {"zrevrangebyscore", -4, 0, cmd_zrevrangebyscore},
    {"zrangebylex", -4, 0, cmd_zrangebylex},
    {"zrevrangebylex", -4, 0, cmd_zrevrangebylex},
    {"zcount", 4, 0, cmd_zcount},
    {"zlexcount", 4, 0, cmd_zlexcount},
    {"zremrangebyscore", 4, kW, cmd_zremrangebyscore},
    {"zremrangebylex", 4, kW, cmd_zremrangebylex},
    {"zremrangebyrank", 4, kW, cmd_zremrangebyrank},
    {"zunion", -3, kNoKeys, cmd_zunion},
    {"zinter", -3, kNoKeys, cmd_zinter},
    {"zdiff", -3, kNoKeys, cmd_zdiff},
    {"zintercard", -3, kNoKeys, cmd_zintercard},
    {"zunionstore", -4, kWD, cmd_zunionstore},
    {"zinterstore", -4, kWD, cmd_zinterstore},
    {"zdiffstore", -4, kWD, cmd_zdiffstore},
    {"hrandfield", -2, 0, cmd_hrandfield},
    {"setrange", 4, kWD, cmd_setrange},
    {"setbit", 4, kWD, cmd_setbit},
    {"getbit", 3, 0, cmd_getbit},
    {"getrange", 4, 0, cmd_getrange},
    {"substr", 4, 0, cmd_getrange},
    {"lcs", -3, 0, cmd_lcs},
    {"strlen", 2, 0, cmd_strlen},
    {"setex", 4, kWD, cmd_setex},
    {"psetex", 4, kWD, cmd_psetex},
    {"getset", 3, kWD, cmd_getset},
    {"mset", -3, kWD, cmd_mset},
    {"msetnx", -3, kWD, cmd_msetnx},
    {"append", 3, kWD, cmd_append},
    {"incrbyfloat", 3, kWD, cmd_incrbyfloat},
    {"unlink", -2, kW, cmd_unlink},
    {"touch", -2, 0, cmd_touch},
    {"keys", 2, kNoKeys, cmd_keys},
    {"copy", -3, kWD, cmd_copy},
    {"time", 1, kNoKeys | kLoadingOk, cmd_time},
    {"hmset", -4, kWD, cmd_hmset},
    {"hmget", -3, 0, cmd_hmget},
    {"hexists", 3, 0, cmd_hexists},
    {"hkeys", 2, 0, cmd_hkeys},
    {"hvals", 2, 0, cmd_hvals},
    {"hstrlen", 3, 0, cmd_hstrlen},
    {"hincrbyfloat", 4, kWD, cmd_hincrbyfloat},
    {"smismember", -3, 0, cmd_smismember},
    {"smove", 4, kW, cmd_smove},
    {"zrank", 3, 0, cmd_zrank},
    {"zrevrank", 3, 0, cmd_zrevrank},
    {"expireat", -3, kW, cmd_expireat},
    {"pexpireat", -3, kW, cmd_pexpireat},
    {"lpush", -3, kWD, cmd_lpush},
    {"rpush", -3, kWD, cmd_rpush},
    {"lpushx", -3, kWD, cmd_lpushx},
    {"rpushx", -3, kWD, cmd_rpushx},
    {"lpop", -2, kW, cmd_lpop},
    {"rpop", -2, kW, cmd_rpop},
    {"llen", 2, 0, cmd_llen},
    {"lrange", 4, 0, cmd_lrange},
    {"lindex", 3, 0, cmd_lindex},
    {"lset", 4, kWD, cmd_lset},
    {"lrem", 4, kW, cmd_lrem},
    {"ltrim", 4, kW, cmd_ltrim},
    {"linsert", 5, kWD, cmd_linsert},
    {"lpos", -3, 0, cmd_lpos},
    {"lmove", 5, kWD, cmd_lmove},
    {"rpoplpush", 3, kWD, cmd_rpoplpush},
    {"lmpop", -4, kW | kNoKeys, cmd_lmpop},
    {"blpop", -3, kW | kNoScript, cmd_blpop},
    {"brpop", -3, kW | kNoScript, cmd_brpop},
    {"blmove", 6, kWD | kNoScript, cmd_blmove},
    {"brpoplpush", 4, kWD | kNoScript, cmd_brpoplpush},
    {"blmpop", -5, kW | kNoKeys, cmd_blmpop},
    {"xadd", -5, kWD, cmd_xadd},
    {"xtrim", -4, kW, cmd_xtrim},
    {"xlen", 2, 0, cmd_xlen},
    {"xrange", -4, 0, cmd_xrange},
    {"xrevrange", -4, 0, cmd_xrevrange},
    {"xdel", -3, kW, cmd_xdel},
    {"xreadgroup", -7, kW, cmd_xreadgroup},
    {"xack", -4, kW, cmd_xack},
    {"xread", -4, 0, cmd_xread},
    {"xpending", -3, 0, cmd_xpending},
    {"xclaim", -6, kW, cmd_xclaim},
    {"xautoclaim", -6, kW, cmd_xautoclaim},
    {"publish", 3, kAdmin | kMayReplicate, cmd_publish},
    {"psubscribe", -2, kPubSubOk | kNoScript | kAdmin, cmd_psubscribe},
    {"punsubscribe", -1, kPubSubOk | kNoScript | kAdmin, cmd_punsubscribe},
    {"pubsub", -2, kAdmin, nullptr},
    {"subscribe", -2, kPubSubOk | kNoScript | kAdmin, cmd_subscribe},
    {"unsubscribe", -1, kPubSubOk | kNoScript | kAdmin, cmd_unsubscribe},
    {"eval", -3, kNoScript | kNoKeys, cmd_eval},
    {"evalsha", -3, kNoScript | kNoKeys, cmd_evalsha},
    {"eval_ro", -3, kNoScript | kNoKeys, cmd_eval_ro},
    {"evalsha_ro", -3, kNoScript | kNoKeys, cmd_evalsha_ro},
    {"fcall", -3, kNoScript | kNoKeys, cmd_fcall},
    {"fcall_ro", -3, kNoScript | kNoKeys, cmd_fcall_ro},
    {"ping", -1, kPubSubOk | kNoKeys, cmd_ping},
    {"echo", 2, kNoKeys, cmd_echo},
    {"flushall", -1, kW | kNoKeys, cmd_flushall},
    {"flushdb", -1, kW | kNoKeys, cmd_flushdb},
    {"dbsize", 1, kNoKeys, cmd_dbsize},
    {"select", 2, kAdmin, cmd_select},
    {"swapdb", 3, kW | kNoKeys, cmd_swapdb},
    {"hello", -1, kNoScript | kAdmin, cmd_hello},
    {"auth", -2, kNoScript | kAdmin | kPubSubOk, cmd_auth},
    {"acl", -2, kNoScript | kAdmin, nullptr},
    {"info", -1, kAdmin, cmd_info},
    {"debug", -2, kNoScript | kAdmin, cmd_debug},
    {"cluster", -2, kNoScript | kAdmin, cmd_cluster},
    // Handled by the engine itself (fn unused), listed for lookup and arity.
    {"multi", 1, kNoScript | kAdmin, nullptr},
    {"exec", 1, kNoScript | kAdmin, nullptr},
    {"discard", 1, kNoScript | kAdmin, nullptr},
    {"watch", -2, kNoScript | kLoadingOk, cmd_watch},
    {"unwatch", 1, kNoScript | kNoKeys | kLoadingOk, cmd_unwatch},
    // Containers: listed for COMMAND; resolve() dispatches on the subcommand.
    {"xgroup", -2, 0, nullptr},
    {"script", -2, kNoScript | kNoKeys, nullptr},
    {"client", -2, kNoScript | kAdmin, nullptr},
    {"config", -2, kAdmin, nullptr},
    {"command", -1, kAdmin, cmd_command},
    {"function", -2, kNoScript | kNoKeys, nullptr},
    {"xinfo", -2, 0, nullptr},
};

// Container commands: the subcommand decides arity and flags; each family's function switches
// on argv[1].
constexpr Spec kSubcommands[] = {
    {"acl|setuser", -3, kNoScript | kAdmin, cmd_acl},
    {"acl|deluser", -3, kNoScript | kAdmin, cmd_acl},
    {"acl|users", 2, kNoScript | kAdmin, cmd_acl},
    {"acl|whoami", 2, kNoScript | kAdmin, cmd_acl},
    {"pubsub|channels", -2, kAdmin, cmd_pubsub},
    {"pubsub|numsub", -2, kAdmin, cmd_pubsub},
    {"pubsub|numpat", 2, kAdmin, cmd_pubsub},
    {"xgroup|create", -5, kWD, cmd_xgroup},
    {"xgroup|destroy", 4, kW, cmd_xgroup},
    {"xgroup|createconsumer", 5, kWD, cmd_xgroup},
    {"xgroup|delconsumer", 5, kW, cmd_xgroup},
    {"xgroup|setid", -5, kW, cmd_xgroup},
    {"script|load", 3, kNoScript | kNoKeys, cmd_script},
    {"script|exists", -3, kNoScript | kNoKeys, cmd_script},
    {"script|flush", -2, kNoScript | kNoKeys, cmd_script},
    {"script|kill", 2, kNoScript | kNoKeys, cmd_script},
    {"client|setname", 3, kNoScript | kAdmin, cmd_client},
    {"client|getname", 2, kNoScript | kAdmin, cmd_client},
    {"client|id", 2, kNoScript | kAdmin, cmd_client},
    {"client|info", 2, kNoScript | kAdmin, cmd_client},
    {"client|list", -2, kNoScript | kAdmin, cmd_client},
    {"config|get", -3, kNoScript | kAdmin, cmd_config},
    {"config|set", -4, kNoScript | kAdmin, cmd_config},
    {"config|resetstat", 2, kNoScript | kAdmin, cmd_config},
    {"config|rewrite", 2, kNoScript | kAdmin, cmd_config},
    {"function|flush", -2, kNoScript | kW | kNoKeys, cmd_function},
    {"function|list", -2, kNoScript | kNoKeys, cmd_function},
    {"function|load", -3, kNoScript | kWD | kNoKeys, cmd_function},
    {"function|delete", 3, kNoScript | kW | kNoKeys, cmd_function},
    {"function|kill", 2, kNoScript | kNoKeys, cmd_function},
    {"object|encoding", 3, 0, cmd_object},
    {"object|refcount", 3, 0, cmd_object},
    {"object|idletime", 3, 0, cmd_object},
    {"object|freq", 3, 0, cmd_object},
    {"object|help", 2, kNoKeys | kLoadingOk, cmd_object},
    {"memory|usage", -3, 0, cmd_memory_usage},
    {"xinfo|stream", -3, 0, cmd_xinfo},
    {"xinfo|groups", 3, 0, cmd_xinfo},
    {"xinfo|consumers", 4, 0, cmd_xinfo},
    {"xinfo|help", 2, kNoKeys | kLoadingOk, cmd_xinfo},
};

const Spec* find_spec(std::string_view lower_name) {
  // Sizes and first letters first: resolve() runs for every command, nested and replayed ones too.
  const auto matches = [&](const Spec& s) {
    return s.name.size() == lower_name.size() && s.name[0] == lower_name[0] && s.name == lower_name;
  };
  if (lower_name.empty()) return nullptr;
  for (const Spec& s : kCommands) {
    if (matches(s)) return &s;
  }
  for (const Spec& s : kSubcommands) {
    if (matches(s)) return &s;
  }
  return nullptr;
}

bool is_container(std::string_view n) {
  return n == "acl" || n == "xgroup" || n == "script" || n == "client" || n == "config" || n == "function" ||
         n == "object" || n == "xinfo" || n == "memory" || n == "pubsub";
}

// ACL categories (acl.h): the names each one holds in Redis 7.0's command table, for the commands
// the simulation has; read and write follow the table's flags.
bool in_category(std::string_view category, const Spec& s) {
  const auto one_of = [&](std::initializer_list<std::string_view> names) {
    const std::string_view base = s.name.substr(0, s.name.find('|'));
    return std::find(names.begin(), names.end(), base) != names.end();
  };
  if (category == "scripting")
    return one_of({"eval", "evalsha", "eval_ro", "evalsha_ro", "script", "function", "fcall", "fcall_ro"});
  if (category == "pubsub")
    return one_of({"publish", "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "pubsub"});
  if (category == "transaction") return one_of({"multi", "exec", "discard", "watch", "unwatch"});
  if (category == "connection") return one_of({"auth", "hello", "ping", "echo", "select", "client", "reset", "quit"});
  if (category == "write") return (s.flags & kWrite) != 0;
  if (category == "read") return !(s.flags & (kWrite | kNoKeys)) && s.fn != nullptr && !(s.flags & kAdmin);
  return false;
}

bool arity_ok(const Spec& s, size_t argc) {
  return s.arity >= 0 ? argc == static_cast<size_t>(s.arity) : argc >= static_cast<size_t>(-s.arity);
}

// A command name ("get", or "xgroup|create" from two arguments) folded to lower case in a fixed
// buffer, so that resolving a command allocates nothing. A name longer than every table entry
// matches none: it does not fit, and view() is then empty (which matches no entry either).
class FoldedName {
 public:
  explicit FoldedName(std::string_view name) {
    if (name.size() > sizeof buf_) return;
    fold(buf_, name);
    len_ = name.size();
  }
  FoldedName(std::string_view container, std::string_view sub) {
    const size_t len = container.size() + 1 + sub.size();
    if (len > sizeof buf_) return;
    fold(buf_, container);
    buf_[container.size()] = '|';
    fold(buf_ + container.size() + 1, sub);
    len_ = len;
  }
  std::string_view view() const { return {buf_, len_}; }

 private:
  static void fold(char* out, std::string_view s) {
    for (char ch : s) *out++ = ascii_lower(ch);
  }
  char buf_[32];
  size_t len_ = 0;
};

constexpr size_t longest_name() {
  size_t n = 0;
  for (const Spec& s : kCommands) n = std::max(n, s.name.size());
  for (const Spec& s : kSubcommands) n = std::max(n, s.name.size());
  return n;
}
static_assert(longest_name() <= 32, "FoldedName's buffer must hold every command name");

// Looks up argv's command; on failure *error is the reply Redis's processCommand gives.
const Spec* resolve(const std::vector<std::string>& argv, RedisReply* error) {
  const FoldedName folded(argv[0]);
  const std::string_view name = folded.view();
  if (is_container(name)) {
    if (argv.size() < 2) {
      *error = err_arity(name);
      return nullptr;
    }
    const Spec* sub = find_spec(FoldedName(argv[0], argv[1]).view());
    if (!sub) {
      std::string upper(name);
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      *error = RedisReply::error("ERR unknown subcommand '" + argv[1].substr(0, 128) + "'. Try " + upper + " HELP.");
      return nullptr;
    }
    if (!arity_ok(*sub, argv.size())) {
      *error = err_arity(sub->name);
      return nullptr;
    }
    return sub;
  }
  const Spec* spec = find_spec(name);
  if (!spec) {
    std::string args;
    for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
      const size_t room = 128 - args.size();
      args += "'" + argv[i].substr(0, room) + "' ";
    }
    *error =
        RedisReply::error("ERR unknown command '" + argv[0].substr(0, 128) + "', with args beginning with: " + args);
    return nullptr;
  }
  if (!arity_ok(*spec, argv.size())) {
    *error = err_arity(spec->name);
    return nullptr;
  }
  return spec;
}

}  // namespace

std::vector<std::string_view> commands_in_category(std::string_view category, bool* known) {
  static constexpr std::string_view kCategories[] = {"scripting",  "pubsub", "transaction",
                                                     "connection", "read",   "write"};
  *known = std::find(std::begin(kCategories), std::end(kCategories), category) != std::end(kCategories);
  std::vector<std::string_view> out;
  if (!*known) return out;
  for (const Spec& s : kCommands) {
    if (in_category(category, s)) out.push_back(s.name);
  }
  for (const Spec& s : kSubcommands) {
    if (in_category(category, s)) out.push_back(s.name);
  }
  return out;
}

bool command_known(std::string_view lower_name) { return find_spec(lower_name) != nullptr; }

namespace {

// The keys an ACL key pattern must match: a script's or function's KEYS, every argument of the
// commands that take only keys, MSET's keys, else the first argument (Redis reads the command
// table's key specs; these are the shapes of the commands the simulation has).
std::vector<std::string_view> acl_keys(const Spec& s, const std::vector<std::string>& argv) {
  std::vector<std::string_view> keys;
  const std::string_view name = s.name;
  if (name == "eval" || name == "evalsha" || name == "eval_ro" || name == "evalsha_ro" || name == "fcall" ||
      name == "fcall_ro") {
    const auto n = parse_int64(argv[2]);
    for (size_t j = 3; n && *n > 0 && j < argv.size() && j < 3 + static_cast<size_t>(*n); ++j) keys.push_back(argv[j]);
    return keys;
  }
  if ((s.flags & kNoKeys) || (s.flags & kAdmin) || argv.size() < 2) return keys;
  if (name == "mset" || name == "msetnx") {
    for (size_t j = 1; j < argv.size(); j += 2) keys.push_back(argv[j]);
    return keys;
  }
  static constexpr std::string_view kAllKeys[] = {"del",    "unlink", "exists", "touch",   "mget",      "sinter",
                                                  "sunion", "sdiff",  "watch",  "pfcount", "sintercard"};
  if (std::find(std::begin(kAllKeys), std::end(kAllKeys), name) != std::end(kAllKeys)) {
    for (size_t j = 1; j < argv.size(); ++j) keys.push_back(argv[j]);
    return keys;
  }
  keys.push_back(argv[1]);
  return keys;
}

// The flags processCommand gates a command by: a script's own when it has a "#!lua" line
// (evalGetCommandFlags: deny-oom unless allow-oom or no-writes, a write unless no-writes), else
// the table's.
uint32_t gate_flags(const Spec& s, const std::vector<std::string>& argv,
                    const std::map<std::string, std::string, std::less<>>& loaded) {
  const bool by_sha = s.fn == cmd_evalsha || s.fn == cmd_evalsha_ro;
  if ((!by_sha && s.fn != cmd_eval && s.fn != cmd_eval_ro) || argv.size() < 2) return s.flags;
  std::string_view body = argv[1];
  if (by_sha) {
    char folded[40];
    if (argv[1].size() != sizeof folded) return s.flags;
    std::transform(argv[1].begin(), argv[1].end(), folded, ascii_lower);
    const auto it = loaded.find(std::string_view(folded, sizeof folded));
    if (it == loaded.end()) return s.flags;
    body = it->second;
  }
  if (body.substr(0, 2) != "#!") return s.flags;
  const auto parsed = shebang_flags(body);
  const ScriptFlags* f = std::get_if<ScriptFlags>(&parsed);
  if (f == nullptr) return s.flags;
  uint32_t flags = s.flags & ~(kDenyOom | kWrite | kMayReplicate);
  if (!f->allow_oom && !f->no_writes) flags |= kDenyOom;
  if (!f->no_writes) flags |= kWrite;
  return flags;
}

enum class AclDenial { kNone, kCommand, kKey };

// What stops the session's user from running `argv` (ACLCheckAllUserCommandPerm): AUTH and HELLO
// (CMD_NO_AUTH) are open to everyone; a user ACL DELUSER removed may run nothing else.
AclDenial acl_denial(const std::map<std::string, AclUser>& users, const Session& session, const Spec& s,
                     const std::vector<std::string>& argv) {
  const auto it = users.find(session.user);
  const AclUser* user = it == users.end() ? nullptr : &it->second;
  if ((user != nullptr && user->unrestricted()) || s.fn == cmd_auth || s.fn == cmd_hello) return AclDenial::kNone;
  if (user == nullptr || !acl_allows_command(*user, s.name)) return AclDenial::kCommand;
  for (std::string_view key : acl_keys(s, argv)) {
    if (!acl_allows_key(*user, key)) return AclDenial::kKey;
  }
  return AclDenial::kNone;
}

}  // namespace

// ---- Ctx (declared in commands.h).

Entry* Ctx::find(const std::string& key) {
  const uint64_t before = engine.stats_.expired_lazy;
  Entry* e = ks.find(key, now_ms, &engine.stats_.expired_lazy);
  if (!live()) return e;
  // Redis propagates an expiry as a DEL to the AOF (deleteExpiredKeyAndPropagate): a restart must
  // not bring back a key that had expired and been deleted, even if the clock went back meanwhile.
  if (engine.stats_.expired_lazy != before) {
    const int db = static_cast<int>(&ks - engine.live_.data());
    engine.journal_del(key, now_ms, db);
    engine.notify(db, kNotifyExpired, "expired", key);
  }
  if (!e) {
    ++engine.stats_.keyspace_misses;
    return nullptr;
  }
  ++engine.stats_.keyspace_hits;
  // Redis's lookupKey touches the object: LRU clock, or the LFU counter under an LFU policy.
  e->access_ms = now_ms;
  if (engine.options_.maxmemory_policy.find("lfu") != std::string::npos) {
    const int64_t minute = now_ms / 60'000;
    if (e->lfu_minute == 0) e->lfu_minute = minute;  // a new object: its counter starts now
    const int64_t decay = engine.options_.lfu_decay_time;
    if (decay > 0 && minute > e->lfu_minute) {
      const int64_t periods = (minute - e->lfu_minute) / decay;
      e->lfu_counter = static_cast<uint8_t>(periods > e->lfu_counter ? 0 : e->lfu_counter - periods);
    }
    e->lfu_minute = minute;
    if (e->lfu_counter < 255) {
      // LFULogIncr: p = 1 / ((counter - LFU_INIT_VAL) * lfu_log_factor + 1).
      const double r = static_cast<double>(engine.next_random() >> 11) / 9007199254740992.0;
      const double base = std::max(0, e->lfu_counter - 5);
      if (r < 1.0 / (base * engine.options_.lfu_log_factor + 1)) ++e->lfu_counter;
    }
  }
  return e;
}

bool Ctx::live() const { return &ks >= engine.live_.data() && &ks < engine.live_.data() + engine.live_.size(); }
std::vector<Keyspace>& Ctx::dbs() { return live() ? engine.live_ : engine.durable_; }
EngineOptions& Ctx::options() { return engine.options_; }
std::map<uint64_t, ClientInfo>& Ctx::clients() { return engine.clients_; }
int64_t Ctx::start_ms() const { return engine.start_ms_; }
uint64_t Ctx::random() { return engine.next_random(); }
uint64_t& Ctx::lua_rand48() { return engine.lua_rand48_; }
LuaEvalState& Ctx::lua_eval() { return engine.lua_eval_; }
std::map<std::string, AclUser>& Ctx::acl_users() { return engine.acl_users_; }
std::optional<bool> Ctx::acl_permits(const std::vector<std::string>& argv) {
  RedisReply error;
  const Spec* spec = argv.empty() ? nullptr : resolve(argv, &error);
  if (spec == nullptr) return std::nullopt;
  return acl_denial(engine.acl_users_, session, *spec, argv) == AclDenial::kNone;
}
void Ctx::set_script_read_only(bool read_only) { engine.script_read_only_ = read_only; }
bool Ctx::script_read_only() const { return engine.script_read_only_; }
void Ctx::set_script_allow_oom(bool allow_oom) { engine.script_allow_oom_ = allow_oom; }

void Ctx::begin_script(bool eval) {
  if (!live()) return;
  engine.script_ = Engine::RunningScript{.running = true, .eval = eval};
}

void Ctx::end_script() {
  if (live()) engine.script_ = Engine::RunningScript{};
}

bool Ctx::script_hook(bool* has_hook) {
  *has_hook = live() && engine.script_hook_ && engine.script_.running;
  if (!*has_hook) return false;
  engine.script_hook_();
  return engine.script_.killed;
}

RedisReply Ctx::kill_script(bool eval) {
  Engine::RunningScript& s = engine.script_;
  if (!s.running || !s.busy) return RedisReply::error("NOTBUSY No scripts in execution right now.");
  if (engine.script_dirty_) {
    return RedisReply::error(
        "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the "
        "script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.");
  }
  if (eval != s.eval) return RedisReply::error(refusal_error(Refusal::kBusy, s.eval));
  s.killed = true;
  return RedisReply::ok();
}
Refusal Ctx::refusal() const { return engine.refusal_; }

void Ctx::signal(const std::string& key) { signal_in(session.db, key); }
void Ctx::signal_in(int db, const std::string& key) {
  if (live()) engine.signaled_.insert(Engine::wait_key(db, key));
}

std::string Engine::wait_key(int db, const std::string& key) {
  return db == 0 ? key : std::to_string(db) + std::string(1, '\0') + key;
}

std::string Ctx::name() const { return lower(argv[0]); }

std::map<std::string, std::set<uint64_t>, std::less<>>& Ctx::channels() { return engine.channels_; }
std::map<std::string, std::set<uint64_t>, std::less<>>& Ctx::patterns() { return engine.patterns_; }
std::map<std::string, FunctionLibrary>& Ctx::libraries() { return engine.libraries_; }
std::vector<PubSubDelivery>& Ctx::deliveries() { return engine.deliveries_; }
void Ctx::observe_publish(const std::string& channel, const std::string& payload) {
  if (engine.publish_observer_ && live()) engine.publish_observer_(channel, payload);
}
std::map<std::string, std::string, std::less<>>& Ctx::loaded_scripts() { return engine.loaded_scripts_; }
EngineStats& Ctx::stats() { return engine.stats_; }

namespace {
size_t spec_index(const Spec* spec);  // below, with the command table's counters
}  // namespace

RedisReply Ctx::call_nested(std::vector<std::string> args) {
  if (args.empty()) return RedisReply::error("ERR Please specify at least one argument for this redis lib call");
  RedisReply error;
  const Spec* spec = resolve(args, &error);
  if (!spec) {
    RedisReply e = RedisReply::error(error.str.rfind("ERR wrong number", 0) == 0
                                         ? "ERR Wrong number of args calling Redis command from script"
                                         : "ERR Unknown Redis command called from script");
    engine.count_error(e.str);  // scriptCall's error path: afterErrorReply, no command to charge
    return e;
  }
  // scriptCall's error path: the command is charged a rejected call, its error counted.
  const auto reject = [&](RedisReply e) {
    engine.count_script_call(spec_index(spec), /*refused=*/true, e);
    return e;
  };
  if (spec->flags & kNoScript) return reject(RedisReply::error("ERR This Redis command is not allowed from script"));
  // scriptCall's ACL check: the script runs as its caller's user.
  switch (acl_denial(engine.acl_users_, session, *spec, args)) {
    case AclDenial::kNone:
      break;
    case AclDenial::kCommand:
      return reject(RedisReply::error("ERR The user executing the script can't run this command or subcommand"));
    case AclDenial::kKey:
      return reject(
          RedisReply::error("ERR The user executing the script can't access at least one of the keys mentioned in the "
                            "command arguments"));
  }
  // scriptVerifyWriteCommandAllow: EVAL_RO/EVALSHA_RO refuse writes and may-replicate commands first.
  if (engine.script_read_only_ && (spec->flags & (kWrite | kMayReplicate))) {
    return reject(RedisReply::error("ERR Write commands are not allowed from read-only scripts."));
  }
  // scriptVerifyWriteCommandAllow: a write before the script's first one needs good replicas.
  if ((spec->flags & kWrite) && !engine.script_dirty_ && engine.lacks_good_replicas()) {
    return reject(RedisReply::error(kNoReplicasError));
  }
  // A script's writes meet the same walls as a client's (scriptCall's deny-write and OOM checks).
  const Refusal r = engine.refusal_;
  // scriptVerifyOOM: a denyoom call is refused only while the script has not written yet (a
  // script that started writing runs to the end, so it is never left half done by OOM).
  std::optional<RedisReply> refused;
  const bool oom_applies = (spec->flags & kDenyOom) && !engine.script_dirty_ && !engine.script_allow_oom_;
  if (live() && (((r == Refusal::kReadonly) && (spec->flags & kWrite)) || ((r == Refusal::kOom) && oom_applies))) {
    ++engine.stats_.refused;
    refused = RedisReply::error(refusal_error(r));
  } else if (live() && engine.options_.maxmemory > 0 && oom_applies &&
             engine.used_memory() > engine.options_.maxmemory) {
    refused = RedisReply::error(refusal_error(Refusal::kOom));
  }
  if (refused) {
    engine.observe_last_use(std::move(args), *refused, now_ms, 1);  // the judges see the refused call too
    return reject(std::move(*refused));
  }
  Ctx nested{engine, dbs()[static_cast<size_t>(session.db)], session, args, now_ms, /*in_script=*/true, in_exec};
  nested.from_script = true;
  RedisReply reply = spec->fn(nested);
  if (!reply.is_error()) engine.after_write(nested, spec->flags, spec->fn);
  if (!reply.is_error() && (spec->flags & kWrite)) engine.script_dirty_ = true;
  engine.count_script_call(spec_index(spec), /*refused=*/false, reply);
  if (live()) engine.observe_last_use(std::move(args), reply, now_ms, 1);
  return reply;
}

std::vector<CommandMeta> command_table() {
  std::vector<CommandMeta> out;
  for (const Spec& s : kCommands) {
    out.push_back(CommandMeta{s.name, s.arity, (s.flags & kWrite) != 0, (s.flags & kDenyOom) != 0,
                              (s.flags & kNoKeys) != 0, (s.flags & kLoadingOk) != 0});
  }
  return out;
}

std::optional<CommandMeta> command_meta(std::string_view lower_name) {
  for (const CommandMeta& m : command_table()) {
    if (m.name == lower_name) return m;
  }
  return std::nullopt;
}

const char* refusal_name(Refusal r) {
  switch (r) {
    case Refusal::kNone:
      return "none";
    case Refusal::kOom:
      return "oom";
    case Refusal::kLoading:
      return "loading";
    case Refusal::kBusy:
      return "busy";
    case Refusal::kReadonly:
      return "readonly";
  }
  return "?";
}

std::string refusal_error(Refusal r, bool eval) {
  switch (r) {
    case Refusal::kNone:
      return "";
    case Refusal::kOom:
      return "OOM command not allowed when used memory > 'maxmemory'.";
    case Refusal::kLoading:
      return "LOADING Redis is loading the dataset in memory";
    case Refusal::kBusy:
      return eval ? "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
                  : "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
    case Refusal::kReadonly:
      return "READONLY You can't write against a read only replica.";
  }
  return "";
}

// ---- Engine.

namespace {

constexpr size_t kCommandCount = std::size(kCommands);
constexpr size_t kSpecCount = kCommandCount + std::size(kSubcommands);

size_t spec_index(const Spec* spec) {
  if (spec >= std::begin(kCommands) && spec < std::end(kCommands)) return static_cast<size_t>(spec - kCommands);
  FL_ASSERT(spec >= std::begin(kSubcommands) && spec < std::end(kSubcommands));
  return kCommandCount + static_cast<size_t>(spec - kSubcommands);
}

const Spec& spec_at(size_t index) {
  return index < kCommandCount ? kCommands[index] : kSubcommands[index - kCommandCount];
}

}  // namespace

// call()'s and rejectCommand's bookkeeping: a queued command is counted when EXEC runs it (not
// here), an error reply counts under its first word.
void Engine::count_error(const std::string& error) {
  const std::string_view prefix = std::string_view(error).substr(0, error.find(' '));
  auto it = error_stats_.find(prefix);  // no allocation once the prefix is known
  if (it == error_stats_.end()) it = error_stats_.emplace(std::string(prefix), 0).first;
  ++it->second;
}

void Engine::charge(size_t spec, bool refused, bool failed) {
  if (command_counters_.empty()) command_counters_.resize(kSpecCount);
  CommandCounters& n = command_counters_[spec];
  if (refused) {
    ++n.rejected;
  } else {
    ++n.calls;
    if (failed) ++n.failed;
  }
}

void Engine::count_script_call(size_t spec, bool refused, const RedisReply& reply) {
  if (reply.is_error()) count_error(reply.str);
  charge(spec, refused, reply.is_error());
}

void Engine::count_command(const RedisReply& reply) {
  if (reply.is_error() && !std::exchange(script_error_counted_, false)) count_error(reply.str);
  if (dispatched_spec_ == kNoSpec) return;
  if (reply.kind == RedisReply::Kind::kStatus && reply.str == "QUEUED") return;
  charge(dispatched_spec_, dispatched_rejected_, reply.is_error());
}

std::vector<std::pair<std::string_view, CommandCounters>> Engine::command_stats() const {
  std::vector<std::pair<std::string_view, CommandCounters>> out;
  for (size_t i = 0; i < command_counters_.size(); ++i) {
    const CommandCounters& n = command_counters_[i];
    if (n.calls + n.rejected > 0) out.emplace_back(spec_at(i).name, n);
  }
  return out;
}

void Engine::reset_command_stats() {
  command_counters_.clear();
  error_stats_.clear();
}

const char* persistence_mode_name(PersistenceMode m) {
  switch (m) {
    case PersistenceMode::kNone:
      return "none";
    case PersistenceMode::kAofEverysec:
      return "aof-everysec";
    case PersistenceMode::kSnapshot:
      return "snapshot";
  }
  return "?";
}

std::optional<PersistenceMode> parse_persistence_mode(std::string_view name) {
  if (name == "none") return PersistenceMode::kNone;
  if (name == "aof-everysec" || name == "aof") return PersistenceMode::kAofEverysec;
  if (name == "snapshot" || name == "rdb") return PersistenceMode::kSnapshot;
  return std::nullopt;
}

Engine::Engine(EngineOptions options)
    : options_(std::move(options)), live_(kDatabases), durable_(kDatabases), rng_state_(options_.random_seed) {
  FL_ASSERT(options_.aof_fsync_interval_ms > 0);
  FL_ASSERT(options_.snapshot_interval_ms > 0);
  FL_ASSERT(options_.active_expire_keys_per_loop > 0);
  track_new_keys();
}

Engine::~Engine() = default;

RedisReply Engine::execute(Session& session, const std::vector<std::string>& argv, int64_t now_ms) {
  // A command served from the script hook while a script runs leaves the script's flags alone
  // (SCRIPT KILL reads whether it wrote).
  if (script_.running) {
    const bool dirty = script_dirty_, read_only = script_read_only_;
    RedisReply reply = execute_command(session, argv, now_ms);
    script_dirty_ = dirty;
    script_read_only_ = read_only;
    return reply;
  }
  script_dirty_ = false;
  script_read_only_ = false;
  return execute_command(session, argv, now_ms);
}

RedisReply Engine::execute_command(Session& session, const std::vector<std::string>& argv, int64_t now_ms) {
  ++stats_.commands;
  session.woken = session.blocked.has_value();
  session.blocked.reset();
  if (argv.empty()) return RedisReply::error("ERR empty command");
  if (start_ms_ < 0) start_ms_ = now_ms;
  auto [client, fresh] = clients_.try_emplace(session.id);
  if (fresh) client->second.created_ms = now_ms;
  dispatched_spec_ = kNoSpec;
  dispatched_rejected_ = false;
  script_error_counted_ = false;
  RedisReply reply = dispatch(session, argv, now_ms, /*in_script=*/false);
  if (!session.blocked) count_command(reply);  // call(): a command that blocked counts when it ends
  if (session.protocol == 3) shape_for_resp3(argv, &reply);
  client = clients_.try_emplace(session.id).first;  // CLIENT commands may have touched the map
  client->second.name = session.name;
  client->second.db = session.db;
  client->second.protocol = session.protocol;
  client->second.last_ms = now_ms;
  assign_lower(&client->second.last_command, argv[0]);
  session.woken = false;
  observe(argv, reply, now_ms, 0);
  return reply;
}

uint64_t Engine::next_random() {
  return splitmix64(&rng_state_);  // the engine's own stream, seeded by EngineOptions::random_seed
}

// After a command that succeeded: journal a write for the AOF, and keep the object metadata of
// the key it wrote (argv[1]) as Redis does for a new or modified object.
void Engine::after_write(Ctx& ctx, uint32_t flags, CommandFn fn) {
  if (!(flags & kWrite)) return;
  if (ctx.live()) {
    announce_new_keys();  // a key the command added without an event of its own
    journal_write(ctx.argv, ctx.now_ms, ctx.session.db, fn);
  }
  if ((flags & kNoKeys) || ctx.argv.size() < 2) return;
  auto it = ctx.ks.entries().find(ctx.argv[1]);
  if (it == ctx.ks.entries().end()) return;
  Entry& e = const_cast<Entry&>(it->second);
  update_encoding(e, options_);
  if (e.access_ms == 0) e.access_ms = ctx.now_ms;
  if (e.lfu_minute == 0) e.lfu_minute = ctx.now_ms / 60'000;
}

namespace {

// The flags of the commands queued in MULTI, or'ed (Redis's mstate.cmd_flags): EXEC counts as
// denyoom, or as a write, when a command it would run does.
uint32_t queued_flags(const Session& session) {
  uint32_t flags = 0;
  for (const std::vector<std::string>& argv : session.queued) {
    RedisReply error;
    if (const Spec* spec = resolve(argv, &error)) flags |= spec->flags;
  }
  return flags;
}

// The commands Redis 7.0 flags allow-busy (CMD_ALLOW_BUSY): served while a script is busy.
bool allow_busy(std::string_view name) {
  static constexpr std::string_view kAllowed[] = {"auth",        "discard",  "function|kill", "function|stats",
                                                  "hello",       "multi",    "quit",          "reset",
                                                  "script|kill", "shutdown", "unwatch",       "watch"};
  return std::find(std::begin(kAllowed), std::end(kAllowed), name) != std::end(kAllowed);
}

}  // namespace

// processCommand's gates before a command runs or is queued, in Redis 7.0's order: memory
// (evict, then -OOM for denyoom commands and anything queued in MULTI), a demoted master's
// -READONLY for writes, -LOADING, -BUSY. An empty reply (kNil) lets the command through.
// `name` is the resolved table name: the command's own lower-case name, or "container|sub"
// (which equals none of the names compared here, as the container's own name would not).
RedisReply Engine::refuse_or_oom(Session& session, std::string_view name, uint32_t flags, int64_t now_ms) {
  const bool multi_queue = session.in_multi && name != "exec" && name != "discard";
  bool denyoom = (flags & kDenyOom) || multi_queue;
  const uint32_t exec_flags = name == "exec" ? queued_flags(session) : 0;
  if (options_.maxmemory > 0) {
    denyoom = denyoom || (exec_flags & kDenyOom);
    const bool fits = perform_evictions(now_ms);
    if (!fits && denyoom) return RedisReply::error(refusal_error(Refusal::kOom));
  }
  if (((flags | exec_flags) & kWrite) && lacks_good_replicas()) return RedisReply::error(kNoReplicasError);
  if (script_.busy && !allow_busy(name)) return RedisReply::error(refusal_error(Refusal::kBusy, script_.eval));
  if (refusal_ == Refusal::kNone) return RedisReply::nil();
  RedisReply refused = RedisReply::error(refusal_error(refusal_));
  switch (refusal_) {
    case Refusal::kNone:
      break;
    case Refusal::kOom:
      if (denyoom) return ++stats_.refused, refused;
      break;
    case Refusal::kReadonly:
      if (flags & kWrite) return ++stats_.refused, refused;
      break;
    case Refusal::kLoading:
      if (!(flags & kLoadingOk)) return ++stats_.refused, refused;
      break;
    case Refusal::kBusy:
      if (name != "hello") return ++stats_.refused, refused;
      break;
  }
  return RedisReply::nil();
}

namespace {

// Redis's rejectCommand: a command refused before it runs (unknown, wrong arity, not allowed
// in subscribed context) flags an open transaction, and a refused EXEC aborts the transaction
// with "EXECABORT Transaction discarded because of: <reason>" (execCommandAbort). Found by the
// differential suite (properties/redis).
RedisReply reject(Session& session, const std::vector<std::string>& argv, RedisReply error) {
  if (iequals(argv[0], "exec")) {
    session.in_multi = false;
    session.multi_dirty = false;
    session.queued.clear();
    std::string reason = error.str.rfind("ERR ", 0) == 0 ? error.str.substr(4) : error.str;
    return RedisReply::error("EXECABORT Transaction discarded because of: " + reason);
  }
  if (session.in_multi) session.multi_dirty = true;  // EXEC will answer EXECABORT
  return error;
}

}  // namespace

RedisReply Engine::dispatch(Session& session, const std::vector<std::string>& argv, int64_t now_ms, bool in_script) {
  RedisReply error;
  const Spec* spec = resolve(argv, &error);
  if (!spec) {
    dispatched_rejected_ = true;
    return reject(session, argv, std::move(error));
  }
  const std::string_view name = spec->name;
  dispatched_spec_ = spec_index(spec);
  if (!in_script) {
    switch (acl_denial(acl_users_, session, *spec, argv)) {
      case AclDenial::kNone:
        break;
      case AclDenial::kCommand:
        dispatched_rejected_ = true;
        return reject(
            session, argv,
            RedisReply::error("NOPERM this user has no permissions to run the '" + std::string(name) + "' command"));
      case AclDenial::kKey:
        dispatched_rejected_ = true;
        return reject(
            session, argv,
            RedisReply::error("NOPERM this user has no permissions to access one of the keys used as arguments"));
    }
    RedisReply refused = refuse_or_oom(session, name, gate_flags(*spec, argv, loaded_scripts_), now_ms);
    dispatched_rejected_ = refused.is_error();
    if (refused.is_error()) return reject(session, argv, std::move(refused));
  }
  if (session.subscribed() && !(spec->flags & kPubSubOk)) {
    dispatched_rejected_ = true;
    return reject(session, argv,
                  RedisReply::error("ERR Can't execute '" + std::string(name) +
                                    "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
                                    "allowed in this context"));
  }
  if (name == "multi") {
    if (session.in_multi) return RedisReply::error("ERR MULTI calls can not be nested");
    session.in_multi = true;
    session.multi_dirty = false;
    session.queued.clear();
    return RedisReply::ok();
  }
  if (name == "exec") {
    if (!session.in_multi) return RedisReply::error("ERR EXEC without MULTI");
    return run_exec(session, now_ms);
  }
  if (name == "discard") {
    if (!session.in_multi) return RedisReply::error("ERR DISCARD without MULTI");
    session.in_multi = false;
    session.multi_dirty = false;
    session.queued.clear();
    session.watched.clear();
    return RedisReply::ok();
  }
  if (name == "watch") {
    if (session.in_multi) return RedisReply::error("ERR WATCH inside MULTI is not allowed");
    Keyspace& ks = live_[static_cast<size_t>(session.db)];
    for (size_t j = 1; j < argv.size(); ++j) {
      const Entry* e = ks.find(argv[j], now_ms, &stats_.expired_lazy);
      session.watched.push_back(Session::Watched{session.db, argv[j], e ? std::optional<Value>(e->value) : std::nullopt,
                                                 e ? e->expire_at_ms : std::nullopt});
    }
    return RedisReply::ok();
  }

  if (session.in_multi) {
    session.queued.push_back(argv);
    return RedisReply::status("QUEUED");
  }
  Ctx ctx{*this, live_[static_cast<size_t>(session.db)], session, argv, now_ms, in_script, /*in_exec=*/false};
  RedisReply reply = spec->fn(ctx);
  if (!reply.is_error()) after_write(ctx, spec->flags, spec->fn);
  return reply;
}

RedisReply Engine::run_exec(Session& session, int64_t now_ms) {
  std::vector<std::vector<std::string>> queued = std::move(session.queued);
  const bool dirty = session.multi_dirty;
  session.in_multi = false;
  session.multi_dirty = false;
  session.queued.clear();
  std::vector<Session::Watched> watched = std::move(session.watched);
  session.watched.clear();
  if (dirty) return RedisReply::error("EXECABORT Transaction discarded because of previous errors.");
  // WATCH: a watched key whose state changed since (written, deleted, expired) aborts the EXEC.
  for (const Session::Watched& w : watched) {
    const Entry* e = live_[static_cast<size_t>(w.db)].find(w.key, now_ms, &stats_.expired_lazy);
    const bool same = e ? (w.value && *w.value == e->value && w.expire_at_ms == e->expire_at_ms) : !w.value;
    if (!same) return RedisReply::nil_array();
  }
  std::vector<RedisReply> replies;
  replies.reserve(queued.size());
  for (const auto& argv : queued) {
    RedisReply error;
    const Spec* spec = resolve(argv, &error);
    FL_ASSERT(spec && "queued commands were resolved when queued");
    if (!spec) {
      replies.push_back(error);
      continue;
    }
    Ctx ctx{*this,           live_[static_cast<size_t>(session.db)], session, argv, now_ms, /*in_script=*/true,
            /*in_exec=*/true};
    RedisReply reply = spec->fn(ctx);
    if (!reply.is_error()) after_write(ctx, spec->flags, spec->fn);
    observe(argv, reply, now_ms, 1);
    if (session.protocol == 3) shape_for_resp3(argv, &reply);
    replies.push_back(std::move(reply));
  }
  return RedisReply::array(std::move(replies));
}

std::vector<std::string> Engine::take_signaled_keys() {
  for (size_t db = 0; db < live_.size(); ++db) {
    if (!live_[db].has_removed_streams()) continue;  // the common case: one load per database
    for (const std::string& key : live_[db].take_removed_streams()) {
      signaled_.insert(wait_key(static_cast<int>(db), key));
    }
  }
  std::vector<std::string> out(signaled_.begin(), signaled_.end());
  signaled_.clear();
  return out;
}

std::vector<PubSubDelivery> Engine::take_deliveries() {
  std::vector<PubSubDelivery> out = std::move(deliveries_);
  deliveries_.clear();
  return out;
}

namespace {

// Takes session `id` out of every entry of `registry` it subscribed to (`names`), then clears them.
void leave_all(std::map<std::string, std::set<uint64_t>, std::less<>>& registry, std::set<std::string>& names,
               uint64_t id) {
  for (const auto& name : names) {
    auto it = registry.find(name);
    if (it == registry.end()) continue;
    it->second.erase(id);
    if (it->second.empty()) registry.erase(it);
  }
  names.clear();
}

}  // namespace

void Engine::close_session(Session& session) {
  clients_.erase(session.id);
  leave_all(channels_, session.channels, session.id);
  leave_all(patterns_, session.patterns, session.id);
  session.in_multi = false;
  session.multi_dirty = false;
  session.queued.clear();
  session.blocked.reset();
  session.watched.clear();
}

// ---- Maintenance and persistence.

void Engine::tick(int64_t now_ms) {
  active_expire_cycle(now_ms);
  persist_if_due(now_ms);
}

size_t Engine::active_expire_cycle(int64_t now_ms) {
  // Like Redis's activeExpireCycle, bounded work per cycle; a round-robin cursor over the keys
  // with a TTL replaces random sampling so that the cycle is deterministic.
  // Databases 1-15 (unused by the seed systems) are purged whole; database 0 keeps the sampled
  // cycle, so the work per tick and what it reclaims stay as before multiple databases.
  size_t total = 0;
  for (size_t db = 1; db < live_.size(); ++db) {
    std::vector<std::string> dead;
    for (const auto& [key, at_ms] : live_[db].expires()) {
      if (at_ms <= now_ms) dead.push_back(key);
    }
    for (const std::string& key : dead) {
      live_[db].erase(key);
      journal_del(key, now_ms, static_cast<int>(db));  // propagated like a lazy expiry
      notify(static_cast<int>(db), kNotifyExpired, "expired", key);
    }
    total += dead.size();
  }
  const auto& expires = live_[0].expires();
  for (int loop = 0; loop < options_.active_expire_max_loops && !expires.empty(); ++loop) {
    // The sample holds iterators, not copies of the keys: the sampled keys are distinct, and
    // erasing one of them leaves the iterators to the others valid.
    std::vector<std::map<std::string, int64_t>::const_iterator> sample;
    auto it = expires.upper_bound(expire_cursor_);
    const size_t want = std::min<size_t>(options_.active_expire_keys_per_loop, expires.size());
    sample.reserve(want);
    while (sample.size() < want) {
      if (it == expires.end()) it = expires.begin();
      sample.push_back(it);
      ++it;
    }
    expire_cursor_ = sample.back()->first;
    size_t expired = 0;
    for (const auto& at : sample) {
      if (at->second <= now_ms) {
        const std::string key = at->first;  // erase() frees the node that holds it
        live_[0].erase(key);
        journal_del(key, now_ms, 0);  // propagated like a lazy expiry (Ctx::find)
        notify(0, kNotifyExpired, "expired", key);
        ++expired;
      }
    }
    total += expired;
    // Redis repeats while more than 25% of the sample had expired (ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE... 10% in 7.0
    // with effort 1; we keep the classic 25%).
    if (expired * 4 <= sample.size()) break;
  }
  stats_.expired_active += total;
  return total;
}

void Engine::journal_write(const std::vector<std::string>& argv, int64_t now_ms, int db, CommandFn fn) {
  if (options_.persistence != PersistenceMode::kAofEverysec) return;
  unsynced_.push_back(Journaled{argv, now_ms, db, fn});
}

void Engine::journal_del(const std::string& key, int64_t now_ms, int db) {
  if (options_.persistence != PersistenceMode::kAofEverysec) return;
  unsynced_.push_back(Journaled{{"DEL", key}, now_ms, db, cmd_del});
}

void Engine::persist_if_due(int64_t now_ms) {
  if (options_.persistence == PersistenceMode::kNone) return;
  if (last_persist_ms_ < 0 || now_ms < last_persist_ms_) {
    last_persist_ms_ = now_ms;  // first tick, or the clock went back: restart the period
    return;
  }
  if (options_.persistence == PersistenceMode::kAofEverysec) {
    if (now_ms - last_persist_ms_ < options_.aof_fsync_interval_ms) return;
    // fsync: the journaled writes become durable. Like a real fsync it executes nothing: they
    // are replayed on the durable copy when that copy is needed (apply_synced).
    if (synced_.empty()) {
      synced_.swap(unsynced_);
    } else {
      synced_.insert(synced_.end(), std::make_move_iterator(unsynced_.begin()),
                     std::make_move_iterator(unsynced_.end()));
      unsynced_.clear();
    }
    if (synced_.size() >= kMaxSyncedWrites) apply_synced();
    ++stats_.fsyncs;
  } else {
    if (now_ms - last_persist_ms_ < options_.snapshot_interval_ms) return;
    durable_ = live_;
    track_new_keys();  // the copy carries the live databases' tracking
    ++stats_.snapshots;
  }
  last_persist_ms_ = now_ms;
}

void Engine::apply_synced() {
  // Replaying them on the durable copy reproduces the live state as of the fsync, because
  // execution is a pure function of (state, argv, now_ms). A replayed lookup may expire a durable
  // key lazily; that is no expiry the server made (it counted it live), so the counters are kept.
  const EngineStats counters = stats_;
  Session replay_session;
  for (const auto& [argv, at_ms, db, fn] : synced_) {
    replay_session.db = db;
    Ctx ctx{*this,
            durable_[static_cast<size_t>(db)],
            replay_session,
            argv,
            at_ms,
            /*in_script=*/true,
            /*in_exec=*/false};
    fn(ctx);
  }
  synced_.clear();
  stats_ = counters;
  for (Keyspace& ks : durable_) ks.take_removed_streams();  // no reader blocks on the durable copy
}

void Engine::recover(int64_t now_ms) {
  apply_synced();
  switch (options_.persistence) {
    case PersistenceMode::kNone:
      for (Keyspace& ks : live_) ks.clear();
      break;
    case PersistenceMode::kAofEverysec:
      live_ = durable_;
      break;
    case PersistenceMode::kSnapshot:
      live_ = durable_;
      break;
  }
  track_new_keys();
  unsynced_.clear();
  // Loading an AOF or RDB drops keys that expired meanwhile; Redis's expiry then appends their
  // DELs to the AOF, so a later restart on a clock that went back does not bring them back.
  for (size_t db = 0; db < live_.size(); ++db) {
    std::vector<std::string> expired;
    for (const auto& [key, at_ms] : live_[db].expires()) {
      if (at_ms <= now_ms) expired.push_back(key);
    }
    live_[db].purge_expired(now_ms);
    for (const std::string& key : expired) journal_del(key, now_ms, static_cast<int>(db));
  }
  clients_.clear();
  evict_pool_.clear();
  channels_.clear();
  deliveries_.clear();
  signaled_.clear();
  for (Keyspace& ks : live_) ks.take_removed_streams();  // the restart dropped every blocked client
  loaded_scripts_.clear();
  libraries_.clear();
  lua_rand48_ = kLuaRand48Start;
  lua_eval_.reset();
  acl_users_ = {{"default", default_acl_user()}};  // ACL SETUSER's users live in memory only
  expire_cursor_.clear();
  last_persist_ms_ = now_ms;
  ++stats_.recoveries;
}

}  // namespace fl::sim::redis
