// The risk checkers (004:L204-240): risk actions and epochs, publishing under the risk context,
// and the emergency denylist the query layer applies. They replay the SQL server's commit log (the
// control transactions and publishes in commit order), read the DB's rows back, the Redis server's
// writes of `ranking:emergency-block:*` and the viewers' history.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "model/ranking/board.h"
#include "properties/common/fault_budget.h"
#include "properties/common/judge.h"
#include "properties/ranking/checks.h"
#include "impl/ports/assert.h"

namespace fl::ranking::props {
namespace {

using fl::props::Judge;

const char* kGlobal = "GLOBAL|ALL|ALL|ALL";  // 004:L211: the explicit global scope

// Risk model risk-m1 (the scenario's constant): t_i is suspicious when i % mod == 0.
std::string risk_verdict_of(const std::string& topic, int mod) {
  const int64_t i = std::strtoll(topic.c_str() + std::min<size_t>(2, topic.size()), nullptr, 10);
  return mod > 0 && i > 0 && i % mod == 0 ? "suspicious" : "pass";
}

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool has(const std::string& s, const char* p) { return s.find(p) != std::string::npos; }

std::set<std::string> split_set(const std::string& s, char sep) {
  std::set<std::string> out;
  std::istringstream in(s);
  for (std::string x; std::getline(in, x, sep);) {
    if (!x.empty()) out.insert(x);
  }
  return out;
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) out += (out.empty() ? "" : ",") + x;
  return out;
}

// The risk state replayed from committed control transactions, in commit order.
struct Current {
  std::string action_id, state;
};
// [from_us, to_us) in which a (scope, topic)'s current row was a BLOCK, who committed it and the
// action it was.
struct BlockSpan {
  int64_t from_us = 0, to_us = INT64_MAX;
  std::string committer, action_id;
};

// A commit that advanced a scope key's epoch: when, by whom (its push follows from that process).
struct EpochMove {
  int64_t time_us = 0;
  std::string committer;
};

struct RiskState {
  std::map<std::string, int64_t> local_epoch, absorbed;             // scope -> risk_epoch, absorbed global epoch
  std::map<std::string, int64_t> version, rule_epoch;               // scope -> context version, rule_activation_epoch
  int64_t global_epoch = 0;                                         // the authority row's
  std::map<std::pair<std::string, std::string>, Current> current;   // (scope, topic) -> current row
  std::map<std::pair<std::string, std::string>, int64_t> versions;  // (scope, topic) -> rows so far
  // (scope, topic) -> the commit-time spans in which its current row was a BLOCK.
  std::map<std::pair<std::string, std::string>, std::vector<BlockSpan>> spans;
  // A scope's denylist as of each epoch of its key (local epoch; the global scope's global epoch):
  // topic -> the action id of its block (which expiry bounds answers built with it).
  std::map<std::pair<std::string, int64_t>, std::map<std::string, std::string>> lists;
  std::map<std::string, int64_t> until_of, expired_at;  // action id -> effective_until, first EXPIRED commit
  std::map<std::string, EpochMove> advanced;            // scope key -> the last commit that advanced its epoch

