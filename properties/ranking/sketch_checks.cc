// The approximate layer of the distinct metrics and the salted hot-topic shards (004:L158, L177,
// L179), judged from the sketch and shard rows read back against the model's distinct sets. The
// sketch's definition (hash, registers, merge, estimate) is impl/ports/hll.h: a stored register
// array means nothing under another definition, so the judge rebuilds sketches with that one.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "impl/ports/hll.h"
#include "properties/ranking/checks.h"

namespace fl::ranking::props {
namespace {

using fl::props::Judge;

std::string triple(const std::string& ak, int64_t generation, int64_t version) {
  return ak + "/g" + std::to_string(generation) + "/v" + std::to_string(version);
}

std::string five_fields(const ShardRow& s) {
  return s.topic_id + "#" + s.scope_id + "#" + s.window_type + "#" + std::to_string(s.window_start) + "#" +
         s.metric_type;
}

// "<shard_key>@<version>" entries of a merged version.
std::vector<std::pair<std::string, int64_t>> merged_entries(const std::string& text) {
  std::vector<std::pair<std::string, int64_t>> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    const size_t sep = item.rfind('@');
    out.emplace_back(item.substr(0, sep), sep == std::string::npos ? -1 : std::stoll("0" + item.substr(sep + 1)));
    at = end + 1;
  }
  return out;
}

std::map<std::string, const ShardRow*> shards_by_triple(const RankingRun& run) {
  std::map<std::string, const ShardRow*> out;
  for (const ShardRow& s : run.sketch.shards) out[triple(s.shard_key, s.generation, s.version)] = &s;
  return out;
}

// A stored sketch, or nullopt with the finding recorded.
std::optional<Hll> decoded(Verdict& v, const std::string& what, const std::string& text) {
  std::optional<Hll> h = Hll::decode(text);
  if (!h) fail_verdict(v, what + ": sketch '" + text.substr(0, 40) + "' does not decode");
  return h;
}

// 004:L179: a merged version is its listed shards merged (registers max, raw counts added).
void check_merge(Verdict& v, const SketchRow& row, const Hll& sketch,
                 const std::map<std::string, const ShardRow*>& shards) {
  const std::string id = triple(row.aggregate_key, row.generation, row.version);
  Hll merged;
  int64_t raw = 0;
  std::set<std::string> named;
  for (const auto& [shard_key, version] : merged_entries(row.merged_shards)) {
    ++v.checks;
    if (!named.insert(shard_key).second) fail_verdict(v, id + " merges shard " + shard_key + " twice");
    auto it = shards.find(triple(shard_key, row.generation, version));
    if (it == shards.end()) {
      fail_verdict(v, id + " merges " + shard_key + "@" + std::to_string(version) + ", which has no shard row");
      continue;
    }
    if (std::optional<Hll> h = decoded(v, shard_key, it->second->sketch)) merged.merge(*h);
    raw += it->second->raw_count;
  }
  if (!(merged == sketch)) {
    fail_verdict(v, id + ": sketch (estimate " + std::to_string(sketch.estimate()) +
                        ") is not the register max of its shards (estimate " + std::to_string(merged.estimate()) + ")");
  }
  if (raw != row.raw_count) {
    fail_verdict(v, id + ": raw count " + std::to_string(row.raw_count) + ", its shards hold " + std::to_string(raw));
  }
}

// One version's sketch row: decodes, its estimate is the definition's, within the documented
// bound of the version's exact distinct count, and (salted) the merge of its shards.
void check_sketch_row(Verdict& v, const RankingRun& run, const SketchRow& row, const VersionRow* version,
                      const std::map<std::string, const ShardRow*>& shards) {
  const std::string id = triple(row.aggregate_key, row.generation, row.version);
  ++v.checks;
  if (!version) {
    fail_verdict(v, "sketch row " + id + " has no version row");
    return;
  }
  std::optional<Hll> h = decoded(v, id, row.sketch);
  if (!h) return;
  const int64_t n = version->value.effective;
  if (h->estimate() != row.estimate || std::llabs(row.estimate - n) > hll_error_bound(n)) {
    fail_verdict(v, id + ": stored estimate " + std::to_string(row.estimate) + ", the sketch gives " +
                        std::to_string(h->estimate()) + ", the exact distinct count is " + std::to_string(n) +
                        " (bound " + std::to_string(hll_error_bound(n)) + ")");
  }
  if (row.raw_count != version->value.raw_count) {
    fail_verdict(v, id + ": sketch row raw count " + std::to_string(row.raw_count) + ", version " +
                        std::to_string(version->value.raw_count));
  }
  if (!run.sketch.salted) return;
  if (row.merged_shards.empty()) {
    fail_verdict(v, id + ": salted, but merges no shard");
    return;
  }
  check_merge(v, row, *h, shards);
}

}  // namespace

