// Stream commands: XADD XLEN XRANGE XREVRANGE XDEL XGROUP XREADGROUP XACK XPENDING XCLAIM
// XAUTOCLAIM, following Redis 7.0's t_stream.c: argument order of checks, replies, error texts.
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "sim/redis/commands.h"
#include "impl/ports/assert.h"

namespace fl::sim::redis {

namespace {

// XADD/XTRIM's MAXLEN and LIMIT: an integer >= 0, with Redis 7.0's two error texts.
std::optional<int64_t> parse_non_negative(const std::string& arg, const char* what, RedisReply* error) {
  const std::optional<int64_t> v = parse_int64(arg);
  if (!v) {
    *error = err_not_integer();
    return std::nullopt;
  }
  if (*v < 0) {
    *error = RedisReply::error(std::string("ERR The ") + what + " argument must be >= 0.");
    return std::nullopt;
  }
  return v;
}

RedisReply err_invalid_id() { return RedisReply::error("ERR Invalid stream ID specified as stream command argument"); }

RedisReply err_nogroup(const std::string& key, const std::string& group) {
  return RedisReply::error("NOGROUP No such key '" + key + "' or consumer group '" + group + "'");
}

// util.c string2ull.
std::optional<uint64_t> parse_u64(const std::string& s) {
  if (auto v = parse_int64(s)) {
    if (*v < 0) return std::nullopt;
    return static_cast<uint64_t>(*v);
  }
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno == EINVAL || errno == ERANGE || *end != '\0') return std::nullopt;
  return v;
}

// t_stream.c streamGenericParseIDOrReply. `seq_given` non-null allows the <ms>-* form.
std::optional<StreamId> parse_id(const std::string& s, bool strict, uint64_t missing_seq, bool* seq_given = nullptr) {
  if (s.size() > 127) return std::nullopt;
  if (strict && (s == "-" || s == "+")) return std::nullopt;
  if (seq_given) *seq_given = true;
  if (s == "-") return StreamId{0, 0};
  if (s == "+") return StreamId::max();
  const size_t dash = s.find('-');
  auto ms = parse_u64(s.substr(0, dash));
  if (!ms) return std::nullopt;
  if (dash == std::string::npos) return StreamId{*ms, missing_seq};
  const std::string seq_text = s.substr(dash + 1);
  if (seq_given && seq_text == "*") {
    *seq_given = false;
    return StreamId{*ms, 0};
  }
  auto seq = parse_u64(seq_text);
  if (!seq) return std::nullopt;
  return StreamId{*ms, *seq};
}

bool incr_id(StreamId* id) {
  if (id->seq == UINT64_MAX) {
    if (id->ms == UINT64_MAX) return false;
    ++id->ms;
    id->seq = 0;
  } else {
    ++id->seq;
  }
  return true;
}

bool decr_id(StreamId* id) {
  if (id->seq == 0) {
    if (id->ms == 0) return false;
    --id->ms;
    id->seq = UINT64_MAX;
  } else {
    --id->seq;
  }
  return true;
}

// streamParseIntervalIDOrReply + the exclusive adjustments. `start` selects missing seq 0 vs max.
bool parse_interval(const std::string& s, bool start, StreamId* id, RedisReply* error) {
  const bool exclusive = s.size() > 1 && s[0] == '(';
  auto parsed =
      exclusive ? parse_id(s.substr(1), true, start ? 0 : UINT64_MAX) : parse_id(s, false, start ? 0 : UINT64_MAX);
  if (!parsed) {
    *error = err_invalid_id();
    return false;
  }
  *id = *parsed;
  if (exclusive && !(start ? incr_id(id) : decr_id(id))) {
    *error = RedisReply::error(start ? "ERR invalid start ID for the interval" : "ERR invalid end ID for the interval");
    return false;
  }
  return true;
}

RedisReply entry_reply(const StreamId& id, const std::vector<std::string>* fields) {
  if (!fields) return RedisReply::array({RedisReply::bulk(id.str()), RedisReply::nil_array()});
  return RedisReply::array({RedisReply::bulk(id.str()), bulk_array(*fields)});
}

// ---- Stream storage, with the listpack-node layout approximate trimming depends on.

// A new node opens when the last one holds node_max_entries slots (0: no limit), as
// stream-node-max-entries bounds Redis's listpacks.
void stream_append(Stream& s, const StreamId& id, std::vector<std::string> fields, int64_t node_max_entries) {
  if (s.nodes.empty() ||
      (node_max_entries > 0 && s.nodes.rbegin()->second.slots >= static_cast<uint64_t>(node_max_entries))) {
    s.nodes.emplace(id, StreamNode{});
  }
  StreamNode& node = s.nodes.rbegin()->second;
  ++node.slots;
  ++node.live;
  s.entries.emplace(id, std::move(fields));
  s.last_id = id;
  ++s.entries_added;
}

std::map<StreamId, StreamNode>::iterator node_of(Stream& s, const StreamId& id) {
  auto it = s.nodes.upper_bound(id);
  FL_ASSERT(it != s.nodes.begin());
  return std::prev(it);
}

bool stream_delete(Stream& s, const StreamId& id) {
  auto e = s.entries.find(id);
  if (e == s.entries.end()) return false;
  s.entries.erase(e);
  auto node = node_of(s, id);
  FL_ASSERT(node->second.live > 0);
  if (--node->second.live == 0) s.nodes.erase(node);  // the last live entry frees the node
  return true;
}

struct TrimArgs {
  enum class Strategy : uint8_t { kNone, kMaxLen, kMinId } strategy = Strategy::kNone;
  bool approx = false;
  int64_t maxlen = 0;
  StreamId minid;
  int64_t limit = 0;  // 0 = unlimited
};

// t_stream.c streamTrim: the number of entries deleted.
int64_t stream_trim(Stream& s, const TrimArgs& a) {
  if (a.strategy == TrimArgs::Strategy::kNone) return 0;
  int64_t deleted = 0;
  while (!s.nodes.empty()) {
    if (a.strategy == TrimArgs::Strategy::kMaxLen && static_cast<int64_t>(s.entries.size()) <= a.maxlen) break;
    auto node = s.nodes.begin();
    const int64_t live = static_cast<int64_t>(node->second.live);
    if (a.limit && deleted + live > a.limit) break;
    auto next = std::next(node);
    auto first = s.entries.lower_bound(node->first);
    auto end = next == s.nodes.end() ? s.entries.end() : s.entries.lower_bound(next->first);
    bool remove_node;
    if (a.strategy == TrimArgs::Strategy::kMaxLen) {
      remove_node = static_cast<int64_t>(s.entries.size()) - live >= a.maxlen;
    } else {
      const StreamId last = std::prev(end)->first;
      remove_node = last < a.minid;
    }
    if (remove_node) {
      s.entries.erase(first, end);
      s.nodes.erase(node);
      deleted += live;
      continue;
    }
    if (a.approx) break;
    // Exact trimming inside the first node; Redis stops after it.
    for (auto it = first; it != end;) {
      if (a.strategy == TrimArgs::Strategy::kMaxLen && static_cast<int64_t>(s.entries.size()) <= a.maxlen) break;
      if (a.strategy == TrimArgs::Strategy::kMinId && !(it->first < a.minid)) break;
      it = s.entries.erase(it);
      --node->second.live;
      ++deleted;
    }
    break;
  }
  return deleted;
}

std::optional<StreamId> last_valid_id(const Stream& s) {
  if (s.entries.empty()) return std::nullopt;
  return s.entries.rbegin()->first;
}

void pel_remove(ConsumerGroup& g, const StreamId& id) {
  auto it = g.pel.find(id);
  if (it == g.pel.end()) return;
  auto consumer = g.consumers.find(it->second.consumer);
  if (consumer != g.consumers.end()) consumer->second.pending.erase(id);
  g.pel.erase(it);
}

// The consumer `name` of the group `g` of stream `key`, created when new (streamCreateConsumer,
// which announces it with an xgroup-createconsumer notification).
Consumer& consumer_of(Ctx& c, const std::string& key, ConsumerGroup& g, const std::string& name) {
  auto [it, created] = g.consumers.try_emplace(name);
  if (created) c.notify(kNotifyStream, "xgroup-createconsumer", key);
  return it->second;
}

// Assigns the PEL entry `id` of stream `key` to `consumer` (creating the consumer).
PendingEntry& pel_assign(Ctx& ctx, const std::string& key, ConsumerGroup& g, const StreamId& id,
                         const std::string& consumer) {
  const int64_t now_ms = ctx.now_ms;
  auto [it, inserted] = g.pel.try_emplace(id);
  if (!inserted && it->second.consumer != consumer) {
    auto old = g.consumers.find(it->second.consumer);
    if (old != g.consumers.end()) old->second.pending.erase(id);
  }
  it->second.consumer = consumer;
  Consumer& c = consumer_of(ctx, key, g, consumer);
  c.seen_time_ms = now_ms;
  c.pending.insert(id);
  return it->second;
}

// ---- XADD and XTRIM argument parsing (streamParseAddOrTrimArgsOrReply).
struct AddArgs {
  TrimArgs trim;
  bool nomkstream = false;
  bool id_given = false;
  bool seq_given = true;
  StreamId id;
  size_t id_index = 0;
};

bool parse_add_args(Ctx& c, bool xadd, AddArgs* a, RedisReply* error) {
  bool limit_given = false;
  size_t i = 2;
  for (; i < c.argc(); ++i) {
    const size_t more = c.argc() - 1 - i;
    const std::string& opt = c.arg(i);
    if (xadd && opt == "*") break;
    if ((iequals(opt, "maxlen") || iequals(opt, "minid")) && more) {
      if (a->trim.strategy != TrimArgs::Strategy::kNone) {
        *error = RedisReply::error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return false;
      }
      const bool maxlen = iequals(opt, "maxlen");
      const std::string& next = c.arg(i + 1);
      if (more >= 2 && next == "~") {
        a->trim.approx = true;
        ++i;
      } else if (more >= 2 && next == "=") {
        ++i;
      }
      if (maxlen) {
        auto v = parse_non_negative(c.arg(i + 1), "MAXLEN", error);
        if (!v) return false;
        a->trim.maxlen = *v;
        a->trim.strategy = TrimArgs::Strategy::kMaxLen;
      } else {
        auto id = parse_id(c.arg(i + 1), true, 0);
        if (!id) {
          *error = err_invalid_id();
          return false;
        }
        a->trim.minid = *id;
        a->trim.strategy = TrimArgs::Strategy::kMinId;
      }
      ++i;
    } else if (iequals(opt, "limit") && more) {
      auto v = parse_non_negative(c.arg(i + 1), "LIMIT", error);
      if (!v) return false;
      a->trim.limit = *v;
      limit_given = true;
      ++i;
    } else if (xadd && iequals(opt, "nomkstream")) {
      a->nomkstream = true;
    } else if (!xadd) {
      *error = err_syntax();
      return false;
    } else {
      auto id = parse_id(opt, true, 0, &a->seq_given);
      if (!id) {
        *error = err_invalid_id();
        return false;
      }
      a->id = *id;
      a->id_given = true;
      break;
    }
  }
  a->id_index = i;
  if (a->trim.limit && a->trim.strategy == TrimArgs::Strategy::kNone) {
    *error = RedisReply::error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return false;
  }
  if (!xadd && a->trim.strategy == TrimArgs::Strategy::kNone) {
    *error = RedisReply::error("ERR syntax error, XTRIM must be called with a trimming strategy");
    return false;
  }
  if (limit_given) {
    if (!a->trim.approx) {
      *error = RedisReply::error("ERR syntax error, LIMIT cannot be used without the special ~ option");
      return false;
    }
  } else {
    // An approximate trim does at most 100 nodes' worth of work (10,000 entries without a node limit).
    const int64_t node_max = c.options().stream_node_max_entries;
    a->trim.limit = !a->trim.approx ? 0 : node_max > 0 ? 100 * node_max : 10'000;
  }
  return true;
}

// The id XADD gives the new entry (streamAppendItem), or nullopt (EDOM).
std::optional<StreamId> next_add_id(const Stream& s, const AddArgs& a, int64_t now_ms) {
  StreamId id;
  if (a.id_given) {
    if (a.seq_given) {
      id = a.id;
    } else if (s.last_id.ms == a.id.ms) {
      if (s.last_id.seq == UINT64_MAX) return std::nullopt;
      id = {s.last_id.ms, s.last_id.seq + 1};
    } else {
      id = a.id;
    }
  } else {
    const uint64_t ms = now_ms < 0 ? 0 : static_cast<uint64_t>(now_ms);
    if (ms > s.last_id.ms) {
      id = {ms, 0};
    } else {
      id = s.last_id;
      if (!incr_id(&id)) return std::nullopt;
    }
  }
  if (id <= s.last_id) return std::nullopt;
  return id;
}

RedisReply range_generic(Ctx& c, bool reverse) {
  StreamId start, end;
  RedisReply error;
  const std::string& start_arg = reverse ? c.arg(3) : c.arg(2);
  const std::string& end_arg = reverse ? c.arg(2) : c.arg(3);
  if (!parse_interval(start_arg, true, &start, &error)) return error;
  if (!parse_interval(end_arg, false, &end, &error)) return error;
  int64_t count = -1;
  for (size_t j = 4; j < c.argc(); ++j) {
    if (iequals(c.arg(j), "count") && j + 1 < c.argc()) {
      auto v = parse_int64(c.arg(j + 1));
      if (!v) return err_not_integer();
      count = *v < 0 ? 0 : *v;
      ++j;
    } else {
      return err_syntax();
    }
  }
  Stream* s = nullptr;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) return RedisReply::array({});
  if (count == 0) return RedisReply::nil_array();
  std::vector<RedisReply> out;
  if (start > end) return RedisReply::array({});
  auto lo = s->entries.lower_bound(start);
  auto hi = s->entries.upper_bound(end);
  if (!reverse) {
    for (auto it = lo; it != hi && (count < 0 || static_cast<int64_t>(out.size()) < count); ++it) {
      out.push_back(entry_reply(it->first, &it->second));
    }
  } else {
    for (auto it = hi; it != lo && (count < 0 || static_cast<int64_t>(out.size()) < count);) {
      --it;
      out.push_back(entry_reply(it->first, &it->second));
    }
  }
  return RedisReply::array(std::move(out));
}

}  // namespace

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]: the number of entries deleted.
RedisReply cmd_xtrim(Ctx& c) {
  AddArgs a;
  RedisReply error;
  if (!parse_add_args(c, /*xadd=*/false, &a, &error)) return error;
  Stream* s = nullptr;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  const int64_t deleted = s ? stream_trim(*s, a.trim) : 0;
  if (deleted) c.notify(kNotifyStream, "xtrim", c.arg(1));
  return RedisReply::integer_of(deleted);
}

