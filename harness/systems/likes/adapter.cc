// Adapter of the likes system (seed 002, impl/likes) to the harness.
//
// Topology: one simulated Redis node ("redis", persistence from the scenario), one SQLite DB node
// ("db", SimVfs with the scenario's storage faults), `replicas` social-service replicas
// ("replica-N", each serving "likes" with its own background jobs) and `clients` apps
// ("client-N"). A sampler reads Redis's keyspace (the seed's key names only, 002:L84, L90) and the DB
// (through its VFS's inspection door) every sample_interval_ms, as an observer: no network, no fault
// or randomness draws, no I/O of the service, no reordering of the world's events (World::observe_at).
// The checkers also get the Redis server's command log, the SQL server's commit log and the world's
// fault log, translated here into plain records (properties/likes/run.h) without judging them.
// Nothing here reads the variant or the fixes beyond building the service.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "harness/adapter_kit.h"
#include "harness/db_node.h"
#include "harness/redis_node.h"
#include "harness/sql_rows.h"
#include "harness/system.h"
#include "impl/likes/client.h"
#include "impl/likes/config.h"
#include "impl/likes/fixes.h"
#include "impl/likes/schema.h"
#include "impl/likes/scripts.h"
#include "impl/likes/service.h"
#include "properties/likes/checks.h"
#include "properties/likes/likes_behaviours.h"
#include "sim/redis/client.h"
#include "sim/redis/server.h"
#include "sim/storage/sim_vfs.h"
#include "sim/storage/vfs_reader.h"
#include "sim/storage/sql_client.h"
#include "sim/storage/sql_server.h"
#include "sim/world.h"

