// Differences between the simulated Redis (sim/redis) and redis-server 7.0.15 that the
// differential suite found and that are not fixed yet. Each entry names the minimal sequence
// that shows it; the suite tolerates a difference only when an entry's predicate matches that
// exact pair of replies, and prints how often each entry was hit. Delete an entry once the
// engine is fixed (the suite then checks the behaviour again).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "impl/ports/redis_reply.h"

namespace fl::redis_diff {

struct KnownDifference {
  std::string id;           // "KD1"
  std::string description;  // what differs, and the minimal sequence
  // True when (real reply `a`, simulated reply `b`) of `argv` is this difference.
  std::function<bool(const std::vector<std::string>& argv, const RedisReply& a, const RedisReply& b)> matches;
};

const std::vector<KnownDifference>& known_differences();

}  // namespace fl::redis_diff
