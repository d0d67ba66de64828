#include "impl/ranking/watermark.h"

#include <algorithm>

#include "impl/ports/text.h"

namespace fl::ranking {

namespace {

int rank_of(const std::string& state) {
  static const std::map<std::string, int> kRank = {{"OPEN", 0}, {"CLOSED", 1}, {"FINAL", 2}, {"PURGED", 3}};
  auto it = kRank.find(state);
  return it == kRank.end() ? 0 : it->second;
}

// The state the window watermark gives a window ending at `end` (004:L154): CLOSED once the
// watermark passed its end, FINAL once it passed end + allowed lateness.
std::string state_at(int64_t watermark, int64_t end, const WatermarkOptions& o) {
  if (watermark == kNoWatermark || watermark < end) return "OPEN";
  return watermark < end + o.allowed_lateness_ms ? "CLOSED" : "FINAL";
}

SqlStatement window_row(int32_t kp, const std::string& id, const std::string& state, int64_t watermark) {
  const std::vector<std::string> f = split(id, '#');
  return sql_statement(
      "INSERT OR REPLACE INTO window_state (keyed_partition, scope_id, window_type, window_start, "
      "window_end, state, input_watermark, offset_digest, final_versions, checkpoint_ref, "
      "reconciliation) VALUES (?, ?, ?, ?, ?, ?, ?, '', '', '', '')",
      kp, f[0], f[1], std::stoll(f[2]), std::stoll(f[3]), state, watermark);
}

std::pair<std::string, std::string> source_of(const std::string& key) {
  const size_t bar = key.rfind('|');
  return {key.substr(0, bar), key.substr(bar + 1)};
}

// The idle record of 004:L152: idle start and end, resume offset, late count; rejoin when known.
SqlStatement idle_row(int32_t kp, const std::string& key, const SourcePartition& sp, int64_t rejoin_us,
                      int64_t rejoin_offset, int64_t rejoin_watermark) {
  const auto [source, partition] = source_of(key);
  return sql_statement(
      "INSERT OR REPLACE INTO partition_idle (keyed_partition, source, source_partition, "
      "idle_start_us, last_event_us, last_source_offset, idle_end_us, resume_offset, rejoin_us, "
      "rejoin_offset, rejoin_watermark, late_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      kp, source, std::stoll(partition), sp.idle_start_us, sp.last_event_us, sp.idle_last_offset, sp.idle_end_us,
      sp.resume_offset, rejoin_us, rejoin_offset, rejoin_watermark, sp.late_count);
}

// A source is complete while every partition it has is in the non-idle set (004:L151).
std::map<std::string, bool> completeness(const WatermarkState& ws) {
  std::map<std::string, bool> out;
  for (const auto& [key, sp] : ws.sources) {
    auto [it, fresh] = out.try_emplace(source_of(key).first, true);
    it->second = it->second && sp.status == "ACTIVE";
  }
  return out;
}

void queue_completeness(WatermarkState& ws, int32_t kp, const std::map<std::string, bool>& before, int64_t now_us) {
  for (const auto& [source, complete] : completeness(ws)) {
    auto it = before.find(source);
    if (it != before.end() && it->second == complete) continue;
    ws.pending.push_back(
        sql_statement("INSERT OR REPLACE INTO source_status (keyed_partition, source, complete, at_us) "
                      "VALUES (?, ?, ?, ?)",
                      kp, source, int64_t{complete ? 1 : 0}, now_us));
  }
}

// 004:L149-150: min over the non-idle partitions of each source, then min over the required
// sources. A required source not seen yet leaves the watermark undefined; a source whose partitions
// are all idle or catching up is left out (and incomplete).
int64_t computed_watermark(const WatermarkState& ws, const WatermarkOptions& o) {
  std::map<std::string, int64_t> source_wm;
  std::map<std::string, bool> seen;
  for (const auto& [key, sp] : ws.sources) {
    const std::string source = source_of(key).first;
    seen[source] = true;
    if (sp.status != "ACTIVE" || sp.max_event_ms == kNoWatermark) continue;
    const int64_t pwm = sp.max_event_ms - o.out_of_orderness_ms;
    auto [it, fresh] = source_wm.try_emplace(source, pwm);
    if (!fresh) it->second = std::min(it->second, pwm);
  }
  int64_t wm = kNoWatermark;
  for (const std::string& s : o.required_sources) {
    if (!seen.count(s)) return kNoWatermark;
    auto it = source_wm.find(s);
    if (it == source_wm.end()) continue;
    wm = wm == kNoWatermark ? it->second : std::min(wm, it->second);
  }
  return wm;
}

// Recomputes the window watermark and moves every window forward to the state it gives.
void advance(WatermarkState& ws, const WatermarkOptions& o, int32_t kp) {
  const int64_t wm = computed_watermark(ws, o);
  if (wm == kNoWatermark) return;  // nothing to take the minimum over: the watermark stays
  ws.watermark = wm;               // spec: the formula of 004:L148-150 as it stands
  for (auto& [id, state] : ws.windows) {
    const std::string target = state_at(ws.watermark, window_end(id), o);
    if (rank_of(target) <= rank_of(state)) continue;  // states only move forward (004:L153)
    state = target;
    ws.pending.push_back(window_row(kp, id, state, ws.watermark));
  }
}

}  // namespace

std::string window_id(const std::string& scope, const std::string& window_type, int64_t start, int64_t end) {
  return scope + "#" + window_type + "#" + std::to_string(start) + "#" + std::to_string(end);
}

int64_t window_end(const std::string& id) { return std::stoll(id.substr(id.rfind('#') + 1)); }

void WatermarkState::encode(std::string& out) const {
  const auto field = [&out](int64_t v) {
    out += '\t';
    append_decimal(out, v);
  };
  out += "W";
  field(watermark);
  out += '\n';
  for (const auto& [key, sp] : sources) {
    (out += "P\t").append(key);
    field(sp.max_event_ms);
    field(sp.last_event_us);
    field(sp.max_source_offset);
    (out += '\t').append(sp.status);
    field(sp.idle_start_us);
    field(sp.idle_end_us);
    field(sp.resume_offset);
    field(sp.late_count);
    field(sp.idle_last_offset);
    out += '\n';
  }
  for (const auto& [id, state] : windows) (((out += "X\t").append(id) += '\t').append(state) += '\n');
}

bool WatermarkState::decode_line(const std::vector<std::string_view>& f) {
  const auto num = [](std::string_view v) { return parse_decimal(v).value(); };  // as PartitionState::decode
  if (f[0] == "W" && f.size() == 2) {
    watermark = num(f[1]);
  } else if (f[0] == "P" && f.size() == 11) {
    SourcePartition& sp = sources[std::string(f[1])];
    sp.max_event_ms = num(f[2]);
    sp.last_event_us = num(f[3]);
    sp.max_source_offset = num(f[4]);
    sp.status = std::string(f[5]);
    sp.idle_start_us = num(f[6]);
    sp.idle_end_us = num(f[7]);
    sp.resume_offset = num(f[8]);
    sp.late_count = num(f[9]);
    sp.idle_last_offset = num(f[10]);
  } else if (f[0] == "X" && f.size() == 3) {
    windows[std::string(f[1])] = std::string(f[2]);
  } else {
    return false;
  }
  return true;
}

void observe_record(WatermarkState& ws, const WatermarkOptions& o, const RankFixes& fixes, int32_t kp,
                    int64_t keyed_offset, const std::string& source, const std::string& source_partition,
                    int64_t source_offset, int64_t event_ms, int64_t now_us) {
  const std::map<std::string, bool> before = completeness(ws);
  const std::string key = source + "|" + source_partition;
  auto [it, fresh] = ws.sources.try_emplace(key);
  SourcePartition& sp = it->second;
  if (fresh && ws.watermark != kNoWatermark && fixes.has(RankFix::kNewPartitionCatchesUp)) {
    // RK-NEW-PARTITION-CATCHUP: a partition first seen after the watermark exists joins the
    // non-idle set the way a returning idle one does (004:L152), so it cannot pull the minimum back.
    sp.status = "CATCHING_UP";
  }
  if (sp.status == "IDLE") {
    // 004:L152: it returns CATCHING_UP, and the resume position and time are recorded.
    sp.status = "CATCHING_UP";
    sp.idle_end_us = now_us;
    sp.resume_offset = keyed_offset;
    sp.late_count = 0;
    ws.pending.push_back(idle_row(kp, key, sp, -1, -1, kNoWatermark));
  }
  const bool continues = source_offset > sp.max_source_offset;  // the offset-continuity check (choice)
  sp.max_source_offset = std::max(sp.max_source_offset, source_offset);
  sp.max_event_ms = std::max(sp.max_event_ms, event_ms);
  sp.last_event_us = now_us;
  if (sp.status == "CATCHING_UP" && continues &&
      (ws.watermark == kNoWatermark || sp.max_event_ms - o.out_of_orderness_ms >= ws.watermark)) {
    sp.status = "ACTIVE";  // caught up with the safe watermark: rejoins the non-idle set
    if (sp.idle_start_us >= 0) ws.pending.push_back(idle_row(kp, key, sp, now_us, keyed_offset, ws.watermark));
    sp.idle_start_us = sp.idle_end_us = sp.resume_offset = sp.idle_last_offset = -1;
    sp.late_count = 0;
  }
  advance(ws, o, kp);
  queue_completeness(ws, kp, before, now_us);
}

std::string window_state_for(WatermarkState& ws, const WatermarkOptions& o, int32_t kp, const std::string& id) {
  auto it = ws.windows.find(id);
  if (it != ws.windows.end()) return it->second;
  const std::string state = state_at(ws.watermark, window_end(id), o);
  if (state == "FINAL") return state;  // already past its lateness: nothing of it is kept
  ws.windows[id] = state;
  ws.pending.push_back(window_row(kp, id, state, ws.watermark));
  return state;
}

void side_output(WatermarkState& ws, int32_t kp, int64_t keyed_offset, const std::string& window_type,
                 const std::string& event_id, const std::string& source_key, const std::string& id,
                 const std::string& state) {
  auto it = ws.sources.find(source_key);
  if (it != ws.sources.end() && it->second.status == "CATCHING_UP") ++it->second.late_count;
  const std::vector<std::string> f = split(id, '#');
  ws.pending.push_back(sql_statement(
      "INSERT OR IGNORE INTO late_side_output (keyed_partition, keyed_offset, window_type, event_id, scope_id, "
      "window_start, window_state, watermark) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      kp, keyed_offset, window_type, event_id, f[0], std::stoll(f[2]), state, ws.watermark));
}

bool mark_idle(WatermarkState& ws, const WatermarkOptions& o, int32_t kp, int64_t now_us) {
  const std::map<std::string, bool> before = completeness(ws);
  bool changed = false;
  for (auto& [key, sp] : ws.sources) {
    if (sp.status != "ACTIVE" || now_us - sp.last_event_us < o.idle_timeout_us) continue;
    sp.status = "IDLE";  // 004:L151: removed from the minimum, its source incomplete
    sp.idle_start_us = now_us;
    sp.idle_last_offset = sp.max_source_offset;
    sp.idle_end_us = sp.resume_offset = -1;
    sp.late_count = 0;
    ws.pending.push_back(idle_row(kp, key, sp, -1, -1, kNoWatermark));
    changed = true;
  }
  if (!changed) return false;
  advance(ws, o, kp);
  queue_completeness(ws, kp, before, now_us);
  return true;
}

std::vector<std::string> purgeable(const WatermarkState& ws, const WatermarkOptions& o) {
  std::vector<std::string> out;
  for (const auto& [id, state] : ws.windows) {
    if (state == "FINAL" && ws.watermark >= window_end(id) + o.retention_ms) out.push_back(id);
  }
  return out;
}

SqlStatement purged_row(int32_t kp, const std::string& id, int64_t watermark, const std::string& offset_digest,
                        const std::string& final_versions, const std::string& checkpoint_ref,
                        const std::string& reconciliation) {
  const std::vector<std::string> f = split(id, '#');
  return sql_statement(
      "INSERT OR REPLACE INTO window_state (keyed_partition, scope_id, window_type, window_start, "
      "window_end, state, input_watermark, offset_digest, final_versions, checkpoint_ref, "
      "reconciliation) VALUES (?, ?, ?, ?, ?, 'PURGED', ?, ?, ?, ?, ?)",
      kp, f[0], f[1], std::stoll(f[2]), std::stoll(f[3]), watermark, offset_digest, final_versions, checkpoint_ref,
      reconciliation);
}

}  // namespace fl::ranking
