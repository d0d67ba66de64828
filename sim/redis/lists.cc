// List commands (Redis 7.0 t_list.c): LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX LSET
// LREM LTRIM LINSERT LPOS LMOVE RPOPLPUSH LMPOP, and the blocking BLPOP BRPOP BLMOVE BRPOPLPUSH
// BLMPOP. A list is a deque of elements, head first; a list left empty is deleted, as Redis does.
// A blocking pop that finds every key empty parks the session (BlockRequest) on those keys; a push
// signals its key and the server re-executes the parked command (server.cc), longest waiter
// first. Inside a script or EXEC a blocking pop never blocks: it answers as on a timeout.
#include <algorithm>
#include <cmath>
#include <limits>

#include "impl/ports/assert.h"
#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

enum class End : uint8_t { kLeft, kRight };

std::optional<End> parse_end(std::string_view s) {
  if (iequals(s, "left")) return End::kLeft;
  if (iequals(s, "right")) return End::kRight;
  return std::nullopt;
}

// The list at `key` created when absent (REQUIRES: lookup found no other type).
List& list_for_push(Ctx& c, const std::string& key, List* existing) {
  if (existing) return *existing;
  return std::get<List>(c.ks.put(key, List{}).value);
}

std::string pop_end(List& l, End end) {
  FL_ASSERT(!l.empty());
  std::string v;
  if (end == End::kLeft) {
    v = std::move(l.front());
    l.pop_front();
  } else {
    v = std::move(l.back());
    l.pop_back();
  }
  return v;
}

void push_end(List& l, End end, std::string v) {
  if (end == End::kLeft)
    l.push_front(std::move(v));
  else
    l.push_back(std::move(v));
}

RedisReply push(Ctx& c, End end, bool only_if_exists) {
  List* l = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &l, &error)) return error;
  if (!l && only_if_exists) return RedisReply::integer_of(0);
  List& list = list_for_push(c, c.arg(1), l);
  for (size_t j = 2; j < c.argc(); ++j) push_end(list, end, c.arg(j));
  c.signal(c.arg(1));
  c.notify(kNotifyList, end == End::kLeft ? "lpush" : "rpush", c.arg(1));
  return RedisReply::integer_of(static_cast<int64_t>(list.size()));
}

RedisReply pop(Ctx& c, End end) {
  std::optional<int64_t> count;
  if (c.argc() > 3) return err_arity(c.name());
  if (c.argc() == 3) {
    count = parse_int64(c.arg(2));
    if (!count || *count < 0) return RedisReply::error("ERR value is out of range, must be positive");
  }
  List* l = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &l, &error)) return error;
  if (!l) return count ? RedisReply::nil_array() : RedisReply::nil();
  const char* event = end == End::kLeft ? "lpop" : "rpop";
  if (!count) {
    std::string v = pop_end(*l, end);
    c.notify(kNotifyList, event, c.arg(1));
    c.drop_if_empty(c.arg(1), l->empty());
    return RedisReply::bulk(std::move(v));
  }
  std::vector<RedisReply> out;
  for (int64_t i = 0; i < *count && !l->empty(); ++i) out.push_back(RedisReply::bulk(pop_end(*l, end)));
  if (!out.empty()) c.notify(kNotifyList, event, c.arg(1));
  c.drop_if_empty(c.arg(1), l->empty());
  return RedisReply::array(std::move(out));
}

// Redis's index arithmetic for LRANGE and LTRIM: [start, stop] clamped into the list; false when
// the range is empty.
bool clamp_range(int64_t len, int64_t start, int64_t stop, int64_t* from, int64_t* to) {
  if (start < 0) start = std::max<int64_t>(start + len, 0);
  if (stop < 0) stop += len;
  if (start > stop || start >= len) return false;
  *from = start;
  *to = std::min(stop, len - 1);
  return true;
}

