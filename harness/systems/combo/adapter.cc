// Adapter of the combo system (impl/combo, seed 000) to the harness: topology, workload, the
// world observations the judges read (history, Redis command log and keyspace, the DB read back
// from storage, what clients received and displayed, the fault log) and the COMBO-1..16 checkers.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <utility>

#include <absl/strings/match.h>

#include "harness/adapter_kit.h"
#include "harness/db_node.h"
#include "harness/redis_node.h"
#include "harness/sql_rows.h"
#include "harness/system.h"
#include "impl/combo/frontend_process.h"
#include "impl/combo/messages.h"
#include "impl/combo/probe.h"
#include "impl/combo/service.h"
#include "properties/combo/combo_behaviours.h"
#include "properties/combo/combo_checks.h"
#include "sim/redis/client.h"
#include "sim/redis/server.h"
#include "sim/storage/sim_vfs.h"
#include "sim/storage/vfs_reader.h"
#include "sim/storage/sqlite_settings.h"
#include "properties/common/fault_budget.h"
#include "impl/combo/fixes.h"
#include "sim/storage/sql_client.h"
#include "sim/storage/sql_server.h"
#include "sim/world.h"

namespace fl {

namespace {

using combo::ContributionRecord;
using combo::JsArray;
using combo::JsRecordPtr;
using sim::Process;
using sim::World;
constexpr int64_t kUsPerMs = 1000;
constexpr int64_t kWarmUpMs = 1000;

// Typed and range-checked when the scenario loaded (harness/params.h); the defaults live in
// ComboSystem::params().
int64_t iparam(const Scenario& s, const std::string& key) { return s.config.i64(key); }

// What the front ends received and displayed, watched by the harness, stamped with world time:
// on each page's network port (WatchedRpc: the pushes delivered to its WS service, the answers to
// its GetLatestContributions calls) and on its Screen (PageWatch: the lists it rendered, the merges
// it ran). Nothing here is the page's account of itself.
struct Watched {
  std::vector<combo::UiObs> ui;
  std::vector<combo::PollObs> polls;
};

// One page's screen. An update is what arrived (a push, a poll answer) and the list shown before
// and after the page handled it: a push is handled inside its delivery; a poll answer until the
// page next renders (it renders once per update, synchronously) or something else arrives.
class PageWatch final : public combo::Screen {
 public:
  PageWatch(World& w, Watched& out, std::string client, int64_t activity)
      : world_(w), out_(out), client_(std::move(client)), activity_(activity) {}

  // A new incarnation of the page starts with nothing shown.
  void boot() {
    close();
    shown_.clear();
  }
  void show(const std::vector<ContributionRecord>& list) override {
    if (!open_) begin("", std::nullopt, {});
    shown_ = list;
    if (open_->cause != "ws") close();  // a push's update ends with its delivery
  }
  JsArray run_merge(const Merge& merge, const JsArray& input) override {
    combo::MergeCall call;
    call.input = combo::snapshot(input);
    for (const JsRecordPtr& r : input) call.input_null.push_back(!r);
    JsArray out;
    try {
      out = merge(input);
    } catch (const std::exception& e) {
      call.error = e.what();
      call.input_after = combo::snapshot(input);
      merges_.push_back(std::move(call));
      throw;
    }
    call.output = combo::snapshot(out);
    call.input_after = combo::snapshot(input);
    merges_.push_back(std::move(call));
    return out;
  }
  void push_arrived(const MessagePtr& m) {
    std::optional<ContributionRecord> record;
    if (const combo::WsPush* push = message_as<combo::WsPush>(m)) {
      if (auto payload = combo::decode_payload(push->payload)) record = payload->record;
    }
    begin("ws", std::move(record), {});
  }
  void poll_answered(const std::vector<std::optional<ContributionRecord>>& records, int64_t began_us) {
    out_.polls.push_back({{client_, activity_, records}, began_us, world_.now_us()});
    begin("poll", std::nullopt, records);
  }
  void close() {
    if (!open_) return;
    open_->after = shown_;
    open_->merges = std::exchange(merges_, {});
    out_.ui.push_back({std::move(*open_), world_.now_us()});
    open_.reset();
  }

 private:
  void begin(std::string cause, std::optional<ContributionRecord> incoming,
             std::vector<std::optional<ContributionRecord>> poll_records) {
    close();
    open_ = combo::UiEvent{client_, activity_, std::move(cause), std::move(incoming), std::move(poll_records), shown_,
                           {},      {}};
  }

  World& world_;
  Watched& out_;
  std::string client_;
  int64_t activity_;
  std::vector<ContributionRecord> shown_;
  std::optional<combo::UiEvent> open_;
  std::vector<combo::MergeCall> merges_;
};

// A page's network port: the process's own, with what arrived watched on the way.
class WatchedRpc final : public Rpc {
 public:
  WatchedRpc(World& w, Rpc& inner, PageWatch& watch) : world_(w), inner_(inner), watch_(watch) {}
  Task<RpcResult> call(std::string_view service, MessagePtr request, int64_t timeout_us) override {
    const bool poll = service == std::string(combo::kActivityService) + ".latest";
    const int64_t began_us = world_.now_us();
    RpcResult r = co_await inner_.call(service, std::move(request), timeout_us);
    const combo::LatestReply* reply = poll && r.ok() ? message_as<combo::LatestReply>(r.reply) : nullptr;
    if (reply != nullptr && reply->ok) watch_.poll_answered(reply->records, began_us);
    co_return r;
  }
  void serve(std::string_view service, RpcHandler handler) override { inner_.serve(service, std::move(handler)); }
  void send(std::string_view service, MessagePtr message) override { inner_.send(service, std::move(message)); }
  void on_message(std::string_view service, OnewayHandler handler) override {
    inner_.on_message(service, [this, handler = std::move(handler)](MessagePtr m) {
      watch_.push_arrived(m);
      handler(m);
      watch_.close();
    });
  }

