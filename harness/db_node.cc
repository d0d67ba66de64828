#include "harness/db_node.h"

#include <utility>

#include "sim/storage/sqlite_settings.h"

namespace fl {

sim::storage::SimVfsOptions vfs_options(const StorageSettings& storage, const std::string& vfs_name) {
  sim::storage::SimVfsOptions vo;
  vo.name = vfs_name;
  vo.sync_cost_us = storage.sync_latency_us;
  vo.torn_writes = storage.torn_writes;
  vo.write_error_probability = storage.io_error_probability;
  vo.sync_error_probability = storage.io_error_probability;
  vo.volatile_write_cache = storage.volatile_write_cache;
  vo.write_cache_flush_us = storage.write_cache_flush_ms * 1000;
  return vo;
}

DbNode add_db_node(sim::World& world, const StorageSettings& storage, const std::string& vfs_name,
                   const std::string& rng_stream) {
  DbNode db;
  db.node = world.add_node("db");
  sim::World* w = &world;
  db.vfs = std::make_shared<sim::storage::SimVfs>(vfs_options(storage, vfs_name), world.stream(rng_stream),
                                                  [w] { return w->now_us(); });
  db.vfs->set_fault_observer([w](sim::storage::SimIoOp op) {
    sim::FaultRecord f;
    f.time_us = w->now_us();
    f.kind = sim::FaultKind::kStorageError;
    f.node = "db";
    f.process = "db";
    f.value = static_cast<int64_t>(op);
    f.cause = w->current_cause();  // the statement's operation: the SQL server runs it for its request
    w->record_fault(std::move(f));
  });
  return db;
}

sim::storage::SqlServerOptions sql_server_options(const StorageSettings& storage) {
  sim::storage::SqlServerOptions so;
  so.journal_mode = sim::storage::parse_journal_mode(storage.journal_mode).value_or(sim::storage::JournalMode::kWal);
  so.synchronous = sim::storage::parse_synchronous(storage.synchronous).value_or(sim::storage::Synchronous::kFull);
  return so;
}

}  // namespace fl
