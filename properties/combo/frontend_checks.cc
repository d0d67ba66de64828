// The front-end checkers (COMBO-12, 14, 16) and COMBO-12's laws.
#include "properties/combo/frontend_checks.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "properties/combo/judge_support.h"

namespace fl::combo {

using namespace detail;  // the judges' shared helpers and model names (judge_support.h)

namespace {

// Laws (c), (d), (e), (g) of COMBO-12 on one (input, output) pair.
void pair_law_violations(const std::vector<ContributionRecord>& input, const std::vector<ContributionRecord>& output,
                         std::vector<std::string>& bad) {
  std::map<int64_t, std::pair<int64_t, int64_t>> key_of_id;                   // id -> (user,item) of the input copy
  std::map<std::pair<int64_t, int64_t>, std::map<int64_t, int64_t>> max_qty;  // key -> id -> max qty
  for (const ContributionRecord& r : input) {
    key_of_id[r.id] = {r.user_id, r.item_id};
    auto& m = max_qty[{r.user_id, r.item_id}][r.id];
    m = std::max(m, r.quantity);
  }
  std::map<std::pair<int64_t, int64_t>, int64_t> out_sum;
  std::set<int64_t> out_ids;
  std::vector<int64_t> order;
  for (const ContributionRecord& r : output) {
    auto it = key_of_id.find(r.id);
    if (it == key_of_id.end() || it->second != std::make_pair(r.user_id, r.item_id)) {
      bad.push_back("(c) merged across keys: output id " + std::to_string(r.id) + " (u" + std::to_string(r.user_id) +
                    ",i" + std::to_string(r.item_id) + ")");
    }
    out_sum[{r.user_id, r.item_id}] += r.quantity;
    if (!out_ids.insert(r.id).second) bad.push_back("(e) id " + std::to_string(r.id) + " kept twice");
    order.push_back(r.id);
  }
  for (const auto& [key, ids] : max_qty) {
    int64_t expect = 0;
    for (const auto& [id, q] : ids) expect += q;
    if (out_sum[key] != expect) {
      bad.push_back("(d)/(e) Σ quantity of (u" + std::to_string(key.first) + ",i" + std::to_string(key.second) +
                    ") over distinct ids " + std::to_string(expect) + " became " + std::to_string(out_sum[key]));
    }
  }
  std::map<int64_t, size_t> first_pos;
  for (size_t i = 0; i < input.size(); ++i) first_pos.emplace(input[i].id, i);
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    if (first_pos.count(order[i]) && first_pos.count(order[i + 1]) && first_pos[order[i]] > first_pos[order[i + 1]]) {
      bad.push_back("(g) order changed");
      break;
    }
  }
}

}  // namespace

std::vector<std::string> merge_law_violations(const MergeFn& merge, const std::vector<ContributionRecord>& input) {
  std::vector<std::string> bad;
  JsArray x = to_js(input);
  JsArray y;
  try {
    y = merge(x);
  } catch (const std::exception& e) { return {std::string("(a) threw: ") + e.what()}; }
  if (snapshot(x) != input) bad.push_back("(b) mutated its input");
  for (const JsRecordPtr& r : y) {
    if (!r) bad.push_back("(c) produced a null");
  }
  pair_law_violations(input, snapshot(y), bad);
  try {  // (f) idempotence
    JsArray z = merge(to_js(snapshot(y)));
    if (snapshot(z) != snapshot(y)) bad.push_back("(f) m(m(x)) != m(x)");
  } catch (const std::exception& e) { bad.push_back(std::string("(f)/(a) second application threw: ") + e.what()); }
  return bad;
}

std::vector<std::string> observed_merge_violations(const MergeCall& call) {
  if (!call.error.empty()) return {"(a) threw: " + call.error};
  for (bool null : call.input_null) {
    if (null) return {};  // laws are stated for arrays of well-formed records
  }
  std::vector<std::string> bad;
  if (call.input_after != call.input) bad.push_back("(b) mutated its input");
  pair_law_violations(call.input, call.output, bad);
  return bad;
}

