#include "impl/combo/frontend.h"

#include "impl/combo/probe.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

namespace fl::combo {

namespace {

const JsRecord& deref(const JsRecordPtr& p, const char* what) {
  // JS: reading a property of null/undefined throws TypeError.
  if (!p) throw JsTypeError(std::string("Cannot read properties of undefined (reading '") + what + "')");
  return *p;
}

ContributionRecord record_of_row(const ContributionRow& row, int64_t quantity) {
  ContributionRecord r;
  r.id = row.id;
  r.activity_id = row.activity_id;
  r.user_id = row.user_id;
  r.nickname = row.nickname;
  r.avatar_url = row.avatar_url;
  r.star_id = row.star_id;
  r.item_id = row.item_id;
  r.item_type = row.item_type;
  r.item_name = row.item_name;
  r.item_icon = row.item_icon;
  r.quantity = quantity;
  r.combo_count = quantity;
  r.created_at = row.created_at;
  return r;
}

// CB-FE-NEWEST-FIRST: newest window (largest first_id) first. COMBO-16.
void sort_newest_first(JsArray& a) {
  std::stable_sort(a.begin(), a.end(), [](const JsRecordPtr& x, const JsRecordPtr& y) { return x->id > y->id; });
}

}  // namespace

JsArray merge_combo_records_spec(const JsArray& records) {
  if (records.empty()) return records;
  std::map<std::string, int64_t> index_by_key;  // JS Map: key -> index into result
  JsArray result = records;                     // [...records]: the objects stay shared
  for (int64_t i = static_cast<int64_t>(result.size()) - 1; i >= 0; --i) {
    const JsRecordPtr r = result[static_cast<size_t>(i)];
    const JsRecord& rv = deref(r, "user_id");
    const std::string key = std::to_string(rv.user_id) + ":" + std::to_string(rv.item_id);
    auto found = index_by_key.find(key);
    if (found != index_by_key.end()) {
      const int64_t existing_idx = found->second;
      // result[existingIdx]: undefined once splices have shifted the array under the index.
      JsRecordPtr existing =
          existing_idx < static_cast<int64_t>(result.size()) ? result[static_cast<size_t>(existing_idx)] : nullptr;
      const JsRecord& ev = deref(existing, "created_at");
      if (std::llabs(ev.created_at - rv.created_at) <= kComboWindowMs) {
        existing->quantity += rv.quantity;  // mutates an object the caller still holds
        existing->combo_count = existing->quantity;
        if (rv.id < existing->id) existing->id = rv.id;
        result.erase(result.begin() + i);  // result.splice(i, 1)
        continue;
      }
    }
    index_by_key[key] = i;
  }
  return result;
}

JsArray merge_combo_records_dedup(const JsArray& records, bool keep_larger) {
  // CB-FE-DEDUP-MERGE (COMBO-12): the server already merged each window into one record with
  // id = first_id, so the page only de-duplicates by id (replacement, never summation), skips
  // nulls and never mutates its input. 000:L356 "existing.quantity+=r.quantity" sums instead.
  JsArray result;
  std::map<int64_t, size_t> index_by_id;
  for (const JsRecordPtr& r : records) {
    if (!r) continue;
    auto it = index_by_id.find(r->id);
    if (it == index_by_id.end()) {
      index_by_id[r->id] = result.size();
      result.push_back(std::make_shared<JsRecord>(*r));
    } else if (keep_larger && r->quantity > result[it->second]->quantity) {
      // CB-FE-KEEP-LARGER (COMBO-12/13): a window re-published after a Redis data loss, or an
      // older display, must not shrink what is shown.
      result[it->second] = std::make_shared<JsRecord>(*r);
    }
  }
  return result;
}

JsArray merge_combo_records(const Fixes& fixes, const JsArray& records) {
  return fixes.has(Fix::kFeDedupMerge) ? merge_combo_records_dedup(records, fixes.has(Fix::kFeKeepLarger))
                                       : merge_combo_records_spec(records);
}

std::vector<ContributionRecord> snapshot(const JsArray& records) {
  std::vector<ContributionRecord> out;
  out.reserve(records.size());
  for (const JsRecordPtr& r : records) out.push_back(r ? *r : ContributionRecord{});
  return out;
}

JsArray to_js(const std::vector<ContributionRecord>& records) {
  JsArray out;
  for (const ContributionRecord& r : records) out.push_back(std::make_shared<JsRecord>(r));
  return out;
}

JsArray ContributionView::merge(const JsArray& input) {
  const Fixes fixes = fixes_;
  auto merge = [fixes](const JsArray& x) { return merge_combo_records(fixes, x); };
  return screen_ != nullptr ? screen_->run_merge(merge, input) : merge(input);
}

int64_t ContributionView::highest_id() const {
  int64_t best = 0;
  for (const JsRecordPtr& r : records_) best = std::max(best, deref(r, "id").id);
  return best;
}

void ContributionView::keep_bounded(JsArray merged, bool from_ws) {
  if (fixes_.has(Fix::kFeNewestFirst)) {
    // CB-FE-NEWEST-FIRST (COMBO-16): one order for both paths, newest window first; the oldest go.
    sort_newest_first(merged);
    if (merged.size() > kMaxRecords) merged.resize(kMaxRecords);
  } else if (from_ws) {
    // 000:L380 "records.value=merged.slice(-MAX_RECORDS)": keeps the LAST five, whatever the order.
    const size_t from = merged.size() > kMaxRecords ? merged.size() - kMaxRecords : 0;
    merged.erase(merged.begin(), merged.begin() + static_cast<int64_t>(from));
  } else if (merged.size() > kMaxRecords) {
    merged.resize(kMaxRecords);  // 000:L390 "records.value=combined.slice(0,MAX_RECORDS)"
  }
  records_ = std::move(merged);
}

void ContributionView::on_ws_message(const std::optional<Payload>& payload) {
  if (!payload || payload->activity_id != activity_id_) return;
  if (!payload->record) return;
  JsRecordPtr record = std::make_shared<JsRecord>(*payload->record);
  // 000:L378 "if(record.id>highestIdRef()){": CB-FE-NO-ID-FILTER (COMBO-14) drops it, as a
  // merged window's id is its OLDEST pid, usually below ids already shown.
  if (!fixes_.has(Fix::kFeNoIdFilter) && record->id <= highest_id()) return;
  JsArray combined = records_;
  combined.push_back(record);
  keep_bounded(merge(combined), true);
}

void ContributionView::on_poll_response(const std::vector<std::optional<ContributionRecord>>& list) {
  JsArray js;
  for (const auto& r : list) js.push_back(r ? std::make_shared<JsRecord>(*r) : nullptr);
  if (fixes_.has(Fix::kFePollAll)) {
    // CB-FE-POLL-ALL (COMBO-13): every returned window replaces its displayed copy by id; nulls
    // are skipped.
    JsArray combined;
    for (const JsRecordPtr& r : js) {
      if (r) combined.push_back(r);
    }
    combined.insert(combined.end(), records_.begin(), records_.end());
    keep_bounded(merge(combined), false);
    return;
  }
  // fetchLatest as 000:L387-394 shows it; the lines the seed does not show are reconstructed (see
  // docs/systems/combo.md): the first record decides whether anything is new, records newer than
  // the last seen timestamp are prepended.
  if (js.empty()) return;
  const JsRecord& first_record = deref(js[0], "id");
  const bool is_new = first_record.id != latest_id_ || first_record.created_at != latest_timestamp_;
  JsArray new_records;
  for (const JsRecordPtr& r : js) {
    if (deref(r, "created_at").created_at > latest_timestamp_) new_records.push_back(r);
  }
  if (!is_new) return;
  JsArray combined = new_records;
  combined.insert(combined.end(), records_.begin(), records_.end());
  keep_bounded(merge(combined), false);
  // Read after the merge, as JS does: mergeComboRecords may have mutated firstRecord.
  latest_timestamp_ = first_record.created_at;
  latest_id_ = first_record.id;
}

std::vector<std::optional<ContributionRecord>> merge_latest_spec(const std::vector<ContributionRow>& rows) {
  // records := make([]*pb.ContributionRecord, len(contributions)); records[i] = ...; i = j
  std::vector<std::optional<ContributionRecord>> records(rows.size());
  size_t i = 0;
  while (i < rows.size()) {
    const ContributionRow& first = rows[i];
    size_t j = i + 1;
    int64_t total = first.quantity;
    while (j < rows.size() && rows[j].user_id == first.user_id && rows[j].item_id == first.item_id &&
           rows[j].created_at - first.created_at <= kComboWindowMs) {
      total += rows[j].quantity;
      ++j;
    }
    records[i] = record_of_row(first, total);
    i = j;
  }
  return records;
}

std::vector<std::optional<ContributionRecord>> merge_latest_by_window(const std::vector<ContributionRow>& rows) {
  // COMBO-11: group by the window the server assigned (never by time or adjacency).
  struct Group {
    const ContributionRow* first = nullptr;
    int64_t quantity = 0;
  };
  // (activity, user, item, window) -> group: a window id is its opener's pid, which a DB power
  // loss (synchronous NORMAL/OFF) may hand to another key's purchase too.
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, Group> groups;
  for (const ContributionRow& row : rows) {
    Group& g = groups[{row.activity_id, row.user_id, row.item_id, row.window_id.value_or(row.id)}];
    if (g.first == nullptr || row.id < g.first->id) g.first = &row;
    g.quantity += row.quantity;
  }
  std::vector<std::optional<ContributionRecord>> out;
  for (const auto& [key, g] : groups) out.push_back(record_of_row(*g.first, g.quantity));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->id > b->id; });
  return out;
}

}  // namespace fl::combo
