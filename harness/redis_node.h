// The simulated Redis node's memory settings from the scenario's `topology.redis` section, one
// place for every adapter that runs a Redis node.
#pragma once

#include "harness/scenario.h"
#include "sim/redis/engine.h"

namespace fl {

// maxmemory_bytes, maxmemory_policy and maxmemory_samples (checked by the loader) into the
// engine's options; the engine then evicts or answers -OOM as Redis 7.0 does.
inline void apply_redis_memory(const RedisSettings& redis, sim::redis::EngineOptions& engine) {
  engine.maxmemory = redis.maxmemory_bytes;
  engine.maxmemory_policy = redis.maxmemory_policy;
  engine.maxmemory_samples = redis.maxmemory_samples;
}

}  // namespace fl
