#include "sim/storage/sql_server.h"

#include <algorithm>
#include <cctype>

#include "sim/storage/sql_wire.h"
#include "impl/ports/assert.h"

namespace fl::sim::storage {

namespace {

// Suspends forever: the server's frame lives until the process crashes.
struct Forever {
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) const noexcept {}
  void await_resume() const noexcept {}
};

}  // namespace

std::string SqlServerOptions::describe() const {
  return "service=" + service + " file=" + db_file + " journal_mode=" + journal_mode_name(journal_mode) +
         " synchronous=" + synchronous_name(synchronous) +
         " crash_loses_unsynced=" + (crash_loses_unsynced ? "1" : "0") +
         " statement_cost_us=" + std::to_string(statement_cost_us);
}

BootFn SqlServer::boot(std::shared_ptr<SimVfs> vfs, SqlServerOptions options) {
  FL_ASSERT(vfs != nullptr);
  return [vfs, options](Process& p) -> Task<void> {
    SqlServer server(p, vfs, options);
    co_await server.run();
  };
}

SqlServer::SqlServer(Process& process, std::shared_ptr<SimVfs> vfs, SqlServerOptions options)
    : process_(process), vfs_(std::move(vfs)), options_(std::move(options)) {
  FL_ASSERT(vfs_ != nullptr);
}

SqlServer::~SqlServer() {
  vfs_->crash(options_.crash_loses_unsynced);
  close_dead();
}

void SqlServer::close_dead() {
  exec_.reset();  // finalizes the cached statements
  if (db_ != nullptr) sqlite3_close_v2(db_);
  db_ = nullptr;
}

bool SqlServer::open() {
  FL_ASSERT(db_ == nullptr);
  ++stats_.opens;
  vfs_->reseed_sqlite_prng();
  int rc = sqlite3_open_v2(options_.db_file.c_str(), &db_,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | kSimConnectionFlags, vfs_->vfs_name());
  if (rc == SQLITE_OK) {
    exec_ = std::make_unique<SqliteExecutor>(db_);
    std::string script = durability_pragmas(options_.journal_mode, options_.synchronous);
    for (const std::string& s : options_.schema) script += s + ";";
    SqlResult r = exec_->exec_script(script);
    if (r.ok()) return true;
    process_.note("sql open failed: " + r.describe());
  } else {
    process_.note(std::string("sql open failed: ") + sqlite3_errstr(rc));
  }
  ++stats_.open_failures;
  exec_.reset();
  sqlite3_close_v2(db_);
  db_ = nullptr;
  return false;
}

Task<void> SqlServer::run() {
  const int64_t first_try_us = process_.world().now_us();
  while (!open()) co_await process_.clock().sleep_us(options_.open_retry_us);
  // Each failed open was a storage fault (an injected I/O error, a file a power loss tore): the
  // server serves that much later than it would have (what a first serve's refusals are owed to).
  process_.world().note_fault_delay(process_, process_.world().now_us() - first_try_us);
  // Recovery (rolling back a hot journal, rebuilding the wal-index) costs disk time too.
  const int64_t boot_cost_us = vfs_->take_cost_us();
  if (boot_cost_us > 0) co_await process_.clock().sleep_us(boot_cost_us);
  process_.rpc().serve(options_.service, [this](MessagePtr request) { return handle(std::move(request)); });
  co_await Forever{};
}

int64_t SqlServer::charge_disk_us(int64_t cost_us) {
  // World time, not the node's clock: the disk is not fooled by clock skew or jumps.
  const int64_t now_us = process_.world().now_us();
  disk_free_at_us_ = std::max(disk_free_at_us_, now_us) + cost_us;
  stats_.disk_busy_us += cost_us;
  return disk_free_at_us_ - now_us;
}

