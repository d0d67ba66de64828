// The messages between SqlClient and SqlServer on the simulated network.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/ports/sql.h"

namespace fl::sim::storage {

struct SqlRequest {
  // (client, incarnation, seq) identifies a request, so a duplicated delivery executes once.
  std::string client;
  uint32_t incarnation = 0;
  uint64_t seq = 0;
  bool transaction = false;  // false: exactly one statement, autocommit
  std::vector<SqlStatement> statements;

  std::string describe() const {
    std::string out = std::string(transaction ? "sql txn " : "sql exec ") + client + "#" + std::to_string(seq);
    for (const SqlStatement& s : statements) out += " | " + s.describe();
    return out;
  }
};

struct SqlReply {
  SqlResult result;
  std::string describe() const { return "sql reply " + result.describe(); }
};

}  // namespace fl::sim::storage
