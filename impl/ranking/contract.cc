#include "impl/ranking/contract.h"

#include <algorithm>
#include <cstdio>

namespace fl::ranking {

std::vector<std::string> split(const std::string& s, char sep) {
  // The fields std::getline(in, x, sep) gives: a trailing separator starts no empty field.
  std::vector<std::string> out;
  for (size_t at = 0; at < s.size();) {
    size_t end = s.find(sep, at);
    if (end == std::string::npos) end = s.size();
    out.emplace_back(s, at, end - at);
    at = end + 1;
  }
  return out;
}

void split_views(std::string_view s, char sep, std::vector<std::string_view>& out) {
  out.clear();
  for (size_t at = 0; at < s.size();) {
    size_t end = s.find(sep, at);
    if (end == std::string_view::npos) end = s.size();
    out.push_back(s.substr(at, end - at));
    at = end + 1;
  }
}

std::string Event::get(const std::string& k) const {
  auto it = fields.find(k);
  return it == fields.end() ? std::string() : it->second;
}

// `k=v` pairs separated by 0x1f: the generators never put 0x1f or '=' in a key.
std::string Event::encode() const {
  std::string out;
  for (const auto& [k, v] : fields) {
    if (!out.empty()) out += '\x1f';
    out += k + "=" + v;
  }
  return out;
}

Event Event::decode(const std::string& text) {
  Event e;
  size_t pos = 0;
  while (pos <= text.size() && !text.empty()) {
    size_t end = text.find('\x1f', pos);
    if (end == std::string::npos) end = text.size();
    const std::string pair = text.substr(pos, end - pos);
    const size_t eq = pair.find('=');
    if (eq != std::string::npos) e.fields[pair.substr(0, eq)] = pair.substr(eq + 1);
    pos = end + 1;
  }
  return e;
}

const std::vector<std::string>& required_fields() {
  // 004:L123-138; scopeDimensions' members are optional (a missing one is ALL, 004:L19).
  static const std::vector<std::string> kFields = {
      "eventId",    "eventType",     "eventTime",     "receivedAt",     "actorKey",          "contentOrQueryId",
      "topicHints", "sourceService", "schemaVersion", "mappingVersion", "riskContextVersion"};
  return kFields;
}

std::string owner_of(const std::string& t) {
  if (t == "SEARCH_EXECUTED") return "search-service";
  if (t == "POST_CREATED") return "post-service";
  if (t == "COMMENT_CREATED") return "comment-service";
  return "";
}

std::vector<std::pair<std::string, std::string>> metrics_of(const std::string& t) {
  // 004:L171-174: distinct searching, posting and commenting actors; effective content volume.
  if (t == "SEARCH_EXECUTED") return {{"search_actors", "actor"}};
  if (t == "POST_CREATED") return {{"post_actors", "actor"}, {"content_count", "content"}};
  if (t == "COMMENT_CREATED") return {{"comment_actors", "actor"}};
  return {};
}

namespace {
bool valid_dim(const std::string& v) { return !v.empty() && v.find('|') == std::string::npos; }
bool listed(const std::vector<std::string>& l, const std::string& v) {
  return std::find(l.begin(), l.end(), v) != l.end();
}
}  // namespace

std::optional<std::string> canonical_scope(const std::string& type, const std::string& channel,
                                           const std::string& region, const std::string& language) {
  if (type != "GLOBAL" && type != "CHANNEL" && type != "REGION") return std::nullopt;
  auto dim = [](const std::string& v) { return v.empty() ? std::string("ALL") : v; };
  const std::string c = dim(channel), r = dim(region), l = dim(language);
  if (!valid_dim(c) || !valid_dim(r) || !valid_dim(l)) return std::nullopt;
  if (type == "CHANNEL" && c == "ALL") return std::nullopt;
  if (type == "REGION" && (c != "ALL" || r == "ALL")) return std::nullopt;
  if (type == "GLOBAL" && (c != "ALL" || r != "ALL")) return std::nullopt;
  return type + "|" + c + "|" + r + "|" + l;
}

std::vector<std::string> expand_scopes(const BoardConfig& cfg, const Event& e) {
  const std::string ch = e.get("channelId"), rg = e.get("regionId"), lg = e.get("language");
  if ((!ch.empty() && !listed(cfg.channels, ch)) || (!rg.empty() && !listed(cfg.regions, rg)) ||
      (!lg.empty() && !listed(cfg.languages, lg))) {
    return {};
  }
  // 004:L142: the global board and the channel board; plus the language and region boards.
  std::vector<std::optional<std::string>> s = {canonical_scope("GLOBAL", "", "", "")};
  if (!lg.empty()) s.push_back(canonical_scope("GLOBAL", "", "", lg));
  if (!rg.empty()) s.push_back(canonical_scope("REGION", "", rg, ""));
  if (!ch.empty()) s.push_back(canonical_scope("CHANNEL", ch, rg, lg));
  std::vector<std::string> out;
  for (const auto& x : s) {
    if (x) out.push_back(*x);
  }
  return out;
}

int64_t window_start_of(int64_t event_ms, int64_t size_ms) {
  return event_ms >= 0 ? event_ms / size_ms * size_ms : -((-event_ms + size_ms - 1) / size_ms) * size_ms;
}

std::string idempotency_record(const Event& e, bool by_event_id) {
  return by_event_id ? e.get("source") + ":" + e.get("eventId")
                     : e.get("sourcePartition") + ":" + e.get("sourceOffset") + ":" + e.get("scopeId");
}

std::string AggKey::str() const {
  return topic_id + "#" + scope_id + "#" + window_type + "#" + std::to_string(window_start_ms) + "#" + metric_type;
}

std::string AggValue::digest() const {
  return fnv_hex(std::to_string(raw_count) + "|" + std::to_string(effective) + "|" + std::to_string(suspicious) + "|" +
                 std::to_string(risk_adjusted));
}

}  // namespace fl::ranking