  std::map<std::string, std::string> block_actions_of(const std::string& scope) const {
    std::map<std::string, std::string> out;
    for (const auto& [k, c] : current) {
      if (k.first == scope && c.state == "BLOCK") out[k.second] = c.action_id;
    }
    return out;
  }
  std::set<std::string> blocks_of(const std::string& scope) const {
    std::set<std::string> out;
    for (const auto& [t, id] : block_actions_of(scope)) out.insert(t);
    return out;
  }
  // 004:L240: "全局动作和局部动作的并集仍在当前 scope 下求值".
  std::set<std::string> blocked_in(const std::string& scope) const {
    std::set<std::string> out = blocks_of(scope), g = blocks_of(kGlobal);
    out.insert(g.begin(), g.end());
    return out;
  }
  // Records the scope's denylist at its key's current epoch.
  void record_list(const std::string& scope) { lists[{scope, key_epoch(scope)}] = block_actions_of(scope); }
  // The topics of the scope's denylist at `epoch` (nullopt: none recorded at that epoch).
  std::optional<std::set<std::string>> topics_at(const std::string& scope, int64_t epoch) const {
    auto it = lists.find({scope, epoch});
    if (it == lists.end()) return std::nullopt;
    std::set<std::string> out;
    for (const auto& [topic, id] : it->second) out.insert(topic);
    return out;
  }
  int64_t key_epoch(const std::string& scope) const {
    if (scope == kGlobal) return global_epoch;
    auto it = local_epoch.find(scope);
    return it == local_epoch.end() ? 0 : it->second;
  }
};

// One committed transaction's risk statements.
struct RiskTx {
  std::vector<std::string> local_advances, global_advances;     // scopes whose epoch it advanced
  std::vector<const SqlStatementObs*> inserts;                  // INSERT INTO risk_action
  std::vector<std::string> absorbed;                            // scopes that absorbed the global epoch
  std::vector<std::string> model_switches;                      // scopes whose risk model it switched
  std::vector<std::pair<std::string, std::string>> published;   // (snapshot, scope)
  std::vector<std::string> created, rule_moves, version_moves;  // context rows created / moved
};

RiskTx parse_tx(const SqlCommit& c) {
  RiskTx t;
  for (const SqlStatementObs& s : c.statements) {
    if (s.changes == 0) continue;
    if (starts(s.sql, "INSERT OR IGNORE INTO ranking_scope_context") && !s.params.empty())
      t.created.push_back(s.params[0]);
    if (starts(s.sql, "UPDATE ranking_scope_context SET rule_version") && s.params.size() >= 2)
      t.rule_moves.push_back(s.params[1]);
    if (starts(s.sql, "UPDATE ranking_scope_context SET version = version + 1") && !s.params.empty()) {
      t.version_moves.push_back(s.params.size() >= 3 ? s.params[1] : s.params[0]);
    }
    if (starts(s.sql, "UPDATE ranking_scope_context SET") && has(s.sql, "risk_model_version = ?") &&
        s.params.size() >= 2) {
      t.model_switches.push_back(s.params[1]);  // (model, scope, ...)
      if (has(s.sql, "risk_epoch = risk_epoch + 1")) t.local_advances.push_back(s.params[1]);
    } else if (starts(s.sql, "UPDATE ranking_scope_context SET version = version + 1, risk_epoch = risk_epoch + 1") &&
               !s.params.empty()) {
      t.local_advances.push_back(s.params[0]);
    } else if (starts(s.sql,
                      "UPDATE ranking_scope_context SET version = version + 1, global_risk_epoch = "
                      "global_risk_epoch + 1") &&
               !s.params.empty()) {
      t.global_advances.push_back(s.params[0]);
    } else if (starts(s.sql, "UPDATE ranking_scope_context SET version = version + 1, global_risk_epoch = (") &&
               s.params.size() >= 2) {
      t.absorbed.push_back(s.params[1]);
    } else if (starts(s.sql, "INSERT INTO risk_action") && s.params.size() >= 6) {
      t.inserts.push_back(&s);
    } else if (starts(s.sql, "UPDATE ranking_snapshot SET status = 'PUBLISHED'") && s.params.size() >= 3) {
      t.published.emplace_back(s.params[1], s.params[2]);
    }
  }
  return t;
}

// Applies one action row; returns the violation it shows ("" if none). 004:L211: a lift is a
// higher version of the action; 004:L213: an action ends only by its own EXPIRED (or lift).
std::string apply_action(RiskState& st, const SqlStatementObs& s, int64_t at_us, const std::string& client,
                         std::set<std::string>& expired) {
  const std::string &scope = s.params[0], &topic = s.params[1], &id = s.params[2], &state = s.params[3];
  const int64_t until = std::stoll(s.params[5]);
  Current& cur = st.current[{scope, topic}];
  ++st.versions[{scope, topic}];
  std::string why;
  if (state == "BLOCK" && cur.state == "BLOCK")
    why = "blocked " + topic + " in " + scope + " while " + cur.action_id + " blocks it";
  if (state != "BLOCK" && cur.state == "BLOCK" && cur.action_id != id) {
    why = state + " of " + id + " ended the block " + cur.action_id + " of " + topic + " in " + scope;
  }
  if (state == "BLOCK") st.until_of[id] = until;
  if (state == "EXPIRED") st.expired_at.emplace(id, at_us);
  if (state == "EXPIRED" && !expired.insert(id).second) why = "action " + id + " EXPIRED twice";
  if (state == "EXPIRED" && at_us < until) {
    why = "action " + id + " EXPIRED at " + std::to_string(at_us) + " before its effective_until " +
          std::to_string(until);
  }
  auto& spans = st.spans[{scope, topic}];
  if (cur.state == "BLOCK" && state != "BLOCK" && !spans.empty()) spans.back().to_us = at_us;
  if (cur.state != "BLOCK" && state == "BLOCK") spans.push_back(BlockSpan{at_us, INT64_MAX, client, id});
  cur = Current{id, state};  // the DB's state: the highest version row, whatever it ended
  return why;
}

// A risk-model switch is a control transaction of one local scope that advances exactly that scope's
// risk_epoch and writes no action (004:L212: "切换风险模型也推进它"); its denylist is unchanged at
// the new epoch.
void apply_model_switch(Judge& j, RiskState& st, const SqlCommit& c, const RiskTx& t) {
  const std::string& scope = t.model_switches[0];
  j.expect(!(t.model_switches.size() != 1 || !t.inserts.empty() || t.local_advances.size() != 1 ||
             !t.global_advances.empty() || scope == kGlobal),
           [&] {
             return c.client + " switched the risk model of " + std::to_string(t.model_switches.size()) + " scopes ('" +
                    scope + "') with " + std::to_string(t.inserts.size()) + " risk actions, " +
                    std::to_string(t.local_advances.size()) + " local and " + std::to_string(t.global_advances.size()) +
                    " global epoch advances";
           });
  for (const std::string& s : t.local_advances) {
    ++st.local_epoch[s];
    st.advanced[s] = EpochMove{c.time_us, c.client};
  }
  st.record_list(scope);
}

// One control transaction: its action and its epoch advance belong together (global actions
// advance the global epoch). 004:L212: "在同一控制事务中写动作并推进该 scope 的 risk_epoch".
void apply_control(Judge& j, RiskState& st, const SqlCommit& c, const RiskTx& t, std::set<std::string>& expired) {
  if (t.inserts.empty() && t.local_advances.empty() && t.global_advances.empty() && t.model_switches.empty()) return;
  // One check of the transaction's shape: a model switch's (apply_model_switch) or an action's.
  if (!t.model_switches.empty()) return apply_model_switch(j, st, c, t);
  const std::string scope = t.inserts.empty() ? "" : t.inserts[0]->params[0];
  const bool global = scope == kGlobal;
  const auto& adv = global ? t.global_advances : t.local_advances;
  const auto& other = global ? t.local_advances : t.global_advances;
  j.expect(!(t.inserts.size() != 1 || adv.size() != 1 || adv[0] != scope || !other.empty()), [&] {
    return c.client + " committed " + std::to_string(t.inserts.size()) + " risk actions with " +
           std::to_string(t.local_advances.size()) + " local and " + std::to_string(t.global_advances.size()) +
           " global epoch advances (action scope '" + scope + "')";
  });
  for (const std::string& s : t.local_advances) {
    ++st.local_epoch[s];
    st.advanced[s] = EpochMove{c.time_us, c.client};
  }
  st.global_epoch += static_cast<int64_t>(t.global_advances.size());
  if (!t.global_advances.empty()) st.advanced[kGlobal] = EpochMove{c.time_us, c.client};
  for (const SqlStatementObs* s : t.inserts) {
    const std::string why = apply_action(st, *s, c.time_us, c.client, expired);
    j.expect(why.empty(), [&] { return c.client + " at " + std::to_string(c.time_us) + ": " + why; });
  }
  if (scope.empty()) return;
  st.record_list(scope);
}

// Replays every committed transaction, calling `on_publish(state, snapshot, scope, commit)` at each
// publish and checking the control transactions into `j`.
template <typename F, typename G = void (*)(const RiskState&, const SqlCommit&)>
RiskState replay(
    Judge& j, const RankingRun& run, F on_publish, G on_commit = [](const RiskState&, const SqlCommit&) {}) {
  RiskState st;
  std::set<std::string> expired;
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    const RiskTx t = parse_tx(c);
    on_commit(st, c);  // judged against the context before this commit's own moves
    for (const std::string& s : t.created) {
      if (!st.version.count(s)) st.version[s] = st.rule_epoch[s] = 1;
    }
    for (const std::string& s : t.rule_moves) ++st.version[s], ++st.rule_epoch[s];
    for (const std::string& s : t.version_moves) ++st.version[s];
    apply_control(j, st, c, t, expired);
    for (const std::string& s : t.absorbed) st.absorbed[s] = st.global_epoch;
    for (const auto& [snap, scope] : t.published) on_publish(st, snap, scope, c);
  }
  return st;
}

