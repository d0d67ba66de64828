#include "properties/ranking/evaluation.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

namespace fl::ranking::props {

const char* truth_kind_name(TruthKind k) {
  switch (k) {
    case TruthKind::kOrdinary:
      return "ordinary";
    case TruthKind::kBurst:
      return "burst";
    case TruthKind::kEvergreen:
      return "evergreen";
    case TruthKind::kBot:
      return "bot";
    case TruthKind::kRisky:
      return "risky";
  }
  return "?";
}

Distribution distribution_of(std::vector<double> values) {
  Distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  auto nearest_rank = [&](double p) {
    const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
    return values[std::max<size_t>(rank, 1) - 1];
  };
  d.count = static_cast<int64_t>(values.size());
  double sum = 0;
  for (double v : values) sum += v;
  d.mean = sum / static_cast<double>(values.size());
  d.p50 = nearest_rank(0.5);
  d.p90 = nearest_rank(0.9);
  d.max = values.back();
  return d;
}

namespace {

double ratio(double part, double whole) { return whole > 0 ? part / whole : 0; }

std::map<std::string, int> ranks_of(const PublishedSnapshot& s) {
  std::map<std::string, int> out;
  for (const PublishedEntry& e : s.entries) out[e.topic_id] = e.rank;
  return out;
}

// A01 and A06: what changed between consecutive snapshots, and how long topics stayed.
void stability(const BoardHistory& board, EvaluationFigures* f) {
  double overlap_sum = 0, change_sum = 0, rank_change_sum = 0;
  int64_t pairs = 0, kept_total = 0;
  std::map<std::string, int64_t> run_length;  // topics listed now -> consecutive snapshots so far
  std::vector<double> dwell;
  for (size_t i = 0; i < board.snapshots.size(); ++i) {
    const std::map<std::string, int> now = ranks_of(board.snapshots[i]);
    if (i > 0) {
      const std::map<std::string, int> before = ranks_of(board.snapshots[i - 1]);
      int64_t kept = 0, entered = 0;
      for (const auto& [topic, rank] : now) {
        auto it = before.find(topic);
        if (it == before.end()) {
          ++entered;
          continue;
        }
        ++kept;
        rank_change_sum += std::abs(rank - it->second);
      }
      f->a01_exits += static_cast<int64_t>(before.size()) - kept;
      kept_total += kept;
      if (!before.empty()) {
        overlap_sum += ratio(static_cast<double>(kept), static_cast<double>(before.size()));
        change_sum += ratio(static_cast<double>(entered), static_cast<double>(board.top_n));
        ++pairs;
      }
    }
    std::map<std::string, int64_t> next_runs;
    for (const auto& [topic, rank] : now) next_runs[topic] = run_length[topic] + 1;
    for (const auto& [topic, length] : run_length) {
      if (!now.count(topic)) dwell.push_back(static_cast<double>(length));
    }
    run_length = std::move(next_runs);
  }
  for (const auto& [topic, length] : run_length) dwell.push_back(static_cast<double>(length));
  f->a01_overlap = ratio(overlap_sum, static_cast<double>(pairs));
  f->a01_mean_rank_change = ratio(rank_change_sum, static_cast<double>(kept_total));
  f->a06_change_rate = ratio(change_sum, static_cast<double>(pairs));
  f->a06_mean_dwell_snapshots = distribution_of(dwell).mean;
}

struct TopicHistory {
  int64_t first_listed_s = -1;
  int64_t last_listed_s = -1;
  int64_t snapshots_listed = 0;
  int64_t rank_sum = 0;
  int best_rank = 0;
  bool blocked = false;
  int64_t raw = 0, adjusted = 0;  // summed over the snapshots that stored it
};

std::map<std::string, TopicHistory> per_topic(const BoardHistory& board) {
  std::map<std::string, TopicHistory> out;
  for (const PublishedSnapshot& s : board.snapshots) {
    for (const PublishedEntry& e : s.entries) {
      TopicHistory& h = out[e.topic_id];
      if (h.first_listed_s < 0) h.first_listed_s = s.at_s;
      h.last_listed_s = s.at_s;
      ++h.snapshots_listed;
      h.rank_sum += e.rank;
      h.best_rank = h.best_rank == 0 ? e.rank : std::min(h.best_rank, e.rank);
    }
    for (const PublishedCandidate& c : s.candidates) {
      out[c.topic_id].raw += c.raw;
      out[c.topic_id].adjusted += c.adjusted;
    }
    for (const std::string& t : s.blocked) out[t].blocked = true;
  }
  return out;
}

void recall_by(const std::vector<TopicTruth>& truth, const std::map<std::string, TopicHistory>& topics,
               std::string TopicTruth::*group, std::map<std::string, GroupRecall>* out) {
  std::map<std::string, int64_t> rank_sum;
  for (const TopicTruth& t : truth) {
    if (!t.deserves_list) continue;
    GroupRecall& g = (*out)[t.*group];
    ++g.deserving;
    auto it = topics.find(t.topic_id);
    if (it == topics.end() || it->second.snapshots_listed == 0) continue;
    ++g.listed;
    rank_sum[t.*group] += it->second.best_rank;
  }
  for (auto& [name, g] : *out) {
    g.recall = ratio(static_cast<double>(g.listed), static_cast<double>(g.deserving));
    g.mean_best_rank = ratio(static_cast<double>(rank_sum[name]), static_cast<double>(g.listed));
  }
}

}  // namespace

EvaluationFigures evaluate_board(const BoardHistory& board, const std::vector<TopicTruth>& truth) {
  EvaluationFigures f;
  f.snapshots = static_cast<int64_t>(board.snapshots.size());
  stability(board, &f);
  const std::map<std::string, TopicHistory> topics = per_topic(board);
  auto history = [&](const std::string& topic) {
    auto it = topics.find(topic);
    return it == topics.end() ? TopicHistory{} : it->second;
  };

  std::vector<double> latencies;
  int64_t evergreen = 0, evergreen_listed = 0, evergreen_rank_sum = 0;
  int64_t bots = 0, bots_listed = 0, risky = 0, risky_blocked = 0, others = 0, others_blocked = 0;
  std::set<std::string> bot_topics;
  for (const TopicTruth& t : truth) {
    const TopicHistory h = history(t.topic_id);
    if (t.kind == TruthKind::kBurst) {
      if (h.first_listed_s < 0) {
        ++f.a02_missed;
      } else {
        latencies.push_back(static_cast<double>(std::max<int64_t>(0, h.first_listed_s - t.onset_s)));
      }
    }
    if (t.kind == TruthKind::kEvergreen) {
      ++evergreen;
      evergreen_listed += h.snapshots_listed;
      evergreen_rank_sum += h.rank_sum;
    }
    if (t.kind == TruthKind::kBot) {
      ++bots;
      bots_listed += h.last_listed_s >= std::max<int64_t>(0, t.onset_s);
      bot_topics.insert(t.topic_id);
    }
    (t.kind == TruthKind::kRisky ? risky : others) += 1;
    (t.kind == TruthKind::kRisky ? risky_blocked : others_blocked) += h.blocked;
  }
  f.a02_latency_s = distribution_of(latencies);
  f.a03_listed_share = ratio(static_cast<double>(evergreen_listed), static_cast<double>(evergreen * f.snapshots));
  f.a03_mean_rank = ratio(static_cast<double>(evergreen_rank_sum), static_cast<double>(evergreen_listed));
  f.a04_bot_listed_share = ratio(static_cast<double>(bots_listed), static_cast<double>(bots));
  int64_t bot_raw = 0, bot_adjusted = 0, organic_raw = 0, organic_adjusted = 0;
  for (const auto& [topic, h] : topics) {
    (bot_topics.count(topic) ? bot_raw : organic_raw) += h.raw;
    (bot_topics.count(topic) ? bot_adjusted : organic_adjusted) += h.adjusted;
  }
  f.a04_bot_adjustment = 1 - ratio(static_cast<double>(bot_adjusted), static_cast<double>(bot_raw));
  f.a04_organic_adjustment = 1 - ratio(static_cast<double>(organic_adjusted), static_cast<double>(organic_raw));
  if (bot_raw == 0) f.a04_bot_adjustment = 0;
  if (organic_raw == 0) f.a04_organic_adjustment = 0;
  f.a05_block_rate = ratio(static_cast<double>(risky_blocked), static_cast<double>(risky));
  f.a05_false_block_rate = ratio(static_cast<double>(others_blocked), static_cast<double>(others));

  recall_by(truth, topics, &TopicTruth::channel, &f.a07_by_channel);
  recall_by(truth, topics, &TopicTruth::region, &f.a07_by_region);
  recall_by(truth, topics, &TopicTruth::language, &f.a07_by_language);
  if (!f.a07_by_channel.empty()) {
    double lo = 1, hi = 0;
    for (const auto& [name, g] : f.a07_by_channel) {
      lo = std::min(lo, g.recall);
      hi = std::max(hi, g.recall);
    }
    f.a07_recall_spread = hi - lo;
  }
  return f;
}

}  // namespace fl::ranking::props
