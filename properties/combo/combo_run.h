// ComboRun: everything a finished combo run offers its checkers, as plain data, all of it world
// observations (never what a service said about itself):
// - the clients' history (purchase invocations, completions, outcomes; ranking answers),
// - the rows read back from the DB's storage after the run,
// - every PUBLISH the Redis server executed (time, channel, payload) and, from its command log,
//   every stream entry added (XADD) with which PUBLISH each entry's processing made,
// - the Redis keyspace sampled every 100 ms and at the end,
// - what the front ends received (pushes, poll responses, watched on their network port) and
//   displayed (their Screen), with each mergeComboRecords call,
// - the faults the world injected (fault budget).
// Bounds come from the seed's constants and the scenario, the same for every variant. Times are
// world microseconds. Built by harness/systems/combo/adapter.cc; tests build it by hand.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "impl/combo/frontend.h"
#include "impl/combo/record.h"
#include "model/combo/combo_model.h"
#include "properties/common/fault_budget.h"
#include "sim/fault_log.h"

namespace fl::combo {

struct PurchaseOp {  // one PurchaseItem / BatchPurchaseItem call
  uint64_t id = 0;   // its history id (Operation::id): the cause the stores' logs and
                     // the fault log name for what worked for it
  std::string ref, process;
  int64_t activity = 0, user = 0;
  int64_t lines = 1;
  enum class Result : uint8_t { kOk, kFail, kInfo } result = Result::kInfo;
  bool alerted = false;
  int64_t invoke_us = 0, complete_us = -1;
};

struct RowObs {
  ContributionRow row;        // window_id is the service's own bookkeeping: never read
  std::string client_ref;     // "<op ref>#<line>"
  int64_t committed_us = -1;  // lost rows: when the SQL server committed it (commit log)
  // When Redis counted it into its window, where the command log makes that certain (the line's
  // Redis step was one command, executed without an error reply, working for its purchase: the
  // commands whose cause is the purchase's operation between its row's commit and the next line's)
  // and the Redis node's clock read world time then: the window is judged at its millisecond,
  // floored as Redis's clock is. -1: not certain (the client's interval stands).
  int64_t redis_us = -1;
};

struct PublishObs {  // one PUBLISH the Redis server executed
  int64_t time_us = 0;
  std::string channel, payload;
  std::optional<ContributionRecord> record;  // decoded payload
  std::string entry_id;                      // the stream entry whose processing made it ("" unknown)
};

struct EntryObs {  // one XADD to the combo stream (command log)
  std::string id;
  int64_t time_us = 0;
  std::map<std::string, std::string> fields;
  // The row whose purchase line added it, from the world: the operation the XADD worked for
  // (CommandRecord::cause) and that operation's line the SQL server committed last before it. The
  // window's opener, whatever the entry's own fields say. -1: unknown (no purchase caused it).
  int64_t opener_pid = -1;
};

// One call of mergeComboRecords as the page's screen saw it run (Screen::run_merge): what it was
// given and what it returned (deep copies), or the TypeError it threw. What the client computed,
// for COMBO-12's judge.
struct MergeCall {
  std::vector<ContributionRecord> input, output;
  std::vector<ContributionRecord> input_after;  // the input's objects after the call (mutation)
  std::vector<bool> input_null;                 // JS null elements of the input
  std::string error;
};

// One update of a page, as the harness watched it: what arrived (a push on the page's WS service,
// or a poll response to its call), the list the page showed before and after handling it
// (Screen::show), and the merges it ran meanwhile. Never the page's own account.
struct UiEvent {
  std::string client;
  int64_t activity_id = 0;                                      // the page's activity (from the client's options)
  std::string cause;                                            // "ws" | "poll" | "" (a render nothing arrived for)
  std::optional<ContributionRecord> incoming;                   // the WS record
  std::vector<std::optional<ContributionRecord>> poll_records;  // the poll response
  std::vector<ContributionRecord> before, after;
  std::vector<MergeCall> merges;  // mergeComboRecords calls of this update
};

struct UiObs {
  UiEvent event;
  int64_t time_us = 0;
};

// A GetLatestContributions answer the page's call received (watched on its network port).
struct PollEvent {
  std::string client;
  int64_t activity_id = 0;
  std::vector<std::optional<ContributionRecord>> records;
};

struct PollObs {
  PollEvent event;
  int64_t begin_us = 0, end_us = 0;
};

struct RankingObs {
  int64_t activity = 0;
  int64_t time_us = 0;
  std::vector<std::pair<int64_t, int64_t>> totals;
};

struct RedisKeyObs {
  std::string key;
  int64_t ttl_ms = -1;  // -1: no TTL
  int64_t time_us = 0;
};

// COMBO-6 sampled: at one instant, the unacknowledged entries (pending in the group, or not yet
// delivered) of the stream, by their fields (the seed's entry fields, 000:L81).
struct UnackedSample {
  int64_t time_us = 0;
  std::vector<EntryObs> entries;
};

// What several checkers derive from one run (its keys' views and their window fits), defined in
// judge_support.h. See ComboRun::memo.
struct ComboMemo;

struct ComboRun {
  int64_t window_ms = 3000;                 // 000:L39 "3 秒内", L291 COMBO_WINDOW_MS
  int64_t timely_slack_ms = 1000;           // Δ of COMBO-4 without faults
  int64_t recover_slack_ms = 10'000;        // Δ_recover of COMBO-4
  int64_t stream_maxlen = 100000;           // 000:L84 "MAXLEN ~ 100000" (or the scenario's)
  bool single_crash = false;                // the only fault was one crash point (COMBO-4 clause 2)
  props::FaultBudget faults;                // what the world injected
  std::vector<std::string> service_places;  // replicas, redis, db (a purchase's path)
  // Redis lost data ([crash, restart] world us of the redis process; writes acked up to
  // redis_loss_ms before may be lost, earlier when the Redis process could not fsync or snapshot
  // meanwhile): COMBO-2's precondition "does not lose Redis data".
  struct RedisOutage {
    int64_t down_us = 0, up_us = 0;
    // How much earlier than redis_loss_ms before the crash acked writes may be lost: the fsync
    // (snapshot) runs in Redis's cron, which a pause of the process froze, and its interval is
    // measured on Redis's clock, which a jump back stretched (from the world's fault log).
    int64_t stalled_us = 0;
    // An eviction (issue 16) is an outage of one key: Redis's maxmemory dropped `evicted_key` at
    // down_us == up_us, whatever its age. Only the windows in `scope` can have lost anything by it:
    // the keys (activity, user, item) of the purchases whose commands (CommandRecord::cause) named
    // the evicted key before it went. An empty scope touches no window.
    std::string evicted_key;
    std::set<model::combo::Key> scope;
    bool eviction() const { return !evicted_key.empty(); }
    // Whether this loss can touch windows of `key` (nullptr: of some key not named; a restart
    // touches every key, an eviction only those of its scope).
    bool touches(const model::combo::Key* key) const {
      return !eviction() || (key != nullptr && scope.count(*key) > 0);
    }
  };
  // Redis restarts (by time), then evictions (by time): harness/systems/combo/adapter.cc.
  std::vector<RedisOutage> redis_outages;
  // How far before a crash acked writes may be lost, from the scenario's persistence mode:
  // aof-everysec 2 s (1 s fsync + slack), snapshot its interval + 1 s, none 1 s (only what was
  // alive at the crash matters: everything is gone).
  int64_t redis_loss_ms = 2000;
  bool redis_loses_all = false;  // persistence none: a restart forgets every window
  // The nodes whose clocks may time a window (Redis's TTLs, the replicas' expire_at and sleeps):
  // a window open while one of them jumped by J spans up to J more or less of world time, one
  // timed by a drifting clock ppm x its length (window_clock).
  std::vector<std::string> clock_nodes;
  int64_t end_us = 0;

