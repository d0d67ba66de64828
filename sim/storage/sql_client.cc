#include "sim/storage/sql_client.h"

#include "sim/storage/sql_wire.h"
#include "impl/ports/assert.h"

namespace fl::sim::storage {

SqlClient::SqlClient(Runtime& runtime, Rpc& rpc, SqlClientOptions options)
    : runtime_(runtime), rpc_(rpc), options_(std::move(options)) {
  FL_ASSERT(options_.timeout_us > 0);
}

Task<SqlResult> SqlClient::execute(SqlStatement statement) {
  std::vector<SqlStatement> one;
  one.push_back(std::move(statement));
  return call(false, std::move(one));
}

Task<SqlResult> SqlClient::transaction(std::vector<SqlStatement> statements) {
  return call(true, std::move(statements));
}

namespace {

Outcome outcome_of(const SqlResult& r) {
  if (r.ok()) return Outcome::kOk;
  if (r.certainly_not_applied()) return Outcome::kFail;
  return Outcome::kInfo;  // indeterminate and I/O errors: the write may have happened
}

}  // namespace

Task<SqlResult> SqlClient::call(bool transaction, std::vector<SqlStatement> statements) {
  SqlRequest req;
  req.client = std::string(runtime_.process_name());
  req.incarnation = runtime_.incarnation();
  req.seq = next_seq_++;
  req.transaction = transaction;
  req.statements = std::move(statements);
  uint64_t op_id = 0;
  if (options_.history != nullptr) {
    op_id = options_.history->invoke(runtime_.process_name(), transaction ? "sql.transaction" : "sql.execute",
                                     req.statements_text());
  }
  RpcResult rpc = co_await rpc_.call(options_.service, make_message(std::move(req)), options_.timeout_us);
  SqlResult result;
  const SqlReply* reply = nullptr;
  switch (rpc.status) {
    case RpcStatus::kOk: {
      reply = message_as<SqlReply>(rpc.reply);
      FL_ASSERT(reply != nullptr);
      // One copy out of the reply the server's duplicate cache shares (a conditional expression
      // here would copy it into a temporary first).
      if (reply) {
        result = reply->result();
      } else {
        result = SqlResult::failure(SqlStatus::kIndeterminate, "malformed reply");
      }
      break;
    }
    case RpcStatus::kTimeout:
    case RpcStatus::kReset:
      result = SqlResult::failure(SqlStatus::kIndeterminate,
                                  std::string("no reply (") + rpc_status_name(rpc.status) + "): may have executed");
      break;
    case RpcStatus::kUnavailable:
      result = SqlResult::failure(SqlStatus::kUnavailable, "no SQL server serving " + options_.service);
      break;
  }
  if (options_.history != nullptr) {
    options_.history->complete(op_id, outcome_of(result), reply ? reply->result_text() : result.describe());
  }
  co_return std::move(result);
}

}  // namespace fl::sim::storage