// The rows read back agree with the replay: versions 1..n per (scope, topic), each row's epoch
// never above its key's epoch, final epochs equal; no risk_action row was updated or deleted.
void check_rows(Judge& j, const RankingRun& run, const RiskState& st) {
  const RiskObs& r = run.board.risk;
  std::map<std::pair<std::string, std::string>, int64_t> n;
  for (const RiskActionRow& a : r.actions) {
    j.expect(!(a.version != ++n[{a.scope_id, a.topic_id}] || a.epoch > st.key_epoch(a.scope_id)), [&] {
      return "risk_action " + a.scope_id + "/" + a.topic_id + " v" + std::to_string(a.version) +
             " out of sequence or at epoch " + std::to_string(a.epoch) + " beyond its scope's";
    });
  }
  for (const auto& kv_ : r.context_epochs) {
    const std::string& scope = kv_.first;
    const auto& e = kv_.second;
    const int64_t want_local = scope == kGlobal ? 0 : st.key_epoch(scope);
    const int64_t want_global =
        scope == kGlobal ? st.global_epoch : (st.absorbed.count(scope) ? st.absorbed.at(scope) : 0);
    j.expect(e.first == want_local && e.second == want_global, [&] {
      return "context of " + scope + " ends at risk epoch " + std::to_string(e.first) + " / global " +
             std::to_string(e.second) + "; its control transactions give " + std::to_string(want_local) + " / " +
             std::to_string(want_global);
    });
  }
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (s.changes == 0 || !(starts(s.sql, "UPDATE risk_action") || starts(s.sql, "DELETE FROM risk_action")))
        continue;
      j.expect(false, [&] { return c.client + " rewrote risk actions: `" + s.sql.substr(0, 60) + "`"; });
    }
  }
}

// 004:L213: a BLOCK whose effective_until passed long before the end (the quiet tail) still current
// means no expiry task ever committed it (`expiry_bound_us` after effective_until).
void check_expiry_liveness(Judge& j, const RankingRun& run, const RiskState& st) {
  std::map<std::string, int64_t> until;
  for (const RiskActionRow& a : run.board.risk.actions) {
    if (a.state == "BLOCK") until[a.action_id] = a.until_us;
  }
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  for (const auto& kv_ : st.current) {
    const auto& k = kv_.first;
    const auto& c = kv_.second;
    if (c.state != "BLOCK" || !until.count(c.action_id)) continue;
    j.expect(until[c.action_id] + run.board.params.expiry_bound_us > run.end_us, [&] {
      return "block " + c.action_id + " of " + k.second + " in " + k.first + " is still current at the end, " +
             std::to_string((run.end_us - until[c.action_id]) / 1000) + " ms after its effective_until";
    });
  }
}

std::map<std::string, const SnapshotRow*> snapshots_by_id(const BoardObs& b) {
  std::map<std::string, const SnapshotRow*> out;
  for (const SnapshotRow& s : b.snapshots) out[s.snapshot_id] = &s;
  return out;
}

// The items a snapshot of `run_id` must hold when `blocked` are left out (004:L236).
std::vector<std::pair<std::string, int64_t>> expected_items(const BoardObs& b, const std::string& run_id,
                                                            const std::set<std::string>& blocked) {
  std::vector<std::pair<std::string, int64_t>> cands;
  for (const CandidateRow& c : b.candidates) {
    if (c.run_id == run_id && !blocked.count(c.topic_id)) cands.emplace_back(c.topic_id, c.score);
  }
  return model::expected_items(cands, b.params.top_n);
}

