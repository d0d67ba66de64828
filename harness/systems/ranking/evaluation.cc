#include "harness/systems/ranking/evaluation.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "impl/ports/assert.h"
#include "impl/ports/stable_hash.h"
#include "reports/json.h"
#include "reports/report_text.h"
#include "sim/rng.h"

namespace fl {

using ranking::BehaviourEvent;
using ranking::CandidateInputs;
using ranking::kHeatSignals;
using ranking::kSignals;
using ranking::Signal;
using ranking::WindowValues;
using ranking::props::TopicTruth;
using ranking::props::TruthKind;

namespace {

constexpr int64_t kDayS = 86'400;

// ------------------------------------------------------------------------------------------ load

struct LoadError {
  YAML::Mark mark;
  std::string message;
};

[[noreturn]] void fail(const YAML::Node& at, const std::string& message) { throw LoadError{at.Mark(), message}; }

void check_keys(const YAML::Node& map, const std::set<std::string>& allowed) {
  if (!map.IsMap()) fail(map, "expected a mapping");
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (!allowed.count(key)) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(it->first, "unknown key '" + key + "' (expected one of: " + list + ")");
    }
  }
}

template <typename T>
void read(const YAML::Node& map, const char* key, T* out, T lo, T hi) {
  const YAML::Node n = map[key];
  if (!n) return;
  T v{};
  try {
    v = n.as<T>();
  } catch (const YAML::Exception&) { fail(n, std::string("'") + key + "' takes a number"); }
  if (!(v >= lo && v <= hi)) {
    std::ostringstream range;
    range << "'" << key << "' must be in [" << lo << ", " << hi << "]";
    fail(n, range.str());
  }
  *out = v;
}

void read_names(const YAML::Node& map, const char* key, std::vector<std::string>* out) {
  const YAML::Node n = map[key];
  if (!n) return;
  if (!n.IsSequence() || n.size() == 0) fail(n, std::string("'") + key + "' takes a non-empty list of names");
  out->clear();
  for (const YAML::Node& item : n) {
    if (!item.IsScalar() || item.Scalar().empty()) fail(item, std::string("'") + key + "' takes names");
    out->push_back(item.Scalar());
  }
}

void read_workload(const YAML::Node& n, Workload* w) {
  check_keys(n,
             {"name", "seed", "history_days", "duration_s", "snapshot_interval_s", "short_window_s", "medium_window_s",
              "topics", "channels", "regions", "languages", "channel_volume", "history_as_events"});
  if (n["name"]) w->name = n["name"].as<std::string>();
  read<uint64_t>(n, "seed", &w->seed, 0, UINT64_MAX);
  read<int>(n, "history_days", &w->history_days, 1, 60);
  w->start_s = w->history_days * kDayS + 8 * 3600;
  if (const YAML::Node b = n["history_as_events"]) {
    if (!b.IsScalar() || (b.Scalar() != "true" && b.Scalar() != "false"))
      fail(b, "'history_as_events' takes true or false");
    w->history_as_events = b.Scalar() == "true";
  }
  read<int64_t>(n, "duration_s", &w->duration_s, 600, 7 * 86400);
  read<int64_t>(n, "snapshot_interval_s", &w->snapshot_interval_s, 60, 3600);
  read<int64_t>(n, "short_window_s", &w->short_window_s, 60, 3600);
  read<int64_t>(n, "medium_window_s", &w->medium_window_s, 60, 86400);
  for (const char* k : {"duration_s", "snapshot_interval_s", "short_window_s", "medium_window_s"}) {
    if (n[k] && n[k].as<int64_t>() % 60 != 0) fail(n[k], std::string("'") + k + "' must be whole minutes");
  }
  if (w->medium_window_s < w->short_window_s) fail(n, "the medium window may not be shorter than the short one");
  if (const YAML::Node t = n["topics"]) {
    check_keys(t, {"ordinary", "burst", "evergreen", "bot", "risky", "ordinary_rate", "evergreen_rate", "burst_rate",
                   "bot_accounts", "risky_report_share", "brigade_share"});
    WorkloadTopics& x = w->topics;
    for (auto [key, field] : {std::pair{"ordinary", &x.ordinary},
                              {"burst", &x.burst},
                              {"evergreen", &x.evergreen},
                              {"bot", &x.bot},
                              {"risky", &x.risky}}) {
      read<int>(t, key, field, 0, 500);
    }
    for (auto [key, field] : {std::pair{"ordinary_rate", &x.ordinary_rate},
                              {"evergreen_rate", &x.evergreen_rate},
                              {"burst_rate", &x.burst_rate},
                              {"bot_accounts", &x.bot_accounts}}) {
      read<double>(t, key, field, 0, 1000);
    }
    read<double>(t, "risky_report_share", &x.risky_report_share, 0, 10);
    read<double>(t, "brigade_share", &x.brigade_share, 0, 1);
  }
  read_names(n, "channels", &w->channels);
  read_names(n, "regions", &w->regions);
  read_names(n, "languages", &w->languages);
  if (const YAML::Node v = n["channel_volume"]) {
    if (!v.IsMap()) fail(v, "'channel_volume' maps channels to multipliers");
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string ch = it->first.as<std::string>();
      if (std::find(w->channels.begin(), w->channels.end(), ch) == w->channels.end())
        fail(it->first, "'" + ch + "' is not one of the workload's channels");
      double m = 1;
      read<double>(v, ch.c_str(), &m, 0.01, 100);
      w->channel_volume[ch] = m;
    }
  }
}

ranking::ScoreRule read_rule(const YAML::Node& n) {
  check_keys(n, {"version", "weights", "baseline_correction", "growth_weight", "slope_weight", "diversity_weight",
                 "cold_start_bonus", "decay_per_snapshot", "penalty_weight", "min_actors", "entry_score", "exit_score",
                 "exit_after_snapshots", "top_n", "block_reports_min", "block_report_share"});
  ranking::ScoreRule r;
  if (!n["version"] || !n["version"].IsScalar()) fail(n, "a rule needs a 'version'");
  r.version = n["version"].Scalar();
  if (const YAML::Node w = n["weights"]) {
    check_keys(w, {"search", "post", "engage", "read"});
    for (int s = 0; s < kHeatSignals; ++s) {
      read<double>(w, ranking::signal_name(static_cast<Signal>(s)), &r.signal_weight[s], 0, 1000);
    }
  }
  if (const YAML::Node b = n["baseline_correction"]) {
    if (!b.IsScalar() || (b.Scalar() != "true" && b.Scalar() != "false"))
      fail(b, "'baseline_correction' takes true or false");
    r.baseline_correction = b.Scalar() == "true";
  }
  for (auto [key, field] : {std::pair{"growth_weight", &r.growth_weight},
                            {"slope_weight", &r.slope_weight},
                            {"diversity_weight", &r.diversity_weight},
                            {"cold_start_bonus", &r.cold_start_bonus},
                            {"decay_per_snapshot", &r.decay_per_snapshot},
                            {"penalty_weight", &r.penalty_weight},
                            {"block_report_share", &r.block_report_share}}) {
    read<double>(n, key, field, 0, 1000);
  }
  read<double>(n, "entry_score", &r.entry_score, -1000, 1000);
  read<double>(n, "exit_score", &r.exit_score, -1000, 1000);
  read<int64_t>(n, "min_actors", &r.min_actors, 0, 1'000'000);
  read<int64_t>(n, "block_reports_min", &r.block_reports_min, 1, 1'000'000);
  read<int>(n, "exit_after_snapshots", &r.exit_after_snapshots, 1, 1000);
  read<int>(n, "top_n", &r.top_n, 1, 1000);
  if (const std::string why = r.invalid_reason(); !why.empty()) fail(n, "rule " + r.version + ": " + why);
  return r;
}

