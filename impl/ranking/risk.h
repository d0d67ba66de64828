// Risk actions of seed 004 (§9.2-§9.3, 004:L204-240): block, lift and expiry as control
// transactions on the scope context, each writing a RISK_ACTION row with a higher
// risk_action_version of its (scope_id, topic_id) and advancing the scope's risk_epoch, or for a
// global action (scope GLOBAL|ALL|ALL|ALL) the global_risk_epoch of that authority row; every other
// scope then absorbs the global epoch; after each commit the epoch'd denylist is pushed to Redis
// (`ranking:emergency-block:{scope_id}`, the emergency channel, 004:L235, L283), which the query
// layer applies to whatever snapshot it serves.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/ports/history.h"
#include "impl/ports/redis.h"
#include "impl/ports/redis_script.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"
#include "impl/ranking/fixes.h"

namespace fl::ranking {

// 004:L211: "需要覆盖所有榜时写明确的 GLOBAL|ALL|ALL|ALL".
inline constexpr const char* kGlobalScope = "GLOBAL|ALL|ALL|ALL";

// KEYS denylist; ARGV epoch topics. Stores "epoch|topics" (topics = "t_a,t_b|<earliest pending
// effective_until of those blocks, 0 if none>", 004:L213) when the key is missing or holds an older
// epoch (004:L235: "带 epoch 的高优先级 denylist"); returns 1 when it wrote, else 0.
inline constexpr const char* kDenylistSetScript = "rank_denylist_set";
void add_risk_scripts(ScriptRegistry& registry);

std::string denylist_key(const std::string& scope);

// The topics currently blocked in a scope or globally (params: scope, kGlobalScope): those whose
// highest risk_action_version row is a BLOCK (004:L240: "全局动作和局部动作的并集仍在当前 scope 下求值").
#define FL_RANK_CURRENT_BLOCKS                                                                                \
  " FROM risk_action a WHERE a.scope_id IN (?, ?) AND a.state = 'BLOCK' AND a.risk_action_version = (SELECT " \
  "MAX(b.risk_action_version) FROM risk_action b WHERE b.scope_id = a.scope_id AND b.topic_id = a.topic_id)"
inline constexpr const char* kBlockedTopicsSql = "SELECT a.topic_id" FL_RANK_CURRENT_BLOCKS;
// The earliest effective_until among those blocks (NULL when none): 004:L213, "快照和 CDN 的有效期不得跨过当前最早到期时间".
inline constexpr const char* kEarliestExpirySql = "SELECT MIN(a.effective_until_us)" FL_RANK_CURRENT_BLOCKS;
#undef FL_RANK_CURRENT_BLOCKS

struct RiskOptions {
  std::vector<std::string> scopes;        // the board scopes (kGlobalScope among them)
  int topics = 5;                         // actions target t_1..t_topics (the hot end of the board)
  int64_t interval_us = 1'000'000;        // mean gap between control actions
  int64_t block_ttl_us = 3'000'000;       // effective_until - effective_from
  int global_percent = 30;                // actions on the global scope
  int lift_percent = 40;                  // lifts of a current block (else a new block)
  std::vector<std::string> local_scopes;  // where local actions go (empty: every non-global scope)
  int64_t stop_at_us = 0;
  int64_t expiry_interval_us = 500'000;
  RankFixes fixes = RankFixes::spec();
  // Risk-model switches among the control actions (004:L212: "切换风险模型也推进它"); 0 keeps the
  // constant model risk-m1 (and the draws, hence the traces, of scenarios without switches).
  int model_switch_percent = 0;
  Rpc* edge = nullptr;  // with the CDN (C28, F11): pushes and purges go to "edge" through this client
  // RK-CACHE-CONTEXT-FENCE with the candidate cache: every transaction that moves a scope's context
  // is bracketed by two INCRs of that scope's fence (candidate_cache.h), as rule control's are.
  bool cache_fence = false;
};

// Blocks and lifts at random moments (process "risk"), none after stop_at_us.
Task<void> run_risk_control(Runtime& rt, Sql& sql, Redis& redis, RiskOptions o);
// An expiry scheduler (004:L213): every interval, the BLOCK actions whose effective_until has
// passed get an EXPIRED control transaction, idempotent per action id; several may run at once.
Task<void> run_expiry(Runtime& rt, Sql& sql, Redis& redis, RiskOptions o);

// The query layer (004:L279, L285): every interval a viewer reads a random scope's cached pointer
// and snapshot, applies the scope's and the global denylist, and records what it showed (history
// op `view`, result "snap=<id> deny=<scope epoch>,<global epoch> items=<t,...>").
// `db` (RK-DENYLIST-BYPASS; else null): where the blocks are read when a denylist is missing.
Task<void> run_viewer(Runtime& rt, Redis& redis, Sql* db, Recorder& history, std::vector<std::string> scopes,
                      int64_t interval_us, int64_t stop_at_us);

// ---- The risk service (004:L231, L313; C12, F05).

// The request carries scope_id, scope_context_version, input_manifest_id, the rule, mapping, risk
// and global risk epochs, calculation_run_id and the topic. 004:L231: "风险请求也要携带 scope_id".
struct RiskCheckRequest {
  std::string scope_id;
  int64_t scope_context_version = 0;
  std::string input_manifest_id;
  int64_t rule_activation_epoch = 0, mapping_activation_epoch = 1, risk_epoch = 0, global_risk_epoch = 0;
  std::string calculation_run_id, topic_id;
  std::string describe() const { return "risk-check " + topic_id + " " + calculation_run_id; }
};
struct RiskCheckReply {
  std::string verdict;       // pass | suspicious
  RiskCheckRequest request;  // echoed: the context the verdict was computed under
  std::string describe() const { return verdict; }
};

// Risk model risk-m1 (a scenario constant): t_i is suspicious when i % suspicious_mod == 0.
std::string risk_verdict(const std::string& topic, int suspicious_mod);
// Serves "risk-svc": each answer after a random delay in [0, delay_us] (a slow service, C12).
Task<void> run_risk_service(Runtime& rt, Rpc& rpc, int suspicious_mod, int64_t delay_us);

}  // namespace fl::ranking