// One publish: made under the risk context current at commit, the scope has absorbed the global
// epoch (004:L212, L264), and it holds exactly the top candidates not blocked in the scope or
// globally (004:L236, L240: a local action elsewhere changes nothing here).
void check_publish(Judge& j, const RankingRun& run, const RiskState& st, const std::string& snap,
                   const std::string& scope, const SqlCommit& c) {
  const BoardObs& b = run.board;
  auto e = b.risk.snapshot_epochs.find(snap);
  const auto snaps = snapshots_by_id(b);
  auto s = snaps.find(snap);
  if (e == b.risk.snapshot_epochs.end() || s == snaps.end()) return;  // rank-publish-fence's finding
  const int64_t absorbed = scope == kGlobal ? st.global_epoch : (st.absorbed.count(scope) ? st.absorbed.at(scope) : 0);
  j.expect(!(e->second.first != (scope == kGlobal ? 0 : st.key_epoch(scope)) || e->second.second != st.global_epoch ||
             absorbed != st.global_epoch),
           [&] {
             return c.client + " published " + snap + " at risk epoch " + std::to_string(e->second.first) +
                    " / global " + std::to_string(e->second.second) + " while the scope was at " +
                    std::to_string(st.key_epoch(scope)) + ", had absorbed global " + std::to_string(absorbed) +
                    " and the authority was at " + std::to_string(st.global_epoch);
           });
  const std::set<std::string> blocked = st.blocked_in(scope);
  std::vector<std::pair<std::string, int64_t>> got;
  for (const SnapshotItemRow& i : b.items) {
    if (i.snapshot_id == snap) got.emplace_back(i.topic_id, i.score);
  }
  j.expect(got == expected_items(b, source_run_of(b, s->second->run_id), blocked), [&] {
    std::set<std::string> shown;
    for (const auto& item : got) shown.insert(item.first);
    return c.client + " published " + snap + " with items {" + join(shown) + "} while {" + join(blocked) +
           "} were blocked in its scope or globally";
  });
}

struct DenyWrite {
  int64_t time_us = 0, epoch = 0;
  std::set<std::string> topics;
};

// The successful denylist writes per scope key, in execution order.
std::map<std::string, std::vector<DenyWrite>> deny_writes(const BoardObs& b) {
  std::map<std::string, std::vector<DenyWrite>> out;
  for (const RedisWrite& w : b.redis_writes) {
    if (!w.ok || w.argv.size() < 3 || (w.argv[0] != "SET" && w.argv[0] != "set")) continue;
    if (!starts(w.argv[1], "ranking:emergency-block:")) continue;
    // "epoch|t_a,t_b|earliest effective_until"
    const size_t bar = w.argv[2].find('|');
    const std::string rest = bar == std::string::npos ? "" : w.argv[2].substr(bar + 1);
    out[w.argv[1].substr(24)].push_back(
        DenyWrite{w.time_us, std::stoll(w.argv[2].substr(0, bar)), split_set(rest.substr(0, rest.find('|')), ',')});
  }
  return out;
}

// Each denylist write states the DB's blocks of its scope at the epoch it names, and never goes
// below the epoch the key held since Redis last lost its data.
void check_deny_writes(Judge& j, const BoardObs& b, const RiskState& st,
                       const std::map<std::string, std::vector<DenyWrite>>& writes) {
  for (const auto& kv_ : writes) {
    const std::string& scope = kv_.first;
    const std::vector<DenyWrite>& ws = kv_.second;
    int64_t held = 0;
    size_t loss = 0;
    for (const DenyWrite& w : ws) {
      while (loss < b.redis_losses.size() && b.redis_losses[loss] <= w.time_us) {
        ++loss;
        held = 0;
      }
      const std::optional<std::set<std::string>> db = st.topics_at(scope, w.epoch);
      j.expect(!(w.epoch < held || (w.epoch > 0 && (!db || *db != w.topics))), [&] {
        return "denylist of " + scope + " written at epoch " + std::to_string(w.epoch) + " with {" + join(w.topics) +
               "}" + (w.epoch < held ? " after epoch " + std::to_string(held) : "") +
               (!db ? "" : "; the DB's blocks at that epoch are {" + join(*db) + "}");
      });
      held = std::max(held, w.epoch);
    }
  }
}

// The epoch a key held at `t` (0 if none since the last Redis loss before t).
int64_t held_at(const BoardObs& b, const std::vector<DenyWrite>* ws, int64_t t) {
  int64_t since = 0;
  for (int64_t l : b.redis_losses) {
    if (l <= t) since = l;
  }
  int64_t e = 0;
  if (ws == nullptr) return e;
  for (const DenyWrite& w : *ws) {  // (not `ws ? *ws : {}`: that conditional copies the list)
    if (w.time_us >= since && w.time_us <= t) e = std::max(e, w.epoch);
  }
  return e;
}

// The push's path: the committer (it reads the denylist from the DB and writes it to Redis,
// 004:L235), the DB and Redis.
std::vector<std::string> push_path(const std::string& committer) { return {committer, "db", "redis"}; }

// The first instant fault in [from_us, until_us] that hit the push of `committer`'s commit at
// `from_us` (the scope key `scope`), described with its time; nullopt if none did. The committer
// is a background process that runs one step at a time, so from its commit to its push every call
// it makes is that push's sequence (the commit's reply, the fence moves, the global absorption,
// the denylist's read and its write: a failed step ends the sequence, nothing retries it). A fault
// hit the push when it names the committer as an end of a lost message, the caller of a broken
// call or a reset, or it is Redis's error reply to the committer's write of the scope's denylist.
// A fault of any other process (a lost message of another caller at the DB or Redis) hit nothing
// of the push.
std::optional<std::pair<int64_t, std::string>> push_hit(const fl::props::FaultBudget& budget,
                                                        const std::string& committer, const std::string& scope,
                                                        int64_t from_us, int64_t until_us) {
  if (until_us < from_us) return std::nullopt;
  for (const auto* r : budget.instants({committer, "redis"}, from_us, until_us)) {
    const bool own = r->process == committer || r->peer_process == committer;
    const bool refused_write =
        starts(r->message, (committer + ":").c_str()) && has(r->message, ("ranking:emergency-block:" + scope).c_str());
    if (own || refused_write) return std::make_pair(r->time_us, r->describe());
  }
  return std::nullopt;
}

