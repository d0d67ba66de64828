// Redis 7.0's maxmemory-policy names, for whoever checks a policy before the engine runs (CONFIG
// SET maxmemory-policy, the scenario loader's topology.redis.maxmemory_policy).
#pragma once

#include <string>
#include <vector>

namespace fl::sim::redis {

// volatile-lru volatile-lfu volatile-random volatile-ttl allkeys-lru allkeys-lfu allkeys-random
// noeviction (defined in admin.cc, next to CONFIG SET).
const std::vector<std::string>& eviction_policies();

}  // namespace fl::sim::redis
