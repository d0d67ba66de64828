#include "impl/ranking/control.h"

#include "impl/ranking/candidate_cache.h"

namespace fl::ranking {

std::string window_type_of(const std::string& window_config, const std::string& fallback) {
  if (window_config == "wc-v1") return "long";
  if (window_config == "wc-v2") return "medium";
  return fallback;
}

namespace {

std::string other(const std::string& current, const char* a, const char* b) { return current == a ? b : a; }

// 004:L297-303: the target rule_version, rule_activation_epoch + 1 and version + 1.
Task<void> activate_rule(Sql& sql, const std::string& scope, int64_t n) {
  static const char* kRules[] = {"rule-v2", "rule-v3", "rule-v2"};  // A -> B -> A (004:L298-300)
  co_await sql.exec(
      "UPDATE ranking_scope_context SET rule_version = ?, rule_activation_epoch = "
      "rule_activation_epoch + 1, version = version + 1 WHERE scope_id = ?",
      std::string(kRules[n % 3]), scope);
}

}  // namespace

Task<bool> switch_mapping(Sql& sql, const std::string& scope) {
  SqlResult cur = co_await sql.exec(
      "SELECT mapping_version, mapping_activation_epoch FROM ranking_scope_context WHERE "
      "scope_id = ?",
      scope);
  if (!cur.ok() || cur.rows().empty()) co_return false;
  const std::string version = cur.rows()[0][0].as_text();
  // 004:L86: "推进 mapping_activation_epoch、登记新的活动 mapping_version" in one control transaction
  // on the context row; 004:L104: the control version moves with it.
  SqlResult r = co_await sql.exec(
      "UPDATE ranking_scope_context SET mapping_version = ?, mapping_activation_epoch = "
      "mapping_activation_epoch + 1, version = version + 1 WHERE scope_id = ? AND "
      "mapping_version = ? AND mapping_activation_epoch = ?",
      other(version, "map-v1", "map-v2"), scope, version, cur.rows()[0][1].as_int());
  co_return r.ok() && r.changes() == 1;
}

Task<bool> change_window_config(Sql& sql, const std::string& scope) {
  SqlResult cur =
      co_await sql.exec("SELECT window_config_version FROM ranking_scope_context WHERE scope_id = ?", scope);
  if (!cur.ok() || cur.rows().empty()) co_return false;
  const std::string config = cur.rows()[0][0].as_text();
  // 004:L104: "保存当前激活的规则、窗口配置、映射 ... 及单调控制版本".
  SqlResult r = co_await sql.exec(
      "UPDATE ranking_scope_context SET window_config_version = ?, version = version + 1 "
      "WHERE scope_id = ? AND window_config_version = ?",
      other(config, "wc-v1", "wc-v2"), scope, config);
  co_return r.ok() && r.changes() == 1;
}

Task<void> run_rule_control(Runtime& rt, Sql& sql, ControlOptions o, Redis* fence) {
  const bool mixed = o.mapping_switch_percent + o.window_config_percent > 0;
  for (int64_t n = 0; rt.clock().now_us() < o.stop_at_us;) {
    co_await rt.clock().sleep_us(o.interval_us / 2 +
                                 static_cast<int64_t>(rt.random_u64() % static_cast<uint64_t>(o.interval_us)));
    const std::string& scope = o.scopes[rt.random_u64() % o.scopes.size()];
    const int draw = mixed ? static_cast<int>(rt.random_u64() % 100) : 100;
    // RK-CACHE-CONTEXT-FENCE: odd while this transaction may commit; a Redis error here only makes
    // a rebuild discard its batch (a fence that moves or stays odd), never switch a stale one.
    if (fence) co_await fence->command({"INCR", context_fence_key(scope)});
    if (draw < o.mapping_switch_percent) {
      co_await switch_mapping(sql, scope);
    } else if (draw < o.mapping_switch_percent + o.window_config_percent) {
      co_await change_window_config(sql, scope);
    } else {
      co_await activate_rule(sql, scope, n++);
    }
    if (fence) co_await fence->command({"INCR", context_fence_key(scope)});
  }
}

}  // namespace fl::ranking
