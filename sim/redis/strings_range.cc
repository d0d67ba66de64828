// String ranges and LCS, as t_string.c serves them: SETRANGE, GETRANGE (and its old name
// SUBSTR), STRLEN, LCS [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN].
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/redis/commands.h"

namespace fl::sim::redis {

namespace {

constexpr int64_t kProtoMaxBulkLen = 512LL * 1024 * 1024;  // proto-max-bulk-len's default

// t_string.c checkStringLength: offset + append within proto-max-bulk-len, summed in uint64
// so that an offset near INT64_MAX wraps to a negative total (refused) instead of signed
// overflow (undefined; the optimiser had dropped the wrap checks and resize() threw).
bool string_length_ok(int64_t offset, int64_t append) {
  const auto total = static_cast<int64_t>(static_cast<uint64_t>(offset) + static_cast<uint64_t>(append));
  return total <= kProtoMaxBulkLen && total >= offset && total >= append;
}

RedisReply err_too_long() { return RedisReply::error("ERR string exceeds maximum allowed size (proto-max-bulk-len)"); }

// The LCS table of a and b: lcs[i][j] = LCS length of a[0..i) and b[0..j), row-major.
struct LcsTable {
  size_t cols;
  std::vector<uint32_t> cells;
  uint32_t at(size_t i, size_t j) const { return cells[i * cols + j]; }
};

LcsTable lcs_table(const std::string& a, const std::string& b) {
  LcsTable t{b.size() + 1, std::vector<uint32_t>((a.size() + 1) * (b.size() + 1), 0)};
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      t.cells[i * t.cols + j] =
          a[i - 1] == b[j - 1] ? t.at(i - 1, j - 1) + 1 : std::max(t.at(i - 1, j), t.at(i, j - 1));
    }
  }
  return t;
}

struct LcsOptions {
  bool idx = false, len = false, withmatchlen = false;
  int64_t minmatchlen = 0;
};

// lcsCommand's walk back from (alen, blen): the LCS string and the matched ranges, emitted
// exactly where Redis emits them.
RedisReply lcs_walk(const std::string& a, const std::string& b, const LcsTable& t, const LcsOptions& o) {
  const auto alen = static_cast<uint32_t>(a.size());
  uint32_t idx = t.at(a.size(), b.size());
  std::string result(idx, '\0');
  std::vector<RedisReply> matches;
  uint32_t astart = alen, aend = 0, bstart = 0, bend = 0;  // astart == alen: no open range
  uint32_t i = alen, j = static_cast<uint32_t>(b.size());
  while (i > 0 && j > 0) {
    bool emit = false;
    if (a[i - 1] == b[j - 1]) {
      result[idx - 1] = a[i - 1];
      if (astart == alen) {
        astart = aend = i - 1;
        bstart = bend = j - 1;
      } else if (astart == i && bstart == j) {
        --astart;
        --bstart;
      } else {
        emit = true;
      }
      if (astart == 0 || bstart == 0) emit = true;
      --idx, --i, --j;
    } else {
      if (t.at(i - 1, j) > t.at(i, j - 1))
        --i;
      else
        --j;
      if (astart != alen) emit = true;
    }
    const uint32_t match_len = aend - astart + 1;
    if (emit) {
      if (o.minmatchlen == 0 || match_len >= o.minmatchlen) {
        std::vector<RedisReply> m{RedisReply::array({RedisReply::integer_of(astart), RedisReply::integer_of(aend)}),
                                  RedisReply::array({RedisReply::integer_of(bstart), RedisReply::integer_of(bend)})};
        if (o.withmatchlen) m.push_back(RedisReply::integer_of(match_len));
        matches.push_back(RedisReply::array(std::move(m)));
      }
      astart = alen;
    }
  }
  if (!o.idx) return RedisReply::bulk(std::move(result));
  return RedisReply::array({RedisReply::bulk("matches"), RedisReply::array(std::move(matches)), RedisReply::bulk("len"),
                            RedisReply::integer_of(t.at(a.size(), b.size()))});
}

