// rank-distinct-sketch and rank-full-key's salted-shard part pass a clean hand-built run with
// sketches and salted shards, and each catches one deliberately broken run.
#include <gtest/gtest.h>

#include "impl/ports/hll.h"
#include "properties/ranking/checks.h"

namespace fl::ranking::props {
namespace {

const char* const kScopes[] = {"GLOBAL|ALL|ALL|ALL", "CHANNEL|technology|ALL|ALL"};

std::string payload(const std::map<std::string, std::string>& fields) {
  std::string out;
  for (const auto& [k, v] : fields) out += (out.empty() ? "" : "\x1f") + k + "=" + v;
  return out;
}

// A valid SEARCH_EXECUTED on t_1 at 15 s, channel technology (two scopes).
std::string search(const std::string& id, const std::string& actor) {
  return payload({{"actorKey", actor},
                  {"channelId", "technology"},
                  {"contentOrQueryId", "q1"},
                  {"eventId", id},
                  {"eventTime", "15000"},
                  {"eventType", "SEARCH_EXECUTED"},
                  {"mappingVersion", "1"},
                  {"receivedAt", "15500"},
                  {"riskContextVersion", "1"},
                  {"schemaVersion", "3"},
                  {"sourceService", "search-service"},
                  {"topicHints", "t_1"}});
}

Hll sketch_of(const std::vector<std::string>& actors) {
  Hll h;
  for (const std::string& a : actors) h.add(a);
  return h;
}

std::string ak_of(const std::string& scope) { return "t_1#" + scope + "#short#10000#search_actors"; }

ShardRow shard(const std::string& scope, int64_t salt, int64_t raw, const std::vector<std::string>& actors) {
  const Hll h = sketch_of(actors);
  return ShardRow{ak_of(scope) + "~" + std::to_string(salt),
                  ak_of(scope),
                  salt,
                  1,
                  1,
                  "t_1",
                  scope,
                  "short",
                  10000,
                  "search_actors",
                  raw,
                  h.encode(),
                  h.estimate()};
}

// Three events (e1 by actA unsalted; e2 by actB and e3 by actA after t_1 turned hot, salt 1),
// one version per scope merging its two shards.
RankingRun clean() {
  RankingRun run;
  run.config.windows = {{"short", 10'000}};
  run.db_read = true;
  run.sketch.enabled = run.sketch.salted = true;
  int64_t offset = 0;
  for (const auto& [id, actor] :
       std::vector<std::pair<std::string, std::string>>{{"e1", "actA"}, {"e2", "actB"}, {"e3", "actA"}}) {
    run.stable.push_back(LogRecordObs{0, offset++, "q1", search(id, actor)});
  }
  for (const char* scope : kScopes) {
    const std::string ak = ak_of(scope);
    run.heads.push_back(HeadRow{ak, "t_1", scope, "short", 10000, "search_actors", 1, 1});
    const model::Value v{3, 2, 0, 2};
    run.versions.push_back(VersionRow{ak, 1, 1, v, "k0@6/g1", value_digest(v)});
    run.sketch.shards.push_back(shard(scope, 0, 1, {"actA"}));
    run.sketch.shards.push_back(shard(scope, 1, 2, {"actB", "actA"}));
    const Hll merged = sketch_of({"actA", "actB"});
    run.sketch.sketches.push_back(
        SketchRow{ak, 1, 1, 3, merged.encode(), merged.estimate(), ak + "~0@1," + ak + "~1@1"});
  }
  return run;
}

VerdictStatus sketch_status(const RankingRun& run) { return check_distinct_sketch(run).status(); }
VerdictStatus full_key_status(const RankingRun& run) { return check_full_key(run).status(); }

TEST(SketchChecks, CleanRunPasses) {
  const RankingRun run = clean();
  const Verdict s = check_distinct_sketch(run), k = check_full_key(run);
  EXPECT_EQ(s.status(), VerdictStatus::kPass) << (s.evidence.empty() ? "" : s.evidence[0]);
  EXPECT_EQ(k.status(), VerdictStatus::kPass) << (k.evidence.empty() ? "" : k.evidence[0]);
}

TEST(SketchChecks, VacuousWithoutSketches) {
  RankingRun run = clean();
  run.sketch = SketchObs{};
  EXPECT_EQ(sketch_status(run), VerdictStatus::kVacuous);
}

TEST(SketchChecks, CatchesAMergeThatIsNotTheRegisterMax) {
  RankingRun run = clean();
  const Hll only_salted = sketch_of({"actB"});  // a merge that kept the last shard's registers only
  run.sketch.sketches[0].sketch = only_salted.encode();
  run.sketch.sketches[0].estimate = only_salted.estimate();
  EXPECT_EQ(sketch_status(run), VerdictStatus::kFail);
}

TEST(SketchChecks, CatchesDistinctCountsAddedAcrossShards) {
  RankingRun run = clean();
  run.sketch.sketches[0].estimate = 1 + 2;  // the shards' estimates summed: actA counted twice
  EXPECT_EQ(sketch_status(run), VerdictStatus::kFail);
}

TEST(SketchChecks, CatchesAHeadSketchMissingAnActor) {
  RankingRun run = clean();
  for (ShardRow& s : run.sketch.shards) {  // consistent shards that all lost actB
    const Hll h = sketch_of({"actA"});
    s.sketch = h.encode();
    s.estimate = h.estimate();
  }
  for (SketchRow& s : run.sketch.sketches) {
    const Hll h = sketch_of({"actA"});
    s.sketch = h.encode();
    s.estimate = h.estimate();
  }
  EXPECT_EQ(sketch_status(run), VerdictStatus::kFail);
}

TEST(SketchChecks, CatchesAVersionWithoutASketchRow) {
  RankingRun run = clean();
  run.sketch.sketches.pop_back();
  EXPECT_EQ(sketch_status(run), VerdictStatus::kFail);
}

TEST(SketchChecks, CatchesAMergeOnAPartialKey) {
  RankingRun run = clean();
  // The channel scope's version merges the global scope's salted shard: same topic, window and
  // metric, another scope (a merger keyed by topic_id + window + metric only).
  SketchRow& channel = run.sketch.sketches[1];
  channel.merged_shards = ak_of(kScopes[1]) + std::string("~0@1,") + ak_of(kScopes[0]) + "~1@1";
  EXPECT_EQ(full_key_status(run), VerdictStatus::kFail);
}

TEST(SketchChecks, CatchesAShardRowWithoutItsFullKey) {
  RankingRun run = clean();
  run.sketch.shards[1].metric_type = "post_actors";  // a shard keyed without its metric type
  EXPECT_EQ(full_key_status(run), VerdictStatus::kFail);
}

}  // namespace
}  // namespace fl::ranking::props