namespace fl {
namespace {

using likes::props::LikesRun;
using likes::props::StoreSnapshot;
using sim::Process;
using sim::World;

// Typed and range-checked when the scenario loaded (harness/params.h); the defaults live in
// LikesSystem::params().
int64_t param(const Scenario& s, const std::string& key) { return s.config.i64(key); }

// The params, each declared once and bound to the fields of the service's config, the apps'
// config and the judges' timing it fills.
const BoundParams& declared_params() {
  using likes::ClientConfig;
  using likes::LikesConfig;
  using likes::props::Timing;
  constexpr int64_t kDayMs = 24 * 3600 * 1000;
  static const BoundParams params{
      {int_param("state_ttl_ms", "ms", 1, 365 * kDayMs, 7 * kDayMs, "TTL of asset:like:{a}:{u} (002: 7 days)"),
       &LikesConfig::state_ttl_ms},
      {int_param("count_ttl_ms", "ms", 1, 365 * kDayMs, 3'600'000,
                 "TTL of a count filled by the 3.3 cache-aside read (002: 1 hour)"),
       &LikesConfig::count_fill_ttl_ms},
      {int_param("sync_interval_ms", "ms", 1, kDayMs, 60'000, "period of SyncLikeCountJob / CheckConsistency"),
       &LikesConfig::sync_interval_ms, as_us(&Timing::sync_interval_us)},
      {int_param("consistency_threshold", "likes", 0, 1'000'000'000, 10,
                 "CheckConsistency repairs above this difference (002: 10)"),
       &LikesConfig::consistency_threshold},
      {int_param("hot_threshold", "likes", 0, 1'000'000'000, 100,
                 "WarmupCache covers assets with like_count above this (002: 100)"),
       &LikesConfig::hot_threshold},
      {int_param("warmup_interval_ms", "ms", 1, kDayMs, 300'000, "period of WarmupCache"),
       &LikesConfig::warmup_interval_ms},
      {int_param("assets", "", 1, 10'000, 3, "number of assets"), &LikesConfig::asset_count,
       &ClientConfig::asset_count},
      {int_param("users_per_client", "", 1, 10'000, 3, "users each client acts for")},
      {int_param("shared_users", "", 0, 10'000, 1, "users shared by every client (one user on several devices)")},
      {int_param("double_tap_percent", "percent", 0, 100, 15, "percent of likes/unlikes sent twice at once"),
       as_fraction(&ClientConfig::double_tap_probability)},
      {int_param("view_percent", "percent", 0, 100, 0,
                 "percent of likes/unlikes tapped on an asset page: the app reads the pair's state and the count "
                 "without waiting, the tap follows"),
       as_fraction(&ClientConfig::view_probability)},
      {int_param("view_gap_ms", "ms", 0, 600'000, 100, "mean think time between the page's reads and the tap"),
       as_us(&ClientConfig::view_gap_us)},
      {int_param("boundary_percent", "percent", 0, 100, 0,
                 "percent of likes/unlikes followed on the same pair by a like, unlike or state read exactly a "
                 "critical duration (state TTL, sync interval, timeouts; up to 60 s) -1/0/+1 ms later"),
       as_fraction(&ClientConfig::boundary_probability)},
      {int_param("client_timeout_ms", "ms", 1, 600'000, 500, "client timeout per attempt"),
       as_us(&ClientConfig::timeout_us), as_us(&Timing::client_timeout_us)},
      {int_param("max_retries", "", 0, 100, 2, "client retries after a timeout"), &ClientConfig::max_retries,
       &Timing::max_retries},
      {int_param("like_weight", "", 0, 1000, 4, "op mix weight of likes"), &ClientConfig::like_weight},
      {int_param("unlike_weight", "", 0, 1000, 3, "op mix weight of unlikes"), &ClientConfig::unlike_weight},
      {int_param("count_weight", "", 0, 1000, 2, "op mix weight of count reads"), &ClientConfig::count_weight},
      {int_param("state_weight", "", 0, 1000, 2, "op mix weight of state reads"), &ClientConfig::state_weight},
      {int_param("redis_timeout_ms", "ms", 1, 600'000, 300, "replica -> Redis timeout"),
       as_us(&Timing::redis_timeout_us)},
      {int_param("sql_timeout_ms", "ms", 1, 600'000, 500, "replica -> DB timeout"), as_us(&Timing::sql_timeout_us)},
      // The DB and Redis take a few ms to open at boot; a backend still booting is no fault.
      {int_param("client_start_ms", "ms", 0, 3'600'000, 200, "when the apps start (after the backend booted)"),
       as_us(&ClientConfig::start_delay_us)},
      {int_param("sample_interval_ms", "ms", 1, 3'600'000, 100, "how often the checker samples Redis and the DB"),
       as_us(&Timing::sample_interval_us)},
  };
  return params;
}

likes::LikesConfig config_of(const Scenario& s) {
  likes::LikesConfig c = declared_params().filled<likes::LikesConfig>(s.config);
  c.fixes = s.variant == "spec" ? likes::LikesFixes::spec()
                                : likes::LikesFixes::hardened_without(likes::likes_fixes(), s.without);
  return c;
}

// The judges' timing: scenario parameters and the seed's constants only.
likes::props::Timing timing_of(const Scenario& s) { return declared_params().filled<likes::props::Timing>(s.config); }

// ---- Translating the servers' logs (no judgement: every command / statement on the seed's keys
// and tables, as executed).

// A whole decimal integer, or nullopt (every command and every key of a sample is parsed: no
// allocation).
std::optional<int64_t> to_int(std::string_view v) {
  int64_t x = 0;
  // Ids and counts are short: up to 18 digits cannot overflow, and need no from_chars (about a
  // hundred instructions a call, and the judges parse every key of every sample).
  if (!v.empty() && v.size() <= 18 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    for (char c : v) x = x * 10 + (c - '0');
    return x;
  }
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return x;
}

// "asset:like_count:{a}" or "asset:like:{a}:{u}" (002:L84, L90); false for any other key.
bool parse_seed_key(std::string_view key, likes::props::RedisWrite* w) {
  constexpr std::string_view count = "asset:like_count:", state = "asset:like:";
  if (key.starts_with(count)) {
    std::optional<int64_t> a = to_int(key.substr(count.size()));
    if (!a) return false;
    w->count = true;
    w->asset = *a;
    return true;
  }
  if (!key.starts_with(state)) return false;
  const std::string_view rest = key.substr(state.size());
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return false;
  std::optional<int64_t> a = to_int(rest.substr(0, colon)), u = to_int(rest.substr(colon + 1));
  if (!a || !u) return false;
  w->count = false;
  w->asset = *a;
  w->user = *u;
  return true;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// `name` as spelled in `names` (upper case) when it is one of them in any case, else empty (every
// logged command is asked: no upper-cased copy).
std::string_view one_of(std::string_view name, std::span<const std::string_view> names) {
  for (std::string_view n : names) {
    if (absl::EqualsIgnoreCase(absl::string_view(name.data(), name.size()), absl::string_view(n.data(), n.size()))) {
      return n;
    }
  }
  return {};
}

std::vector<likes::props::RedisWrite> redis_writes(const sim::redis::CommandLog& log) {
  static constexpr std::string_view kWrites[] = {"SET",  "SETNX",  "DEL",    "UNLINK", "INCR",
                                                 "DECR", "INCRBY", "DECRBY", "GETDEL"};
  static constexpr std::string_view kWrappers[] = {"EVALSHA", "EVAL", "EXEC"};
  // Request boundaries: a script's or EXEC's inner commands are logged right before it; a pipeline's
  // commands run back to back for one client at one instant. (Requests of one client that a paused
  // server runs at one instant may be merged; judges only use this to ask "did the request name a
  // state key".) One pass over the log (a long run's log is far larger than the caches): the
  // requests naming a state key are known once their last record is read, so each write's flag
  // is set after the pass.
  std::vector<bool> names_state(1, false);  // by request id (dense, from 1)
  std::vector<likes::props::RedisWrite> out;
  uint64_t id = 0;
  for (size_t i = 0; i < log.size(); ++i) {
    const sim::redis::CommandRecord& r = log[i];
    const sim::redis::CommandRecord* prev = i > 0 ? &log[i - 1] : nullptr;
    const bool boundary = prev == nullptr || prev->client != r.client || prev->time_us != r.time_us ||
                          prev->incarnation != r.incarnation ||
                          (prev->depth == 0 && !prev->argv.empty() && !one_of(prev->argv[0], kWrappers).empty());
    if (boundary) {
      ++id;
      names_state.push_back(false);
    }
    for (size_t k = 1; k < r.argv.size(); ++k) {
      likes::props::RedisWrite probe;
      if (parse_seed_key(r.argv[k], &probe) && !probe.count) names_state[id] = true;
    }
    if (r.argv.size() < 2) continue;
    const std::string_view cmd = one_of(r.argv[0], kWrites);
    if (cmd.empty()) continue;
    likes::props::RedisWrite w;
    if (!parse_seed_key(r.argv[1], &w)) continue;
    w.seq = r.seq;
    w.time_us = r.time_us;
    w.node_ms = r.node_ms;
    w.client = r.client;
    w.incarnation = r.incarnation;
    w.request = id;
    w.cmd = std::string(cmd);
    if (cmd == "SET" || cmd == "SETNX") {
      w.changed = r.reply.kind == RedisReply::Kind::kStatus || (cmd == "SETNX" && r.reply.integer == 1);
      if (r.argv.size() >= 3) w.after = to_int(r.argv[2]);
      for (size_t k = 3; k + 1 < r.argv.size(); ++k) {
        const std::string opt = upper(r.argv[k]);
        if (opt == "PX") w.ttl_ms = to_int(r.argv[k + 1]);
        if (opt == "EX") w.ttl_ms = to_int(r.argv[k + 1]).value_or(0) * 1000;
      }
    } else if (cmd == "DEL" || cmd == "UNLINK" || cmd == "GETDEL") {
      w.changed = (r.reply.kind == RedisReply::Kind::kInteger && r.reply.integer > 0) ||
                  r.reply.kind == RedisReply::Kind::kBulk;
    } else {
      w.changed = r.reply.kind == RedisReply::Kind::kInteger;
      if (w.changed) w.after = r.reply.integer;
    }
    out.push_back(std::move(w));
  }
  for (likes::props::RedisWrite& w : out) w.request_names_state = names_state[w.request];
  return out;
}

// The value bound to the placeholder that ends `marker` (e.g. "user_id = ?") in a statement.
std::optional<int64_t> param_of(const SqlStatement& st, const std::string& marker) {
  const size_t pos = st.sql.find(marker);
  if (pos == std::string::npos) return std::nullopt;
  const size_t q = pos + marker.size() - 1;
  const size_t index = static_cast<size_t>(std::count(st.sql.begin(), st.sql.begin() + static_cast<long>(q), '?'));
  if (index >= st.params.size() || st.params[index].type() != SqlValue::Type::kInteger) return std::nullopt;
  return st.params[index].as_int();
}

// A statement's change of asset_likes rows or assets.like_count (002:L50-L72), if it is one.
std::optional<likes::props::DbChange> db_change(const SqlStatement& st) {
  likes::props::DbChange c;
  const std::string& sql = st.sql;
  if (sql.rfind("INSERT INTO asset_likes(asset_id, user_id", 0) == 0 && st.params.size() >= 2) {
    c.row = true;
    c.delta = 1;
    c.asset = st.params[0].as_int();
    c.user = st.params[1].as_int();
    return c;
  }
  if (sql.rfind("DELETE FROM asset_likes", 0) == 0) {
    c.row = true;
    c.delta = -1;
    c.asset = param_of(st, "asset_id = ?").value_or(0);
    c.user = param_of(st, "user_id = ?").value_or(0);
    return c;
  }
  for (int sign : {1, -1}) {
    const std::string set = std::string("like_count = like_count ") + (sign > 0 ? "+" : "-");
    if (sql.rfind("UPDATE assets SET ", 0) != 0 || sql.find(set) == std::string::npos) continue;
    c.row = false;
    c.delta = sign;
    c.asset = param_of(st, "WHERE id = ?").value_or(0);
    c.user = param_of(st, "user_id = ?").value_or(0);
    return c;
  }
  return std::nullopt;
}

std::vector<likes::props::DbChange> db_changes(const sim::storage::SqlCommitLog& log) {
  std::vector<likes::props::DbChange> out;
  for (const sim::storage::SqlCommitRecord& r : log) {
    for (size_t i = 0; i < r.statements().size(); ++i) {
      std::optional<likes::props::DbChange> c = db_change(r.statements()[i]);
      if (!c) continue;
      c->seq = r.seq;
      c->time_us = r.time_us;
      c->client = r.client;
      c->incarnation = r.incarnation;
      c->applied = r.result->ok() && i < r.result->sets.size() && r.result->sets[i].changes > 0;
      c->refused = !c->applied;
      c->failed = !r.result->ok();
      c->cause = r.cause;
      c->request_seq = r.request->seq;
      c->request_id = param_of(r.statements()[i], "request_id = ?");
      out.push_back(std::move(*c));
    }
  }
  return out;
}

struct Shared {
  std::shared_ptr<sim::redis::Server> redis;
  std::shared_ptr<sim::storage::SimVfs> vfs;
  std::string db_file = "likes.db";
  likes::LikesConfig config;
  LikesRun record;
  std::shared_ptr<sim::storage::SqlCommitLog> commit_log = std::make_shared<sim::storage::SqlCommitLog>();
  std::shared_ptr<bool> stop = std::make_shared<bool>(false);
  uint32_t redis_incarnation = 0;
  std::optional<likes::props::GraceTracker> grace;
  std::vector<std::string> replica_names;
  // After `vfs`, so it is closed first.
  std::unique_ptr<sim::storage::VfsObserver> db;
  // The last DB read and the VFS's change count it was taken at.
  uint64_t db_last_change = UINT64_MAX;
  StoreSnapshot db_last;
};

// Reads the Redis node's memory (logically expired keys are absent).
void read_redis(const Shared& sh, Process* redis, int64_t now_ms, StoreSnapshot* s) {
  s->redis_up = redis != nullptr && redis->alive();
  const auto& entries = sh.redis->engine().keyspace().entries();
  for (int64_t a = 1; a <= sh.config.asset_count; ++a) s->redis_count[a] = std::nullopt;
  // The seed's two key families (parse_seed_key) are two ranges of the ordered keyspace: the
  // service's other keys (versions, leases, request ids) are not visited.
  for (const char* prefix : {"asset:like:", "asset:like_count:"}) {
    const std::string from = prefix;
    for (auto it = entries.lower_bound(from); it != entries.end() && it->first.starts_with(from); ++it) {
      const sim::redis::Entry& e = it->second;
      if (e.expire_at_ms && *e.expire_at_ms <= now_ms) continue;
      const std::string* v = std::get_if<std::string>(&e.value);
      if (v == nullptr) continue;
      likes::props::RedisWrite k;
      if (!parse_seed_key(it->first, &k)) continue;
      if (k.count) {
        s->redis_count[k.asset] = std::stoll(*v);
      } else {
        s->redis_state[{k.asset, k.user}] = *v;
      }
    }
  }
}

// Reads the DB's committed state through the VFS's inspection door: the judge's reads draw no
// fault and no randomness, count as no I/O of the service and change no file (SimVfs). Nothing a
// reader could see changed since the last read (SimVfs::change_count): the same answer again.
void read_db(Shared& sh, StoreSnapshot* s) {
  // The DB executes a request and logs it in one step: the read sees every logged commit.
  s->db_seq = sh.commit_log->size();
  if (sh.db_last_change == sh.vfs->change_count()) {
    s->db_read = sh.db_last.db_read;
    s->db_like_count = sh.db_last.db_like_count;
    s->db_rows = sh.db_last.db_rows;
    return;
  }
  s->db_read = sh.db->read([&](sim::storage::VfsObserver& db) {
    for_each_row(db, "SELECT id, like_count FROM assets",
                 [&](const DbRow& r) { s->db_like_count[r.i64(0)] = r.i64(1); });
    for_each_row(db, "SELECT asset_id, user_id, COUNT(*) FROM asset_likes GROUP BY asset_id, user_id",
                 [&](const DbRow& r) {
                   s->db_rows[{r.i64(0), r.i64(1)}] = r.i64(2);
                 });
  });
  if (!s->db_read) {
    s->db_like_count.clear();
    s->db_rows.clear();
  }
  sh.db_last_change = sh.vfs->change_count();
  sh.db_last.db_read = s->db_read;
  sh.db_last.db_like_count = s->db_like_count;
  sh.db_last.db_rows = s->db_rows;
}

class LikesSystemRun final : public KitRun {
 public:
  std::vector<Verdict> check(World& world, const std::vector<std::string>& properties) override {
    LikesRun& run = shared->record;
    run.redis_grace = shared->grace->windows(world.now_us());
    run.redis_writes = redis_writes(shared->redis->command_log());
    run.db_changes = db_changes(*shared->commit_log);
    for (const sim::storage::SqlCommitRecord& r : *shared->commit_log) run.db_executed_us.push_back(r.time_us);
    run.faults = world.fault_log();
    run.end_us = world.now_us();
    run.replicas = roles.of("replica");
    for (const sim::Operation& o : world.history().operations()) {
      likes::props::HistoryOp h;
      h.id = o.id;
      h.process = o.process;
      h.op = o.op;
      h.args = o.args;
      h.invoke_us = o.invoke_us;
      h.complete_us = o.complete_us;
      h.outcome = o.completed() ? o.outcome : Outcome::kInfo;
      h.result = o.result;
      run.history.push_back(std::move(h));
    }
    // Operation ids are dense from 1 in invocation order: history[id - 1] (asserted).
    for (const sim::Network::Delivery& d : world.network().deliveries()) {
      if (d.cause == 0 || d.cause > run.history.size()) continue;
      likes::props::HistoryOp& h = run.history[d.cause - 1];
      FL_ASSERT(h.id == d.cause);
      h.delivered.push_back({d.time_us, d.server});
    }
    run.final_state = StoreSnapshot{};
    run.final_state.time_us = world.now_us();
    read_redis(*shared, world.find_process("redis"), world.now_us() / 1000, &run.final_state);
    read_db(*shared, &run.final_state);
    exercised = likes::props::likes_behaviours(run);
    return likes::props::check_likes(run, properties);
  }

  // What check() saw the run exercise (properties/likes/likes_behaviours.h); check() runs first.
  std::vector<std::string> behaviours(World&) override { return exercised; }

  std::shared_ptr<Shared> shared;
  std::vector<std::string> exercised;
};

bool running(const Process* p) { return p != nullptr && p->state() == sim::ProcessState::kRunning; }

// Whether a reconciliation pass could repair the cache right now: Redis and the DB running, Redis
// accepting writes (no -LOADING / -BUSY / -OOM / -READONLY refusal: a repair's SET would be refused,
// swarm-hardened seed 411), and some running replica connected to both in both directions
// (GraceTracker).
bool repairable(World& world, const Shared& sh) {
  Process* redis = world.find_process("redis");
  Process* db = world.find_process("db");
  if (!running(redis) || !running(db)) return false;
  if (sh.redis != nullptr && sh.redis->engine().refusal() != sim::redis::Refusal::kNone) return false;
  sim::Network& net = world.network();
  // A partition drops what the sync job sends, a clog holds it until it ends: no repair gets
  // through either way meanwhile.
  auto cut = [&net](uint32_t a, uint32_t b) {
    return net.blocked(a, b) || net.blocked(b, a) || net.clogged(a, b) || net.clogged(b, a);
  };
  for (const std::string& name : sh.replica_names) {
    Process* r = world.find_process(name);
    if (running(r) && !cut(r->node(), redis->node()) && !cut(r->node(), db->node())) return true;
  }
  return false;
}

void sample(World& world, std::shared_ptr<Shared> sh, int64_t interval_us, int64_t end_us) {
  Process* redis = world.find_process("redis");
  const bool restarted = redis != nullptr && redis->incarnation() != sh->redis_incarnation;
  if (restarted) sh->redis_incarnation = redis->incarnation();
  // Redis restarted since the last sample: cached values may be stale until a repair had time.
  sh->grace->on_sample(world.now_us(), restarted, repairable(world, *sh));
  StoreSnapshot s;
  s.time_us = world.now_us();
  read_redis(*sh, redis, world.now_us() / 1000, &s);
  read_db(*sh, &s);
  sh->record.samples.push_back(std::move(s));
  if (world.now_us() + interval_us <= end_us) {
    world.observe_at(world.now_us() + interval_us,
                     [&world, sh, interval_us, end_us] { sample(world, sh, interval_us, end_us); });
  }
}

Task<void> idle_forever(Process& p) {
  for (;;) co_await p.clock().sleep_ms(3'600'000);
}

class LikesSystem final : public SystemUnderTest {
 public:
  std::string name() const override { return "likes"; }
  std::shared_ptr<const ScriptRegistry> redis_scripts() const override { return likes::likes_scripts(); }
  std::string description() const override {
    return "seed 002: asset like/unlike with a Redis state+counter, write-behind to SQL, cache-aside reads";
  }
  std::vector<PropertyInfo> properties() const override { return likes::props::likes_properties(); }
  std::vector<std::string> workload_kinds() const override { return {"likes"}; }
  std::vector<ParamInfo> params() const override { return declared_params().infos(); }
  std::vector<CriticalDuration> critical_durations(const Scenario& s) const override {
    likes::LikesConfig c = config_of(s);
    const likes::props::Timing t = timing_of(s);
    std::vector<CriticalDuration> out{
        {"client timeout", t.client_timeout_us},
        {"redis timeout", t.redis_timeout_us},
        {"sql timeout", t.sql_timeout_us},
    };
    if (c.state_ttl_ms <= 3'600'000) out.push_back({"state key TTL", c.state_ttl_ms * 1000});
    if (c.sync_interval_ms <= 3'600'000) out.push_back({"sync interval", c.sync_interval_ms * 1000});
    return out;
  }
  const std::vector<FixInfo>& fixes() const override { return likes::likes_fixes(); }
  // The final audit needs every write drained and the cache repaired: the last client operation
  // may wait for its timeouts and retries ((max_retries + 1) x (client_timeout + the 100 ms retry
  // delay)); its failed DB write is retried by the seed's job one sync interval later (002:L406)
  // and the cache is re-synced by the same job (002:L358, LIKE-4 "after one reconciliation
  // period"); that pass itself may wait for a Redis and a DB timeout, twice.
  int64_t min_quiet_tail_ms(const Scenario& s) const override {
    const likes::props::Timing t = timing_of(s);
    const int64_t request_ms = (t.max_retries + 1) * (t.client_timeout_us / 1000 + 100);
    return request_ms + t.sync_interval_us / 1000 + 2 * (t.redis_timeout_us + t.sql_timeout_us) / 1000;
  }
  // Clients with patience (issue 16): an app waits per attempt shorter or longer than hardened's
  // internal budget — a DB transaction (sql_timeout_ms) then LK-CACHE-ACK's cache attempts, each up
  // to redis_timeout_ms plus its back-off — and retries fewer or more times than the replica's own
  // cache attempts.
  std::vector<PatienceParam> patience(const Scenario& s) const override {
    const likes::LikesConfig c = config_of(s);
    const int64_t budget_ms =
        param(s, "sql_timeout_ms") + c.redis_attempts * (param(s, "redis_timeout_ms") + c.retry_backoff_ms);
    return {{"client_timeout_ms", budget_ms, 100, 2 * budget_ms},
            {"max_retries", c.redis_attempts, 0, 2 * c.redis_attempts - 1}};
  }
  std::unique_ptr<SystemRun> build(World& world, const Scenario& s) const override;
};

std::unique_ptr<SystemRun> LikesSystem::build(World& world, const Scenario& s) const {
  auto run = std::make_unique<LikesSystemRun>();
  auto sh = std::make_shared<Shared>();
  run->shared = sh;
  world.network().watch_deliveries(likes::kService);  // which replica each request reached
  sh->config = config_of(s);
  const likes::LikesConfig config = sh->config;
  auto scripts = likes::likes_scripts();

  // Redis.
  sim::redis::ServerOptions ro;
  ro.engine.persistence =
      sim::redis::parse_persistence_mode(s.topology.redis.persistence).value_or(sim::redis::PersistenceMode::kNone);
  ro.engine.snapshot_interval_ms = s.topology.redis.snapshot_interval_ms;
  ro.engine.scripts = scripts;
  apply_redis_memory(s.topology.redis, ro.engine);
  sh->redis = std::make_shared<sim::redis::Server>(ro);
  run->redis_servers.push_back(sh->redis.get());
  {
    std::shared_ptr<sim::redis::Server> server = sh->redis;
    Process& p =
        world.add_process(world.add_node("redis"), "redis", [server](Process& self) { return server->run(self); });
    world.start(p);
    sh->redis_incarnation = p.incarnation();  // the first boot is no restart
  }

  // DB.
  const DbNode db_disk = add_db_node(world, s.storage, "likes", "likes.vfs");
  const uint32_t db_node = db_disk.node;
  sh->vfs = db_disk.vfs;
  run->stores = StoreNodes{.db_vfs = sh->vfs, .sql_io_error_calls = SqlIoErrorCalls::kSyncsWhenEven};
  for (const char* store : {"redis", "db"}) run->roles.add(store, store);
  sh->db = std::make_unique<sim::storage::VfsObserver>(*sh->vfs, sh->db_file);
  sim::storage::SqlServerOptions so = sql_server_options(s.storage);
  so.db_file = sh->db_file;
  so.schema = likes::schema_statements(config.has(likes::LikesFix::kRequestIds));
  so.commit_log = sh->commit_log;
  for (int64_t id = 1; id <= config.asset_count; ++id) {
    so.schema.push_back("INSERT OR IGNORE INTO assets(id, like_count, like_version) VALUES (" + std::to_string(id) +
                        ", 0, 0)");
  }
  world.start(world.add_process(db_node, "db", sim::storage::SqlServer::boot(sh->vfs, so)));

  // Replicas.
  const likes::props::Timing timing = timing_of(s);
  const int64_t redis_timeout_us = timing.redis_timeout_us, sql_timeout_us = timing.sql_timeout_us;
  for (int i = 0; i < std::max(1, s.topology.replicas); ++i) {
    const std::string name = "replica-" + std::to_string(i + 1);
    auto boot = [scripts, config, redis_timeout_us, sql_timeout_us](Process& self) -> Task<void> {
      auto redis = std::make_shared<sim::redis::Client>(
          self, sim::redis::ClientOptions{.timeout_us = redis_timeout_us, .scripts = scripts});
      auto sql = std::make_shared<sim::storage::SqlClient>(
          self, self.rpc(), sim::storage::SqlClientOptions{.timeout_us = sql_timeout_us});
      auto svc = std::make_shared<likes::LikeService>(self, *redis, *sql, config);
      svc->keep_alive(redis);
      svc->keep_alive(sql);
      svc->start(self.rpc());
      return idle_forever(self);
    };
    world.start(world.add_process(world.add_node(name), name, boot));
    run->roles.add("replica", name);
  }

  // Clients.
  const int64_t users_per_client = param(s, "users_per_client");
  const int64_t shared_users = param(s, "shared_users");
  const double rate = s.workload.empty() ? 5 : s.workload.front().rate_per_s;
  // Exact boundaries: the state TTL, the sync interval and the timeouts, each -1/0/+1 ms.
  const std::vector<int64_t> boundary_gaps = boundary_gaps_ms(critical_durations(s));
  for (int i = 0; i < s.topology.clients; ++i) {
    const std::string name = "client-" + std::to_string(i + 1);
    likes::ClientConfig cc = declared_params().filled<likes::ClientConfig>(s.config);
    cc.client_id = static_cast<uint64_t>(i + 1);
    for (int64_t u = 0; u < users_per_client; ++u) cc.users.push_back(1000 + i * 100 + u);
    for (int64_t u = 0; u < shared_users; ++u) cc.users.push_back(1 + u);
    cc.rate_per_s = rate;
    cc.boundary_gaps_ms = boundary_gaps;
    cc.stop = sh->stop;
    auto boot = [cc, &world](Process& self) -> Task<void> {
      auto client = std::make_shared<likes::LikesClient>(self, self.rpc(), world.history(), cc);
      return likes::LikesClient::run(client);
    };
    world.start(world.add_process(world.add_node(name), name, boot));
    run->roles.add("client", name);
  }
  world.at(sim::kEpochUs + s.duration_ms * 1000, [sh] { *sh->stop = true; });

  // Sampler.
  const int64_t interval_us = timing.sample_interval_us;
  // One sync period (002:L358, the scenario's sync_interval_ms) with its timeouts, for every variant.
  sh->grace.emplace(config.sync_interval_ms * 1000 + 2 * redis_timeout_us + 2 * sql_timeout_us + interval_us,
                    world.now_us());
  sh->record.timing = timing;
  sh->replica_names = run->roles.of("replica");
  const int64_t end_us = sim::kEpochUs + (s.duration_ms + s.quiescent_tail_ms) * 1000;
  world.observe_at(world.now_us() + interval_us,
                   [&world, sh, interval_us, end_us] { sample(world, sh, interval_us, end_us); });
  return run;
}

}  // namespace

const SystemUnderTest& likes_system() {
  static const LikesSystem system;
  return system;
}

}  // namespace fl
