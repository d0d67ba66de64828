#include "impl/toy/scripts.h"

#include <string>
#include <vector>

namespace fl::toy {
namespace {

// redis.call('SET', ..., 'NX') is false when the key exists, {ok='OK'} when it wrote.
const char* kVisitLua = R"(if redis.call('SET', KEYS[2], ARGV[1], 'NX') then
  return redis.call('INCR', KEYS[1])
end
return tonumber(redis.call('GET', KEYS[1]) or '0')
)";

}  // namespace

void add_toy_scripts(ScriptRegistry& registry) { registry.add(RedisScript{kVisitScript, kVisitLua}); }

std::shared_ptr<const ScriptRegistry> toy_scripts() {
  auto registry = std::make_shared<ScriptRegistry>();
  add_toy_scripts(*registry);
  return registry;
}

}  // namespace fl::toy