// Why a block committed at `from_us` may still be missing from a view at `at_us`, past the maximum
// safe TTL, or nullopt. The TTL bounds the exposure the design itself allows (004:L237: "缓存最大安全
// TTL 作为最后边界"); a fault that held the push back is not the design's, and only as far as it
// reaches: a duration fault on the push's path (push_path) before the push reached Redis
// (`pushed_us`) is credited for as long as it lasted (a short fault does not excuse a long
// exposure); an instant fault that hit the push (push_hit: it may have dropped it, which the
// design does not retry) is credited up to the TTL after it (plus the path's faulty time since).
// Once the push is in Redis, a fault that loses it excuses nothing: recovering it is the design's
// part (004:L235: bypass when behind).
std::optional<std::string> push_delay_explained(const fl::props::FaultBudget& budget, const BlockSpan& span,
                                                const std::string& scope, int64_t at_us, int64_t pushed_us,
                                                int64_t max_safe_ttl_us) {
  FL_ASSERT(at_us - span.from_us > max_safe_ttl_us);  // asked only past the TTL
  const std::vector<std::string> places = push_path(span.committer);
  const int64_t until_us = std::min(at_us, pushed_us);
  const int64_t faulty_us = budget.covered_us(places, span.from_us, until_us);
  if (at_us - span.from_us - faulty_us <= max_safe_ttl_us) {
    return "the push's path was faulty for " + std::to_string(faulty_us) + " us of the " +
           std::to_string(at_us - span.from_us) + " us since the commit, before the push (" +
           budget.explain(places, span.from_us, until_us).value_or("") + ")";
  }
  if (auto hit = push_hit(budget, span.committer, scope, span.from_us, until_us)) {
    const int64_t since_us = at_us - hit->first - budget.covered_us(places, hit->first, until_us);
    if (since_us <= max_safe_ttl_us) return "the push may have been lost: " + hit->second;
  }
  return std::nullopt;
}

// When the first denylist write of `scope` listing `topic` at or after `from_us` ran (INT64_MAX:
// never).
int64_t pushed_at(const std::vector<DenyWrite>* ws, const std::string& topic, int64_t from_us) {
  if (ws == nullptr) return INT64_MAX;
  for (const DenyWrite& w : *ws) {
    if (w.time_us >= from_us && w.topics.count(topic)) return w.time_us;
  }
  return INT64_MAX;
}

// One view: what it showed is its cached PUBLISHED snapshot minus the scope's and the global
// denylists at the epochs it applied, and those are not older than what the edge held when the
// view started (004:L235, L285: the filter applies after a cache hit).
void check_view(Judge& j, const RankingRun& run, const RiskState& st, const ViewOp& op,
                const std::map<std::string, std::vector<DenyWrite>>& writes, const fl::props::FaultBudget& budget) {
  const BoardObs& b = run.board;
  const std::string scope = op.args.substr(6), snap = result_field(op.result, "snap");
  if (snap.empty()) return;  // nothing cached yet
  const std::string deny = result_field(op.result, "deny");
  const size_t slash = deny.find('/');
  auto ws = [&](const std::string& s) {
    auto it = writes.find(s);
    return it == writes.end() ? nullptr : &it->second;
  };
  int64_t el = std::stoll("0" + deny.substr(0, slash)), eg = std::stoll("0" + deny.substr(slash + 1));
  // A "not modified" answer (004:L279) shows the client's kept answer as current: it is judged as
  // an answer at no older epochs than the server held when the view started, the kept ones or newer.
  const bool not_modified = result_field(op.result, "src") == "not-modified";
  if (not_modified) {
    el = std::max(el, held_at(b, ws(scope), op.invoke_us));
    eg = std::max(eg, held_at(b, ws(kGlobal), op.invoke_us));
  }
  auto list = [&](const std::string& s, int64_t e) {
    return e == 0 ? std::set<std::string>{} : st.topics_at(s, e).value_or(std::set<std::string>{});
  };
  std::set<std::string> blocked = list(scope, el), g = list(kGlobal, eg);
  blocked.insert(g.begin(), g.end());
  std::set<std::string> want, shown = split_set(result_field(op.result, "items"), ',');
  for (const SnapshotItemRow& i : b.items) {
    if (i.snapshot_id == snap && !blocked.count(i.topic_id)) want.insert(i.topic_id);
  }
  // 004:L237: whatever the edge held (a Redis loss included), no response shows a topic whose block
  // committed more than the maximum safe TTL before the view started and was still current when it
  // completed. (The answer may be made at any instant of the view: one that began while the block
  // was current may show its lift or expiry, committed before it answered.)
  const int64_t answered_us = op.complete_us >= 0 ? op.complete_us : op.invoke_us;
  for (const std::string& t : shown) {
    for (const std::string& s : {scope, std::string(kGlobal)}) {
      auto it = st.spans.find({s, t});
      if (it == st.spans.end()) continue;
      for (const BlockSpan& span : it->second) {
        // One check: a topic shown past the maximum safe TTL is excused by a delayed push, else it fails.
        const bool within = span.from_us + b.params.max_safe_ttl_us >= op.invoke_us || answered_us >= span.to_us;
        const std::string what = within ? std::string()
                                        : op.process + " at " + std::to_string(op.invoke_us) + " showed " + t + " in " +
                                              scope + ", blocked in " + s + " since " + std::to_string(span.from_us);
        j.expect_or_excuse(within,
                           within ? std::nullopt
                                  : push_delay_explained(budget, span, s, op.invoke_us,
                                                         pushed_at(ws(s), t, span.from_us), b.params.max_safe_ttl_us),
                           what, [&] { return what + " (more than the maximum safe TTL)"; });
      }
    }
  }
  // A CDN hit may still hide a topic lifted since the origin answered (the cached response, until its
  // TTL): only shown ⊆ want is required of it; the origin's answer is exact.
  // A kept answer likewise (it may hide a topic lifted since).
  const bool hit = result_field(op.result, "src") == "hit" || not_modified;
  const bool items_ok = hit ? std::includes(want.begin(), want.end(), shown.begin(), shown.end()) : shown == want;
  j.expect(items_ok && el >= held_at(b, ws(scope), op.invoke_us) && eg >= held_at(b, ws(kGlobal), op.invoke_us), [&] {
    return op.process + " at " + std::to_string(op.invoke_us) + " showed {" + join(shown) + "} for " + scope +
           " from " + snap + " with denylist epochs " + deny + " (edge held " +
           std::to_string(held_at(b, ws(scope), op.invoke_us)) + "/" +
           std::to_string(held_at(b, ws(kGlobal), op.invoke_us)) + "); expected {" + join(want) + "}" +
           (not_modified
                ? " (answered not modified: the client's kept answer, its ETag " + result_field(op.result, "etag") + ")"
                : "");
  });
}

