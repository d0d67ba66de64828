#include "harness/resp/resp.h"
#include "impl/ports/assert.h"

#include <cctype>
#include <charconv>

namespace fl::resp {
namespace {

// Parses a whole string as a signed 64-bit integer (Redis's string2ll: no spaces, no '+').
bool parse_ll(std::string_view s, long long* out) {
  if (s.empty() || s[0] == '+') return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

std::string one_line(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return out;
}

}  // namespace

void RequestParser::feed(std::string_view bytes) { buf_.append(bytes.data(), bytes.size()); }

void RequestParser::compact() {
  // Drop consumed bytes once they dominate the buffer, keeping feed() amortised O(n).
  if (pos_ > 4096 && pos_ * 2 > buf_.size()) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
}

RequestParser::Status RequestParser::fail(std::string message, std::string* error) {
  error_ = "ERR Protocol error: " + std::move(message);
  *error = error_;
  return Status::kError;
}

RequestParser::Status RequestParser::next(std::vector<std::string>* argv, std::string* error) {
  FL_ASSERT(argv != nullptr && error != nullptr);
  if (!error_.empty()) {
    *error = error_;
    return Status::kError;
  }
  while (pos_ < buf_.size()) {
    argv->clear();
    [[maybe_unused]] const size_t before = pos_;  // only the assert reads it
    Status s = buf_[pos_] == '*' ? parse_multibulk(argv, error) : parse_inline(argv, error);
    if (s != Status::kCommand) return s;
    FL_ASSERT(pos_ > before);
    compact();
    if (!argv->empty()) return Status::kCommand;  // else: an empty command, skipped
  }
  compact();
  return Status::kNeedMore;
}

RequestParser::Status RequestParser::parse_multibulk(std::vector<std::string>* argv, std::string* error) {
  size_t p = pos_;
  size_t eol = buf_.find("\r\n", p);
  if (eol == std::string::npos) {
    if (buf_.size() - p > kMaxInlineBytes) return fail("too big mbulk count string", error);
    return Status::kNeedMore;
  }
  long long count = 0;
  if (!parse_ll(std::string_view(buf_).substr(p + 1, eol - p - 1), &count) || count > kMaxMultibulk) {
    return fail("invalid multibulk length", error);
  }
  p = eol + 2;
  if (count <= 0) {
    pos_ = p;
    return Status::kCommand;  // empty: skipped by next()
  }
  std::vector<std::string> args;
  args.reserve(static_cast<size_t>(std::min<long long>(count, 1024)));
  for (long long i = 0; i < count; ++i) {
    if (p >= buf_.size()) return Status::kNeedMore;
    if (buf_[p] != '$') return fail(std::string("expected '$', got '") + buf_[p] + "'", error);
    size_t bulk_eol = buf_.find("\r\n", p);
    if (bulk_eol == std::string::npos) {
      if (buf_.size() - p > kMaxInlineBytes) return fail("too big bulk count string", error);
      return Status::kNeedMore;
    }
    long long len = 0;
    if (!parse_ll(std::string_view(buf_).substr(p + 1, bulk_eol - p - 1), &len) || len < 0 || len > kMaxBulkBytes) {
      return fail("invalid bulk length", error);
    }
    size_t start = bulk_eol + 2;
    if (buf_.size() < start + static_cast<size_t>(len) + 2) return Status::kNeedMore;
    args.emplace_back(buf_, start, static_cast<size_t>(len));
    p = start + static_cast<size_t>(len) + 2;  // Redis skips the CRLF without checking it
  }
  pos_ = p;
  *argv = std::move(args);
  return Status::kCommand;
}

RequestParser::Status RequestParser::parse_inline(std::vector<std::string>* argv, std::string* error) {
  size_t nl = buf_.find('\n', pos_);
  if (nl == std::string::npos) {
    if (buf_.size() - pos_ > kMaxInlineBytes) return fail("too big inline request", error);
    return Status::kNeedMore;
  }
  std::string_view line(buf_.data() + pos_, nl - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string> args;
  if (!split_inline_args(line, &args)) return fail("unbalanced quotes in request", error);
  pos_ = nl + 1;
  *argv = std::move(args);
  return Status::kCommand;
}

bool split_inline_args(std::string_view line, std::vector<std::string>* out) {
  out->clear();
  size_t i = 0;
  const size_t n = line.size();
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (true) {
    while (i < n && space(line[i])) ++i;
    if (i >= n) return true;
    std::string cur;
    bool in_dq = false, in_sq = false, done = false;
    while (!done) {
      if (in_dq) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 3 < n && line[i + 1] == 'x' && is_hex(line[i + 2]) && is_hex(line[i + 3])) {
          cur.push_back(static_cast<char>(hex_value(line[i + 2]) * 16 + hex_value(line[i + 3])));
          i += 3;
        } else if (line[i] == '\\' && i + 1 < n) {
          ++i;
          char c = line[i];
          switch (c) {
            case 'n':
              c = '\n';
              break;
            case 'r':
              c = '\r';
              break;
            case 't':
              c = '\t';
              break;
            case 'b':
              c = '\b';
              break;
            case 'a':
              c = '\a';
              break;
            default:
              break;
          }
          cur.push_back(c);
        } else if (line[i] == '"') {
          // A closing quote must be followed by a space or the end of the line.
          if (i + 1 < n && !space(line[i + 1])) return false;
          done = true;
        } else {
          cur.push_back(line[i]);
        }
      } else if (in_sq) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 1 < n && line[i + 1] == '\'') {
          ++i;
          cur.push_back('\'');
        } else if (line[i] == '\'') {
          if (i + 1 < n && !space(line[i + 1])) return false;
          done = true;
        } else {
          cur.push_back(line[i]);
        }
      } else {
        if (i >= n) {
          done = true;
          break;
        }
        char c = line[i];
        if (space(c)) {
          done = true;
        } else if (c == '"') {
          in_dq = true;
        } else if (c == '\'') {
          in_sq = true;
        } else {
          cur.push_back(c);
        }
      }
      if (i < n) ++i;
    }
    out->push_back(std::move(cur));
  }
}

