// RANK-38 (004:L391-404): the three reconciliation layers compare only under one frozen context,
// and what they conclude is what the world shows. Reads the DB rows read back (runs, snapshots,
// manifests, versions, the reports, the candidate-term queue, the late side output), the two
// logs' records, the commit log (which process committed each report, when) and the broker's
// served reads (what that process was given to read), never what the reconciler says about itself
// beyond its report's conclusion.
#include <algorithm>
#include <cstdlib>
#include <iterator>
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

// What the broker served the reconciler before one report (ServedReadObs), never what the report
// says it read: per partition of each log, the offsets returned, as sorted disjoint [from, to).
struct Served {
  using Ranges = std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>>;
  Ranges keyed, stable;

  static bool in(const Ranges& r, int64_t p, int64_t off) {
    auto it = r.find(p);
    if (it == r.end()) return false;
    auto after = std::upper_bound(it->second.begin(), it->second.end(), std::make_pair(off, INT64_MAX));
    return after != it->second.begin() && std::prev(after)->second > off;
  }
  bool has_keyed(int64_t p, int64_t off) const { return in(keyed, p, off); }
  bool has_stable(int64_t p, int64_t off) const { return in(stable, p, off); }
  // One past the highest keyed offset of `p` served (0: none).
  int64_t keyed_end(int64_t p) const {
    auto it = keyed.find(p);
    return it == keyed.end() || it->second.empty() ? 0 : it->second.back().second;
  }
  static void normalize(Ranges& r) {
    for (auto& [p, v] : r) {
      std::sort(v.begin(), v.end());
      std::vector<std::pair<int64_t, int64_t>> merged;
      for (const auto& x : v) {
        if (!merged.empty() && x.first <= merged.back().second) {
          merged.back().second = std::max(merged.back().second, x.second);
        } else {
          merged.push_back(x);
        }
      }
      v = std::move(merged);
    }
  }
};

// The records the broker served `process` in its read session before `at_us`: the session is the
// consumer group of the last poll it was served by then (the reconciler reads each round with a
// group of its own and writes that round's reports after the read).
Served served_before(const BoardObs& b, const std::string& process, int64_t at_us) {
  Served out;
  const ServedReadObs* last = nullptr;
  for (const ServedReadObs& r : b.log_reads) {
    if (r.process == process && r.time_us <= at_us) last = &r;
  }
  if (last == nullptr) return out;
  for (const ServedReadObs& r : b.log_reads) {
    if (r.process != process || r.group != last->group || r.time_us > at_us) continue;
    for (const ServedReadObs::Range& x : r.ranges)
      (x.keyed ? out.keyed : out.stable)[x.partition].emplace_back(x.from, x.to);
  }
  Served::normalize(out.keyed);
  Served::normalize(out.stable);
  return out;
}

// The commits that inserted layer reports, by the row they inserted (its columns, joined), in
// commit order: a report row is tied to its commit, hence to the world's time and process.
using InsertIndex = std::map<std::string, std::vector<const SqlCommit*>>;

std::string row_key(const std::vector<std::string>& cols) {
  std::string out;
  for (const std::string& c : cols) out += c + '\x1f';
  return out;
}

std::string row_key(const LayerReportRow& lr) {
  return row_key({std::to_string(lr.layer), lr.scope_id, lr.snapshot_id, lr.run_id, lr.context_a, lr.context_b,
                  lr.status, lr.sample, lr.read_ends, lr.detail, std::to_string(lr.at_us)});
}

InsertIndex layer_inserts(const RankingRun& run) {
  InsertIndex out;
  for (const SqlCommit& c : run.commits) {
    if (!c.ok && !c.in_doubt) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (s.sql.compare(0, 39, "INSERT INTO reconciliation_layer_report") != 0 || s.params.size() < 12) continue;
      const auto& p = s.params;  // layer .. sample, read_ends, offset_digest, detail, at_us
      out[row_key({p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[10], p[11]})].push_back(&c);
    }
  }
  return out;
}

Logs index(const RankingRun& run) {
  Logs l;
  for (const LogRecordObs& r : run.keyed) l.keyed[r.partition][r.offset] = &r;
  for (const LogRecordObs& r : run.stable) l.stable[{r.partition, r.offset}] = &r;
  for (const SideOutputRow& s : run.wm.side) l.late.insert({s.partition, s.offset, s.window_type});
  for (const auto& [p, o] : run.candidate_terms) l.waiting.insert({p, o});
  return l;
}

