// XINFO STREAM [FULL [COUNT n]] / GROUPS / CONSUMERS / HELP, as t_stream.c xinfoCommand serves
// it, and the consumer-group lag arithmetic of Redis 7.0 (streamReplyWithCGLag,
// streamEstimateDistanceFromFirstEverEntry, streamRangeHasTombstones) that XREADGROUP shares.
#include "sim/redis/commands.h"

namespace fl::sim::redis {

StreamId stream_first_id(const Stream& s) { return s.entries.empty() ? StreamId{} : s.entries.begin()->first; }

bool stream_range_has_tombstones(const Stream& s, const StreamId& start) {
  const StreamId zero{};
  if (s.entries.empty() || s.max_deleted_id == zero) return false;  // empty, or no tombstones
  if (stream_first_id(s) > s.max_deleted_id) return false;          // the latest tombstone is before the first entry
  return start <= s.max_deleted_id;
}

int64_t stream_estimate_entries_read(const Stream& s, const StreamId& id) {
  if (s.entries_added == 0) return 0;
  const auto added = static_cast<int64_t>(s.entries_added);
  if (s.entries.empty() && id <= s.last_id) return added;
  if (id == s.last_id) return added;
  if (id > s.last_id) return -1;  // a future id: unknown
  const StreamId first = stream_first_id(s);
  const auto length = static_cast<int64_t>(s.entries.size());
  if (s.max_deleted_id == StreamId{} || s.max_deleted_id < first) {  // no fragmentation ahead
    if (id < first) return added - length;
    if (id == first) return added - length + 1;
  }
  return -1;  // before an XDEL that fragments the stream, or an arbitrary id
}

namespace {

// streamReplyWithCGLag: null when the lag cannot be known.
RedisReply group_lag(const Stream& s, const ConsumerGroup& g) {
  if (s.entries_added == 0) return RedisReply::integer_of(0);
  const auto added = static_cast<int64_t>(s.entries_added);
  if (g.entries_read >= 0 && !stream_range_has_tombstones(s, g.last_delivered)) {
    return RedisReply::integer_of(added - g.entries_read);
  }
  const int64_t read = stream_estimate_entries_read(s, g.last_delivered);
  return read >= 0 ? RedisReply::integer_of(added - read) : RedisReply::nil();
}

RedisReply entries_read_reply(const ConsumerGroup& g) {
  return g.entries_read >= 0 ? RedisReply::integer_of(g.entries_read) : RedisReply::nil();
}

RedisReply entry(const std::pair<const StreamId, std::vector<std::string>>& e) {
  return RedisReply::array({RedisReply::bulk(e.first.str()), bulk_array(e.second)});
}

// A RESP2 map: key, value, key, value...
using Pairs = std::vector<std::pair<std::string, RedisReply>>;
RedisReply map_reply(Pairs pairs) {
  std::vector<RedisReply> out;
  for (auto& [k, v] : pairs) {
    out.push_back(RedisReply::bulk(k));
    out.push_back(std::move(v));
  }
  return RedisReply::array(std::move(out));
}

// The number of nodes of Redis's radix tree (rax) holding the node master ids as 16-byte
// big-endian keys: a compressed node per shared run, a branching node per fork, a node per key
// end; an empty rax is its head node.
int64_t rax_nodes(const std::vector<std::string>& keys, size_t lo, size_t hi, size_t depth) {
  if (depth == keys[lo].size()) return 1;
  if (keys[lo][depth] == keys[hi - 1][depth]) {
    size_t d = depth;
    while (d < keys[lo].size() && keys[lo][d] == keys[hi - 1][d]) ++d;  // sorted: first and last bound the run
    return 1 + rax_nodes(keys, lo, hi, d);
  }
  int64_t n = 1;
  for (size_t i = lo; i < hi;) {
    size_t k = i;
    while (k < hi && keys[k][depth] == keys[i][depth]) ++k;
    n += rax_nodes(keys, i, k, depth + 1);
    i = k;
  }
  return n;
}

int64_t rax_node_count(const Stream& s) {
  if (s.nodes.empty()) return 1;
  std::vector<std::string> keys;
  for (const auto& [id, node] : s.nodes) {
    std::string k(16, '\0');
    for (int b = 0; b < 8; ++b) {
      k[static_cast<size_t>(b)] = static_cast<char>(id.ms >> (56 - 8 * b));
      k[static_cast<size_t>(8 + b)] = static_cast<char>(id.seq >> (56 - 8 * b));
    }
    keys.push_back(std::move(k));
  }
  return rax_nodes(keys, 0, keys.size(), 0);
}

Pairs stream_head(const Stream& s) {
  Pairs p;
  p.emplace_back("length", RedisReply::integer_of(static_cast<int64_t>(s.entries.size())));
  p.emplace_back("radix-tree-keys", RedisReply::integer_of(static_cast<int64_t>(s.nodes.size())));
  p.emplace_back("radix-tree-nodes", RedisReply::integer_of(rax_node_count(s)));
  p.emplace_back("last-generated-id", RedisReply::bulk(s.last_id.str()));
  p.emplace_back("max-deleted-entry-id", RedisReply::bulk(s.max_deleted_id.str()));
  p.emplace_back("entries-added", RedisReply::integer_of(static_cast<int64_t>(s.entries_added)));
  p.emplace_back("recorded-first-entry-id", RedisReply::bulk(stream_first_id(s).str()));
  return p;
}

// The PEL of a group (with consumer names) or of a consumer, at most `count` entries (0 = all).
RedisReply pending_list(const ConsumerGroup& g, const std::set<StreamId>* only, int64_t count) {
  std::vector<RedisReply> out;
  for (const auto& [id, p] : g.pel) {
    if (only && !only->count(id)) continue;
    if (count && static_cast<int64_t>(out.size()) >= count) break;
    std::vector<RedisReply> e{RedisReply::bulk(id.str())};
    if (!only) e.push_back(RedisReply::bulk(p.consumer));
    e.push_back(RedisReply::integer_of(p.delivery_time_ms));
    e.push_back(RedisReply::integer_of(static_cast<int64_t>(p.delivery_count)));
    out.push_back(RedisReply::array(std::move(e)));
  }
  return RedisReply::array(std::move(out));
}

RedisReply full_group(const Stream& s, const std::string& name, const ConsumerGroup& g, int64_t count) {
  std::vector<RedisReply> consumers;
  for (const auto& [cname, consumer] : g.consumers) {
    consumers.push_back(map_reply({{"name", RedisReply::bulk(cname)},
                                   {"seen-time", RedisReply::integer_of(consumer.seen_time_ms)},
                                   {"pel-count", RedisReply::integer_of(static_cast<int64_t>(consumer.pending.size()))},
                                   {"pending", pending_list(g, &consumer.pending, count)}}));
  }
  return map_reply({{"name", RedisReply::bulk(name)},
                    {"last-delivered-id", RedisReply::bulk(g.last_delivered.str())},
                    {"entries-read", entries_read_reply(g)},
                    {"lag", group_lag(s, g)},
                    {"pel-count", RedisReply::integer_of(static_cast<int64_t>(g.pel.size()))},
                    {"pending", pending_list(g, nullptr, count)},
                    {"consumers", RedisReply::array(std::move(consumers))}});
}

RedisReply err_subcommand_syntax(const Ctx& c) {
  return RedisReply::error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1).substr(0, 128) +
                           "'. Try XINFO HELP.");
}