  std::vector<PurchaseOp> ops;
  bool rows_known = false;
  std::vector<RowObs> rows;
  // Rows the SQL server's commit log shows committed that the final table lacks. A power loss of
  // the DB (a crash while the scenario's synchronous is below FULL) after the commit explains
  // one; nothing else does. They are still purchases (their Redis step ran).
  std::vector<RowObs> lost_rows;
  // Every purchase row id the SQL server handed out (its commit log: INSERTs that committed),
  // with repeats. Known even when the final file is unreadable (seed 10039 of
  // explore-hardened-lying-disk: a pid handed out twice, then a power loss corrupted the file).
  std::vector<int64_t> committed_pids;
  std::vector<int64_t> db_power_losses;  // crashes of the db that lose unsynced commits
  bool db_corrupt = false;               // the final read-back found the DB file damaged (SQLITE_CORRUPT/NOTADB)
  bool db_may_corrupt = false;           // the storage settings let a power loss damage the file (SQLite's own caveat)
  std::vector<PublishObs> publishes;
  std::vector<EntryObs> entries;
  std::vector<UiObs> ui;
  std::vector<PollObs> polls;
  std::vector<RankingObs> rankings;
  bool redis_known = false;
  std::vector<RedisKeyObs> final_keys;      // every live key at the end
  std::vector<RedisKeyObs> no_ttl_samples;  // combo:agg* keys seen with TTL -1 during the run
  int64_t ttl_keys_sampled = 0;             // (sample, combo:agg* key) pairs examined
  int64_t final_pending = -1;               // XPENDING count at the end (-1 unknown)
  std::vector<UnackedSample> unacked;       // every 100 ms
  int64_t stream_len_max = 0;               // longest the stream was at any sample
  // Set only while check_combo() runs the checkers over this run, which does not change
  // meanwhile: what they share is derived once. Null otherwise (a checker called alone, a test
  // that changes the run between checks), and then each checker derives its own.
  mutable std::shared_ptr<ComboMemo> memo;
};

// Derived views shared by the checkers.
std::vector<model::combo::Purchase> purchases_of(const ComboRun& run);
// Whether a purchase ran its Redis step before its answer: answered ok and not alerted. Otherwise
// the step may have run any time later (an indeterminate command), or never.
bool redis_step_certain(const PurchaseOp& op);
model::combo::Key key_of(const ContributionRecord& r);
// From the fault budget (the adapter builds the run with it): each crash .. restart of the Redis
// process, with how long before the crash Redis could not make writes durable (reach_us:
// redis_loss_ms of the persistence mode).
std::vector<ComboRun::RedisOutage> redis_outages_of(const props::FaultBudget& faults, int64_t reach_us);
// How far the windows that may hold an instant of [from_us, to_us] were timed off world time by
// the clocks of run.clock_nodes: a window holding it opened at most one window (plus what a clock
// sent back may add) before from_us and closed at most as long after to_us, and a clock moved it
// by as much as that clock's error over that span (a jump by its size, a drift by ppm x elapsed;
// 0 ms and 0 ppm move nothing). error_us 0: no clock fault reached it.
props::ClockReach window_clock(const ComboRun& run, int64_t from_us, int64_t to_us);
// A forward jump of one of run.clock_nodes' clocks (FaultBudget::records): at at_us by by_us > 0,
// described (`what`). A window timed by that clock and open then may end up to by_us early.
struct ForwardJump {
  int64_t at_us = 0, by_us = 0;
  std::string what;
};
std::vector<ForwardJump> forward_clock_jumps(const ComboRun& run);
// The earliest acked write the Redis restart `o` may have lost; for an eviction its instant (it
// loses any write of its key, however old, that a window still needed then).
int64_t loss_from_us(const ComboRun& run, const ComboRun::RedisOutage& o);
// The DB power loss that explains losing a row committed at `committed_us` (nullopt: none).
std::optional<std::string> db_loss_of(const ComboRun& run, int64_t committed_us);
// Row ids the DB handed out twice (a power loss forgot the rows and AUTOINCREMENT's counter), from
// the rows read back with the lost ones, and from the commit log when the file could not be read.
std::set<int64_t> reused_pids(const ComboRun& run);
// The places a purchase of `op` passes: its client, every replica, redis, db.
std::vector<std::string> path_of(const ComboRun& run, const PurchaseOp& op);

}  // namespace fl::combo
