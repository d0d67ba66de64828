// The behaviours a likes run exercised, of those the LIKE judges check (issue 43): what a sweep
// counts per seed so a team sees what its exploratory mix reaches. Named from the run's world
// observations only (the clients' history, the Redis command log and the SQL commit log, the
// samples of both stores, the fault log through FaultBudget), never from what the service says
// about itself, the variant or its fixes. Sorted, each name once.
#pragma once

#include <string>
#include <vector>

#include "properties/likes/run.h"

namespace fl::likes::props {

// The names (each with the invariants it exercises):
//   "like or unlike answered indeterminate"          LIKE-6, LIKE-7, degradation budget (outcome open)
//   "request retried with its id"                     LIKE-2, LIKE-11 (one request id, two attempts)
//   "one pair written twice at once"                  LIKE-1, LIKE-2, LIKE-11 (two likes or two unlikes
//                                                     of one asset and user in flight together)
//   "like and unlike of one pair at once"             LIKE-7, LIKE-8
//   "count read while Redis held no count"            LIKE-9, LIKE-10 (the 3.3 cache-aside fill; from
//                                                     the last sample before the read)
//   "write reached the DB after its request was answered"  LIKE-2, LIKE-7 (a late copy or an attempt
//                                                     overtaken by its retry; the statement's request id)
//   "DB failed a write transaction"                   LIKE-6, degradation budget (an error answer)
//   "DB lost commits in a power loss"                 LIKE-6, LIKE-7, LIKE-8, LIKE-9 (the replay of the
//                                                     commit log disagrees with the DB read back)
//   "Redis restart with keys cached"                  LIKE-4, LIKE-8, LIKE-9 (the grace window)
//   "state or count key evicted"                      LIKE-4, LIKE-8, LIKE-9 (a key the command log wrote)
//   "count fill or repair while a write of the asset was in flight"  LIKE-4, LIKE-9, LIKE-10
//   "state fill or repair while a write of the pair was in flight"   LIKE-8
//   "repair rewrote a drifted count"                  LIKE-4, LIKE-10 (an absolute count write that
//                                                     changed the value the command log says was cached)
//   "state key refilled after it expired"             LIKE-8, LIKE-9 (a state write with no count, at or
//                                                     after the TTL of the pair's previous state write)
//   "replica crashed with a write in flight"          LIKE-6, LIKE-7, degradation budget
//   "clock moved on a service node"                   LIKE-9, LIKE-10 (a replica's, Redis's or the DB's)
std::vector<std::string> likes_behaviours(const LikesRun& run);

}  // namespace fl::likes::props