// Why the denylist of `scope` may be behind at the end, or nullopt: the key went with Redis's data
// (written before Redis's last loss, never since: the query layer then reads the DB, 004:L235
// "边缘尚未确认最新 epoch 时绕过榜单缓存回源"); or the push of the last commit that advanced the epoch
// may still be due, as a view's would be (push_delay_explained's reach: no more than the maximum
// safe TTL of sound path since that commit, or since an instant that hit its push).
std::optional<std::string> behind_explained(const RankingRun& run, const fl::props::FaultBudget& budget,
                                            const RiskState& st, const std::string& scope,
                                            const std::vector<DenyWrite>* ws) {
  const std::vector<int64_t>& losses = run.board.redis_losses;
  if (ws != nullptr && !ws->empty() && !losses.empty() && ws->front().time_us < losses.back() &&
      ws->back().time_us < losses.back()) {
    return "Redis lost the key with its data at " + std::to_string(losses.back()) + " (last written at " +
           std::to_string(ws->back().time_us) + ")";
  }
  auto moved = st.advanced.find(scope);
  if (moved == st.advanced.end()) return std::nullopt;
  const EpochMove& m = moved->second;
  const BlockSpan push{m.time_us, INT64_MAX, m.committer, ""};
  const int64_t ttl_us = run.board.params.max_safe_ttl_us;
  if (run.end_us - m.time_us <= ttl_us) return "its push may still be due: committed at " + std::to_string(m.time_us);
  if (auto why = push_delay_explained(budget, push, scope, run.end_us, INT64_MAX, ttl_us))
    return "committed at " + std::to_string(m.time_us) + ", " + *why;
  return std::nullopt;
}

// At the end the edge holds each scope's current denylist epoch (004:L235: the push is part of
// the block; an edge left behind is excused only by a fault that hit that push or lost it with Redis).
void check_edge_caught_up(Judge& j, const RankingRun& run, const RiskState& st,
                          const std::map<std::string, std::vector<DenyWrite>>& writes) {
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  std::set<std::string> scopes;
  for (const auto& kv_ : st.current) scopes.insert(kv_.first.first);
  for (const std::string& scope : scopes) {
    auto it = writes.find(scope);
    const std::vector<DenyWrite>* ws = it == writes.end() ? nullptr : &it->second;
    const int64_t held = held_at(run.board, ws, run.end_us);
    // Caught up is a check; behind is exempted when explained (not counted), else a failed check.
    if (held < st.key_epoch(scope)) {
      if (auto why = behind_explained(run, budget, st, scope, ws)) {
        j.v.exempt("denylist of " + scope + " behind at the end: " + *why);
        continue;
      }
    }
    j.expect(held >= st.key_epoch(scope), [&] {
      return "at the end the edge holds the denylist of " + scope + " at epoch " + std::to_string(held) +
             ", the DB at " + std::to_string(st.key_epoch(scope));
    });
  }
}

// The fault that failed the coordinator's risk call for `topic` of `run_id` between from and to:
// a broken call (a reset, a crash of either end) or a lost request or reply whose recorded message
// is that call's "risk-check <topic> <run>" (004:L313: "风控服务超时 | 按预先定义的风险策略降级": a
// call that fails is degraded by the policy). A fault that hit another topic's call excuses nothing.
std::optional<std::string> risk_call_failed(const fl::props::FaultBudget& budget, const std::string& coordinator,
                                            const std::string& topic, const std::string& run_id, int64_t from_us,
                                            int64_t to_us) {
  const std::string call = "risk-check " + topic + " " + run_id;
  for (const auto* f : budget.instants({coordinator}, from_us, to_us)) {
    const std::string_view kind = sim::fault_kind_name(f->kind);
    if (kind != "call-broken" && kind != "message-lost") continue;
    if (f->process != coordinator && f->peer_process != coordinator) continue;
    const size_t at = f->message.find(call);
    if (at == std::string::npos || (at + call.size() < f->message.size() && f->message[at + call.size()] != ' ')) {
      continue;
    }
    return std::string(kind) + " of " + f->process + "|" + f->peer_process + " at " + std::to_string(f->time_us) +
           " (" + f->detail + "): " + call;
  }
  return std::nullopt;
}

