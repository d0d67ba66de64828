// Direct ports for tests: the Redis port on an in-process simulated Redis engine and the Sql port
// on an in-memory SQLite connection, both in the calling process (no network), each call taking
// `latency_us` of simulated time so that concurrent tasks interleave between commands.
// Header-only (target fl_sim_testing), the test-support library: tests that run service code
// against the simulated stores live in tests/ (impl/ tests include only impl/).
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "impl/ports/redis.h"
#include "impl/ports/redis_script.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "sim/redis/engine.h"
#include "sim/storage/sqlite_exec.h"
#include "impl/ports/assert.h"

namespace fl::likes::testing {

class DirectRedis final : public Redis {
 public:
  DirectRedis(Runtime& rt, sim::redis::Engine& engine, std::shared_ptr<const ScriptRegistry> scripts,
              int64_t latency_us = 100)
      : rt_(rt), engine_(engine), scripts_(std::move(scripts)), latency_us_(latency_us) {}

  bool down = false;  // every command fails (not executed)

  Task<RedisReply> command(std::vector<std::string> argv) override {
    co_await rt_.clock().sleep_us(latency_us_);
    if (down) co_return RedisReply::transport_error("unavailable", false);
    co_return engine_.execute(session_, argv, rt_.clock().now_ms());
  }
  Task<std::vector<RedisReply>> pipeline(std::vector<std::vector<std::string>> cmds) override {
    co_await rt_.clock().sleep_us(latency_us_);
    std::vector<RedisReply> out;
    for (auto& c : cmds) {
      out.push_back(down ? RedisReply::transport_error("unavailable", false)
                         : engine_.execute(session_, c, rt_.clock().now_ms()));
    }
    co_return out;
  }
  Task<RedisReply> script(std::string_view name, std::vector<std::string> keys,
                          std::vector<std::string> args) override {
    co_await rt_.clock().sleep_us(latency_us_);
    if (down) co_return RedisReply::transport_error("unavailable", false);
    const RedisScript* s = scripts_ ? scripts_->by_name(name) : nullptr;
    if (s == nullptr) co_return RedisReply::error("ERR faultline: unknown script");
    std::vector<std::string> argv{"EVAL", s->lua, std::to_string(keys.size())};
    for (auto& k : keys) argv.push_back(k);
    for (auto& a : args) argv.push_back(a);
    co_return engine_.execute(session_, argv, rt_.clock().now_ms());
  }
  Task<RedisSubscribeResult> subscribe(std::vector<std::string>, RedisSubscriptionHandlers) override {
    co_return RedisSubscribeResult{RedisReply::error("ERR not supported"), nullptr};
  }

 private:
  Runtime& rt_;
  sim::redis::Engine& engine_;
  std::shared_ptr<const ScriptRegistry> scripts_;
  int64_t latency_us_;
  sim::redis::Session session_;
};

// An in-memory SQLite database shared by every DirectSql built on it.
class MemoryDb {
 public:
  MemoryDb() {
    int rc = sqlite3_open(":memory:", &db_);
    FL_ASSERT(rc == SQLITE_OK);
    (void)rc;
    exec_ = std::make_unique<sim::storage::SqliteExecutor>(db_);
  }
  ~MemoryDb() {
    exec_->clear_cache();
    exec_.reset();
    sqlite3_close(db_);
  }
  sim::storage::SqliteExecutor& exec() { return *exec_; }

 private:
  sqlite3* db_ = nullptr;
  std::unique_ptr<sim::storage::SqliteExecutor> exec_;
};

class DirectSql final : public Sql {
 public:
  DirectSql(Runtime& rt, MemoryDb& db, int64_t latency_us = 200) : rt_(rt), db_(db), latency_us_(latency_us) {}
  using Sql::execute;
  bool down = false;
  int transactions = 0;  // transaction() calls (group commit tests)

  Task<SqlResult> execute(SqlStatement statement) override {
    co_await rt_.clock().sleep_us(latency_us_);
    if (down) co_return SqlResult::failure(SqlStatus::kUnavailable, "down");
    co_return db_.exec().execute(statement);
  }
  Task<SqlResult> transaction(std::vector<SqlStatement> statements) override {
    ++transactions;
    co_await rt_.clock().sleep_us(latency_us_);
    if (down) co_return SqlResult::failure(SqlStatus::kUnavailable, "down");
    co_return db_.exec().transaction(statements);
  }

 private:
  Runtime& rt_;
  MemoryDb& db_;
  int64_t latency_us_;
};

}  // namespace fl::likes::testing