bool parse_lcs_options(const Ctx& c, LcsOptions* o, RedisReply* error) {
  for (size_t j = 3; j < c.argc(); ++j) {
    const std::string& opt = c.arg(j);
    const bool more = j + 1 < c.argc();
    if (iequals(opt, "idx")) {
      o->idx = true;
    } else if (iequals(opt, "len")) {
      o->len = true;
    } else if (iequals(opt, "withmatchlen")) {
      o->withmatchlen = true;
    } else if (iequals(opt, "minmatchlen") && more) {
      auto v = parse_int64(c.arg(++j));
      if (!v) return *error = err_not_integer(), false;
      o->minmatchlen = *v < 0 ? 0 : *v;
    } else {
      return *error = err_syntax(), false;
    }
  }
  return true;
}

}  // namespace

RedisReply cmd_setrange(Ctx& c) {
  auto offset = parse_int64(c.arg(2));
  if (!offset) return err_not_integer();
  if (*offset < 0) return RedisReply::error("ERR offset is out of range");
  const std::string& value = c.arg(3);
  std::string* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (value.empty()) return RedisReply::integer_of(s ? static_cast<int64_t>(s->size()) : 0);
  if (!string_length_ok(*offset, static_cast<int64_t>(value.size()))) return err_too_long();
  if (!s) s = &std::get<std::string>(c.ks.put(c.arg(1), std::string()).value);
  const size_t end = static_cast<size_t>(*offset) + value.size();
  if (s->size() < end) s->resize(end, '\0');
  s->replace(static_cast<size_t>(*offset), value.size(), value);
  // The result is a raw sds string (dbUnshareStringValue), whatever it holds.
  c.find(c.arg(1))->big_encoding = true;
  c.notify(kNotifyString, "setrange", c.arg(1));
  return RedisReply::integer_of(static_cast<int64_t>(s->size()));
}

RedisReply cmd_strlen(Ctx& c) {
  std::string* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  return RedisReply::integer_of(s ? static_cast<int64_t>(s->size()) : 0);
}

RedisReply cmd_getrange(Ctx& c) {
  auto start = parse_int64(c.arg(2));
  if (!start) return err_not_integer();
  auto end = parse_int64(c.arg(3));
  if (!end) return err_not_integer();
  std::string* s = nullptr;
  RedisReply error;
  if (!c.lookup(c.arg(1), &s, &error)) return error;
  if (!s) return RedisReply::bulk("");
  const auto len = static_cast<int64_t>(s->size());
  int64_t from = *start, to = *end;
  if (from < 0 && to < 0 && from > to) return RedisReply::bulk("");
  if (from < 0) from += len;
  if (to < 0) to += len;
  if (from < 0) from = 0;
  if (to < 0) to = 0;
  if (to >= len) to = len - 1;
  if (from > to || len == 0) return RedisReply::bulk("");
  return RedisReply::bulk(s->substr(static_cast<size_t>(from), static_cast<size_t>(to - from + 1)));
}

RedisReply cmd_lcs(Ctx& c) {
  Entry* ea = c.find(c.arg(1));
  Entry* eb = c.find(c.arg(2));
  if ((ea && ea->type() != ValueType::kString) || (eb && eb->type() != ValueType::kString)) {
    return RedisReply::error("ERR The specified keys must contain string values");
  }
  const std::string a = ea ? std::get<std::string>(ea->value) : std::string();
  const std::string b = eb ? std::get<std::string>(eb->value) : std::string();
  LcsOptions o;
  RedisReply error;
  if (!parse_lcs_options(c, &o, &error)) return error;
  if (o.idx && o.len) return RedisReply::error("ERR If you want both the length and indexes, please just use IDX.");
  const uint64_t cells = (a.size() + 1) * (b.size() + 1);
  if (cells * sizeof(uint32_t) > static_cast<uint64_t>(kProtoMaxBulkLen)) {
    return RedisReply::error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
  }
  const LcsTable t = lcs_table(a, b);
  if (o.len && !o.idx) return RedisReply::integer_of(t.at(a.size(), b.size()));
  return lcs_walk(a, b, t, o);
}

}  // namespace fl::sim::redis
