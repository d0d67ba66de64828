// The scoring of seed 004 §8 (004:L180-200) and the list it feeds. Natural heat is
//   current effective intensity + growth against the historical baseline + diversity bonus
//   - time decay - repeated-actor and abnormal-traffic penalty                  (004:L183-188)
// with every signal scale-normalised first, so that search volume cannot swamp posts and comments
// (L189). Weights, normalisation, thresholds and decay are one immutable ScoreRule, named by its
// version and identified by the digest of its content (L189, L290). §8.2's levers (L190-196):
// the ratio to the same weekday-and-hour baseline, the short window's slope against the medium
// window, a cold-start bonus above a minimum of effective actors, decay by time on the list, and an
// exit threshold below the entry threshold. §8.3 (L197-198): a topic enters with the minimum
// actors and the entry score, and a listed topic leaves only after `exit_after_snapshots`
// consecutive snapshots below the exit score. §8.4 (L199-200): ties by growth, then the first time
// over the entry threshold, then topic_id.
//
// Pure functions of their inputs: no clock, no randomness, no hash-map order; scores are compared
// as integer milli-points so the same inputs give the same list on every machine.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fl::ranking {

// The behaviour signals a topic's windows aggregate (004 §7.2 table, L168-175). kReport (reports,
// hides, negative feedback) is a risk signal: it never adds heat.
enum class Signal { kSearch = 0, kPost = 1, kEngage = 2, kRead = 3, kReport = 4 };
inline constexpr int kSignals = 5;
inline constexpr int kHeatSignals = 4;  // kSearch..kRead
const char* signal_name(Signal s);      // "search", "post", "engage", "read", "report"

// The four values stored per window and candidate (004 §9.2, L204-209).
struct WindowValues {
  int64_t raw = 0;         // events received
  int64_t effective = 0;   // after basic de-duplication: distinct actors
  int64_t suspicious = 0;  // of those, actors the risk layers flagged
  int64_t adjusted = 0;    // the value scoring reads: effective - suspicious
  bool operator==(const WindowValues&) const = default;
};

// One candidate's frozen inputs at one snapshot (what an input manifest references, L214-220).
struct CandidateInputs {
  std::string topic_id;
  std::array<WindowValues, kSignals> short_window{};   // the newest short window
  std::array<WindowValues, kSignals> medium_window{};  // the medium window, per short-window length
  // Effective value per short window at the same weekday and hour in the history (L192); has_baseline
  // false for a topic the history has never seen (cold start, L194).
  std::array<double, kSignals> baseline{};
  bool has_baseline = false;
  int64_t distinct_actors = 0;  // effective actors over the short window, all signals
};

// An immutable score rule version (L189, L290). Weights are per normalised unit.
struct ScoreRule {
  std::string version;
  std::array<double, kHeatSignals> signal_weight = {1.0, 1.0, 1.0, 1.0};
  bool baseline_correction = true;   // growth against the baseline; false: intensity alone (A03)
  double growth_weight = 2.0;        // per natural log of (1 + current) / (1 + baseline)
  double slope_weight = 1.0;         // per natural log of (1 + short) / (1 + medium)
  double diversity_weight = 0.5;     // full bonus when every heat signal is active
  double cold_start_bonus = 1.0;     // a topic with no baseline and >= min_actors
  double decay_per_snapshot = 0.05;  // per snapshot already spent on the list (L195)
  double penalty_weight = 2.0;       // per share of raw events that were repeats or suspicious
  int64_t min_actors = 5;            // effective actors to enter (L198)
  double entry_score = 3.0;
  double exit_score = 2.0;       // below entry_score: hysteresis (L196)
  int exit_after_snapshots = 3;  // consecutive snapshots below exit_score before leaving (L198)
  int top_n = 10;
  // The risk model's part of the rule (§9, L201-211): a topic is blocked, for the rest of the
  // history, when its adjusted report actors reach block_reports_min and block_report_share of its
  // adjusted heat actors in one short window. Blocking is an action with evidence, never a score.
  int64_t block_reports_min = 5;
  double block_report_share = 0.3;
  bool operator==(const ScoreRule&) const = default;

  // Digest of the content (not the version name): two versions with the same digest score alike.
  std::string digest() const;
  // "" if the rule is usable, else why not (weights negative, exit above entry, top_n < 1, ...).
  std::string invalid_reason() const;
};

// A candidate's score and the parts it was made of, in milli-points.
struct Scored {
  std::string topic_id;
  int64_t score_milli = 0;
  int64_t intensity_milli = 0;
  int64_t growth_milli = 0;
  int64_t distinct_actors = 0;
  bool operator==(const Scored&) const = default;
};

// The per-signal scale of one snapshot: the mean adjusted short-window value over the candidates
// where the signal is active (1 when none is), so each signal contributes in units of its own
// typical size (L189).
std::array<double, kHeatSignals> signal_scales(const std::vector<CandidateInputs>& candidates);

// The natural heat of one candidate (L183-188). `snapshots_on_list`: how many consecutive
// snapshots the topic has already been listed (decay, L195).
Scored score_candidate(const ScoreRule& rule, const std::array<double, kHeatSignals>& scales, const CandidateInputs& c,
                       int64_t snapshots_on_list);

// One published list entry.
struct ListEntry {
  std::string topic_id;
  int rank = 0;  // 1-based
  int64_t score_milli = 0;
  bool operator==(const ListEntry&) const = default;
};

// Whether the rule's risk model blocks the candidate on this window's reports (see ScoreRule).
bool risk_blocks(const ScoreRule& rule, const CandidateInputs& c);

// One snapshot of the list: the entries, best first, and the topics blocked at this snapshot.
struct ListSnapshot {
  std::vector<ListEntry> entries;
  std::vector<std::string> newly_blocked;  // sorted
  bool operator==(const ListSnapshot&) const = default;
};

// The list across snapshots under one rule: entry and exit hysteresis (§8.3) and the stable
// tie-break (§8.4). Not copyable by accident: its state is one scope's history.
class HotList {
 public:
  explicit HotList(ScoreRule rule);
  HotList(const HotList&) = delete;
  HotList& operator=(const HotList&) = delete;
  HotList(HotList&&) = default;

  // Scores the candidates of snapshot `snapshot_index` (strictly increasing across calls) and
  // returns the new list, at most rule.top_n entries, best first; a blocked topic never lists.
  ListSnapshot next(int64_t snapshot_index, const std::vector<CandidateInputs>& candidates);

  const ScoreRule& rule() const { return rule_; }

 private:
  struct Listed {
    int64_t snapshots_on_list = 0;
    int below_exit = 0;  // consecutive snapshots under exit_score
  };
  ScoreRule rule_;
  std::map<std::string, Listed> listed_;
  std::map<std::string, int64_t> first_over_entry_;  // topic -> first snapshot at >= entry_score
  std::map<std::string, int64_t> blocked_;           // topic -> snapshot it was blocked at
  int64_t last_snapshot_ = -1;
};

}  // namespace fl::ranking
