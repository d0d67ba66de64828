// The kernel demo: replicas increment a counter held by a store, over RPC, under faults.
//
// It exists to exercise the kernel before the seed systems (and stays as the smallest example
// of a system). Topology: clients -> replicas ("counter.inc") -> store ("store.inc").
//   spec      clients retry a timed-out increment with the same request id and the store applies
//             every request it receives: retries and network duplicates double-count.
//   hardened  spec plus one named fix, DM-DEDUP-IDS: the store remembers applied request ids and
//             applies each at most once (protects DEMO-1: no increment counted twice).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "impl/ports/fixes.h"
#include "impl/ports/history.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/task.h"

namespace fl::demo {

// The demo's named fixes (impl/ports/fixes.h); demo_fixes()[i] describes value i.
enum class Fix : uint8_t { kDedupIds };
using Fixes = FixSet<Fix>;
const std::vector<FixInfo>& demo_fixes();

struct IncRequest {
  std::string request_id;
  std::string describe() const { return "inc " + request_id; }
};
struct IncReply {
  bool applied = false;
  std::string describe() const { return applied ? "inc-ok" : "inc-failed"; }
};

// The store's durable state. Owned by the caller so checkers can read it after the run; it
// survives crashes of replicas (the store itself is not a fault target).
struct StoreState {
  int64_t counter = 0;
  std::set<std::string> applied_ids;
  int64_t requests_seen = 0;
};

struct ClientOptions {
  double rate_per_s = 5;
  int64_t timeout_us = 100'000;
  int max_attempts = 3;
  int64_t stop_at_local_us = 0;  // no new operations at or after this local time
};

Task<void> store_main(Runtime& rt, Rpc& rpc, StoreState& state, Fixes fixes);
Task<void> replica_main(Runtime& rt, Rpc& rpc, int64_t store_timeout_us);
Task<void> client_main(Runtime& rt, Rpc& rpc, Recorder& history, ClientOptions options);

}  // namespace fl::demo
