// SORT and SORT_RO, as Redis 7.0's sort.c serves them: a list, set or sorted set sorted
// numerically or ALPHA, by its elements or BY the values of other keys (`weight_*`, `h_*->field`),
// with LIMIT, GET patterns (`#` is the element) and, for SORT, STORE into a list. BY a pattern
// without `*` skips sorting: lists and sorted sets keep their order (reversed by DESC), a set is
// sorted ALPHA when stored or inside a script, as Redis does to keep replicas and AOF identical.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

struct SortOptions {
  bool desc = false, alpha = false, dontsort = false;
  int64_t limit_start = 0, limit_count = -1;
  const std::string* by = nullptr;
  const std::string* store = nullptr;
  std::vector<const std::string*> gets;
};

// The option loop of sortCommandGeneric; false with *error set on a bad option.
bool parse_sort_options(const Ctx& c, bool readonly, SortOptions* o, RedisReply* error) {
  for (size_t j = 2; j < c.argc(); ++j) {
    const std::string& a = c.arg(j);
    const size_t left = c.argc() - j - 1;
    if (iequals(a, "asc")) {
      o->desc = false;
    } else if (iequals(a, "desc")) {
      o->desc = true;
    } else if (iequals(a, "alpha")) {
      o->alpha = true;
    } else if (iequals(a, "limit") && left >= 2) {
      const std::optional<int64_t> start = parse_int64(c.arg(j + 1)), count = parse_int64(c.arg(j + 2));
      if (!start || !count) {
        *error = err_not_integer();
        return false;
      }
      o->limit_start = *start;
      o->limit_count = *count;
      j += 2;
    } else if (!readonly && iequals(a, "store") && left >= 1) {
      o->store = &c.arg(++j);
    } else if (iequals(a, "by") && left >= 1) {
      o->by = &c.arg(++j);
      o->dontsort = o->by->find('*') == std::string::npos;
    } else if (iequals(a, "get") && left >= 1) {
      o->gets.push_back(&c.arg(++j));
    } else {
      *error = err_syntax();
      return false;
    }
  }
  return true;
}

// lookupKeyByPattern: "#" is the element itself; otherwise the first `*` is replaced by the
// element, and a `->field` after it reads that hash field. nullopt when there is no `*`, no such
// key, or a value of another type.
std::optional<std::string> lookup_by_pattern(Ctx& c, const std::string& pattern, const std::string& element) {
  if (pattern == "#") return element;
  const size_t star = pattern.find('*');
  if (star == std::string::npos) return std::nullopt;
  size_t arrow = pattern.find("->", star + 1);
  if (arrow != std::string::npos && arrow + 2 == pattern.size()) arrow = std::string::npos;
  const size_t key_end = arrow == std::string::npos ? pattern.size() : arrow;
  const std::string key = pattern.substr(0, star) + element + pattern.substr(star + 1, key_end - star - 1);
  Entry* e = c.find(key);
  if (!e) return std::nullopt;
  if (arrow == std::string::npos) {
    const std::string* s = std::get_if<std::string>(&e->value);
    return s ? std::optional<std::string>(*s) : std::nullopt;
  }
  const Hash* h = std::get_if<Hash>(&e->value);
  if (!h) return std::nullopt;
  const auto it = h->find(pattern.substr(arrow + 2));
  return it == h->end() ? std::nullopt : std::optional<std::string>(it->second);
}

struct SortItem {
  std::string element;
  double score = 0;
  std::optional<std::string> by_value;  // ALPHA BY: the value compared (none sorts first)
};

// The elements in their native order: a list head first, a set in its (sorted) order, a sorted
// set by score.
std::vector<SortItem> load_items(const Entry* e) {
  std::vector<SortItem> out;
  if (!e) return out;
  if (const List* l = std::get_if<List>(&e->value)) {
    for (const std::string& v : *l) out.push_back({v});
  } else if (const Set* s = std::get_if<Set>(&e->value)) {
    for (const std::string& v : *s) out.push_back({v});
  } else if (const ZSet* z = std::get_if<ZSet>(&e->value)) {
    for (const auto& [score, member] : z->order) out.push_back({member});
  }
  return out;
}