// The statement's verb and the table it names ("INSERT", "outbox"), for coverage: which processes
// followed which on a table. {"", ""} for a statement that names none (BEGIN, PRAGMA).
std::pair<std::string, std::string> SqlServer::verb_and_table(const std::string& sql) {
  std::vector<std::string> words;
  std::string word;
  for (char c : sql) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
      if (words.size() > 8) break;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  if (words.empty()) return {"", ""};
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "INTO" || words[i] == "FROM" || words[i] == "UPDATE" || words[i] == "TABLE") {
      std::string table = words[i + 1];
      for (char& c : table) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return {words[0], table};
    }
  }
  return {"", ""};
}

void SqlServer::log_request(std::shared_ptr<const SqlRequest> shared_req,
                            const std::shared_ptr<const SqlResult>& shared) {
  const SqlRequest& req = *shared_req;
  const SqlResult& result = *shared;
  World& world = process_.world();
  FL_ASSERT(!(options_.commit_log && options_.commit_stream));
  const uint64_t seq = options_.commit_log      ? options_.commit_log->size() + 1
                       : options_.commit_stream ? options_.commit_stream->executed + 1
                                                : stats_.requests;
  world.trace().fold_recorded(world.now_us(), TraceKind::kObserve, seq, result.ok() ? 1 : 0, process_.node_name(),
                              process_.process_name(), [&] { return req.describe() + " -> " + result.describe(); });
  if (world.coverage().enabled()) {
    for (const SqlStatement& st : req.statements) {
      const auto [verb, table] = verb_and_table(st.sql);
      if (!table.empty()) world.coverage().access("sql", table, req.client, verb);
    }
  }
  if (!options_.commit_log && !options_.commit_stream) return;
  SqlCommitRecord r;
  r.seq = seq;
  r.time_us = world.now_us();
  r.client = req.client;
  r.incarnation = process_.incarnation();
  r.transaction = req.transaction;
  r.cause = world.current_cause();
  r.request = std::move(shared_req);
  r.result = shared;
  if (options_.commit_stream) {
    options_.commit_stream->executed = seq;
    options_.commit_stream->consume(r);
    return;
  }
  options_.commit_log->push_back(std::move(r));
}

Task<MessagePtr> SqlServer::handle(MessagePtr request) {
  const SqlRequest* req = message_as<SqlRequest>(request);
  FL_ASSERT(req != nullptr);
  if (req == nullptr) {
    co_return make_message(
        SqlReply{std::make_shared<const SqlResult>(SqlResult::failure(SqlStatus::kError, "bad request"))});
  }
  ++stats_.requests;
  RequestKey key{req->client, {req->incarnation, req->seq}};
  if (auto it = done_.find(key); it != done_.end()) {
    ++stats_.duplicates;
    co_return it->second;
  }
  SqlResult result;
  vfs_->reseed_sqlite_prng();
  if (req->transaction) {
    result = exec_->transaction(req->statements);
  } else if (req->statements.size() == 1) {
    result = exec_->execute(req->statements.front());
  } else {
    result = SqlResult::failure(SqlStatus::kError, "execute takes exactly one statement");
  }
  // One result, shared by the commit log, the duplicate cache and the network (no copy of the row
  // sets).
  const auto shared = std::make_shared<const SqlResult>(std::move(result));
  // The commit log shares the request (aliasing the message that holds it): no copy of its
  // statements, which can carry a whole checkpoint.
  log_request(std::shared_ptr<const SqlRequest>(request, req), shared);
  MessagePtr reply = make_message(SqlReply{shared});
  done_.emplace(key, reply);
  done_order_.push_back(key);
  if (done_order_.size() > options_.dedupe_capacity) {
    done_.erase(done_order_.front());
    done_order_.pop_front();
  }
  const int64_t cost_us =
      vfs_->take_cost_us() + options_.statement_cost_us * static_cast<int64_t>(req->statements.size());
  const int64_t wait_us = charge_disk_us(cost_us);
  if (wait_us > 0) co_await process_.clock().sleep_us(wait_us);
  co_return std::move(reply);
}

}  // namespace fl::sim::storage