Threshold read_threshold(const YAML::Node& n, const EvaluationSpec& spec) {
  check_keys(n, {"rule", "figure", "max", "min"});
  Threshold t;
  if (!n["rule"] || !n["figure"]) fail(n, "a threshold names a 'rule' and a 'figure'");
  t.rule = n["rule"].as<std::string>();
  t.figure = n["figure"].as<std::string>();
  bool known_rule = false;
  for (const ranking::ScoreRule& r : spec.rules) known_rule = known_rule || r.version == t.rule;
  if (!known_rule) fail(n["rule"], "rule '" + t.rule + "' is not one of the file's rules");
  const std::vector<std::string> keys = figure_keys(spec.workload);
  if (std::find(keys.begin(), keys.end(), t.figure) == keys.end()) {
    fail(n["figure"], "unknown figure '" + t.figure + "' (the table of `faultline evaluate` names every figure's key)");
  }
  for (const char* bound : {"max", "min"}) {
    if (!n[bound]) continue;
    double v = 0;
    read<double>(n, bound, &v, -1e12, 1e12);
    (std::string(bound) == "max" ? t.max : t.min) = v;
  }
  if (!t.max && !t.min) fail(n, "a threshold needs 'max' or 'min'");
  return t;
}

EvaluationSpec read_spec(const YAML::Node& root, const std::string& file) {
  check_keys(root, {"workload", "rules", "abuse", "thresholds", "history"});
  EvaluationSpec spec;
  spec.file = file;
  if (!root["workload"]) fail(root, "an evaluation file needs a 'workload'");
  read_workload(root["workload"], &spec.workload);
  if (const YAML::Node a = root["abuse"]) {
    check_keys(a, {"actors_per_device_max", "actors_per_ip_max", "new_account_age_days", "sync_interval_ms",
                   "sync_accounts_min", "same_content_accounts_min"});
    ranking::AbuseOptions& o = spec.abuse;
    for (auto [key, field] : {std::pair{"actors_per_device_max", &o.actors_per_device_max},
                              {"actors_per_ip_max", &o.actors_per_ip_max},
                              {"new_account_age_days", &o.new_account_age_days},
                              {"sync_interval_ms", &o.sync_interval_ms},
                              {"sync_accounts_min", &o.sync_accounts_min},
                              {"same_content_accounts_min", &o.same_content_accounts_min}}) {
      read<int64_t>(a, key, field, 1, 1'000'000'000);
    }
  }
  if (const YAML::Node h = root["history"]) {
    check_keys(h, {"events", "labels"});
    if (!h["events"] || !h["labels"]) fail(h, "a history names its 'events' and 'labels' files");
    const std::filesystem::path dir = std::filesystem::path(file).parent_path();
    HistoryFiles files{(dir / h["events"].as<std::string>()).string(), (dir / h["labels"].as<std::string>()).string()};
    std::string error;
    std::optional<LabelledHistory> data = read_history(files, &spec.workload, spec.abuse, &error);
    if (!data) fail(h, "cannot use the history: " + error);
    spec.history = files;
    spec.history_data = std::make_shared<const LabelledHistory>(std::move(*data));
  }
  const YAML::Node rules = root["rules"];
  if (!rules || !rules.IsSequence() || rules.size() < 2)
    fail(rules ? rules : root, "'rules' lists at least two rule versions");
  std::set<std::string> versions;
  for (const YAML::Node& r : rules) {
    spec.rules.push_back(read_rule(r));
    if (!versions.insert(spec.rules.back().version).second)
      fail(r, "rule version '" + spec.rules.back().version + "' appears twice");
  }
  if (const YAML::Node t = root["thresholds"]) {
    if (!t.IsSequence()) fail(t, "'thresholds' is a list");
    for (const YAML::Node& item : t) spec.thresholds.push_back(read_threshold(item, spec));
  }
  return spec;
}

// ------------------------------------------------------------------------------------- generate

// The hour of day of stretch time at_s (negative: the history days before it).
int hour_at(const Workload& w, int64_t at_s) {
  const int64_t of_day = ((w.start_s + at_s) % kDayS + kDayS) % kDayS;
  return static_cast<int>(of_day / 3600);
}

// The daily rhythm: quiet at night, a peak at 20:00.
double diurnal(int hour) { return 1.0 + 0.3 * std::cos(2 * M_PI * (hour - 20) / 24.0); }

int64_t poisson(sim::Rng& rng, double mean) {
  if (mean <= 0) return 0;
  if (mean > 40)
    return std::max<int64_t>(0,
                             std::llround(mean + std::sqrt(mean) * (rng.unit() + rng.unit() + rng.unit() - 1.5) * 2));
  const double limit = std::exp(-mean);
  int64_t k = 0;
  for (double p = rng.unit(); p > limit; p *= rng.unit()) ++k;
  return k;
}

struct TopicPlan {
  TopicTruth truth;
  double rate = 0;  // organic actors per minute per heat signal, before the rhythm
  bool has_history = true;
  int64_t active_from_s = 0;  // bots and brigades: when the swarm starts
  bool brigade = false;
};

std::vector<TopicPlan> plan_topics(const Workload& w, sim::Rng& rng) {
  std::vector<TopicPlan> plans;
  auto add = [&](TruthKind kind, int count, double rate) {
    for (int i = 0; i < count; ++i) {
      TopicPlan p;
      char id[64];
      std::snprintf(id, sizeof id, "%s-%03d", ranking::props::truth_kind_name(kind), i);
      p.truth.topic_id = id;
      p.truth.kind = kind;
      p.truth.channel = w.channels[rng.below(w.channels.size())];
      p.truth.region = w.regions[rng.below(w.regions.size())];
      p.truth.language = w.languages[rng.below(w.languages.size())];
      auto it = w.channel_volume.find(p.truth.channel);
      p.rate = rate * (it == w.channel_volume.end() ? 1.0 : it->second) * (0.75 + 0.5 * rng.unit());
      plans.push_back(p);
    }
  };
  add(TruthKind::kOrdinary, w.topics.ordinary, w.topics.ordinary_rate);
  add(TruthKind::kEvergreen, w.topics.evergreen, w.topics.evergreen_rate);
  add(TruthKind::kBurst, w.topics.burst, w.topics.burst_rate);
  add(TruthKind::kBot, w.topics.bot, w.topics.ordinary_rate / 4);
  add(TruthKind::kRisky, w.topics.risky, w.topics.ordinary_rate * 2);
  for (TopicPlan& p : plans) {
    if (p.truth.kind == TruthKind::kBurst) {
      p.truth.onset_s = 60 * rng.between(w.duration_s / 360, w.duration_s / 90);  // a sixth to two thirds in
      p.truth.deserves_list = true;
      p.has_history = rng.chance(0.5);  // half are new topics (cold start, 004:L194)
    }
    if (p.truth.kind == TruthKind::kBot) {
      p.active_from_s = 60 * rng.between(0, w.duration_s / 120);
      p.truth.onset_s = p.active_from_s;
    }
    if (p.truth.kind == TruthKind::kOrdinary && rng.chance(w.topics.brigade_share)) {
      p.brigade = true;
      p.active_from_s = 60 * rng.between(0, w.duration_s / 120);
    }
  }
  return plans;
}

// Organic actors per minute per heat signal of the topic at `at_s` of the stretch.
double organic_rate(const TopicPlan& p, const Workload& w, int64_t at_s) {
  const double rhythm = diurnal(hour_at(w, at_s));
  if (p.truth.kind != TruthKind::kBurst) return p.rate * rhythm;
  const double quiet = w.topics.ordinary_rate / 4 * rhythm;
  if (at_s < p.truth.onset_s) return quiet;
  const double since_min = static_cast<double>(at_s - p.truth.onset_s) / 60.0;
  const double ramp = std::min(1.0, (since_min + 1) / 5.0);     // five minutes to its peak
  return quiet + p.rate * ramp * std::exp2(-since_min / 60.0);  // then a half-life of an hour
}

BehaviourEvent organic_event(sim::Rng& rng, const std::string& topic, Signal s, int64_t at_ms, int64_t seq) {
  BehaviourEvent e;
  e.at_ms = at_ms;
  e.event_id = topic + "/" + std::to_string(seq);
  e.topic_id = topic;
  e.signal = s;
  const uint64_t user = rng.below(2'000'000);
  e.actor = "u" + std::to_string(user);
  e.device = "d" + std::to_string(user);
  e.ip = "ip" + std::to_string(user % 100'000);
  e.account_age_days = 30 + rng.between(0, 2000);
  if (s == Signal::kPost) e.content_digest = "c" + std::to_string(rng.next_u64() % 1'000'000'000);
  return e;
}

// A swarm of new accounts on a few devices, acting in the same second (bots on heat signals,
// brigades on reports): what layers 2 and 3 exist for (004:L203).
void swarm(sim::Rng& rng, const std::string& topic, const std::string& prefix, int accounts, Signal s, int64_t at_ms,
           int64_t* seq, std::vector<BehaviourEvent>* out) {
  for (int a = 0; a < accounts; ++a) {
    BehaviourEvent e;
    e.at_ms = at_ms + rng.between(0, 900);
    e.event_id = topic + "/" + std::to_string((*seq)++);
    e.topic_id = topic;
    e.signal = s;
    e.actor = prefix + std::to_string(a);
    e.device = prefix + "dev" + std::to_string(a % 4);
    e.ip = prefix + "ip";
    e.account_age_days = a % 2;
    if (s == Signal::kPost) e.content_digest = prefix + "same-text";
    out->push_back(e);
  }
}

void minute_of_topic(const TopicPlan& p, const Workload& w, sim::Rng& rng, int64_t minute, int64_t* seq,
                     std::vector<BehaviourEvent>* out) {
  const int64_t at_s = minute * 60;
  const double rate = organic_rate(p, w, at_s);
  const std::string& topic = p.truth.topic_id;
  for (int s = 0; s < kHeatSignals; ++s) {
    const int64_t n = poisson(rng, rate);
    for (int64_t i = 0; i < n; ++i) {
      out->push_back(organic_event(rng, topic, static_cast<Signal>(s), at_s * 1000 + rng.between(0, 59'999), (*seq)++));
    }
  }
  if (p.truth.kind == TruthKind::kRisky) {  // true reports from ordinary, distinct accounts
    const int64_t n = poisson(rng, w.topics.risky_report_share * rate * kHeatSignals);
    for (int64_t i = 0; i < n; ++i) {
      out->push_back(organic_event(rng, topic, Signal::kReport, at_s * 1000 + rng.between(0, 59'999), (*seq)++));
    }
  }
  if (p.truth.kind == TruthKind::kBot && at_s >= p.active_from_s) {
    const int accounts = static_cast<int>(w.topics.bot_accounts);
    for (int half = 0; half < 2; ++half) {
      swarm(rng, topic, topic + "-bot", accounts, Signal::kSearch, at_s * 1000 + half * 30'000, seq, out);
      swarm(rng, topic, topic + "-bot", accounts, Signal::kPost, at_s * 1000 + half * 30'000 + 5'000, seq, out);
    }
  }
  if (p.brigade && at_s >= p.active_from_s) {  // malicious reports (004 §7.2: 恶意举报)
    swarm(rng, topic, topic + "-brigade", 30, Signal::kReport, at_s * 1000, seq, out);
  }
}

// The per-hour baselines of the days before the stretch: daily counts averaged (004:L192).
std::map<int, std::array<double, kSignals>> history_baseline(const TopicPlan& p, const Workload& w, sim::Rng& rng) {
  std::map<int, std::array<double, kSignals>> out;
  const double short_min = static_cast<double>(w.short_window_s) / 60.0;
  for (int hour = 0; hour < 24; ++hour) {
    std::array<double, kSignals> mean{};
    const double usual = p.truth.kind == TruthKind::kBurst ? w.topics.ordinary_rate / 4 : p.rate;
    for (int day = 0; day < w.history_days; ++day) {
      for (int s = 0; s < kHeatSignals; ++s) {
        mean[s] += static_cast<double>(poisson(rng, usual * diurnal(hour) * short_min)) / w.history_days;
      }
    }
    out[hour] = mean;
  }
  return out;
}

}  // namespace

// -------------------------------------------------------------------------------------- public

std::optional<EvaluationSpec> load_evaluation_text(const std::string& yaml, const std::string& file,
                                                   std::string* error) {
  auto where = [&](const YAML::Mark& m) {
    return file + ":" + std::to_string(m.is_null() ? 0 : m.line + 1) + ":" +
           std::to_string(m.is_null() ? 0 : m.column + 1);
  };
  try {
    const YAML::Node root = YAML::Load(yaml);
    if (!root || root.IsNull()) {
      *error = file + ":1:1: empty evaluation file";
      return std::nullopt;
    }
    return read_spec(root, file);
  } catch (const LoadError& e) { *error = where(e.mark) + ": " + e.message; } catch (const YAML::Exception& e) {
    *error = where(e.mark) + ": malformed YAML: " + e.msg;
  }
  return std::nullopt;
}

std::optional<EvaluationSpec> load_evaluation_file(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open file";
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return load_evaluation_text(text.str(), path, error);
}

namespace {

// Minutes [first, last) of every plan's events, each minute's events in time order.
void generate_minutes(const std::vector<TopicPlan>& plans, const Workload& w, sim::Rng& rng, int64_t first,
                      int64_t last, bool prior, std::vector<int64_t>* seq, std::vector<BehaviourEvent>* out) {
  for (int64_t minute = first; minute < last; ++minute) {
    const size_t begin = out->size();
    for (size_t i = 0; i < plans.size(); ++i) {
      if (prior && !plans[i].has_history) continue;  // a new topic has no past
      minute_of_topic(plans[i], w, rng, minute, &(*seq)[i], out);
    }
    std::stable_sort(out->begin() + static_cast<std::ptrdiff_t>(begin), out->end(),
                     [](const BehaviourEvent& a, const BehaviourEvent& b) { return a.at_ms < b.at_ms; });
  }
}

}  // namespace

LabelledHistory generate_history(const Workload& w, const ranking::AbuseOptions& abuse) {
  sim::Rng root(w.seed);
  sim::Rng plan_rng = root.fork("plan"), history_rng = root.fork("history"), event_rng = root.fork("events");
  const std::vector<TopicPlan> plans = plan_topics(w, plan_rng);
  LabelledHistory h;
  for (const TopicPlan& p : plans) h.truth.push_back(p.truth);
  std::vector<int64_t> seq(plans.size(), 0);
  if (w.history_as_events) {
    sim::Rng prior_rng = root.fork("prior-events");  // the stretch's own stream stays as it is
    std::vector<int64_t> prior_seq(plans.size(), 1'000'000'000);
    generate_minutes(plans, w, prior_rng, -w.history_days * kDayS / 60, 0, true, &prior_seq, &h.prior_events);
    h.baselines = baselines_from_events(h.prior_events, w.history_days, w, abuse);
  } else {
    for (const TopicPlan& p : plans) {
      if (p.has_history) h.baselines[p.truth.topic_id] = history_baseline(p, w, history_rng);
    }
  }
  generate_minutes(plans, w, event_rng, 0, w.duration_s / 60, false, &seq, &h.events);
  return h;
}

std::map<std::string, std::map<int, std::array<double, kSignals>>> baselines_from_events(
    const std::vector<BehaviourEvent>& prior, int days, const Workload& w, const ranking::AbuseOptions& abuse) {
  const int64_t window_ms = w.short_window_s * 1000, first_ms = -days * kDayS * 1000;
  std::map<std::string, std::map<int64_t, std::vector<BehaviourEvent>>> by_window;  // topic -> window -> events
  for (const BehaviourEvent& e : prior) {
    if (e.at_ms < first_ms || e.at_ms >= 0) continue;
    by_window[e.topic_id][(e.at_ms - first_ms) / window_ms].push_back(e);
  }
  std::array<int64_t, 24> windows_per_hour{};  // every window of the days, empty ones included
  const int64_t windows = days * kDayS * 1000 / window_ms;
  auto hour_of_window = [&](int64_t k) { return hour_at(w, (first_ms + k * window_ms) / 1000); };
  for (int64_t k = 0; k < windows; ++k) ++windows_per_hour[static_cast<size_t>(hour_of_window(k))];
  std::map<std::string, std::map<int, std::array<double, kSignals>>> out;
  for (const auto& [topic, ws] : by_window) {
    std::map<int, std::array<double, kSignals>>& per_hour = out[topic];
    for (int h = 0; h < 24; ++h) per_hour[h] = {};
    for (const auto& [k, events] : ws) {
      const std::array<WindowValues, kSignals> v = ranking::window_values(events, abuse);
      const int hour = hour_of_window(k);
      for (int s = 0; s < kSignals; ++s) {
        per_hour[hour][s] += static_cast<double>(v[s].adjusted) / static_cast<double>(windows_per_hour[hour]);
      }
    }
  }
  return out;
}

namespace {

const char* const kEventColumns[] = {"at_ms",  "event_id", "topic_id",         "signal",         "actor",
                                     "device", "ip",       "account_age_days", "content_digest", "well_formed"};
const char* const kLabelColumns[] = {"topic_id", "kind", "onset_ms", "deserves_list", "channel", "region", "language"};

std::vector<std::string> split_csv_line(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::vector<std::string> out;
  std::string field;
  for (char c : line) {
    if (c == ',') {
      out.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  out.push_back(field);
  return out;
}

bool parse_i64(const std::string& text, int64_t* out) {
  if (text.empty() || text.size() > 19) return false;
  size_t i = text[0] == '-' ? 1 : 0;
  if (i == text.size()) return false;
  for (size_t k = i; k < text.size(); ++k) {
    if (text[k] < '0' || text[k] > '9') return false;
  }
  *out = std::stoll(text);
  return true;
}

// Reads a CSV file whose header is exactly `columns` (in order): each row's fields, or an error
// "FILE:LINE: what".
std::optional<std::vector<std::vector<std::string>>> read_csv(const std::string& path,
                                                              const std::vector<std::string>& columns,
                                                              std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open file";
    return std::nullopt;
  }
  std::string line;
  std::vector<std::vector<std::string>> rows;
  bool header = false;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    header = true;
    std::vector<std::string> fields = split_csv_line(line);
    if (n == 1) {
      if (fields != columns) {
        std::string want;
        for (const std::string& c : columns) want += (want.empty() ? "" : ",") + c;
        *error = path + ":1: the header must be " + want;
        return std::nullopt;
      }
      continue;
    }
    if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
    if (fields.size() != columns.size()) {
      *error = path + ":" + std::to_string(n) + ": " + std::to_string(fields.size()) + " fields, the header has " +
               std::to_string(columns.size()) + " (a value may not contain a comma)";
      return std::nullopt;
    }
    fields.push_back(std::to_string(n));  // the line, for later errors
    rows.push_back(std::move(fields));
  }
  if (!header) {
    *error = path + ":1: empty file (no header)";
    return std::nullopt;
  }
  return rows;
}

std::optional<Signal> signal_of(const std::string& name) {
  for (int s = 0; s < kSignals; ++s) {
    if (name == ranking::signal_name(static_cast<Signal>(s))) return static_cast<Signal>(s);
  }
  return std::nullopt;
}

std::optional<TruthKind> kind_of(const std::string& name) {
  for (TruthKind k :
       {TruthKind::kOrdinary, TruthKind::kBurst, TruthKind::kEvergreen, TruthKind::kBot, TruthKind::kRisky}) {
    if (name == ranking::props::truth_kind_name(k)) return k;
  }
  return std::nullopt;
}

std::optional<std::vector<BehaviourEvent>> read_events(const std::string& path, std::string* error) {
  auto rows = read_csv(path, {std::begin(kEventColumns), std::end(kEventColumns)}, error);
  if (!rows) return std::nullopt;
  std::vector<BehaviourEvent> events;
  for (const std::vector<std::string>& f : *rows) {
    const std::string where = path + ":" + f.back() + ": ";
    BehaviourEvent e;
    const std::optional<Signal> signal = signal_of(f[3]);
    if (!parse_i64(f[0], &e.at_ms) || e.at_ms < 0)
      return *error = where + "at_ms must be a non-negative integer", std::nullopt;
    if (f[2].empty() || f[4].empty()) return *error = where + "topic_id and actor may not be empty", std::nullopt;
    if (!signal) return *error = where + "signal must be search, post, engage, read or report", std::nullopt;
    if (!parse_i64(f[7], &e.account_age_days))
      return *error = where + "account_age_days must be an integer", std::nullopt;
    if (f[9] != "0" && f[9] != "1") return *error = where + "well_formed must be 0 or 1", std::nullopt;
    e.event_id = f[1];
    e.topic_id = f[2];
    e.signal = *signal;
    e.actor = f[4];
    e.device = f[5];
    e.ip = f[6];
    e.content_digest = f[8];
    e.well_formed = f[9] == "1";
    events.push_back(std::move(e));
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const BehaviourEvent& a, const BehaviourEvent& b) { return a.at_ms < b.at_ms; });
  return events;
}

std::optional<std::vector<TopicTruth>> read_labels(const std::string& path, std::string* error) {
  auto rows = read_csv(path, {std::begin(kLabelColumns), std::end(kLabelColumns)}, error);
  if (!rows) return std::nullopt;
  std::vector<TopicTruth> truth;
  std::set<std::string> seen;
  for (const std::vector<std::string>& f : *rows) {
    const std::string where = path + ":" + f.back() + ": ";
    TopicTruth t;
    const std::optional<TruthKind> kind = kind_of(f[1]);
    int64_t onset_ms = -1;
    if (f[0].empty() || !seen.insert(f[0]).second) return *error = where + "topic_id empty or repeated", std::nullopt;
    if (!kind) return *error = where + "kind must be ordinary, burst, evergreen, bot or risky", std::nullopt;
    if (!f[2].empty() && !parse_i64(f[2], &onset_ms))
      return *error = where + "onset_ms must be an integer or empty", std::nullopt;
    if (f[3] != "0" && f[3] != "1") return *error = where + "deserves_list must be 0 or 1", std::nullopt;
    t.topic_id = f[0];
    t.kind = *kind;
    t.onset_s = onset_ms;  // absolute milliseconds until read_history re-bases it
    t.deserves_list = f[3] == "1";
    t.channel = f[4];
    t.region = f[5];
    t.language = f[6];
    truth.push_back(std::move(t));
  }
  return truth;
}

std::vector<std::string> distinct(const std::vector<TopicTruth>& truth, std::string TopicTruth::*field) {
  std::set<std::string> names;
  for (const TopicTruth& t : truth) names.insert(t.*field);
  return {names.begin(), names.end()};
}

}  // namespace

std::optional<LabelledHistory> read_history(const HistoryFiles& files, Workload* w, const ranking::AbuseOptions& abuse,
                                            std::string* error) {
  std::optional<std::vector<BehaviourEvent>> events = read_events(files.events, error);
  if (!events) return std::nullopt;
  std::optional<std::vector<TopicTruth>> truth = read_labels(files.labels, error);
  if (!truth) return std::nullopt;
  if (events->empty()) return *error = files.events + ": no events", std::nullopt;
  std::set<std::string> labelled;
  for (const TopicTruth& t : *truth) labelled.insert(t.topic_id);
  for (const BehaviourEvent& e : *events) {
    if (!labelled.count(e.topic_id)) return *error = files.labels + ": no label for topic " + e.topic_id, std::nullopt;
  }
  const int64_t end_ms = (events->back().at_ms / 60'000 + 1) * 60'000;  // after the last event's minute
  const int64_t start_ms = end_ms - w->duration_s * 1000;
  if (start_ms < 0) return *error = files.events + ": shorter than the workload's duration_s", std::nullopt;
  const int days = static_cast<int>(start_ms / (kDayS * 1000));  // whole days before the stretch
  w->start_s = start_ms / 1000;
  w->history_days = days;
  LabelledHistory h;
  for (BehaviourEvent& e : *events) {
    e.at_ms -= start_ms;
    (e.at_ms < 0 ? h.prior_events : h.events).push_back(std::move(e));
  }
  if (days > 0) h.baselines = baselines_from_events(h.prior_events, days, *w, abuse);
  for (TopicTruth& t : *truth) t.onset_s = t.onset_s < 0 ? -1 : (t.onset_s - start_ms) / 1000;
  h.truth = std::move(*truth);
  w->channels = distinct(h.truth, &TopicTruth::channel);
  w->regions = distinct(h.truth, &TopicTruth::region);
  w->languages = distinct(h.truth, &TopicTruth::language);
  return h;
}

std::string write_history(const LabelledHistory& h, const Workload& w, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create " + dir + ": " + ec.message();
  const int64_t start_ms = w.start_s * 1000;
  std::ofstream events(dir + "/events.csv", std::ios::binary), labels(dir + "/labels.csv", std::ios::binary);
  for (size_t i = 0; i < std::size(kEventColumns); ++i) events << (i ? "," : "") << kEventColumns[i];
  events << "\n";
  for (const std::vector<BehaviourEvent>* part : {&h.prior_events, &h.events}) {
    for (const BehaviourEvent& e : *part) {
      events << e.at_ms + start_ms << "," << e.event_id << "," << e.topic_id << "," << ranking::signal_name(e.signal)
             << "," << e.actor << "," << e.device << "," << e.ip << "," << e.account_age_days << "," << e.content_digest
             << "," << (e.well_formed ? 1 : 0) << "\n";
    }
  }
  for (size_t i = 0; i < std::size(kLabelColumns); ++i) labels << (i ? "," : "") << kLabelColumns[i];
  labels << "\n";
  for (const TopicTruth& t : h.truth) {
    labels << t.topic_id << "," << ranking::props::truth_kind_name(t.kind) << ","
           << (t.onset_s < 0 ? std::string() : std::to_string(t.onset_s * 1000 + start_ms)) << ","
           << (t.deserves_list ? 1 : 0) << "," << t.channel << "," << t.region << "," << t.language << "\n";
  }
  events.close();
  labels.close();
  return events && labels ? "" : "cannot write " + dir + "/events.csv or labels.csv";
}

LabelledHistory history_of(const EvaluationSpec& spec) {
  if (spec.history_data) return *spec.history_data;
  return generate_history(spec.workload, spec.abuse);
}

FrozenInputs freeze_inputs(const LabelledHistory& h, const Workload& w, const ranking::AbuseOptions& abuse) {
  const int64_t minutes = w.duration_s / 60;
  // topic -> minute -> events, and each minute's four values.
  std::map<std::string, std::vector<std::vector<BehaviourEvent>>> by_minute;
  for (const TopicTruth& t : h.truth) by_minute[t.topic_id].resize(static_cast<size_t>(minutes));
  for (const BehaviourEvent& e : h.events) by_minute[e.topic_id][static_cast<size_t>(e.at_ms / 60'000)].push_back(e);
  std::map<std::string, std::vector<std::array<WindowValues, kSignals>>> minute_values;
  for (const auto& [topic, ms] : by_minute) {
    for (const auto& events : ms) minute_values[topic].push_back(ranking::window_values(events, abuse));
  }

  const int64_t short_min = w.short_window_s / 60, medium_min = w.medium_window_s / 60;
  FrozenInputs out;
  for (int64_t at_s = w.short_window_s; at_s <= w.duration_s; at_s += w.snapshot_interval_s) {
    const int64_t end_min = at_s / 60;
    std::vector<CandidateInputs> candidates;
    for (const auto& [topic, ms] : by_minute) {
      std::vector<BehaviourEvent> recent;
      for (int64_t m = end_min - short_min; m < end_min; ++m) {
        recent.insert(recent.end(), ms[static_cast<size_t>(m)].begin(), ms[static_cast<size_t>(m)].end());
      }
      if (recent.empty()) continue;
      CandidateInputs c;
      c.topic_id = topic;
      c.short_window = ranking::window_values(recent, abuse);
      for (int64_t m = std::max<int64_t>(0, end_min - medium_min); m < end_min; ++m) {
        for (int s = 0; s < kSignals; ++s) {
          const WindowValues& v = minute_values[topic][static_cast<size_t>(m)][s];
          c.medium_window[s].raw += v.raw;
          c.medium_window[s].effective += v.effective;
          c.medium_window[s].suspicious += v.suspicious;
          c.medium_window[s].adjusted += v.adjusted;
        }
      }
      const int64_t covered = std::min(medium_min, end_min);
      for (int s = 0; s < kSignals; ++s) {  // per short-window length
        WindowValues& v = c.medium_window[s];
        v = WindowValues{v.raw * short_min / covered, v.effective * short_min / covered,
                         v.suspicious * short_min / covered, v.adjusted * short_min / covered};
      }
      if (auto it = h.baselines.find(topic); it != h.baselines.end()) {
        c.baseline = it->second.at(hour_at(w, at_s));
        c.has_baseline = true;
      }
      for (int s = 0; s < kHeatSignals; ++s)
        c.distinct_actors = std::max(c.distinct_actors, c.short_window[s].adjusted);
      candidates.push_back(std::move(c));
    }
    out.at_s.push_back(at_s);
    out.candidates.push_back(std::move(candidates));
  }
  return out;
}

ranking::props::BoardHistory publish_board(const FrozenInputs& inputs, const ranking::ScoreRule& rule) {
  ranking::props::BoardHistory board;
  board.rule_version = rule.version;
  board.top_n = rule.top_n;
  ranking::HotList list(rule);
  for (size_t i = 0; i < inputs.at_s.size(); ++i) {
    const ranking::ListSnapshot s = list.next(static_cast<int64_t>(i), inputs.candidates[i]);
    ranking::props::PublishedSnapshot p;
    p.at_s = inputs.at_s[i];
    for (const ranking::ListEntry& e : s.entries) p.entries.push_back({e.topic_id, e.rank});
    for (const CandidateInputs& c : inputs.candidates[i]) {
      ranking::props::PublishedCandidate pc{c.topic_id, 0, 0};
      for (int k = 0; k < kHeatSignals; ++k) {
        pc.raw += c.short_window[k].raw;
        pc.adjusted += c.short_window[k].adjusted;
      }
      p.candidates.push_back(pc);
    }
    p.blocked = s.newly_blocked;
    board.snapshots.push_back(std::move(p));
  }
  return board;
}

EvaluationResult evaluate(const EvaluationSpec& spec) {
  const LabelledHistory h = history_of(spec);
  StableHasher digest;
  for (const BehaviourEvent& e : h.events) {
    digest += e.event_id;
    digest += std::to_string(e.at_ms) + "|" + e.actor + "|" + e.device + "|" + e.ip + "|" + e.content_digest + "\n";
  }
  for (const TopicTruth& t : h.truth) {
    digest += t.topic_id + "|" + ranking::props::truth_kind_name(t.kind) + "|" + std::to_string(t.onset_s) + "|" +
              t.channel + "|" + t.region + "|" + t.language + "\n";
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(digest.finish()));
  EvaluationResult r;
  r.workload_digest = hex;
  r.events = static_cast<int64_t>(h.events.size());
  r.truth = h.truth;
  const FrozenInputs inputs = freeze_inputs(h, spec.workload, spec.abuse);
  for (const ranking::ScoreRule& rule : spec.rules) {
    ranking::props::BoardHistory board = publish_board(inputs, rule);
    ranking::props::EvaluationFigures figures = ranking::props::evaluate_board(board, h.truth);
    r.rules.push_back(RuleFigures{rule, std::move(figures), std::move(board)});
  }
  return r;
}

std::vector<RowFigure> figures_of(const ranking::props::EvaluationFigures& f) {
  using reports::FigureRecord;
  std::vector<RowFigure> out;
  auto add = [&](const char* row, const char* key, const char* label, double value, const char* unit) {
    out.push_back(RowFigure{row, FigureRecord{key, label, "", value, unit}});
  };
  add("A01", "a01_overlap", "Top N overlap with the previous snapshot", f.a01_overlap, "share");
  add("A01", "a01_mean_rank_change", "mean rank change of kept topics", f.a01_mean_rank_change, "ranks");
  add("A01", "a01_exits", "exits", static_cast<double>(f.a01_exits), "");
  add("A02", "a02_latency_s_p50", "burst onset to listing, median", f.a02_latency_s.p50, "s");
  add("A02", "a02_latency_s_p90", "burst onset to listing, p90", f.a02_latency_s.p90, "s");
  add("A02", "a02_latency_s_max", "burst onset to listing, max", f.a02_latency_s.max, "s");
  add("A02", "a02_missed", "bursts never listed", static_cast<double>(f.a02_missed), "");
  add("A03", "a03_listed_share", "evergreen topics: share of snapshots listed", f.a03_listed_share, "share");
  add("A03", "a03_mean_rank", "evergreen topics: mean rank when listed", f.a03_mean_rank, "rank");
  add("A04", "a04_bot_listed_share", "bot topics listed while their swarm acts", f.a04_bot_listed_share, "share");
  add("A04", "a04_bot_adjustment", "risk adjustment of bot candidates", f.a04_bot_adjustment, "share");
  add("A04", "a04_other_adjustment", "risk adjustment of other candidates", f.a04_organic_adjustment, "share");
  add("A05", "a05_block_rate", "risky topics blocked", f.a05_block_rate, "share");
  add("A05", "a05_false_block_rate", "other topics blocked (false blocks)", f.a05_false_block_rate, "share");
  add("A06", "a06_change_rate", "Top N change per snapshot", f.a06_change_rate, "share");
  add("A06", "a06_mean_dwell", "mean dwell", f.a06_mean_dwell_snapshots, "snapshots");
  for (const auto& [dimension, groups] :
       {std::pair{"channel", &f.a07_by_channel}, {"region", &f.a07_by_region}, {"language", &f.a07_by_language}}) {
    for (const auto& [name, g] : *groups) {
      out.push_back(RowFigure{"A07", FigureRecord{std::string("a07_recall_") + dimension + "_" + name,
                                                  "bursts listed, " + std::string(dimension) + " " + name + " (of " +
                                                      std::to_string(g.deserving) + ")",
                                                  "", g.recall, "share"}});
    }
  }
  add("A07", "a07_recall_spread", "recall spread over channels", f.a07_recall_spread, "share");
  return out;
}

std::vector<std::string> figure_keys(const Workload& w) {
  ranking::props::EvaluationFigures f;
  for (const std::string& c : w.channels) f.a07_by_channel[c];
  for (const std::string& r : w.regions) f.a07_by_region[r];
  for (const std::string& l : w.languages) f.a07_by_language[l];
  std::vector<std::string> keys;
  for (const RowFigure& rf : figures_of(f)) keys.push_back(rf.figure.key);
  return keys;
}

namespace {

// The value of `key` under `rule` (nullopt when that rule or key has none, e.g. a channel without bursts).
std::optional<double> figure_value(const EvaluationResult& r, const std::string& rule, const std::string& key) {
  for (const RuleFigures& rf : r.rules) {
    if (rf.rule.version != rule) continue;
    for (const RowFigure& f : figures_of(rf.figures)) {
      if (f.figure.key == key) return f.figure.value;
    }
  }
  return std::nullopt;
}

std::string threshold_text(const Threshold& t) {
  std::string out = t.figure + " of " + t.rule;
  char buf[64];
  if (t.max) std::snprintf(buf, sizeof buf, " <= %g", *t.max), out += buf;
  if (t.min) std::snprintf(buf, sizeof buf, " >= %g", *t.min), out += buf;
  return out;
}

bool threshold_held(const Threshold& t, std::optional<double> v) {
  return v && (!t.max || *v <= *t.max) && (!t.min || *v >= *t.min);
}

// The row each figure key belongs to.
std::string row_of(const EvaluationResult& r, const std::string& key) {
  if (r.rules.empty()) return "";
  for (const RowFigure& f : figures_of(r.rules.front().figures)) {
    if (f.figure.key == key) return f.row;
  }
  return key.rfind("a07_", 0) == 0 ? "A07" : "";
}

}  // namespace

std::string evaluation_table(const EvaluationSpec& spec, const EvaluationResult& r) {
  std::string out = "evaluation " + spec.workload.name + " (" + spec.file + "): workload digest " + r.workload_digest +
                    ", " + std::to_string(r.events) + " events, " +
                    std::to_string(r.rules.empty() ? 0 : r.rules[0].figures.snapshots) + " snapshots every " +
                    std::to_string(spec.workload.snapshot_interval_s) + " simulated s\n\n| row | figure | key |";
  for (const RuleFigures& rf : r.rules) out += " " + rf.rule.version + " |";
  out += "\n|---|---|---|";
  for (size_t i = 0; i < r.rules.size(); ++i) out += "---|";
  out += "\n";
  std::vector<std::vector<RowFigure>> per_rule;
  for (const RuleFigures& rf : r.rules) per_rule.push_back(figures_of(rf.figures));
  for (size_t i = 0; !per_rule.empty() && i < per_rule[0].size(); ++i) {
    const RowFigure& first = per_rule[0][i];
    out += "| " + first.row + " | " + first.figure.label + " | " + first.figure.key + " |";
    for (const std::vector<RowFigure>& figures : per_rule) {
      out += " " + (i < figures.size() ? reports::figure_text(figures[i].figure) : std::string("-")) + " |";
    }
    out += "\n";
  }
  out += "\nrule digests:";
  for (const RuleFigures& rf : r.rules) out += " " + rf.rule.version + "=" + rf.rule.digest();
  out += "\n";
  for (const Threshold& t : spec.thresholds) {
    const std::optional<double> v = figure_value(r, t.rule, t.figure);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v.value_or(0));
    out += std::string(threshold_held(t, v) ? "PASS " : "FAIL ") + row_of(r, t.figure) + " " + threshold_text(t) +
           ": " + (v ? buf : "not measured") + "\n";
  }
  return out;
}

std::string evaluation_json(const EvaluationSpec& spec, const EvaluationResult& r) {
  using reports::Json;
  Json rules = Json::array();
  for (const RuleFigures& rf : r.rules) {
    Json figures = Json::array();
    for (const RowFigure& f : figures_of(rf.figures)) {
      figures.push_back(Json{{"row", f.row},
                             {"key", f.figure.key},
                             {"label", f.figure.label},
                             {"value", reports::json_double(f.figure.value)},
                             {"unit", f.figure.unit}});
    }
    rules.push_back(Json{{"version", rf.rule.version},
                         {"rule_digest", rf.rule.digest()},
                         {"snapshots", rf.figures.snapshots},
                         {"figures", std::move(figures)}});
  }
  Json thresholds = Json::array();
  for (const Threshold& t : spec.thresholds) {
    thresholds.push_back(
        Json{{"threshold", threshold_text(t)}, {"held", threshold_held(t, figure_value(r, t.rule, t.figure))}});
  }
  const Json doc{{"format", "faultline-evaluation/1"},   {"file", spec.file},  {"workload", spec.workload.name},
                 {"workload_digest", r.workload_digest}, {"events", r.events}, {"rules", std::move(rules)},
                 {"thresholds", std::move(thresholds)}};
  return reports::json_dump(doc) + "\n";
}

namespace {

using reports::ChartRecord;
using reports::ChartSeries;

// A01/A06: the share of each snapshot's list kept from the previous one, per rule.
ChartRecord overlap_chart(const EvaluationResult& r) {
  ChartRecord c{"overlap", "Top N kept from the previous snapshot", "simulated minutes", "share kept", false, {}};
  for (const RuleFigures& rf : r.rules) {
    ChartSeries s{rf.rule.version, {}, {}};
    const std::vector<ranking::props::PublishedSnapshot>& snaps = rf.board.snapshots;
    for (size_t i = 1; i < snaps.size(); ++i) {
      if (snaps[i - 1].entries.empty()) continue;
      std::set<std::string> before;
      for (const auto& e : snaps[i - 1].entries) before.insert(e.topic_id);
      size_t kept = 0;
      for (const auto& e : snaps[i].entries) kept += before.count(e.topic_id);
      s.x.push_back(static_cast<double>(snaps[i].at_s) / 60.0);
      s.y.push_back(static_cast<double>(kept) / static_cast<double>(before.size()));
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

// A02: the cumulative share of bursts listed within x seconds of their onset, per rule.
ChartRecord latency_cdf_chart(const EvaluationResult& r) {
  ChartRecord c{
      "a02-cdf", "Bursts listed within x seconds of their onset", "seconds since onset", "share of bursts", false, {}};
  std::map<std::string, int64_t> onset;
  for (const TopicTruth& t : r.truth) {
    if (t.kind == TruthKind::kBurst) onset[t.topic_id] = t.onset_s;
  }
  for (const RuleFigures& rf : r.rules) {
    std::map<std::string, int64_t> first;
    for (const auto& snap : rf.board.snapshots) {
      for (const auto& e : snap.entries) first.emplace(e.topic_id, snap.at_s);
    }
    std::vector<double> latencies;
    for (const auto& [topic, at] : onset) {
      if (auto it = first.find(topic); it != first.end()) latencies.push_back(std::max<double>(0, it->second - at));
    }
    std::sort(latencies.begin(), latencies.end());
    ChartSeries s{rf.rule.version, {0}, {0}};
    for (size_t i = 0; i < latencies.size(); ++i) {  // a step at each latency
      s.x.push_back(latencies[i]);
      s.y.push_back(s.y.back());
      s.x.push_back(latencies[i]);
      s.y.push_back(static_cast<double>(i + 1) / static_cast<double>(std::max<size_t>(onset.size(), 1)));
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

// The rank over time of up to three topics of `kind` under each rule (top_n + 1: off the list).
ChartRecord rank_chart(const EvaluationResult& r, TruthKind kind, const std::string& id, const std::string& title) {
  ChartRecord c{id, title, "simulated minutes", "rank (top N + 1: not listed)", true, {}};
  std::vector<std::string> topics;
  for (const TopicTruth& t : r.truth) {
    if (t.kind == kind && topics.size() < 3) topics.push_back(t.topic_id);
  }
  for (const RuleFigures& rf : r.rules) {
    for (const std::string& topic : topics) {
      ChartSeries s{topic + " (" + rf.rule.version + ")", {}, {}};
      for (const auto& snap : rf.board.snapshots) {
        double rank = rf.board.top_n + 1;
        for (const auto& e : snap.entries) {
          if (e.topic_id == topic) rank = e.rank;
        }
        s.x.push_back(static_cast<double>(snap.at_s) / 60.0);
        s.y.push_back(rank);
      }
      c.series.push_back(std::move(s));
    }
  }
  return c;
}

std::vector<ChartRecord> charts_of_row(const EvaluationResult& r, const std::string& row) {
  if (row == "A01" || row == "A06") return {overlap_chart(r)};
  if (row == "A02") return {latency_cdf_chart(r)};
  if (row == "A03") return {rank_chart(r, TruthKind::kEvergreen, "evergreen-rank", "Evergreen topics' rank over time")};
  if (row == "A07") return {rank_chart(r, TruthKind::kBurst, "burst-rank", "Bursts' rank over time")};
  return {};
}

}  // namespace

std::vector<reports::RunRecord> evaluation_records(const EvaluationSpec& spec, const EvaluationResult& r,
                                                   const std::string& command, const std::string& produced_at,
                                                   const std::string& commit) {
  StableHasher config;
  config += r.workload_digest;
  for (const RuleFigures& rf : r.rules) config += "|" + rf.rule.version + "=" + rf.rule.digest();
  for (const Threshold& t : spec.thresholds) config += "|" + threshold_text(t);
  std::vector<reports::RunRecord> out;
  for (const char* row : {"A01", "A02", "A03", "A04", "A05", "A06", "A07"}) {
    reports::RunRecord rec;
    rec.scenario = "ranking-evaluate-" + spec.workload.name + "-" + row;
    rec.scenario_file = spec.file;
    rec.system = "ranking";
    rec.matrix_rows = {row};
    rec.seeds = {spec.workload.seed};
    rec.config_digest = config.finish();
    rec.fingerprint = std::stoull(r.workload_digest, nullptr, 16);
    rec.produced_at = produced_at;
    rec.commit = commit;
    rec.command = command;
    for (const RuleFigures& rf : r.rules) {
      for (RowFigure& f : figures_of(rf.figures)) {
        if (f.row != row) continue;
        f.figure.rule = rf.rule.version;
        rec.figures.push_back(std::move(f.figure));
      }
    }
    for (const Threshold& t : spec.thresholds) {
      if (row_of(r, t.figure) != row) continue;
      const std::optional<double> v = figure_value(r, t.rule, t.figure);
      reports::AssertionRecord a;
      a.property = "threshold " + threshold_text(t);
      a.passed = threshold_held(t, v);
      a.assertion = "the evaluation file's acceptance threshold: " + threshold_text(t);
      a.checks = 1;
      a.seeds = 1;
      char buf[64];
      std::snprintf(buf, sizeof buf, "measured %g", v.value_or(0));
      a.evidence = {v ? buf : "not measured"};
      if (!a.passed) rec.failures_per_property[a.property] = 1;
      rec.assertions.push_back(std::move(a));
    }
    if (!rec.failures_per_property.empty()) rec.failing_seeds = rec.seeds;
    rec.charts = charts_of_row(r, row);
    for (const char* variant : {"spec", "hardened"}) {
      rec.variant = variant;
      out.push_back(rec);
    }
  }
  return out;
}

}  // namespace fl
