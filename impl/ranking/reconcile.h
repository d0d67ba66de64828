// The three reconciliation layers of seed 004 (004:L392-404). Before comparing, a reconciliation
// freezes its context (scope, input watermark, expected and result partition-set digests, input
// manifest set digest, rule version and activation epoch, calculation run) on both sides and
// compares only when both are identical; otherwise it refuses. Window-configuration, mapping and
// risk versions are constants of a run here (scope control pins them in the run itself), so they
// are left out of the tuple.
//
// Layer 3 (always): the DB pointer's PUBLISHED snapshot against what Redis serves, recorded in
// `reconciliation_report`.
// Layers 1 and 2 (`layers`), recorded in `reconciliation_layer_report` against the run of the
// snapshot the DB pointer names, whose frozen context adds its source-offset vector:
//   1. the scope's source offsets against the original archive (the pre-normalization log): the
//      keyed log holds every offset below the run's cut; every copy of the scope inside the cut
//      has its original at the source coordinates it names, with the same event id; every original
//      that derives the scope, below the last one the cut reached in its source partition, has a
//      copy of the scope in the keyed log or waits in the candidate-term queue. CONTINUOUS or GAP;
//      the recorded idle periods of the cut's partitions are listed with it.
//   2. sampled topics of the run's manifest: each window version the manifest names is recomputed
//      from the keyed records below that version's own cut, deduplicated by the system's
//      idempotency record, without the records the late side output took, and compared with the
//      stored value. MATCH or DIFF.
// With `mix`, every other round first recomputes against the live log end instead of the frozen
// cut (another context: REFUSED unless the log has not moved), then again under the fixed one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/ports/log.h"
#include "impl/ports/redis.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"
#include "impl/ranking/contract.h"
#include "impl/ranking/fixes.h"

namespace fl::ranking {

struct ReconcileOptions {
  std::vector<std::string> scopes = {"GLOBAL|ALL|ALL|ALL", "GLOBAL|ALL|ALL|zh-CN"};
  int64_t interval_us = 700'000;
  // C19 (004:L438): every other round deliberately compares against another scope's served
  // snapshot or an older PUBLISHED snapshot of the same scope (another version).
  bool mix = false;
  bool layers = false;                  // layers 1 and 2 as well (they need `log`)
  int sample_topics = 3;                // manifest entries recomputed per layer-2 reconciliation
  BoardConfig cfg;                      // windows, scope derivation and the suspicious-repeat threshold
  RankFixes fixes = RankFixes::spec();  // the idempotency record the aggregators use
  bool watermarks = false;              // the late side output exists
};

// `log` may be null when `o.layers` is false.
Task<void> run_reconciler(Runtime& rt, Sql& sql, Redis& redis, Log* log, ReconcileOptions o);

}  // namespace fl::ranking
