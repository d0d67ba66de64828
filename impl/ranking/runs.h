// Calculation runs of seed 004 part 2 (004:L99-101, L245-253): a coordinator creates each run with
// a frozen source-offset vector and one RUN_PARTITION_CUT(PENDING) row per expected candidate
// partition (COLLECTING); Top K workers commit each partition's immutable local Top K once; the
// coordinator checks the partition results, freezes RUN_INPUT_MANIFEST and moves the run to
// BUILDING, gives every entry its disposition under the parent-run lock, and seals it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"
#include "impl/ranking/fixes.h"

namespace fl::ranking {

// A score rule reads "long", or a comma-separated list such as "short,medium,long" (C21:
// multi-window inputs, each read inside the run's fixed cut; 004:L214-220; split with split()).
// "h.window_type = ?" for one window, "h.window_type IN (?,...)" for several: one window keeps the
// statement text of score rule v1.
std::string window_type_clause(size_t windows);

// The board the runs compute (the seed leaves sizes and the score rule to the product, 004:L14,
// L166; docs/systems/ranking.md lists these choices).
struct RunOptions {
  std::vector<std::string> scopes = {"GLOBAL|ALL|ALL|ALL", "GLOBAL|ALL|ALL|zh-CN"};
  int candidate_partitions = 4;      // one candidate partition per keyed partition
  int top_k = 8;                     // local Top K per partition
  std::string window_type = "long";  // score rule v1 reads the long baseline windows
  int64_t entry_score = 2;           // below it an entry is REJECTED ("below-entry-score")
  int64_t interval_us = 1'500'000;
  RankFixes fixes = RankFixes::spec();
  // C26 (a faulty coordinator, 004:L445): before sealing a BUILDING run it deletes one candidate
  // and keeps the run's candidate count with a duplicate of another one.
  bool tamper_candidates = false;
  // C12, F05 (004:L231, L313): each entry at the entry score is checked by the risk service
  // ("risk-svc", through the coordinator's Rpc) under the context its request carries.
  bool risk_service = false;
  int64_t risk_timeout_us = 1'000'000;
  // Mapping switches and window-configuration changes (control.h): a run is created under the
  // context's mapping and window configuration too, its Top K reads the window type of its own
  // window configuration (004:L220), and a candidate write checks the context is still the run's
  // (004:L230), rejecting the entry 'context-changed' when it moved.
  bool scope_control = false;
  // 004:L253 (param degraded_after_ms; 0: never): a run COLLECTING this long with partitions
  // missing is left as it is, and a new run is created under the approved degraded policy whose
  // excluded set is exactly the missing partitions, expecting only its included ones (DEGRADED).
  int64_t degraded_after_us = 0;
  // Topic merges (merge.h): a run's Top K leaves out every topic its scope merged away at or before
  // the run's mapping_activation_epoch: only snapshots under the new mapping drop it, and a main
  // topic is listed once (004:L89).
  bool merges = false;
};

// Digest of lines sorted first (the seed's stable ordering, 004:L247, L249, L100).
std::string sorted_digest(std::vector<std::string> lines);

// Cut reference of keyed partition p at next_offset n in aggregation generation g: "k<p>@<n>/g<g>".
std::string cut_ref(int32_t partition, int64_t next_offset, int64_t generation);
// Parses a cut reference; false if malformed.
bool parse_cut_ref(const std::string& ref, int32_t* partition, int64_t* next_offset, int64_t* generation);

// One local Top K entry: a topic, its score, and its manifest items
// "aggregate_key,generation,version,value_digest,cut_ref" joined by ';' (004:L99, L214-220).
struct TopkEntry {
  std::string topic_id;
  int64_t score = 0;
  std::string items;
  std::string encode() const;  // "topic\tscore\titems"
  static bool decode(const std::string& line, TopkEntry* out);
};

// `rpc`: the risk service's client (only with o.risk_service).
Task<void> run_coordinator(Runtime& rt, Sql& sql, RunOptions o, Rpc* rpc = nullptr);
// Computes the local Top K of the candidate partitions p with p % workers == index.
Task<void> run_topk_worker(Runtime& rt, Sql& sql, RunOptions o, int index, int workers);

}  // namespace fl::ranking
