// The ranking model's part 1 (model/ranking/model.h): the event contract's wire form and first
// layer (004:L122-139, L203), canonical scopes (004:L16-19, RANK-1), topic mapping (004:L78,
// RANK-31), and every full aggregation key's value from the distinct accepted events (004:L143,
// L167-177, L204-210; RANK-3, RANK-4, RANK-5).
#include "model/ranking/model.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fl::ranking::model {
namespace {

// A permutation of `v` drawn by RapidCheck (this RapidCheck has no gen::shuffle).
template <typename T>
std::vector<T> shuffled(std::vector<T> v) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[*rc::gen::inRange<size_t>(0, i)]);
  return v;
}

using Fields = std::map<std::string, std::string>;

std::string encode(const Fields& f) {
  std::string out;
  for (const auto& [k, v] : f) {
    if (!out.empty()) out += '\x1f';
    out += k + "=" + v;
  }
  return out;
}

// A valid §6.1 event (004:L122-139) of `type` by `actor` on `hint` at `t_ms`; `dims` adds the
// scope dimensions.
Fields fields(const std::string& id, const std::string& actor, const std::string& hint, int64_t t_ms,
              const std::string& type = "SEARCH_EXECUTED", const std::string& content = "q1", const Fields& dims = {}) {
  static const std::map<std::string, std::string> kOwner = {
      {"SEARCH_EXECUTED", "search-service"}, {"POST_CREATED", "post-service"}, {"COMMENT_CREATED", "comment-service"}};
  Fields f = {{"eventId", id},
              {"eventType", type},
              {"eventTime", std::to_string(t_ms)},
              {"receivedAt", std::to_string(t_ms + 500)},
              {"actorKey", actor},
              {"contentOrQueryId", content},
              {"topicHints", hint},
              {"sourceService", kOwner.count(type) ? kOwner.at(type) : "search-service"},
              {"schemaVersion", "3"},
              {"mappingVersion", "1"},
              {"riskContextVersion", "1"}};
  for (const auto& [k, v] : dims) f[k] = v;
  return f;
}
std::string event(const std::string& id, const std::string& actor, const std::string& hint, int64_t t_ms,
                  const std::string& type = "SEARCH_EXECUTED", const std::string& content = "q1",
                  const Fields& dims = {}) {
  return encode(fields(id, actor, hint, t_ms, type, content, dims));
}

