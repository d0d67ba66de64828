// The scope control transactions of seed 004 (004:L104, L256, L297-303, L86, L220): every change of
// what a scope may publish under is one DB transaction on its RANKING_SCOPE_CONTEXT row that moves
// the row's monotone control version. Rule activations and rollbacks (rule_version, a new
// rule_activation_epoch), topic-mapping switches (mapping_version, a new mapping_activation_epoch)
// and window-configuration changes (window_config_version). The risk control's transactions live in
// risk.{h,cc}.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/ports/redis.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"

namespace fl::ranking {

// The context row's mapping and window configuration before any control transaction (the schema's
// column defaults when the scenario has scope control).
inline constexpr const char* kInitialMapping = "map-v1";
inline constexpr const char* kInitialWindowConfig = "wc-v1";
// The two window configurations (a scenario constant, docs/systems/ranking.md): which window type
// the score rule reads. wc-v1: the long baseline windows; wc-v2: the medium windows. Returns
// `fallback` for any other name.
std::string window_type_of(const std::string& window_config, const std::string& fallback);

struct ControlOptions {
  std::vector<std::string> scopes;
  int64_t interval_us = 0;  // mean gap between control transactions
  int64_t stop_at_us = 0;   // none after this (the workload's end)
  // Shares (percent) of the transactions that switch the scope's mapping (map-v1 <-> map-v2) or
  // change its window configuration (wc-v1 <-> wc-v2); the rest are rule activations/rollbacks.
  // Both 0: no extra random draw, so the process's trace is the rule control's alone.
  int mapping_switch_percent = 0;
  int window_config_percent = 0;
};

// Control transactions at random moments on random scopes until o.stop_at_us.
// `fence` (RK-CACHE-CONTEXT-FENCE, with the candidate cache; else null): each control transaction
// increments the scope's context fence in Redis before and after its DB commit.
Task<void> run_rule_control(Runtime& rt, Sql& sql, ControlOptions o, Redis* fence = nullptr);

// 004:L86, L104, L142: reads the scope's (mapping_version, mapping_activation_epoch) and CASes the
// row on them: the other mapping, mapping_activation_epoch + 1, version + 1. Returns true if it
// committed (false: the row moved under it, or the DB did not answer; nothing changed or unknown).
Task<bool> switch_mapping(Sql& sql, const std::string& scope);
// 004:L104, L220, L262: reads the scope's window_config_version and CASes the row on it: the other
// configuration, version + 1 (the seed gives window configurations no activation epoch).
Task<bool> change_window_config(Sql& sql, const std::string& scope);

}  // namespace fl::ranking