// LMOVE's step: pops from src's `from` end, pushes to dst's `to` end. REQUIRES: src non-empty and
// dst absent or a list (checked by the caller, as lmoveGenericCommand does before popping).
RedisReply move_one(Ctx& c, const std::string& src_key, List& src, const std::string& dst_key, End from, End to) {
  std::string v = pop_end(src, from);
  // src and dst may be the same key: push before deleting an emptied source.
  List* dst = nullptr;
  RedisReply error;
  const bool is_list = c.lookup(dst_key, &dst, &error);
  FL_ASSERT(is_list);
  List& target = list_for_push(c, dst_key, dst);
  push_end(target, to, v);
  if (src_key != dst_key) c.drop_if_empty(src_key, src.empty());
  c.signal(dst_key);
  return RedisReply::bulk(std::move(v));
}

// A blocking pop's source key: a woken pop finds a key that another type took meanwhile not
// ready (Redis serves blocked clients from list keys only) and waits on; a new call gets WRONGTYPE.
// The first non-empty list of a.keys popped: [key, [elements]]; nil_array when none (or error).
RedisReply mpop_first(Ctx& c, const MpopArgs& a, bool* found) {
  *found = false;
  for (const std::string& key : a.keys) {
    List* l = nullptr;
    RedisReply error;
    if (!lookup_blocking_source(c, key, &l, &error)) return error;
    if (!l) continue;
    std::vector<RedisReply> out;
    const End end = a.from_first ? End::kLeft : End::kRight;
    for (int64_t i = 0; i < a.count && !l->empty(); ++i) out.push_back(RedisReply::bulk(pop_end(*l, end)));
    c.drop_if_empty(key, l->empty());
    *found = true;
    return RedisReply::array({RedisReply::bulk(key), RedisReply::array(std::move(out))});
  }
  return RedisReply::nil_array();
}

}  // namespace

// The timeout of a blocking command: seconds as a double (getTimeoutFromObjectOrReply), in ms;
// 0 blocks forever.
std::optional<int64_t> parse_timeout_ms(const std::string& s, RedisReply* error) {
  const std::optional<double> secs = parse_double(s);
  if (!secs || !std::isfinite(*secs) || std::abs(*secs) * 1000 > static_cast<double>(INT64_MAX / 2)) {
    *error = RedisReply::error("ERR timeout is not a float or out of range");
    return std::nullopt;
  }
  const int64_t ms = static_cast<int64_t>(std::ceil(*secs * 1000));
  if (ms < 0) {
    *error = RedisReply::error("ERR timeout is negative");
    return std::nullopt;
  }
  return ms;
}

// Parks the session on `keys` (a blocking pop found them all empty), unless it may not block.
// A timeout answers a null array (every blocking list pop does in Redis 7.0, BLMOVE included); so
// does a call that may not block (in EXEC; from a script only BLMPOP may be called), at once.
RedisReply block_on(Ctx& c, const std::vector<std::string>& keys, int64_t timeout_ms) {
  if (c.in_script || c.in_exec) return RedisReply::nil_array();
  BlockRequest block;
  for (const std::string& k : keys) block.keys.push_back(Engine::wait_key(c.session.db, k));
  block.timeout_ms = timeout_ms;
  c.session.blocked = std::move(block);
  return RedisReply::nil_array();
}

std::optional<MpopArgs> parse_mpop(const Ctx& c, size_t first, const char* first_end, const char* last_end,
                                   RedisReply* error) {
  const std::optional<int64_t> numkeys = parse_int64(c.arg(first));
  if (!numkeys || *numkeys <= 0) {
    *error = RedisReply::error("ERR numkeys should be greater than 0");
    return std::nullopt;
  }
  const size_t where = first + 1 + static_cast<size_t>(*numkeys);
  if (*numkeys > static_cast<int64_t>(c.argc()) || where >= c.argc()) {
    *error = err_syntax();
    return std::nullopt;
  }
  MpopArgs a;
  for (size_t j = first + 1; j < where; ++j) a.keys.push_back(c.arg(j));
  if (iequals(c.arg(where), first_end)) {
    a.from_first = true;
  } else if (iequals(c.arg(where), last_end)) {
    a.from_first = false;
  } else {
    *error = err_syntax();
    return std::nullopt;
  }
  bool counted = false;
  for (size_t j = where + 1; j < c.argc(); ++j) {
    if (!counted && iequals(c.arg(j), "count") && j + 1 < c.argc()) {
      const std::optional<int64_t> n = parse_int64(c.arg(++j));
      if (!n || *n <= 0) {
        *error = RedisReply::error("ERR count should be greater than 0");
        return std::nullopt;
      }
      a.count = *n;
      counted = true;
    } else {
      *error = err_syntax();
      return std::nullopt;
    }
  }
  return a;
}

