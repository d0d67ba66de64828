// What the gifts judges see of a finished run: world observations only (the clients' history, the
// DB read back from its VFS, the SQL server's commit log, the Redis server's command log, the log
// broker's records, the world's fault log) and the seed's constants. Never impl/'s state, the
// variant or the fix set.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "impl/ports/history.h"
#include "model/gifts/model.h"
#include "sim/fault_log.h"

namespace fl::gifts::props {

struct HistoryOp {
  uint64_t id = 0;
  std::string process;
  std::string op;  // send | connect | deliver
  std::string args;
  int64_t invoke_us = 0;
  int64_t complete_us = -1;  // -1: never completed
  Outcome outcome = Outcome::kInfo;
  std::string result;
};

struct RedisCommand {
  int64_t time_us = 0;
  int64_t node_ms = 0;            // the Redis node's clock: TTLs run on it
  std::string client;             // calling process
  uint32_t incarnation = 0;       // of the Redis process
  int depth = 0;                  // 1: inside a script or EXEC (atomic with its parent)
  std::vector<std::string> argv;  // argv[0], the command's name, in upper case
};

struct SqlStatementObs {
  std::string sql;
  std::vector<std::string> params;  // rendered: integers in decimal, text as is
};
struct SqlCommit {
  int64_t time_us = 0;
  bool ok = false;     // committed
  std::string client;  // the calling process
  std::vector<SqlStatementObs> statements;
  uint64_t cause = 0;  // the client operation (history id) it worked for, as the world tracked it (0: none)
};

struct OutboxRow {
  std::string msg_id;
  std::string status;
};

struct LogRecordObs {
  std::string key;
  std::string value;    // the message of 003:L25-33 as `msgId|roomId|...`
  int64_t time_us = 0;  // broker append time (world time, from the log server)
};

// The seed's constants and the scenario's parameters.
struct GiftsParams {
  int64_t initial_balance = 0;
  int64_t window_ms = 3000;    // 003:L105
  int64_t expiry_ms = 10'000;  // 003:L200
  int64_t t_gap_ms = 5000;     // GIFT-9's bound (scenario param)
  int64_t slack_ms = 1000;     // network and timer slack on top of the seed's durations
  // The push path's own timers between the log and a viewer when nothing holds it: a consumer's
  // poll waits up to 200 ms (+ a 50 ms idle back-off), the combo sweeper ticks every 200 ms, a hop
  // takes well under 1 ms (docs/systems/gifts.md, "What the judges allow").
  int64_t push_tick_ms = 500;
  bool txmsg = false;  // scenario option consistency: txmsg (003:L225-231, no outbox table)
  // RocketMQ's check-back of a half message: once it is transactionTimeout (6 s) old by the
  // broker's clock, at the next scan (every 2 s here): docs/systems/gifts.md.
  int64_t half_check_us = 8'000'000;
  int64_t half_scan_us = 2'000'000;  // the broker's check-back scan (the adapter's BrokerConfig)
  int64_t outbox_poll_ms = 1000;     // 003:L223's poller, every 1 s (docs/systems/gifts.md)
  // The push consumers' session timeout: the log's group evicts a consumer that stopped
  // heartbeating after it, by the broker's clock, and only then gives its partitions to another.
  int64_t consumer_session_us = 6'000'000;
};

struct GiftsRun {
  GiftsParams params;
  std::vector<HistoryOp> history;
  bool db_read = false;
  std::map<int64_t, int64_t> balances;  // wallet
  std::vector<model::Order> orders;
  std::vector<OutboxRow> outbox;
  std::vector<SqlCommit> commits;
  std::vector<RedisCommand> redis;
  std::vector<LogRecordObs> log;
  sim::FaultLog faults;
  int64_t end_us = 0;
  // Process names by role (the topology the scenario asked for).
  std::vector<std::string> services;     // gift service, push, gateways, log, redis, db
  std::vector<std::string> charge_path;  // gift service, log, redis, db
  std::vector<std::string> gateways;
  std::vector<std::string> pushers;  // the push service's processes (the log's consumers)
};

// The charged gifts with their commit and first-append times.
std::vector<model::ChargedGift> charged_gifts(const GiftsRun& run);

}  // namespace fl::gifts::props