namespace {

void encode_bulk(const std::string& s, std::string* out) {
  out->append("$").append(std::to_string(s.size())).append("\r\n").append(s).append("\r\n");
}

// RESP3's aggregate type prefix for an array (addReplyMapLen / addReplySetLen / push).
char aggregate_prefix(RedisReply::Resp3 t) {
  switch (t) {
    case RedisReply::Resp3::kMap:
      return '%';
    case RedisReply::Resp3::kSet:
      return '~';
    case RedisReply::Resp3::kPush:
      return '>';
    default:
      return '*';
  }
}

}  // namespace

void encode(const RedisReply& r, int protocol, std::string* out) {
  using Kind = RedisReply::Kind;
  using Resp3 = RedisReply::Resp3;
  const bool resp3 = protocol >= 3;
  switch (r.kind) {
    case Kind::kNil:
      out->append(resp3 ? "_\r\n" : "$-1\r\n");
      return;
    case Kind::kNilArray:
      out->append(resp3 ? "_\r\n" : "*-1\r\n");
      return;
    case Kind::kStatus:
      out->append("+").append(one_line(r.str)).append("\r\n");
      return;
    case Kind::kError:
      out->append("-").append(one_line(r.str)).append("\r\n");
      return;
    case Kind::kTransportError:
      out->append("-ERR ").append(one_line(r.str)).append("\r\n");
      return;
    case Kind::kInteger:
      if (resp3 && r.resp3 == Resp3::kBool) {
        out->append(r.integer ? "#t\r\n" : "#f\r\n");
      } else {
        out->append(":").append(std::to_string(r.integer)).append("\r\n");
      }
      return;
    case Kind::kBulk:
      if (resp3 && r.resp3 == Resp3::kDouble) {
        out->append(",").append(r.str).append("\r\n");
      } else if (resp3 && r.resp3 == Resp3::kBigNumber) {
        out->append("(").append(r.str).append("\r\n");
      } else if (resp3 && r.resp3 == Resp3::kVerbatim) {
        out->append("=").append(std::to_string(r.str.size() + 4)).append("\r\ntxt:").append(r.str).append("\r\n");
      } else {
        encode_bulk(r.str, out);
      }
      return;
    case Kind::kArray: {
      const bool map = resp3 && r.resp3 == Resp3::kMap;
      FL_ASSERT(!map || r.elements.size() % 2 == 0);
      const size_t n = map ? r.elements.size() / 2 : r.elements.size();
      out->push_back(resp3 ? aggregate_prefix(r.resp3) : '*');
      out->append(std::to_string(n)).append("\r\n");
      for (const auto& e : r.elements) encode(e, protocol, out);
      return;
    }
  }
}