Verdict check_merge_algebra(const ComboRun& run) {
  Judge j("merge-algebra", {"COMBO-12"}, "mergeComboRecords obeys laws (a)-(e), (g) on every call the front ends made");
  // (f) needs a second application the pages never make: the RapidCheck suite
  // (combo_merge_rc_test.cc) checks it on the functions themselves.
  const std::set<int64_t> reused = reused_pids(run);
  for (const UiObs& u : run.ui) {
    for (const MergeCall& call : u.event.merges) {
      // The laws assume an id names one window (a DB id); a power loss that made the DB hand
      // an id out twice can give the page two windows (keys) of one id: such a call is left unjudged.
      std::map<int64_t, Key> key_of_id;
      bool twice = false;
      for (const ContributionRecord& r : call.input) {
        auto [it, fresh] = key_of_id.emplace(r.id, key_of(r));
        twice = twice || (!fresh && !(it->second == key_of(r)) && reused.count(r.id) > 0);
      }
      if (twice) {
        j.v.exempt("merge of a window whose id the DB handed out twice after a power loss");
        continue;
      }
      const std::vector<std::string> bad = observed_merge_violations(call);
      j.expect(bad.empty(), [&] {
        std::string all;
        for (const std::string& b : bad) all += (all.empty() ? "" : "; ") + b;
        return u.event.client + " " + u.event.cause + " at " + t(u.time_us) + ": " + all;
      });
    }
  }
  return j.v;
}

Verdict check_no_wrongful_drop(const ComboRun& run) {
  Judge j("no-wrongful-drop", {"COMBO-14"},
          "a WS record is discarded only if the same id with the same or larger quantity is displayed");
  const std::set<int64_t> reused = reused_pids(run);
  for (const UiObs& u : run.ui) {
    if (u.event.cause != "ws" || !u.event.incoming) continue;
    const ContributionRecord& r = *u.event.incoming;
    if (r.activity_id != u.event.activity_id) continue;
    // The page tells windows apart by id (000:L340-368); when a power loss made the DB hand the id
    // out twice, a displayed window of another key holds it, and no page can keep both (as in
    // merge-algebra). Seed 3 of explore-hardened-off.
    bool clash = false;
    for (const ContributionRecord& x : u.event.before) clash = clash || (x.id == r.id && !(key_of(x) == key_of(r)));
    if (clash && reused.count(r.id)) {
      j.v.exempt("WS record whose id a displayed window of another key holds (the DB handed it out twice)");
      continue;
    }
    auto shows = [&](const std::vector<ContributionRecord>& list) {
      for (const ContributionRecord& x : list)
        if (x.id == r.id && x.quantity >= r.quantity) return true;
      return false;
    };
    const bool kept = shows(u.event.after) || shows(u.event.before);
    bool truncated = u.event.after.size() >= kMaxRecords;
    for (const ContributionRecord& x : u.event.after) truncated = truncated && x.id > r.id;
    j.expect(kept || truncated, [&] { return u.event.client + " at " + t(u.time_us) + " dropped WS " + rec(r); });
  }
  return j.v;
}

Verdict check_bounded_list(const ComboRun& run) {
  Judge j("bounded-list", {"COMBO-16"}, "records.length <= MAX_RECORDS and truncation drops the oldest");
  for (const UiObs& u : run.ui) {
    j.expect(u.event.after.size() <= kMaxRecords,
             [&] { return u.event.client + " shows " + std::to_string(u.event.after.size()) + " items"; });
    std::vector<ContributionRecord> candidates = u.event.before;
    if (u.event.incoming && u.event.incoming->activity_id == u.event.activity_id)
      candidates.push_back(*u.event.incoming);
    for (const auto& r : u.event.poll_records)
      if (r) candidates.push_back(*r);
    int64_t oldest_kept = INT64_MAX;
    for (const ContributionRecord& r : u.event.after) oldest_kept = std::min(oldest_kept, r.id);
    // A candidate is kept when an item shows it, or may have absorbed it (same user and item
    // within 3 s: the seed's merge, 000:L355).
    auto kept = [&](const ContributionRecord& c) {
      for (const ContributionRecord& r : u.event.after) {
        if (r.id == c.id || (r.user_id == c.user_id && r.item_id == c.item_id &&
                             std::llabs(r.created_at - c.created_at) <= run.window_ms))
          return true;
      }
      return false;
    };
    if (u.event.after.size() < kMaxRecords) continue;
    for (const ContributionRecord& r : candidates) {
      if (kept(r)) continue;
      j.expect(r.id < oldest_kept, [&] {
        return u.event.client + " at " + t(u.time_us) + " dropped newer " + rec(r) + " but kept older id " +
               std::to_string(oldest_kept);
      });
    }
  }
  return j.v;
}

}  // namespace fl::combo
