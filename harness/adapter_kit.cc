#include "harness/adapter_kit.h"

#include <algorithm>

namespace fl {

const std::vector<std::string>& Roles::of(const std::string& role) const {
  static const std::vector<std::string> kNone;
  auto it = names_.find(role);
  return it == names_.end() ? kNone : it->second;
}

bool apply_store_fault(const FaultSpec& f, const StoreNodes& stores) {
  if (f.kind != "sql-io-error" || f.target != stores.db || stores.db_vfs == nullptr) return false;
  const auto calls = static_cast<uint32_t>(std::max<int64_t>(f.value, 1));
  const bool syncs = stores.sql_io_error_calls == SqlIoErrorCalls::kSyncsWhenEven && f.value % 2 == 0;
  stores.db_vfs->fail_next(syncs ? sim::storage::SimIoOp::kSync : sim::storage::SimIoOp::kWrite, calls);
  return true;
}

std::vector<const sim::redis::CommandLog*> KitRun::redis_command_logs() const {
  std::vector<const sim::redis::CommandLog*> logs;
  for (const sim::redis::Server* server : redis_servers) logs.push_back(&server->command_log());
  return logs;
}

std::vector<ParamInfo> BoundParams::infos() const {
  std::vector<ParamInfo> out;
  out.reserve(params_.size());
  for (const BoundParam& p : params_) out.push_back(p.info());
  return out;
}

}  // namespace fl
