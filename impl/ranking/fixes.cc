#include "impl/ranking/fixes.h"

namespace fl::ranking {

const std::vector<FixInfo>& ranking_fixes() {
  static const std::vector<FixInfo> kFixes = {
      {"RK-DEDUP-EVENT-ID",
       "004:L87",
       {"RANK-4", "RANK-41"},
       "the aggregator's idempotency record per full key is source + event_id (004:L98) instead of "
       "source_partition + source_offset + scope_id: an event appended twice to the stable log (a relay retry "
       "through another ingest replica) has two offsets but is one event"},
      {"RK-CHECKPOINT-CAS",
       "004:L319-320",
       {"RANK-41", "RANK-4", "RANK-3"},
       "the partition checkpoint is written by a compare-and-set on the (next_offset, generation) the worker "
       "loaded or last wrote (with watermarks also on its digest, since idle marks and purges flush without moving "
       "next_offset): the double fence covers only the heads a flush advances, so a stale worker whose "
       "flush touches other keys overwrote the checkpoint with old state for a key another worker had advanced, "
       "and every later flush of that key hit the existing version row (lost events, aggregation stuck)"},
      {"RK-POINTER-FROM-DB",
       "004:L266, L317",
       {"RANK-24"},
       "the Redis pointer is created only by a restore from the DB pointer, fenced against Redis losses: a publisher "
       "only advances an existing pointer, and the restorer takes a token in Redis before reading the DB pointer "
       "and creates the pointer only while the token survives; it also refreshes a pointer behind the DB's. The "
       "seed's cache rejects older epochs, but after Redis loses the pointer an old publisher (or restorer) that "
       "read the DB before the loss recreates it with an epoch the DB pointer had already left"},
      {"RK-NEW-PARTITION-CATCHUP",
       "004:L152",
       {"RANK-7"},
       "a source partition first seen after the window watermark exists joins the non-idle set through "
       "CATCHING_UP, as a returning idle partition does: the formula of 004:L148-150 takes the minimum over every "
       "non-idle partition, so a partition whose first record is old (a late event, a lagging normalizer) pulled "
       "the window watermark back, and the seed guards only the idle partition's return against that"},
      {"RK-CACHE-CONTEXT-FENCE",
       "004:L317",
       {"RANK-40"},
       "a candidate-list rebuild switches onto the live key only through a Redis script that checks a per-scope "
       "context fence (`ranking:ctx-fence:<scope>`) it read before pinning the context: every transaction that "
       "moves a scope's context (rule control, and every risk transaction: block, lift, expiry, global absorption, "
       "risk-model switch) increments the fence before and after its DB commit, so a commit between the pin and the "
       "switch, or one "
       "in progress at the pin, makes the fence differ (or odd) and the batch is discarded. The seed discards a "
       "batch whose context changed during the rebuild, but a DB re-check followed by a Redis rename leaves a "
       "window: a rule activation committed between them (the cache process paused there) let a batch pinned at "
       "the old context replace the live list; a risk transaction did the same while only rule control moved the "
       "fence (candidate-cache-risk-hardened seed 46)"},
      {"RK-EXPIRY-CURRENT-ACTION",
       "004:L213",
       {"RANK-29", "RANK-26"},
       "the expiry transaction of an action commits only while that action is its (scope, topic)'s current BLOCK "
       "row: the seed makes expiry idempotent per action id and writes the next risk_action_version of the topic, so "
       "the late expiry of a block that was lifted and followed by a new block of the same topic ended the new "
       "block before its effective_until"},
      {"RK-DENYLIST-BYPASS",
       "004:L235, L285",
       {"RANK-28"},
       "a query layer (a direct read, or the CDN edge's fetch from the origin) that finds the scope's or the global "
       "denylist missing in Redis reads the blocks and their epochs from the DB instead (it cannot confirm the latest "
       "epoch: 004:L235 then bypasses the cache): the seed pushes "
       "the epoch'd denylist once, after the control transaction, so after a Redis loss the query layer applied no "
       "denylist at all and the restored snapshot, made before a block, showed the blocked topic past the maximum "
       "safe TTL"},
      {"RK-ETAG-RISK-EPOCHS",
       "004:L279",
       {"RANK-28", "RANK-2"},
       "the validator of a query answer (its ETag) is the snapshot_id together with the scope's and the global "
       "denylist epochs the answer applied: the seed has clients make conditional requests by ETag or snapshot_id, "
       "and with the snapshot_id as validator a block (which changes what a scope shows, not its snapshot) was "
       "answered \"not modified\", so a client kept showing the blocked topic until the next publish"},
      {"RK-DENYLIST-CATCHUP",
       "004:L213, L235",
       {"RANK-28", "RANK-26"},
       "every expiry round also pushes again the denylist of each scope whose Redis key is missing or holds an "
       "older epoch than the scope's context in the DB: the seed pushes the epoch'd denylist once, after the "
       "control transaction, and a push a fault lost (its read or write timed out on a paused DB or Redis, or "
       "its committer crashed between the commit and the push) was never retried, so Redis kept the old "
       "denylist (or none), and the edge, comparing its epoch with Redis's, kept applying it until the scope's "
       "next action (explore-risk-expiry-hardened seeds 156 and 232: 20 s behind at the end)"},
      {"RK-MERGE-SHADOW-FROM-SOURCE",
       "004:L85",
       {"RANK-33", "RANK-32"},
       "a merge's shadow state is built from the pre-normalization log's records below the handover vector (each "
       "normalized and expanded as the normalizers do), not from the source topic's keyed copies the keyed log "
       "holds when the merger pauses: the seed catches the shadow up \"to near the online watermark\" and "
       "replays \"the last stretch\" at the barrier, but a source-topic event below the vector that a normalizer "
       "had not yet turned into a keyed copy then (it was being normalized, or its normalizer was paused) reached "
       "the old topic after the shadow was taken, and the main topic never counted it"},
      {"RK-MERGE-HOLD-BEFORE-VECTOR",
       "004:L83-85",
       {"RANK-32", "RANK-35"},
       "a merge's barrier is committed before its handover vector is read: the cutover turns BARRIER with the "
       "vector pending, which holds every source-topic record of the scope in the normalizers, and only then "
       "are the stable log's ends read and stored as the vector. The seed inserts the barrier once the "
       "shadow is near the online watermark and fixes ownership by the vector, but not which comes first; "
       "with the vector read first, records appended while the merger was still on its way to the barrier "
       "(a pause between the read and the commit) were normalized under the old mapping and counted on the "
       "source topic though they lie past the vector, and the main topic never counted them"},
  };
  return kFixes;
}

}  // namespace fl::ranking