 private:
  World& world_;
  Rpc& inner_;
  PageWatch& watch_;
};

class ComboRunImpl final : public KitRun {
 public:
  std::vector<Verdict> check(World& world, const std::vector<std::string>& properties) override;
  // What check() saw the run exercise (properties/combo/combo_behaviours.h); check() runs first.
  std::vector<std::string> behaviours(World&) override { return exercised; }
  combo::ComboRun collect(World& world);
  void sample(World& world);

  World* world = nullptr;
  bool faults = false;
  std::unique_ptr<sim::redis::Server> redis;
  std::shared_ptr<sim::storage::SqlCommitLog> commit_log;
  std::string db_file = "main.db";
  Watched watched;
  std::vector<std::unique_ptr<PageWatch>> pages;
  std::vector<combo::RedisKeyObs> no_ttl_samples;
  int64_t ttl_keys_sampled = 0;
  std::vector<combo::UnackedSample> unacked;
  int64_t stream_len_max = 0;
  int64_t stream_maxlen = 0;
  int64_t redis_loss_ms = 2000;
  bool redis_loses_all = false;
  bool db_loses_unsynced = false;  // the scenario's synchronous is below FULL: a DB crash is a lossy power loss
  std::vector<std::string> exercised;
  bool db_may_corrupt =
      false;  // ... and SQLite does not promise the file survives it (see db_may_corrupt_after_power_loss)
};

int64_t redis_now_ms(World& world) {
  Process* p = world.find_process("redis");
  return p ? p->now_us() / kUsPerMs : world.now_us() / kUsPerMs;
}

std::map<std::string, std::string> fields_of(const std::vector<std::string>& flat) {
  std::map<std::string, std::string> f;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) f[flat[i]] = flat[i + 1];
  return f;
}

// Every 100 ms, from the Redis node's memory (when it is up): combo:agg* keys without a TTL
// (COMBO-9), the stream's length (COMBO-9, 000:L84), and its unacknowledged entries by their own
// fields (COMBO-6). No key scheme of any implementation is assumed beyond the seed's names.
void ComboRunImpl::sample(World& w) {
  Process* rp = w.find_process("redis");
  if (rp == nullptr || rp->state() != sim::ProcessState::kRunning) return;
  const auto& entries = redis->engine().keyspace().entries();
  const auto& expires = redis->engine().keyspace().expires();
  for (const auto& [key, entry] : entries) {
    if (key.rfind("combo:agg", 0) != 0) continue;
    ++ttl_keys_sampled;
    if (!expires.count(key) && no_ttl_samples.size() < 50) no_ttl_samples.push_back({key, -1, w.now_us()});
  }
  combo::UnackedSample s;
  s.time_us = w.now_us();
  auto it = entries.find(combo::kStreamKey);
  if (it != entries.end() && it->second.type() == sim::redis::ValueType::kStream) {
    const auto& stream = std::get<sim::redis::Stream>(it->second.value);
    stream_len_max = std::max<int64_t>(stream_len_max, static_cast<int64_t>(stream.entries.size()));
    auto g = stream.groups.find(combo::kConsumerGroup);
    for (const auto& [id, flat] : stream.entries) {
      const bool unacked = g == stream.groups.end() || g->second.pel.count(id) > 0 || g->second.last_delivered < id;
      if (unacked) s.entries.push_back({id.str(), 0, fields_of(flat)});
    }
  }
  unacked.push_back(std::move(s));
}

bool is_purchase_insert(const SqlStatement& st) {
  return st.sql.rfind("INSERT INTO activity_contributions", 0) == 0 && st.params.size() >= 12;
}

// The purchase lines the SQL server committed (INSERTs of a purchase row that returned ok), by the
// operation each worked for (SqlCommitRecord::cause), in commit order.
struct CommittedLine {
  int64_t committed_us = 0, pid = 0;
  std::string client_ref;
};
using CommittedLines = std::map<uint64_t, std::vector<CommittedLine>>;
CommittedLines committed_lines(const sim::storage::SqlCommitLog& log) {
  CommittedLines out;
  for (const sim::storage::SqlCommitRecord& c : log) {
    if (c.cause == 0 || !c.result->ok() || c.statements().size() != 1 || !is_purchase_insert(c.statements()[0]))
      continue;
    const SqlStatement& st = c.statements()[0];
    if (st.params[11].type() != SqlValue::Type::kText) continue;
    out[c.cause].push_back({c.time_us, c.result->last_insert_rowid(), st.params[11].as_text()});
  }
  return out;
}

// The line of operation `op` committed last at or before `at_us` (what a command of that
// operation at that instant worked on; nullptr: none).
const CommittedLine* line_before(const CommittedLines& lines, uint64_t op, int64_t at_us) {
  auto it = lines.find(op);
  if (op == 0 || it == lines.end()) return nullptr;
  const CommittedLine* last = nullptr;
  for (const CommittedLine& l : it->second) {
    if (l.committed_us <= at_us) last = &l;
  }
  return last;
}

// The stream entries added (XADD to the combo stream) and every PUBLISH, from the Redis command
// log (command names compared as Redis does, ignoring case). A PUBLISH is attributed to the entry being processed: the entry id its enclosing script
// names (depth 1: the parent is the caller's next depth-0 command), else the entry the same
// caller acknowledges next.
void read_command_log(const sim::redis::Server& server, const CommittedLines& lines, combo::ComboRun& run) {
  const auto& log = server.command_log();
  std::set<std::string> ids;
  for (const sim::redis::CommandRecord& c : log) {
    if (c.argv.size() < 4 || !absl::EqualsIgnoreCase(c.argv[0], "XADD") || c.argv[1] != combo::kStreamKey ||
        c.reply.kind != RedisReply::Kind::kBulk)
      continue;
    size_t star = 2;
    while (star < c.argv.size() && c.argv[star] != "*") ++star;
    combo::EntryObs e{c.reply.str, c.time_us, {}};
    if (const CommittedLine* line = line_before(lines, c.cause, c.time_us)) e.opener_pid = line->pid;
    if (star + 1 < c.argv.size()) e.fields = fields_of({c.argv.begin() + static_cast<int64_t>(star) + 1, c.argv.end()});
    ids.insert(e.id);
    run.entries.push_back(std::move(e));
  }
  for (size_t i = 0; i < log.size(); ++i) {
    const sim::redis::CommandRecord& c = log[i];
    if (c.argv.size() != 3 || !absl::EqualsIgnoreCase(c.argv[0], "PUBLISH")) continue;
    combo::PublishObs p;
    p.time_us = c.time_us;
    p.channel = c.argv[1];
    p.payload = c.argv[2];
    if (auto payload = combo::decode_payload(p.payload)) p.record = payload->record;
    for (size_t k = i + 1; k < log.size() && p.entry_id.empty(); ++k) {
      const sim::redis::CommandRecord& next = log[k];
      if (next.client != c.client || next.depth != 0) continue;
      if (c.depth == 1) {
        for (const std::string& a : next.argv)
          if (ids.count(a)) p.entry_id = a;
        break;
      }
      if (next.argv.size() >= 4 && absl::EqualsIgnoreCase(next.argv[0], "XACK")) {
        p.entry_id = next.argv[3];
        break;
      }
    }
    run.publishes.push_back(std::move(p));
  }
}

// The keys one command names: a script call's KEYS, otherwise its first argument.
void keys_of(const sim::redis::CommandRecord& c, std::set<std::string>& out) {
  if (c.argv.size() < 2) return;
  if ((absl::EqualsIgnoreCase(c.argv[0], "EVALSHA") || absl::EqualsIgnoreCase(c.argv[0], "EVAL")) &&
      c.argv.size() >= 3) {
    const size_t n = static_cast<size_t>(std::max(0LL, std::atoll(c.argv[2].c_str())));
    for (size_t k = 3; k < c.argv.size() && k < 3 + n; ++k) out.insert(c.argv[k]);
    return;
  }
  out.insert(c.argv[1]);
}

// Evictions (issue 16), from the fault budget: each key maxmemory evicted is an outage of that key
// alone. It can have lost something only of the windows whose purchases wrote or read that key
// before it went: the commands the Redis server executed for a purchase (CommandRecord::cause, the
// operation each worked for; a script's body is logged with its caller's cause) name their keys
// (keys_of), and a purchase's window key is that of its rows. A key no purchase named (one only
// the worker wrote) is in no window's scope.
std::vector<combo::ComboRun::RedisOutage> eviction_outages(const props::FaultBudget& faults,
                                                           const sim::redis::Server& server,
                                                           const combo::ComboRun& run) {
  using enum sim::FaultKind;
  const auto evictions = faults.records(kEviction);
  if (evictions.empty()) return {};
  std::map<std::string, uint64_t> op_of_ref;
  for (const combo::PurchaseOp& op : run.ops) op_of_ref[op.ref] = op.id;
  std::map<uint64_t, std::set<model::combo::Key>> keys_of_op;
  for (const auto* rows : {&run.rows, &run.lost_rows}) {
    for (const combo::RowObs& r : *rows) {
      auto it = op_of_ref.find(r.client_ref.substr(0, r.client_ref.find('#')));
      if (it != op_of_ref.end()) keys_of_op[it->second].insert({r.row.activity_id, r.row.user_id, r.row.item_id});
    }
  }
  std::map<std::string, std::vector<std::pair<int64_t, model::combo::Key>>> named;  // Redis key -> (when, window key)
  for (const sim::redis::CommandRecord& c : server.command_log()) {
    auto op = keys_of_op.find(c.cause);
    if (c.cause == 0 || op == keys_of_op.end()) continue;
    std::set<std::string> names;
    keys_of(c, names);
    for (const std::string& n : names) {
      for (const model::combo::Key& k : op->second) named[n].emplace_back(c.time_us, k);
    }
  }
  std::vector<combo::ComboRun::RedisOutage> out;
  for (const auto* f : evictions) {
    combo::ComboRun::RedisOutage o;
    o.down_us = o.up_us = f->time_us;
    o.evicted_key = f->detail;
    for (const auto& [at, k] : named[f->detail]) {
      if (at <= f->time_us) o.scope.insert(k);
    }
    out.push_back(std::move(o));
  }
  return out;
}

// Exact boundaries (issue 16): the instant Redis counted each row. A row's Redis step is what its
// purchase had Redis execute after the row's commit and before the purchase's next line's commit:
// the commands whose cause is the operation its INSERT worked for (SqlCommitRecord::cause). When
// exactly one of them was answered without an error (a script runs as one command) and the Redis
// node's clock read world time then, that command's millisecond is when the row was counted. A
// step of several commands, each its own round trip, leaves the client's interval.
void read_redis_times(const sim::redis::Server& server, const CommittedLines& lines, std::vector<combo::RowObs>& rows) {
  std::map<std::string, std::pair<uint64_t, const CommittedLine*>> line_of;  // client ref -> (operation, line)
  for (const auto& [op, op_lines] : lines) {
    for (const CommittedLine& l : op_lines) line_of[l.client_ref] = {op, &l};
  }
  std::map<uint64_t, std::vector<const sim::redis::CommandRecord*>> steps;  // operation -> its commands
  for (const sim::redis::CommandRecord& c : server.command_log()) {
    if (c.depth == 0 && c.cause != 0 && c.reply.kind != RedisReply::Kind::kError && lines.count(c.cause)) {
      steps[c.cause].push_back(&c);
    }
  }
  for (combo::RowObs& r : rows) {
    auto it = line_of.find(r.client_ref);
    if (it == line_of.end()) continue;
    const auto [op, line] = it->second;
    std::vector<const sim::redis::CommandRecord*> step;
    for (const sim::redis::CommandRecord* c : steps[op]) {
      if (c->time_us >= line->committed_us && line_before(lines, op, c->time_us) == line) step.push_back(c);
    }
    if (step.size() == 1 && step[0]->node_ms == step[0]->time_us / kUsPerMs) r.redis_us = step[0]->node_ms * kUsPerMs;
  }
}

// The final activity_contributions, read back from the DB's storage after the run through a
// read-only connection (storage faults off: the run is over). `corrupt`: SQLite found the file damaged.
bool read_rows(sim::storage::SimVfs& vfs, const std::string& file, std::vector<combo::RowObs>* rows, bool* corrupt) {
  sim::storage::VfsReader db(vfs, file, /*quiet=*/true);
  for_each_row(
      db,
      "SELECT id, activity_id, user_id, star_id, item_id, item_type, item_name, item_icon, nickname, avatar_url, "
      "quantity, created_at, client_ref, window_id FROM activity_contributions ORDER BY id",
      [&](const DbRow& r) {
        combo::RowObs o;
        o.row.id = r.i64(0);
        o.row.activity_id = r.i64(1);
        o.row.user_id = r.i64(2);
        o.row.star_id = r.i64(3);
        o.row.item_id = r.i64(4);
        o.row.item_type = r.text(5);
        o.row.item_name = r.text(6);
        o.row.item_icon = r.text(7);
        o.row.nickname = r.text(8);
        o.row.avatar_url = r.text(9);
        o.row.quantity = r.i64(10);
        o.row.created_at = r.i64(11);
        o.client_ref = r.text(12);
        if (!r.null(13)) o.row.window_id = r.i64(13);
        rows->push_back(std::move(o));
      });
  *corrupt = db.corrupt();
  return db.ok();
}

// Rows the SQL server committed (its commit log: every INSERT of a purchase line that returned
// ok, with the rowid it handed out) that are missing from the final table: a power loss of the DB
// forgot them (synchronous below FULL), or the service lost them. The judges decide which.
std::vector<combo::RowObs> lost_rows(const sim::storage::SqlCommitLog& log,
                                     const std::vector<combo::RowObs>& final_rows) {
  std::set<std::string> present;
  for (const combo::RowObs& r : final_rows) present.insert(r.client_ref);
  std::vector<combo::RowObs> out;
  for (const sim::storage::SqlCommitRecord& c : log) {
    if (!c.result->ok() || c.statements().size() != 1 || !is_purchase_insert(c.statements()[0])) continue;
    const SqlStatement& st = c.statements()[0];
    auto text = [&](size_t i) {
      return st.params[i].type() == SqlValue::Type::kText ? st.params[i].as_text() : std::string();
    };
    auto num = [&](size_t i) { return st.params[i].type() == SqlValue::Type::kInteger ? st.params[i].as_int() : 0; };
    combo::RowObs o;
    o.client_ref = text(11);
    if (present.count(o.client_ref)) continue;
    o.row.id = c.result->last_insert_rowid();
    o.row.activity_id = num(0);
    o.row.user_id = num(1);
    o.row.star_id = num(2);
    o.row.item_id = num(3);
    o.row.item_type = text(4);
    o.row.item_name = text(5);
    o.row.item_icon = text(6);
    o.row.nickname = text(7);
    o.row.avatar_url = text(8);
    o.row.quantity = num(9);
    o.row.created_at = num(10);
    o.committed_us = c.time_us;
    present.insert(o.client_ref);
    out.push_back(std::move(o));
  }
  return out;
}

// Every purchase row id the SQL server handed out, with repeats (a power loss below FULL forgets
// AUTOINCREMENT's counter with the rows).
std::vector<int64_t> committed_pids(const sim::storage::SqlCommitLog& log) {
  std::vector<int64_t> out;
  for (const sim::storage::SqlCommitRecord& c : log) {
    if (c.result->ok() && c.statements().size() == 1 && is_purchase_insert(c.statements()[0])) {
      out.push_back(c.result->last_insert_rowid());
    }
  }
  return out;
}

void read_history(World& world, combo::ComboRun& run) {
  for (const sim::Operation& op : world.history().operations()) {
    if (op.op == "purchase") {
      combo::PurchaseOp p;
      p.id = op.id;
      p.process = op.process;
      std::istringstream in(op.args);
      std::string word;
      while (in >> word) {
        if (word.rfind("ref=", 0) == 0) p.ref = word.substr(4);
        if (word.rfind("a=", 0) == 0) p.activity = std::stoll(word.substr(2));
        if (word.rfind("u=", 0) == 0) p.user = std::stoll(word.substr(2));
        if (word.rfind("items=", 0) == 0) p.lines = 1 + std::count(word.begin(), word.end(), ',');
      }
      p.invoke_us = op.invoke_us;
      p.complete_us = op.complete_us;
      p.result = !op.completed() || op.outcome == Outcome::kInfo ? combo::PurchaseOp::Result::kInfo
                 : op.outcome == Outcome::kOk                    ? combo::PurchaseOp::Result::kOk
                                                                 : combo::PurchaseOp::Result::kFail;
      p.alerted = op.result.find("alerted") != std::string::npos;
      run.ops.push_back(p);
    } else if (op.op == "ranking" && op.completed() && op.outcome == Outcome::kOk) {
      combo::RankingObs r;
      r.activity = std::stoll(op.args.substr(op.args.find('=') + 1));
      r.time_us = op.complete_us;
      std::istringstream in(op.result);
      std::string word;
      in >> word;  // "ranking"
      while (in >> word) {
        const size_t colon = word.find(':');
        r.totals.emplace_back(std::stoll(word.substr(0, colon)), std::stoll(word.substr(colon + 1)));
      }
      run.rankings.push_back(r);
    }
  }
}

combo::ComboRun ComboRunImpl::collect(World& w) {
  combo::ComboRun run;
  run.end_us = w.now_us();
  // A crash point (faultline sweep --crash-points, or a saved crash_point:) is a fault too: one
  // service process crashes at one effect and restarts 1 s later.
  run.single_crash = !faults && w.crash_point_fired();
  run.faults = props::FaultBudget(w.fault_log(), run.end_us);
  run.service_places = roles.of("replica");
  run.service_places.push_back("redis");
  run.service_places.push_back("db");
  run.clock_nodes = roles.of("replica");
  run.clock_nodes.push_back("redis");
  run.redis_outages = combo::redis_outages_of(run.faults, redis_loss_ms * kUsPerMs);
  run.stream_maxlen = stream_maxlen;
  run.redis_loss_ms = redis_loss_ms;
  run.redis_loses_all = redis_loses_all;
  read_history(w, run);
  run.rows_known = read_rows(*stores.db_vfs, db_file, &run.rows, &run.db_corrupt);
  run.db_may_corrupt = db_may_corrupt;
  if (run.rows_known) run.lost_rows = lost_rows(*commit_log, run.rows);
  run.committed_pids = committed_pids(*commit_log);
  const CommittedLines lines = committed_lines(*commit_log);
  if (run.rows_known) {
    read_redis_times(*redis, lines, run.rows);
    read_redis_times(*redis, lines, run.lost_rows);
  }
  for (combo::ComboRun::RedisOutage& o : eviction_outages(run.faults, *redis, run))
    run.redis_outages.push_back(std::move(o));
  if (db_loses_unsynced) {
    for (const auto& [down_us, up_us] : run.faults.downtimes("db")) run.db_power_losses.push_back(down_us);
  }
  read_command_log(*redis, lines, run);
  // Moved, not copied: collect() runs once, when the run is over.
  for (const auto& page : pages) page->close();
  run.ui = std::move(watched.ui);
  run.polls = std::move(watched.polls);
  // Final Redis state, read from the node's memory.
  run.redis_known = true;
  const int64_t now_ms = redis_now_ms(w);
  const auto& expires = redis->engine().keyspace().expires();
  for (const auto& [key, entry] : redis->engine().keyspace().entries()) {
    auto it = expires.find(key);
    if (it != expires.end() && it->second <= now_ms) continue;
    run.final_keys.push_back({key, it == expires.end() ? -1 : it->second - now_ms, w.now_us()});
  }
  sim::redis::Session session;
  session.id = 0x7fffffff;
  RedisReply pending = redis->engine().execute(session, {"XPENDING", combo::kStreamKey, combo::kConsumerGroup}, now_ms);
  run.final_pending =
      pending.kind == RedisReply::Kind::kArray && !pending.elements.empty() ? pending.elements[0].integer : 0;
  run.no_ttl_samples = std::move(no_ttl_samples);
  run.ttl_keys_sampled = ttl_keys_sampled;
  run.unacked = std::move(unacked);
  run.stream_len_max = stream_len_max;
  return run;
}

void dump(const combo::ComboRun& run) {
  for (const combo::RowObs& r : run.rows) {
    std::fprintf(stderr, "row pid=%lld a=%lld u=%lld item=%lld qty=%lld at=%lld ref=%s\n", (long long)r.row.id,
                 (long long)r.row.activity_id, (long long)r.row.user_id, (long long)r.row.item_id,
                 (long long)r.row.quantity, (long long)r.row.created_at, r.client_ref.c_str());
  }
  for (const combo::RowObs& r : run.lost_rows) {
    std::fprintf(stderr, "lost row pid=%lld a=%lld u=%lld item=%lld qty=%lld committed=%lld ref=%s\n",
                 (long long)r.row.id, (long long)r.row.activity_id, (long long)r.row.user_id, (long long)r.row.item_id,
                 (long long)r.row.quantity, (long long)r.committed_us / 1000, r.client_ref.c_str());
  }
  for (int64_t at : run.db_power_losses) std::fprintf(stderr, "db power loss at %lld\n", (long long)at / 1000);
  for (const combo::PublishObs& p : run.publishes) {
    std::fprintf(stderr, "pub %lld entry=%s %s\n", (long long)p.time_us / 1000, p.entry_id.c_str(),
                 p.record ? p.record->describe().c_str() : "-");
  }
  for (const combo::PurchaseOp& o : run.ops) {
    std::fprintf(stderr, "op %s %s [%lld,%lld] result=%d alerted=%d\n", o.ref.c_str(), o.process.c_str(),
                 (long long)o.invoke_us / 1000, (long long)o.complete_us / 1000, (int)o.result, (int)o.alerted);
  }
  for (const combo::EntryObs& e : run.entries) {
    auto f = e.fields.find("first_id");
    std::fprintf(stderr, "entry %s at %lld opener %lld first_id %s\n", e.id.c_str(), (long long)e.time_us / 1000,
                 (long long)e.opener_pid, f == e.fields.end() ? "-" : f->second.c_str());
  }
  for (const combo::PollObs& p : run.polls) {
    std::string ids;
    for (const auto& r : p.event.records) ids += r ? " " + std::to_string(r->id) : " nil";
    std::fprintf(stderr, "poll %s a=%lld [%lld,%lld]%s\n", p.event.client.c_str(), (long long)p.event.activity_id,
                 (long long)p.begin_us / 1000, (long long)p.end_us / 1000, ids.c_str());
  }
  for (auto& o : run.redis_outages) {
    std::fprintf(stderr, "redis outage [%lld,%lld] stalled %lld %s scope %zu\n", (long long)o.down_us / 1000,
                 (long long)o.up_us / 1000, (long long)o.stalled_us / 1000, o.evicted_key.c_str(), o.scope.size());
  }
}

std::vector<Verdict> ComboRunImpl::check(World& w, const std::vector<std::string>& properties) {
  const combo::ComboRun run = collect(w);
  if (std::getenv("FL_COMBO_DUMP") != nullptr) dump(run);  // debugging aid (harness only)
  exercised = combo::combo_behaviours(run);
  return combo::check_combo(run, properties);
}

std::vector<std::string> split_statements(const std::string& sql) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from < sql.size()) {
    size_t end = sql.find(';', from);
    if (end == std::string::npos) end = sql.size();
    if (end > from) out.push_back(sql.substr(from, end - from));
    from = end + 1;
  }
  return out;
}

