// The behaviours a ranking run exercised, of those the RANK judges check (issue 43): what a sweep
// counts per seed so a team sees what its exploratory mix reaches. Named from the run's world
// observations only (the producers' and viewers' history, the two logs, the rows the DB holds and
// the statements it committed, the Redis writes and losses, the fault log), never from what a
// service says about itself. Sorted, each name once.
#pragma once

#include <string>
#include <vector>

#include "properties/ranking/run.h"

namespace fl::ranking::props {

// The names (each with the invariants it exercises):
//   "emit answered indeterminate"                    RANK-39 (the producer gave up or its call broke)
//   "event appended twice to the stable log"         RANK-4, RANK-5 (a replay or a retried ingest)
//   "DB commit answered an I/O error at COMMIT"      RANK-11, RANK-12 (in doubt: it may have applied)
//   "window head switched to a recovery generation"  RANK-12 (a corrupted checkpoint recovered, 004:L320)
//   "keyed partition flushed by a second aggregator" RANK-12, RANK-41 (its ownership changed)
//   "ownership change followed by the old owner's return"  RANK-12, RANK-41 (restarted or resumed after it)
//   "stale owner's flush refused"                    RANK-12 (the server refused a fenced aggregator write)
//   "chain process paused or crashed"                RANK-12, RANK-41 (a normalizer, aggregator or later stage)
//   "late event sent to the side output"             RANK-7, RANK-9
//   "idle partition rejoined"                        RANK-8
//   "window archived and its dedup state purged"     RANK-6
//   "hot topic salted into shards"                   RANK-3, RANK-5
//   "scope context moved while a run was building"   RANK-21, RANK-22
//   "publish CAS lost to a newer pointer"            RANK-22, RANK-23 (the server refused the pointer CAS)
//   "Redis lost a cached pointer"                    RANK-24 (a loss after a ranking:pointer:* SET)
//   "degraded run"                                   RANK-10
//   "replay run"                                     RANK-25
//   "reconciliation found DIFF, GAP or REFUSED"      RANK-38
//   "scope risk action"                              RANK-26, RANK-27
//   "global risk action"                             RANK-26, RANK-28
//   "block lifted or expired"                        RANK-27, RANK-29
//   "CDN hit within the safe TTL of a block"         RANK-28 (the edge may still be behind)
//   "view answered not modified"                     RANK-28 (the client's kept answer shown as current)
//   "keyed copy appended with an older mapping epoch than its scope's"  RANK-32 (an old normalizer's
//                                                    output after its scope's cutover: it must be re-routed)
//   "late source-topic event past a merge's handover vector"  RANK-35 (event time a minute or more
//                                                    before its receipt, at or past an ACTIVE cutover's vector)
//   "merge scope cutover aborted by a moved context" RANK-34 (the scope's CAS refused)
std::vector<std::string> ranking_behaviours(const RankingRun& run);

}  // namespace fl::ranking::props
