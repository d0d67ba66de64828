#include "reports/json.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace fl::reports {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  std::optional<Json> parse(std::string* error) {
    Json v;
    if (!value(v, 0)) return fail(error);
    ws();
    if (pos_ != s_.size()) {
      err_ = "trailing characters";
      return fail(error);
    }
    return v;
  }

 private:
  std::optional<Json> fail(std::string* error) {
    if (error) *error = err_ + " at offset " + std::to_string(pos_);
    return std::nullopt;
  }
  void ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' ||
                                s_[pos_] == '\t'))
      ++pos_;
  }
  bool lit(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return bad("bad literal");
    pos_ += word.size();
    return true;
  }
  bool bad(const char* what) {
    err_ = what;
    return false;
  }
  bool value(Json& v, int depth) {
    if (depth > kMaxDepth) return bad("nesting too deep");
    ws();
    if (pos_ >= s_.size()) return bad("unexpected end");
    const char c = s_[pos_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v.type = Json::Type::kString;
      return string(v.text);
    }
    if (c == 't') { v.type = Json::Type::kBool; v.boolean = true; return lit("true"); }
    if (c == 'f') { v.type = Json::Type::kBool; v.boolean = false; return lit("false"); }
    if (c == 'n') { v.type = Json::Type::kNull; return lit("null"); }
    return number(v);
  }
  bool number(Json& v) {
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '-' || s_[pos_] == '+' || s_[pos_] == '.' ||
                                s_[pos_] == 'e' || s_[pos_] == 'E'))
      ++pos_;
    if (pos_ == start) return bad("unexpected character");
    v.type = Json::Type::kNumber;
    v.text = std::string(s_.substr(start, pos_ - start));
    return true;
  }
  bool hex4(uint32_t& out) {
    if (pos_ + 4 > s_.size()) return bad("short \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[pos_++];
      out <<= 4;
      if (h >= '0' && h <= '9') out |= h - '0';
      else if (h >= 'a' && h <= 'f') out |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') out |= h - 'A' + 10;
      else return bad("bad \\u escape");
    }
    return true;
  }
  static void utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  bool string(std::string& out) {
    ++pos_;  // opening quote
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) break;
      const char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(pos_, 2) == "\\u") {
            pos_ += 2;
            uint32_t lo = 0;
            if (!hex4(lo)) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default: return bad("bad escape");
      }
    }
    return bad("unterminated string");
  }
  bool array(Json& v, int depth) {
    v.type = Json::Type::kArray;
    ++pos_;
    ws();
    if (pos_ < s_.size() && s_[pos_] == ']') return ++pos_, true;
    while (true) {
      Json item;
      if (!value(item, depth + 1)) return false;
      v.items.push_back(std::move(item));
      ws();
      if (pos_ >= s_.size()) return bad("unterminated array");
      if (s_[pos_] == ',') { ++pos_; continue; }
      if (s_[pos_] == ']') return ++pos_, true;
      return bad("expected , or ]");
    }
  }
  bool object(Json& v, int depth) {
    v.type = Json::Type::kObject;
    ++pos_;
    ws();
    if (pos_ < s_.size() && s_[pos_] == '}') return ++pos_, true;
    while (true) {
      ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') return bad("expected a key");
      std::string key;
      if (!string(key)) return false;
      ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') return bad("expected :");
      ++pos_;
      Json item;
      if (!value(item, depth + 1)) return false;
      v.keys.push_back(std::move(key));
      v.values.push_back(std::move(item));
      ws();
      if (pos_ >= s_.size()) return bad("unterminated object");
      if (s_[pos_] == ',') { ++pos_; continue; }
      if (s_[pos_] == '}') return ++pos_, true;
      return bad("expected , or }");
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string err_;
};

}  // namespace

const Json* Json::get(std::string_view key) const {
  if (type != Type::kObject) return nullptr;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return &values[i];
  }
  return nullptr;
}

std::string Json::str(std::string_view key, std::string fallback) const {
  const Json* v = get(key);
  return v && v->type == Type::kString ? v->text : fallback;
}

int64_t Json::i64(std::string_view key, int64_t fallback) const {
  const Json* v = get(key);
  if (!v || v->type != Type::kNumber) return fallback;
  int64_t out = 0;
  auto [p, ec] = std::from_chars(v->text.data(), v->text.data() + v->text.size(), out);
  if (ec == std::errc() && p == v->text.data() + v->text.size()) return out;
  return static_cast<int64_t>(std::strtod(v->text.c_str(), nullptr));
}

uint64_t Json::u64(std::string_view key, uint64_t fallback) const {
  const Json* v = get(key);
  if (!v || v->type != Type::kNumber) return fallback;
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(v->text.data(), v->text.data() + v->text.size(), out);
  return ec == std::errc() ? out : fallback;
}

double Json::num(std::string_view key, double fallback) const {
  const Json* v = get(key);
  if (!v || v->type != Type::kNumber) return fallback;
  return std::strtod(v->text.c_str(), nullptr);
}

bool Json::flag(std::string_view key, bool fallback) const {
  const Json* v = get(key);
  return v && v->type == Type::kBool ? v->boolean : fallback;
}

std::vector<std::string> Json::strings(std::string_view key) const {
  std::vector<std::string> out;
  const Json* v = get(key);
  if (!v || v->type != Type::kArray) return out;
  for (const Json& i : v->items) {
    if (i.type == Type::kString) out.push_back(i.text);
  }
  return out;
}

std::optional<Json> parse_json(std::string_view text, std::string* error) {
  return Parser(text).parse(error);
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, p) : "0";
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t parse_hex16(const std::string& s) {
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return ec == std::errc() ? out : 0;
}

}  // namespace fl::reports
