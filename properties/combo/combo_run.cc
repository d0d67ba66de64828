#include "properties/combo/combo_run.h"

#include <map>

namespace fl::combo {

bool touched_by_redis_loss(const ComboRun& run, int64_t from_us, int64_t to_us) {
  for (const auto& [down_us, up_us] : run.redis_outages) {
    if (from_us <= up_us && to_us >= down_us - run.aof_loss_ms * 1000) return true;
  }
  return false;
}

model::combo::Key key_of(const ContributionRecord& r) { return {r.activity_id, r.user_id, r.item_id}; }

std::vector<model::combo::Purchase> purchases_of(const ComboRun& run) {
  std::map<std::string, const PurchaseOp*> op_by_ref;
  for (const PurchaseOp& op : run.ops) op_by_ref[op.ref] = &op;
  std::vector<model::combo::Purchase> out;
  for (const RowObs& r : run.rows) {
    model::combo::Purchase p;
    p.pid = r.row.id;
    p.key = {r.row.activity_id, r.row.user_id, r.row.item_id};
    p.qty = r.row.quantity;
    p.created_at_ms = r.row.created_at;
    p.window_id = r.row.window_id;
    const std::string ref = r.client_ref.substr(0, r.client_ref.find('#'));
    auto it = op_by_ref.find(ref);
    if (it != op_by_ref.end()) {
      p.lo_us = it->second->invoke_us;
      const bool certain = it->second->result == PurchaseOp::Result::kOk && !it->second->alerted;
      // An alerted purchase's Redis step may still run later (indeterminate): no upper bound.
      p.hi_us = it->second->complete_us >= 0 && certain ? it->second->complete_us : INT64_MAX;
      p.certainty = certain ? model::combo::Certainty::kOk : model::combo::Certainty::kUncertain;
    } else {
      p.certainty = model::combo::Certainty::kUncertain;
    }
    out.push_back(p);
  }
  return out;
}

std::vector<const PublishObs*> definite_publishes(const ComboRun& run) {
  std::vector<const PublishObs*> out;
  for (const PublishObs& p : run.publishes) {
    if (p.definite && p.record) out.push_back(&p);
  }
  return out;
}

model::combo::Assignment assignment_of(const ComboRun& run) {
  std::map<model::combo::Key, std::vector<int64_t>> ids;
  std::map<int64_t, int64_t> window_of_record;
  for (const PublishObs* p : definite_publishes(run)) {
    ids[key_of(*p->record)].push_back(p->record->id);
    if (p->event.entry_window_id > 0) window_of_record[p->record->id] = p->event.entry_window_id;
  }
  return model::combo::assigned_groups(purchases_of(run), ids, window_of_record);
}

}  // namespace fl::combo