RedisReply cmd_xadd(Ctx& c) {
  AddArgs a;
  RedisReply error;
  if (!parse_add_args(c, /*xadd=*/true, &a, &error)) return error;
  const size_t field_pos = a.id_index + 1;
  if (field_pos > c.argc() || c.argc() - field_pos < 2 || (c.argc() - field_pos) % 2 == 1) return err_arity("xadd");
  if (a.id_given && a.seq_given && a.id == StreamId{0, 0}) {
    return RedisReply::error("ERR The ID specified in XADD must be greater than 0-0");
  }
  Stream* s = nullptr;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) {
    if (a.nomkstream) return RedisReply::nil();
    s = &std::get<Stream>(c.ks.put(c.arg(1), Stream{}).value);
  }
  if (s->last_id == StreamId::max()) {
    return RedisReply::error("ERR The stream has exhausted the last possible ID, unable to add more items");
  }
  auto id = next_add_id(*s, a, c.now_ms);
  if (!id) return RedisReply::error("ERR The ID specified in XADD is equal or smaller than the target stream top item");
  stream_append(*s, *id, std::vector<std::string>(c.argv.begin() + static_cast<long>(field_pos), c.argv.end()),
                c.options().stream_node_max_entries);
  c.signal(c.arg(1));
  c.notify(kNotifyStream, "xadd", c.arg(1));
  if (stream_trim(*s, a.trim) > 0) c.notify(kNotifyStream, "xtrim", c.arg(1));
  return RedisReply::bulk(id->str());
}

