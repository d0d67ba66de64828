// SqlClient: the Sql port in simulation — requests to an SqlServer over the simulated network.
//
// Contract
// - Each call is one Rpc call with options.timeout_us. Transport outcomes map to SqlStatus:
//   timeout and connection reset -> kIndeterminate (the statement or commit may have happened:
//   never "failed"); no server -> kUnavailable (certainly not executed).
// - When options.history is set, every call is recorded as an operation (op "sql.execute" or
//   "sql.transaction", args = the statements): kOk -> ok, certainly_not_applied() -> fail,
//   anything else (kIndeterminate, kIoError) -> info.
// - One client per process; use it from that process's tasks only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/ports/history.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"

namespace fl::sim::storage {

struct SqlClientOptions {
  std::string service = "sql";
  int64_t timeout_us = 1'000'000;
  Recorder* history = nullptr;  // not owned; may be null
};

class SqlClient final : public Sql {
 public:
  SqlClient(Runtime& runtime, Rpc& rpc, SqlClientOptions options = {});

  using Sql::execute;
  Task<SqlResult> execute(SqlStatement statement) override;
  Task<SqlResult> transaction(std::vector<SqlStatement> statements) override;

 private:
  Task<SqlResult> call(bool transaction, std::vector<SqlStatement> statements);

  Runtime& runtime_;
  Rpc& rpc_;
  SqlClientOptions options_;
  uint64_t next_seq_ = 1;
};

}  // namespace fl::sim::storage
