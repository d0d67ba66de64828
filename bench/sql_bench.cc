// Rows per second through the Sql port in simulation (client process -> simulated network ->
// SqlServer -> SQLite on SimVfs), against plain SQLite in memory measured in the same run.
//
// Every insert hits a UNIQUE(user, sku) index. "Autocommit" = one row per transaction (one
// Sql::execute per row); "Batched" = kBatch rows per Sql::transaction. The counter
// `ratio_vs_plain_memory` is (this benchmark's rows/s) / (plain in-memory SQLite rows/s with the
// same transaction shape and the same final table size), both measured in this thread's CPU time (the machine is shared, so wall
// time would mostly measure the neighbours). BM_SimSqlPort also prints the world's events per row
// and the events still queued at the end.
#include <benchmark/benchmark.h>

#include <time.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/storage/sim_vfs.h"
#include "sim/storage/sql_sim_testing.h"
#include "sim/storage/sqlite_exec.h"

namespace fl::sim::storage {
namespace {

double cpu_now_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

constexpr int kRowsPerIteration = 1000;
constexpr int kBatch = 100;
const char* kSchema =
    "CREATE TABLE IF NOT EXISTS purchase(id INTEGER PRIMARY KEY, user TEXT NOT NULL, sku TEXT NOT NULL, "
    "price INTEGER, UNIQUE(user, sku))";
const char* kInsert = "INSERT INTO purchase(user, sku, price) VALUES(?, ?, ?)";

SqlStatement insert_row(int64_t i) {
  return SqlStatement(kInsert, {"u" + std::to_string(i % 1000), "s" + std::to_string(i), i});
}

// Plain SQLite, ":memory:", same statements through the same executor. Returns rows/s.
double plain_memory_rows_per_s(int batch, int rows) {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  double rate = 0;
  {
    SqliteExecutor exec(db);
    exec.exec_script(kSchema);
    const double t0 = cpu_now_s();
    for (int i = 0; i < rows; i += batch) {
      if (batch == 1) {
        (void)exec.execute(insert_row(i));
      } else {
        std::vector<SqlStatement> stmts;
        for (int j = 0; j < batch; ++j) stmts.push_back(insert_row(i + j));
        (void)exec.transaction(stmts);
      }
    }
    const double s = (cpu_now_s() - t0);
    rate = rows / s;
  }
  sqlite3_close(db);
  return rate;
}

void BM_PlainSqliteMemory(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  {
    SqliteExecutor exec(db);
    exec.exec_script(kSchema);
    int64_t next = 0;
    for (auto _ : state) {
      for (int i = 0; i < kRowsPerIteration; i += batch) {
        if (batch == 1) {
          benchmark::DoNotOptimize(exec.execute(insert_row(next++)));
        } else {
          std::vector<SqlStatement> stmts;
          for (int j = 0; j < batch; ++j) stmts.push_back(insert_row(next++));
          benchmark::DoNotOptimize(exec.transaction(stmts));
        }
      }
    }
    state.SetItemsProcessed(state.iterations() * kRowsPerIteration);
  }
  sqlite3_close(db);
}
BENCHMARK(BM_PlainSqliteMemory)->Arg(1)->Arg(kBatch)->Unit(benchmark::kMillisecond);

// SQLite on SimVfs directly (no world, no network): the VFS's own overhead. Arguments: rows per
// transaction and the journal mode (as BM_SimSqlPort's).
void BM_SimVfsDirect(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  const auto journal = static_cast<JournalMode>(state.range(1));
  state.SetLabel(journal_mode_name(journal));
  SimVfs vfs(SimVfsOptions{}, Rng(1), [] { return int64_t{1'767'225'600'000'000}; });
  sqlite3* db = nullptr;
  sqlite3_open_v2("bench.db", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs.vfs_name());
  {
    SqliteExecutor exec(db);
    exec.exec_script(durability_pragmas(journal, Synchronous::kFull) + kSchema);
    int64_t next = 0;
    double cpu_s = 0;
    for (auto _ : state) {
      const double t0 = cpu_now_s();
      for (int i = 0; i < kRowsPerIteration; i += batch) {
        if (batch == 1) {
          benchmark::DoNotOptimize(exec.execute(insert_row(next++)));
        } else {
          std::vector<SqlStatement> stmts;
          for (int j = 0; j < batch; ++j) stmts.push_back(insert_row(next++));
          benchmark::DoNotOptimize(exec.transaction(stmts));
        }
      }
      cpu_s += (cpu_now_s() - t0);
    }
    const double rows = static_cast<double>(state.iterations()) * kRowsPerIteration;
    const double baseline = plain_memory_rows_per_s(batch, static_cast<int>(rows));
    state.SetItemsProcessed(static_cast<int64_t>(rows));
    state.counters["rows_per_s"] = rows / cpu_s;
    state.counters["plain_memory_rows_per_s"] = baseline;
    state.counters["ratio_vs_plain_memory"] = rows / cpu_s / baseline;
  }
  sqlite3_close(db);
}
BENCHMARK(BM_SimVfsDirect)
    ->ArgNames({"batch", "journal"})
    ->Args({1, static_cast<int>(JournalMode::kWal)})
    ->Args({kBatch, static_cast<int>(JournalMode::kWal)})
    ->Args({1, static_cast<int>(JournalMode::kTruncate)})
    ->Unit(benchmark::kMillisecond);

// The whole simulated path: client process, network, server process, SQLite on SimVfs.
// Arguments: rows per transaction, and the journal mode (a JournalMode; WAL, the default of
// SqlServerOptions and of every scenario that does not set storage.journal_mode, or a rollback
// journal, each with synchronous=FULL, which keeps the file intact across a power loss).
void BM_SimSqlPort(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  SqlServerOptions server;
  server.journal_mode = static_cast<JournalMode>(state.range(1));
  server.synchronous = Synchronous::kFull;
  state.SetLabel(journal_mode_name(server.journal_mode));
  server.schema = {kSchema};
  SqlSim sim(1, server);
  int64_t next = 0;
  int64_t ok_rows = 0;
  int client_index = 0;
  double cpu_s = 0;
  for (auto _ : state) {
    const double t0 = cpu_now_s();
    sim.client("c" + std::to_string(client_index++), [&](Process& self, Sql& sql) -> Task<void> {
      while (!(co_await sql.query("SELECT 1")).ok()) co_await self.clock().sleep_ms(10);
      for (int i = 0; i < kRowsPerIteration; i += batch) {
        if (batch == 1) {
          SqlResult r = co_await sql.execute(insert_row(next++));
          ok_rows += r.ok() ? 1 : 0;
        } else {
          std::vector<SqlStatement> stmts;
          for (int j = 0; j < batch; ++j) stmts.push_back(insert_row(next++));
          SqlResult r = co_await sql.transaction(std::move(stmts));
          ok_rows += r.ok() ? batch : 0;
        }
      }
    });
    sim.world().run_until(sim.world().now_us() + 3'600'000'000LL);
    cpu_s += (cpu_now_s() - t0);
  }
  const double rows = static_cast<double>(state.iterations()) * kRowsPerIteration;
  // The baseline grows its table from empty to the same size, with the same transaction shape.
  const double baseline = plain_memory_rows_per_s(batch, static_cast<int>(rows));
  if (ok_rows != static_cast<int64_t>(rows)) state.SkipWithError("some inserts failed");
  state.SetItemsProcessed(static_cast<int64_t>(rows));
  const double rate = rows / cpu_s;
  state.counters["rows_per_s"] = rate;
  state.counters["plain_memory_rows_per_s"] = baseline;
  state.counters["ratio_vs_plain_memory"] = rate / baseline;
  state.counters["sim_s_per_1k_rows"] = static_cast<double>(sim.world().now_us() - kEpochUs) / 1e6 / (rows / 1000.0);
  // The kernel's share of the path: events executed per row, and the events still queued at the end
  // (a deep queue makes each push and pop dearer).
  state.counters["events_per_row"] = static_cast<double>(sim.world().events_executed()) / rows;
  state.counters["pending_events"] = static_cast<double>(sim.world().pending_events());
}
BENCHMARK(BM_SimSqlPort)
    ->ArgNames({"batch", "journal"})
    ->Args({1, static_cast<int>(JournalMode::kWal)})
    ->Args({kBatch, static_cast<int>(JournalMode::kWal)})
    ->Args({1, static_cast<int>(JournalMode::kDelete)})
    ->Args({1, static_cast<int>(JournalMode::kTruncate)})
    ->Args({1, static_cast<int>(JournalMode::kPersist)})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fl::sim::storage

BENCHMARK_MAIN();
