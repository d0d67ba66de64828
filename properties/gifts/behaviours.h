// The behaviours a gifts run exercised, of those the GIFT judges check (issue 43): what a sweep
// counts per seed so a team sees what its exploratory mix reaches. Named from the run's world
// observations only (the clients' history, the SQL server's commit log, the Redis command log, the
// log broker's records, the fault log and the copies it names), never from what the service says
// about itself, the variant or the fix set. Sorted, each name once.
#pragma once

#include <string>
#include <vector>

#include "properties/gifts/run.h"

namespace fl::gifts::props {

// The names (each with the invariants it exercises):
//   "gift answered indeterminate"                    GIFT-3, GIFT-1 (timeout, broken call or error reply)
//   "double tap within 200 ms"                       GIFT-2 (two sends of one intent, 003:L41)
//   "request retried after the 10 s dedup TTL"       GIFT-1, GIFT-3 (its dedup key gone, 003:L54)
//   "one request reached the DB twice"               GIFT-1, GIFT-3, GIFT-4 (two gift_order INSERTs of one (user, requestId))
//   "DB held while a gift was charged"               GIFT-1, GIFT-3, GIFT-4 (a pause, outage or clog of the DB)
//   "gift appended 6 s or more after its commit"     GIFT-4, GIFT-5 (outbox poller or half check-back did it)
//   "half message checked back"                      GIFT-4, GIFT-5 (the broker asked a gift service, 003:L229)
//   "gift appended to the log twice"                 GIFT-4, GIFT-6, GIFT-8 (one msgId, two records)
//   "gift reached the combo window twice"            GIFT-6 (one msgId in two combo adds: a redelivery)
//   "batch of 10 or more gifts pushed"               GIFT-6 (a window flushed at the threshold, 003:L105)
//   "Redis restart with a gift in flight"            GIFT-5, GIFT-6, GIFT-8, GIFT-11 (appended within expiry + window before it)
//   "push service down or paused with a gift in flight"  GIFT-5, GIFT-6 (within window + push tick of its append)
//   "push service held past the claim lease"       GIFT-5, GIFT-6 (a pause or an outage of 2 s or more)
//   "push point clock moved"                         GIFT-10 (a jump or drift on a push service or gateway)
//   "pushed copy lost on the network"                GIFT-5, GIFT-9 (the fault log names a copy to a gateway or viewer)
//   "viewer received one message twice"             GIFT-8 (one msgId twice at one viewer, 003:L80)
//   "viewer received seqs out of order"              GIFT-9 (a room's seq lower than the one before it)
//   "message received more than 8 s old"             GIFT-10 (within 2 s of the 10 s expiry, 003:L200)
//   "viewer rejoined behind its room"                GIFT-11 (lastSeq > 0 below the seq the join answered)
//   "viewer switched rooms"                          GIFT-5, GIFT-9, GIFT-11 (two rooms joined, 003:L193)
std::vector<std::string> gifts_behaviours(const GiftsRun& run);

}  // namespace fl::gifts::props
