#include "properties/redis/redis_diff_gen.h"

#include <string>

#include "properties/redis/diff_scripts.h"

namespace fl::redis_diff {
namespace {

using Strings = std::vector<std::string>;
namespace gen = rc::gen;

const Strings kStringKeys = {"s:a", "s:b", "n"};
const Strings kHashKeys = {"h:a", "h:b"};
const Strings kSetKeys = {"set:a", "set:b"};
const Strings kZsetKeys = {"z:a", "z:b"};
const Strings kStreamKeys = {"x:a", "x:b"};
const Strings kAllKeys = {"s:a", "s:b", "n", "h:a", "h:b", "set:a", "set:b", "z:a", "z:b", "x:a", "x:b", "missing"};
const Strings kValues = {"v1", "v2", "10", "-3", "1.5", "abc", "", "9223372036854775807"};
const Strings kInts = {"0", "1", "-1", "5", "100", "-9223372036854775808", "9223372036854775807", "abc", "1.5", "007"};
const Strings kFields = {"f1", "f2", "f3"};
const Strings kMembers = {"m1", "m2", "m3", "m4"};
const Strings kScores = {"1", "2", "1.5", "-0.5", "inf", "-inf", "abc", "0", "1e3", "+5"};
const Strings kIndexes = {"0", "1", "-1", "-2", "5", "100", "x"};
const Strings kTtlSeconds = {"100", "1000", "0", "-1", "abc", "100000000000000000"};
const Strings kTtlMillis = {"40", "100000", "0", "-5", "abc"};
const Strings kIds = {"1-1",    "1-2",    "2-0",    "3-0", "0-1", "5-*",  "1",
                      "@auto0", "@auto1", "@auto2", "0-0", "abc", "99-99"};
const Strings kGroups = {"g1", "g2"};
const Strings kConsumers = {"c1", "c2", "c3"};
const Strings kMinIdle = {"0", "30", "3600000", "0", "30", "-1"};
const Strings kChannels = {"ch1", "ch2"};

std::string pick(const Strings& pool) { return *gen::elementOf(pool); }
bool chance(int percent) { return *gen::inRange(0, 100) < percent; }
// The first element of `pool` with probability `percent`, else any: consumer-group flows need
// the group, the stream and the reads to meet on the same names.
std::string pick_mostly_first(const Strings& pool, int percent) { return chance(percent) ? pool[0] : pick(pool); }
std::string key_of(const Strings& pool) { return chance(85) ? pick(pool) : pick(kAllKeys); }
int client() {
  int r = *gen::inRange(0, 100);
  return r < 60 ? 0 : (r < 85 ? 1 : 2);
}
Strings some(const Strings& pool, int lo, int hi) {
  int n = *gen::inRange(lo, hi + 1);
  Strings out;
  for (int i = 0; i < n; ++i) out.push_back(pick(pool));
  return out;
}
void append(Strings& a, const Strings& b) { a.insert(a.end(), b.begin(), b.end()); }

Step command(Strings argv, int c = -1) {
  Step s;
  s.kind = Step::Kind::kCommand;
  s.client = c >= 0 ? c : client();
  s.argv = std::move(argv);
  return s;
}

// ---- Families. Each returns one command step.

const Strings kOffsets = {"0", "1", "3", "10", "-1", "x", "536870912"};
const Strings kLcsValues = {"ohmytext", "mynewtext", "abcde", "xbxdx", "", "10"};

// SETRANGE, GETRANGE/SUBSTR and LCS with every option and error.
Step string_ranges(const std::string& k) {
  switch (*gen::inRange(0, 4)) {
    case 0:
      return command({"SETRANGE", k, pick(kOffsets), chance(70) ? pick(kLcsValues) : pick(kValues)});
    case 1:
      return command({chance(85) ? "GETRANGE" : "SUBSTR", k, pick(kIndexes), pick(kIndexes)});
    case 2:
      return command({"SET", k, pick(kLcsValues)});
    default: {
      Strings a{"LCS", k, key_of(kStringKeys)};
      if (chance(40)) a.push_back(*gen::element<std::string>("LEN", "IDX"));
      if (chance(30)) append(a, {"MINMATCHLEN", *gen::element<std::string>("0", "2", "4", "-1", "x")});
      if (chance(30)) a.push_back("WITHMATCHLEN");
      if (chance(5)) a.push_back(*gen::element<std::string>("IDX", "LEN", "BOGUS", "MINMATCHLEN"));
      return command(a);
    }
  }
}

Step strings() {
  const std::string k = key_of(kStringKeys);
  if (chance(30)) return string_ranges(k);
  switch (*gen::inRange(0, 13)) {
    case 0:
      return command({"GET", k});
    case 11:
      return command({"GETDEL", k});
    case 12: {
      Strings a{"GETEX", k};
      const int r = *gen::inRange(0, 6);
      if (r == 0) append(a, {"EX", pick(kTtlSeconds)});
      if (r == 1) append(a, {"PX", pick(kTtlMillis)});
      if (r == 2) a.push_back("PERSIST");
      if (r == 3) append(a, {"PERSIST", "EX", "10"});  // syntax error
      if (r == 4) append(a, {"PXAT", "1"});            // in the past: deletes
      return command(a);
    }
    case 1: {
      Strings a{"SET", k, pick(kValues)};
      if (chance(30)) a.push_back(*gen::element<std::string>("NX", "XX"));
      int ttl = *gen::inRange(0, 5);
      if (ttl == 1) append(a, {"EX", pick(kTtlSeconds)});
      if (ttl == 2) append(a, {"PX", pick(kTtlMillis)});
      if (ttl == 3) a.push_back("KEEPTTL");
      if (chance(20)) a.push_back("GET");
      if (chance(5)) a.push_back(*gen::element<std::string>("EX", "BOGUS", "NX"));  // syntax errors
      return command(a);
    }
    case 2:
      return command({"SETNX", k, pick(kValues)});
    case 3:
      return command({"INCR", k});
    case 4:
      return command({"INCRBY", k, pick(kInts)});
    case 5:
      return command({"DECR", k});
    case 6:
      return command({"DECRBY", k, pick(kInts)});
    case 7: {
      Strings a{"DEL"};
      append(a, some(kAllKeys, 1, 3));
      return command(a);
    }
    case 8: {
      Strings a{"EXISTS"};
      append(a, some(kAllKeys, 1, 3));
      return command(a);
    }
    case 9: {
      Strings a{"MGET"};
      append(a, some(kAllKeys, 1, 3));
      return command(a);
    }
    default:
      return command({"SET", k, pick(kInts)});
  }
}

Step keys() {
  const std::string k = pick(kAllKeys);
  switch (*gen::inRange(0, 16)) {
    case 0:
      return command({"EXPIRE", k, pick(kTtlSeconds)});
    case 1:
      return command({"PEXPIRE", k, pick(kTtlMillis)});
    case 2:
      return command({"TTL", k});
    case 3:
      return command({"PTTL", k});
    case 4:
      return command({"PERSIST", k});
    case 5:
      return command({"EXPIRETIME", k});
    case 6:
      return command({"PEXPIRETIME", k});
    case 7:
      return command({*gen::element<std::string>("RENAME", "RENAMENX"), k, pick(kAllKeys)});
    case 8:
      return command({"OBJECT", *gen::element<std::string>("ENCODING", "REFCOUNT", "FREQ", "NOSUCH"), k});
    case 9:
      return command({"MOVE", k, *gen::element<std::string>("0", "1", "2", "16", "x")});
    case 10: {
      // COUNT large enough that a real server finishes in one call (cursor 0), as the engine does.
      Strings a{"SCAN", *gen::element<std::string>("0", "0", "0", "x"), "COUNT", "1000"};
      if (chance(40)) append(a, {"MATCH", *gen::element<std::string>("s:*", "*a", "?:b", "[hz]:*", "n")});
      if (chance(30)) append(a, {"TYPE", *gen::element<std::string>("string", "hash", "stream", "zset")});
      return command(a);
    }
    case 11:
      return command({"SELECT", *gen::element<std::string>("0", "1", "2", "15", "16", "-1", "x")});
    case 12:
      return command(
          {"SWAPDB", *gen::element<std::string>("0", "1", "x"), *gen::element<std::string>("0", "1", "2", "99")});
    case 13:
      return command({"FLUSHDB"});
    case 14:
      return command({"DBSIZE"});
    case 15: {
      static const Strings scans = {"HSCAN", "SSCAN", "ZSCAN"};
      const size_t i = static_cast<size_t>(*gen::inRange(0, 3));
      const std::string key = i == 0 ? key_of(kHashKeys) : i == 1 ? key_of(kSetKeys) : key_of(kZsetKeys);
      Strings a{scans[i], key, "0"};
      if (chance(30)) append(a, {"MATCH", *gen::element<std::string>("f*", "m?", "*1")});
      return command(a);
    }
    default:
      return command({"TYPE", k});
  }
}

Step hashes() {
  const std::string k = key_of(kHashKeys);
  if (chance(15)) {
    Strings a{"HRANDFIELD", k};
    if (chance(75)) {
      a.push_back(*gen::element<std::string>("0", "1", "2", "3", "5", "-1", "-3", "x", "-9223372036854775808",
                                             "9223372036854775807"));
      if (chance(40)) a.push_back(chance(90) ? "WITHVALUES" : "BOGUS");
    }
    return command(a);
  }
  switch (*gen::inRange(0, 7)) {
    case 0: {
      Strings a{"HSET", k};
      int pairs = *gen::inRange(1, 3);
      for (int i = 0; i < pairs; ++i) append(a, {pick(kFields), pick(kValues)});
      if (chance(5)) a.pop_back();  // odd argument count: arity error
      return command(a);
    }
    case 1:
      return command({"HSETNX", k, pick(kFields), pick(kValues)});
    case 2:
      return command({"HGET", k, pick(kFields)});
    case 3:
      return command({"HGETALL", k});
    case 4:
      return command({"HINCRBY", k, pick(kFields), pick(kInts)});
    case 5: {
      Strings a{"HDEL", k};
      append(a, some(kFields, 1, 2));
      return command(a);
    }
    default:
      return command({"HLEN", k});
  }
}

Step sets() {
  const std::string k = key_of(kSetKeys);
  if (chance(12)) {
    Strings a{"SINTERCARD", *gen::element<std::string>("1", "2", "2", "0", "5"), k, key_of(kSetKeys)};
    if (chance(40)) append(a, {"LIMIT", *gen::element<std::string>("0", "1", "-1", "x")});
    return command(a);
  }
  switch (*gen::inRange(0, 5)) {
    case 0: {
      Strings a{"SADD", k};
      append(a, some(kMembers, 1, 3));
      if (chance(20)) a.push_back(pick(kInts));  // intset vs hashtable encodings
      return command(a);
    }
    case 1: {
      Strings a{"SREM", k};
      append(a, some(kMembers, 1, 2));
      return command(a);
    }
    case 2:
      return command({"SISMEMBER", k, pick(kMembers)});
    case 3:
      return command({"SMEMBERS", k});
    default:
      return command({"SCARD", k});
  }
}

const Strings kScoreBounds = {"-inf", "+inf", "1", "(1", "1.5", "(2", "0", "(0", "abc", "", "(", "inf"};
const Strings kLexBounds = {"-", "+", "[m2", "(m2", "[m", "(m3", "[m4", "m1", "", "[", "(", "+x"};
const Strings kLimits = {"0", "1", "2", "-1", "5", "x"};

// ZRANGE with BYSCORE/BYLEX/REV/LIMIT/WITHSCORES, the older Z[REV]RANGEBY* spellings,
// ZRANGESTORE, ZCOUNT and ZLEXCOUNT.
Step zset_ranges(const std::string& k) {
  const int by = *gen::inRange(0, 3);  // 0 rank, 1 score, 2 lex
  const Strings& bounds = by == 0 ? kIndexes : by == 1 ? kScoreBounds : kLexBounds;
  const int form = *gen::inRange(0, 5);
  Strings a;
  if (form == 0 || form == 1) {
    a = form == 0 ? Strings{"ZRANGE", k} : Strings{"ZRANGESTORE", key_of(kZsetKeys), k};
  } else if (form == 2) {
    static const Strings older[3] = {
        {"ZREVRANGE"}, {"ZRANGEBYSCORE", "ZREVRANGEBYSCORE"}, {"ZRANGEBYLEX", "ZREVRANGEBYLEX"}};
    a = {pick(older[by]), k};
  } else if (form == 3) {
    return command({by == 2 ? "ZLEXCOUNT" : "ZCOUNT", k, pick(bounds), pick(bounds)});
  } else {
    a = {"ZRANGE", k};
  }
  append(a, {pick(bounds), pick(bounds)});
  if (form != 2 && by == 1 && chance(90)) a.push_back("BYSCORE");
  if (form != 2 && by == 2 && chance(90)) a.push_back("BYLEX");
  if (form != 2 && chance(35)) a.push_back("REV");
  if (chance(35)) append(a, {"LIMIT", pick(kLimits), pick(kLimits)});
  if (chance(30)) a.push_back("WITHSCORES");
  if (chance(5)) a.push_back(*gen::element<std::string>("BYSCORE", "BYLEX", "REV", "LIMIT", "BOGUS"));
  return command(a);
}

// ZUNION/ZINTER/ZDIFF (and STORE), ZINTERCARD, over sorted sets and plain sets.
Step zset_algebra(const std::string& k) {
  static const Strings ops = {"ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZINTERCARD"};
  const std::string op = pick(ops);
  const bool store = op.size() > 6 && op.substr(op.size() - 5) == "STORE";
  Strings a{op};
  if (store) a.push_back(key_of(kZsetKeys));
  const int n = *gen::inRange(1, 4);
  a.push_back(chance(92) ? std::to_string(n) : *gen::element<std::string>("0", "x", "9"));
  a.push_back(k);
  for (int i = 1; i < n; ++i) a.push_back(chance(75) ? key_of(kZsetKeys) : key_of(kSetKeys));
  if (chance(30)) {
    a.push_back("WEIGHTS");
    for (int i = 0; i < n; ++i) a.push_back(*gen::element<std::string>("1", "2", "-1", "0", "0.5", "inf", "x"));
  }
  if (chance(30)) append(a, {"AGGREGATE", *gen::element<std::string>("SUM", "MIN", "MAX", "avg")});
  if (chance(30)) a.push_back("WITHSCORES");
  if (op == "ZINTERCARD" && chance(50)) append(a, {"LIMIT", *gen::element<std::string>("0", "1", "2", "-1", "x")});
  return command(a);
}

Step zsets() {
  const std::string k = key_of(kZsetKeys);
  if (chance(30)) return zset_ranges(k);
  if (chance(15)) return zset_algebra(k);
  switch (*gen::inRange(0, 7)) {
    case 0: {
      Strings a{"ZADD", k};
      if (chance(20)) a.push_back(*gen::element<std::string>("NX", "XX"));
      if (chance(15)) a.push_back(*gen::element<std::string>("GT", "LT"));
      if (chance(20)) a.push_back("CH");
      bool incr = chance(10);
      if (incr) a.push_back("INCR");
      int pairs = incr ? 1 : *gen::inRange(1, 3);
      for (int i = 0; i < pairs; ++i) append(a, {pick(kScores), pick(kMembers)});
      return command(a);
    }
    case 1:
      return command({"ZINCRBY", k, pick(kScores), pick(kMembers)});
    case 2:
      return command({"ZSCORE", k, pick(kMembers)});
    case 3: {
      Strings a{"ZREM", k};
      append(a, some(kMembers, 1, 2));
      return command(a);
    }
    case 4:
      return command({"ZCARD", k});
    default: {
      Strings a{*gen::element<std::string>("ZRANGE", "ZREVRANGE"), k, pick(kIndexes), pick(kIndexes)};
      if (chance(50)) a.push_back("WITHSCORES");
      return command(a);
    }
  }
}

std::string xadd_id() { return chance(50) ? "*" : pick(kIds); }

Strings xadd_argv(const std::string& k) {
  Strings a{"XADD", k};
  if (chance(10)) a.push_back("NOMKSTREAM");
  if (chance(30)) {
    a.push_back("MAXLEN");
    int mode = *gen::inRange(0, 3);
    if (mode == 1) a.push_back("~");
    if (mode == 2) a.push_back("=");
    a.push_back(*gen::element<std::string>("0", "1", "2", "5"));
  }
  a.push_back(xadd_id());
  append(a, {pick(kFields), pick(kValues)});
  if (chance(20)) append(a, {pick(kFields), pick(kValues)});
  return a;
}

Step streams() {
  const std::string k = chance(85) ? pick_mostly_first(kStreamKeys, 75) : pick(kAllKeys);
  const std::string g = pick_mostly_first(kGroups, 75);
  if (chance(10)) {
    switch (*gen::inRange(0, 5)) {
      case 0:
        return command({"XINFO", "GROUPS", k});
      case 1:
        return command({"XINFO", "CONSUMERS", k, g});
      case 2:
        return command({"XINFO", *gen::element<std::string>("HELP", "BOGUS", "STREAM")});
      default: {
        Strings a{"XINFO", "STREAM", k};
        if (chance(50)) a.push_back(chance(90) ? "FULL" : "PARTIAL");
        if (chance(30)) append(a, {"COUNT", *gen::element<std::string>("0", "1", "2", "-1", "x")});
        return command(a);
      }
    }
  }
  switch (*gen::inRange(0, 14)) {
    case 0:
    case 1:
      return command(xadd_argv(k));
    case 2:
      return command({"XLEN", k});
    case 3: {
      Strings a{"XRANGE", k, *gen::element<std::string>("-", "0", "1-1", "@auto0", "(1-1"),
                *gen::element<std::string>("+", "@auto1", "2-0", "@auto0")};
      if (chance(30)) append(a, {"COUNT", *gen::element<std::string>("0", "1", "2")});
      return command(a);
    }
    case 4: {
      Strings a{"XDEL", k};
      append(a, some(kIds, 1, 2));
      return command(a);
    }
    case 5: {
      Strings a{"XGROUP", "CREATE", k, g, *gen::element<std::string>("0", "$", "@auto0", "1-1")};
      if (chance(60)) a.push_back("MKSTREAM");
      return command(a);
    }
    case 6:
    case 7: {
      Strings a{"XREADGROUP", "GROUP", g, pick(kConsumers)};  // several consumers share a group
      if (chance(70)) append(a, {"COUNT", *gen::element<std::string>("1", "2", "10")});
      if (chance(10)) append(a, {"BLOCK", "20"});
      if (chance(10)) a.push_back("NOACK");
      append(a, {"STREAMS", k, chance(80) ? ">" : *gen::element<std::string>("0", "@auto0", "1-1")});
      return command(a);
    }
    case 8: {
      Strings a{"XACK", k, g};
      append(a, some(kIds, 1, 3));
      return command(a);
    }
    case 9:
      return command({"XPENDING", k, g});
    case 10: {
      Strings a{"XPENDING", k, g};
      if (chance(30)) append(a, {"IDLE", pick(kMinIdle)});
      append(a, {*gen::element<std::string>("-", "0", "@auto0"), *gen::element<std::string>("+", "@auto1"),
                 *gen::element<std::string>("1", "10")});
      if (chance(40)) a.push_back(pick(kConsumers));
      return command(a);
    }
    case 11: {
      Strings a{"XCLAIM", k, g, pick(kConsumers), pick(kMinIdle)};
      append(a, some(kIds, 1, 3));
      if (chance(30)) a.push_back("JUSTID");
      return command(a);
    }
    default: {
      Strings a{"XAUTOCLAIM",
                k,
                g,
                pick(kConsumers),
                pick(kMinIdle),
                *gen::element<std::string>("0-0", "0", "@auto0", "1-1")};
      if (chance(60)) append(a, {"COUNT", *gen::element<std::string>("1", "2", "100")});
      if (chance(30)) a.push_back("JUSTID");
      return command(a);
    }
  }
}

Step pubsub() {
  int r = *gen::inRange(0, 3);
  if (r == 0) return command({"PUBLISH", pick(kChannels), pick(kValues)}, *gen::inRange(0, 2));
  int c = chance(75) ? 2 : *gen::inRange(0, 2);
  Strings a{r == 1 ? "SUBSCRIBE" : "UNSUBSCRIBE"};
  append(a, some(kChannels, r == 1 ? 1 : 0, 2));
  return command(a, c);
}

Step transactions() {
  // Mostly on connection 0, where most commands run, so that MULTI ... EXEC pairs form.
  return command({*gen::element<std::string>("MULTI", "MULTI", "EXEC", "EXEC", "DISCARD")}, chance(85) ? 0 : client());
}

Step misc() {
  switch (*gen::inRange(0, 6)) {
    case 0:
      return command({"PING"});
    case 1:
      return command({"PING", pick(kValues)});
    case 2:
      return command({"DBSIZE"});
    case 3:
      return command({"FLUSHALL"});
    case 4:
      return command({"ECHO", pick(kValues)});
    default: {
      // Malformed: a known command with too few arguments, or an unknown one.
      Strings a{*gen::element<std::string>("GET", "SET", "HSET", "ZADD", "XADD", "XGROUP", "XREADGROUP", "EXPIRE",
                                           "NOSUCHCMD", "XPENDING", "XAUTOCLAIM", "EVAL", "EXEC", "MULTI", "PUBLISH",
                                           "XACK", "XCLAIM", "SCRIPT", "TTL", "INCRBY")};
      append(a, some(kAllKeys, 0, 1));
      return command(a);
    }
  }
}

Step scripts() {
  static const std::shared_ptr<const ScriptRegistry> registry = diff_scripts();  // immutable
  const std::vector<ScriptShape> shapes = diff_script_shapes();
  // Half the calls use the first two scripts, so EVALSHA often finds a script loaded earlier.
  const ScriptShape shape = chance(50) ? shapes[static_cast<size_t>(*gen::inRange(0, 2))] : *gen::elementOf(shapes);
  const RedisScript* s = registry->by_name(shape.name);
  Strings args;
  if (shape.name == "cas_delete") args = {pick(kValues)};
  if (shape.name == "incr_ttl") args = {*gen::element<std::string>("1", "2", "abc"), pick(kTtlMillis)};
  if (shape.name == "zadd_top") args = {pick(kScores), pick(kMembers), *gen::element<std::string>("1", "2", "3")};
  if (shape.name == "ack_del") args = {pick(kGroups), pick(kIds)};
  if (shape.name == "hsum") args = {pick(kFields), pick(kFields)};
  std::string k = shape.name == "zadd_top"  ? key_of(kZsetKeys)
                  : shape.name == "ack_del" ? key_of(kStreamKeys)
                  : shape.name == "hsum"    ? key_of(kHashKeys)
                                            : key_of(kStringKeys);
  int r = *gen::inRange(0, 10);
  if (r <= 3 || r == 9) {
    Strings a{r <= 3 ? "EVAL" : "EVALSHA", r <= 3 ? s->lua : registry->sha1_of(shape.name),
              r == 9 && chance(30) ? "5" : "1", k};
    append(a, args);
    return command(a);
  }
  if (r <= 6) {
    Strings a{"EVALSHA", registry->sha1_of(shape.name), "1", k};
    append(a, args);
    return command(a);
  }
  if (r == 7) return command({"SCRIPT", "LOAD", s->lua});
  if (chance(50)) return command({"SCRIPT", "EXISTS", registry->sha1_of(shape.name), "0000"});
  return command({"SCRIPT", "FLUSH"});
}

Step wait_step() {
  Step s;
  s.kind = Step::Kind::kWait;
  s.wait_ms = 60;
  return s;
}

Step blocked_read() {
  const std::string k = pick_mostly_first(kStreamKeys, 75);
  Step s;
  s.kind = Step::Kind::kBlockedRead;
  s.client = *gen::inRange(0, 2);
  s.writer = 1 - s.client;
  s.argv = {"XREADGROUP",
            "GROUP",
            pick_mostly_first(kGroups, 75),
            pick(kConsumers),
            "COUNT",
            "2",
            "BLOCK",
            "100",
            "STREAMS",
            k,
            ">"};
  s.writer_argv = xadd_argv(chance(90) ? k : pick(kStreamKeys));
  return s;
}

// Consumer-group flows need a group first; a third of the stream steps start from one.
Step group_setup() {
  return command({"XGROUP", "CREATE", pick_mostly_first(kStreamKeys, 75), pick_mostly_first(kGroups, 75),
                  *gen::element<std::string>("0", "$"), "MKSTREAM"});
}

}  // namespace

rc::Gen<Step> gen_step() {
  // RapidCheck scales inRange by the size; every choice here must be uniform: nominal size.
  return gen::resize(100, gen::exec([] {
                       int r = *gen::inRange(0, 1000);
                       Step s;
                       if (r < 120)
                         s = strings();
                       else if (r < 230)
                         s = keys();
                       else if (r < 300)
                         s = hashes();
                       else if (r < 360)
                         s = sets();
                       else if (r < 450)
                         s = zsets();
                       else if (r < 660)
                         s = streams();
                       else if (r < 710)
                         s = group_setup();
                       else if (r < 780)
                         s = pubsub();
                       else if (r < 840)
                         s = transactions();
                       else if (r < 880)
                         s = misc();
                       else if (r < 960)
                         s = scripts();
                       else if (r < 985)
                         s = wait_step();
                       else
                         s = blocked_read();
                       if (s.kind == Step::Kind::kCommand && chance(8)) {
                         for (char& ch : s.argv[0])
                           ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
                       }
                       return s;
                     }));
}

namespace {

// One step, or a transaction block (MULTI, 1-4 commands, EXEC or DISCARD on one connection),
// so that transactions do more than provoke "EXEC without MULTI".
rc::Gen<std::vector<Step>> gen_chunk() {
  return gen::resize(100, gen::exec([] {
                       if (!chance(8)) return std::vector<Step>{*gen_step()};
                       const int c = chance(85) ? 0 : client();
                       std::vector<Step> block{command({"MULTI"}, c)};
                       const int n = *gen::inRange(1, 5);
                       for (int i = 0; i < n; ++i) {
                         Step s = *gen_step();
                         if (s.kind != Step::Kind::kCommand) continue;
                         s.client = c;
                         block.push_back(std::move(s));
                       }
                       block.push_back(command({chance(85) ? "EXEC" : "DISCARD"}, c));
                       return block;
                     }));
}

// Most sequences start with a consumer group on the busiest stream, so that reads, pending
// entries and claims meet an existing group.
std::vector<Step> prelude() { return {command({"XGROUP", "CREATE", kStreamKeys[0], kGroups[0], "0", "MKSTREAM"}, 0)}; }

}  // namespace

rc::Gen<std::vector<Step>> gen_sequence(int max_steps) {
  // The chunk count follows the size (0..max_steps); shrinking drops chunks, then simplifies
  // them (a variable-length container), and drops the prelude.
  return gen::exec([max_steps] {
    const bool with_prelude = *gen::resize(100, gen::inRange(0, 100)) >= 30;
    const auto chunks = *gen::resize(max_steps, gen::container<std::vector<std::vector<Step>>>(gen_chunk()));
    std::vector<Step> steps = with_prelude ? prelude() : std::vector<Step>{};
    for (const auto& chunk : chunks) steps.insert(steps.end(), chunk.begin(), chunk.end());
    return steps;
  });
}

}  // namespace fl::redis_diff
