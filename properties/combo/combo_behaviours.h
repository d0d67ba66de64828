// The behaviours a combo run exercised, of those the COMBO judges check (issue 43): what a sweep
// counts per seed so a team sees what its exploratory mix reaches. Named from the run's world
// observations only (the clients' history, the rows read back, the Redis command log and keyspace
// samples, what the pages received and merged, the fault budget), never from what the service says
// about itself. Sorted, each name once.
#pragma once

#include <string>
#include <vector>

#include "properties/combo/combo_run.h"

namespace fl::combo {

// The names (each with the invariants it exercises):
//   "purchase answered alerted"                     COMBO-10 (the Redis step not secured)
//   "purchase answered indeterminate"               COMBO-1, COMBO-2 (the client gave up or the call broke)
//   "pid reused after a DB power loss"              COMBO-1, COMBO-11, COMBO-13 (AUTOINCREMENT forgot rows)
//   "Redis restart with a window pending"           COMBO-2, COMBO-7 (an unacked entry within the loss reach)
//   "key evicted from a window"                     COMBO-2 (an eviction whose scope names a window's key)
//   "stream entry unacked longer than the claim idle"  COMBO-4, COMBO-7 (5 s: stranded, then claimed or not)
//   "window pending while a worker was down or paused" COMBO-4, COMBO-7
//   "window published twice"                        COMBO-3, COMBO-8 (two PUBLISHes of one record id and key)
//   "DB down when a window closed"                  COMBO-11, COMBO-13 (the bind of its rows)
//   "window timed by a moved clock"                 COMBO-5, COMBO-6 (a jump or drift reached a window)
//   "clicks of one key a window apart"              COMBO-5, COMBO-6 (Redis counted them 3 s +- 5 ms apart)
//   "one user and item in two activities at once"   COMBO-15 (within one window of each other)
//   "page list full when a window arrived"          COMBO-16 (MAX_RECORDS reached, the oldest must go)
//   "page merged two copies of one window"          COMBO-12, COMBO-13 (same id, different quantities)
std::vector<std::string> combo_behaviours(const ComboRun& run);

}  // namespace fl::combo
