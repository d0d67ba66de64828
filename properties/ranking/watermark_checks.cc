// The §6.3 checkers (004:L146-155): watermarks (RANK-7), idle recovery (RANK-8), the window state
// machine (RANK-9) and dedup retention and purge order (RANK-6). They read the keyed log's records
// and append times, the SQL server's commit log (what each transaction wrote, in order), the rows
// read back and the fault log; the seed's constants come from the scenario's params.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "properties/common/fault_budget.h"
#include "properties/common/judge.h"
#include "properties/ranking/checks.h"

namespace fl::ranking::props {
namespace {

constexpr int64_t kNone = -1;  // "no watermark yet"

std::string field(const std::map<std::string, std::string>& e, const std::string& k) {
  auto it = e.find(k);
  return it == e.end() ? std::string() : it->second;
}

int64_t num(const std::string& s) { return s.empty() ? 0 : std::stoll(s); }

// Whether `s` is an INSERT whose text names `table (`. Every checker tests every committed
// statement, so this allocates nothing.
bool writes(const SqlStatementObs& s, const char* table) {
  const std::string_view sql(s.sql), name(table);
  if (!sql.starts_with("INSERT")) return false;
  for (size_t at = sql.find(name); at != std::string_view::npos; at = sql.find(name, at + 1)) {
    if (sql.substr(at + name.size(), 2) == " (") return true;
  }
  return false;
}

// One keyed record as the judges need it.
struct Keyed {
  int64_t offset = 0, event_ms = 0, append_us = 0, source_offset = 0;
  std::string source_key, event_id, scope, topic;
};

// Keyed records per keyed partition, in offset order.
std::map<int32_t, std::vector<Keyed>> keyed_by_partition(const RankingRun& run) {
  std::map<int32_t, std::vector<Keyed>> out;
  for (const LogRecordObs& r : run.keyed) {
    const auto& e = r.fields();
    out[r.partition].push_back(Keyed{r.offset, num(field(e, "eventTime")), r.append_us, num(field(e, "sourceOffset")),
                                     field(e, "source") + "|" + field(e, "sourcePartition"), field(e, "eventId"),
                                     field(e, "scopeId"), field(e, "topicId")});
  }
  for (auto& [p, v] : out)
    std::sort(v.begin(), v.end(), [](const Keyed& a, const Keyed& b) { return a.offset < b.offset; });
  return out;
}

// The records of keyed partition `kp` (none: empty), by reference: a conditional expression
// `count ? at : std::vector<Keyed>{}` would copy the whole partition's records at every use.
const std::vector<Keyed>& records_of(const std::map<int32_t, std::vector<Keyed>>& keyed, int32_t kp) {
  static const std::vector<Keyed> kNoRecords;
  const auto it = keyed.find(kp);
  return it == keyed.end() ? kNoRecords : it->second;
}

// The highest watermark the records below `next_offset` can justify (004:L148): no window
// watermark exceeds the largest event time the partition had read, less the out-of-orderness.
int64_t watermark_bound(const std::vector<Keyed>& recs, int64_t next_offset, int64_t ooo) {
  int64_t m = kNone;
  for (const Keyed& k : recs) {
    if (k.offset < next_offset) m = std::max(m, k.event_ms - ooo);
  }
  return m;
}

int32_t partition_of_cut(const std::string& cut) {  // "k<p>@<next>/g<gen>"
  return static_cast<int32_t>(num(cut.substr(1, cut.find('@') - 1)));
}

// (keyed partition, scope, window type, window start): one window's identity.
using WindowKey = std::tuple<int32_t, std::string, std::string, int64_t>;

WindowKey window_of_version(int32_t kp, const std::string& aggregate_key) {  // topic#scope#wt#start#metric
  std::vector<std::string> f;
  size_t from = 0;
  for (size_t at; (at = aggregate_key.find('#', from)) != std::string::npos; from = at + 1) {
    f.push_back(aggregate_key.substr(from, at - from));
  }
  f.push_back(aggregate_key.substr(from));
  return {kp, f.size() > 1 ? f[1] : "", f.size() > 2 ? f[2] : "", f.size() > 3 ? num(f[3]) : 0};
}

int64_t window_size(const RankingRun& run, const std::string& window_type) {
  auto it = run.config.windows.find(window_type);
  return it == run.config.windows.end() ? 0 : it->second;
}

int rank_of(const std::string& state) {
  static const std::map<std::string, int> kRank = {{"OPEN", 0}, {"CLOSED", 1}, {"FINAL", 2}, {"PURGED", 3}};
  auto it = kRank.find(state);
  return it == kRank.end() ? -1 : it->second;
}

// A window_state statement as written: (partition, scope, type, start, end, state, watermark, and
// for PURGED the evidence).
struct WindowWrite {
  WindowKey key;
  int64_t end = 0;
  std::string state;
  int64_t watermark = kNone;
  std::string offsets, versions, checkpoint, reconciliation;
};

WindowWrite window_write(const SqlStatementObs& s) {
  const auto& p = s.params;
  WindowWrite w{{static_cast<int32_t>(num(p[0])), p[1], p[2], num(p[3])}, num(p[4]), "", kNone, "", "", "", ""};
  if (s.sql.find("'PURGED'") != std::string::npos && p.size() >= 10) {
    w.state = "PURGED";
    w.watermark = num(p[5]);
    w.offsets = p[6];
    w.versions = p[7];
    w.checkpoint = p[8];
    w.reconciliation = p[9];
  } else if (p.size() >= 7) {
    w.state = p[5];
    w.watermark = num(p[6]);
  }
  return w;
}

std::string describe(const WindowKey& w) {
  return "k" + std::to_string(std::get<0>(w)) + " " + std::get<1>(w) + " " + std::get<2>(w) + "@" +
         std::to_string(std::get<3>(w));
}

// Why an idle mark `early_us` early by the append times is the clocks', or nullopt. The worker
// measures a partition's silence on its own clock (from when it applied the record or took the
// partition over) and the judge places the record by the broker's append stamp (the log node's
// clock): a mark is early by at most how far the log's clock was ahead of world time plus how far
// the committer's clock ran fast between the append and the mark. 0 ppm and 0 ms move neither.
std::optional<std::string> clock_explains(const fl::props::FaultBudget& budget, const std::string& client,
                                          int64_t appended_us, int64_t mark_us, int64_t early_us) {
  const fl::props::ClockReach log = budget.clock("log", 0, mark_us);
  const fl::props::ClockReach own =
      budget.clock(client, std::max<int64_t>(0, appended_us - log.max_abs_offset_us), mark_us);
  if (early_us > log.max_abs_offset_us + own.error_us) return std::nullopt;
  return "log clock off by up to " + std::to_string(log.max_abs_offset_us) + " us (" + log.what + "), " + client +
         "'s by up to " + std::to_string(own.error_us) + " us (" + own.what + ")";
}

}  // namespace

std::set<std::string> late_events(const RankingRun& run) {
  std::set<std::string> late, applied;
  if (!run.wm.params.enabled) return late;
  std::set<std::tuple<int32_t, int64_t, std::string>> side;
  for (const SideOutputRow& r : run.wm.side) side.insert({r.partition, r.offset, r.window_type});
  for (const LogRecordObs& r : run.keyed) {
    const auto& e = r.fields();
    for (const auto& [wt, size] : run.config.windows) {
      const std::string key = field(e, "eventId") + "#" + field(e, "scopeId") + "#" + wt;
      (side.count({r.partition, r.offset, wt}) ? late : applied).insert(key);
    }
  }
  for (const std::string& k : applied) late.erase(k);
  return late;
}

// RANK-7 (004:L148-151): each keyed partition's window watermark, as its transactions record it,
// never moves back and never exceeds what its records justify; a partition is marked idle only
// after idle_partition_timeout without a record; while it is idle its source is incomplete.
Verdict check_watermark(const RankingRun& run) {
  fl::props::Judge j("rank-watermark", {"RANK-7"},
                     "per keyed partition, the watermarks its committed transactions record never decrease "
                     "and never exceed max event time read - out_of_orderness; an idle mark comes at least "
                     "idle_partition_timeout after the partition's last record; an idle partition's source "
                     "is flagged incomplete");
  const auto keyed = keyed_by_partition(run);
  const WatermarkParams& prm = run.wm.params;
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  std::map<int32_t, int64_t> last;
  std::map<std::pair<int32_t, std::string>, int64_t> complete;
  std::map<std::tuple<int32_t, std::string, std::string>, bool> idle_open;  // (kp, source, idle_start)
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    int32_t cut_kp = -1;
    int64_t cut_next = 0;
    std::vector<std::pair<int32_t, int64_t>> marks, versions;
    for (const SqlStatementObs& s : c.statements) {
      if (writes(s, "source_offset_cut") && s.params.size() >= 3) {
        cut_kp = static_cast<int32_t>(num(s.params[1]));
        cut_next = num(s.params[2]);
      } else if (writes(s, "topic_window_metric_version") && s.params.size() >= 9) {
        versions.emplace_back(partition_of_cut(s.params[8]), num(s.params[7]));
      } else if (writes(s, "window_state")) {
        const WindowWrite w = window_write(s);
        marks.emplace_back(std::get<0>(w.key), w.watermark);
      } else if (writes(s, "late_side_output") && s.params.size() >= 8) {
        marks.emplace_back(static_cast<int32_t>(num(s.params[0])), num(s.params[7]));
      } else if (writes(s, "source_status") && s.params.size() >= 3) {
        complete[{static_cast<int32_t>(num(s.params[0])), s.params[1]}] = num(s.params[2]);
      } else if (writes(s, "partition_idle") && s.params.size() >= 12) {
        const int32_t kp = static_cast<int32_t>(num(s.params[0]));
        const std::string source = s.params[1] + "|" + s.params[2];
        bool& open = idle_open[{kp, source, s.params[3]}];
        const bool was_open = open;
        open = s.params[8] == "-1";
        if (num(s.params[10]) != kNone) marks.emplace_back(kp, num(s.params[10]));
        if (was_open || !open || s.params[6] != "-1" || cut_kp != kp) continue;
        // Newly idle: its last record below the cut was appended at least the timeout before.
        int64_t appended = -1;
        for (const Keyed& k : records_of(keyed, kp)) {
          if (k.offset < cut_next && k.source_key == source) appended = k.append_us;
        }
        // One check: an early mark is excused when the append clock explains it, else it fails.
        const bool early = appended >= 0 && appended + prm.idle_timeout_us > c.time_us;
        j.expect_or_excuse(
            !early,
            early ? clock_explains(budget, c.client, appended, c.time_us, appended + prm.idle_timeout_us - c.time_us)
                  : std::nullopt,
            "idle mark of " + source + " in k" + std::to_string(kp) + " early by the append clock", [&] {
              return c.client + " marked " + source + " idle in k" + std::to_string(kp) + " at " +
                     std::to_string(c.time_us) + " us, its last record was appended at " + std::to_string(appended) +
                     " us (timeout " + std::to_string(prm.idle_timeout_us) + ")";
            });
      }
    }
    marks.insert(marks.end(), versions.begin(), versions.end());  // a flush's versions carry its final watermark
    std::set<int32_t> reported;                                   // one finding per keyed partition and transaction
    for (const auto& mark : marks) {
      const int32_t kp = mark.first;
      const int64_t wm = mark.second;
      if (wm == kNone) continue;
      const auto emplaced = last.try_emplace(kp, wm);
      const auto it = emplaced.first;
      j.expect(!(!emplaced.second && wm < it->second && reported.insert(kp).second), [&] {
        return c.client + " recorded watermark " + std::to_string(wm) + " for k" + std::to_string(kp) + " after " +
               std::to_string(it->second) + " (moved back by " + std::to_string(it->second - wm) + " ms)";
      });
      it->second = std::max(it->second, wm);
      if (kp != cut_kp) continue;
      const int64_t bound = watermark_bound(records_of(keyed, kp), cut_next, prm.out_of_orderness_ms);
      j.expect(!(wm > bound && reported.insert(kp).second), [&] {
        return c.client + " recorded watermark " + std::to_string(wm) + " for k" + std::to_string(kp) +
               " having read offsets below " + std::to_string(cut_next) + ", which justify " + std::to_string(bound);
      });
    }
    for (const auto& kv_ : idle_open) {
      if (!kv_.second) continue;
      const int32_t kp = std::get<0>(kv_.first);
      const std::string& source = std::get<1>(kv_.first);
      const std::string& start = std::get<2>(kv_.first);
      auto flag = complete.find({kp, source.substr(0, source.rfind('|'))});
      j.expect(flag != complete.end() && flag->second == 0, [&] {
        return "k" + std::to_string(kp) + ": " + source + " idle since " + start +
               " but its source is not flagged incomplete";
      });
    }
  }
  return j.v;
}