// Loads the weights; false when one cannot be read as a double (strtod of the whole string).
bool load_weights(Ctx& c, const SortOptions& o, std::vector<SortItem>* items) {
  bool ok = true;
  for (SortItem& it : *items) {
    std::optional<std::string> by = o.by ? lookup_by_pattern(c, *o.by, it.element) : it.element;
    if (!by) continue;
    if (o.alpha) {
      if (o.by) it.by_value = std::move(by);
      continue;
    }
    char* end = nullptr;
    errno = 0;
    it.score = std::strtod(by->c_str(), &end);
    if (*end != '\0' || errno == ERANGE || std::isnan(it.score)) ok = false;
  }
  return ok;
}

// sortCompare: numeric by weight (ties by element), or ALPHA by the BY value or the element.
int compare_items(const SortOptions& o, const SortItem& a, const SortItem& b) {
  int cmp = 0;
  if (!o.alpha) {
    cmp = a.score > b.score ? 1 : a.score < b.score ? -1 : a.element.compare(b.element);
  } else if (o.by) {
    if (!a.by_value || !b.by_value) {
      cmp = a.by_value == b.by_value ? 0 : !a.by_value ? -1 : 1;
    } else {
      cmp = a.by_value->compare(*b.by_value);
    }
  } else {
    cmp = a.element.compare(b.element);
  }
  cmp = cmp < 0 ? -1 : cmp > 0 ? 1 : 0;
  return o.desc ? -cmp : cmp;
}

RedisReply sort_generic(Ctx& c, bool readonly) {
  SortOptions o;
  RedisReply error;
  if (!parse_sort_options(c, readonly, &o, &error)) return error;
  Entry* e = c.find(c.arg(1));
  if (e && !std::holds_alternative<List>(e->value) && !std::holds_alternative<Set>(e->value) &&
      !std::holds_alternative<ZSet>(e->value)) {
    return err_wrongtype();
  }
  const bool is_set = e && std::holds_alternative<Set>(e->value);
  // zsetConvert(sortval, OBJ_ENCODING_SKIPLIST): SORT turns a listpack sorted set into a skiplist
  // for good (a -0 score written afterwards keeps its sign; OBJECT ENCODING says so).
  if (e && std::holds_alternative<ZSet>(e->value)) e->big_encoding = true;
  if (o.dontsort && is_set && (o.store || c.in_script)) {  // forced ALPHA, for replicas and the AOF
    o.dontsort = false;
    o.alpha = true;
    o.by = nullptr;
  }
  std::vector<SortItem> items = load_items(e);
  const auto len = static_cast<int64_t>(items.size());
  int64_t start = std::min(std::max<int64_t>(o.limit_start, 0), len);
  const int64_t count = std::min(std::max<int64_t>(o.limit_count, -1), len);
  int64_t end = count < 0 ? len - 1 : start + count - 1;
  if (start >= len) {
    start = len - 1;
    end = len - 2;
  }
  end = std::min(end, len - 1);
  if (o.dontsort) {
    if (o.desc && !is_set) std::reverse(items.begin(), items.end());
  } else {
    if (!load_weights(c, o, &items)) return RedisReply::error("ERR One or more scores can't be converted into double");
    std::stable_sort(items.begin(), items.end(),
                     [&o](const SortItem& a, const SortItem& b) { return compare_items(o, a, b) < 0; });
  }
  std::vector<std::optional<std::string>> out;
  for (int64_t j = start; j <= end; ++j) {
    const std::string& element = items[static_cast<size_t>(j)].element;
    if (o.gets.empty()) out.push_back(element);
    for (const std::string* get : o.gets) out.push_back(lookup_by_pattern(c, *get, element));
  }
  if (!o.store) {
    std::vector<RedisReply> reply;
    for (auto& v : out) reply.push_back(v ? RedisReply::bulk(std::move(*v)) : RedisReply::nil());
    return RedisReply::array(std::move(reply));
  }
  if (out.empty()) {
    c.ks.erase(*o.store);
    return RedisReply::integer_of(0);
  }
  List stored;
  for (auto& v : out) stored.push_back(v ? std::move(*v) : std::string());
  c.ks.put(*o.store, std::move(stored));
  c.signal(*o.store);  // setKey: a client blocked on the destination may pop now
  return RedisReply::integer_of(static_cast<int64_t>(out.size()));
}

}  // namespace

RedisReply cmd_sort(Ctx& c) { return sort_generic(c, false); }
RedisReply cmd_sort_ro(Ctx& c) { return sort_generic(c, true); }

}  // namespace fl::sim::redis