void encode(const RedisReply& r, std::string* out) { encode(r, 2, out); }

std::string encode(const RedisReply& reply) {
  std::string out;
  encode(reply, &out);
  return out;
}

bool decode_reply(std::string_view bytes, size_t* consumed, RedisReply* reply) {
  size_t eol = bytes.find("\r\n");
  if (eol == std::string_view::npos) return false;
  if (eol == 0) {
    *consumed = 2;
    *reply = RedisReply::transport_error("malformed reply: empty line", true);
    return true;
  }
  std::string_view line = bytes.substr(1, eol - 1);
  size_t after = eol + 2;
  long long n = 0;
  switch (bytes[0]) {
    case '+':
      *reply = RedisReply::status(std::string(line));
      *consumed = after;
      return true;
    case '-':
      *reply = RedisReply::error(std::string(line));
      *consumed = after;
      return true;
    case ':':
      if (!parse_ll(line, &n)) break;
      *reply = RedisReply::integer_of(n);
      *consumed = after;
      return true;
    case '$':
      if (!parse_ll(line, &n) || n < -1) break;
      if (n == -1) {
        *reply = RedisReply::nil();
        *consumed = after;
        return true;
      }
      if (bytes.size() < after + static_cast<size_t>(n) + 2) return false;
      *reply = RedisReply::bulk(std::string(bytes.substr(after, static_cast<size_t>(n))));
      *consumed = after + static_cast<size_t>(n) + 2;
      return true;
    case '_':
      *reply = RedisReply::nil();
      *consumed = after;
      return true;
    case ',':
      *reply = RedisReply::bulk(std::string(line)).as_resp3(RedisReply::Resp3::kDouble);
      *consumed = after;
      return true;
    case '#':  // RESP3 boolean: as RESP2 would say it (addReplyBool: 1 or 0)
      if (line != "t" && line != "f") break;
      *reply = RedisReply::integer_of(line == "t" ? 1 : 0).as_resp3(RedisReply::Resp3::kBool);
      *consumed = after;
      return true;
    case '(':
      *reply = RedisReply::bulk(std::string(line)).as_resp3(RedisReply::Resp3::kBigNumber);
      *consumed = after;
      return true;
    case '=': {
      if (!parse_ll(line, &n) || n < 4) break;
      if (bytes.size() < after + static_cast<size_t>(n) + 2) return false;
      *reply = RedisReply::bulk(std::string(bytes.substr(after + 4, static_cast<size_t>(n) - 4)))
                   .as_resp3(RedisReply::Resp3::kVerbatim);
      *consumed = after + static_cast<size_t>(n) + 2;
      return true;
    }
    case '*':
    case '%':
    case '~':
    case '>': {
      if (!parse_ll(line, &n) || n < -1) break;
      if (n == -1) {
        *reply = RedisReply::nil_array();
        *consumed = after;
        return true;
      }
      const char type = bytes[0];
      if (type == '%') n *= 2;
      std::vector<RedisReply> elements;
      size_t p = after;
      for (long long i = 0; i < n; ++i) {
        size_t used = 0;
        RedisReply e;
        if (!decode_reply(bytes.substr(p), &used, &e)) return false;
        elements.push_back(std::move(e));
        p += used;
      }
      *reply = RedisReply::array(std::move(elements));
      if (type == '%') reply->resp3 = RedisReply::Resp3::kMap;
      if (type == '~') reply->resp3 = RedisReply::Resp3::kSet;
      if (type == '>') reply->resp3 = RedisReply::Resp3::kPush;
      *consumed = p;
      return true;
    }
    default:
      break;
  }
  *consumed = after;
  *reply = RedisReply::transport_error("malformed reply line: " + std::string(line), true);
  return true;
}

}  // namespace fl::resp
