#include "properties/combo/combo_run.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "sim/node_clock.h"

namespace fl::combo {

namespace {

// The kinds of fault the Redis loss rules weigh one by one (FaultBudget::records).
using enum sim::FaultKind;

// How much further back than `reach_us` before a Redis crash at `down_us` acked writes may be
// lost. The fsync (snapshot) runs in Redis's cron every interval of Redis's clock: a pause of the
// process that lasted until within reach of the crash froze it (nothing written since the last
// fsync before the pause is durable), and so did a jump of Redis's clock back by J within J +
// reach of the crash (the interval is measured on that clock, as Redis 7's everysec compares
// server.mstime with aof_last_fsync). The reach then starts `reach_us` before that fault.
int64_t redis_stalled_us(const props::FaultBudget& faults, int64_t down_us, int64_t reach_us) {
  auto stalls = faults.records(kPause);
  const auto jumps = faults.records(kClockJump);
  stalls.insert(stalls.end(), jumps.begin(), jumps.end());
  int64_t from = down_us - reach_us;
  for (bool grew = true; grew;) {  // a stall may reach back to another stall
    grew = false;
    for (const auto* f : stalls) {
      if (f->process != "redis" && f->node != "redis") continue;
      if (f->time_us >= down_us || f->time_us - reach_us >= from) continue;
      const bool paused = f->kind == kPause && f->duration_us > 0 && f->time_us + f->duration_us >= from;
      const bool clock_back = f->kind == kClockJump && f->value < 0 && f->time_us - f->value >= from;
      if (!paused && !clock_back) continue;
      from = f->time_us - reach_us;
      grew = true;
    }
  }
  return down_us - reach_us - from;
}

}  // namespace

std::vector<ComboRun::RedisOutage> redis_outages_of(const props::FaultBudget& faults, int64_t reach_us) {
  std::vector<ComboRun::RedisOutage> out;
  for (const auto& [down, up] : faults.downtimes("redis")) {
    out.push_back({down, up, redis_stalled_us(faults, down, reach_us)});
  }
  return out;
}

props::ClockReach window_clock(const ComboRun& run, int64_t from_us, int64_t to_us) {
  const int64_t w_us = run.window_ms * 1000;
  props::ClockReach out;
  for (const std::string& node : run.clock_nodes) {
    // A clock sent back by J before the instant keeps a window opened up to J earlier open until
    // it: how far back any jump of this clock reaches by to_us is its error since the run began.
    const int64_t back_us = run.faults.clock(node, sim::kEpochUs, to_us).error_us;
    const props::ClockReach c = run.faults.clock(node, from_us - w_us - back_us, to_us + w_us + back_us);
    if (c.error_us <= out.error_us) continue;
    out = c;
  }
  return out;
}

std::vector<ForwardJump> forward_clock_jumps(const ComboRun& run) {
  std::vector<ForwardJump> out;
  for (const auto* f : run.faults.records(kClockJump)) {
    if (f->value <= 0) continue;  // back, or 0 ms: no window ends early
    const std::string& node = f->node.empty() ? f->process : f->node;
    if (std::find(run.clock_nodes.begin(), run.clock_nodes.end(), node) == run.clock_nodes.end()) continue;
    out.push_back({f->time_us, f->value, run.faults.clock(node, f->time_us - 1, f->time_us).what});
  }
  return out;
}

int64_t loss_from_us(const ComboRun& run, const ComboRun::RedisOutage& o) {
  // An eviction takes every write its key ever took, but only from windows still needing the key
  // at that instant: [from, to] must hold it. Its millisecond, as Redis's times of purchases are
  // (RowObs::redis_us): the purchase whose command triggered it is at the same instant.
  if (o.eviction()) return o.down_us / 1000 * 1000;
  return o.down_us - run.redis_loss_ms * 1000 - o.stalled_us;
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
  std::map<int64_t, int> committed;
  for (int64_t pid : run.committed_pids) n[pid] = std::max(n[pid], ++committed[pid]);
  std::set<int64_t> out;
  for (const auto& [pid, count] : n)
    if (count > 1) out.insert(pid);
  return out;
}

bool redis_step_certain(const PurchaseOp& op) {
  return op.result == PurchaseOp::Result::kOk && !op.alerted && op.complete_us >= 0;
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
      const bool certain = redis_step_certain(op);
      p.hi_us = certain ? op.complete_us : run.end_us;
      p.optional = !certain;
    }
    // Exact boundaries: the instant Redis counted it, where the history makes it certain.
    if (r.redis_us >= 0) p.lo_us = p.hi_us = r.redis_us;
    out.push_back(p);
  }
  return out;
}

}  // namespace fl::combo
