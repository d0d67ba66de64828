#include "properties/combo/combo_run.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "sim/node_clock.h"

namespace fl::combo {

namespace {

// How much further back than `reach_us` before a Redis crash at `down_us` acked writes may be
// lost. The fsync (snapshot) runs in Redis's cron every interval of Redis's clock: a pause of the
// process that lasted until within reach of the crash froze it (nothing written since the last
// fsync before the pause is durable), and so did a jump of Redis's clock back by J within J +
// reach of the crash (the interval is measured on that clock, as Redis 7's everysec compares
// server.mstime with aof_last_fsync). The reach then starts `reach_us` before that fault.
int64_t redis_stalled_us(const sim::FaultLog& log, int64_t down_us, int64_t reach_us) {
  int64_t from = down_us - reach_us;
  for (bool grew = true; grew;) {  // a stall may reach back to another stall
    grew = false;
    for (const sim::FaultRecord& f : log) {
      if (f.process != "redis" && f.node != "redis") continue;
      if (f.time_us >= down_us || f.time_us - reach_us >= from) continue;
      const bool paused = f.kind == sim::FaultKind::kPause && f.time_us + f.duration_us >= from;
      const bool clock_back = f.kind == sim::FaultKind::kClockJump && f.value < 0 && f.time_us - f.value >= from;
      if (!paused && !clock_back) continue;
      from = f.time_us - reach_us;
      grew = true;
    }
  }
  return down_us - reach_us - from;
}

}  // namespace

std::vector<ComboRun::RedisOutage> redis_outages_of(const sim::FaultLog& log, int64_t end_us, int64_t reach_us) {
  std::vector<ComboRun::RedisOutage> out;
  for (const sim::FaultRecord& f : log) {
    if (f.process != "redis") continue;
    if (f.kind == sim::FaultKind::kCrash) out.push_back({f.time_us, end_us, redis_stalled_us(log, f.time_us, reach_us)});
    if (f.kind == sim::FaultKind::kRestart && !out.empty() && out.back().up_us == end_us) out.back().up_us = f.time_us;
  }
  return out;
}

std::vector<ComboRun::ClockShift> clock_shifts_of(const sim::FaultLog& log, const std::vector<std::string>& places,
                                                  int64_t window_ms, int64_t end_us) {
  std::vector<ComboRun::ClockShift> out;
  const int64_t w_us = window_ms * 1000;
  auto is_service = [&](const std::string& place) { return std::find(places.begin(), places.end(), place) != places.end(); };
  for (const sim::FaultRecord& f : log) {
    if (!is_service(f.process) && !is_service(f.node)) continue;  // clock faults name the node
    // A clock that jumped by J at τ moves every window it times after τ by J against the windows
    // before: the one open at τ lasts J less (forward) or more (back), and every later one is
    // timed J off the world's time. So every purchase from one window before τ to the end may
    // have been timed J off: a purchase made just after a shortened window closed opens a window
    // that ends J later than the purchases before τ alone would say (seed 17156).
    if (f.kind == sim::FaultKind::kClockJump) out.push_back({f.time_us - w_us, end_us, std::llabs(f.value), f.describe()});
    // A drifting clock stretches every window after the drift began by ppm * window.
    if (f.kind == sim::FaultKind::kClockDrift) out.push_back({f.time_us - w_us, end_us, std::llabs(f.value) * w_us / 1'000'000 + 1, f.describe()});
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
  for (const auto& [pid, count] : n) if (count > 1) out.insert(pid);
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