combo::Fixes fixes_of(const Scenario& s) {
  return s.variant == "spec" ? combo::Fixes::spec() : combo::Fixes::hardened_without(combo::combo_fixes(), s.without);
}

// The params, each declared once and bound to the service's and the front ends' option fields.
const BoundParams& declared_params() {
  using combo::ClientOptions;
  using combo::ServiceOptions;
  const auto item_types = static_cast<int64_t>(combo::item_types().size());
  static const BoundParams params{
      {derived_int_param("users", "", 1, 100'000,
                         "distinct users (clients share users round robin; default: one per client)")},
      {int_param("activities", "", 1, 10'000, 1, "activities; clients of one user spread over them")},
      {int_param("items", "", 1, item_types, 2, "item types clicked")},
      {int_param("max_clicks", "", 1, 1000, 4, "clicks per burst"), &ClientOptions::max_clicks},
      {int_param("click_gap_max_ms", "ms", 0, 600'000, 1200, "max gap between clicks of a burst"),
       &ClientOptions::click_gap_max_ms},
      {number_param("batch_probability", "", 0, 1, 0.1, "a burst sent as one BatchPurchaseItem"),
       &ClientOptions::batch_probability},
      {int_param("poll_interval_ms", "ms", 1, 600'000, 2000, "front-end polling period"),
       &ClientOptions::poll_interval_ms},
      {int_param("client_timeout_ms", "ms", 1, 600'000, 2000, "front-end RPC timeout (a purchase, a poll)"),
       &ClientOptions::rpc_timeout_ms},
      {int_param("boundary_percent", "percent", 0, 100, 0,
                 "bursts of two clicks the second exactly a critical duration -1/0/+1 ms after the first"),
       as_fraction(&ClientOptions::boundary_probability)},
      {text_param("clicks", "", "script workload: client:at_ms:item[:qty];...")},
      {int_param("window_ms", "ms", 1, 600'000, 3000, "combo window"), &ServiceOptions::window_ms},
      {int_param("agg_ttl_s", "s", 1, 86'400, 5, "spec agg hash TTL"), &ServiceOptions::agg_ttl_s},
      {int_param("lock_ttl_s", "s", 1, 86'400, 3, "spec lock TTL"), &ServiceOptions::lock_ttl_s},
      {int_param("claim_min_idle_ms", "ms", 1, 3'600'000, 5000, "CB-XAUTOCLAIM min idle"),
       &ServiceOptions::claim_min_idle_ms},
      {int_param("hardened_agg_ttl_ms", "ms", 1, 86'400'000, 600'000, "CB-LONG-AGG-TTL agg hash TTL"),
       &ServiceOptions::hardened_agg_ttl_ms},
      {int_param("stream_maxlen", "entries", 1, 100'000'000, 100000, "XADD MAXLEN ~ of the combo stream"),
       &ServiceOptions::stream_maxlen}};
  return params;
}

combo::ServiceOptions service_options(const Scenario& s) {
  combo::ServiceOptions o = declared_params().filled<combo::ServiceOptions>(s.config);
  o.fixes = fixes_of(s);
  return o;
}

// "client:at_ms:item:qty;..." (client index from 1).
std::map<int, std::vector<combo::ClientOptions::Click>> parse_script(const std::string& text) {
  std::map<int, std::vector<combo::ClientOptions::Click>> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ';')) {
    std::istringstream f(item);
    std::string c, at, type, qty;
    if (!std::getline(f, c, ':') || !std::getline(f, at, ':') || !std::getline(f, type, ':')) continue;
    if (!std::getline(f, qty, ':')) qty = "1";
    out[std::stoi(c)].push_back({std::stoll(at), type, std::stoll(qty)});
  }
  return out;
}

class ComboSystem final : public SystemUnderTest {
 public:
  std::string name() const override { return "combo"; }
  std::shared_ptr<const ScriptRegistry> redis_scripts() const override { return combo::combo_scripts(); }
  std::string description() const override {
    return "seed 000: contribution combo aggregation (Redis hash + SET NX + stream worker + pub/sub + front-end merge)";
  }
  std::vector<PropertyInfo> properties() const override {
    std::vector<PropertyInfo> out;
    for (const combo::ComboProperty& p : combo::combo_properties())
      out.push_back({p.info.name, p.info.invariants, p.info.description});
    return out;
  }
  std::vector<std::string> workload_kinds() const override { return {"bursts", "script"}; }
  std::vector<ParamInfo> params() const override { return declared_params().infos(); }
  std::vector<CriticalDuration> critical_durations(const Scenario& s) const override {
    const combo::ServiceOptions o = service_options(s);
    return {{"combo window", o.window_ms * kUsPerMs},
            {"lock TTL", o.lock_ttl_s * 1'000'000},
            {"agg hash TTL (spec)", o.agg_ttl_s * 1'000'000},
            {"XREADGROUP block", o.block_ms * kUsPerMs},
            {"XAUTOCLAIM min idle", o.claim_min_idle_ms * kUsPerMs},
            {"idempotency marker TTL", o.marker_ttl_ms * kUsPerMs}};
  }
  const std::vector<FixInfo>& fixes() const override { return combo::combo_fixes(); }
  // The longest chain of critical durations a purchase made at the start of the quiet tail can
  // need before every liveness property may judge it: its RPC may complete up to the client's
  // timeout later (2 s), its window lasts window_ms (3 s, 000:L39), its worker may die with the
  // entry pending, which is reclaimed once idle claim_min_idle_ms (5 s) at the next claim tick
  // (1 s) after the current XREADGROUP block (1 s), and a Redis error on the way sleeps 1 s
  // (000:L202) before the retry: 13 s.
  int64_t min_quiet_tail_ms(const Scenario& s) const override {
    const combo::ServiceOptions o = service_options(s);
    return iparam(s, "client_timeout_ms") + o.window_ms + o.claim_min_idle_ms + o.claim_interval_ms + o.block_ms +
           o.error_sleep_ms;
  }
  // Clients with patience (issue 16): a front end waits for a purchase shorter or longer than the
  // replica may take to answer it — one DB insert and one Redis call (hardened's script; spec's
  // commands each), each up to its client's timeout. The front end never retries (000: the seed's
  // clients do not), so only the timeout is drawn.
  std::vector<PatienceParam> patience(const Scenario&) const override {
    const int64_t budget_ms =
        (sim::storage::SqlClientOptions{}.timeout_us + sim::redis::ClientOptions{}.timeout_us) / kUsPerMs;
    return {{"client_timeout_ms", budget_ms, 200, 2 * budget_ms}};
  }
  std::unique_ptr<SystemRun> build(World& world, const Scenario& s) const override;
};

std::unique_ptr<SystemRun> ComboSystem::build(World& world, const Scenario& s) const {
  auto run = std::make_unique<ComboRunImpl>();
  ComboRunImpl* r = run.get();
  r->world = &world;
  r->faults = !s.faults.empty() || s.swarm.enabled;
  auto scripts = combo::combo_scripts();
  const combo::ServiceOptions options = service_options(s);

  sim::redis::ServerOptions ro;
  ro.engine.persistence = sim::redis::parse_persistence_mode(s.topology.redis.persistence)
                              .value_or(sim::redis::PersistenceMode::kAofEverysec);
  ro.engine.snapshot_interval_ms = s.topology.redis.snapshot_interval_ms;
  ro.engine.scripts = scripts;
  apply_redis_memory(s.topology.redis, ro.engine);
  r->redis = std::make_unique<sim::redis::Server>(ro);
  r->redis_servers.push_back(r->redis.get());
  r->redis_loss_ms = ro.engine.persistence == sim::redis::PersistenceMode::kSnapshot
                         ? ro.engine.snapshot_interval_ms + 1000
                     : ro.engine.persistence == sim::redis::PersistenceMode::kNone ? 1000
                                                                                   : 2000;
  r->redis_loses_all = ro.engine.persistence == sim::redis::PersistenceMode::kNone;
  Process& redis = world.add_process(world.add_node("redis"), "redis", r->redis->boot_fn());
  for (const char* store : {"redis", "db"}) r->roles.add(store, store);
  world.start(redis);

  World* w = &world;
  const DbNode db_disk = add_db_node(world, s.storage, "combo", "storage/db");
  const uint32_t db_node = db_disk.node;
  r->stores.db_vfs = db_disk.vfs;
  r->commit_log = std::make_shared<sim::storage::SqlCommitLog>();
  sim::storage::SqlServerOptions so = sql_server_options(s.storage);
  so.db_file = r->db_file;
  r->db_loses_unsynced = so.synchronous < sim::storage::Synchronous::kFull || s.storage.volatile_write_cache;
  r->db_may_corrupt =
      sim::storage::db_may_corrupt_after_power_loss(so.synchronous, so.journal_mode, s.storage.volatile_write_cache);
  so.schema = split_statements(combo::combo_schema_sql());
  so.commit_log = r->commit_log;
  Process& db = world.add_process(db_node, "db", sim::storage::SqlServer::boot(r->stores.db_vfs, so));
  world.start(db);

  r->stream_maxlen = options.stream_maxlen;
  for (int i = 0; i < s.topology.replicas; ++i) {
    const std::string name = "replica-" + std::to_string(i + 1);
    Process& p = world.add_process(world.add_node(name), name, [options, scripts](Process& self) -> Task<void> {
      sim::redis::Client redis_client(self, sim::redis::ClientOptions{.service = "redis", .scripts = scripts});
      sim::storage::SqlClient sql(self, self.rpc(), sim::storage::SqlClientOptions{.service = "sql"});
      co_await combo::replica_main(self, self.rpc(), redis_client, sql, options);
    });
    for (const char* role : {"replica", "worker"}) r->roles.add(role, name);
    world.start(p);
  }
  const int64_t activities = iparam(s, "activities");
  combo::GatewayOptions go;
  go.activities.clear();
  for (int64_t a = 1; a <= activities; ++a) go.activities.push_back(a);
  Process& gw = world.add_process(world.add_node("gateway"), "gateway", [go, scripts](Process& self) -> Task<void> {
    sim::redis::Client redis_client(self, sim::redis::ClientOptions{.service = "redis", .scripts = scripts});
    co_await combo::gateway_main(self, self.rpc(), redis_client, go);
  });
  world.start(gw);
  r->roles.add("gateway", "gateway");

  const int64_t users = s.config.i64_or("users", s.topology.clients);
  const int64_t items = iparam(s, "items");
  const auto script = parse_script(s.config.text("clicks"));
  const bool scripted = !s.workload.empty() && s.workload.front().kind == "script";
  const int64_t end_ms = sim::kEpochUs / kUsPerMs + s.duration_ms + s.quiescent_tail_ms;
  // Exact boundaries: the window, the lock TTL, the TTLs, the claim idle time, each -1/0/+1 ms.
  const std::vector<int64_t> boundary_gaps = boundary_gaps_ms(critical_durations(s));
  for (int i = 0; i < s.topology.clients; ++i) {
    const std::string name = "client-" + std::to_string(i + 1);
    combo::ClientOptions co = declared_params().filled<combo::ClientOptions>(s.config);
    co.fixes = options.fixes;
    co.user_id = 1 + i % std::max<int64_t>(users, 1);
    co.activity_id = 1 + (i / std::max<int64_t>(users, 1)) % std::max<int64_t>(activities, 1);
    co.items.assign(combo::item_types().begin(), combo::item_types().begin() + items);
    co.bursts_per_s = scripted ? 0 : (s.workload.empty() ? 0.2 : s.workload.front().rate_per_s);
    co.boundary_gaps_ms = boundary_gaps;
    // The page opens after the service has booted (schema, worker): a purchase before any replica
    // serves would fail with no fault to explain it.
    co.start_clicking_local_ms = sim::kEpochUs / kUsPerMs + kWarmUpMs;
    co.stop_clicking_local_ms = sim::kEpochUs / kUsPerMs + s.duration_ms;
    co.ranking_local_ms = i == 0 ? end_ms - 2000 : 0;
    if (auto it = script.find(i + 1); it != script.end()) co.script = it->second;
    r->pages.push_back(std::make_unique<PageWatch>(world, r->watched, name, co.activity_id));
    PageWatch* page = r->pages.back().get();
    Process& p = world.add_process(world.add_node(name), name, [w, page, co](Process& self) -> Task<void> {
      page->boot();
      WatchedRpc rpc(*w, self.rpc(), *page);
      co_await combo::frontend_main(self, rpc, w->history(), page, co);
    });
    r->roles.add("client", name);
    world.start(p);
  }
  for (int64_t t_ms = 100; t_ms < s.duration_ms + s.quiescent_tail_ms; t_ms += 100) {
    world.at(sim::kEpochUs + t_ms * kUsPerMs, [w, r] { r->sample(*w); });
  }
  return run;
}

}  // namespace

const SystemUnderTest& combo_system() {
  static const ComboSystem system;
  return system;
}

}  // namespace fl
