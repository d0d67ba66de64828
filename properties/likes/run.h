// LikesRun: everything the likes checkers read about one finished run, as plain data, all of it
// observed by the world, never reported by the service under test:
//   - the clients' history (invocations and replies, indeterminate included);
//   - the writes of the seed's keys (002:L84 asset:like_count:{a}, L90 asset:like:{a}:{u}) that the
//     Redis server executed, from its command log (sim/redis/server.h), with the request they came in;
//   - the row and counter changes the SQL server executed, from its commit log (sim/storage);
//   - samples of Redis's keyspace and of the DB read back from its VFS during the run, and both at
//     the end;
//   - the world's fault log (what was injected, for the degradation budget and exemptions), which
//     the checkers read only through properties/common/fault_budget.h;
//   - the scenario's timing parameters and the seed's constants (never the variant or its fixes).
// The harness adapter (harness/systems/likes/adapter.cc) fills it; tests build it by hand.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "impl/ports/history.h"
#include "sim/fault_log.h"

namespace fl::likes::props {

using Pair = std::pair<int64_t, int64_t>;  // (asset, user)

struct HistoryOp {
  uint64_t id = 0;
  std::string process;
  std::string op;    // like | unlike | count | state
  std::string args;  // "asset=A user=U req=R"
  int64_t invoke_us = 0;
  int64_t complete_us = -1;  // -1: never completed (read as info)
  Outcome outcome = Outcome::kInfo;
  std::string result;  // ok | already | count=N | state=S | error text
  // Where the network delivered its request (the replica that handled it), and when: one entry
  // per delivery (a late duplicate is another).
  std::vector<std::pair<int64_t, std::string>> delivered;
  std::string describe() const;
};

// One command on a seed key, executed by the Redis server (its command log).
struct RedisWrite {
  uint64_t seq = 0;                  // execution order at the server
  int64_t time_us = 0;               // world time
  int64_t node_ms = 0;               // the Redis node's clock (TTLs)
  std::string client;                // the calling process
  uint32_t incarnation = 0;          // of the Redis process
  uint64_t request = 0;              // commands of one client request (pipeline, script) share it
  bool request_names_state = false;  // some command of the request names a state key (a like/unlike)
  bool count = true;                 // asset:like_count:{a}; else asset:like:{a}:{u}
  int64_t asset = 0, user = 0;
  std::string cmd;                // upper case: INCR, DECR, INCRBY, DECRBY, SET, DEL, ...
  bool changed = false;           // the command changed the key (a SET NX that set, a DEL that deleted)
  std::optional<int64_t> after;   // the value after it (count; state 1/0); nullopt: deleted or not a number
  std::optional<int64_t> ttl_ms;  // a SET's PX/EX, when given
  std::string describe() const;
};

// One change of asset_likes rows or assets.like_count that the SQL server executed, from its
// commit log: statement by statement, with the changes it reported.
struct DbChange {
  uint64_t seq = 0;  // the commit record (one client request; a transaction or one statement)
  int64_t time_us = 0;
  std::string client;
  uint32_t incarnation = 0;           // of the DB process
  bool row = true;                    // asset_likes insert/delete; else an assets.like_count update
  int64_t asset = 0, user = 0;        // user 0 when the statement names none (counter updates)
  int64_t delta = 0;                  // +1 insert / like_count + 1; -1 delete / like_count - 1
  bool applied = false;               // committed and changed a row
  bool refused = false;               // the request was refused (constraint, error) or the statement changed nothing
  bool failed = false;                // the DB answered the whole request with an error (an I/O error, ...)
  uint64_t request_seq = 0;           // the request's number on the wire from its client (SqlRequest::seq)
  uint64_t cause = 0;                 // the operation (history id) the request worked for (SqlCommitRecord::cause):
                                      // a replica's group commit sends many operations' writes under one cause
  std::optional<int64_t> request_id;  // the app's request id the statement binds (request_id = ?), if any
  std::string describe() const;
};

// Timing the judges may use: the scenario's parameters and the seed's constants, the same for
// every variant.
struct Timing {
  int64_t sync_interval_us = 60'000'000;  // 002:L358 SyncLikeCountJob period (scenario param)
  int64_t client_timeout_us = 500'000;
  int max_retries = 2;
  int64_t redis_timeout_us = 300'000;
  int64_t sql_timeout_us = 500'000;
  int64_t sample_interval_us = 100'000;
  // How long a value may take from the DB to Redis or back on a healthy path: one client request
  // with its retries.
  int64_t lag_us() const { return client_timeout_us * (max_retries + 1); }
  // How old the DB value a repair writes may be on a healthy path: its DB read and its Redis write,
  // each within its timeout.
  int64_t repair_window_us() const { return sql_timeout_us + redis_timeout_us; }
};

struct StoreSnapshot {
  int64_t time_us = 0;
  bool redis_up = true;
  std::map<int64_t, std::optional<int64_t>> redis_count;  // per asset; nullopt = nil
  std::map<Pair, std::string> redis_state;                // present state keys only
  bool db_read = true;                                    // false: the DB could not be read
  // The last commit record (DbChange::seq) the DB read saw: a sample taken at the same instant as
  // commits may precede some of them (a DB resuming from a pause runs its queued requests at one
  // instant). nullopt: unknown, every commit at or before time_us counts as seen.
  std::optional<uint64_t> db_seq;
  std::map<int64_t, int64_t> db_like_count;  // assets.like_count
  std::map<Pair, int64_t> db_rows;           // asset_likes rows per pair
  int64_t rows_of(int64_t asset) const;
};

struct LikesRun {
  std::vector<HistoryOp> history;
  std::vector<RedisWrite> redis_writes;  // in execution order
  std::vector<DbChange> db_changes;      // in execution order
  std::vector<int64_t> db_executed_us;   // when the DB executed each request (its commit log), ascending
  std::vector<StoreSnapshot> samples;    // during the run
  StoreSnapshot final_state;             // after the quiescent tail
  // [start, end) windows in which cached values may be stale because Redis restarted (from the
  // restart until the system could repair the cache for one reconciliation period, see
  // GraceTracker). Reads and samples inside are not judged.
  std::vector<std::pair<int64_t, int64_t>> redis_grace;
  bool in_grace(int64_t s_us, int64_t e_us) const;
  sim::FaultLog faults;
  int64_t end_us = 0;
  std::vector<std::string> replicas;  // service process names (where a request may run)
  Timing timing;
};

// Computes LikesRun::redis_grace from the sampler's observations.
//
// A Redis restart may roll cached values back (AOF everysec, snapshots): values acknowledged
// just before the crash are gone, and only a repair — a reconciliation pass, which reads the DB
// and writes Redis — brings them back. The invariants allow that staleness for one
// reconciliation period (INVARIANTS LIKE-4 "after one reconciliation period": the seed's sync job,
// 002:L358, every sync_interval_ms of the scenario, whatever the variant), but a period can
// only repair when a repair is possible: Redis and the DB both up and reachable from a live
// replica (no partition or clog between them: a clog holds the sync job's reads and writes until
// it ends, swarm-hardened-seed-ttls seed 8629). So a window opens at the sample before a restart is seen and closes only after
// `repair_us` (a reconciliation period plus its timeouts) of continuous repairable samples;
// another restart while a window is open extends it. A cache that stays stale after such a
// stretch is still judged (and fails).
class GraceTracker {
 public:
  explicit GraceTracker(int64_t repair_us, int64_t start_us = 0);
  // One sample at now_us: `restarted` = Redis restarted since the previous sample;
  // `repairable` = Redis, the DB and at least one replica are up and connected right now.
  // REQUIRES: now_us does not decrease.
  void on_sample(int64_t now_us, bool restarted, bool repairable);
  // The closed windows, plus the open one (if any) up to end_us.
  std::vector<std::pair<int64_t, int64_t>> windows(int64_t end_us) const;

 private:
  int64_t repair_us_;
  int64_t last_sample_us_;
  std::optional<int64_t> open_start_us_;
  std::optional<int64_t> repairable_since_us_;
  std::vector<std::pair<int64_t, int64_t>> closed_;
};

}  // namespace fl::likes::props