RedisReply cmd_lpush(Ctx& c) { return push(c, End::kLeft, false); }
RedisReply cmd_rpush(Ctx& c) { return push(c, End::kRight, false); }
RedisReply cmd_lpushx(Ctx& c) { return push(c, End::kLeft, true); }
RedisReply cmd_rpushx(Ctx& c) { return push(c, End::kRight, true); }
RedisReply cmd_lpop(Ctx& c) { return pop(c, End::kLeft); }
RedisReply cmd_rpop(Ctx& c) { return pop(c, End::kRight); }

RedisReply cmd_llen(Ctx& c) {
  List* l = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &l, &error)) return error;
  return RedisReply::integer_of(l ? static_cast<int64_t>(l->size()) : 0);
}

RedisReply cmd_lrange(Ctx& c) {
  const std::optional<int64_t> start = parse_int64(c.arg(2)), stop = parse_int64(c.arg(3));
  if (!start || !stop) return err_not_integer();
  List* l = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &l, &error)) return error;
  std::vector<RedisReply> out;
  int64_t from = 0, to = 0;
  if (l && clamp_range(static_cast<int64_t>(l->size()), *start, *stop, &from, &to)) {
    for (int64_t i = from; i <= to; ++i) out.push_back(RedisReply::bulk((*l)[static_cast<size_t>(i)]));
  }
  return RedisReply::array(std::move(out));
}

RedisReply cmd_lindex(Ctx& c) {
  List* l = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &l, &error)) return error;
  if (!l) return RedisReply::nil();
  const std::optional<int64_t> index = parse_int64(c.arg(2));
  if (!index) return err_not_integer();
  const int64_t len = static_cast<int64_t>(l->size());
  const int64_t i = *index < 0 ? *index + len : *index;
  if (i < 0 || i >= len) return RedisReply::nil();
  return RedisReply::bulk((*l)[static_cast<size_t>(i)]);
}

RedisReply cmd_lset(Ctx& c) {
  List* l = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &l, &error)) return error;
  if (!l) return RedisReply::error("ERR no such key");
  const std::optional<int64_t> index = parse_int64(c.arg(2));
  if (!index) return err_not_integer();
  const int64_t len = static_cast<int64_t>(l->size());
  const int64_t i = *index < 0 ? *index + len : *index;
  if (i < 0 || i >= len) return RedisReply::error("ERR index out of range");
  (*l)[static_cast<size_t>(i)] = c.arg(3);
  return RedisReply::ok();
}

// LREM key count element: count > 0 from the head, < 0 from the tail, 0 every match.
RedisReply cmd_lrem(Ctx& c) {
  const std::optional<int64_t> count = parse_int64(c.arg(2));
  if (!count) return err_not_integer();
  List* l = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &l, &error)) return error;
  if (!l) return RedisReply::integer_of(0);
  const std::string& element = c.arg(3);
  const int64_t limit = *count == 0 ? std::numeric_limits<int64_t>::max() : (*count < 0 ? -*count : *count);
  int64_t removed = 0;
  if (*count >= 0) {
    for (auto it = l->begin(); it != l->end() && removed < limit;) {
      if (*it == element) {
        it = l->erase(it);
        ++removed;
      } else {
        ++it;
      }
    }
  } else {
    for (size_t i = l->size(); i-- > 0 && removed < limit;) {
      if ((*l)[i] == element) {
        l->erase(l->begin() + static_cast<std::ptrdiff_t>(i));
        ++removed;
      }
    }
  }
  c.drop_if_empty(c.arg(1), l->empty());
  return RedisReply::integer_of(removed);
}