// Layer 1's truth for `scope` under `vector`, in the records the broker served the reconciler: ""
// when continuous, else the first hole found.
std::string source_hole(const RankingRun& run, const Logs& l, const Served& read, const std::string& scope,
                        const std::string& vector) {
  std::map<int64_t, int64_t> reached;  // source partition -> last offset inside the cut
  for (const std::string& ref : split(vector, ',')) {
    auto c = cut_of(ref);
    if (!c) return "malformed cut " + ref;
    auto part = l.keyed.find(c->first);
    for (int64_t off = 0; off < c->second; ++off) {
      const LogRecordObs* r = nullptr;
      if (part != l.keyed.end() && part->second.count(off) && read.has_keyed(c->first, off)) r = part->second.at(off);
      if (r == nullptr) return "keyed " + ref + " has no offset " + std::to_string(off);
      const auto& f = r->fields();
      const int64_t sp = number(f, "sourcePartition"), so = number(f, "sourceOffset");
      reached[sp] = std::max(reached.count(sp) ? reached[sp] : -1, so);
      if (field(f, "scopeId") != scope) continue;
      auto orig = l.stable.find({sp, so});
      if (orig == l.stable.end() || !read.has_stable(sp, so) ||
          field(orig->second->fields(), "eventId") != field(f, "eventId")) {
        return "copy at keyed " + std::to_string(c->first) + "@" + std::to_string(off) + " has no original";
      }
    }
  }
  std::set<std::pair<int64_t, int64_t>> copied;
  for (const LogRecordObs& r : run.keyed) {
    if (!read.has_keyed(r.partition, r.offset) || field(r.fields(), "scopeId") != scope) continue;
    copied.insert({number(r.fields(), "sourcePartition"), number(r.fields(), "sourceOffset")});
  }
  for (const auto& [sp, last] : reached) {
    for (auto it = l.stable.lower_bound({sp, 0});
         it != l.stable.end() && it->first.first == sp && it->first.second < last; ++it) {
      if (!read.has_stable(sp, it->first.second) || copied.count(it->first) || l.waiting.count(it->first)) continue;
      const std::vector<std::string> derived = model::scopes_of(it->second->fields(), run.config);
      if (std::find(derived.begin(), derived.end(), scope) == derived.end()) continue;
      return "original " + std::to_string(sp) + "@" + std::to_string(it->first.second) + " has no copy of the scope";
    }
  }
  return "";
}

// The value of full key `ak` from the keyed records of `partition` below `next_offset` that the
// broker served the reconciler: distinct events (source, event_id), without the copies the late
// side output took for its window.
model::Value value_below(const RankingRun& run, const Logs& l, const Served& read, const std::string& ak,
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
    if (off >= next_offset) break;
    if (!read.has_keyed(partition, off)) continue;
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
std::string aggregate_difference(const RankingRun& run, const Logs& l, const LayerReportRow& lr, const Served& read) {
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
    const model::Value want = value_below(run, l, read, f[0], c->first, c->second);
    if (!(version->second->value == want)) {
      return item + " holds " + version->second->value.describe() + ", its cut's records give " + want.describe();
    }
  }
  return "";
}

}  // namespace

// The cuts a conclusion rests on: layer 1 the run's vector, layer 2 each sampled version's cut.
std::vector<std::pair<int32_t, int64_t>> cuts_needed(const LayerReportRow& lr, const std::string& vector) {
  std::vector<std::pair<int32_t, int64_t>> out;
  if (lr.layer == 1) {
    for (const std::string& ref : split(vector, ',')) {
      if (auto c = cut_of(ref)) out.push_back(*c);
    }
    return out;
  }
  for (const std::string& item : split(lr.sample, ';')) {
    const std::vector<std::string> f = split(item, ',');
    if (f.size() == 4) {
      if (auto c = cut_of(f[3])) out.push_back(*c);
    }
  }
  return out;
}

// Why the reads served short of a cut leave the logs unknown below it ("" when they reach them
// all): a conclusion needs every record below its cuts (004:L400 compares the offsets below the cut).
std::string short_read(const Served& read, const std::vector<std::pair<int32_t, int64_t>>& cuts) {
  for (const auto& [p, next] : cuts) {
    if (read.keyed_end(p) < next) {
      return "the broker served it keyed " + std::to_string(p) + " only below " + std::to_string(read.keyed_end(p)) +
             ", short of the cut at " + std::to_string(next);
    }
  }
  return "";
}

