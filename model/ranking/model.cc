#include "model/ranking/model.h"

#include <algorithm>
#include <string_view>

namespace fl::ranking::model {
namespace {

std::string get(const std::map<std::string, std::string>& e, const std::string& k) {
  auto it = e.find(k);
  return it == e.end() ? std::string() : it->second;
}
bool in(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }
// The pieces between separators, empty ones included ("a||b" -> a, "", b; "" -> one empty piece).
std::vector<std::string> split(const std::string& s, char c) {
  std::vector<std::string> out;
  for (size_t from = 0;;) {
    const size_t at = s.find(c, from);
    if (at == std::string::npos) {
      out.emplace_back(s, from);
      return out;
    }
    out.emplace_back(s, from, at - from);
    from = at + 1;
  }
}
int topic_index(const std::string& digits, const Config& cfg) {
  if (digits.empty() || digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return 0;
  const int i = std::stoi(digits);
  return i >= 1 && i <= cfg.topics ? i : 0;
}

}  // namespace

std::map<std::string, std::string> parse_event(const std::string& text) {
  std::map<std::string, std::string> e;
  const std::string_view all(text);
  for (size_t from = 0; from <= all.size();) {
    size_t at = all.find('\x1f', from);
    if (at == std::string_view::npos) at = all.size();
    const std::string_view pair = all.substr(from, at - from);
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos)
      e.insert_or_assign(std::string(pair.substr(0, eq)), std::string(pair.substr(eq + 1)));
    from = at + 1;
  }
  return e;
}

bool is_canonical_scope(const std::string& scope_id, const Config& cfg) {
  const std::vector<std::string> f = split(scope_id, '|');
  if (f.size() != 4) return false;
  const bool ch = f[1] != "ALL", rg = f[2] != "ALL", lg = f[3] != "ALL";
  if ((ch && !in(cfg.channels, f[1])) || (rg && !in(cfg.regions, f[2])) || (lg && !in(cfg.languages, f[3])))
    return false;
  if (f[0] == "GLOBAL") return !ch && !rg;
  if (f[0] == "REGION") return !ch && rg && !lg;
  if (f[0] == "CHANNEL") return ch;
  return false;
}

std::vector<std::string> scopes_of(const std::map<std::string, std::string>& e, const Config& cfg) {
  const std::string ch = get(e, "channelId"), rg = get(e, "regionId"), lg = get(e, "language");
  auto all = [](const std::string& v) { return v.empty() ? std::string("ALL") : v; };
  // 004:L19: ALL is how a scope writes a missing dimension, never an event's value (the service
  // accepts only configured values: impl/ranking/contract.cc expand_scopes). A language of "ALL"
  // would derive GLOBAL|ALL|ALL|ALL twice and count the event twice.
  if (ch == "ALL" || rg == "ALL" || lg == "ALL") return {};
  std::vector<std::string> out = {"GLOBAL|ALL|ALL|ALL"};
  if (!lg.empty()) out.push_back("GLOBAL|ALL|ALL|" + lg);
  if (!rg.empty()) out.push_back("REGION|ALL|" + rg + "|ALL");
  if (!ch.empty()) out.push_back("CHANNEL|" + ch + "|" + all(rg) + "|" + all(lg));
  for (const std::string& s : out) {
    if (!is_canonical_scope(s, cfg)) return {};
  }
  return out;
}

std::string main_topic(const std::string& hint, const Config& cfg) {
  if (hint.rfind("t_", 0) == 0 && topic_index(hint.substr(2), cfg)) return hint;
  if (hint.size() > 2 && hint[0] == 'a' && (hint.back() == 'x' || hint.back() == 'y')) {
    const int i = topic_index(hint.substr(1, hint.size() - 2), cfg);
    if (i) return "t_" + std::to_string(i);
  }
  return "";
}

std::string contract_violation(const std::map<std::string, std::string>& e, const Config& cfg) {
  for (const char* f : {"eventId", "eventType", "eventTime", "receivedAt", "actorKey", "contentOrQueryId", "topicHints",
                        "sourceService", "schemaVersion", "mappingVersion", "riskContextVersion"}) {
    if (get(e, f).empty()) return std::string("missing:") + f;
  }
  static const std::map<std::string, std::string> kOwner = {
      {"SEARCH_EXECUTED", "search-service"}, {"POST_CREATED", "post-service"}, {"COMMENT_CREATED", "comment-service"}};
  auto owner = kOwner.find(get(e, "eventType"));
  if (owner == kOwner.end()) return "unknown-type";
  if (owner->second != get(e, "sourceService")) return "forged-source";
  const int64_t t = std::stoll(get(e, "eventTime")), r = std::stoll(get(e, "receivedAt"));
  if (t > r + cfg.max_future_ms || t < r - cfg.max_age_ms) return "impossible-time";
  if (scopes_of(e, cfg).empty()) return "invalid-scope";
  return "";
}

std::string Value::describe() const {
  return "raw=" + std::to_string(raw_count) + " eff=" + std::to_string(effective) +
         " susp=" + std::to_string(suspicious) + " adj=" + std::to_string(risk_adjusted);
}

namespace {

// What the distinct accepted events put in each full key (004:L143).
struct Acc {
  std::set<std::string> events, contents;
  std::map<std::string, int64_t> actors;
  bool content = false;
};

std::map<std::string, Acc> accumulate(const std::vector<SourcedEvent>& accepted, const Config& cfg,
                                      const std::set<std::string>& late, const std::vector<MergeCutover>& cutovers) {
  std::map<std::string, Acc> acc;
  std::set<std::string> seen;
  for (const SourcedEvent& s : accepted) {
    const auto e = parse_event(s.payload);
    // RANK-4: a function of the set of distinct (source, event_id).
    if (!seen.insert(get(e, "sourceService") + ":" + get(e, "eventId")).second) continue;
    const std::string topic = main_topic(get(e, "topicHints"), cfg);
    if (topic.empty()) continue;  // RANK-31: never aggregated until confirmed
    const std::string type = get(e, "eventType");
    const std::vector<std::pair<std::string, bool>> metrics = metrics_of(type);
    const int64_t t = std::stoll(get(e, "eventTime"));
    for (const std::string& scope : scopes_of(e, cfg)) {
      for (const std::string& owner : owning_topics(topic, scope, s.partition, s.offset, cutovers)) {
        for (const auto& [wt, size] : cfg.windows) {
          const int64_t start = t >= 0 ? t / size * size : -((-t + size - 1) / size) * size;
          if (late.count(get(e, "eventId") + "#" + scope + "#" + wt)) continue;
          for (const auto& [metric, content] : metrics) {
            Acc& a = acc[owner + "#" + scope + "#" + wt + "#" + std::to_string(start) + "#" + metric];
            a.content = content;
            a.events.insert(get(e, "eventId"));
            ++a.actors[get(e, "actorKey")];
            a.contents.insert(get(e, "contentOrQueryId"));
          }
        }
      }
    }
  }
  return acc;
}

std::vector<SourcedEvent> unsourced(const std::vector<std::string>& payloads) {
  std::vector<SourcedEvent> out;
  out.reserve(payloads.size());
  for (const std::string& p : payloads) out.push_back(SourcedEvent{.payload = p});
  return out;
}

std::map<std::string, Value> values_of(const std::map<std::string, Acc>& acc, const Config& cfg) {
  std::map<std::string, Value> out;
  for (const auto& [ak, a] : acc) {
    Value v;
    v.raw_count = static_cast<int64_t>(a.events.size());
    v.effective = static_cast<int64_t>(a.content ? a.contents.size() : a.actors.size());
    for (const auto& [actor, n] : a.actors) v.suspicious += n > cfg.suspicious_repeats ? 1 : 0;
    v.risk_adjusted = v.effective - v.suspicious;
    out[ak] = v;
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, bool>> metrics_of(const std::string& event_type) {
  if (event_type == "SEARCH_EXECUTED") return {{"search_actors", false}};
  if (event_type == "POST_CREATED") return {{"post_actors", false}, {"content_count", true}};
  if (event_type == "COMMENT_CREATED") return {{"comment_actors", false}};
  return {};
}

std::vector<std::string> owning_topics(const std::string& topic, const std::string& scope, int32_t partition,
                                       int64_t offset, const std::vector<MergeCutover>& cutovers) {
  for (const MergeCutover& c : cutovers) {
    if (c.scope != scope || c.source != topic) continue;
    auto it = c.next_offset.find(partition);
    if (offset >= (it == c.next_offset.end() ? 0 : it->second)) return {c.main};
    return {topic, c.main};
  }
  return {topic};
}

std::map<std::string, Value> expected_values(const std::vector<std::string>& accepted, const Config& cfg,
                                             const std::set<std::string>& late) {
  return values_of(accumulate(unsourced(accepted), cfg, late, {}), cfg);
}

std::map<std::string, Value> expected_values(const std::vector<SourcedEvent>& accepted, const Config& cfg,
                                             const std::set<std::string>& late,
                                             const std::vector<MergeCutover>& cutovers) {
  return values_of(accumulate(accepted, cfg, late, cutovers), cfg);
}

std::map<std::string, std::set<std::string>> expected_distinct(const std::vector<std::string>& accepted,
                                                               const Config& cfg, const std::set<std::string>& late) {
  std::map<std::string, std::set<std::string>> out;
  for (auto& [ak, a] : accumulate(unsourced(accepted), cfg, late, {})) {
    if (a.content) {
      out[ak] = std::move(a.contents);
    } else {
      for (const auto& [actor, n] : a.actors) out[ak].insert(actor);
    }
  }
  return out;
}

}  // namespace fl::ranking::model