RedisReply cmd_ltrim(Ctx& c) {
  const std::optional<int64_t> start = parse_int64(c.arg(2)), stop = parse_int64(c.arg(3));
  if (!start || !stop) return err_not_integer();
  List* l = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &l, &error)) return error;
  if (!l) return RedisReply::ok();
  int64_t from = 0, to = 0;
  if (!clamp_range(static_cast<int64_t>(l->size()), *start, *stop, &from, &to)) {
    l->clear();
  } else {
    l->erase(l->begin() + static_cast<std::ptrdiff_t>(to + 1), l->end());
    l->erase(l->begin(), l->begin() + static_cast<std::ptrdiff_t>(from));
  }
  c.drop_if_empty(c.arg(1), l->empty());
  return RedisReply::ok();
}

// LINSERT key BEFORE|AFTER pivot element: the new length, -1 without the pivot, 0 without the key.
RedisReply cmd_linsert(Ctx& c) {
  const bool after = iequals(c.arg(2), "after");
  if (!after && !iequals(c.arg(2), "before")) return err_syntax();
  List* l = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &l, &error)) return error;
  if (!l) return RedisReply::integer_of(0);
  auto it = std::find(l->begin(), l->end(), c.arg(3));
  if (it == l->end()) return RedisReply::integer_of(-1);
  l->insert(after ? it + 1 : it, c.arg(4));
  return RedisReply::integer_of(static_cast<int64_t>(l->size()));
}

// LPOS key element [RANK rank] [COUNT num] [MAXLEN len]
RedisReply cmd_lpos(Ctx& c) {
  int64_t rank = 1, count = -1, maxlen = 0;  // count -1: no COUNT (a single reply)
  for (size_t j = 3; j < c.argc(); j += 2) {
    if (j + 1 >= c.argc()) return err_syntax();
    const std::optional<int64_t> v = parse_int64(c.arg(j + 1));
    if (iequals(c.arg(j), "rank")) {
      if (!v) return err_not_integer();
      if (*v == 0) {
        return RedisReply::error(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second "
            "... or use negative to start from the end of the list");
      }
      rank = *v;
    } else if (iequals(c.arg(j), "count")) {
      if (!v) return err_not_integer();
      if (*v < 0) return RedisReply::error("ERR COUNT can't be negative");
      count = *v;
    } else if (iequals(c.arg(j), "maxlen")) {
      if (!v) return err_not_integer();
      if (*v < 0) return RedisReply::error("ERR MAXLEN can't be negative");
      maxlen = *v;
    } else {
      return err_syntax();
    }
  }
  List* l = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &l, &error)) return error;
  if (!l) return count >= 0 ? RedisReply::array({}) : RedisReply::nil();
  const int64_t len = static_cast<int64_t>(l->size());
  const int64_t want = count == 0 ? len : std::max<int64_t>(count, 1);
  // Redis 7.0 negates the rank in a long: LONG_MIN stays negative and every match qualifies, so
  // it answers the first match from the tail, as -1 does.
  int64_t skip = rank == INT64_MIN ? 0 : (rank < 0 ? -rank : rank) - 1;
  std::vector<RedisReply> out;
  for (int64_t n = 0; n < len && (maxlen == 0 || n < maxlen) && static_cast<int64_t>(out.size()) < want; ++n) {
    const int64_t i = rank > 0 ? n : len - 1 - n;
    if ((*l)[static_cast<size_t>(i)] != c.arg(2)) continue;
    if (skip > 0) {
      --skip;
      continue;
    }
    out.push_back(RedisReply::integer_of(i));
  }
  if (count >= 0) return RedisReply::array(std::move(out));
  return out.empty() ? RedisReply::nil() : out.front();
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT; RPOPLPUSH source destination.
static RedisReply lmove(Ctx& c, End from, End to) {
  List* src = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &src, &error)) return error;
  if (!src) return RedisReply::nil();
  List* dst = nullptr;
  if (!c.lookup(c.arg(2), &dst, &error)) return error;
  return move_one(c, c.arg(1), *src, c.arg(2), from, to);
}

