// Scenario: one run's whole configuration as a value — what a scenario file says.
//
// A Scenario plus a seed determines a run completely (same scenario + same seed => same trace
// fingerprint). It can be printed back to YAML (so `shrink` can write the minimal one) and has a
// stable digest (the report's "config digest"). Defaults make a minimal file a few lines long.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/params.h"

namespace fl {

struct LinkSettings {
  int64_t latency_min_us = 200;
  double latency_mean_us = 300;
  double drop_probability = 0;
  double duplicate_probability = 0;
  double reorder_probability = 0;
  bool fifo = true;
  // The transport is at-least-once (a proxy that re-sends, a retrying client library): the
  // late-duplicate fault kind is allowed. Changes nothing by itself.
  bool at_least_once = false;
  bool operator==(const LinkSettings&) const = default;  // field-wise (round-trip tests)
};

struct StorageSettings {
  std::string journal_mode = "wal";  // delete | truncate | wal | memory
  std::string synchronous = "full";  // off | normal | full
  bool torn_writes = false;          // a crash keeps a random subset of unsynced writes
  double io_error_probability = 0;
  int64_t sync_latency_us = 2000;
  // A disk that lies: fsync returns with the data only in a volatile cache, durable
  // write_cache_flush_ms later (sim/storage/sim_vfs.h). Voids durability across power loss.
  bool volatile_write_cache = false;
  int64_t write_cache_flush_ms = 1000;
  bool operator==(const StorageSettings&) const = default;  // field-wise (round-trip tests)
};

struct RedisSettings {
  std::string persistence = "aof-everysec";  // none | aof-everysec | snapshot
  int64_t snapshot_interval_ms = 60000;
  // Memory limit (bytes of the engine's used-memory estimate, 0 = none) and Redis 7.0's eviction
  // policy with its LRU/LFU sample size (sim/redis/eviction.cc); noeviction answers -OOM.
  int64_t maxmemory_bytes = 0;
  std::string maxmemory_policy = "noeviction";
  int maxmemory_samples = 5;
  bool operator==(const RedisSettings&) const = default;  // field-wise (round-trip tests)
};

struct Topology {
  int replicas = 2;
  int workers = 0;  // separate worker processes (0: workers run inside replicas)
  int clients = 4;
  RedisSettings redis;
  bool operator==(const Topology&) const = default;  // field-wise (round-trip tests)
};

struct WorkloadSpec {
  std::string kind;                                      // system-defined generator name
  double rate_per_s = 5;                                 // mean arrivals per second per client
  std::string distribution = "poisson";                  // poisson | uniform | burst
  std::map<std::string, std::string> params;             // generator-specific knobs (validated by the system)
  bool operator==(const WorkloadSpec&) const = default;  // field-wise (round-trip tests)
};

// One scheduled fault. `target` names a process, a node, or a pair "a|b" for links.
struct FaultSpec {
  int64_t at_ms = 0;
  std::string kind;  // crash | restart | crash-restart | pause | partition | partition-oneway |
                     // heal | clog | reset | clock-jump | clock-drift | io-error | ...
  std::string target;
  int64_t duration_ms = 0;                            // pause, partition, clog, crash-restart downtime
  int64_t value = 0;                                  // clock-jump delta_ms, clock-drift ppm
  bool operator==(const FaultSpec&) const = default;  // field-wise (round-trip tests)
};

// Random ("swarm") faults: each run draws which kinds are on and their rates from the seed.
struct SwarmSpec {
  bool enabled = false;
  std::vector<std::string> kinds;  // empty = every kind the system allows
  double faults_per_s = 0.5;       // mean rate of injected faults while active
  int64_t max_pause_ms = 10000;
  int64_t max_clock_jump_ms = 5000;
  int64_t max_downtime_ms = 5000;
  bool timing_aware = true;                           // cluster durations around the system's critical ones
  bool patience = false;                              // draw the clients' timeouts and retries per seed
  bool operator==(const SwarmSpec&) const = default;  // field-wise (round-trip tests)
};

struct Expectation {
  bool pass = true;
  // When pass == false: the properties that must fail (never empty in a loaded file). Any other
  // property that fails is reported as a further finding, not as an unexpected result.
  std::vector<std::string> failing;
  // false: every property in `failing` must fail; true: at least one (exploratory spec sweeps,
  // where which defect a seed hits depends on the seed).
  bool any = false;
  // A saved counterexample's trace fingerprint: `replay` checks the run reproduces it exactly.
  // An outcome, not an input: not part of the digest.
  std::optional<uint64_t> fingerprint;
  bool operator==(const Expectation&) const = default;  // field-wise (round-trip tests)
};

// A pinned crash point: the process that makes the `effect`-th external effect (numbered over
// the service processes' calls, as `faultline sweep --crash-points` lists them) crashes right
// before or right after it and restarts `restart_after_ms` later. This is how a counterexample
// found by a crash-point sweep is saved as a replayable file.
struct CrashPointSpec {
  int64_t effect = 0;
  bool before = false;
  int64_t restart_after_ms = 1000;
  bool operator==(const CrashPointSpec&) const = default;
};

// A pinned pause point: the process that makes the `effect`-th external effect (numbered as for
// crash points) is paused right before or right after it for `duration_ms`, while everything else
// runs (`faultline sweep --pause-points` writes its findings with one).
struct PausePointSpec {
  int64_t effect = 0;
  bool before = false;
  int64_t duration_ms = 0;
  bool operator==(const PausePointSpec&) const = default;
};

// A pinned fail point: the call of the `effect`-th external effect (numbered as for crash points)
// is refused before it is sent, or its reply is lost after it ran (`faultline sweep --fail-points`
// writes its findings with one).
struct FailPointSpec {
  int64_t effect = 0;
  bool before = false;
  bool operator==(const FailPointSpec&) const = default;
};

struct Scenario {
  std::string name;
  std::string description;
  std::string system;
  std::string variant = "hardened";  // spec | hardened
  Topology topology;
  std::vector<WorkloadSpec> workload;
  LinkSettings network;
  StorageSettings storage;
  std::vector<FaultSpec> faults;
  // Faults added to a run without reordering it: scheduled on a tie-break stream of their own
  // (sim::World::inject_at), so the world runs exactly as without them until a fault acts. What
  // `faultline null-faults` writes (a 0 ppm drift, a 0 ms jump or pause, a clog of an idle link).
  std::vector<FaultSpec> extra_faults;
  SwarmSpec swarm;
  int64_t duration_ms = 20000;
  int64_t quiescent_tail_ms = 15000;    // faults healed, no new work: liveness is judged after it
  std::vector<std::string> properties;  // empty = every property of the system
  Expectation expect;
  std::vector<std::string> matrix_rows;
  std::map<std::string, std::string> params;  // system-specific settings (ttl overrides, ...)
  // `params` (and the workloads' params) typed and range-checked against the system's declaration
  // (harness/params.h); filled by the loader, or by with_config() for a scenario built in code.
  ParamValues config;
  std::optional<CrashPointSpec> crash_point;
  // One pause point (YAML `pause_point:` a mapping) or a pause pair (a list of two or more: the
  // later ones at effects made while the earlier process is paused; `sweep --meanwhile`).
  std::vector<PausePointSpec> pause_points;
  std::optional<FailPointSpec> fail_point;
  // Named fixes removed from `hardened` (ids from the system's fix registry; only with
  // variant: hardened). `faultline fixes SYSTEM` lists them.
  std::vector<std::string> without;
  std::optional<uint64_t> seed;                      // saved counterexamples carry their seed
  std::string source_file;                           // where it was loaded from (not part of the digest)
  bool operator==(const Scenario&) const = default;  // field-wise (round-trip tests)
};

// Stable digest of everything that influences a run: not the seed, the source file, the name,
// the description, the expectation or the matrix rows.
uint64_t scenario_digest(const Scenario& s);

}  // namespace fl