// RANK-8 (004:L152): a returning partition is CATCHING_UP with its idle end and resume offset
// recorded; it rejoins only when its own watermark reached the window watermark and its offsets
// continue, and the rejoin records how many of its records went to the late side output.
Verdict check_idle_recovery(const RankingRun& run) {
  fl::props::Judge j("rank-idle-recovery", {"RANK-8"},
                     "every idle period that ended records idle end, resume offset and the rejoin; at the "
                     "rejoin the partition's watermark is at least the recorded window watermark, its "
                     "source offset is beyond every earlier one, and late_count equals its side-output rows "
                     "between resume and rejoin");
  const auto keyed = keyed_by_partition(run);
  std::map<std::pair<int32_t, int64_t>, int64_t> side_count;  // (kp, offset) -> side-output rows
  for (const SideOutputRow& r : run.wm.side) ++side_count[{r.partition, r.offset}];
  for (const IdleRow& row : run.wm.idle) {
    const std::string source = row.source + "|" + std::to_string(row.source_partition);
    const std::string what =
        "k" + std::to_string(row.partition) + " " + source + " idle at " + std::to_string(row.idle_start_us);
    const std::vector<Keyed>& recs = records_of(keyed, row.partition);
    if (row.idle_end_us == -1) {
      j.expect(row.rejoin_us == -1, [&] { return what + ": rejoined without a recorded idle end"; });
      continue;
    }
    // (Idle start and end are read on the workers' clocks, which faults skew: only their presence is judged.)
    j.expect(row.resume_offset >= 0, [&] { return what + ": resumed without a recorded resume offset"; });
    if (row.resume_offset < 0) continue;
    if (row.rejoin_us == -1) continue;  // still CATCHING_UP at the end
    int64_t late = 0, max_event = kNone, max_source_offset = -1;
    const Keyed* at = nullptr;
    for (const Keyed& k : recs) {
      if (k.source_key != source || k.offset > row.rejoin_offset) continue;
      if (k.offset == row.rejoin_offset) {
        at = &k;
      } else {
        max_source_offset = std::max(max_source_offset, k.source_offset);
        if (k.offset >= row.resume_offset) late += side_count[{row.partition, k.offset}];
      }
      max_event = std::max(max_event, k.event_ms);
    }
    const bool discontinuous = at == nullptr || at->source_offset <= max_source_offset;
    const bool behind =
        row.rejoin_watermark != kNone && max_event - run.wm.params.out_of_orderness_ms < row.rejoin_watermark;
    j.expect(!discontinuous && !behind && late == row.late_count, [&] {
      if (discontinuous) {
        return what + ": rejoined at offset " + std::to_string(row.rejoin_offset) +
               " without an offset beyond the earlier ones (continuity)";
      }
      if (behind) {
        return what + ": rejoined with partition watermark " +
               std::to_string(max_event - run.wm.params.out_of_orderness_ms) + " below the window watermark " +
               std::to_string(row.rejoin_watermark);
      }
      return what + ": records late_count " + std::to_string(row.late_count) + ", its side-output rows are " +
             std::to_string(late);
    });
  }
  return j.v;
}

