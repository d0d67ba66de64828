// The Redis candidate list of seed 004 (004:L317) and its rebuild. The process "cache" keeps
// `ranking:candidates:{scope_id}` = "ctx=<context version>|run=<run_id>|<topic>:<score>;..." (topics
// in order) for the newest SEALED run made under the scope's current context. When the key is
// missing (Redis lost it) it rebuilds: it pins the context version, recomputes the run's
// candidates from the immutable window versions its frozen manifest names (same source-offset
// cut), writes them to the isolated key `ranking:candidates-rebuild:{scope_id}:{nonce}`, reconciles
// them item by item with the run's candidate rows, and only if the context is still the pinned one
// renames the isolated key onto the live one; otherwise the batch is discarded and redone later.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/ports/redis.h"
#include "impl/ports/redis_script.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"
#include "impl/ranking/fixes.h"

namespace fl::ranking {

struct CandidateCacheOptions {
  std::vector<std::string> scopes = {"GLOBAL|ALL|ALL|ALL", "GLOBAL|ALL|ALL|zh-CN"};
  std::string window_type = "long";  // score rule v1's windows (runs.h)
  int64_t entry_score = 2;
  int64_t interval_us = 500'000;
  RankFixes fixes = RankFixes::spec();
};

// RK-CACHE-CONTEXT-FENCE: the per-scope context fence a control transaction increments before and
// after its DB commit, and the script that switches a rebuilt list only while the fence is the
// (even or absent) value read before the context was pinned.
std::string context_fence_key(const std::string& scope);
inline constexpr const char* kCacheSwitchScript = "rank_cache_switch";
void add_cache_scripts(ScriptRegistry& registry);

std::string candidates_key(const std::string& scope);
std::string candidates_rebuild_prefix(const std::string& scope);  // "ranking:candidates-rebuild:<scope>:"

Task<void> run_candidate_cache(Runtime& rt, Sql& sql, Redis& redis, CandidateCacheOptions o);

}  // namespace fl::ranking