// RANK-3 (004:L158: "盐值只是局部计算维度，最终仍合并到完整业务聚合键，不能遗漏 scope、窗口或指标类型"):
// every salted shard row carries the five fields of its key, and a version merges only shards
// whose full key is its own.
void check_shard_keys(const RankingRun& run, Judge& j) {
  for (const ShardRow& s : run.sketch.shards) {
    j.expect(five_fields(s) == s.aggregate_key && s.shard_key == s.aggregate_key + "~" + std::to_string(s.salt), [&] {
      return "shard " + s.shard_key + " of " + s.aggregate_key + " holds the fields of " + five_fields(s);
    });
  }
  const auto shards = shards_by_triple(run);
  for (const SketchRow& row : run.sketch.sketches) {
    for (const auto& entry : merged_entries(row.merged_shards)) {
      const std::string& shard_key = entry.first;
      auto it = shards.find(triple(shard_key, row.generation, entry.second));
      j.expect(it == shards.end() || five_fields(*it->second) == row.aggregate_key, [&] {
        return triple(row.aggregate_key, row.generation, row.version) + " merged on a partial key: shard " + shard_key +
               " is of " + five_fields(*it->second);
      });
    }
  }
}

// RANK-5 (004:L177, L179): distinct counts of partials are combined by a mergeable sketch, never
// added: each version's sketch is the register max of its shards, its estimate within the bound of
// its exact count, and each head's sketch is the one built directly from the distinct elements the
// accepted events give its key.
Verdict check_distinct_sketch(const RankingRun& run) {
  Judge j("rank-distinct-sketch", {"RANK-5"},
          "every version has a sketch row; each is the register max of the shards it merged (salted), "
          "its estimate is the definition's and within 3 + 6 standard errors of the exact distinct "
          "count; each head's sketch equals the sketch of its key's distinct actors (or contents) "
          "from the accepted events");
  if (!run.sketch.enabled) return j.v;
  std::map<std::string, const VersionRow*> versions;
  for (const VersionRow& r : run.versions) versions[triple(r.aggregate_key, r.generation, r.version)] = &r;
  std::map<std::string, const SketchRow*> sketches;
  for (const SketchRow& s : run.sketch.sketches) sketches[triple(s.aggregate_key, s.generation, s.version)] = &s;
  const auto shards = shards_by_triple(run);
  for (const auto& [id, row] : sketches) {
    auto it = versions.find(id);
    check_sketch_row(j.v, run, *row, it == versions.end() ? nullptr : it->second, shards);
  }
  for (const auto& kv_ : versions) {
    const std::string& id = kv_.first;
    j.expect(sketches.count(id) > 0, [&] { return "version " + id + " has no sketch row"; });
  }
  std::vector<std::string> accepted;
  for (const LogRecordObs& r : run.stable) accepted.push_back(r.value);
  const auto distinct = model::expected_distinct(accepted, run.config, late_events(run));
  for (const HeadRow& h : run.heads) {
    auto d = distinct.find(h.aggregate_key);
    auto s = sketches.find(triple(h.aggregate_key, h.generation, h.version));
    if (d == distinct.end() || s == sketches.end()) continue;  // rank-full-key's or the finding above
    Hll expected;
    for (const std::string& x : d->second) expected.add(x);
    const std::optional<Hll> stored = Hll::decode(s->second->sketch);
    j.expect(stored && *stored == expected, [&] {
      return "head " + s->first + ": sketch (estimate " + std::to_string(s->second->estimate) +
             ") is not the sketch of the " + std::to_string(d->second.size()) +
             " distinct elements of the accepted events (estimate " + std::to_string(expected.estimate()) + ")";
    });
  }
  return j.v;
}

}  // namespace fl::ranking::props
