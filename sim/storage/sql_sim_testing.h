// Test helper (header-only, used by *_test.cc and bench/): a world with one DB node running an
// SqlServer on a SimVfs, and client processes that talk to it through SqlClient.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "sim/storage/sim_vfs.h"
#include "sim/storage/sql_client.h"
#include "sim/storage/sql_server.h"
#include "sim/world.h"

namespace fl::sim::storage {

class SqlSim {
 public:
  using ClientBody = std::function<Task<void>(Process&, Sql&)>;

  SqlSim(uint64_t seed, SqlServerOptions server, SimVfsOptions disk = {}, bool record_trace = false)
      : world_(std::make_unique<World>(WorldOptions{.seed = seed, .record_trace = record_trace})) {
    World* w = world_.get();
    vfs_ = std::make_shared<SimVfs>(disk, w->stream("storage/db"), [w] { return w->now_us(); });
    db_node_ = w->add_node("db");
    app_node_ = w->add_node("app");
    db_ = &w->add_process(db_node_, "sqlite", SqlServer::boot(vfs_, std::move(server)));
    w->start(*db_);
  }
  ~SqlSim() { world_.reset(); }  // the world (and the DB process) first, then the disk

  World& world() { return *world_; }
  SimVfs& vfs() { return *vfs_; }
  Process& db() { return *db_; }

  // Adds and starts a client process running `body` with an SqlClient.
  Process& client(const std::string& name, ClientBody body, int64_t timeout_us = 1'000'000) {
    World* w = world_.get();
    Process& p = w->add_process(app_node_, name, [w, body, timeout_us](Process& self) -> Task<void> {
      SqlClient sql(self, self.rpc(),
                    SqlClientOptions{.service = "sql", .timeout_us = timeout_us, .history = &w->history()});
      co_await body(self, sql);
    });
    w->start(p);
    return p;
  }

 private:
  std::shared_ptr<SimVfs> vfs_;
  std::unique_ptr<World> world_;
  uint32_t db_node_ = 0, app_node_ = 0;
  Process* db_ = nullptr;
};

}  // namespace fl::sim::storage