// A layer report's conclusion against the logs as the broker served them to the process that
// committed the report (tied to its INSERT in the commit log, before that commit).
void check_conclusion(const RankingRun& run, const Logs& l, const LayerReportRow& lr, const RunRow& r,
                      InsertIndex& inserts, const std::string& what, Verdict& v) {
  std::vector<const SqlCommit*>& commits = inserts[row_key(lr)];
  if (commits.empty()) {
    fail_verdict(v, what + " concluded " + lr.status + " but no commit in the commit log inserted it");
    return;
  }
  const SqlCommit& c = *commits.front();
  commits.erase(commits.begin());
  const Served read = served_before(run.board, c.client, c.time_us);
  if (lr.status != "CONTINUOUS" && lr.status != "GAP" && lr.status != "MATCH" && lr.status != "DIFF") {
    fail_verdict(v, what + " has status " + lr.status);
    return;
  }
  if (const std::string why = short_read(read, cuts_needed(lr, r.vector)); !why.empty()) {
    fail_verdict(v, what + " concluded " + lr.status + " on logs it had not read: " + why);
    return;
  }
  if (lr.layer == 1 && (lr.status == "CONTINUOUS" || lr.status == "GAP")) {
    const std::string hole = source_hole(run, l, read, lr.scope_id, r.vector);
    if (hole.empty() != (lr.status == "CONTINUOUS")) {
      fail_verdict(v, what + " concluded " + lr.status + (hole.empty() ? "; the logs show no hole" : "; " + hole));
    }
  } else if (lr.layer == 2 && (lr.status == "MATCH" || lr.status == "DIFF")) {
    const std::string diff = aggregate_difference(run, l, lr, read);
    if (diff.empty() != (lr.status == "MATCH")) {
      fail_verdict(
          v, what + " concluded " + lr.status + (diff.empty() ? "; every sampled version recomputes" : "; " + diff));
    }
  } else {
    fail_verdict(v, what + " has status " + lr.status + " at layer " + std::to_string(lr.layer));
  }
}

void check_layer_reports(const RankingRun& run, const std::map<std::string, std::string>& context,
                         fl::props::Judge& j) {
  const BoardObs& b = run.board;
  if (b.layer_reports.empty()) return;
  std::map<std::string, const RunRow*> runs;
  for (const RunRow& r : b.runs) runs[r.run_id] = &r;
  std::map<std::string, std::string> run_of;
  for (const SnapshotRow& s : b.snapshots) run_of[s.snapshot_id] = s.run_id;
  const Logs l = index(run);
  InsertIndex inserts = layer_inserts(run);
  for (const LayerReportRow& lr : b.layer_reports) {
    const std::string what =
        "layer-" + std::to_string(lr.layer) + " reconciliation of " + lr.scope_id + " (" + lr.snapshot_id + ")";
    auto ctx = context.find(lr.snapshot_id);
    auto r = runs.find(lr.run_id);
    const bool own = ctx != context.end() && r != runs.end() && run_of[lr.snapshot_id] == lr.run_id &&
                     lr.context_a == ctx->second + "|" + r->second->vector;
    j.expect(own, [&] { return what + " stored a context that is not its snapshot's and run's own"; });
    if (!own) continue;
    if (lr.status == "REFUSED") continue;
    j.expect(lr.context_b == lr.context_a, [&] {
      return what + " output " + lr.status + " comparing [" + lr.context_a + "] with [" + lr.context_b + "]";
    });
    if (lr.context_b != lr.context_a) continue;
    ++j.v.checks;  // one check, failed by at most one of check_conclusion's branches: counted by hand
    check_conclusion(run, l, lr, *r->second, inserts, what, j.v);
  }
}

// RANK-38 (004:L392-404): a reconciliation reports a comparison (MATCH or DIFF) only when the
// frozen contexts of both sides, recomputed from the snapshot and run rows, are identical; every
// report stores the real context of each side; a comparison across contexts is REFUSED. Layers 1
// and 2 (check_layer_reports) also conclude what the logs and the versions show.
Verdict check_reconciliation(const RankingRun& run) {
  fl::props::Judge j("rank-reconciliation", {"RANK-38"},
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
    const bool own = !a.empty() && !c.empty() && rc.context_a == a && rc.context_b == c;
    j.expect(own, [&] {
      return "reconciliation of " + rc.scope_id + " (" + rc.snapshot_a + " vs " + rc.snapshot_b +
             ") stored contexts that are not the snapshots' own";
    });
    if (!own) continue;
    j.expect(!((rc.status == "MATCH" || rc.status == "DIFF") && a != c), [&] {
      return "reconciliation of " + rc.scope_id + " output " + rc.status + " comparing " + rc.snapshot_a + " [" + a +
             "] with " + rc.snapshot_b + " [" + c + "]";
    });
  }
  check_layer_reports(run, context, j);
  return j.v;
}

}  // namespace fl::ranking::props