// xinfoReplyWithStreamInfo.
RedisReply xinfo_stream(const Ctx& c, const Stream& s) {
  const size_t optc = c.argc() - 3;
  if (optc == 0) {
    Pairs p = stream_head(s);
    p.emplace_back("groups", RedisReply::integer_of(static_cast<int64_t>(s.groups.size())));
    p.emplace_back("first-entry", s.entries.empty() ? RedisReply::nil() : entry(*s.entries.begin()));
    p.emplace_back("last-entry", s.entries.empty() ? RedisReply::nil() : entry(*s.entries.rbegin()));
    return map_reply(std::move(p));
  }
  if ((optc != 1 && optc != 3) || !iequals(c.arg(3), "full")) return err_subcommand_syntax(c);
  int64_t count = 10;
  if (optc == 3) {
    if (!iequals(c.arg(4), "count")) return err_subcommand_syntax(c);
    auto v = parse_int64(c.arg(5));
    if (!v) return err_not_integer();
    count = *v < 0 ? 10 : *v;
  }
  std::vector<RedisReply> entries, groups;
  for (const auto& e : s.entries) {
    if (count && static_cast<int64_t>(entries.size()) >= count) break;
    entries.push_back(entry(e));
  }
  for (const auto& [name, g] : s.groups) groups.push_back(full_group(s, name, g, count));
  Pairs p = stream_head(s);
  p.emplace_back("entries", RedisReply::array(std::move(entries)));
  p.emplace_back("groups", RedisReply::array(std::move(groups)));
  return map_reply(std::move(p));
}

RedisReply xinfo_groups(const Stream& s) {
  std::vector<RedisReply> out;
  for (const auto& [name, g] : s.groups) {
    out.push_back(map_reply({{"name", RedisReply::bulk(name)},
                             {"consumers", RedisReply::integer_of(static_cast<int64_t>(g.consumers.size()))},
                             {"pending", RedisReply::integer_of(static_cast<int64_t>(g.pel.size()))},
                             {"last-delivered-id", RedisReply::bulk(g.last_delivered.str())},
                             {"entries-read", entries_read_reply(g)},
                             {"lag", group_lag(s, g)}}));
  }
  return RedisReply::array(std::move(out));
}

RedisReply xinfo_consumers(const Ctx& c, const Stream& s) {
  auto it = s.groups.find(c.arg(3));
  if (it == s.groups.end()) {
    return RedisReply::error("NOGROUP No such consumer group '" + c.arg(3) + "' for key name '" + c.arg(2) + "'");
  }
  std::vector<RedisReply> out;
  for (const auto& [name, consumer] : it->second.consumers) {
    const int64_t idle = std::max<int64_t>(0, c.now_ms - consumer.seen_time_ms);
    out.push_back(map_reply({{"name", RedisReply::bulk(name)},
                             {"pending", RedisReply::integer_of(static_cast<int64_t>(consumer.pending.size()))},
                             {"idle", RedisReply::integer_of(idle)}}));
  }
  return RedisReply::array(std::move(out));
}

}  // namespace

RedisReply cmd_xinfo(Ctx& c) {
  if (iequals(c.arg(1), "help")) {
    // addReplyHelp: status lines, not bulk strings.
    std::vector<RedisReply> lines;
    for (const char* line : {"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                             "CONSUMERS <key> <groupname>", "    Show consumers of <groupname>.", "GROUPS <key>",
                             "    Show the stream consumer groups.", "STREAM <key> [FULL [COUNT <count>]",
                             "    Show information about the stream.", "HELP", "    Prints this help."}) {
      lines.push_back(RedisReply::status(line));
    }
    return RedisReply::array(std::move(lines));
  }
  Stream* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(2), &s, &error)) return error;
  if (!s) return RedisReply::error("ERR no such key");
  if (iequals(c.arg(1), "consumers")) return xinfo_consumers(c, *s);
  if (iequals(c.arg(1), "groups")) return xinfo_groups(*s);
  return xinfo_stream(c, *s);
}

}  // namespace fl::sim::redis