RedisReply cmd_lmove(Ctx& c) {
  const std::optional<End> from = parse_end(c.arg(3)), to = parse_end(c.arg(4));
  if (!from || !to) return err_syntax();
  return lmove(c, *from, *to);
}

RedisReply cmd_rpoplpush(Ctx& c) { return lmove(c, End::kRight, End::kLeft); }

RedisReply cmd_lmpop(Ctx& c) {
  RedisReply error;
  const std::optional<MpopArgs> a = parse_mpop(c, 1, "left", "right", &error);
  if (!a) return error;
  bool found = false;
  return mpop_first(c, *a, &found);
}

// BLPOP/BRPOP key [key ...] timeout: [key, element] of the first non-empty list.
static RedisReply blocking_pop(Ctx& c, End end) {
  RedisReply error;
  const std::optional<int64_t> timeout_ms = parse_timeout_ms(c.arg(c.argc() - 1), &error);
  if (!timeout_ms) return error;
  std::vector<std::string> keys(c.argv.begin() + 1, c.argv.end() - 1);
  for (const std::string& key : keys) {
    List* l = nullptr;
    if (!lookup_blocking_source(c, key, &l, &error)) return error;
    if (!l) continue;
    std::string v = pop_end(*l, end);
    c.drop_if_empty(key, l->empty());
    return RedisReply::array({RedisReply::bulk(key), RedisReply::bulk(std::move(v))});
  }
  return block_on(c, keys, *timeout_ms);
}

RedisReply cmd_blpop(Ctx& c) { return blocking_pop(c, End::kLeft); }
RedisReply cmd_brpop(Ctx& c) { return blocking_pop(c, End::kRight); }

static RedisReply blocking_move(Ctx& c, End from, End to, const std::string& timeout) {
  RedisReply error;
  const std::optional<int64_t> timeout_ms = parse_timeout_ms(timeout, &error);
  if (!timeout_ms) return error;
  List* src = nullptr;
  if (!lookup_blocking_source(c, c.arg(1), &src, &error)) return error;
  if (src) {
    List* dst = nullptr;
    if (!c.lookup(c.arg(2), &dst, &error)) return error;
    return move_one(c, c.arg(1), *src, c.arg(2), from, to);
  }
  if (c.in_script || c.in_exec) return RedisReply::nil();  // blmoveGenericCommand's CLIENT_DENY_BLOCKING reply
  return block_on(c, {c.arg(1)}, *timeout_ms);
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
RedisReply cmd_blmove(Ctx& c) {
  const std::optional<End> from = parse_end(c.arg(3)), to = parse_end(c.arg(4));
  if (!from || !to) return err_syntax();
  return blocking_move(c, *from, *to, c.arg(5));
}

RedisReply cmd_brpoplpush(Ctx& c) { return blocking_move(c, End::kRight, End::kLeft, c.arg(3)); }

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
RedisReply cmd_blmpop(Ctx& c) {
  RedisReply error;
  const std::optional<int64_t> timeout_ms = parse_timeout_ms(c.arg(1), &error);
  if (!timeout_ms) return error;
  const std::optional<MpopArgs> a = parse_mpop(c, 2, "left", "right", &error);
  if (!a) return error;
  bool found = false;
  RedisReply reply = mpop_first(c, *a, &found);
  if (found || reply.is_error()) return reply;
  return block_on(c, a->keys, *timeout_ms);
}

}  // namespace fl::sim::redis
