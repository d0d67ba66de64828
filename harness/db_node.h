// The DB node every system runs: SQLite on a SimVfs built from the scenario's `storage:` section.
//
// Contract
// - add_db_node() adds the node "db" to the world (at the caller's point in set-up order, which
//   the trace fingerprint depends on) and a SimVfs configured from the storage settings, drawing
//   its randomness from the world stream `rng_stream`. Every I/O error the VFS injects is recorded
//   in the world's fault log as FaultKind::kStorageError on node and process "db", so judges can
//   excuse the outcomes it explains. The caller starts the SQL server process on `node`.
// - sql_server_options() carries the journal mode and `synchronous` of the storage settings; the
//   caller adds schema, file name and commit log.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "harness/scenario.h"
#include "sim/storage/sim_vfs.h"
#include "sim/storage/sql_server.h"
#include "sim/world.h"

namespace fl {

struct DbNode {
  uint32_t node = 0;
  std::shared_ptr<sim::storage::SimVfs> vfs;
};

sim::storage::SimVfsOptions vfs_options(const StorageSettings& storage, const std::string& vfs_name);
DbNode add_db_node(sim::World& world, const StorageSettings& storage, const std::string& vfs_name,
                   const std::string& rng_stream);
sim::storage::SqlServerOptions sql_server_options(const StorageSettings& storage);

}  // namespace fl
