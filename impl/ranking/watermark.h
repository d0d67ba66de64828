// Watermarks, idle partitions and window states of seed 004 §6.3 (004:L146-155), kept per keyed
// partition by the aggregator that owns it and stored in its checkpoint:
//   partition_watermark = max_observed_event_time - configured_out_of_orderness   (004:L148)
//   source_watermark    = min(non_idle_partition_watermark)                       (004:L149)
//   window_watermark    = min(required_source_watermark)                          (004:L150)
// A "partition" is a partition of the pre-normalization log as one data source feeds it (the
// envelope's sourceService + sourcePartition, 004:L141); the required sources are the three
// producers. A partition silent (no event, no heartbeat: none exist) for idle_partition_timeout is
// IDLE and its source incomplete (004:L151); when it returns it is CATCHING_UP until its watermark
// reaches the window watermark and its offsets continue (004:L152). Windows move OPEN -> CLOSED ->
// FINAL -> PURGED (004:L153-155). Every change is a DB write queued for the partition's next flush,
// so the DB and the checkpoint agree.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "impl/ports/sql.h"
#include "impl/ranking/contract.h"
#include "impl/ranking/fixes.h"

namespace fl::ranking {

constexpr int64_t kNoWatermark = -1;  // event times are positive epoch milliseconds

struct WatermarkOptions {
  bool enabled = false;
  int64_t out_of_orderness_ms = 2000;    // configured_out_of_orderness (004:L148)
  int64_t allowed_lateness_ms = 20'000;  // CLOSED -> FINAL (004:L154)
  int64_t idle_timeout_us = 3'000'000;   // idle_partition_timeout (004:L151)
  int64_t retention_ms = 30'000;         // dedup retention: max(lateness, replay range, redelivery) (004:L155)
  std::vector<std::string> required_sources = {"comment-service", "post-service", "search-service"};
};

struct SourcePartition {  // one (source, source_partition) as this keyed partition sees it
  int64_t max_event_ms = kNoWatermark;
  int64_t last_event_us = 0;  // processing time of its last record
  int64_t max_source_offset = -1;
  std::string status = "ACTIVE";  // ACTIVE | IDLE | CATCHING_UP
  int64_t idle_start_us = -1, idle_end_us = -1, resume_offset = -1, late_count = 0;
  int64_t idle_last_offset = -1;  // max_source_offset when it went idle
};

struct WatermarkState {
  int64_t watermark = kNoWatermark;                // the window watermark, never defined before every source
  std::map<std::string, SourcePartition> sources;  // "source|partition"
  std::map<std::string, std::string> windows;      // "scope#window_type#start#end" -> OPEN|CLOSED|FINAL|PURGED
  std::vector<SqlStatement> pending;               // DB writes of the next flush (not in the checkpoint)

  void encode(std::string& out) const;
  bool decode_line(const std::vector<std::string_view>& f);  // false: not a watermark line
};

std::string window_id(const std::string& scope, const std::string& window_type, int64_t start, int64_t end);
int64_t window_end(const std::string& id);

// One keyed record of `source|partition` with `event_ms` at processing time `now_us`: its partition
// advances (or, IDLE, starts CATCHING_UP; CATCHING_UP, may rejoin), then the window watermark.
void observe_record(WatermarkState& ws, const WatermarkOptions& o, const RankFixes& fixes, int32_t keyed_partition,
                    int64_t keyed_offset, const std::string& source, const std::string& source_partition,
                    int64_t source_offset, int64_t event_ms, int64_t now_us);

// The state a record finds its window in; a window not seen yet is created in the state the
// watermark gives it (a window already past its lateness is FINAL and not created).
std::string window_state_for(WatermarkState& ws, const WatermarkOptions& o, int32_t keyed_partition,
                             const std::string& id);

// A record whose window is FINAL or PURGED goes to the late side output (004:L154), never the aggregate.
void side_output(WatermarkState& ws, int32_t keyed_partition, int64_t keyed_offset, const std::string& window_type,
                 const std::string& event_id, const std::string& source_key, const std::string& id,
                 const std::string& state);

// Partitions silent for idle_partition_timeout become IDLE; true if anything changed.
bool mark_idle(WatermarkState& ws, const WatermarkOptions& o, int32_t keyed_partition, int64_t now_us);

// Windows FINAL whose dedup retention has passed (004:L155), in the order they close.
std::vector<std::string> purgeable(const WatermarkState& ws, const WatermarkOptions& o);

// The window_state row of a PURGED window with its evidence (004:L154).
SqlStatement purged_row(int32_t keyed_partition, const std::string& id, int64_t watermark,
                        const std::string& offset_digest, const std::string& final_versions,
                        const std::string& checkpoint_ref, const std::string& reconciliation);

}  // namespace fl::ranking