RedisReply cmd_xlen(Ctx& c) {
  Stream* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  return RedisReply::integer_of(s ? static_cast<int64_t>(s->entries.size()) : 0);
}

RedisReply cmd_xrange(Ctx& c) { return range_generic(c, false); }
RedisReply cmd_xrevrange(Ctx& c) { return range_generic(c, true); }

RedisReply cmd_xdel(Ctx& c) {
  Stream* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) return RedisReply::integer_of(0);
  std::vector<StreamId> ids;
  for (size_t j = 2; j < c.argc(); ++j) {
    auto id = parse_id(c.arg(j), true, 0);
    if (!id) return err_invalid_id();
    ids.push_back(*id);
  }
  int64_t deleted = 0;
  for (const auto& id : ids) {
    if (stream_delete(*s, id)) {
      ++deleted;
      if (s->max_deleted_id < id) s->max_deleted_id = id;
    }
  }
  return RedisReply::integer_of(deleted);
}

RedisReply cmd_xgroup(Ctx& c) {
  const std::string sub = lower(c.arg(1));
  const std::string& key = c.arg(2);
  const std::string& group_name = c.arg(3);
  bool mkstream = false;
  int64_t entries_read = -1;  // SCG_INVALID_ENTRIES_READ unless ENTRIESREAD says otherwise
  if (sub == "create") {
    for (size_t i = 5; i < c.argc();) {
      if (iequals(c.arg(i), "mkstream")) {
        mkstream = true;
        ++i;
      } else if (iequals(c.arg(i), "entriesread") && i + 1 < c.argc()) {
        auto v = parse_int64(c.arg(i + 1));
        if (!v) return err_not_integer();
        if (*v < 0 && *v != -1) return RedisReply::error("ERR value for ENTRIESREAD must be positive or -1");
        entries_read = *v;
        i += 2;
      } else {
        return RedisReply::error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1) +
                                 "'. Try XGROUP HELP.");
      }
    }
  }
  Stream* s = nullptr;
  RedisReply error;
  if (!c.lookup(key, &s, &error)) return error;
  if (!s && !(sub == "create" && mkstream)) {
    return RedisReply::error(
        "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the "
        "MKSTREAM option to create an empty stream automatically.");
  }
  ConsumerGroup* g = nullptr;
  if (s) {
    auto it = s->groups.find(group_name);
    if (it != s->groups.end()) g = &it->second;
  }
  if ((sub == "setid" || sub == "createconsumer" || sub == "delconsumer") && !g) {
    return RedisReply::error("NOGROUP No such consumer group '" + group_name + "' for key name '" + key + "'");
  }
  if (sub == "create") {
    StreamId id;
    if (c.arg(4) == "$") {
      id = s ? s->last_id : StreamId{};
    } else {
      auto parsed = parse_id(c.arg(4), true, 0);
      if (!parsed) return err_invalid_id();
      id = *parsed;
    }
    if (!s) s = &std::get<Stream>(c.ks.put(key, Stream{}).value);
    if (s->groups.count(group_name)) return RedisReply::error("BUSYGROUP Consumer Group name already exists");
    s->groups[group_name].last_delivered = id;
    s->groups[group_name].entries_read = entries_read;
    c.notify(kNotifyStream, "xgroup-create", key);
    return RedisReply::ok();
  }
  if (sub == "setid") {
    if (c.argc() != 5 && c.argc() != 7) {
      return RedisReply::error("ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP.");
    }
    StreamId id;
    if (c.arg(4) == "$") {
      id = s->last_id;
    } else {
      // Not strict, unlike CREATE: streamParseIDOrReply takes "-" (0-0) and "+" (the max id).
      auto parsed = parse_id(c.arg(4), false, 0);
      if (!parsed) return err_invalid_id();
      id = *parsed;
    }
    g->last_delivered = id;
    g->entries_read = -1;
    return RedisReply::ok();
  }
  if (sub == "destroy") {
    if (!g) return RedisReply::integer_of(0);
    s->groups.erase(group_name);
    c.signal(key);  // blocked readers of that group must learn it is gone
    return RedisReply::integer_of(1);
  }
  if (sub == "createconsumer") {
    const bool created = !g->consumers.count(c.arg(4));
    if (created) consumer_of(c, key, *g, c.arg(4)).seen_time_ms = c.now_ms;
    return RedisReply::integer_of(created ? 1 : 0);
  }
  FL_ASSERT(sub == "delconsumer");
  auto it = g->consumers.find(c.arg(4));
  if (it == g->consumers.end()) return RedisReply::integer_of(0);
  const std::set<StreamId> pending = it->second.pending;
  for (const auto& id : pending) g->pel.erase(id);
  g->consumers.erase(it);
  c.notify(kNotifyStream, "xgroup-delconsumer", key);
  return RedisReply::integer_of(static_cast<int64_t>(pending.size()));
}