// RANK-9 (004:L153-154): window states only move forward, each at the watermark it needs; a FINAL
// window's aggregate is never written again; a record goes to the late side output only when its
// window is FINAL (or PURGED, or past its lateness when first seen).
Verdict check_window_lifecycle(const RankingRun& run) {
  fl::props::Judge j("rank-window-lifecycle", {"RANK-9"},
                     "window states move OPEN -> CLOSED -> FINAL -> PURGED only, CLOSED at watermark >= end, "
                     "FINAL at >= end + allowed lateness; no version of a window's key is committed after "
                     "the transaction that made it FINAL; every side-output record's window was FINAL");
  const int64_t lateness = run.wm.params.allowed_lateness_ms;
  std::map<WindowKey, std::string> state;
  std::map<WindowKey, size_t> final_at;
  for (size_t i = 0; i < run.commits.size(); ++i) {
    const SqlCommit& c = run.commits[i];
    if (!c.ok) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (writes(s, "window_state")) {
        const WindowWrite w = window_write(s);
        std::string& now = state[w.key];
        const bool at_threshold = w.state == "OPEN"     ? (w.watermark == kNone || w.watermark < w.end)
                                  : w.state == "CLOSED" ? w.watermark >= w.end
                                                        : w.watermark >= w.end + lateness;
        const bool backwards = rank_of(w.state) < 0 || (!now.empty() && rank_of(w.state) < rank_of(now));
        j.expect(!backwards && at_threshold, [&] {
          if (backwards) return c.client + " moved window " + describe(w.key) + " from " + now + " to " + w.state;
          return c.client + " made window " + describe(w.key) + " " + w.state + " at watermark " +
                 std::to_string(w.watermark) + " (end " + std::to_string(w.end) + ")";
        });
        if (now.empty() || rank_of(w.state) > rank_of(now)) now = w.state;
        if (rank_of(now) >= 2) final_at.try_emplace(w.key, i);
      } else if (writes(s, "topic_window_metric_version") && s.params.size() >= 9) {
        const WindowKey w = window_of_version(partition_of_cut(s.params[8]), s.params[0]);
        auto f = final_at.find(w);
        j.expect(!(f != final_at.end() && f->second < i), [&] {
          return c.client + " wrote version g" + s.params[1] + "/v" + s.params[2] + " of " + s.params[0] +
                 " after window " + describe(w) + " was FINAL";
        });
      } else if (writes(s, "late_side_output") && s.params.size() >= 8) {
        const WindowKey w{static_cast<int32_t>(num(s.params[0])), s.params[4], s.params[2], num(s.params[5])};
        const int64_t end = std::get<3>(w) + window_size(run, s.params[2]);
        const bool final = final_at.count(w) > 0;
        j.expect(!(!final && (state.count(w) || num(s.params[7]) < end + lateness)), [&] {
          return c.client + " sent k" + s.params[0] + "@" + s.params[1] + " to the late side output while window " +
                 describe(w) + " was " + (state.count(w) ? state[w] : "not past its lateness") + " (watermark " +
                 s.params[7] + ")";
        });
      }
    }
  }
  return j.v;
}

