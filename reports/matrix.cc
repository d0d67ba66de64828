#include "reports/matrix.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <set>

namespace fl::reports {
namespace {

// Shorthand for one row; `line` is the seed line number of the row (cat -n numbering).
MatrixRow row(std::string id, std::string matrix, std::string group, std::string scenario, std::string pass,
              std::vector<std::string> invariants, std::string source, bool assertable = true) {
  return MatrixRow{std::move(id),   std::move(matrix),     std::move(group),  std::move(scenario),
                   std::move(pass), std::move(invariants), std::move(source), assertable};
}

std::string l(const char* section, int line) { return std::string(section) + " L" + std::to_string(line); }

void add_ranking_correctness(std::vector<MatrixRow>& v) {
  const char* s = "004 §16.1";
  const char* g = "correctness";
  auto c = [&](int n, const char* scen, const char* pass, std::vector<std::string> inv) {
    char id[8];
    std::snprintf(id, sizeof id, "C%02d", n);
    v.push_back(row(id, "ranking", g, scen, pass, std::move(inv), l(s, 419 + n)));
  };
  c(1, "the same event_id is delivered many times",
    "per full aggregation key and window, the event count, effective value and aggregate_version "
    "converge as the idempotency policy says",
    {"RANK-4", "RANK-11", "RANK-41"});
  c(2, "the same actor repeats a search within a short time",
    "merged or down-weighted by the actor rule; raw value and base effective value stay explainable", {"RANK-5"});
  c(3, "one event has several aliases",
    "under the current mapping_version it maps to exactly one main topic and takes one rank slot",
    {"RANK-31", "RANK-23"});
  c(4, "global, channel, region and language scopes are computed at the same time",
    "windows, candidates, snapshots and risk actions of one topic never overwrite each other "
    "across scope_ids",
    {"RANK-2", "RANK-3", "RANK-26"});
  c(5, "the same snapshot parameters are requested for different scopes",
    "Redis key, ETag, CDN cache key and response never hit across scopes", {"RANK-1", "RANK-2"});
  c(6, "hot local partials share a topic but differ in scope, window or metric",
    "partials merge only on the full aggregation key; no value leaks across scope, window or metric",
    {"RANK-3", "RANK-5"});
  c(7, "topics merge while source and main topic keep receiving concurrent events",
    "shadow state holds window and actor-dedup state; reconciliation around the barrier shows no "
    "duplicate and no loss; historical snapshots unchanged",
    {"RANK-32", "RANK-33", "RANK-34", "RANK-23"});
  c(8, "late events with an old event_time are mixed in around the barrier",
    "ownership is decided only by each partition's cutover_next_offset; late events after the "
    "barrier never go back to the old merge run",
    {"RANK-32", "RANK-35"});
  c(9, "a low-traffic partition goes idle, then recovers and catches up",
    "the watermark never moves back, the backlog follows the late-event policy, and the partition "
    "rejoins only after the offset check",
    {"RANK-7", "RANK-8", "RANK-41"});
  c(10, "dedup state expired; historical events beyond the auto-replay range are injected",
    "the official aggregate does not grow; the events go only to isolated replay or audit", {"RANK-6", "RANK-9"});
  c(11, "late events are sent to a CLOSED and to a FINAL window",
    "CLOSED: a new aggregate version that affects only later snapshots; FINAL: the official "
    "result is unchanged",
    {"RANK-9", "RANK-11", "RANK-23"});
  c(12, "a risk response arrives after a new window, risk action or rule activation",
    "the CAS fails when the input manifest or any activation epoch differs; the late result "
    "never overwrites the newer candidate",
    {"RANK-19", "RANK-21"});
  c(13, "an old rule task, an old publisher and an unauthorized replay run race for the pointer",
    "any mismatch of scope context version, the three epochs, the watermark or the run "
    "authorization is rejected",
    {"RANK-22", "RANK-21", "RANK-25"});
  c(14, "a snapshot is READY but the pointer CAS did not succeed; then Redis is lost",
    "only the PUBLISHED snapshot the DB pointer references is restored; the READY one is never "
    "returned",
    {"RANK-24", "RANK-23", "RANK-22"});
  c(15, "a topic is blocked and then unblocked in channel A",
    "edge and query filtering take effect in A and each step advances the risk epoch; channel B "
    "is not affected by the local action",
    {"RANK-26", "RANK-27", "RANK-28"});
  c(16, "several topics have exactly the same score and are computed repeatedly",
    "a stable secondary key gives the same order every time", {"RANK-36"});
  c(17, "the candidate cache is lost",
    "rebuilt from window aggregates into an input manifest under a pinned scope context; the "
    "whole batch is discarded if the context changes",
    {"RANK-40", "RANK-14"});
  c(18, "the published-snapshot cache is lost",
    "the same immutable snapshot is restored from the DB pointer and its publication_epoch", {"RANK-24"});
  c(19, "a three-layer reconciliation is fed data of a different scope or version",
    "the reconciliation refuses to compare; differences are output only under one fixed context", {"RANK-38"});
  c(20, "a multi-scope merge crashes before the barrier, after some scope CASes and before all finish",
    "each scope cutover recovers independently, switched scopes never revert, unswitched ones do "
    "not jump ahead, and the parent run never claims global completion",
    {"RANK-34", "RANK-32"});
  c(21, "scoring is frozen for 1 min, 5 min and 1 h multi-metric inputs while window heads advance",
    "the old run still reproduces from immutable versions and values; a new head only triggers a "
    "new run, never mixed reads or needless invalidation",
    {"RANK-14", "RANK-11"});
  c(22, "rule v2 is upgraded to v3 then rolled back to v2; an old v2 task resumes",
    "the rollback gets a higher rule activation epoch and the old v2 task is rejected on the epoch",
    {"RANK-21", "RANK-22"});
  c(23, "a global risk action and a channel-local action run concurrently with publishing",
    "any change of the global or scope risk epoch fails the old snapshot's CAS; edge and query "
    "filters converge on the new actions at once",
    {"RANK-22", "RANK-27", "RANK-28"});
  c(24, "a calculation run crashes after writing half of its candidates while the publisher scans",
    "non-terminal inputs keep the run from SEALED; after recovery the exact set closes or a new run "
    "is created; a snapshot never mixes candidates of two rounds",
    {"RANK-18", "RANK-22", "RANK-23"});
  c(25, "a candidate worker commits the last item while the seal transaction runs",
    "both lock the same BUILDING run; the seal either sees the complete terminal set and succeeds "
    "or fails and retries; no late write after SEALED",
    {"RANK-18"});
  c(26, "one candidate is deleted and a duplicate entry keeps the same count",
    "input set digest, topic set and dispositions disagree, so the seal fails; a count alone never "
    "passes",
    {"RANK-17", "RANK-18"});
  c(27, "an old normalizer emits old-epoch output after the barrier",
    "the aggregator rejects the old epoch and re-routes idempotently by the pre-normalization "
    "source offset; old and new topic never double count",
    {"RANK-32"});
  c(28, "a global emergency block runs while the CDN keeps a hot cache, and the purge fails",
    "every affected scope is still filtered by the edge denylist; an edge whose epoch is behind "
    "bypasses the cache, so an old full response is never served",
    {"RANK-28", "RANK-26"});
  c(29, "expiry tasks of local and global risk actions are delayed or run twice",
    "the block holds until EXPIRED commits; the idempotent expiry advances the epoch once; cache "
    "validity never crosses the expiry boundary",
    {"RANK-29", "RANK-27"});
  c(30, "a paused old worker resumes writing a head after a new aggregation generation switched",
    "the old worker fails on the active-generation fence and cannot advance the new head with a "
    "larger number; the two generations' version keys and manifest references do not collide",
    {"RANK-12", "RANK-11", "RANK-14"});
  c(31, "one expected candidate partition never submits its Top K; the rest close internally",
    "the run stays COLLECTING, the missing partition is not hidden by the remaining set digest, and "
    "the publisher keeps serving the old snapshot",
    {"RANK-15"});
  c(32, "a partition Top K arrives late or tries to rewrite its digest after BUILDING",
    "the immutable partition cut rejects the late write; new results go only to a new run and the "
    "existing manifest set does not change",
    {"RANK-16", "RANK-17"});
  c(33,
    "a snapshot copies both set digests correctly but under-reports input_manifest_count or "
    "candidate_count",
    "pre-publish validation rejects it: both counts must equal the SEALED run's frozen input count "
    "and candidate count, not the number of Top N items",
    {"RANK-22", "RANK-23"});
}

void add_ranking_algorithm(std::vector<MatrixRow>& v) {
  const char* s = "004 §16.2";
  struct A {
    const char* scen;
    const char* metric;
    std::vector<std::string> inv;
  };
  const std::vector<A> rows = {
      {"Top N stability", "overlap rate, rank changes and exit count", {"RANK-37"}},
      {"burst event discovery", "latency from reaching the threshold to entering the list", {}},
      {"old topics hogging the list", "time on list, rank before and after baseline correction", {}},
      {"bot samples", "list-entry rate of abnormal samples and size of risk adjustment", {}},
      {"risk accuracy", "interception rate of risky topics and false-hit rate on normal ones", {}},
      {"list jitter", "Top N change rate per snapshot and mean dwell time", {"RANK-37"}},
      {"scope bias", "recall and distribution differences across channels, regions and languages", {"RANK-2"}},
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool assertable = !rows[i].inv.empty();
    std::string pass = std::string("metric plan: record ") + rows[i].metric +
                       (assertable ? "; asserted: the mapped invariants hold" : "");
    v.push_back(row("A0" + std::to_string(i + 1), "ranking", "algorithm", rows[i].scen, pass, rows[i].inv,
                    l(s, 457 + static_cast<int>(i)), assertable));
  }
}

void add_ranking_capacity(std::vector<MatrixRow>& v) {
  const char* s = "004 §16.3";
  struct P {
    const char* scen;
    const char* observe;
    std::vector<std::string> inv;
  };
  const std::vector<P> rows = {
      {"uniform long-tail topics", "EPS, CPU, network and state growth", {}},
      {"one burst topic takes a large share of events", "hot-partition latency, local-merge backlog and fairness", {}},
      {"many duplicate actors and events", "dedup throughput, state memory and miscounts", {"RANK-4", "RANK-5"}},
      {"global/channel/region/language multi-scope fan-out",
       "expansion factor, partition skew and scope isolation",
       {"RANK-2"}},
      {"message partition rebalance",
       "watermark stall, duplicate consumption and recovery time",
       {"RANK-7", "RANK-41"}},
      {"window and dedup state near capacity", "state size, GC, checkpoint time and purge speed", {"RANK-6"}},
      {"candidate Top K changes fast",
       "candidate writes, stale-CAS rejections and publish latency",
       {"RANK-19", "RANK-22"}},
      {"snapshot publish during a query peak", "DB CAS, Redis, CDN and query P99", {"RANK-22", "RANK-24"}},
      {"a compute or query node leaves", "remaining capacity, backlog and error rate", {}},
      {"catch up from a checkpoint over the longest auto-replay range",
       "catch-up speed, watermark recovery and duplicate rate",
       {"RANK-6", "RANK-13", "RANK-41"}},
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool assertable = !rows[i].inv.empty();
    char id[8];
    std::snprintf(id, sizeof id, "P%02zu", i + 1);
    std::string pass = std::string("capacity plan: observe ") + rows[i].observe +
                       (assertable ? "; asserted: the mapped invariants hold under load" : "");
    v.push_back(
        row(id, "ranking", "capacity", rows[i].scen, pass, rows[i].inv, l(s, 468 + static_cast<int>(i)), assertable));
  }
}

void add_ranking_faults(std::vector<MatrixRow>& v) {
  const char* s = "004 §16.4";
  auto f = [&](int n, const char* scen, const char* pass, std::vector<std::string> inv) {
    char id[8];
    std::snprintf(id, sizeof id, "F%02d", n);
    v.push_back(row(id, "ranking", "fault drill", scen, pass, std::move(inv), l(s, 481 + n)));
  };
  f(1, "a required event source stops sending",
    "data is marked incomplete; publishing freezes or switches to an explicit degraded rule", {"RANK-10", "RANK-7"});
  f(2, "a partition resumes from idle carrying many old events",
    "the watermark does not move back; old events are split off at the lateness boundary",
    {"RANK-7", "RANK-8", "RANK-9"});
  f(3, "Kafka partition backlog, rebalance or duplicate replay",
    "offsets stay contiguous, idempotent aggregation converges, catch-up time is observable",
    {"RANK-4", "RANK-41", "RANK-7"});
  f(4, "the topic normalization service times out",
    "the original event can be retried; low-confidence or unmapped events never pollute candidates",
    {"RANK-39", "RANK-31"});
  f(5, "the risk service is down or very slow",
    "degrades by a versioned policy; an old response cannot override a newer candidate past the "
    "scope risk epoch",
    {"RANK-19", "RANK-27", "RANK-10"});
  f(6, "the stream-processing checkpoint is corrupted",
    "recovers from the previous consistent checkpoint; full-key aggregates and offsets reconcile",
    {"RANK-12", "RANK-13", "RANK-41"});
  f(7, "the Redis candidate list is lost",
    "rebuilt from window facts into an isolated namespace before replacing live data", {"RANK-40"});
  f(8, "the Redis snapshot and current pointer are lost",
    "only the PUBLISHED snapshot of the DB's authoritative pointer is restored", {"RANK-24"});
  f(9, "the publisher crashes after READY, before the pointer CAS",
    "the old PUBLISHED snapshot keeps being served; READY is never queried", {"RANK-22", "RANK-24", "RANK-23"});
  f(10, "an old publisher recovers after a new list was published",
    "publication epoch, scope context version and the three activation epochs reject the old write",
    {"RANK-22", "RANK-21"});
  f(11, "the CDN hot cache is not invalidated in time or the purge fails",
    "after a hit the edge still filters by the latest scope/global denylist; an edge whose epoch is "
    "behind bypasses the cache to the origin",
    {"RANK-28"});
  f(12, "a rule is rolled back after a bad canary",
    "the old rule_version is re-activated with a higher activation epoch; no old task or old epoch "
    "is reused",
    {"RANK-21"});
  f(13, "an unauthorized historical replay tries to publish",
    "run authorization fails; official candidates and the pointer are unchanged", {"RANK-25", "RANK-22"});
  f(14, "the risk expiry scheduler pauses, resumes and delivers duplicates",
    "the action stays effective until the EXPIRED transaction; after recovery the risk epoch "
    "advances once and a new snapshot is triggered",
    {"RANK-29", "RANK-27"});
  f(15, "an expected partition hangs or its whole batch is lost during candidate production",
    "the run does not reach BUILDING; only a new run with an approved degraded policy and an "
    "explicit missing set may publish",
    {"RANK-15", "RANK-20"});
}

void add_combo(std::vector<MatrixRow>& v) {
  const char* goals = "000 §1.4";
  v.push_back(row("COMBO-G1", "combo", "goal",
                  "user perception: one user buys the same item N "
                  "times within 3 s",
                  "the front end shows exactly one UI item with quantity N", {"COMBO-13", "COMBO-11", "COMBO-3"},
                  l(goals, 39)));
  v.push_back(row("COMBO-G2", "combo", "goal", "backend constraint: DB granularity",
                  "the DB still gets one row per purchase (ranking and statistics need it)", {"COMBO-1"},
                  l(goals, 40)));
  v.push_back(row("COMBO-G3", "combo", "goal", "push constraint: one record per 3 s window",
                  "WS pushes exactly one merged record per 3-second window", {"COMBO-3", "COMBO-5", "COMBO-2"},
                  l(goals, 41)));
  v.push_back(row("COMBO-G4", "combo", "goal", "front-end constraint: minimal template change",
                  "polling and WS receive paths share one merge; the merge algebra holds", {"COMBO-12", "COMBO-14"},
                  l(goals, 42)));
  v.push_back(row("COMBO-G5", "combo", "goal", "reliability: multiple replicas, process restarts",
                  "no push is lost across replicas and process restarts", {"COMBO-2", "COMBO-7", "COMBO-4"},
                  l(goals, 43)));
  const char* unit = "000 §9.1";
  v.push_back(row("COMBO-U1", "combo", "unit", "PurchaseItem while Redis is unavailable",
                  "degrades to an immediate push (the old behaviour)", {"COMBO-10"}, l(unit, 495)));
  v.push_back(row("COMBO-U2", "combo", "unit", "processComboEntry finds an empty hash",
                  "the entry is skipped (nothing published)", {"COMBO-8", "COMBO-6"}, l(unit, 496)));
  v.push_back(row("COMBO-U3", "combo", "unit", "XADD with MAXLEN", "the stream does not grow without bound",
                  {"COMBO-9"}, l(unit, 497)));
  const char* it = "000 §9.2";
  v.push_back(row("COMBO-T1", "combo", "integration", "a single purchase", "1 DB row and 1 WS push with quantity=1",
                  {"COMBO-1", "COMBO-3"}, l(it, 502)));
  v.push_back(row("COMBO-T2", "combo", "integration", "3 purchases of the same item within 1 s",
                  "3 DB rows and 1 merged WS push with quantity=3 and record.id = the first id",
                  {"COMBO-1", "COMBO-2", "COMBO-3", "COMBO-5"}, l(it, 503)));
  v.push_back(row("COMBO-T3", "combo", "integration", "3 purchases of different items within 1 s",
                  "3 DB rows and 3 separate WS pushes, each with quantity=1", {"COMBO-1", "COMBO-3", "COMBO-15"},
                  l(it, 504)));
  v.push_back(row("COMBO-T4", "combo", "integration", "purchases spanning more than 3 s",
                  "the first burst merges into one push; one more purchase after 3 s merges into a "
                  "second push",
                  {"COMBO-3", "COMBO-5", "COMBO-6"}, l(it, 505)));
  v.push_back(row("COMBO-T5", "combo", "integration", "Redis failure",
                  "degrades to an immediate push (the old behaviour); nothing silently dropped", {"COMBO-10"},
                  l(it, 506)));
  v.push_back(row("COMBO-T6", "combo", "integration", "the worker restarts",
                  "the pending list redelivers; no push is lost", {"COMBO-2", "COMBO-7", "COMBO-4"}, l(it, 507)));
  v.push_back(row("COMBO-T7", "combo", "integration", "multi-replica deployment",
                  "SETNX lets exactly one replica enqueue; the consumer group keeps pushes "
                  "idempotent",
                  {"COMBO-3", "COMBO-6", "COMBO-8"}, l(it, 508)));
  const char* fe = "000 §9.3";
  v.push_back(row("COMBO-F1", "combo", "front end", "tap the same item 3 times quickly",
                  "the UI shows only 1 new item whose quantity grows from 1 to 3", {"COMBO-13", "COMBO-14"},
                  l(fe, 512)));
  v.push_back(row("COMBO-F2", "combo", "front end", "switch items", "different items are shown as separate UI items",
                  {"COMBO-12", "COMBO-13"}, l(fe, 513)));
  v.push_back(row("COMBO-F3", "combo", "front end", "purchases spanning more than 3 s", "2 separate UI items appear",
                  {"COMBO-11", "COMBO-13", "COMBO-16"}, l(fe, 514)));
}

void add_likes(std::vector<MatrixRow>& v) {
  // Doc 002 has no test table: rows come from its stated goals (§1) and guarantees (§6, §9.2).
  auto r = [&](const char* id, const char* group, const char* scen, const char* pass, std::vector<std::string> inv,
               const char* sec, int line, bool assertable = true) {
    v.push_back(row(id, "likes", group, scen, pass, std::move(inv), l(sec, line), assertable));
  };
  r("LIKES-R1", "functional", "users like and unlike assets",
    "every acknowledged like/unlike is durable and the last acknowledged operation per user wins", {"LIKE-6", "LIKE-7"},
    "002 §1.2", 16);
  r("LIKES-R2", "functional", "duplicate likes: concurrent, retried or repeated requests",
    "one user likes one asset at most once: one row, +1 on every counter", {"LIKE-1", "LIKE-2", "LIKE-11"}, "002 §1.2",
    17);
  r("LIKES-R3", "functional", "the like count is displayed in real time",
    "the cached count is nil or equals the number of like rows; never negative", {"LIKE-4", "LIKE-5"}, "002 §1.2", 18);
  r("LIKES-R4", "functional", "query whether a user liked an asset (is_liked)",
    "a present state key says liked exactly when the user's last acknowledged op was like; a "
    "cached \"0\" never blocks a like",
    {"LIKE-8"}, "002 §1.2", 19);
  r("LIKES-C1", "consistency", "eventual consistency of count and state",
    "after async writes drain, the DB counter equals the row count and the cache agrees", {"LIKE-3", "LIKE-4"},
    "002 §1.1", 11);
  r("LIKES-C2", "consistency", "the periodic consistency check repairs drift",
    "repair never moves a counter away from the truth and leaves no residual drift (the doc's "
    "tolerance of 10 is not accepted)",
    {"LIKE-10", "LIKE-4"}, "002 §6.2", 388);
  r("LIKES-C3", "fault recovery", "Redis fails, then recovers and is re-synced from the DB",
    "expiry, eviction or loss of Redis data never double counts, never makes a count jump and "
    "never blocks a legitimate unlike",
    {"LIKE-9", "LIKE-5"}, "002 §6.3", 398);
  r("LIKES-C4", "fault recovery", "DB writes fail and are retried by the scheduled task",
    "every acknowledged operation still reaches asset_likes exactly once", {"LIKE-6", "LIKE-1", "LIKE-3"}, "002 §6.3",
    403);
  r("LIKES-P1", "performance", "10,000+ like operations per second",
    "p99 latency < 50 ms at >= 10k ops/s (real mode, not simulation)", {"LIKE-12"}, "002 §1.1", 9, false);
  r("LIKES-P2", "performance", "performance expectations", "QPS 10,000+, P99 < 50 ms, cache hit rate > 95%, drift < 1%",
    {"LIKE-12"}, "002 §9.2", 489, false);
}

void add_gifts(std::vector<MatrixRow>& v) {
  auto r = [&](const char* id, const char* group, const char* scen, const char* pass, std::vector<std::string> inv,
               const char* sec,
               int line) { v.push_back(row(id, "gifts", group, scen, pass, std::move(inv), l(sec, line))); };
  r("GIFTS-D1", "dedup", "the user double-taps \"send gift\"; the client sends two requests", "at most one charge",
    {"GIFT-2", "GIFT-1"}, "003 §2", 41);
  r("GIFTS-D2", "dedup", "network jitter: the client times out and retries (also after > 10 s)",
    "at most one wallet debit and one gift_order per (user, requestId); the retry gets the "
    "original outcome",
    {"GIFT-1", "GIFT-3"}, "003 §2", 43);
  r("GIFTS-D3", "dedup", "the business side consumes an MQ message twice", "no second charge", {"GIFT-1"}, "003 §2",
    45);
  r("GIFTS-D4", "dedup", "Redis dedup key lost (expiry, failover, eviction)",
    "the DB unique index still prevents a double charge", {"GIFT-1"}, "003 §2", 70);
  r("GIFTS-I1", "idempotent play", "the same gift message reaches a client twice",
    "each msgId is played at most once per client", {"GIFT-8", "GIFT-9"}, "003 §3", 80);
  r("GIFTS-I2", "idempotent play", "a push attempt fails after the server dedup key was written",
    "the message is not suppressed by server dedup: it is still delivered", {"GIFT-8", "GIFT-5"}, "003 §3", 93);
  r("GIFTS-B1", "combo batching", "several push servers handle one user's burst concurrently",
    "Σ giftCount over pushed batches = Σ charged gifts; no gift in two batches; bursts < 10 flushed "
    "at window end",
    {"GIFT-6", "GIFT-7"}, "003 §4", 109);
  r("GIFTS-B2", "combo batching", "the lock holder pauses past the 3 s lease",
    "only the owner unlocks; a failed acquisition retries instead of dropping the message", {"GIFT-7", "GIFT-6"},
    "003 §4", 118);
  r("GIFTS-O1", "ordering", "messages of one room arrive out of order or with gaps",
    "the client plays in increasing seq, never twice, and never stalls longer than T_gap", {"GIFT-9"}, "003 §5", 173);
  r("GIFTS-E1", "expiry", "a message older than 10 s reaches the push step",
    "no client receives it, and the charged gift stays recorded (order, income, gift list)", {"GIFT-10"}, "003 §6",
    200);
  r("GIFTS-E2", "expiry", "a client reconnects with lastSeq",
    "only seq > lastSeq is pushed; without history the client resets and drops nothing after", {"GIFT-11"}, "003 §6",
    206);
  r("GIFTS-T1", "transaction", "the charge commits but the push fails",
    "the outbox row is written in the same transaction and reaches SENT (or a recorded EXPIRED); "
    "every online client gets the gift exactly once",
    {"GIFT-4", "GIFT-5"}, "003 §7", 218);
}

void add_demo(std::vector<MatrixRow>& v) {
  v.push_back(row("DEMO-1", "demo", "kernel", "the kernel demo under crashes, pauses and partitions",
                  "the demo's properties hold on the hardened variant and fail with a "
                  "counterexample on the spec variant",
                  {}, "harness demo"));
}

std::vector<MatrixRow> build_rows() {
  std::vector<MatrixRow> v;
  add_ranking_correctness(v);
  add_ranking_faults(v);
  add_ranking_algorithm(v);
  add_ranking_capacity(v);
  add_combo(v);
  add_likes(v);
  add_gifts(v);
  add_demo(v);
  return v;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                                std::tolower(static_cast<unsigned char>(b[j - 1]))
                                            ? 0
                                            : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

const std::vector<MatrixRow>& all_matrix_rows() {
  static const std::vector<MatrixRow> rows = build_rows();
  return rows;
}

const MatrixRow* find_matrix_row(const std::string& id) {
  for (const MatrixRow& r : all_matrix_rows()) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

std::vector<std::string> matrix_names() {
  std::set<std::string> names;
  for (const MatrixRow& r : all_matrix_rows()) names.insert(r.matrix);
  return {names.begin(), names.end()};
}

std::vector<const MatrixRow*> rows_of_matrix(const std::string& matrix) {
  std::vector<const MatrixRow*> out;
  for (const MatrixRow& r : all_matrix_rows()) {
    if (matrix == "all" || r.matrix == matrix) out.push_back(&r);
  }
  return out;
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  return best_d <= limit ? best : "";
}

}  // namespace fl::reports
