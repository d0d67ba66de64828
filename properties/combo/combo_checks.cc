// check_combo: runs the requested COMBO checkers (combo_properties(), in their order) sharing
// one ComboMemo. The checkers are in window_checks.cc, hygiene_checks.cc, frontend_checks.cc and
// visibility_checks.cc.
#include "properties/combo/combo_checks.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "impl/ports/assert.h"
#include "properties/combo/judge_support.h"

namespace fl::combo {

std::vector<Verdict> check_combo(const ComboRun& run, const std::vector<std::string>& properties) {
  FL_ASSERT(run.memo == nullptr);  // one check_combo at a time per run
  run.memo = std::make_shared<ComboMemo>();
  std::vector<Verdict> out;
  for (const ComboProperty& p : combo_properties()) {
    if (std::find(properties.begin(), properties.end(), p.info.name) == properties.end()) continue;
    out.push_back(p.check(run));
  }
  run.memo.reset();
  return out;
}

const std::vector<ComboProperty>& combo_properties() {
  static const std::vector<ComboProperty> props = {
      {{"db-granularity", {"COMBO-1"}, "one activity_contributions row per purchase; ranking = Σ qty (§1.4, §7.2)"},
       check_db_granularity},
      {{"quantity-conservation", {"COMBO-2"}, "Σ pushed quantity = Σ purchased per key (§1.4 可靠性)"},
       check_quantity_conservation},
      {{"one-push-per-window", {"COMBO-3"}, "one record per window with first_id and Σ qty (§1.4 推送约束)"},
       check_one_push_per_window},
      {{"timeliness", {"COMBO-4"}, "publish at window end + Δ (§3 expire_at_ms)"}, check_timeliness},
      {{"no-early-or-split", {"COMBO-5"}, "never before the window ends, never split (§6)"}, check_no_early_or_split},
      {{"entry-window-binding", {"COMBO-6"}, "an entry publishes only its own window (§4.3)"}, check_entry_binding},
      {{"pel-drains", {"COMBO-7"}, "pending list empty once quiescent (§6 XAUTOCLAIM)"}, check_pel_drains},
      {{"no-garbage-records", {"COMBO-8"}, "no empty or re-published records (§6 empty hash)"}, check_no_garbage},
      {{"ttl-hygiene", {"COMBO-9"}, "combo keys always expire (§3 TTLs)"}, check_ttl_hygiene},
      {{"stream-bounded", {"COMBO-9"}, "XADD MAXLEN ~ keeps the stream bounded (§9.1)"}, check_stream_bounded},
      {{"degradation", {"COMBO-10"}, "Redis failure degrades to an immediate push (§6)"}, check_degradation},
      {{"polling-merge", {"COMBO-11"}, "GetLatestContributions merges by window (§4.6)"}, check_polling_merge},
      {{"merge-algebra", {"COMBO-12"}, "mergeComboRecords laws (§5.2)"}, check_merge_algebra},
      {{"ui-convergence", {"COMBO-13"}, "one UI item per burst with Σ qty (§1.4 用户感知, §9.3)"},
       check_ui_convergence},
      {{"no-wrongful-drop", {"COMBO-14"}, "the id > highestId filter never loses a record (§5.4)"},
       check_no_wrongful_drop},
      {{"activity-isolation", {"COMBO-15"}, "records aggregate one activity only (§6 跨 activity)"},
       check_activity_isolation},
      {{"bounded-list", {"COMBO-16"}, "at most MAX_RECORDS, oldest dropped (§1.3 slice(-5))"}, check_bounded_list},
      {{"published-visible",
        {"COMBO-13"},
        "every published record is eventually displayed or polled (§1.4 用户感知, §4.6)"},
       check_published_visible},
  };
  return props;
}

}  // namespace fl::combo