// RANK-6 (004:L155): a window's dedup and window state go only after it is FINAL (an earlier
// transaction), its archive evidence was saved (an earlier transaction) and reconciled, at a
// watermark past end + retention, retention being the largest of allowed lateness, replay range
// and redelivery window; its evidence names exactly its keys' final versions; nothing is written
// to it afterwards.
Verdict check_dedup_purge(const RankingRun& run) {
  fl::props::Judge j("rank-dedup-purge", {"RANK-6"},
                     "every PURGED window was FINAL and archived in earlier transactions, reconciled 'ok', "
                     "purged at watermark >= end + max(lateness, replay range, redelivery window), with "
                     "evidence listing exactly its keys' final heads; no version of it after the purge");
  std::map<WindowKey, size_t> final_at, purged_at;
  std::map<std::pair<int32_t, std::string>, size_t> archived_at;
  std::map<std::pair<std::string, std::string>, int32_t> kp_of;  // (topic, scope) -> keyed partition
  for (const LogRecordObs& r : run.keyed) {
    const auto& e = r.fields();
    kp_of[{field(e, "topicId"), field(e, "scopeId")}] = r.partition;
  }
  // The DB's heads by the window they belong to: "aggregate_key/gG/vV".
  std::map<WindowKey, std::set<std::string>> heads_of;
  const std::set<std::string> no_heads;
  for (const HeadRow& h : run.heads) {
    auto k = kp_of.find({h.topic_id, h.scope_id});
    if (k == kp_of.end()) continue;
    heads_of[{k->second, h.scope_id, h.window_type, h.window_start}].insert(
        h.aggregate_key + "/g" + std::to_string(h.generation) + "/v" + std::to_string(h.version));
  }
  for (size_t i = 0; i < run.commits.size(); ++i) {
    const SqlCommit& c = run.commits[i];
    if (!c.ok) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (writes(s, "window_archive") && s.params.size() >= 2) {
        archived_at.try_emplace({static_cast<int32_t>(num(s.params[0])), s.params[1]}, i);
      } else if (writes(s, "topic_window_metric_version") && s.params.size() >= 9) {
        const WindowKey w = window_of_version(partition_of_cut(s.params[8]), s.params[0]);
        auto p = purged_at.find(w);
        j.expect(!(p != purged_at.end() && p->second < i),
                 [&] { return c.client + " wrote " + s.params[0] + " after window " + describe(w) + " was purged"; });
      } else if (writes(s, "window_state")) {
        const WindowWrite w = window_write(s);
        if (rank_of(w.state) == 2) final_at.try_emplace(w.key, i);
        if (w.state != "PURGED") continue;
        purged_at.try_emplace(w.key, i);
        const auto& [kp, scope, wt, start] = w.key;
        const std::string id = scope + "#" + wt + "#" + std::to_string(start) + "#" + std::to_string(w.end);
        auto f = final_at.find(w.key);
        auto a = archived_at.find({kp, id});
        const bool unprepared = f == final_at.end() || f->second >= i || a == archived_at.end() || a->second >= i;
        const bool unevidenced =
            w.reconciliation != "ok" || w.offsets.empty() || w.checkpoint.empty() || w.versions.empty();
        const bool early = w.watermark < w.end + run.wm.params.retention_ms();
        j.expect(!unprepared && !unevidenced && !early, [&] {
          if (unprepared)
            return c.client + " purged window " + describe(w.key) + " without its FINAL and archive committed before";
          if (unevidenced)
            return c.client + " purged window " + describe(w.key) + " with evidence '" + w.reconciliation + "'";
          return c.client + " purged window " + describe(w.key) + " at watermark " + std::to_string(w.watermark) +
                 ", before end + retention " + std::to_string(w.end + run.wm.params.retention_ms());
        });
        std::set<std::string> claimed;
        for (size_t from = 0, at; from <= w.versions.size(); from = at + 1) {
          at = w.versions.find(',', from);
          if (at == std::string::npos) at = w.versions.size();
          if (at > from) claimed.insert(w.versions.substr(from, at - from));
        }
        auto found = heads_of.find(w.key);
        const std::set<std::string>& heads = found == heads_of.end() ? no_heads : found->second;
        j.expect(!(run.db_read && claimed != heads), [&] {
          return "window " + describe(w.key) + " purged with final versions " + w.versions + ", its heads are " +
                 std::to_string(heads.size()) + " others";
        });
      }
    }
  }
  return j.v;
}

}  // namespace fl::ranking::props
