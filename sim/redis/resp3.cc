#include "sim/redis/resp3.h"

#include <utility>

#include "sim/redis/commands.h"
#include "impl/ports/assert.h"

namespace fl::sim::redis {
namespace {

using Resp3 = RedisReply::Resp3;

bool has_arg(const std::vector<std::string>& argv, const char* word) {
  for (size_t i = 2; i < argv.size(); ++i) {
    if (iequals(argv[i], word)) return true;
  }
  return false;
}

void mark(RedisReply* r, Resp3 t) {
  if (r->kind == RedisReply::Kind::kArray || r->kind == RedisReply::Kind::kBulk) r->resp3 = t;
}

void mark_each(RedisReply* r, Resp3 t) {
  for (RedisReply& e : r->elements) mark(&e, t);
}

// [m1, s1, m2, s2, ...] -> [[m1, s1], [m2, s2], ...] (addReplyArrayLen(c, 2) per pair in RESP3),
// the second of each pair a double when `scores`.
void nest_pairs(RedisReply* r, bool scores) {
  if (r->kind != RedisReply::Kind::kArray) return;
  FL_ASSERT(r->elements.size() % 2 == 0);
  std::vector<RedisReply> pairs;
  pairs.reserve(r->elements.size() / 2);
  for (size_t i = 0; i + 1 < r->elements.size(); i += 2) {
    RedisReply second = std::move(r->elements[i + 1]);
    if (scores) mark(&second, Resp3::kDouble);
    pairs.push_back(RedisReply::array({std::move(r->elements[i]), std::move(second)}));
  }
  r->elements = std::move(pairs);
}

// XREAD/XREADGROUP: [[key, entries], ...] -> a map key -> entries (xreadCommand, 7.0).
void streams_as_map(RedisReply* r) {
  if (r->kind != RedisReply::Kind::kArray) return;
  std::vector<RedisReply> flat;
  flat.reserve(r->elements.size() * 2);
  for (RedisReply& kv : r->elements) {
    FL_ASSERT(kv.elements.size() == 2);
    for (RedisReply& e : kv.elements) flat.push_back(std::move(e));
  }
  r->elements = std::move(flat);
  r->resp3 = Resp3::kMap;
}

void shape_sorted_set(const std::string& name, const std::vector<std::string>& argv, RedisReply* r) {
  if (name == "zscore" || name == "zincrby" || name == "zadd") return mark(r, Resp3::kDouble);
  if (name == "zmscore") return mark_each(r, Resp3::kDouble);
  if (name == "zpopmin" || name == "zpopmax") {
    // genericZpopCommand: nested pairs only when a count was given (use_nested_array).
    if (argv.size() > 2) return nest_pairs(r, true);
    if (r->elements.size() == 2) mark(&r->elements[1], Resp3::kDouble);
    return;
  }
  if (name == "zmpop" || name == "bzmpop") {
    // [key, [[member, score], ...]]: each score a double.
    if (r->elements.size() == 2) {
      for (RedisReply& pair : r->elements[1].elements) {
        if (pair.elements.size() == 2) mark(&pair.elements[1], Resp3::kDouble);
      }
    }
    return;
  }
  if (name == "bzpopmin" || name == "bzpopmax") {
    if (r->elements.size() == 3) mark(&r->elements[2], Resp3::kDouble);
    return;
  }
  if (has_arg(argv, "withscores")) nest_pairs(r, true);
}

void shape_admin(const std::string& name, const std::vector<std::string>& argv, RedisReply* r) {
  const std::string sub = argv.size() > 1 ? lower(argv[1]) : "";
  if (name == "info") return mark(r, Resp3::kVerbatim);
  if (name == "client" && (sub == "info" || sub == "list")) return mark(r, Resp3::kVerbatim);
  if (name == "config" && sub == "get") return mark(r, Resp3::kMap);
  if (name == "command" && sub == "docs") {
    mark(r, Resp3::kMap);
    for (size_t i = 1; i < r->elements.size(); i += 2) mark(&r->elements[i], Resp3::kMap);
    return;
  }
  if (name == "xinfo" && sub == "stream") return mark(r, Resp3::kMap);
  if (name == "xinfo" && (sub == "groups" || sub == "consumers")) return mark_each(r, Resp3::kMap);
}

}  // namespace

void shape_for_resp3(const std::vector<std::string>& argv, RedisReply* reply) {
  if (argv.empty() || reply->is_error() || reply->is_nil()) return;
  const std::string name = lower(argv[0]);
  if (name == "hgetall") return mark(reply, Resp3::kMap);
  if (name == "smembers" || name == "sinter" || name == "sunion" || name == "sdiff") {
    return mark(reply, Resp3::kSet);
  }
  if (name == "spop" && argv.size() > 2) return mark(reply, Resp3::kSet);
  if (name == "hrandfield") {
    if (has_arg(argv, "withvalues")) nest_pairs(reply, false);
    return;
  }
  if (name == "xread" || name == "xreadgroup") return streams_as_map(reply);
  if (name == "lcs" && has_arg(argv, "idx")) return mark(reply, Resp3::kMap);
  if (name.starts_with("z") || name.starts_with("bz")) return shape_sorted_set(name, argv, reply);
  shape_admin(name, argv, reply);
}

}  // namespace fl::sim::redis
