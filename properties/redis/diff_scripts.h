// The scripts the Redis differential suite runs, each one Lua text that the simulated Redis and a
// real redis-server run alike. They cover the Lua-to-Redis reply
// conversions (number, string, false, nested tables, {ok=...}, {err=...}) and the patterns the
// seeds use (compare-and-delete, counters with a TTL, capped leaderboards, ack-and-delete).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "impl/ports/redis_script.h"

namespace fl::redis_diff {

struct ScriptShape {
  std::string name;
  int num_keys = 1;
  int num_args = 0;
};

std::shared_ptr<const ScriptRegistry> diff_scripts();
// Key and argument counts of each script in diff_scripts(), sorted by name.
std::vector<ScriptShape> diff_script_shapes();

}  // namespace fl::redis_diff
