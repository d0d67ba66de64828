// Reference model of seed 004 part 2: from the immutable window versions a run's frozen cut
// admits, what each candidate partition's local Top K must be (004:L247-248, L214-220), which
// disposition each manifest entry must get, and which items, in which order, a snapshot of a
// sealed run must hold (004:L200, L254). Written from the seed and the scenario's board constants,
// not from impl/ranking.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fl::ranking::model {

// One TOPIC_WINDOW_METRIC_VERSION row joined with its head's key fields and its source-offset cut.
struct VersionInput {
  std::string aggregate_key, topic_id, scope_id, window_type;
  int64_t generation = 0, version = 0, risk_adjusted = 0;
  std::string value_digest, cut_ref;
  int32_t cut_partition = 0;
  int64_t cut_next_offset = 0, cut_generation = 0;
};

// One manifest item: "aggregate_key,generation,version,value_digest,cut_ref".
struct TopkEntryModel {
  std::string topic_id;
  int64_t score = 0;
  std::vector<std::string> items;  // sorted
  bool operator==(const TopkEntryModel&) const = default;
  std::string describe() const;
};

// Whether a score rule's windows ("long", or a comma-separated list such as "short,medium,long":
// the multi-window inputs of C21) include `window_type`.
bool rule_reads_window(const std::string& rule_windows, const std::string& window_type);

// The local Top K of candidate partition `partition` at cut (next_offset, generation) for `scope`:
// per aggregate key of the windows `window_type` names, the newest version of that generation whose own cut lies in
// the partition at or below next_offset; a topic's score is the sum of its keys' risk-adjusted
// values; the top `top_k` by score descending, then topic_id (004:L200).
std::vector<TopkEntryModel> expected_local_topk(const std::vector<VersionInput>& versions, const std::string& scope,
                                                const std::string& window_type, int32_t partition, int64_t next_offset,
                                                int64_t generation, int top_k);

// Parses one "topic\tscore\titem;item;..." line of a Top K object; false if malformed.
bool parse_topk_line(const std::string& line, TopkEntryModel* out);

// 004:L249: each entry ends CANDIDATE or REJECTED with a reason; rule v1 admits score >= entry.
inline bool is_candidate(int64_t score, int64_t entry_score) { return score >= entry_score; }

// The snapshot of a sealed run: its candidates ordered by score descending, then topic_id, first
// `top_n` (004:L200, L254). Input and output are (topic_id, score).
std::vector<std::pair<std::string, int64_t>> expected_items(std::vector<std::pair<std::string, int64_t>> candidates,
                                                            int top_n);

}  // namespace fl::ranking::model
