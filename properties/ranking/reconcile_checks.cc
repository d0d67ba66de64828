// RANK-38 (004:L391-404): the three reconciliation layers compare only under one frozen context,
// and what they conclude is what the world shows. Reads the DB rows read back (runs, snapshots,
// manifests, versions, the reports, the candidate-term queue, the late side output) and the two
// logs' records, never what the reconciler says about itself beyond its report.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <tuple>
#include <set>
#include <string>
#include <vector>

#include "properties/ranking/checks.h"

namespace fl::ranking::props {
namespace {

// "k<partition>@<next_offset>/g<generation>" -> (partition, next_offset); nullopt if malformed.
std::optional<std::pair<int32_t, int64_t>> cut_of(const std::string& ref) {
  const size_t at = ref.find('@'), slash = ref.find("/g");
  if (ref.size() < 2 || ref[0] != 'k' || at == std::string::npos || slash == std::string::npos || slash < at) {
    return std::nullopt;
  }
  char* end = nullptr;
  const long long p = std::strtoll(ref.c_str() + 1, &end, 10);
  if (end != ref.c_str() + at) return std::nullopt;
  const long long n = std::strtoll(ref.c_str() + at + 1, &end, 10);
  if (end != ref.c_str() + slash) return std::nullopt;
  return std::make_pair(static_cast<int32_t>(p), static_cast<int64_t>(n));
}

int64_t number(const std::map<std::string, std::string>& f, const char* name) {
  auto it = f.find(name);
  return it == f.end() ? -1 : std::strtoll(it->second.c_str(), nullptr, 10);
}
std::string field(const std::map<std::string, std::string>& f, const char* name) {
  auto it = f.find(name);
  return it == f.end() ? "" : it->second;
}

// The logs by coordinates.
struct Logs {
  std::map<int32_t, std::map<int64_t, const LogRecordObs*>> keyed;
  std::map<std::pair<int64_t, int64_t>, const LogRecordObs*> stable;
  std::set<std::tuple<int32_t, int64_t, std::string>> late;  // (keyed partition, offset, window type)
  std::set<std::pair<int64_t, int64_t>> waiting;             // candidate terms (stable partition, offset)
};

// How far the reconciler read each log (LayerReportRow::read_ends): it saw every record below these
// offsets and none at or above them; a partition not named was not read.
struct ReadEnds {
  std::map<int64_t, int64_t> keyed, stable;
  int64_t keyed_end(int64_t p) const { return keyed.count(p) ? keyed.at(p) : 0; }
  int64_t stable_end(int64_t p) const { return stable.count(p) ? stable.at(p) : 0; }
};

ReadEnds parse_ends(const std::string& text) {
  ReadEnds e;
  for (const std::string& part : split(text, ';')) {
    for (const std::string& item : split(part, ',')) {
      const size_t colon = item.find(':');
      if (item.size() < 2 || colon == std::string::npos) continue;
      const int64_t p = std::strtoll(item.c_str() + 1, nullptr, 10), end = std::strtoll(item.c_str() + colon + 1, nullptr, 10);
      (item[0] == 'k' ? e.keyed : e.stable)[p] = end;
    }
  }
  return e;
}

Logs index(const RankingRun& run) {
  Logs l;
  for (const LogRecordObs& r : run.keyed) l.keyed[r.partition][r.offset] = &r;
  for (const LogRecordObs& r : run.stable) l.stable[{r.partition, r.offset}] = &r;
  for (const SideOutputRow& s : run.wm.side) l.late.insert({s.partition, s.offset, s.window_type});
  for (const auto& [p, o] : run.candidate_terms) l.waiting.insert({p, o});
  return l;
}

// Layer 1's truth for `scope` under `vector`, in the logs as far as the reconciler read them: ""
// when continuous, else the first hole found.
std::string source_hole(const RankingRun& run, const Logs& l, const ReadEnds& read, const std::string& scope,
                        const std::string& vector) {
  std::map<int64_t, int64_t> reached;  // source partition -> last offset inside the cut
  for (const std::string& ref : split(vector, ',')) {
    auto c = cut_of(ref);
    if (!c) return "malformed cut " + ref;
    auto part = l.keyed.find(c->first);
    for (int64_t off = 0; off < c->second; ++off) {
      const LogRecordObs* r = nullptr;
      if (part != l.keyed.end() && part->second.count(off) && off < read.keyed_end(c->first)) r = part->second.at(off);
      if (r == nullptr) return "keyed " + ref + " has no offset " + std::to_string(off);
      const auto& f = r->fields();
      const int64_t sp = number(f, "sourcePartition"), so = number(f, "sourceOffset");
      reached[sp] = std::max(reached.count(sp) ? reached[sp] : -1, so);
      if (field(f, "scopeId") != scope) continue;
      auto orig = l.stable.find({sp, so});
      if (orig == l.stable.end() || so >= read.stable_end(sp) ||
          field(orig->second->fields(), "eventId") != field(f, "eventId")) {
        return "copy at keyed " + std::to_string(c->first) + "@" + std::to_string(off) + " has no original";
      }
    }
  }
  std::set<std::pair<int64_t, int64_t>> copied;
  for (const LogRecordObs& r : run.keyed) {
    if (r.offset >= read.keyed_end(r.partition) || field(r.fields(), "scopeId") != scope) continue;
    copied.insert({number(r.fields(), "sourcePartition"), number(r.fields(), "sourceOffset")});
  }
  for (const auto& [sp, last] : reached) {
    const int64_t below = std::min(last, read.stable_end(sp));
    for (auto it = l.stable.lower_bound({sp, 0}); it != l.stable.end() && it->first.first == sp && it->first.second < below;
         ++it) {
      if (copied.count(it->first) || l.waiting.count(it->first)) continue;
      const std::vector<std::string> derived = model::scopes_of(it->second->fields(), run.config);
      if (std::find(derived.begin(), derived.end(), scope) == derived.end()) continue;
      return "original " + std::to_string(sp) + "@" + std::to_string(it->first.second) + " has no copy of the scope";
    }
  }
  return "";
}

// The value of full key `ak` from the keyed records of `partition` below `next_offset` (and below
// where the reconciler's read ended): distinct
// events (source, event_id), without the copies the late side output took for its window.
model::Value value_below(const RankingRun& run, const Logs& l, const ReadEnds& read, const std::string& ak,
                         int32_t partition, int64_t next_offset) {
  const std::vector<std::string> k = split(ak, '#');
  model::Value v;
  if (k.size() != 5) return v;
  auto size = run.config.windows.find(k[2]);
  auto part = l.keyed.find(partition);
  if (size == run.config.windows.end() || part == l.keyed.end()) return v;
  std::set<std::string> events, contents;
  std::map<std::string, int64_t> actors;
  bool by_content = false;
  for (const auto& [off, r] : part->second) {
    if (off >= next_offset || off >= read.keyed_end(partition)) break;
    const auto& f = r->fields();
    if (field(f, "topicId") != k[0] || field(f, "scopeId") != k[1] || l.late.count({partition, off, k[2]})) continue;
    const int64_t t = number(f, "eventTime"), w = size->second;
    const int64_t start = t >= 0 ? t / w * w : -((-t + w - 1) / w) * w;
    if (std::to_string(start) != k[3]) continue;
    for (const auto& [metric, content] : model::metrics_of(field(f, "eventType"))) {
      if (metric != k[4]) continue;
      by_content = content;
      if (!events.insert(field(f, "source") + ":" + field(f, "eventId")).second) continue;
      ++actors[field(f, "actorKey")];
      contents.insert(field(f, "contentOrQueryId"));
    }
  }
  v.raw_count = static_cast<int64_t>(events.size());
  v.effective = static_cast<int64_t>(by_content ? contents.size() : actors.size());
  for (const auto& [actor, n] : actors) v.suspicious += n > run.config.suspicious_repeats ? 1 : 0;
  v.risk_adjusted = v.effective - v.suspicious;
  return v;
}

// Layer 2's truth: "" when every sampled version holds what its cut's records give, else the first
// that does not; an item outside the run's manifest is reported as such.
std::string aggregate_difference(const RankingRun& run, const Logs& l, const LayerReportRow& lr) {
  std::set<std::string> manifest;  // "ak,g,v,cut" of every item of the run's manifest
  for (const ManifestRow& m : run.board.manifest) {
    if (m.run_id != lr.run_id) continue;
    for (const std::string& item : split(m.items, ';')) {
      const std::vector<std::string> f = split(item, ',');
      if (f.size() == 5) manifest.insert(f[0] + "," + f[1] + "," + f[2] + "," + f[4]);
    }
  }
  std::map<std::string, const VersionRow*> versions;
  for (const VersionRow& r : run.versions) {
    versions[r.aggregate_key + "," + std::to_string(r.generation) + "," + std::to_string(r.version)] = &r;
  }
  for (const std::string& item : split(lr.sample, ';')) {
    if (!manifest.count(item)) return "sampled " + item + " is not in the manifest of " + lr.run_id;
    const std::vector<std::string> f = split(item, ',');
    auto c = cut_of(f[3]);
    auto version = versions.find(f[0] + "," + f[1] + "," + f[2]);
    if (!c || version == versions.end()) return "sampled " + item + " names no version";
    const model::Value want = value_below(run, l, parse_ends(lr.read_ends), f[0], c->first, c->second);
    if (!(version->second->value == want)) {
      return item + " holds " + version->second->value.describe() + ", its cut's records give " + want.describe();
    }
  }
  return "";
}

}  // namespace

void check_layer_reports(const RankingRun& run, const std::map<std::string, std::string>& context, Verdict& v) {
  const BoardObs& b = run.board;
  if (b.layer_reports.empty()) return;
  std::map<std::string, const RunRow*> runs;
  for (const RunRow& r : b.runs) runs[r.run_id] = &r;
  std::map<std::string, std::string> run_of;
  for (const SnapshotRow& s : b.snapshots) run_of[s.snapshot_id] = s.run_id;
  const Logs l = index(run);
  for (const LayerReportRow& lr : b.layer_reports) {
    const std::string what = "layer-" + std::to_string(lr.layer) + " reconciliation of " + lr.scope_id + " (" +
                             lr.snapshot_id + ")";
    auto ctx = context.find(lr.snapshot_id);
    auto r = runs.find(lr.run_id);
    ++v.checks;
    if (ctx == context.end() || r == runs.end() || run_of[lr.snapshot_id] != lr.run_id ||
        lr.context_a != ctx->second + "|" + r->second->vector) {
      fail_verdict(v, what + " stored a context that is not its snapshot's and run's own");
      continue;
    }
    if (lr.status == "REFUSED") continue;
    ++v.checks;
    if (lr.context_b != lr.context_a) {
      fail_verdict(v, what + " output " + lr.status + " comparing [" + lr.context_a + "] with [" + lr.context_b + "]");
      continue;
    }
    ++v.checks;
    if (lr.layer == 1 && (lr.status == "CONTINUOUS" || lr.status == "GAP")) {
      const std::string hole = source_hole(run, l, parse_ends(lr.read_ends), lr.scope_id, r->second->vector);
      if (hole.empty() != (lr.status == "CONTINUOUS")) {
        fail_verdict(v, what + " concluded " + lr.status + (hole.empty() ? "; the logs show no hole" : "; " + hole));
      }
    } else if (lr.layer == 2 && (lr.status == "MATCH" || lr.status == "DIFF")) {
      const std::string diff = aggregate_difference(run, l, lr);
      if (diff.empty() != (lr.status == "MATCH")) {
        fail_verdict(v, what + " concluded " + lr.status + (diff.empty() ? "; every sampled version recomputes" : "; " + diff));
      }
    } else {
      fail_verdict(v, what + " has status " + lr.status);
    }
  }
}

// RANK-38 (004:L392-404): a reconciliation reports a comparison (MATCH or DIFF) only when the
// frozen contexts of both sides, recomputed from the snapshot and run rows, are identical; every
// report stores the real context of each side; a comparison across contexts is REFUSED. Layers 1
// and 2 (check_layer_reports) also conclude what the logs and the versions show.
Verdict check_reconciliation(const RankingRun& run) {
  Verdict v = passing_verdict("rank-reconciliation", {"RANK-38"},
                              "every reconciliation report stores the true frozen context (scope, input watermark, "
                              "partition-set digests, manifest digest, rule and epoch, run) of both snapshots it names, "
                              "and outputs a comparison only when the two are identical; otherwise it is REFUSED; layer 1 "
                              "(source offsets) and layer 2 (sampled versions recomputed) conclude what the logs show");
  const BoardObs& b = run.board;
  std::map<std::string, const RunRow*> runs;
  for (const RunRow& r : b.runs) runs[r.run_id] = &r;
  std::map<std::string, std::string> context;  // snapshot -> its frozen context
  for (const SnapshotRow& s : b.snapshots) {
    auto r = runs.find(s.run_id);
    if (r == runs.end()) continue;
    const RunRow& x = *r->second;
    context[s.snapshot_id] = s.scope_id + "|" + std::to_string(x.watermark) + "|" + x.expected_digest + "|" +
                             x.result_digest + "|" + x.manifest_digest + "|" + x.rule_version + "|" +
                             std::to_string(x.rule_epoch) + "|" + x.run_id;
  }
  for (const ReconciliationRow& rc : b.reconciliations) {
    const std::string& a = context[rc.snapshot_a];
    const std::string& c = context[rc.snapshot_b];
    ++v.checks;
    if (a.empty() || c.empty() || rc.context_a != a || rc.context_b != c) {
      fail_verdict(v, "reconciliation of " + rc.scope_id + " (" + rc.snapshot_a + " vs " + rc.snapshot_b +
                          ") stored contexts that are not the snapshots' own");
      continue;
    }
    ++v.checks;
    if ((rc.status == "MATCH" || rc.status == "DIFF") && a != c) {
      fail_verdict(v, "reconciliation of " + rc.scope_id + " output " + rc.status + " comparing " + rc.snapshot_a +
                          " [" + a + "] with " + rc.snapshot_b + " [" + c + "]");
    }
  }
  check_layer_reports(run, context, v);
  return v;
}

}  // namespace fl::ranking::props