namespace {

struct ReadGroupArgs {
  const std::string* group = nullptr;
  const std::string* consumer = nullptr;
  int64_t count = 0;  // 0 = no limit
  std::optional<int64_t> block_ms;
  bool noack = false;
  size_t streams_arg = 0;
  size_t streams_count = 0;
};

// xreadCommand's option parsing, for XREADGROUP (`group`) and XREAD.
bool parse_read(const Ctx& c, bool group, ReadGroupArgs* a, RedisReply* error) {
  for (size_t i = 1; i < c.argc(); ++i) {
    const size_t more = c.argc() - i - 1;
    const std::string& o = c.arg(i);
    if (iequals(o, "block") && more) {
      if (c.from_script) {  // xreadCommand: "no sense to use BLOCK option within Lua"
        *error = RedisReply::error("ERR " + c.arg(0) + " command is not allowed with BLOCK option from scripts");
        return false;
      }
      ++i;
      auto v = parse_int64(c.arg(i));
      if (!v) {
        *error = RedisReply::error("ERR timeout is not an integer or out of range");
        return false;
      }
      if (*v < 0) {
        *error = RedisReply::error("ERR timeout is negative");
        return false;
      }
      a->block_ms = *v;
    } else if (iequals(o, "count") && more) {
      ++i;
      auto v = parse_int64(c.arg(i));
      if (!v) {
        *error = err_not_integer();
        return false;
      }
      a->count = *v < 0 ? 0 : *v;
    } else if (iequals(o, "streams") && more) {
      a->streams_arg = i + 1;
      const size_t n = c.argc() - a->streams_arg;
      if (n % 2 != 0) {
        *error = RedisReply::error(group ? "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an "
                                           "ID or '>' must be specified."
                                         : "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' "
                                           "must be specified.");
        return false;
      }
      a->streams_count = n / 2;
      break;
    } else if (iequals(o, "group") && more >= 2) {
      if (!group) {
        *error = RedisReply::error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      a->group = &c.arg(i + 1);
      a->consumer = &c.arg(i + 2);
      i += 2;
    } else if (iequals(o, "noack")) {
      if (!group) {
        *error = RedisReply::error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      a->noack = true;
    } else {
      *error = err_syntax();
      return false;
    }
  }
  if (a->streams_arg == 0) {
    *error = err_syntax();
    return false;
  }
  if (group && !a->group) {
    *error = RedisReply::error("ERR Missing GROUP option for XREADGROUP");
    return false;
  }
  return true;
}

// Entries after the group's last delivered id: deliver them to `consumer` (PEL unless NOACK).
RedisReply serve_new(Ctx& c, const std::string& key, Stream& s, ConsumerGroup& g, const ReadGroupArgs& a) {
  std::vector<RedisReply> out;
  consumer_of(c, key, g, *a.consumer).seen_time_ms = c.now_ms;  // served: created and seen, NOACK or not
  for (auto it = s.entries.upper_bound(g.last_delivered); it != s.entries.end(); ++it) {
    // streamReplyWithRange: count the read while the counter is valid and no tombstone lies
    // ahead, else re-estimate it (Redis 7.0's lag tracking, XINFO GROUPS).
    if (g.entries_read >= 0 && !stream_range_has_tombstones(s, it->first))
      ++g.entries_read;
    else if (s.entries_added)
      g.entries_read = stream_estimate_entries_read(s, it->first);
    g.last_delivered = it->first;
    out.push_back(entry_reply(it->first, &it->second));
    if (!a.noack) {
      PendingEntry& p = pel_assign(c, key, g, it->first, *a.consumer);
      p.delivery_time_ms = c.now_ms;
      p.delivery_count = 1;
    }
    if (a.count && static_cast<int64_t>(out.size()) == a.count) break;
  }
  return RedisReply::array(std::move(out));
}

// The consumer's own pending entries after `after` (history read).
RedisReply serve_history(Ctx& c, const std::string& key, Stream& s, ConsumerGroup& g, const ReadGroupArgs& a,
                         StreamId after) {
  std::vector<RedisReply> out;
  Consumer& consumer = consumer_of(c, key, g, *a.consumer);
  consumer.seen_time_ms = c.now_ms;
  if (!incr_id(&after)) return RedisReply::array({});
  for (auto it = consumer.pending.lower_bound(after); it != consumer.pending.end(); ++it) {
    if (a.count && static_cast<int64_t>(out.size()) >= a.count) break;
    auto entry = s.entries.find(*it);
    if (entry == s.entries.end()) {
      out.push_back(entry_reply(*it, nullptr));  // acknowledged nowhere, deleted from the stream
      continue;
    }
    PendingEntry& p = g.pel.at(*it);
    p.delivery_time_ms = c.now_ms;
    ++p.delivery_count;
    out.push_back(entry_reply(*it, &entry->second));
  }
  return RedisReply::array(std::move(out));
}

}  // namespace

RedisReply cmd_xreadgroup(Ctx& c) {
  ReadGroupArgs a;
  RedisReply error;
  if (!parse_read(c, /*group=*/true, &a, &error)) return error;
  std::vector<std::optional<StreamId>> ids(a.streams_count);  // nullopt = ">"
  for (size_t i = 0; i < a.streams_count; ++i) {
    const std::string& key = c.arg(a.streams_arg + i);
    const std::string& id_arg = c.arg(a.streams_arg + a.streams_count + i);
    Stream* s = nullptr;
    const bool found = c.lookup(key, &s, &error);
    if (c.session.woken && !c.in_script && (!found || !s)) {
      // unblockDeletedStreamReadgroupClients: the key was deleted or now holds another type.
      return RedisReply::error("UNBLOCKED the stream key no longer exists");
    }
    if (!found) return error;
    if (c.session.woken && !c.in_script && !s->groups.count(*a.group)) {
      return RedisReply::error("NOGROUP the consumer group this client was blocked on no longer exists");
    }
    if (!s || !s->groups.count(*a.group)) {
      return RedisReply::error("NOGROUP No such key '" + key + "' or consumer group '" + *a.group +
                               "' in XREADGROUP with GROUP option");
    }
    if (id_arg == "$") {
      return RedisReply::error(
          "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this "
          "consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just "
          "return an empty result set.");
    }
    if (id_arg == ">") continue;
    auto id = parse_id(id_arg, true, 0);
    if (!id) return err_invalid_id();
    // xreadCommand stands for ">" with the largest id: given explicitly, it reads new entries.
    if (*id == StreamId::max()) continue;
    ids[i] = *id;
  }
  std::vector<RedisReply> served;
  for (size_t i = 0; i < a.streams_count; ++i) {
    const std::string& key = c.arg(a.streams_arg + i);
    Stream* s = nullptr;
    c.lookup(key, &s, &error);
    FL_ASSERT(s);
    ConsumerGroup& g = s->groups.at(*a.group);
    RedisReply entries;
    if (ids[i]) {
      entries = serve_history(c, key, *s, g, a, *ids[i]);
    } else {
      auto last = last_valid_id(*s);
      if (!last || *last <= g.last_delivered) continue;
      entries = serve_new(c, key, *s, g, a);
    }
    served.push_back(RedisReply::array({RedisReply::bulk(key), std::move(entries)}));
  }
  if (!served.empty()) return RedisReply::array(std::move(served));
  if (c.session.woken && !c.in_script) {
    // serveClientsBlockedOnStreamKey: the write that woke the reader moved the stream's last id
    // past the group's; Redis answers with what is left of the range, even nothing (KD2).
    for (size_t i = 0; i < a.streams_count; ++i) {
      if (ids[i]) continue;
      Stream* s = nullptr;
      c.lookup(c.arg(a.streams_arg + i), &s, &error);
      if (s && s->last_id > s->groups.at(*a.group).last_delivered) {
        consumer_of(c, c.arg(a.streams_arg + i), s->groups.at(*a.group), *a.consumer).seen_time_ms =
            c.now_ms;  // served, so created
        return RedisReply::array(
            {RedisReply::array({RedisReply::bulk(c.arg(a.streams_arg + i)), RedisReply::array({})})});
      }
    }
  }
  if (a.block_ms && !c.in_script) {
    BlockRequest block;
    for (size_t i = 0; i < a.streams_count; ++i) {
      block.keys.push_back(Engine::wait_key(c.session.db, c.arg(a.streams_arg + i)));
    }
    block.timeout_ms = *a.block_ms;
    c.session.blocked = std::move(block);
  }
  return RedisReply::nil_array();
}

// XREAD [COUNT count] [BLOCK ms] STREAMS key [key ...] id [id ...]: entries after each id; `$`
// is the stream's last id at the time of the call (a blocked read waits for entries after it).
RedisReply cmd_xread(Ctx& c) {
  ReadGroupArgs a;
  RedisReply error;
  if (!parse_read(c, /*group=*/false, &a, &error)) return error;
  std::vector<StreamId> after(a.streams_count);
  for (size_t i = 0; i < a.streams_count; ++i) {
    const std::string& id_arg = c.arg(a.streams_arg + a.streams_count + i);
    Stream* s = nullptr;
    // A woken reader finds a key another type took meanwhile not ready and waits on (Redis serves
    // blocked XREADs from stream keys only); a new call gets WRONGTYPE.
    if (!c.lookup(c.arg(a.streams_arg + i), &s, &error) && !c.session.woken) return error;
    if (id_arg == "$") {
      after[i] = s ? s->last_id : StreamId{};
      continue;
    }
    if (id_arg == ">") {
      return RedisReply::error(
          "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.");
    }
    auto id = parse_id(id_arg, true, 0);
    if (!id) return err_invalid_id();
    after[i] = *id;
  }
  std::vector<RedisReply> served;
  for (size_t i = 0; i < a.streams_count; ++i) {
    Stream* s = nullptr;
    c.lookup(c.arg(a.streams_arg + i), &s, &error);
    if (!s) continue;
    // xreadCommand serves a stream whose last *existing* entry is past the id: none when the
    // entries after it were deleted or trimmed (XADD MAXLEN 0 leaves an empty stream with a
    // newer last id). A woken reader (serveClientsBlockedOnStreamKey) compares the last id.
    const std::optional<StreamId> last = c.session.woken ? std::optional(s->last_id) : last_valid_id(*s);
    if (!last || *last <= after[i]) continue;
    std::vector<RedisReply> entries;
    for (auto it = s->entries.upper_bound(after[i]); it != s->entries.end(); ++it) {
      if (a.count && static_cast<int64_t>(entries.size()) == a.count) break;
      entries.push_back(entry_reply(it->first, &it->second));
    }
    served.push_back(
        RedisReply::array({RedisReply::bulk(c.arg(a.streams_arg + i)), RedisReply::array(std::move(entries))}));
  }
  if (!served.empty()) return RedisReply::array(std::move(served));
  if (a.block_ms && !c.in_script) {
    BlockRequest block;
    block.argv = c.argv;
    for (size_t i = 0; i < a.streams_count; ++i) {
      block.keys.push_back(Engine::wait_key(c.session.db, c.arg(a.streams_arg + i)));
      block.argv[a.streams_arg + a.streams_count + i] = after[i].str();
    }
    block.timeout_ms = *a.block_ms;
    c.session.blocked = std::move(block);
  }
  return RedisReply::nil_array();
}

RedisReply cmd_xack(Ctx& c) {
  Stream* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  ConsumerGroup* g = nullptr;
  if (s) {
    auto it = s->groups.find(c.arg(2));
    if (it != s->groups.end()) g = &it->second;
  }
  // No key or group: nothing to ack, before the ids are parsed (xackCommand). Found by the
  // differential suite (properties/redis).
  if (!g) return RedisReply::integer_of(0);
  std::vector<StreamId> ids;
  for (size_t j = 3; j < c.argc(); ++j) {
    auto id = parse_id(c.arg(j), true, 0);
    if (!id) return err_invalid_id();
    ids.push_back(*id);
  }
  int64_t acked = 0;
  for (const auto& id : ids) {
    if (g->pel.count(id)) {
      pel_remove(*g, id);
      ++acked;
    }
  }
  return RedisReply::integer_of(acked);
}

RedisReply cmd_xpending(Ctx& c) {
  const bool summary = c.argc() == 3;
  if (c.argc() != 3 && (c.argc() < 6 || c.argc() > 9)) return err_syntax();
  int64_t min_idle_ms = 0, count = 0;
  StreamId start, end;
  const std::string* consumer_name = nullptr;
  RedisReply error;
  if (c.argc() >= 6) {
    size_t idx = 3;
    if (iequals(c.arg(3), "idle")) {
      auto v = parse_int64(c.arg(4));
      if (!v) return err_not_integer();
      min_idle_ms = *v;
      if (c.argc() < 8) return err_syntax();
      idx += 2;
    }
    auto n = parse_int64(c.arg(idx + 2));
    if (!n) return err_not_integer();
    count = *n < 0 ? 0 : *n;
    if (!parse_interval(c.arg(idx), true, &start, &error)) return error;
    if (!parse_interval(c.arg(idx + 1), false, &end, &error)) return error;
    if (idx + 3 < c.argc()) consumer_name = &c.arg(idx + 3);
  }
  Stream* s = nullptr;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  ConsumerGroup* g = nullptr;
  if (s) {
    auto it = s->groups.find(c.arg(2));
    if (it != s->groups.end()) g = &it->second;
  }
  if (!g) return err_nogroup(c.arg(1), c.arg(2));
  if (summary) {
    if (g->pel.empty()) {
      return RedisReply::array(
          {RedisReply::integer_of(0), RedisReply::nil(), RedisReply::nil(), RedisReply::nil_array()});
    }
    std::vector<RedisReply> consumers;
    for (const auto& [name, consumer] : g->consumers) {
      if (consumer.pending.empty()) continue;
      consumers.push_back(
          RedisReply::array({RedisReply::bulk(name), RedisReply::bulk(std::to_string(consumer.pending.size()))}));
    }
    return RedisReply::array({RedisReply::integer_of(static_cast<int64_t>(g->pel.size())),
                              RedisReply::bulk(g->pel.begin()->first.str()),
                              RedisReply::bulk(g->pel.rbegin()->first.str()), RedisReply::array(std::move(consumers))});
  }
  std::vector<StreamId> ids;
  if (consumer_name) {
    auto it = g->consumers.find(*consumer_name);
    if (it == g->consumers.end()) return RedisReply::array({});
    ids.assign(it->second.pending.lower_bound(start), it->second.pending.end());
  } else {
    for (auto it = g->pel.lower_bound(start); it != g->pel.end(); ++it) ids.push_back(it->first);
  }
  std::vector<RedisReply> out;
  for (const auto& id : ids) {
    if (count == 0 || end < id) break;
    const PendingEntry& p = g->pel.at(id);
    const int64_t idle_ms = c.now_ms - p.delivery_time_ms;
    if (min_idle_ms && idle_ms < min_idle_ms) continue;
    --count;
    out.push_back(RedisReply::array({RedisReply::bulk(id.str()), RedisReply::bulk(p.consumer),
                                     RedisReply::integer_of(idle_ms < 0 ? 0 : idle_ms),
                                     RedisReply::integer_of(static_cast<int64_t>(p.delivery_count))}));
  }
  return RedisReply::array(std::move(out));
}

RedisReply cmd_xclaim(Ctx& c) {
  Stream* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  ConsumerGroup* g = nullptr;
  if (s) {
    auto it = s->groups.find(c.arg(2));
    if (it != s->groups.end()) g = &it->second;
  }
  if (!g) return err_nogroup(c.arg(1), c.arg(2));
  auto min_idle = parse_int64(c.arg(4));
  if (!min_idle) return RedisReply::error("ERR Invalid min-idle-time argument for XCLAIM");
  const int64_t min_idle_ms = *min_idle < 0 ? 0 : *min_idle;
  std::vector<StreamId> ids;
  size_t j = 5;
  for (; j < c.argc(); ++j) {
    auto id = parse_id(c.arg(j), true, 0);
    if (!id) break;
    ids.push_back(*id);
  }
  int64_t delivery_time = -1, retry_count = -1;
  bool force = false, justid = false;
  StreamId last_id;
  for (; j < c.argc(); ++j) {
    const size_t more = c.argc() - 1 - j;
    const std::string& opt = c.arg(j);
    if (iequals(opt, "force")) {
      force = true;
    } else if (iequals(opt, "justid")) {
      justid = true;
    } else if ((iequals(opt, "idle") || iequals(opt, "time") || iequals(opt, "retrycount")) && more) {
      auto v = parse_int64(c.arg(++j));
      if (!v)
        return RedisReply::error("ERR Invalid " + [&] {
          std::string u = lower(opt);
          for (char& ch : u) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
          return u;
        }() + " option argument for XCLAIM");
      if (iequals(opt, "idle"))  // now - idle wraps as in Redis's C (then clamped to now below)
        delivery_time = static_cast<int64_t>(static_cast<uint64_t>(c.now_ms) - static_cast<uint64_t>(*v));
      else if (iequals(opt, "time"))
        delivery_time = *v;
      else
        retry_count = *v;
    } else if (iequals(opt, "lastid") && more) {
      auto id = parse_id(c.arg(++j), true, 0);
      if (!id) return err_invalid_id();
      last_id = *id;
    } else {
      return RedisReply::error("ERR Unrecognized XCLAIM option '" + opt + "'");
    }
  }
  if (g->last_delivered < last_id) g->last_delivered = last_id;
  if (delivery_time == -1 || delivery_time < 0 || delivery_time > c.now_ms) delivery_time = c.now_ms;
  const std::string& consumer = c.arg(3);
  std::vector<RedisReply> out;
  for (const auto& id : ids) {
    auto entry = s->entries.find(id);
    if (entry == s->entries.end()) {
      pel_remove(*g, id);  // the entry no longer exists: drop it from the PEL
      continue;
    }
    auto p = g->pel.find(id);
    if (p == g->pel.end() && !force) continue;
    if (p != g->pel.end() && min_idle_ms && c.now_ms - p->second.delivery_time_ms < min_idle_ms) continue;
    const bool fresh = p == g->pel.end();
    PendingEntry& pe = pel_assign(c, c.arg(1), *g, id, consumer);
    if (fresh) pe.delivery_count = 1;  // streamCreateNACK starts at 1; XCLAIM then increments
    pe.delivery_time_ms = delivery_time;
    if (retry_count >= 0)
      pe.delivery_count = static_cast<uint64_t>(retry_count);
    else if (!justid)
      ++pe.delivery_count;
    out.push_back(justid ? RedisReply::bulk(id.str()) : entry_reply(id, &entry->second));
  }
  return RedisReply::array(std::move(out));
}

RedisReply cmd_xautoclaim(Ctx& c) {
  auto min_idle = parse_int64(c.arg(4));
  if (!min_idle) return RedisReply::error("ERR Invalid min-idle-time argument for XAUTOCLAIM");
  const int64_t min_idle_ms = *min_idle < 0 ? 0 : *min_idle;
  StreamId start;
  RedisReply error;
  if (!parse_interval(c.arg(5), true, &start, &error)) return error;
  int64_t count = 100;
  bool justid = false;
  for (size_t j = 6; j < c.argc(); ++j) {
    const size_t more = c.argc() - 1 - j;
    if (iequals(c.arg(j), "count") && more) {
      auto v = parse_int64(c.arg(j + 1));
      if (!v || *v < 1 || *v > LONG_MAX / 16) return RedisReply::error("ERR COUNT must be > 0");
      count = *v;
      ++j;
    } else if (iequals(c.arg(j), "justid")) {
      justid = true;
    } else {
      return err_syntax();
    }
  }
  Stream* s = nullptr;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  ConsumerGroup* g = nullptr;
  if (s) {
    auto it = s->groups.find(c.arg(2));
    if (it != s->groups.end()) g = &it->second;
  }
  if (!g) return err_nogroup(c.arg(1), c.arg(2));
  int64_t attempts = count * 10;
  std::vector<RedisReply> claimed;
  std::vector<std::string> deleted;
  auto it = g->pel.lower_bound(start);
  while (attempts-- > 0 && count > 0 && it != g->pel.end()) {
    const StreamId id = it->first;
    ++it;
    auto entry = s->entries.find(id);
    if (entry == s->entries.end()) {
      pel_remove(*g, id);
      deleted.push_back(id.str());
      --count;
      continue;
    }
    PendingEntry& p = g->pel.at(id);
    if (min_idle_ms && c.now_ms - p.delivery_time_ms < min_idle_ms) continue;
    PendingEntry& pe = pel_assign(c, c.arg(1), *g, id, c.arg(3));
    pe.delivery_time_ms = c.now_ms;
    if (!justid) ++pe.delivery_count;
    claimed.push_back(justid ? RedisReply::bulk(id.str()) : entry_reply(id, &entry->second));
    --count;
  }
  const std::string cursor = it == g->pel.end() ? "0-0" : it->first.str();
  return RedisReply::array({RedisReply::bulk(cursor), RedisReply::array(std::move(claimed)), bulk_array(deleted)});
}

}  // namespace fl::sim::redis