// One committed risk-service disposition (004:L231, L313): a candidate commits only under the
// context its request carried, which is the scope's context at that commit; an entry rejected for
// a changed context was rejected when the context was no longer the run's; a suspicious one is
// suspicious under the risk model; a degraded one is explained by a fault of the service or the
// coordinator, or by one that failed its own risk call (risk_call_failed). `building_at`: when each run's BUILDING commit was executed; a run's risk calls come
// after it, and a slow commit (a paused DB) may land long after the call timed out.
void check_risk_disposition(Judge& j, const RankingRun& run, const RiskState& st, const SqlCommit& c,
                            const std::map<std::string, int64_t>& run_ctx, const fl::props::FaultBudget& budget,
                            const std::map<std::string, int64_t>& building_at) {
  const BoardParams& p = run.board.params;
  for (const SqlStatementObs& s : c.statements) {
    if (s.changes == 0) continue;
    if (starts(s.sql, "INSERT INTO run_candidate") && has(s.sql, "risk_verdict") && s.params.size() >= 8) {
      const std::string& scope = s.params[0];
      auto at = [&](const std::map<std::string, int64_t>& m) {
        auto it = m.find(scope);
        return it == m.end() ? 0 : it->second;
      };
      const int64_t global = scope == kGlobal ? st.global_epoch : at(st.absorbed);
      j.expect(!(std::stoll(s.params[5]) != at(st.version) ||
                 std::stoll(s.params[6]) != st.key_epoch(scope) * (scope != kGlobal) ||
                 std::stoll(s.params[7]) != global || risk_verdict_of(s.params[2], p.risk_suspicious_mod) != "pass"),
               [&] {
                 return c.client + " wrote candidate " + s.params[2] + " of " + s.params[1] + " under context v" +
                        s.params[5] + " risk " + s.params[6] + "/" + s.params[7] + " while the scope was at v" +
                        std::to_string(at(st.version)) + " risk " + std::to_string(st.key_epoch(scope)) + "/" +
                        std::to_string(global);
               });
      continue;
    }
    if (!starts(s.sql, "UPDATE run_input_manifest SET disposition") || s.params.size() < 4) continue;
    const bool fixed = has(s.sql, "'risk-context-changed'");  // reason in the text, params (run, topic)
    const std::string reason = fixed ? "risk-context-changed" : s.params[1];
    const std::string& run_id = fixed ? s.params[0] : s.params[2];
    const std::string& topic = fixed ? s.params[1] : s.params[3];
    if (!starts(reason, "risk-")) continue;
    auto r = run_ctx.find(run_id);
    std::string scope;
    for (const RunRow& x : run.board.runs) {
      if (x.run_id == run_id) scope = x.scope_id;
    }
    Verdict& v = j.v;  // one check, then failed, exempted or passed by the reason's branch: counted by hand
    ++v.checks;
    const int64_t now_v = st.version.count(scope) ? st.version.at(scope) : 0;
    if (reason == "risk-context-changed" && (r == run_ctx.end() || r->second == now_v)) {
      fail_verdict(v, c.client + " rejected " + topic + " of " + run_id +
                          " for a changed context, but the scope is still at v" + std::to_string(now_v));
    } else if (reason == "risk-suspicious" && risk_verdict_of(topic, p.risk_suspicious_mod) != "suspicious") {
      fail_verdict(v, c.client + " rejected " + topic + " of " + run_id + " as suspicious; the risk model passes it");
    } else if (starts(reason, "risk-unavailable")) {
      auto b = building_at.find(run_id);
      const int64_t asked_after_us = std::min(c.time_us - 3'000'000, b == building_at.end() ? c.time_us : b->second);
      if (auto why = budget.explain({"risk-svc", c.client}, asked_after_us, c.time_us)) {
        v.exempt("risk service unavailable: " + *why);
      } else if (auto hit = risk_call_failed(budget, c.client, topic, run_id, asked_after_us, c.time_us)) {
        v.exempt("risk call failed: " + *hit);
      } else {
        fail_verdict(v, c.client + " degraded " + topic + " of " + run_id + " (" + reason +
                            ") with no fault of the risk service");
      }
    }
  }
}

// A clock fault of the edge or of a process that stamps effective_until (risk, expiry-N) up to `t`:
// the edge's expiry and the actions' effective_until are then on different clocks.
std::optional<std::string> clock_fault(const fl::props::FaultBudget& budget, int64_t t) {
  for (const fl::props::FaultSpan& f : budget.spans()) {
    if (f.from_us <= t && has(f.what, "clock") &&
        (f.place == "edge" || f.place == "risk" || starts(f.place, "expiry-"))) {
      return f.what;
    }
  }
  return std::nullopt;
}

// RANK-29, 004:L213: "快照和 CDN 的有效期不得跨过当前最早到期时间". A CDN hit (its object left the
// origin at `cached`, built with the denylists at epochs `origin_epochs`) must not be served past the
// effective_until of a block those denylists held whose EXPIRED was still pending when the object
// was cached, once that EXPIRED has committed: the object was valid past the earliest expiry.
void check_cache_validity(Judge& j, const RankingRun& run, const RiskState& st) {
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  for (const ViewOp& op : run.board.risk.views) {
    if (op.outcome != Outcome::kOk || result_field(op.result, "src") != "hit") continue;
    const std::string scope = op.args.substr(6), odeny = result_field(op.result, "origin_epochs");
    const int64_t cached = std::strtoll(result_field(op.result, "cached").c_str(), nullptr, 10);
    const size_t slash = odeny.find('/');
    if (slash == std::string::npos) continue;
    const std::pair<std::string, int64_t> keys[] = {{scope, std::strtoll(odeny.c_str(), nullptr, 10)},
                                                    {kGlobal, std::strtoll(odeny.c_str() + slash + 1, nullptr, 10)}};
    for (const auto& key : keys) {
      auto list = st.lists.find(key);
      for (const auto& kv_ : list == st.lists.end() ? std::map<std::string, std::string>{} : list->second) {
        const std::string& topic = kv_.first;
        const std::string& id = kv_.second;
        auto u = st.until_of.find(id);
        auto x = st.expired_at.find(id);
        // One check: a hit past a committed expiry is excused by a clock fault, else it fails.
        const bool valid = u == st.until_of.end() || x == st.expired_at.end() || x->second <= cached ||
                           x->second > op.invoke_us || u->second >= op.invoke_us;
        j.expect_or_excuse(valid, valid ? std::nullopt : clock_fault(budget, op.invoke_us),
                           "CDN object validity against effective_until on another clock", [&] {
                             return op.process + " at " + std::to_string(op.invoke_us) + " got a CDN hit for " + scope +
                                    " cached at " + std::to_string(cached) + " with the block " + id + " of " + topic +
                                    " in " + key.first + " (effective_until " + std::to_string(u->second) +
                                    ", EXPIRED at " + std::to_string(x->second) +
                                    "): the object was valid past the earliest pending expiry";
                           });
      }
    }
  }
}

}  // namespace

