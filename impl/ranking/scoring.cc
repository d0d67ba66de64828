#include "impl/ranking/scoring.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "impl/ports/assert.h"
#include "impl/ports/digest.h"

namespace fl::ranking {

const char* signal_name(Signal s) {
  switch (s) {
    case Signal::kSearch:
      return "search";
    case Signal::kPost:
      return "post";
    case Signal::kEngage:
      return "engage";
    case Signal::kRead:
      return "read";
    case Signal::kReport:
      return "report";
  }
  return "?";
}

namespace {

void append_number(std::string& out, const char* name, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s=%.17g;", name, v);
  out += buf;
}

int64_t to_milli(double points) { return std::llround(points * 1000.0); }

// Sum over the heat signals of weight * value / scale: the signals in units of their own size.
template <typename ValueOf>
double normalised(const ScoreRule& rule, const std::array<double, kHeatSignals>& scales, ValueOf value_of) {
  double sum = 0;
  for (int s = 0; s < kHeatSignals; ++s) sum += rule.signal_weight[s] * value_of(s) / scales[s];
  return sum;
}

}  // namespace

std::string ScoreRule::digest() const {
  std::string text;
  for (int s = 0; s < kHeatSignals; ++s) append_number(text, signal_name(static_cast<Signal>(s)), signal_weight[s]);
  append_number(text, "baseline_correction", baseline_correction ? 1 : 0);
  append_number(text, "growth_weight", growth_weight);
  append_number(text, "slope_weight", slope_weight);
  append_number(text, "diversity_weight", diversity_weight);
  append_number(text, "cold_start_bonus", cold_start_bonus);
  append_number(text, "decay_per_snapshot", decay_per_snapshot);
  append_number(text, "penalty_weight", penalty_weight);
  append_number(text, "min_actors", static_cast<double>(min_actors));
  append_number(text, "entry_score", entry_score);
  append_number(text, "exit_score", exit_score);
  append_number(text, "exit_after_snapshots", exit_after_snapshots);
  append_number(text, "top_n", top_n);
  append_number(text, "block_reports_min", static_cast<double>(block_reports_min));
  append_number(text, "block_report_share", block_report_share);
  return fnv_hex(text);
}

std::string ScoreRule::invalid_reason() const {
  if (version.empty()) return "a score rule needs a version";
  for (double w : signal_weight) {
    if (!(w >= 0) || !std::isfinite(w)) return "signal weights must be finite and >= 0";
  }
  for (double w :
       {growth_weight, slope_weight, diversity_weight, cold_start_bonus, decay_per_snapshot, penalty_weight}) {
    if (!(w >= 0) || !std::isfinite(w)) return "weights, bonus and decay must be finite and >= 0";
  }
  if (!std::isfinite(entry_score) || !std::isfinite(exit_score)) return "entry and exit scores must be finite";
  if (exit_score > entry_score) return "the exit score may not be above the entry score (004:L196)";
  if (exit_after_snapshots < 1) return "exit_after_snapshots must be >= 1";
  if (min_actors < 0) return "min_actors must be >= 0";
  if (top_n < 1) return "top_n must be >= 1";
  if (block_reports_min < 1) return "block_reports_min must be >= 1";
  if (!(block_report_share >= 0) || !std::isfinite(block_report_share))
    return "block_report_share must be finite and >= 0";
  return "";
}

std::array<double, kHeatSignals> signal_scales(const std::vector<CandidateInputs>& candidates) {
  std::array<double, kHeatSignals> scales{};
  for (int s = 0; s < kHeatSignals; ++s) {
    double sum = 0;
    int64_t active = 0;
    for (const CandidateInputs& c : candidates) {
      if (c.short_window[s].adjusted <= 0) continue;
      sum += static_cast<double>(c.short_window[s].adjusted);
      ++active;
    }
    scales[s] = active > 0 ? sum / static_cast<double>(active) : 1.0;
    FL_ASSERT(scales[s] > 0);
  }
  return scales;
}

Scored score_candidate(const ScoreRule& rule, const std::array<double, kHeatSignals>& scales, const CandidateInputs& c,
                       int64_t snapshots_on_list) {
  FL_ASSERT(snapshots_on_list >= 0);
  const double now = normalised(rule, scales, [&](int s) { return static_cast<double>(c.short_window[s].adjusted); });
  const double medium =
      normalised(rule, scales, [&](int s) { return static_cast<double>(c.medium_window[s].adjusted); });
  const double base = normalised(rule, scales, [&](int s) { return c.baseline[s]; });
  FL_ASSERT(now >= 0 && medium >= 0 && base >= 0);

  // Intensity on a log scale: a topic ten times as loud is not ten times as hot (L184).
  const double intensity = std::log1p(now);
  // Growth against the same weekday and hour (L192): only with a baseline and with the correction.
  const double growth =
      rule.baseline_correction && c.has_baseline ? rule.growth_weight * std::log((1 + now) / (1 + base)) : 0.0;
  const double slope = rule.slope_weight * std::log((1 + now) / (1 + medium));  // L193
  int active = 0;
  int64_t raw = 0, adjusted = 0;
  for (int s = 0; s < kHeatSignals; ++s) {
    if (c.short_window[s].effective > 0) ++active;
    raw += c.short_window[s].raw;
    adjusted += c.short_window[s].adjusted;
  }
  const double diversity = active > 0 ? rule.diversity_weight * (active - 1) / (kHeatSignals - 1) : 0.0;  // L186
  const double cold_start =
      !c.has_baseline && c.distinct_actors >= rule.min_actors ? rule.cold_start_bonus : 0.0;  // L194
  const double decay = rule.decay_per_snapshot * static_cast<double>(snapshots_on_list);      // L195
  // Repeats and suspicious actors as a share of what arrived (L188).
  const double penalty =
      raw > 0 ? rule.penalty_weight * static_cast<double>(raw - std::min(raw, adjusted)) / static_cast<double>(raw)
              : 0.0;

  Scored out;
  out.topic_id = c.topic_id;
  out.intensity_milli = to_milli(intensity);
  out.growth_milli = to_milli(growth);
  out.score_milli = to_milli(intensity + growth + slope + diversity + cold_start - decay - penalty);
  out.distinct_actors = c.distinct_actors;
  return out;
}

bool risk_blocks(const ScoreRule& rule, const CandidateInputs& c) {
  const int64_t reports = c.short_window[static_cast<int>(Signal::kReport)].adjusted;
  int64_t heat_actors = 0;
  for (int s = 0; s < kHeatSignals; ++s) heat_actors += c.short_window[s].adjusted;
  return reports >= rule.block_reports_min &&
         static_cast<double>(reports) >= rule.block_report_share * static_cast<double>(heat_actors);
}

HotList::HotList(ScoreRule rule) : rule_(std::move(rule)) { FL_ASSERT(rule_.invalid_reason().empty()); }

ListSnapshot HotList::next(int64_t snapshot_index, const std::vector<CandidateInputs>& candidates) {
  FL_ASSERT(snapshot_index > last_snapshot_);
  last_snapshot_ = snapshot_index;
  const int64_t entry_milli = to_milli(rule_.entry_score);
  const int64_t exit_milli = to_milli(rule_.exit_score);
  const std::array<double, kHeatSignals> scales = signal_scales(candidates);

  ListSnapshot out;
  std::map<std::string, Scored> scored;
  for (const CandidateInputs& c : candidates) {
    if (blocked_.count(c.topic_id)) continue;
    if (risk_blocks(rule_, c)) {
      blocked_.emplace(c.topic_id, snapshot_index);
      out.newly_blocked.push_back(c.topic_id);
      continue;
    }
    auto it = listed_.find(c.topic_id);
    const int64_t on_list = it == listed_.end() ? 0 : it->second.snapshots_on_list;
    Scored s = score_candidate(rule_, scales, c, on_list);
    if (s.score_milli >= entry_milli && s.distinct_actors >= rule_.min_actors) {
      first_over_entry_.emplace(s.topic_id, snapshot_index);
    }
    scored[c.topic_id] = std::move(s);
  }

  std::vector<Scored> eligible;
  for (auto& [topic, listed] : listed_) {  // §8.3: a listed topic leaves only after N low snapshots
    if (blocked_.count(topic)) continue;
    auto it = scored.find(topic);
    const Scored s = it == scored.end() ? Scored{topic, 0, 0, 0, 0} : it->second;
    listed.below_exit = s.score_milli < exit_milli ? listed.below_exit + 1 : 0;
    if (listed.below_exit < rule_.exit_after_snapshots) eligible.push_back(s);
  }
  for (const auto& [topic, s] : scored) {  // a new topic needs the actors and the entry score
    if (listed_.count(topic) == 0 && s.score_milli >= entry_milli && s.distinct_actors >= rule_.min_actors) {
      eligible.push_back(s);
    }
  }
  auto first_over = [&](const std::string& topic) {
    auto it = first_over_entry_.find(topic);
    return it == first_over_entry_.end() ? snapshot_index + 1 : it->second;
  };
  std::sort(eligible.begin(), eligible.end(), [&](const Scored& a, const Scored& b) {  // §8.4
    return std::make_tuple(-a.score_milli, -a.growth_milli, first_over(a.topic_id), a.topic_id) <
           std::make_tuple(-b.score_milli, -b.growth_milli, first_over(b.topic_id), b.topic_id);
  });
  if (eligible.size() > static_cast<size_t>(rule_.top_n)) eligible.resize(static_cast<size_t>(rule_.top_n));

  std::map<std::string, Listed> kept;
  std::vector<ListEntry>& list = out.entries;
  for (const Scored& s : eligible) {
    Listed l;
    if (auto it = listed_.find(s.topic_id); it != listed_.end()) l = it->second;
    ++l.snapshots_on_list;
    kept[s.topic_id] = l;
    list.push_back(ListEntry{s.topic_id, static_cast<int>(list.size()) + 1, s.score_milli});
  }
  listed_ = std::move(kept);
  FL_ASSERT(list.size() <= static_cast<size_t>(rule_.top_n));
  std::sort(out.newly_blocked.begin(), out.newly_blocked.end());
  return out;
}

}  // namespace fl::ranking
