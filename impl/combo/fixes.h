// The named fixes of combo's `hardened` (impl/ports/fixes.h): each is one departure from seed 000
// (`spec` has none). Service code asks `fixes.has(Fix::kX)` where hardened departs, so the seed's
// path and each fix are visible side by side. The table with the evidence that each fix is needed
// is in docs/systems/combo.md.
#pragma once

#include <vector>

#include "impl/ports/fixes.h"

namespace fl::combo {

enum class Fix : unsigned {
  kWindowScripts,     // CB-WINDOW-SCRIPTS
  kKeyActivity,       // CB-KEY-ACTIVITY
  kLongAggTtl,        // CB-LONG-AGG-TTL
  kAlert,             // CB-ALERT
  kAutoclaim,         // CB-XAUTOCLAIM
  kNogroup,           // CB-NOGROUP
  kConditionalAck,    // CB-CONDITIONAL-ACK
  kPollByWindow,      // CB-POLL-BY-WINDOW
  kFeDedupMerge,      // CB-FE-DEDUP-MERGE
  kFeNoIdFilter,      // CB-FE-NO-ID-FILTER
  kFeNewestFirst,     // CB-FE-NEWEST-FIRST
  kFePollAll,         // CB-FE-POLL-ALL
  kFeKeepLarger,      // CB-FE-KEEP-LARGER
  kFlushWritesFirst,  // CB-FLUSH-WRITES-FIRST
  kBindFirst,         // CB-BIND-FIRST
  kBindByRow,         // CB-BIND-BY-ROW
};

using Fixes = FixSet<Fix>;

inline const std::vector<FixInfo>& combo_fixes() {
  static const std::vector<FixInfo> registry = {
      {"CB-WINDOW-SCRIPTS",
       "000:L114-152 §4.2, L220-264 §4.3",
       {"COMBO-2", "COMBO-3", "COMBO-5", "COMBO-6", "COMBO-8"},
       "count+open+enqueue and publish+delete as two atomic scripts bound to a window token (pid + created_at, unique "
       "even when a DB power loss reissues pids); the window ends on Redis's clock"},
      {"CB-KEY-ACTIVITY",
       "000:L115-116 §4.2",
       {"COMBO-15"},
       "window keys carry the activity and the item id, not only (user, item_type)"},
      {"CB-LONG-AGG-TTL",
       "000:L133 §4.2",
       {"COMBO-2", "COMBO-9"},
       "the window's hash lives 10 min (not 5 s), so a stalled worker still finds it; it is never -1"},
      {"CB-ALERT",
       "000:L120, L136 §4.2",
       {"COMBO-10"},
       "a purchase whose Redis step is not secured is answered alerted, not silently ok"},
      {"CB-XAUTOCLAIM",
       "000:L189-195 §4.3",
       {"COMBO-2", "COMBO-4", "COMBO-7"},
       "entries stranded in a dead consumer's PEL are claimed (the §6 promise the code lacks)"},
      {"CB-NOGROUP",
       "000:L178 §4.3",
       {"COMBO-2", "COMBO-7"},
       "a Redis restart that lost the consumer group recreates it instead of failing every read"},
      {"CB-CONDITIONAL-ACK",
       "000:L210 §4.3",
       {"COMBO-2", "COMBO-7"},
       "XACK only while the window's published marker exists: a restart that forgot the flush re-flushes"},
      {"CB-POLL-BY-WINDOW",
       "000:L293-314 §4.6",
       {"COMBO-11", "COMBO-13"},
       "the worker binds the rows of a closed window to it; polls return whole bound windows"},
      {"CB-FE-DEDUP-MERGE",
       "000:L340-368 §5.2",
       {"COMBO-12", "COMBO-13"},
       "mergeComboRecords only de-duplicates ids (the server merged windows); never mutates, never sums"},
      {"CB-FE-NO-ID-FILTER",
       "000:L378 §5.3",
       {"COMBO-14"},
       "no `id > highestId` filter: a window's id is its oldest pid, below ids already shown"},
      {"CB-FE-NEWEST-FIRST",
       "000:L380, L390 §5.3",
       {"COMBO-16"},
       "both paths keep the list newest-first and drop the oldest beyond MAX_RECORDS"},
      {"CB-FE-POLL-ALL",
       "000:L387-394 §5.3",
       {"COMBO-13", "COMBO-16"},
       "every polled window replaces its displayed copy, not only rows newer than the last timestamp"},
      {"CB-FE-KEEP-LARGER",
       "000:L356 §5.2",
       {"COMBO-12", "COMBO-13"},
       "two copies of one id (a window re-published after Redis lost part of it, or polled from a DB that lost a "
       "member's row) keep the larger quantity, not the first"},
      {"CB-FLUSH-WRITES-FIRST",
       "000:L262-263 §4.3",
       {"COMBO-3", "COMBO-8"},
       "the flush script deletes the window and writes its published marker before it PUBLISHes: a node that refuses "
       "writes (READONLY after a failover) refuses the flush before the push goes out, so the retried flush never "
       "pushes twice"},
      {"CB-BIND-FIRST",
       "000:L262 §4.3, L293-314 §4.6",
       {"COMBO-13"},
       "the worker binds a closed window's rows in the DB before it publishes, not after: bound after the push, a "
       "window whose Redis state a restart lost before any bind landed (the DB down meanwhile) is pushed yet never "
       "shown by a poll"},
      {"CB-BIND-BY-ROW",
       "000:L293-314 §4.6",
       {"COMBO-11", "COMBO-13"},
       "the window's member list names each row by pid and created_at and the bind matches both: a DB power loss "
       "(synchronous NORMAL/OFF) hands a forgotten member's pid to a later purchase of the same key, whose row a late "
       "bind of the old window would otherwise take from its own window"},
  };
  return registry;
}

}  // namespace fl::combo