// RANK-19, RANK-21 (004:L230-231, L313).
Verdict check_risk_response(const RankingRun& run) {
  Judge j("rank-risk-response", {"RANK-19", "RANK-21"},
          "each candidate written with a risk verdict commits under exactly the scope's context "
          "(version, risk_epoch, absorbed global epoch) at its commit and only for a topic the risk "
          "model passes; an entry rejected for a changed context was rejected after the context left "
          "the run's; a suspicious rejection matches the model; a degraded one is explained by a "
          "fault of the risk service or the coordinator");
  std::map<std::string, int64_t> run_ctx;
  for (const RunRow& r : run.board.runs) run_ctx[r.run_id] = r.ctx_version;
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  Judge scratch("scratch", {}, "");
  std::map<std::string, int64_t> building_at;  // run -> when its BUILDING commit was executed
  for (const auto& [run_id, i] : run_timeline(run).building) building_at.emplace(run_id, run.commits[i].time_us);
  replay(
      scratch, run, [](const RiskState&, const std::string&, const std::string&, const SqlCommit&) {},
      [&](const RiskState& st, const SqlCommit& c) {
        if (c.ok) check_risk_disposition(j, run, st, c, run_ctx, budget, building_at);
      });
  return j.v;
}

std::map<std::string, std::set<std::string>> blocked_at_publish(const RankingRun& run) {
  std::map<std::string, std::set<std::string>> out;
  if (!run.board.risk.enabled) return out;
  Judge scratch("scratch", {}, "");
  replay(scratch, run, [&](const RiskState& st, const std::string& snap, const std::string& scope, const SqlCommit&) {
    out[snap] = st.blocked_in(scope);
  });
  return out;
}

// RANK-26, RANK-27, RANK-29 (004:L211-213).
Verdict check_risk_actions(const RankingRun& run) {
  Judge j("rank-risk-actions", {"RANK-26", "RANK-27", "RANK-29"},
          "each committed risk action (block, lift, expiry) is one control transaction that also "
          "advances exactly its scope's risk_epoch (global scope: the global_risk_epoch), with the "
          "next risk_action_version of its (scope, topic); rows are never rewritten; an action ends "
          "only by its own lift or EXPIRED, EXPIRED commits once per action and not before "
          "effective_until, and a block past effective_until is expired by the end; final epochs "
          "agree; no CDN object is served past the earliest pending expiry of the blocks it was "
          "built with once that expiry has committed");
  const RiskState st =
      replay(j, run, [](const RiskState&, const std::string&, const std::string&, const SqlCommit&) {});
  check_rows(j, run, st);
  check_expiry_liveness(j, run, st);
  check_cache_validity(j, run, st);
  return j.v;
}

// RANK-22 (risk context), RANK-26 (004:L212, L236, L240, L264).
Verdict check_risk_publish(const RankingRun& run) {
  Judge j("rank-risk-publish", {"RANK-22", "RANK-26"},
          "every publish commits under the scope's current risk_epoch and the authority's "
          "global_risk_epoch, which the scope has absorbed, and its snapshot holds exactly the top "
          "candidates of its run not blocked in its scope or globally");
  Judge scratch("scratch", {}, "");
  replay(scratch, run, [&](const RiskState& st, const std::string& snap, const std::string& scope, const SqlCommit& c) {
    check_publish(j, run, st, snap, scope, c);
  });
  return j.v;
}

// RANK-28, RANK-26 (004:L235, L240, L283, L285).
Verdict check_emergency_block(const RankingRun& run) {
  Judge j("rank-emergency-block", {"RANK-28", "RANK-26"},
          "each denylist the edge stores is the DB's blocks of its scope at the epoch it names and "
          "never goes back; each view shows its cached snapshot minus its scope's and the global "
          "denylist at epochs no older than the edge held when it started; at the end the edge "
          "holds every scope's current epoch unless a fault of the pusher or Redis explains it");
  Judge scratch("scratch", {}, "");
  const RiskState st =
      replay(scratch, run, [](const RiskState&, const std::string&, const std::string&, const SqlCommit&) {});
  const auto writes = deny_writes(run.board);
  check_deny_writes(j, run.board, st, writes);
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  for (const ViewOp& op : run.board.risk.views) {
    if (op.outcome == Outcome::kOk) check_view(j, run, st, op, writes, budget);
  }
  check_edge_caught_up(j, run, st, writes);
  return j.v;
}

std::string result_field(const std::string& r, const std::string& name) {
  const size_t at = r.find(name + "=");
  if (at == std::string::npos) return "";
  const size_t from = at + name.size() + 1, to = r.find(' ', from);
  return r.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

}  // namespace fl::ranking::props
