#include "properties/redis/redis_diff.h"
#include "impl/ports/assert.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace fl::redis_diff {
namespace {

using Kind = RedisReply::Kind;

// A reader must be parked in the server before the writer runs; both sides wait this long.
constexpr int64_t kBlockedSettleMs = 15;

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void sleep_ms(int64_t ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

std::string shorten(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 48)) out += (c == '\n' ? ' ' : c);
  if (s.size() > 48) out += "...(" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool quote = a.empty() || a.find(' ') != std::string::npos;
    out += quote ? "'" + shorten(a) + "'" : shorten(a);
  }
  return out;
}

}  // namespace

bool is_message_push(const RedisReply& r) {
  return r.kind == Kind::kArray && r.elements.size() == 3 && r.elements[0].kind == Kind::kBulk &&
         r.elements[0].str == "message";
}

bool is_confirmation(const RedisReply& r) {
  return r.kind == Kind::kArray && r.elements.size() == 3 && r.elements[0].kind == Kind::kBulk &&
         (r.elements[0].str == "subscribe" || r.elements[0].str == "unsubscribe") &&
         r.elements[2].kind == Kind::kInteger;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string Step::describe() const {
  switch (kind) {
    case Kind::kWait:
      return "wait " + std::to_string(wait_ms) + " ms";
    case Kind::kBlockedRead:
      return "c" + std::to_string(client) + " " + join(argv) + "  ||  while blocked: c" + std::to_string(writer) + " " +
             join(writer_argv);
    case Kind::kCommand:
      break;
  }
  return "c" + std::to_string(client) + " " + join(argv);
}

std::string describe(const std::vector<Step>& steps) {
  std::string out;
  for (size_t i = 0; i < steps.size(); ++i) out += "  #" + std::to_string(i) + " " + steps[i].describe() + "\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
// EngineSide

EngineSide::EngineSide(std::shared_ptr<const ScriptRegistry> scripts, std::string name)
    : scripts_(std::move(scripts)), name_(std::move(name)) {
  reset();
}

void EngineSide::reset() {
  sim::redis::EngineOptions o;
  o.scripts = scripts_;
  engine_ = std::make_unique<sim::redis::Engine>(o);
  signal_log_.clear();
  for (int c = 0; c < kClients; ++c) {
    pending_[c].reset();
    sessions_[c] = sim::redis::Session{};
    sessions_[c].id = static_cast<uint64_t>(c + 1);
    inbox_[c].clear();
  }
}

RedisReply EngineSide::execute(int client, const std::vector<std::string>& argv) {
  RedisReply r = engine_->execute(sessions_[client], argv, wall_ms());
  for (auto& d : engine_->take_deliveries()) {
    FL_ASSERT(d.session_id >= 1 && d.session_id <= kClients);
    inbox_[d.session_id - 1].push_back({d.channel, d.payload});
  }
  for (auto& k : engine_->take_signaled_keys()) signal_log_.push_back(std::move(k));
  return r;
}

void EngineSide::begin(int client, const std::vector<std::string>& argv) {
  FL_ASSERT(client >= 0 && client < kClients && !pending_[client]);
  Pending p;
  p.argv = argv;
  p.start_ms = wall_ms();
  p.reply = execute(client, argv);
  p.blocked = sessions_[client].blocked.has_value();
  p.signals_seen = signal_log_.size();
  pending_[client] = std::move(p);
}

RedisReply EngineSide::finish(int client) {
  FL_ASSERT(pending_[client]);
  Pending p = std::move(*pending_[client]);
  pending_[client].reset();
  sim::redis::Session& s = sessions_[client];
  if (p.blocked) {
    FL_ASSERT(s.blocked);
    const sim::redis::BlockRequest wanted = *s.blocked;
    bool woken = false;
    for (size_t i = p.signals_seen; i < signal_log_.size() && !woken; ++i) {
      woken = std::find(wanted.keys.begin(), wanted.keys.end(), signal_log_[i]) != wanted.keys.end();
    }
    if (woken) {
      p.reply = execute(
          client,
          p.argv);  // `blocked` still set: the engine knows it was woken  // answers, or blocks again (another reader took it)
    }
    if (!woken || s.blocked) {
      s.blocked.reset();
      if (wanted.timeout_ms <= 0) return RedisReply::error("redis_diff: BLOCK 0 would wait forever");
      // Nobody else can wake it now: it times out, as on the real server.
      sleep_ms(wanted.timeout_ms - (wall_ms() - p.start_ms));
      p.reply = RedisReply::nil_array();
    }
  }
  return corrupt ? corrupt(p.argv, std::move(p.reply)) : p.reply;
}

std::vector<RedisPubSubMessage> EngineSide::take_messages(int client, int64_t /*wait_ms*/) {
  std::vector<RedisPubSubMessage> out;
  out.swap(inbox_[client]);
  if (lose_messages) out.clear();
  return out;
}

namespace {

// Per-side bookkeeping the normalisations need.
struct SideState {
  std::vector<std::string> auto_ids;  // k -> this side's k-th auto id
  // (stream key, auto id) -> "auto<k>". Keyed by stream: two streams may get the same id.
  std::map<std::pair<std::string, std::string>, std::string> tokens;
  // auto id -> its first token, for an auto id used as an explicit id elsewhere (@auto<k>).
  std::map<std::string, std::string> any_stream_tokens;
  bool in_multi[kClients] = {};
  std::vector<std::vector<std::string>> queued[kClients];
  std::map<std::string, std::string> clock_tokens;  // N7: clock-chosen id -> "clock<k>"
};

// N7: "<13 digits>-<digits>" with the milliseconds within a day of `now_ms`.
bool is_clock_id(const std::string& s, int64_t now_ms) {
  const size_t dash = s.find('-');
  if (dash != 13 || dash + 1 >= s.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i != dash && !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  constexpr int64_t kDayMs = 86'400'000;
  return std::llabs(std::atoll(s.c_str()) - now_ms) <= kDayMs;
}

RedisReply tokenize_clock_ids(SideState& s, RedisReply r, int64_t now_ms) {
  if ((r.kind == Kind::kBulk || r.kind == Kind::kStatus) && is_clock_id(r.str, now_ms)) {
    auto [it, added] = s.clock_tokens.emplace(r.str, "clock" + std::to_string(s.clock_tokens.size()));
    r.str = it->second;
  }
  for (auto& e : r.elements) e = tokenize_clock_ids(s, std::move(e), now_ms);
  return r;
}

// Position of the id argument of an XADD argv, or 0 when malformed.
size_t xadd_id_index(const std::vector<std::string>& argv) {
  size_t i = 2;
  if (i < argv.size() && upper(argv[i]) == "NOMKSTREAM") ++i;
  if (i < argv.size() && (upper(argv[i]) == "MAXLEN" || upper(argv[i]) == "MINID")) {
    ++i;
    if (i < argv.size() && (argv[i] == "=" || argv[i] == "~")) ++i;
    ++i;
    if (i < argv.size() && upper(argv[i]) == "LIMIT") i += 2;
  }
  return i < argv.size() ? i : 0;
}

std::vector<std::string> substitute(const SideState& s, std::vector<std::string> argv) {
  for (auto& a : argv) {
    if (a.rfind("@auto", 0) != 0) continue;
    size_t k = static_cast<size_t>(std::atoi(a.c_str() + 5));
    a = k < s.auto_ids.size() ? s.auto_ids[k] : "0-1";
  }
  return argv;
}

void register_auto_ids(SideState& s, const std::vector<std::string>& argv, const RedisReply& reply) {
  if (argv.empty() || reply.kind != Kind::kBulk || upper(argv[0]) != "XADD") return;
  size_t i = xadd_id_index(argv);
  if (i == 0 || argv[i] != "*" || s.tokens.count({argv[1], reply.str})) return;
  s.tokens[{argv[1], reply.str}] = "auto" + std::to_string(s.auto_ids.size());
  s.any_stream_tokens.emplace(reply.str, "auto" + std::to_string(s.auto_ids.size()));
  s.auto_ids.push_back(reply.str);
}

// Tracks MULTI state and auto ids after `reply` (already compared) for `argv` on `client`.
void note_reply(SideState& s, int client, const std::vector<std::string>& argv, const RedisReply& reply) {
  const std::string cmd = upper(argv[0]);
  if (s.in_multi[client]) {
    if (cmd == "EXEC" || cmd == "DISCARD") {
      if (cmd == "EXEC" && reply.kind == Kind::kArray && reply.elements.size() == s.queued[client].size()) {
        for (size_t i = 0; i < reply.elements.size(); ++i) register_auto_ids(s, s.queued[client][i], reply.elements[i]);
      }
      s.in_multi[client] = false;
      s.queued[client].clear();
    } else if (reply.kind == Kind::kStatus && reply.str == "QUEUED") {
      s.queued[client].push_back(argv);
    }
    return;
  }
  if (cmd == "MULTI" && reply == RedisReply::ok()) {
    s.in_multi[client] = true;
    s.queued[client].clear();
    return;
  }
  register_auto_ids(s, argv, reply);
}

// Replaces the auto ids of stream `key` in `r` by their tokens (and applies N1).
RedisReply tokenize_key(const SideState& s, const std::string& key, RedisReply r) {
  if (r.kind == Kind::kNilArray) return RedisReply::nil();  // N1
  if (r.kind == Kind::kBulk) {
    auto it = s.tokens.find({key, r.str});
    if (it != s.tokens.end()) {
      r.str = it->second;
    } else if (auto any = s.any_stream_tokens.find(r.str); any != s.any_stream_tokens.end()) {
      r.str = any->second;
    }
  }
  for (auto& e : r.elements) e = tokenize_key(s, key, std::move(e));
  return r;
}

// The value after each bulk `name` in a RESP2 map (flat key, value, ...), at any depth,
// replaced by `value`.
RedisReply replace_map_values(RedisReply r, const std::set<std::string>& names, const RedisReply& value) {
  for (size_t i = 0; i + 1 < r.elements.size(); ++i) {
    if (r.elements[i].kind == Kind::kBulk && names.count(r.elements[i].str)) r.elements[i + 1] = value;
  }
  for (auto& e : r.elements) e = replace_map_values(std::move(e), names, value);
  return r;
}

// XINFO names its stream in argv[2]. N3 for XINFO: radix-tree-nodes counts the nodes of the
// radix tree of the node ids' bytes, so once a side's clock chose ids it is not comparable.
RedisReply tokenize_xinfo(const SideState& s, const std::string& key, RedisReply r) {
  auto it = s.tokens.lower_bound({key, ""});
  if (it != s.tokens.end() && it->first.first == key) {
    r = replace_map_values(std::move(r), {"radix-tree-nodes"}, RedisReply::integer_of(0));
  }
  return tokenize_key(s, key, std::move(r));
}

// XREADGROUP names its streams in the reply ([[key, entries], ...]); other commands act on
// argv[1].
RedisReply tokenize(const SideState& s, const std::vector<std::string>& argv, RedisReply r) {
  if (upper(argv[0]) == "XREADGROUP" && r.kind == Kind::kArray) {
    for (auto& per_stream : r.elements) {
      if (per_stream.kind != Kind::kArray || per_stream.elements.size() != 2) continue;
      const std::string key = per_stream.elements[0].str;
      per_stream.elements[1] = tokenize_key(s, key, std::move(per_stream.elements[1]));
    }
    return tokenize_key(s, "", std::move(r));
  }
  if (upper(argv[0]) == "XINFO" && argv.size() > 2) return tokenize_xinfo(s, argv[2], std::move(r));
  return tokenize_key(s, argv.size() > 1 ? argv[1] : "", std::move(r));
}

// XINFO STREAM FULL: [id, consumer, delivery-time, count] (group PEL) and [id, delivery-time,
// count] (consumer PEL) under "pending" keys.
RedisReply zero_delivery_times(RedisReply r) {
  for (size_t i = 0; i + 1 < r.elements.size(); ++i) {
    if (r.elements[i].kind != Kind::kBulk || r.elements[i].str != "pending") continue;
    for (RedisReply& p : r.elements[i + 1].elements) {
      if (p.kind == Kind::kArray && (p.elements.size() == 4 || p.elements.size() == 3)) {
        p.elements[p.elements.size() - 2] = RedisReply::integer_of(0);
      }
    }
  }
  for (auto& e : r.elements) e = zero_delivery_times(std::move(e));
  return r;
}

// N6: HRANDFIELD. Both sides answer the same shape and size; a positive count that exceeds the
// hash (fewer fields came back than asked for) returns the whole hash, so then the sets agree.
// (That a single random field belongs to the hash is checked by the directed tests.)
bool same_random_sample(const std::vector<std::string>& argv, const RedisReply& a, const RedisReply& b) {
  if (a.kind != b.kind) return false;
  if (a.kind != Kind::kArray || argv.size() < 3) return a.kind == Kind::kBulk || a == b;
  if (a.elements.size() != b.elements.size()) return false;
  const long long count = std::atoll(argv[2].c_str());
  const size_t n = a.elements.size() / (argv.size() == 4 ? 2 : 1);
  return !(count > 0 && n < static_cast<size_t>(count));
}

// N2: a canonical order for replies whose order Redis does not specify.
RedisReply canonical(const std::vector<std::string>& argv, RedisReply r) {
  if (r.kind != Kind::kArray || argv.empty()) return r;
  const std::string cmd = upper(argv[0]);
  auto by_describe = [](const RedisReply& x, const RedisReply& y) { return x.describe() < y.describe(); };
  if (cmd == "UNSUBSCRIBE" && argv.size() == 1) {
    // All channels, in the order of the server's channel dict: channel names sorted, the
    // remaining-subscription counts (positional) kept.
    std::vector<RedisReply> names;
    for (const auto& e : r.elements) {
      if (e.kind == Kind::kArray && e.elements.size() == 3) names.push_back(e.elements[1]);
    }
    if (names.size() != r.elements.size()) return r;
    std::sort(names.begin(), names.end(), by_describe);
    for (size_t i = 0; i < names.size(); ++i) r.elements[i].elements[1] = names[i];
  } else if (cmd == "SMEMBERS" || cmd == "SINTER" || cmd == "SUNION" || cmd == "SDIFF") {
    std::sort(r.elements.begin(), r.elements.end(), by_describe);
  } else if ((cmd == "SCAN" || cmd == "SSCAN" || cmd == "HSCAN" || cmd == "ZSCAN") && r.elements.size() == 2 &&
             r.elements[1].kind == Kind::kArray) {
    // The SCAN family walks the server's hash tables (or a listpack's insertion order); with the
    // cursor back at 0 the elements are compared as a set (HSCAN/ZSCAN as pairs).
    std::vector<RedisReply>& items = r.elements[1].elements;
    const size_t step = (cmd == "HSCAN" || cmd == "ZSCAN") ? 2 : 1;
    std::vector<std::vector<RedisReply>> groups;
    for (size_t i = 0; i + step <= items.size(); i += step)
      groups.emplace_back(items.begin() + i, items.begin() + i + step);
    std::sort(groups.begin(), groups.end(), [&](const auto& x, const auto& y) { return by_describe(x[0], y[0]); });
    items.clear();
    for (auto& g : groups) items.insert(items.end(), g.begin(), g.end());
  } else if (cmd == "XINFO") {
    // N4 for XINFO: idle and seen times, and the delivery times of FULL's pending lists, are
    // clock readings; they are zeroed (their arithmetic is unit-tested in the engine).
    r = replace_map_values(std::move(r), {"idle", "seen-time"}, RedisReply::integer_of(0));
    r = zero_delivery_times(std::move(r));
  } else if (cmd == "HRANDFIELD") {
    // N6: a random sample: compared as a set (of field/value pairs with WITHVALUES); see
    // same_random_sample for what must agree.
    const size_t step = argv.size() == 4 ? 2 : 1;
    std::vector<std::vector<RedisReply>> groups;
    for (size_t i = 0; i + step <= r.elements.size(); i += step) {
      groups.emplace_back(r.elements.begin() + i, r.elements.begin() + i + step);
    }
    std::sort(groups.begin(), groups.end(), [&](const auto& x, const auto& y) { return by_describe(x[0], y[0]); });
    r.elements.clear();
    for (auto& g : groups) r.elements.insert(r.elements.end(), g.begin(), g.end());
  } else if (cmd == "HGETALL" && r.elements.size() % 2 == 0) {
    std::vector<std::pair<RedisReply, RedisReply>> pairs;
    for (size_t i = 0; i + 1 < r.elements.size(); i += 2) pairs.emplace_back(r.elements[i], r.elements[i + 1]);
    std::sort(pairs.begin(), pairs.end(), [&](const auto& x, const auto& y) { return by_describe(x.first, y.first); });
    r.elements.clear();
    for (auto& [f, v] : pairs) {
      r.elements.push_back(f);
      r.elements.push_back(v);
    }
  }
  return r;
}

bool within(const RedisReply& a, const RedisReply& b, int64_t tolerance) {
  return a.kind == Kind::kInteger && b.kind == Kind::kInteger && a.integer >= 0 && b.integer >= 0 &&
         std::llabs(a.integer - b.integer) <= tolerance;
}

// N5: "<message> script: <sha1>, on @user_script:<line>." -> "<message>".
std::string strip_script_decoration(const std::string& e) {
  size_t p = e.find(" script: ");
  return p == std::string::npos ? e : e.substr(0, p);
}

bool is_extended_xpending(const std::vector<std::string>& argv) {
  return upper(argv[0]) == "XPENDING" && argv.size() >= 6;
}

bool same_reply_strict(const std::vector<std::string>& argv, const RedisReply& a, const RedisReply& b,
                       const std::vector<std::vector<std::string>>* queued, const CompareOptions& o,
                       std::map<std::string, int>* hits);

// Compares replies of one command (already tokenized and canonical); a recorded known
// difference counts as equal (and is counted in *hits).
bool same_reply(const std::vector<std::string>& argv, const RedisReply& a, const RedisReply& b,
                const std::vector<std::vector<std::string>>* queued, const CompareOptions& o,
                std::map<std::string, int>* hits) {
  if (same_reply_strict(argv, a, b, queued, o, hits)) return true;
  if (o.known == nullptr) return false;
  for (const KnownDifference& kd : *o.known) {
    if (kd.matches(argv, a, b)) {
      ++(*hits)[kd.id];
      return true;
    }
  }
  return false;
}

bool same_reply_strict(const std::vector<std::string>& argv, const RedisReply& a, const RedisReply& b,
                       const std::vector<std::vector<std::string>>* queued, const CompareOptions& o,
                       std::map<std::string, int>* hits) {
  if (a == b) return true;
  const std::string cmd = upper(argv[0]);
  if (cmd == "PTTL" || cmd == "PEXPIRETIME") return within(a, b, o.pttl_tolerance_ms);  // N4
  if (cmd == "EXPIRETIME") return within(a, b, 1);
  if (cmd == "TTL") return within(a, b, 1);
  if (cmd == "HRANDFIELD") return same_random_sample(argv, a, b);
  if ((cmd == "EVAL" || cmd == "EVALSHA") && a.is_error() && b.is_error()) {
    return strip_script_decoration(a.str) == strip_script_decoration(b.str);
  }
  if ((cmd == "EVAL" || cmd == "EVALSHA") && o.script_clock_equal) {
    return o.script_clock_equal(argv, a, b, o.pttl_tolerance_ms);  // N8
  }
  if (cmd == "EXEC" && queued && a.kind == Kind::kArray && b.kind == Kind::kArray &&
      a.elements.size() == b.elements.size() && a.elements.size() == queued->size()) {
    for (size_t i = 0; i < a.elements.size(); ++i) {
      if (!same_reply((*queued)[i], a.elements[i], b.elements[i], nullptr, o, hits)) return false;
    }
    return true;
  }
  if (is_extended_xpending(argv) && a.kind == Kind::kArray && b.kind == Kind::kArray &&
      a.elements.size() == b.elements.size()) {
    for (size_t i = 0; i < a.elements.size(); ++i) {
      const RedisReply& x = a.elements[i];
      const RedisReply& y = b.elements[i];
      if (x.elements.size() != 4 || y.elements.size() != 4) return false;
      if (x.elements[0] != y.elements[0] || x.elements[1] != y.elements[1] || x.elements[3] != y.elements[3])
        return false;
      if (!within(x.elements[2], y.elements[2], o.idle_tolerance_ms)) return false;
    }
    return true;
  }
  return false;
}

RedisReply normalise(const SideState& s, const std::vector<std::string>& argv, const RedisReply& r,
                     const std::vector<std::vector<std::string>>* queued) {
  if (upper(argv[0]) == "EXEC" && queued && r.kind == Kind::kArray && r.elements.size() == queued->size()) {
    RedisReply t = r;
    for (size_t i = 0; i < t.elements.size(); ++i) {
      t.elements[i] = canonical((*queued)[i], tokenize(s, (*queued)[i], std::move(t.elements[i])));
    }
    return t;
  }
  return canonical(argv, tokenize(s, argv, r));
}

int64_t published_count(const std::vector<std::string>& argv, const RedisReply& r,
                        const std::vector<std::vector<std::string>>* queued) {
  const std::string cmd = upper(argv[0]);
  if (cmd == "PUBLISH" && r.kind == Kind::kInteger) return r.integer;
  if (cmd == "EXEC" && queued && r.kind == Kind::kArray && r.elements.size() == queued->size()) {
    int64_t n = 0;
    for (size_t i = 0; i < queued->size(); ++i) n += published_count((*queued)[i], r.elements[i], nullptr);
    return n;
  }
  return 0;
}

bool timing_sensitive_step(const Step& s) {
  if (s.kind != Step::Kind::kCommand) return true;
  for (const auto& a : s.argv) {
    std::string u = upper(a);
    if (u == "EX" || u == "PX" || u == "EXPIRE" || u == "PEXPIRE" || u == "PTTL" || u == "TTL" || u == "XAUTOCLAIM" ||
        u == "XCLAIM" || u == "XPENDING" || u == "BLOCK" || u == "INCR_TTL" || u.find("PEXPIRE") != std::string::npos ||
        u == "EXPIRETIME") {
      return true;
    }
  }
  return false;
}

struct Collected {
  std::vector<RedisPubSubMessage> per_client[kClients];
  size_t total() const {
    size_t n = 0;
    for (const auto& v : per_client) n += v.size();
    return n;
  }
};

// Gathers the messages of every connection, waiting (bounded) until `expected` have arrived.
void collect(Side& side, int64_t expected, Collected* out) {
  for (int c = 0; c < kClients; ++c) {
    auto got = side.take_messages(c, 0);
    out->per_client[c].insert(out->per_client[c].end(), got.begin(), got.end());
  }
  for (int round = 0; round < 25 && static_cast<int64_t>(out->total()) < expected; ++round) {
    for (int c = 0; c < kClients; ++c) {
      auto got = side.take_messages(c, 20);
      out->per_client[c].insert(out->per_client[c].end(), got.begin(), got.end());
    }
  }
}

std::string describe_messages(const std::vector<RedisPubSubMessage>& m) {
  std::string out = "[";
  for (size_t i = 0; i < m.size(); ++i) out += (i ? ", " : "") + m[i].describe();
  return out + "]";
}

}  // namespace

RunResult run_and_compare(Side& a, Side& b, const std::vector<Step>& steps, const CompareOptions& o) {
  a.reset();
  b.reset();
  RunResult result;
  SideState sa, sb;
  std::ostringstream report;
  report << "sides: A=" << a.name() << " B=" << b.name() << "\n";
  for (const Step& s : steps) result.timing_sensitive |= timing_sensitive_step(s);

  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    report << "  #" << i << " " << step.describe() << "\n";
    if (step.kind == Step::Kind::kWait) {
      sleep_ms(step.wait_ms);
      continue;
    }
    // (UN)SUBSCRIBE inside MULTI desynchronises RESP2 replies on a real server: skipped.
    const std::string cmd0 = upper(step.argv[0]);
    if ((cmd0 == "SUBSCRIBE" || cmd0 == "UNSUBSCRIBE") && sa.in_multi[step.client]) {
      report << "      (skipped: (un)subscribe inside MULTI)\n";
      continue;
    }
    struct Exchange {
      int client;
      std::vector<std::string> argv_a, argv_b;
      RedisReply ra, rb;
    };
    std::vector<Exchange> ex;
    // Both sides advance together, so that their clocks see the same elapsed times.
    if (step.kind == Step::Kind::kCommand) {
      Exchange e{step.client, substitute(sa, step.argv), substitute(sb, step.argv), {}, {}};
      a.begin(e.client, e.argv_a);
      b.begin(e.client, e.argv_b);
      e.ra = a.finish(e.client);
      e.rb = b.finish(e.client);
      ex.push_back(std::move(e));
    } else {
      Exchange r{step.client, substitute(sa, step.argv), substitute(sb, step.argv), {}, {}};
      a.begin(r.client, r.argv_a);
      b.begin(r.client, r.argv_b);
      sleep_ms(kBlockedSettleMs);  // the reader is parked in the server before the writer runs
      Exchange w{step.writer, substitute(sa, step.writer_argv), substitute(sb, step.writer_argv), {}, {}};
      a.begin(w.client, w.argv_a);
      b.begin(w.client, w.argv_b);
      w.ra = a.finish(w.client);
      w.rb = b.finish(w.client);
      r.ra = a.finish(r.client);
      r.rb = b.finish(r.client);
      // The writer ran first: register its auto id before the reader's reply is tokenized.
      ex.push_back(std::move(w));
      ex.push_back(std::move(r));
    }
    int64_t published_a = 0, published_b = 0;
    for (Exchange& e : ex) {
      const auto* qa = upper(e.argv_a[0]) == "EXEC" && sa.in_multi[e.client] ? &sa.queued[e.client] : nullptr;
      const auto* qb = upper(e.argv_b[0]) == "EXEC" && sb.in_multi[e.client] ? &sb.queued[e.client] : nullptr;
      // Register auto ids first, so that XADD's own reply becomes a token too.
      if (!sa.in_multi[e.client]) register_auto_ids(sa, e.argv_a, e.ra);
      if (!sb.in_multi[e.client]) register_auto_ids(sb, e.argv_b, e.rb);
      if (qa) {
        for (size_t k = 0; e.ra.kind == Kind::kArray && k < qa->size() && k < e.ra.elements.size(); ++k) {
          register_auto_ids(sa, (*qa)[k], e.ra.elements[k]);
        }
      }
      if (qb) {
        for (size_t k = 0; e.rb.kind == Kind::kArray && k < qb->size() && k < e.rb.elements.size(); ++k) {
          register_auto_ids(sb, (*qb)[k], e.rb.elements[k]);
        }
      }
      RedisReply na = normalise(sa, e.argv_a, e.ra, qa);
      RedisReply nb = normalise(sb, e.argv_b, e.rb, qb);
      if (o.clock_ids) {
        const int64_t now_ms = wall_ms();
        na = tokenize_clock_ids(sa, std::move(na), now_ms);
        nb = tokenize_clock_ids(sb, std::move(nb), now_ms);
      }
      bool same = same_reply(e.argv_a, na, nb, qa, o, &result.known_hits);
      report << "      c" << e.client << " A: " << e.ra.describe() << "\n"
             << "      c" << e.client << " B: " << e.rb.describe() << "\n";
      if (!same) {
        report << "      ^^^ DIFFERENT (normalised A: " << na.describe() << " | B: " << nb.describe() << ")\n";
        result.equal = false;
        result.failed_step = i;
        result.report = report.str();
        return result;
      }
      published_a += published_count(e.argv_a, e.ra, qa);
      published_b += published_count(e.argv_b, e.rb, qb);
      note_reply(sa, e.client, e.argv_a, e.ra);
      note_reply(sb, e.client, e.argv_b, e.rb);
    }
    Collected ma, mb;
    collect(a, published_a, &ma);
    collect(b, published_b, &mb);
    for (int c = 0; c < kClients; ++c) {
      if (ma.per_client[c].size() != mb.per_client[c].size() ||
          !std::equal(ma.per_client[c].begin(), ma.per_client[c].end(), mb.per_client[c].begin(),
                      [](const auto& x, const auto& y) { return x.channel == y.channel && x.payload == y.payload; })) {
        report << "      ^^^ DIFFERENT pub/sub messages on c" << c << ": A " << describe_messages(ma.per_client[c])
               << " | B " << describe_messages(mb.per_client[c]) << "\n";
        result.equal = false;
        result.failed_step = i;
        result.report = report.str();
        return result;
      }
      if (!ma.per_client[c].empty())
        report << "      c" << c << " messages: " << describe_messages(ma.per_client[c]) << "\n";
    }
  }
  result.report = report.str();
  return result;
}

}  // namespace fl::redis_diff
