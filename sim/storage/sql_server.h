// SqlServer: SQLite as a process on a simulated DB node, served over the simulated network.
//
// Contract
// - boot(vfs, options) is the BootFn of the DB process. Each incarnation opens options.db_file
//   through `vfs` (SQLite recovers from a hot journal or the WAL as it would after a reboot),
//   applies the journal mode, `synchronous` and the schema, then serves options.service.
//   If opening fails (an injected read error during recovery), it retries every open_retry_us.
// - Each request runs synchronously inside SQLite (one connection; requests never interleave
//   inside a transaction), then the reply waits for the simulated disk: the xSync time the VFS
//   accumulated plus statement_cost_us per statement, serialised per server (one disk). A crash
//   during that wait loses the reply but not a synced commit: the client sees an indeterminate
//   outcome although the commit happened.
// - A request delivered twice (network duplication) executes once; the duplicate gets the cached
//   result.
// - The server object lives in its process's boot frame. Its destruction is the crash of the DB
//   node: the VFS crashes (losing unsynced writes when options.crash_loses_unsynced, else keeping
//   the page cache, as a kill -9 would), then the dead connection is closed without touching
//   the disk.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/hash.h"
#include "sim/storage/sim_vfs.h"
#include "sim/storage/sql_wire.h"
#include "sim/storage/sqlite_exec.h"
#include "sim/storage/sqlite_settings.h"
#include "sim/world.h"

namespace fl::sim::storage {

// One request the SQL server executed, as the world observed it at the DB node: what was
// committed (result.ok()) or refused, whatever the client later heard (its reply may be lost).
// The judges' view of the database during a run; the final state is read back from the VFS.
// A commit acknowledged here can still be lost by a power loss when synchronous is not FULL.
struct SqlCommitRecord {
  uint64_t seq = 0;          // execution order at this database
  int64_t time_us = 0;       // world time
  std::string client;        // the calling process
  uint32_t incarnation = 0;  // of the DB process
  bool transaction = false;
  uint64_t cause = 0;                         // the client operation it works for (World::current_cause)
  std::shared_ptr<const SqlRequest> request;  // never null; the request as it arrived, shared
  std::shared_ptr<const SqlResult> result;    // never null; the reply's result, shared

  const std::vector<SqlStatement>& statements() const { return request->statements; }
};
using SqlCommitLog = std::vector<SqlCommitRecord>;

// The same records handed to a consumer as they happen instead of kept to the end: a long run's
// log is much of its memory, and a judge that needs only part of each record keeps only that.
// Shared across incarnations like the log; `executed` numbers the records (their seq).
struct SqlCommitStream {
  uint64_t executed = 0;
  std::function<void(const SqlCommitRecord&)> consume;  // never null
};

struct SqlServerOptions {
  std::string service = "sql";
  std::string db_file = "main.db";
  JournalMode journal_mode = JournalMode::kWal;
  Synchronous synchronous = Synchronous::kFull;
  std::vector<std::string> schema;   // run at every boot: use CREATE ... IF NOT EXISTS
  bool crash_loses_unsynced = true;  // a crash of the DB process is a power loss of its node
  int64_t statement_cost_us = 20;    // CPU time per statement, besides the disk
  int64_t open_retry_us = 100'000;
  size_t dedupe_capacity = 4096;  // remembered request ids
  // Where executed requests are logged (shared across incarnations; null: not kept, only traced).
  std::shared_ptr<SqlCommitLog> commit_log;
  // Or where they are streamed (at most one of the two).
  std::shared_ptr<SqlCommitStream> commit_stream;

  std::string describe() const;
};

struct SqlServerStats {
  uint64_t requests = 0, duplicates = 0, opens = 0, open_failures = 0;
  int64_t disk_busy_us = 0;
};

class SqlServer {
 public:
  static BootFn boot(std::shared_ptr<SimVfs> vfs, SqlServerOptions options);

  SqlServer(Process& process, std::shared_ptr<SimVfs> vfs, SqlServerOptions options);
  ~SqlServer();  // the crash of the node (see above)
  SqlServer(const SqlServer&) = delete;
  SqlServer& operator=(const SqlServer&) = delete;

  // Opens the database and serves until the process dies. Never returns normally.
  Task<void> run();
  const SqlServerStats& stats() const { return stats_; }

 private:
  bool open();
  void close_dead();
  Task<MessagePtr> handle(MessagePtr request);
  int64_t charge_disk_us(int64_t cost_us);
  void log_request(std::shared_ptr<const SqlRequest> req, const std::shared_ptr<const SqlResult>& result);
  static std::pair<std::string, std::string> verb_and_table(const std::string& sql);

  Process& process_;
  std::shared_ptr<SimVfs> vfs_;
  SqlServerOptions options_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<SqliteExecutor> exec_;
  int64_t disk_free_at_us_ = 0;
  using RequestKey = std::pair<std::string, std::pair<uint32_t, uint64_t>>;
  struct RequestKeyHash {
    size_t operator()(const RequestKey& k) const {
      return static_cast<size_t>(combine(combine(stable_hash(k.first), k.second.first), k.second.second));
    }
  };
  // The reply sent, re-sent to a duplicate. Only looked up and erased by key (the oldest first,
  // by done_order_), never iterated, so the hash order reaches no output.
  std::unordered_map<RequestKey, MessagePtr, RequestKeyHash> done_;
  std::deque<RequestKey> done_order_;
  SqlServerStats stats_;
};

}  // namespace fl::sim::storage
