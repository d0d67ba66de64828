#include "impl/combo/record.h"

#include <cassert>
#include <cctype>
#include <map>
#include <memory>
#include <variant>

#include "impl/ports/text.h"

namespace fl::combo {

namespace {

void append_string(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char* kHex = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
    } else {
      out += c;
    }
  }
  out += '"';
}

// A tiny JSON reader for flat objects with one nested object level (all the payload needs).
struct JsonValue;
using JsonObject = std::map<std::string, JsonValue>;
struct JsonValue {
  std::variant<std::monostate, int64_t, std::string, bool, std::shared_ptr<JsonObject>> v;
};

class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  bool object(JsonObject& out, int depth) {
    if (depth > 4) return false;
    skip();
    if (!eat('{')) return false;
    skip();
    if (eat('}')) return true;
    for (;;) {
      std::string key;
      skip();
      if (!string(key)) return false;
      skip();
      if (!eat(':')) return false;
      JsonValue value;
      if (!parse_value(value, depth)) return false;
      out[key] = std::move(value);
      skip();
      if (eat(',')) continue;
      return eat('}');
    }
  }
  bool at_end() {
    skip();
    return pos_ == s_.size();
  }

 private:
  bool parse_value(JsonValue& value, int depth) {
    skip();
    if (pos_ >= s_.size()) return false;
    char c = s_[pos_];
    if (c == '"') {
      std::string str;
      if (!string(str)) return false;
      value.v = std::move(str);
      return true;
    }
    if (c == '{') {
      auto obj = std::make_shared<JsonObject>();
      if (!object(*obj, depth + 1)) return false;
      value.v = obj;
      return true;
    }
    if (s_.compare(pos_, 4, "null") == 0) {
      pos_ += 4;
      return true;
    }
    if (s_.compare(pos_, 4, "true") == 0) {
      pos_ += 4;
      value.v = true;
      return true;
    }
    if (s_.compare(pos_, 5, "false") == 0) {
      pos_ += 5;
      value.v = false;
      return true;
    }
    bool neg = eat('-');
    if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_]))) return false;
    int64_t n = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      if (n > (INT64_MAX - 9) / 10) return false;
      n = n * 10 + (s_[pos_++] - '0');
    }
    value.v = neg ? -n : n;
    return true;
  }
  bool string(std::string& out) {
    if (!eat('"')) return false;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) return false;
      char e = s_[pos_++];
      if (e == 'u') {
        if (pos_ + 4 > s_.size()) return false;
        out += static_cast<char>(std::stoi(s_.substr(pos_ + 2, 2), nullptr, 16));
        pos_ += 4;
      } else if (e == 'n') {
        out += '\n';
      } else {
        out += e;
      }
    }
    return false;
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  const std::string& s_;
  size_t pos_ = 0;
};

int64_t int_of(const JsonObject& o, const char* k) {
  auto it = o.find(k);
  if (it == o.end()) return 0;
  if (auto* v = std::get_if<int64_t>(&it->second.v)) return *v;
  if (auto* s = std::get_if<std::string>(&it->second.v)) {
    try {
      return std::stoll(*s);
    } catch (...) { return 0; }
  }
  return 0;
}
std::string str_of(const JsonObject& o, const char* k) {
  auto it = o.find(k);
  if (it == o.end()) return "";
  if (auto* s = std::get_if<std::string>(&it->second.v)) return *s;
  return "";
}

}  // namespace

namespace {

void append_field(std::string& out, std::string_view label, int64_t value) {
  out += label;
  append_decimal(out, value);
}

}  // namespace

void ContributionRecord::append_description(std::string& out) const {
  append_field(out, "id=", id);
  append_field(out, " a=", activity_id);
  append_field(out, " u=", user_id);
  append_field(out, " item=", item_id);
  (out += '/') += item_type;
  append_field(out, " qty=", quantity);
  append_field(out, " combo=", combo_count);
  append_field(out, " at=", created_at);
}

std::string ContributionRecord::describe() const {
  std::string out;
  append_description(out);
  return out;
}

std::string encode_record_json(const ContributionRecord& r) {
  std::string out = "{\"id\":" + std::to_string(r.id) + ",\"user_id\":" + std::to_string(r.user_id) + ",\"nickname\":";
  append_string(out, r.nickname);
  out += ",\"avatar_url\":";
  append_string(out, r.avatar_url);
  out += ",\"star_id\":" + std::to_string(r.star_id) + ",\"item_id\":" + std::to_string(r.item_id) + ",\"item_type\":";
  append_string(out, r.item_type);
  out += ",\"item_name\":";
  append_string(out, r.item_name);
  out += ",\"item_icon\":";
  append_string(out, r.item_icon);
  out += ",\"quantity\":" + std::to_string(r.quantity) + ",\"combo_count\":" + std::to_string(r.combo_count) +
         ",\"created_at\":" + std::to_string(r.created_at) + "}";
  return out;
}

std::string encode_payload(int64_t activity_id, const ContributionRecord& r) {
  return "{\"activity_id\":" + std::to_string(activity_id) +
         ",\"type\":\"contributions_response\",\"record\":" + encode_record_json(r) + "}";
}

std::optional<Payload> decode_payload(const std::string& json) {
  JsonObject top;
  Reader reader(json);
  if (!reader.object(top, 0) || !reader.at_end()) return std::nullopt;
  Payload p;
  p.activity_id = int_of(top, "activity_id");
  p.type = str_of(top, "type");
  auto it = top.find("record");
  if (it != top.end()) {
    if (auto* obj = std::get_if<std::shared_ptr<JsonObject>>(&it->second.v)) {
      const JsonObject& o = **obj;
      ContributionRecord r;
      r.id = int_of(o, "id");
      r.activity_id = p.activity_id;
      r.user_id = int_of(o, "user_id");
      r.nickname = str_of(o, "nickname");
      r.avatar_url = str_of(o, "avatar_url");
      r.star_id = int_of(o, "star_id");
      r.item_id = int_of(o, "item_id");
      r.item_type = str_of(o, "item_type");
      r.item_name = str_of(o, "item_name");
      r.item_icon = str_of(o, "item_icon");
      r.quantity = int_of(o, "quantity");
      r.combo_count = int_of(o, "combo_count");
      r.created_at = int_of(o, "created_at");
      p.record = r;
    }
  }
  return p;
}

std::string channel_of(int64_t activity_id) { return "act:" + std::to_string(activity_id) + ":contributions"; }

std::optional<int64_t> activity_of_channel(const std::string& channel) {
  const std::string prefix = "act:", suffix = ":contributions";
  if (channel.size() <= prefix.size() + suffix.size() || channel.compare(0, prefix.size(), prefix) != 0 ||
      channel.compare(channel.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return std::nullopt;
  }
  try {
    return std::stoll(channel.substr(prefix.size(), channel.size() - prefix.size() - suffix.size()));
  } catch (...) { return std::nullopt; }
}

}  // namespace fl::combo
