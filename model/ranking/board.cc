#include "model/ranking/board.h"

#include <algorithm>
#include <sstream>

namespace fl::ranking::model {

std::string TopkEntryModel::describe() const {
  return topic_id + " score " + std::to_string(score) + " over " + std::to_string(items.size()) + " versions";
}

bool rule_reads_window(const std::string& rule_windows, const std::string& window_type) {
  size_t from = 0;
  while (from <= rule_windows.size()) {
    size_t comma = rule_windows.find(',', from);
    if (comma == std::string::npos) comma = rule_windows.size();
    if (rule_windows.compare(from, comma - from, window_type) == 0) return true;
    from = comma + 1;
  }
  return false;
}

std::vector<TopkEntryModel> expected_local_topk(const std::vector<VersionInput>& versions, const std::string& scope,
                                                const std::string& window_type, int32_t partition, int64_t next_offset,
                                                int64_t generation, int top_k) {
  std::map<std::string, const VersionInput*> newest;
  for (const VersionInput& v : versions) {
    if (v.scope_id != scope || !rule_reads_window(window_type, v.window_type) || v.cut_partition != partition ||
        v.cut_next_offset > next_offset || v.cut_generation != generation || v.generation != generation) {
      continue;
    }
    const VersionInput*& cur = newest[v.aggregate_key];
    if (cur == nullptr || cur->version < v.version) cur = &v;
  }
  std::map<std::string, TopkEntryModel> topics;
  for (const auto& [ak, v] : newest) {
    TopkEntryModel& e = topics[v->topic_id];
    e.topic_id = v->topic_id;
    e.score += v->risk_adjusted;
    e.items.push_back(ak + "," + std::to_string(v->generation) + "," + std::to_string(v->version) + "," +
                      v->value_digest + "," + v->cut_ref);
  }
  std::vector<TopkEntryModel> out;
  for (auto& [t, e] : topics) {
    std::sort(e.items.begin(), e.items.end());
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const TopkEntryModel& a, const TopkEntryModel& b) {
    return a.score != b.score ? a.score > b.score : a.topic_id < b.topic_id;
  });
  if (out.size() > static_cast<size_t>(std::max(0, top_k))) out.resize(static_cast<size_t>(std::max(0, top_k)));
  return out;
}

bool parse_topk_line(const std::string& line, TopkEntryModel* out) {
  const size_t a = line.find('\t'), b = a == std::string::npos ? a : line.find('\t', a + 1);
  if (b == std::string::npos || b == a + 1) return false;
  out->topic_id = line.substr(0, a);
  out->score = std::stoll(line.substr(a + 1, b - a - 1));
  out->items.clear();
  std::istringstream in(line.substr(b + 1));
  for (std::string x; std::getline(in, x, ';');) out->items.push_back(x);
  std::sort(out->items.begin(), out->items.end());
  return true;
}

std::vector<std::pair<std::string, int64_t>> expected_items(std::vector<std::pair<std::string, int64_t>> candidates,
                                                            int top_n) {
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (candidates.size() > static_cast<size_t>(std::max(0, top_n)))
    candidates.resize(static_cast<size_t>(std::max(0, top_n)));
  return candidates;
}

}  // namespace fl::ranking::model