// One window only, so each event feeds one key per scope and metric.
Config short_only() {
  Config c;
  c.windows = {{"short", 10'000}};
  return c;
}

const std::string kGlobal = "GLOBAL|ALL|ALL|ALL";
std::string key(const std::string& topic, const std::string& scope, const std::string& wt, int64_t start,
                const std::string& metric) {
  return topic + "#" + scope + "#" + wt + "#" + std::to_string(start) + "#" + metric;
}

// ---- parse_event ----

TEST(RankingModelTest, ParseEventReadsTheWireForm) {
  EXPECT_EQ(parse_event("eventId=e1\x1f"
                        "actorKey=u1\x1f"
                        "topicHints=t_3"),
            (Fields{{"eventId", "e1"}, {"actorKey", "u1"}, {"topicHints", "t_3"}}));
}

TEST(RankingModelTest, ParseEventEdgeCases) {
  EXPECT_TRUE(parse_event("").empty());
  EXPECT_TRUE(parse_event("\x1f\x1f").empty());
  // A piece without '=' is no field; the value is everything after the first '='; empty values stay.
  EXPECT_EQ(parse_event("junk\x1f"
                        "a=b=c\x1f"
                        "e=\x1f"),
            (Fields{{"a", "b=c"}, {"e", ""}}));
}

// The wire form carries exactly the fields it was built from, whatever order the pairs come in.
RC_GTEST_PROP(RankingModelProps, ParseEventRoundTripsInAnyOrder, ()) {
  const auto keys = *rc::gen::container<std::set<std::string>>(
      rc::gen::element<std::string>("eventId", "actorKey", "topicHints", "channelId", "language", "x"));
  Fields f;
  std::vector<std::string> pairs;
  for (const std::string& k : keys) {
    f[k] = *rc::gen::element<std::string>("", "v", "t_1", "a=b", "GLOBAL|ALL|ALL|ALL");
    pairs.push_back(k + "=" + f[k]);
  }
  pairs = shuffled(pairs);
  std::string text;
  for (const std::string& p : pairs) text += (text.empty() ? "" : "\x1f") + p;
  RC_ASSERT(parse_event(text) == f);
}

// ---- is_canonical_scope ----

TEST(RankingModelTest, SeedExampleScopesAreCanonical) {
  // 004:L17-18, under a board that has region "CN".
  Config c;
  c.regions.push_back("CN");
  for (const char* s : {"GLOBAL|ALL|ALL|zh-CN", "CHANNEL|technology|CN|zh-CN", "GLOBAL|ALL|ALL|ALL",
                        "REGION|ALL|CN-SH|ALL", "CHANNEL|sports|ALL|ALL"}) {
    EXPECT_TRUE(is_canonical_scope(s, c)) << s;
  }
}

TEST(RankingModelTest, NonCanonicalScopesAreRejected) {
  const Config c;
  for (const char* s :
       {// 004:L19: a missing dimension is the explicit ALL, never "".
        "GLOBAL|||", "GLOBAL|ALL|ALL|", "CHANNEL|technology||ALL", "",
        // Fixed field order and count.
        "GLOBAL|ALL|ALL", "GLOBAL|ALL|ALL|ALL|ALL", "ALL|ALL|ALL|GLOBAL", "global|ALL|ALL|ALL", "TOPIC|ALL|ALL|ALL",
        // Unknown dimension values ("CN" is not one of this board's regions).
        "CHANNEL|no-such-channel|ALL|ALL", "REGION|ALL|CN|ALL", "GLOBAL|ALL|ALL|fr-FR",
        // Invalid combinations (RANK-1): a global scope has no channel or region, a channel
        // scope has a channel, a region scope a region and no channel.
        "GLOBAL|technology|ALL|ALL", "GLOBAL|ALL|CN-SH|ALL", "CHANNEL|ALL|CN-SH|zh-CN", "REGION|ALL|ALL|ALL",
        "REGION|sports|CN-SH|ALL"}) {
    EXPECT_FALSE(is_canonical_scope(s, c)) << s;
  }
}

// ---- scopes_of ----

TEST(RankingModelTest, AnEventWithoutDimensionsIsGlobalOnly) {
  EXPECT_EQ(scopes_of(fields("e1", "u1", "t_1", 0), Config{}), (std::vector<std::string>{kGlobal}));
}

TEST(RankingModelTest, AnEventDerivesGlobalLanguageRegionAndChannelScopes) {
  const Fields all = {{"channelId", "local-news"}, {"regionId", "CN-SH"}, {"language", "zh-CN"}};
  EXPECT_EQ(scopes_of(fields("e1", "u1", "t_1", 0, "SEARCH_EXECUTED", "q1", all), Config{}),
            (std::vector<std::string>{kGlobal, "GLOBAL|ALL|ALL|zh-CN", "REGION|ALL|CN-SH|ALL",
                                      "CHANNEL|local-news|CN-SH|zh-CN"}));
  // A missing (or empty) dimension is ALL in the channel scope.
  const Fields ch = {{"channelId", "sports"}, {"regionId", ""}};
  EXPECT_EQ(scopes_of(fields("e1", "u1", "t_1", 0, "SEARCH_EXECUTED", "q1", ch), Config{}),
            (std::vector<std::string>{kGlobal, "CHANNEL|sports|ALL|ALL"}));
}

TEST(RankingModelTest, AnInvalidDimensionNeverFallsBackToGlobal) {
  // RANK-1: invalid combinations are rejected, never folded into the global scope.
  for (const Fields& bad :
       {Fields{{"channelId", "no-such-channel"}}, Fields{{"regionId", "CN"}}, Fields{{"language", "fr-FR"}},
        Fields{{"channelId", "ALL"}}, Fields{{"channelId", "technology"}, {"language", "xx"}}}) {
    EXPECT_TRUE(scopes_of(fields("e1", "u1", "t_1", 0, "SEARCH_EXECUTED", "q1", bad), Config{}).empty())
        << bad.begin()->first << "=" << bad.begin()->second;
  }
}

// Whatever the dimensions: either no scope (rejected), or distinct canonical scopes, the global
// one among them. A dimension of literally "ALL" is rejected (004:L19: ALL is a scope's missing
// dimension, not a value): a language of "ALL" once derived GLOBAL|ALL|ALL|ALL twice.
RC_GTEST_PROP(RankingModelProps, ScopesAreCanonicalAndDistinct, ()) {
  const Config c;
  const auto pick = [](std::vector<std::string> v, bool with_all) {
    v.push_back("");
    v.push_back("bogus");
    if (with_all) v.push_back("ALL");
    return *rc::gen::elementOf(v);
  };
  const Fields dims = {{"channelId", pick(c.channels, true)},
                       {"regionId", pick(c.regions, true)},
                       {"language", pick(c.languages, true)}};
  const std::vector<std::string> s = scopes_of(fields("e1", "u1", "t_1", 0, "SEARCH_EXECUTED", "q1", dims), c);
  const bool valid =
      std::all_of(dims.begin(), dims.end(), [](const auto& kv) { return kv.second != "ALL" && kv.second != "bogus"; });
  RC_ASSERT(s.empty() == !valid);
  if (s.empty()) return;
  RC_ASSERT(std::set<std::string>(s.begin(), s.end()).size() == s.size());
  RC_ASSERT(std::find(s.begin(), s.end(), kGlobal) != s.end());
  for (const std::string& x : s) RC_ASSERT(is_canonical_scope(x, c));
}

// ---- main_topic ----

TEST(RankingModelTest, MainTopicMapsTopicsAndAliases) {
  const Config c;  // topics t_1..t_20
  EXPECT_EQ(main_topic("t_1", c), "t_1");
  EXPECT_EQ(main_topic("t_20", c), "t_20");
  EXPECT_EQ(main_topic("a7x", c), "t_7");
  EXPECT_EQ(main_topic("a7y", c), "t_7");
  EXPECT_EQ(main_topic("a20x", c), "t_20");
}

TEST(RankingModelTest, UnmappedAndLowConfidenceHintsHaveNoMainTopic) {
  // 004:L78: low-confidence or unmapped terms wait to be confirmed.
  const Config c;
  for (const char* h : {"", "t_", "t_0", "t_21", "t_-1", "t_1x", "t_1234567", "a0x", "a21y", "a7z", "ax", "a", "A7x",
                        "lc-3", "u17", "T_1", "q_1001"}) {
    EXPECT_EQ(main_topic(h, c), "") << h;
  }
}

// RANK-31: each alias of a topic maps to exactly that main topic, and a main topic maps to itself.
RC_GTEST_PROP(RankingModelProps, AliasesMapToOneMainTopic, ()) {
  Config c;
  c.topics = *rc::gen::inRange(1, 40);
  const int i = *rc::gen::inRange(1, c.topics + 1);
  const std::string t = "t_" + std::to_string(i);
  RC_ASSERT(main_topic(t, c) == t);
  RC_ASSERT(main_topic("a" + std::to_string(i) + "x", c) == t);
  RC_ASSERT(main_topic("a" + std::to_string(i) + "y", c) == t);
  RC_ASSERT(main_topic(main_topic(t, c), c) == t);
  RC_ASSERT(main_topic("t_" + std::to_string(c.topics + 1), c).empty());
}

// ---- contract_violation ----

TEST(RankingModelTest, AValidEventHasNoViolation) {
  const Fields dims = {{"channelId", "technology"}, {"regionId", "CN-BJ"}, {"language", "en-US"}};
  EXPECT_EQ(contract_violation(fields("e1", "u1", "t_1", 1000), Config{}), "");
  EXPECT_EQ(contract_violation(fields("e1", "u1", "t_1", 1000, "POST_CREATED", "p1", dims), Config{}), "");
  EXPECT_EQ(contract_violation(fields("e1", "u1", "t_1", 1000, "COMMENT_CREATED"), Config{}), "");
  // The contract is not the mapping: an unmapped hint passes the first layer.
  EXPECT_EQ(contract_violation(fields("e1", "u1", "u17", 1000), Config{}), "");
}

TEST(RankingModelTest, EveryRequiredFieldMissingOrEmptyIsAViolation) {
  // 004:L203 first layer: missing fields. scopeDimensions' members are optional (ALL).
  for (const char* f : {"eventId", "eventType", "eventTime", "receivedAt", "actorKey", "contentOrQueryId", "topicHints",
                        "sourceService", "schemaVersion", "mappingVersion", "riskContextVersion"}) {
    Fields e = fields("e1", "u1", "t_1", 1000);
    e.erase(f);
    EXPECT_EQ(contract_violation(e, Config{}), std::string("missing:") + f);
    e[f] = "";
    EXPECT_EQ(contract_violation(e, Config{}), std::string("missing:") + f);
  }
}

TEST(RankingModelTest, UnknownTypesAndForgedSourcesAreViolations) {
  Fields e = fields("e1", "u1", "t_1", 1000);
  e["eventType"] = "PAGE_VIEWED";
  EXPECT_EQ(contract_violation(e, Config{}), "unknown-type");
  // 004:L203: forged source; each type has one owning service.
  e = fields("e1", "u1", "t_1", 1000);
  e["sourceService"] = "post-service";
  EXPECT_EQ(contract_violation(e, Config{}), "forged-source");
  e = fields("e1", "u1", "t_1", 1000, "POST_CREATED");
  e["sourceService"] = "search-service";
  EXPECT_EQ(contract_violation(e, Config{}), "forged-source");
}

TEST(RankingModelTest, EventTimeBoundsAreInclusive) {
  // 004:L203 first layer: impossible times, at most max_future_ms ahead of and max_age_ms behind
  // receivedAt.
  const Config c;
  auto at = [&](int64_t t, int64_t r) {
    Fields e = fields("e1", "u1", "t_1", 0);
    e["eventTime"] = std::to_string(t);
    e["receivedAt"] = std::to_string(r);
    return contract_violation(e, c);
  };
  const int64_t r = 10'000'000;
  EXPECT_EQ(at(r, r), "");
  EXPECT_EQ(at(r + c.max_future_ms, r), "");
  EXPECT_EQ(at(r + c.max_future_ms + 1, r), "impossible-time");
  EXPECT_EQ(at(r - c.max_age_ms, r), "");
  EXPECT_EQ(at(r - c.max_age_ms - 1, r), "impossible-time");
}

TEST(RankingModelTest, AnInvalidScopeIsAViolation) {
  EXPECT_EQ(contract_violation(
                fields("e1", "u1", "t_1", 1000, "SEARCH_EXECUTED", "q1", {{"channelId", "no-such-channel"}}), Config{}),
            "invalid-scope");
}

// ---- Value, metrics_of ----

TEST(RankingModelTest, ValueDescribeNamesEveryLayer) {
  EXPECT_EQ((Value{5, 4, 1, 3}).describe(), "raw=5 eff=4 susp=1 adj=3");
  EXPECT_EQ(Value{}.describe(), "raw=0 eff=0 susp=0 adj=0");
}

TEST(RankingModelTest, MetricsFollowTheSeedTable) {
  // 004:L171-174: distinct searching, posting and commenting actors; effective content volume.
  using M = std::vector<std::pair<std::string, bool>>;
  EXPECT_EQ(metrics_of("SEARCH_EXECUTED"), (M{{"search_actors", false}}));
  EXPECT_EQ(metrics_of("POST_CREATED"), (M{{"post_actors", false}, {"content_count", true}}));
  EXPECT_EQ(metrics_of("COMMENT_CREATED"), (M{{"comment_actors", false}}));
  EXPECT_TRUE(metrics_of("PAGE_VIEWED").empty());
  EXPECT_TRUE(metrics_of("").empty());
}

// ---- expected_values, expected_distinct ----

TEST(RankingModelTest, NoEventsNoValues) {
  EXPECT_TRUE(expected_values({}, Config{}).empty());
  EXPECT_TRUE(expected_distinct({}, Config{}).empty());
}

TEST(RankingModelTest, OneEventFeedsEveryScopeWindowAndMetricOfItsFullKey) {
  // 004:L143: topic_id + scope_id + window_type + window_start + metric_type.
  const Fields dims = {{"channelId", "technology"}};
  const auto v = expected_values({event("e1", "u1", "a3x", 65'000, "POST_CREATED", "p1", dims)}, Config{});
  std::set<std::string> keys;
  for (const auto& [k, x] : v) keys.insert(k);
  std::set<std::string> want;
  for (const std::string& scope : {kGlobal, std::string("CHANNEL|technology|ALL|ALL")}) {
    for (const auto& [wt, start] : std::map<std::string, int64_t>{{"short", 60'000}, {"medium", 60'000}, {"long", 0}}) {
      for (const char* m : {"post_actors", "content_count"}) want.insert(key("t_3", scope, wt, start, m));
    }
  }
  EXPECT_EQ(keys, want);
  for (const auto& [k, x] : v) EXPECT_EQ(x, (Value{1, 1, 0, 1})) << k;
}

TEST(RankingModelTest, WindowStartsAreFloorsOfEventTime) {
  // Boundaries: the last millisecond of a window and the first of the next; negative times floor
  // downwards.
  const Config c = short_only();
  const std::vector<std::pair<int64_t, int64_t>> cases = {
      {0, 0}, {9'999, 0}, {10'000, 10'000}, {19'999, 10'000}, {-1, -10'000}, {-10'000, -10'000}, {-10'001, -20'000}};
  for (const auto& [t, start] : cases) {
    const auto v = expected_values({event("e1", "u1", "t_1", t)}, c);
    ASSERT_EQ(v.size(), 1u) << t;
    EXPECT_EQ(v.begin()->first, key("t_1", kGlobal, "short", start, "search_actors")) << t;
  }
}

TEST(RankingModelTest, RedeliveredEventsCountOnce) {
  // RANK-4 (C01): a function of the set of distinct (source, event_id).
  const std::string e = event("e1", "u1", "t_1", 1000);
  const auto once = expected_values({e}, short_only());
  EXPECT_EQ(expected_values({e, e, e}, short_only()), once);
  EXPECT_EQ(once.at(key("t_1", kGlobal, "short", 0, "search_actors")), (Value{1, 1, 0, 1}));
  // The same event id again, even with other fields (a replay): still the first copy only.
  const auto v = expected_values({e, event("e1", "u2", "t_1", 1000)}, short_only());
  EXPECT_EQ(v, once);
}

TEST(RankingModelTest, RepeatedActorsCountOnceAndAreFlaggedAboveTheThreshold) {
  // 004:L6 "同一个用户连续搜索 100 次是否算 100 次"; 004:L37 repeats are merged or down-weighted;
  // 004:L206-209 raw, effective, suspicious and risk-adjusted kept apart. Suspicious: more than
  // suspicious_repeats (3) events of one actor in the key.
  const Config c = short_only();
  std::vector<std::string> evs;
  for (int i = 0; i < 3; ++i) evs.push_back(event("a" + std::to_string(i), "u1", "t_1", 1000 + i));
  evs.push_back(event("b", "u2", "t_1", 2000));
  const std::string k = key("t_1", kGlobal, "short", 0, "search_actors");
  EXPECT_EQ(expected_values(evs, c).at(k), (Value{4, 2, 0, 2}));  // u1 at the threshold: not suspicious
  evs.push_back(event("a3", "u1", "t_1", 1003));
  EXPECT_EQ(expected_values(evs, c).at(k), (Value{5, 2, 1, 1}));  // u1 above it
}

TEST(RankingModelTest, ContentCountCountsDistinctContents) {
  const Config c = short_only();
  const auto v = expected_values(
      {event("e1", "u1", "t_1", 0, "POST_CREATED", "p1"), event("e2", "u2", "t_1", 0, "POST_CREATED", "p1"),
       event("e3", "u2", "t_1", 0, "POST_CREATED", "p2")},
      c);
  EXPECT_EQ(v.at(key("t_1", kGlobal, "short", 0, "post_actors")), (Value{3, 2, 0, 2}));
  EXPECT_EQ(v.at(key("t_1", kGlobal, "short", 0, "content_count")), (Value{3, 2, 0, 2}));
  const auto d = expected_distinct(
      {event("e1", "u1", "t_1", 0, "POST_CREATED", "p1"), event("e2", "u2", "t_1", 0, "POST_CREATED", "p1"),
       event("e3", "u2", "t_1", 0, "POST_CREATED", "p2")},
      c);
  EXPECT_EQ(d.at(key("t_1", kGlobal, "short", 0, "post_actors")), (std::set<std::string>{"u1", "u2"}));
  EXPECT_EQ(d.at(key("t_1", kGlobal, "short", 0, "content_count")), (std::set<std::string>{"p1", "p2"}));
}

TEST(RankingModelTest, AliasesAggregateUnderTheirMainTopicAndUnmappedHintsNever) {
  // RANK-31 (C03, F04): two aliases and the topic itself are one topic; unmapped and low-confidence
  // hints are never aggregated.
  const Config c = short_only();
  const auto v = expected_values({event("e1", "u1", "t_4", 0), event("e2", "u2", "a4x", 0), event("e3", "u3", "a4y", 0),
                                  event("e4", "u4", "lc-4", 0), event("e5", "u5", "u99", 0)},
                                 c);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.at(key("t_4", kGlobal, "short", 0, "search_actors")), (Value{3, 3, 0, 3}));
}

TEST(RankingModelTest, KeysNeverMixScopesWindowsOrMetrics) {
  // RANK-3 (C06): the same topic in another scope, window or metric is another key.
  const Config c = short_only();
  const auto v = expected_values(
      {event("e1", "u1", "t_1", 0, "SEARCH_EXECUTED", "q1", {{"channelId", "sports"}}), event("e2", "u2", "t_1", 0),
       event("e3", "u3", "t_1", 10'000), event("e4", "u4", "t_1", 0, "COMMENT_CREATED")},
      c);
  EXPECT_EQ(v.at(key("t_1", kGlobal, "short", 0, "search_actors")).raw_count, 2);
  EXPECT_EQ(v.at(key("t_1", "CHANNEL|sports|ALL|ALL", "short", 0, "search_actors")).raw_count, 1);
  EXPECT_EQ(v.at(key("t_1", kGlobal, "short", 10'000, "search_actors")).raw_count, 1);
  EXPECT_EQ(v.at(key("t_1", kGlobal, "short", 0, "comment_actors")).raw_count, 1);
  EXPECT_EQ(v.size(), 4u);
}

TEST(RankingModelTest, LateEventsCountOnlyWhereTheyWereNotLate) {
  // 004:L154: an event every copy of which went to a window's late side output never counts there,
  // and still counts in its other scopes and windows.
  Config c;
  c.windows = {{"short", 10'000}, {"long", 600'000}};
  const std::vector<std::string> evs = {event("e1", "u1", "t_1", 0, "SEARCH_EXECUTED", "q1", {{"channelId", "sports"}}),
                                        event("e2", "u2", "t_1", 0)};
  const auto v = expected_values(evs, c, {"e1#GLOBAL|ALL|ALL|ALL#short"});
  EXPECT_EQ(v.at(key("t_1", kGlobal, "short", 0, "search_actors")), (Value{1, 1, 0, 1}));
  EXPECT_EQ(v.at(key("t_1", kGlobal, "long", 0, "search_actors")), (Value{2, 2, 0, 2}));
  EXPECT_EQ(v.at(key("t_1", "CHANNEL|sports|ALL|ALL", "short", 0, "search_actors")), (Value{1, 1, 0, 1}));
  // Late everywhere: no key at all.
  EXPECT_TRUE(expected_values({evs[1]}, c, {"e2#GLOBAL|ALL|ALL|ALL#short", "e2#GLOBAL|ALL|ALL|ALL#long"}).empty());
  EXPECT_EQ(
      expected_distinct(evs, c, {"e1#GLOBAL|ALL|ALL|ALL#short"}).at(key("t_1", kGlobal, "short", 0, "search_actors")),
      (std::set<std::string>{"u2"}));
}

// A random history on a small board: few actors, contents, topics and windows, so that shared
// keys, repeated actors (above the suspicious threshold) and duplicate ids are common.
std::vector<std::string> gen_events() {
  const size_t n = *rc::gen::inRange<size_t>(0, 30);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    Fields dims;
    const std::string ch = *rc::gen::element<std::string>("", "sports", "technology");
    if (!ch.empty()) dims["channelId"] = ch;
    out.push_back(event("e" + std::to_string(*rc::gen::inRange(0, 40)), "u" + std::to_string(*rc::gen::inRange(0, 2)),
                        *rc::gen::element<std::string>("t_1", "t_2", "a1x", "u5"),
                        *rc::gen::inRange<int64_t>(-5'000, 15'000),
                        *rc::gen::element<std::string>("SEARCH_EXECUTED", "POST_CREATED"),
                        "c" + std::to_string(*rc::gen::inRange(0, 3)), dims));
  }
  return out;
}

// Distinct event ids carry one payload each, as accepted events do (a redelivery is a copy).
std::vector<std::string> first_copy_per_id(const std::vector<std::string>& evs) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const std::string& e : evs) {
    if (seen.insert(parse_event(e).at("eventId")).second) out.push_back(e);
  }
  return out;
}

// RANK-4: the values are a function of the set of distinct events: neither their order nor
// redelivered copies change them.
RC_GTEST_PROP(RankingModelProps, ValuesAreInvariantUnderOrderAndRedelivery, ()) {
  const Config c = short_only();
  const std::vector<std::string> evs = first_copy_per_id(gen_events());
  const auto want = expected_values(evs, c);
  std::vector<std::string> noisy = evs;
  if (!evs.empty()) {
    const size_t extra = *rc::gen::inRange<size_t>(0, 6);
    for (size_t i = 0; i < extra; ++i) noisy.push_back(*rc::gen::elementOf(evs));
  }
  noisy = shuffled(noisy);
  RC_ASSERT(expected_values(noisy, c) == want);
  RC_ASSERT(expected_distinct(noisy, c) == expected_distinct(evs, c));
}

// RANK-5: the layers hold together: effective = |distinct elements| ≤ raw, suspicious ≤ distinct
// actors, risk-adjusted = effective − suspicious; and adding events never shrinks raw or effective.
RC_GTEST_PROP(RankingModelProps, ValueLayersAreConsistentAndMonotone, ()) {
  const Config c = short_only();
  const std::vector<std::string> all = first_copy_per_id(gen_events());
  const size_t cut = *rc::gen::inRange<size_t>(0, all.size() + 1);
  const std::vector<std::string> prefix(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(cut));
  const auto v = expected_values(all, c), before = expected_values(prefix, c);
  const auto d = expected_distinct(all, c);
  RC_ASSERT(d.size() == v.size());
  for (const auto& [k, x] : v) {
    RC_ASSERT(d.count(k) == 1u);
    RC_ASSERT(x.effective == static_cast<int64_t>(d.at(k).size()));
    RC_ASSERT(1 <= x.effective && x.effective <= x.raw_count);
    RC_ASSERT(0 <= x.suspicious && x.suspicious <= x.raw_count / (c.suspicious_repeats + 1));
    RC_ASSERT(x.risk_adjusted == x.effective - x.suspicious);
  }
  for (const auto& [k, x] : before) {
    RC_ASSERT(v.count(k) == 1u);
    RC_ASSERT(v.at(k).raw_count >= x.raw_count);
    RC_ASSERT(v.at(k).effective >= x.effective);
  }
}

// The global scope's values by their definition (004:L143, L167-177, L206-209), one key at a
// time: the distinct events of the key, its distinct actors (or contents for content_count), the
// actors with more than suspicious_repeats events in it, and the difference.
RC_GTEST_PROP(RankingModelProps, GlobalValuesMatchTheDefinition, ()) {
  const Config c = short_only();
  const std::vector<std::string> evs = first_copy_per_id(gen_events());
  struct Acc {
    std::set<std::string> events, contents;
    std::map<std::string, int64_t> actors;
    bool content = false;
  };
  std::map<std::string, Acc> acc;
  for (const std::string& payload : evs) {
    const Fields e = parse_event(payload);
    const std::string topic = main_topic(e.at("topicHints"), c);
    if (topic.empty()) continue;
    const int64_t t = std::stoll(e.at("eventTime"));
    const int64_t start = (t >= 0 ? t / 10'000 : (t - 9'999) / 10'000) * 10'000;
    for (const auto& [metric, content] : metrics_of(e.at("eventType"))) {
      Acc& a = acc[key(topic, kGlobal, "short", start, metric)];
      a.content = content;
      a.events.insert(e.at("eventId"));
      a.contents.insert(e.at("contentOrQueryId"));
      ++a.actors[e.at("actorKey")];
    }
  }
  std::map<std::string, Value> want;
  for (const auto& [k, a] : acc) {
    Value v;
    v.raw_count = static_cast<int64_t>(a.events.size());
    v.effective = static_cast<int64_t>(a.content ? a.contents.size() : a.actors.size());
    for (const auto& [actor, n] : a.actors) v.suspicious += n > c.suspicious_repeats ? 1 : 0;
    v.risk_adjusted = v.effective - v.suspicious;
    want[k] = v;
  }
  std::map<std::string, Value> got;
  for (const auto& [k, v] : expected_values(evs, c)) {
    if (k.find("#" + kGlobal + "#") != std::string::npos) got[k] = v;
  }
  RC_ASSERT(got == want);
}

// An event late in every scope and window it reaches counts as if it had never been accepted.
RC_GTEST_PROP(RankingModelProps, LateEverywhereIsAbsent, ()) {
  const Config c = short_only();
  const std::vector<std::string> evs = first_copy_per_id(gen_events());
  RC_PRE(!evs.empty());
  const size_t drop = *rc::gen::inRange<size_t>(0, evs.size());
  const Fields e = parse_event(evs[drop]);
  std::set<std::string> late;
  for (const std::string& s : scopes_of(e, c)) late.insert(e.at("eventId") + "#" + s + "#short");
  std::vector<std::string> rest = evs;
  rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(drop));
  RC_ASSERT(expected_values(evs, c, late) == expected_values(rest, c));
}

}  // namespace
}  // namespace fl::ranking::model

namespace fl::ranking::model {
namespace {

// 004:L84, L88: in the merged scope the source keeps only what is below the vector; the main topic
// takes every source event once; other scopes and topics do not move.
TEST(RankingModelTest, OwningTopicsFollowTheHandoverVector) {
  const std::vector<MergeCutover> c = {{"t_2", "t_1", "GLOBAL|ALL|ALL|ALL", {{0, 5}}}};
  EXPECT_EQ(owning_topics("t_2", "GLOBAL|ALL|ALL|ALL", 0, 4, c), (std::vector<std::string>{"t_2", "t_1"}));
  EXPECT_EQ(owning_topics("t_2", "GLOBAL|ALL|ALL|ALL", 0, 5, c), std::vector<std::string>{"t_1"});
  EXPECT_EQ(owning_topics("t_2", "GLOBAL|ALL|ALL|ALL", 1, 0, c), std::vector<std::string>{"t_1"});
  EXPECT_EQ(owning_topics("t_2", "GLOBAL|ALL|ALL|zh-CN", 0, 9, c), std::vector<std::string>{"t_2"});
  EXPECT_EQ(owning_topics("t_1", "GLOBAL|ALL|ALL|ALL", 0, 9, c), std::vector<std::string>{"t_1"});
}

// Without a cutover the events' coordinates change nothing; a cutover at the start of every
// partition moves all of the source's events and leaves the source no key in that scope.
RC_GTEST_PROP(RankingModelTest, CoordinatesMatterOnlyThroughACutover, ()) {
  const Config c = short_only();
  const std::vector<std::string> evs = gen_events();
  std::vector<SourcedEvent> sourced;
  for (size_t i = 0; i < evs.size(); ++i)
    sourced.push_back({static_cast<int32_t>(i % 3), static_cast<int64_t>(i), evs[i]});
  RC_ASSERT(expected_values(sourced, c, {}, {}) == expected_values(evs, c));
  const std::vector<MergeCutover> all = {{"t_2", "t_1", kGlobal, {}}};
  for (const auto& [k, v] : expected_values(sourced, c, {}, all))
    RC_ASSERT(k.rfind("t_2#" + std::string(kGlobal) + "#", 0) != 0);
}

}  // namespace
}  // namespace fl::ranking::model
