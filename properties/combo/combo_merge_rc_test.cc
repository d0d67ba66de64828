// RapidCheck: the front-end merge (mergeComboRecords, COMBO-12) and the polling merge
// (GetLatestContributions, COMBO-11) as pure functions over generated record lists.
// spec's versions must FAIL the laws (the tests expect a counterexample); hardened's must hold.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>

#include "properties/combo/combo_checks.h"

namespace fl::combo {
namespace {

// Records of 2 users x 2 items with ids 1..6 (duplicates allowed), times within 8 s.
rc::Gen<std::vector<ContributionRecord>> gen_records() {
  return rc::gen::container<std::vector<ContributionRecord>>(rc::gen::exec([] {
    ContributionRecord r;
    r.id = *rc::gen::inRange<int64_t>(1, 7);
    r.activity_id = 1;
    r.user_id = *rc::gen::inRange<int64_t>(1, 3);
    r.item_id = *rc::gen::inRange<int64_t>(1, 3);
    r.item_type = "t" + std::to_string(r.item_id);
    r.item_name = "n";
    r.item_icon = "i";
    r.nickname = "u";
    r.quantity = r.combo_count = *rc::gen::inRange<int64_t>(1, 4);
    r.created_at = 1000 * r.id + *rc::gen::inRange<int64_t>(0, 2000);
    return r;
  }));
}

// Inputs the laws are stated for: an id names one record (same key, time) — copies may differ
// only in quantity (a later, larger push of the same window).
std::vector<ContributionRecord> well_formed(std::vector<ContributionRecord> v) {
  std::map<int64_t, ContributionRecord> first;
  for (ContributionRecord& r : v) {
    auto [it, inserted] = first.emplace(r.id, r);
    if (!inserted) {
      const int64_t q = r.quantity;
      r = it->second;
      r.quantity = r.combo_count = q;
    }
  }
  return v;
}

RC_GTEST_PROP(MergeComboRecords, HardenedObeysEveryLaw, ()) {
  const auto input = well_formed(*gen_records());
  const auto bad = merge_law_violations([](const JsArray& x) { return merge_combo_records_dedup(x, true); }, input);
  RC_ASSERT(bad.empty());
}

// spec must fail the laws: RapidCheck searches for (and shrinks) a counterexample; the test
// expects one to exist for each law named.
bool spec_law_holds(char law) {
  return rc::check(std::string("spec mergeComboRecords law (") + law + ")", [law] {
    const auto input = well_formed(*gen_records());
    for (const std::string& v : merge_law_violations(merge_combo_records_spec, input)) RC_ASSERT(v[1] != law);
  });
}

TEST(MergeComboRecords, SpecViolatesTheLaws) {
  EXPECT_FALSE(spec_law_holds('a')) << "spec never throws?";
  EXPECT_FALSE(spec_law_holds('b')) << "spec never mutates its input?";
  EXPECT_FALSE(spec_law_holds('d')) << "spec conserves Σ over distinct ids (it sums duplicated ids)?";
}

TEST(MergeComboRecords, SpecConcreteCounterexamples) {
  ContributionRecord a;
  a.id = 1;
  a.user_id = 1;
  a.item_id = 1;
  a.quantity = a.combo_count = 1;
  a.created_at = 0;
  // The same record twice (a WS push and a poll of one window): summed, not replaced.
  JsArray twice = merge_combo_records_spec(to_js({a, a}));
  ASSERT_EQ(twice.size(), 1u);
  EXPECT_EQ(twice[0]->quantity, 2);
  // Windows chained 2.5 s apart: after the first splice the stored index is stale and
  // result[existingIdx] is undefined -> TypeError (the WS/poll handler dies).
  ContributionRecord c2 = a, c3 = a;
  c2.id = 2;
  c2.created_at = 2500;
  c3.id = 3;
  c3.created_at = 5000;
  EXPECT_THROW(merge_combo_records_spec(to_js({a, c2, c3})), JsTypeError);
  // Mutation: the caller's object changes under it.
  JsArray shared = to_js({a, c2});
  merge_combo_records_spec(shared);
  EXPECT_NE(shared[1]->quantity, 1);
}

ContributionRow row(int64_t id, int64_t user, int64_t item, int64_t at, std::optional<int64_t> window) {
  ContributionRow r;
  r.id = id;
  r.activity_id = 1;
  r.user_id = user;
  r.item_id = item;
  r.quantity = 1;
  r.created_at = at;
  r.window_id = window;
  return r;
}

TEST(PollingMerge, SpecLeavesNilsAndMergesAcrossWindows) {
  // Rows DESC by created_at: one user, same item, 10 s apart -> two windows, merged by spec.
  auto out = merge_latest_spec({row(2, 1, 1, 10'000, std::nullopt), row(1, 1, 1, 0, std::nullopt)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].has_value());
  EXPECT_FALSE(out[1].has_value()) << "records[i] slot left nil";
  EXPECT_EQ(out[0]->quantity, 2) << "rows 10 s apart merged (negative difference <= 3000)";
  EXPECT_EQ(out[0]->id, 2) << "id is the newest row, not first_id";
}

RC_GTEST_PROP(PollingMerge, HardenedIsOneRecordPerWindow, ()) {
  const int n = *rc::gen::inRange(0, 12);
  std::vector<ContributionRow> rows;
  std::map<std::pair<int64_t, int64_t>, int64_t> sum;  // (activity, window) -> Σ
  for (int i = 0; i < n; ++i) {
    const int64_t window = *rc::gen::inRange<int64_t>(1, i + 2);
    rows.push_back(row(100 + i, window % 3, 1, i * 700, window));
    sum[{1, window}] += 1;
  }
  const auto out = merge_latest_by_window(rows);
  RC_ASSERT(out.size() == sum.size());
  int64_t prev = INT64_MAX;
  for (const auto& r : out) {
    RC_ASSERT(r.has_value());
    RC_ASSERT(r->id < prev);
    prev = r->id;
  }
  int64_t total = 0;
  for (const auto& r : out) total += r->quantity;
  RC_ASSERT(total == n);
}

}  // namespace
}  // namespace fl::combo
