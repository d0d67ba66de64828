#include "properties/combo/combo_run.h"

#include <map>

#include "sim/node_clock.h"

namespace fl::combo {

bool touched_by_redis_loss(const ComboRun& run, int64_t from_us, int64_t to_us) {
  for (const auto& [down_us, up_us] : run.redis_outages) {
    if (from_us <= up_us && to_us >= down_us - run.redis_loss_ms * 1000) return true;
  }
  return false;
}

model::combo::Key key_of(const ContributionRecord& r) { return {r.activity_id, r.user_id, r.item_id}; }

std::vector<std::string> path_of(const ComboRun& run, const PurchaseOp& op) {
  std::vector<std::string> places = run.service_places;
  places.push_back(op.process);
  return places;
}

std::optional<std::string> db_loss_of(const ComboRun& run, int64_t committed_us) {
  for (int64_t at : run.db_power_losses) {
    if (at >= committed_us) {
      return "power loss of db at " + std::to_string((at - sim::kEpochUs) / 1000) + "ms (synchronous below FULL)";
    }
  }
  return std::nullopt;
}

std::set<int64_t> reused_pids(const ComboRun& run) {
  std::map<int64_t, int> n;
  for (const RowObs& r : run.rows) ++n[r.row.id];
  for (const RowObs& r : run.lost_rows) ++n[r.row.id];
  std::set<int64_t> out;
  for (const auto& [pid, count] : n) if (count > 1) out.insert(pid);
  return out;
}

std::vector<model::combo::Purchase> purchases_of(const ComboRun& run) {
  std::map<std::string, const PurchaseOp*> op_by_ref;
  for (const PurchaseOp& op : run.ops) op_by_ref[op.ref] = &op;
  std::vector<model::combo::Purchase> out;
  std::vector<const RowObs*> rows;
  for (const RowObs& r : run.rows) rows.push_back(&r);
  for (const RowObs& r : run.lost_rows) rows.push_back(&r);  // lost later, purchased all the same
  for (const RowObs* rp : rows) {
    const RowObs& r = *rp;
    model::combo::Purchase p;
    p.pid = r.row.id;
    p.key = {r.row.activity_id, r.row.user_id, r.row.item_id};
    p.qty = r.row.quantity;
    p.created_at_ms = r.row.created_at;
    p.lo_us = 0;
    p.hi_us = run.end_us;
    p.optional = true;
    auto it = op_by_ref.find(r.client_ref.substr(0, r.client_ref.find('#')));
    if (it != op_by_ref.end()) {
      const PurchaseOp& op = *it->second;
      p.lo_us = op.invoke_us;
      // Answered ok and not alerted: its Redis step happened before the answer. Otherwise it may
      // have happened later (an indeterminate command) or never.
      const bool certain = op.result == PurchaseOp::Result::kOk && !op.alerted && op.complete_us >= 0;
      p.hi_us = certain ? op.complete_us : run.end_us;
      p.optional = !certain;
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace fl::combo
