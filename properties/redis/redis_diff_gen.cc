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

// ---- Argument boundaries (gen_boundary_sequence).
namespace {

// Integers at and around the edges of int64, int32 and uint64, 0 and ±1, and text that is not
// a (strict) integer: a float, an exponent, a sign, a leading zero, a space, nothing.
const Strings kBoundInts = {"0",
                            "1",
                            "-1",
                            "2",
                            "-2",
                            "9223372036854775807",
                            "9223372036854775806",
                            "9223372036854775808",
                            "-9223372036854775808",
                            "-9223372036854775807",
                            "-9223372036854775809",
                            "2147483647",
                            "2147483648",
                            "-2147483648",
                            "-2147483649",
                            "4294967296",
                            "18446744073709551615",
                            "18446744073709551616",
                            "4611686018427387903",
                            "-4611686018427387904",
                            "1.5",
                            "1e3",
                            "+1",
                            "01",
                            "-0",
                            " 1",
                            "abc",
                            ""};
// Counts (COUNT, LIMIT, numkeys...): the boundary integers, biased to the huge ones.
const Strings kHugeCounts = {"9223372036854775807", "-9223372036854775808", "4294967296", "2147483648", "1000000"};
// Floats (scores, weights, increments): infinities, NaN, overflow to inf, denormals, signs.
const Strings kBoundFloats = {"inf",
                              "-inf",
                              "+inf",
                              "nan",
                              "-nan",
                              "1e308",
                              "1e309",
                              "-1e309",
                              "1e-320",
                              "0",
                              "-0",
                              "1.5",
                              ".5",
                              "5.",
                              "0x10",
                              "abc",
                              "",
                              " 1",
                              "1 ",
                              "9223372036854775807",
                              "-9223372036854775808",
                              "1.7976931348623157e308",
                              "Infinity"};
// Seconds: where seconds * 1000 and now + ms overflow int64 (and around them).
const Strings kBoundSeconds = {"9223372036854775",    "9223372036854776",     "9223372036854775807",
                               "9223372036854775806", "-9223372036854775808", "9223372036854",
                               "4611686018427387",    "-9223372036854775",    "-9223372036854776"};
// Milliseconds: where now + ms overflows int64.
const Strings kBoundMillis = {"9223372036854775807", "9223372036854775806",  "9223370000000000000",
                              "9223372036854775",    "-9223372036854775808", "4611686018427387904"};
// SETRANGE offsets that either write little or fail: offset + value length stays far below
// proto-max-bulk-len (512 MB) or goes above it (the values written are 2+ bytes long), so that
// redis-server never allocates a huge string.
const Strings kBoundOffsets = {"0",
                               "1",
                               "7",
                               "100",
                               "-1",
                               "-9223372036854775808",
                               "536870911",
                               "536870912",
                               "536870913",
                               "2147483647",
                               "2147483648",
                               "4294967296",
                               "9223372036854775807",
                               "9223372036854775806",
                               "9223372036854775808",
                               "18446744073709551615",
                               "1.5",
                               "abc",
                               ""};
// Stream ids at the edges of their two uint64 halves.
const Strings kBoundIds = {"0-0",
                           "0-1",
                           "0",
                           "-1",
                           "1-1",
                           "18446744073709551615-18446744073709551615",
                           "18446744073709551615",
                           "18446744073709551616-0",
                           "1-18446744073709551616",
                           "9223372036854775807-9223372036854775807",
                           "18446744073709551615-*",
                           "1-",
                           "-1-1",
                           "1.5",
                           "abc",
                           "(18446744073709551615-18446744073709551615",
                           "(0-0",
                           "(-",
                           "-",
                           "+"};
// SCAN cursors that do not depend on the server's hash tables: 0 and the malformed ones.
const Strings kBoundCursors = {"0", "abc", "1.5", "18446744073709551616", "", " 0"};
// Database indexes.
const Strings kBoundDbs = {
    "0",          "15",         "16",  "-1", "9223372036854775807", "-9223372036854775808", "2147483647",
    "2147483648", "4294967296", "abc", "1.5"};
// Score and lex range bounds.
const Strings kBoundScoreRanges = {"-inf",   "+inf", "(inf", "(-inf", "nan", "(nan", "1e309",
                                   "(1e309", "(",    "((1",  "(1",    "1",   "abc",  ""};
const Strings kBoundLexRanges = {"-", "+", "[", "(", "[m1", "(m1", "m1", "", "+x", "-x"};

std::string bint() { return chance(25) ? pick(kHugeCounts) : pick(kBoundInts); }
std::string bfloat() { return chance(70) ? pick(kBoundFloats) : bint(); }
std::string bsec() { return chance(60) ? pick(kBoundSeconds) : bint(); }
// No small positive ones: a key expiring a millisecond later races the two servers' clocks.
std::string bms() {
  return chance(60) ? pick(kBoundMillis)
                    : *gen::element<std::string>("0", "-1", "-9223372036854775807", "abc", "1.5", "", "+1", "01");
}
// XAUTOCLAIM's COUNT: refused, or small enough that redis-server's up-front allocation of
// COUNT stream ids (16 bytes each) succeeds; in between, its answer depends on the machine.
std::string xautoclaim_count() {
  return *gen::element<std::string>("0", "-1", "1", "2", "1000000", "576460752303423488", "9223372036854775807",
                                    "-9223372036854775808", "abc", "1.5", "");
}
// Appends one of `options`: its name and a value drawn for it only when chosen.
using Option = std::pair<const char*, std::string (*)()>;
void append_one_of(Strings& a, const std::vector<Option>& options) {
  const Option& o = options[static_cast<size_t>(*gen::inRange(0, static_cast<int>(options.size())))];
  append(a, {o.first, o.second()});
}
// SET's and GETEX's expiry options.
const std::vector<Option>& expiry_options() {
  static const std::vector<Option> o = {{"EX", bsec}, {"PX", bms}, {"EXAT", bsec}, {"PXAT", bms}};
  return o;
}

std::string bid() { return chance(80) ? pick(kBoundIds) : bint(); }
// A key of the given family, now and then another one (WRONGTYPE, missing keys).
std::string bkey(const char* k) { return chance(85) ? k : pick(kAllKeys); }

Step boundary_strings() {
  const std::string k = bkey("s:a");
  switch (*gen::inRange(0, 14)) {
    case 0:
      return command({"SETRANGE", k, pick(kBoundOffsets), *gen::element<std::string>("xy", "hello", "")});
    case 1:
      return command({*gen::element<std::string>("GETRANGE", "SUBSTR"), k, bint(), bint()});
    case 2:
      return command({"SET", bkey("n"), bint()});  // later INCR/DECR meet int64's edges
    case 3:
      return command({*gen::element<std::string>("INCRBY", "DECRBY"), bkey("n"), bint()});
    case 4:
      return command({*gen::element<std::string>("INCR", "DECR"), bkey("n")});
    case 5: {
      Strings a{"SET", k, "v"};
      append_one_of(a, expiry_options());
      if (chance(20)) a.push_back("GET");
      return command(a);
    }
    case 6: {
      Strings a{"GETEX", k};
      append_one_of(a, expiry_options());
      return command(a);
    }
    case 7: {
      Strings a{"LCS", k, "s:b"};
      if (chance(50)) a.push_back("IDX");
      append(a, {"MINMATCHLEN", bint()});
      return command(a);
    }
    case 8:
      return command({"SETNX", bkey("n"), bint()});
    case 9:
      return command({"MGET", k, bkey("n"), pick(kAllKeys)});
    case 10:
      return command({*gen::element<std::string>("GET", "GETDEL", "STRLEN"), k});
    default:
      return command({"SET", k, pick(kLcsValues)});
  }
}

Step boundary_keys() {
  const std::string k = pick(kAllKeys);
  switch (*gen::inRange(0, 13)) {
    case 0:
    case 1: {
      const bool seconds = chance(50);
      Strings a{seconds ? "EXPIRE" : "PEXPIRE", k, seconds ? bsec() : bms()};
      if (chance(30)) a.push_back(*gen::element<std::string>("NX", "XX", "GT", "LT", "BOGUS"));
      return command(a);
    }
    case 2:
      return command({*gen::element<std::string>("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "PERSIST", "TYPE"), k});
    case 3:
      return command({"MOVE", k, pick(kBoundDbs)});
    case 4:
      return command({"SELECT", pick(kBoundDbs)});
    case 5:
      return command({"SWAPDB", pick(kBoundDbs), pick(kBoundDbs)});
    case 6: {
      // Always a COUNT that is refused or that finishes the scan in one call: where a partial
      // scan stops depends on each server's hash table.
      Strings a{"SCAN", pick(kBoundCursors), "COUNT",
                *gen::element<std::string>("0", "-1", "-9223372036854775808", "abc", "1.5", "", "01",
                                           "9223372036854775807", "4294967296", "2147483648", "1000")};
      if (chance(20)) append(a, {"MATCH", "*"});
      if (chance(20)) append(a, {"TYPE", *gen::element<std::string>("string", "bogus")});
      return command(a);
    }
    case 7: {
      static const Strings scans = {"HSCAN", "SSCAN", "ZSCAN"};
      static const Strings keys = {"h:a", "set:a", "z:a"};
      const size_t i = static_cast<size_t>(*gen::inRange(0, 3));
      // Listpack hashes and sorted sets are scanned whole whatever the cursor: negative
      // (wrapping) ones too. Not sets: set:a holds a non-integer, a hashtable in Redis 7.0.
      Strings a{scans[i], bkey(keys[i].c_str()),
                chance(70) || i == 1 ? pick(kBoundCursors) : *gen::element<std::string>("-1", "-0", "+0", "\t0")};
      // A set holding a non-integer is a hashtable: a partial SSCAN stops where its table says.
      if (chance(70)) append(a, {"COUNT", i == 1 ? *gen::element<std::string>("0", "-1", "abc", "1000") : bint()});
      return command(a);
    }
    case 8:
      return command({*gen::element<std::string>("RENAME", "RENAMENX"), k, pick(kAllKeys)});
    case 9:
      // Not ENCODING: after CONFIG SET lowers a threshold, redis-server converts a collection on
      // its next write, the engine reports the new encoding at once (not a boundary matter).
      // Nor IDLETIME: seconds of each server's clock.
      return command({"OBJECT", "REFCOUNT", k});
    case 10:
      return command({*gen::element<std::string>("DEL", "EXISTS"), k, pick(kAllKeys)});
    case 11:
      return command({*gen::element<std::string>("FLUSHDB", "FLUSHALL"), *gen::element<std::string>("SYNC", "BOGUS")});
    default:
      return command({"DBSIZE"});
  }
}

Step boundary_hashes() {
  const std::string k = bkey("h:a");
  switch (*gen::inRange(0, 6)) {
    case 0:
      return command({"HSET", k, pick(kFields), bint()});
    case 1:
      return command({"HINCRBY", k, pick(kFields), bint()});
    case 2: {
      // Counts whose sample stays small: a huge negative count makes both servers build a
      // sample that large (redis-server too streams it without limit), so the huge negative
      // ones are only those refused: below -LONG_MAX, or below -LONG_MAX/2 WITHVALUES.
      const bool withvalues = chance(50);
      Strings a{"HRANDFIELD", k,
                withvalues ? *gen::element<std::string>("-4611686018427387904", "-4611686018427387905",
                                                        "4611686018427387904", "4611686018427387903")
                           : *gen::element<std::string>("9223372036854775807", "-9223372036854775808", "0", "1", "-1",
                                                        "-2", "2147483648", "1.5", "abc", "")};
      if (withvalues) a.push_back("WITHVALUES");
      return command(a);
    }
    case 3:
      return command({"HSETNX", k, pick(kFields), bint()});
    case 4:
      return command({*gen::element<std::string>("HGET", "HDEL"), k, pick(kFields)});
    default:
      return command({*gen::element<std::string>("HGETALL", "HLEN"), k});
  }
}

Step boundary_sets() {
  const std::string k = bkey("set:a");
  switch (*gen::inRange(0, 6)) {
    case 0:
    case 1: {
      Strings a{"SINTERCARD", bint(), k, bkey("set:b")};
      if (chance(50)) append(a, {"LIMIT", bint()});
      return command(a);
    }
    case 2:
      return command({"SADD", k, bint(), bint()});  // intset boundaries
    case 3:
      return command({*gen::element<std::string>("SISMEMBER", "SREM"), k, bint()});
    case 4: {
      const std::string op =
          *gen::element<std::string>("SINTER", "SUNION", "SDIFF", "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE");
      Strings a{op};
      if (op.size() > 6) a.push_back(bkey("set:b"));
      append(a, {k, bkey("set:b")});
      return command(a);
    }
    default:
      return command({*gen::element<std::string>("SMEMBERS", "SCARD"), k});
  }
}

Step boundary_zsets() {
  const std::string k = bkey("z:a");
  switch (*gen::inRange(0, 13)) {
    case 0: {
      Strings a{"ZADD", k};
      if (chance(20)) a.push_back(*gen::element<std::string>("GT", "LT", "NX", "XX", "CH"));
      if (chance(20)) a.push_back("INCR");
      append(a, {bfloat(), pick(kMembers)});
      return command(a);
    }
    case 1:
      return command({"ZINCRBY", k, bfloat(), pick(kMembers)});
    case 2: {
      Strings a{*gen::element<std::string>("ZRANGE", "ZREVRANGE"), k, bint(), bint()};
      if (chance(30)) a.push_back("WITHSCORES");
      return command(a);
    }
    case 3:
    case 4: {
      const bool lex = chance(30);
      Strings a{"ZRANGE", k};
      if (lex) {
        append(a, {pick(kBoundLexRanges), pick(kBoundLexRanges), "BYLEX"});
      } else {
        append(a, {pick(kBoundScoreRanges), pick(kBoundScoreRanges), "BYSCORE"});
      }
      if (chance(30)) a.push_back("REV");
      if (chance(70)) append(a, {"LIMIT", bint(), bint()});
      return command(a);
    }
    case 5: {
      const int r = *gen::inRange(0, 4);
      static const Strings names = {"ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZRANGEBYLEX", "ZREVRANGEBYLEX"};
      const Strings& bounds = r < 2 ? kBoundScoreRanges : kBoundLexRanges;
      Strings a{names[static_cast<size_t>(r)], k, pick(bounds), pick(bounds)};
      if (chance(70)) append(a, {"LIMIT", bint(), bint()});
      return command(a);
    }
    case 6:
      return command({"ZCOUNT", k, pick(kBoundScoreRanges), pick(kBoundScoreRanges)});
    case 7:
      return command({"ZLEXCOUNT", k, pick(kBoundLexRanges), pick(kBoundLexRanges)});
    case 8: {
      Strings a{*gen::element<std::string>("ZPOPMIN", "ZPOPMAX"), k};
      if (chance(80)) a.push_back(bint());
      return command(a);
    }
    case 9: {
      static const Strings ops = {"ZUNION",      "ZINTER",     "ZDIFF",     "ZUNIONSTORE",
                                  "ZINTERSTORE", "ZDIFFSTORE", "ZINTERCARD"};
      const std::string op = pick(ops);
      Strings a{op};
      if (op.size() > 6 && op.substr(op.size() - 5) == "STORE") a.push_back("z:b");
      const bool good_numkeys = chance(50);
      a.push_back(good_numkeys ? "2" : bint());
      append(a, {k, bkey("z:b")});
      if (op == "ZINTERCARD") {
        if (chance(60)) append(a, {"LIMIT", bint()});
      } else if (chance(60)) {
        append(a, {"WEIGHTS", bfloat(), bfloat()});
      }
      return command(a);
    }
    case 10:
      return command({"ZRANGESTORE", "z:b", k, bint(), bint()});
    case 11:
      return command({*gen::element<std::string>("ZSCORE", "ZMSCORE", "ZREM"), k, pick(kMembers)});
    default:
      return command({"ZCARD", k});
  }
}

Step boundary_streams() {
  const std::string k = bkey("x:a");
  switch (*gen::inRange(0, 14)) {
    case 0:
    case 1: {
      Strings a{"XADD", k};
      const int r = *gen::inRange(0, 4);
      if (r == 0) append(a, {"MAXLEN", bint()});
      if (r == 1) append(a, {"MAXLEN", "~", bint(), "LIMIT", bint()});
      if (r == 2) append(a, {"MINID", bid()});
      append(a, {chance(20) ? "*" : bid(), "f", "v"});
      return command(a);
    }
    case 2: {
      Strings a{*gen::element<std::string>("XRANGE", "XREVRANGE"), k, bid(), bid()};
      if (chance(60)) append(a, {"COUNT", bint()});
      return command(a);
    }
    case 3:
      return command({"XDEL", k, bid()});
    case 4: {
      // BLOCK only with values that are refused: an accepted one could wait for ever.
      Strings a{"XREAD"};
      if (chance(60)) append(a, {"COUNT", bint()});
      if (chance(30)) {
        append(a, {"BLOCK",
                   *gen::element<std::string>("-1", "-9223372036854775808", "9223372036854775808", "abc", "1.5", "")});
      }
      append(a, {"STREAMS", k, bid()});
      return command(a);
    }
    case 5: {
      Strings a{"XREADGROUP", "GROUP", "g1", "c1"};
      if (chance(60)) append(a, {"COUNT", bint()});
      if (chance(20)) append(a, {"BLOCK", *gen::element<std::string>("-1", "abc", "9223372036854775808")});
      append(a, {"STREAMS", k, chance(40) ? ">" : bid()});
      return command(a);
    }
    case 6:
      return command({"XACK", k, "g1", bid()});
    case 7: {
      Strings a{"XPENDING", k, "g1"};
      if (chance(30)) append(a, {"IDLE", bint()});
      append(a, {bid(), bid(), bint()});
      return command(a);
    }
    case 8: {
      Strings a{"XCLAIM", k, "g1", "c2", bint(), bid()};
      append_one_of(a, {{"IDLE", bint}, {"TIME", bms}, {"RETRYCOUNT", bint}, {"LASTID", bid}});
      if (chance(30)) a.push_back("JUSTID");
      return command(a);
    }
    case 9: {
      Strings a{"XAUTOCLAIM", k, "g1", "c2", bint(), bid()};
      if (chance(70)) append(a, {"COUNT", xautoclaim_count()});
      return command(a);
    }
    case 10: {
      const int r = *gen::inRange(0, 3);
      if (r == 0) return command({"XGROUP", "CREATE", k, "g2", bid(), "MKSTREAM"});
      if (r == 1) return command({"XGROUP", "SETID", k, "g1", bid()});
      return command({"XGROUP", "CREATECONSUMER", k, "g1", bint()});
    }
    case 11: {
      Strings a{"XINFO", "STREAM", k, "FULL"};
      if (chance(70)) append(a, {"COUNT", bint()});
      return command(a);
    }
    case 12:
      return command({"XINFO", *gen::element<std::string>("GROUPS", "CONSUMERS"), k, "g1"});
    default:
      return command({"XLEN", k});
  }
}

// Multi-key pops, SORT, bits, XTRIM, PUBSUB, functions. No blocking pop (a timeout of 0 would
// block the sequence forever), no ZRANDMEMBER (its answer is random), SETBIT offsets only from a
// fixed list (a valid offset near 2^32 makes both servers allocate 512 MB), and SORT of sets only:
// SORT turns a sorted set into a skiplist, whose ZSCAN pages by hash-table cursor in Redis
// (docs/redis.md: the simulated H/S/ZSCAN answer a collection whole); SORT of a sorted set is
// in engine_vs_real_test's corpus.
Step boundary_added() {
  switch (*gen::inRange(0, 8)) {
    case 0: {
      Strings a{"ZMPOP", *gen::element<std::string>("1", "2", "0", "-1", "3"), "z:a", "z:b",
                *gen::element<std::string>("MIN", "MAX", "LEFT")};
      if (chance(60)) append(a, {"COUNT", bint()});
      return command(a);
    }
    case 1: {
      Strings a{"SORT", *gen::element<std::string>("set:a", "set:b", "s:a", "x:a", "nokey")};
      if (chance(50)) a.push_back("ALPHA");
      if (chance(40)) a.push_back(*gen::element<std::string>("ASC", "DESC"));
      if (chance(60)) append(a, {"LIMIT", bint(), bint()});
      if (chance(20)) append(a, {"GET", *gen::element<std::string>("#", "s:*", "h:*->f1", "nosuch")});
      return command(a);
    }
    case 2:
      return command({"SORT_RO", "set:b", "ALPHA", *gen::element<std::string>("ASC", "DESC"), "LIMIT", bint(), bint()});
    case 3:
      return command({"SETBIT", *gen::element<std::string>("s:b", "bits", "h:a"),
                      *gen::element<std::string>("-1", "abc", "7", "100", "4294967296", "9223372036854775807", ""),
                      *gen::element<std::string>("0", "1", "2", "-1", "abc")});
    case 4:
      return command({"GETBIT", *gen::element<std::string>("s:a", "bits", "nokey", "h:a"), bint()});
    case 5: {
      Strings a{"XTRIM", "x:a"};
      if (chance(50)) {
        append(a, {"MAXLEN", *gen::element<std::string>("=", "~"), bint()});
      } else {
        append(a, {"MINID", *gen::element<std::string>("=", "~"), bid()});
      }
      if (chance(30)) append(a, {"LIMIT", bint()});
      return command(a);
    }
    case 6:
      return command({"PUBSUB", *gen::element<std::string>("NUMSUB", "CHANNELS", "NUMPAT"), bint()});
    default:
      return command({*gen::element<std::string>("FCALL", "FCALL_RO"), "nosuchfn", bint()});
  }
}

Step boundary_misc() {
  static const std::shared_ptr<const ScriptRegistry> registry = diff_scripts();  // immutable
  switch (*gen::inRange(0, 9)) {
    case 0:
    case 1: {
      const std::string name = *gen::element<std::string>("cas_delete", "hsum");
      // EVALSHA now and then with a script's text: a SHA1 of the wrong length. numkeys is 1
      // (the shape both scripts are written for: one key, then their ARGV) or refused before
      // the script runs: a registered C++ script indexes the KEYS/ARGV it was written for.
      const bool sha = chance(50);
      return command({sha ? "EVALSHA" : "EVAL",
                      sha && chance(80) ? registry->sha1_of(name) : registry->by_name(name)->lua,
                      *gen::element<std::string>("1", "4", "-1", "9223372036854775807", "-9223372036854775808",
                                                 "9223372036854775808", "2147483648", "1.5", "abc", "", "+1", "01"),
                      "s:a", "f1", "f2"});
    }
    case 2:
      return command({"FCALL", "nosuchfn", bint(), "s:a"});
    case 3:
      // HELLO's refused versions (2 and 3 succeed with a server-specific map, or switch RESP).
      return command(
          {"HELLO", *gen::element<std::string>("0", "1", "4", "-1", "9223372036854775807", "-9223372036854775808",
                                               "9223372036854775808", "abc", "1.5", "")});
    case 4:
      return command({"CONFIG", "SET",
                      *gen::element<std::string>("maxmemory-samples", "hash-max-listpack-entries",
                                                 "set-max-intset-entries", "zset-max-listpack-value"),
                      bint()});
    case 5:
      return command({"PUBLISH", "ch1", bint()});
    case 6:
      return command({*gen::element<std::string>("PING", "ECHO"), bint()});
    default:
      return command({"HSET", "h:a", "f1", bint()});
  }
}

// The same data on both sides before the boundaries: one key of each type, a consumer group
// with a pending entry.
std::vector<Step> boundary_prelude() {
  return {command({"SET", "s:a", "hello"}, 0),
          command({"SET", "s:b", "yellow"}, 0),
          command({"SET", "n", "10"}, 0),
          command({"HSET", "h:a", "f1", "1", "f2", "v2"}, 0),
          command({"SADD", "set:a", "1", "2", "m1"}, 0),
          command({"SADD", "set:b", "2", "m1", "m2"}, 0),
          command({"ZADD", "z:a", "1", "m1", "2", "m2", "3", "m3"}, 0),
          command({"ZADD", "z:b", "1", "m1", "5", "m4"}, 0),
          command({"XADD", "x:a", "1-1", "f", "v"}, 0),
          command({"XADD", "x:a", "2-0", "f", "v"}, 0),
          command({"XGROUP", "CREATE", "x:a", "g1", "0"}, 0),
          command({"XREADGROUP", "GROUP", "g1", "c1", "COUNT", "1", "STREAMS", "x:a", ">"}, 0)};
}

}  // namespace

rc::Gen<Step> gen_boundary_step() {
  return gen::resize(100, gen::exec([] {
                       const int r = *gen::inRange(0, 100);
                       Step s = r < 22   ? boundary_strings()
                                : r < 38 ? boundary_keys()
                                : r < 46 ? boundary_hashes()
                                : r < 54 ? boundary_sets()
                                : r < 74 ? boundary_zsets()
                                : r < 88 ? boundary_streams()
                                : r < 94 ? boundary_added()
                                         : boundary_misc();
                       s.client = 0;
                       return s;
                     }));
}

rc::Gen<std::vector<Step>> gen_boundary_sequence(int max_steps) {
  return gen::exec([max_steps] {
    const auto body = *gen::resize(max_steps, gen::container<std::vector<Step>>(gen_boundary_step()));
    std::vector<Step> steps = boundary_prelude();
    steps.insert(steps.end(), body.begin(), body.end());
    return steps;
  });
}

}  // namespace fl::redis_diff
