// FaultLog: every fault the world injected, as structured records, so that a judge can allow a
// degraded, alerted or indeterminate outcome only where an actual fault explains it (never on
// the service's own word), and can say which fault that was.
//
// Contract
// - The world appends a record for each process crash, restart, pause and resume, each link
//   partition, heal and clog, each connection reset, each clock jump and drift change, and each
//   message the network lost (dropped by the link, blocked by a partition, or sent to a dead
//   incarnation / reset connection). Storage and Redis fault injectors append their own
//   (kStorageError, kRedisError, kEviction) through World::record_fault; the network records each
//   late duplicate it injects (kLateDuplicate).
// - Causality: a record of what a fault did to one message, call or command carries `cause`, the
//   client operation (history id) that message worked for (World::current_cause: an operation's
//   cause flows through every event, message, reply and spawned task that follows from it), and
//   `message`, what was hit. The network records each message a partition, a drop, a dead
//   receiver or a reset lost (kMessageLost), each it held back (kDelayed: a clog), each call a
//   crash or reset broke (kCallBroken); a pause records the operations whose events it held
//   (kDelayed, one per operation); the Redis and SQL servers record the command an error reply or
//   an I/O error hit. A fault that touched nothing leaves no such record: a clog of an idle link,
//   a partition of nodes that never talk, a 0 ms pause, a 0 ppm drift, a 0 ms jump.
// - Records are in world-time order. Appending never changes a run (no randomness, no trace).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fl::sim {

enum class FaultKind : uint8_t {
  kCrash,          // process `process` on `node` died
  kRestart,        // ... booted again
  kPause,          // ... froze for duration_us
  kPartition,      // link node -> peer_node blocked (both ways unless one_way)
  kHeal,           // link node <-> peer_node healed ("" nodes: every link)
  kClog,           // link node -> peer_node delayed for duration_us
  kReset,          // process's connections reset (its calls end indeterminate)
  kClockJump,      // node's clock jumped by value
  kClockDrift,     // node's clock drifts value ppm from now on
  kMessageLost,    // a message from process to peer_process was lost
  kStorageError,   // the storage of `node` failed an I/O (value: the SQLite error code)
  kRedisError,     // the Redis node refused a command with an error reply (duration_us > 0: a
                   // refusal window began, detail "refusal window: busy|loading|oom|readonly")
  kEviction,       // the Redis node evicted key `detail` under its maxmemory policy (value: db)
  kLateDuplicate,  // a request of `process` was delivered again to `peer_process`, late (value: delay us)
  kDelayed,        // a message from process to peer_process (a clog) or the events of operation
                   // `cause` at `process` (a pause) were held back value us (detail: "clog" | "pause")
  kCallBroken,     // an outstanding call of `process` to `peer_process` ended indeterminate (a crash
                   // or reset broke its connection; detail says which) or was refused (no live server)
};
const char* fault_kind_name(FaultKind k);

struct FaultRecord {
  int64_t time_us = 0;
  FaultKind kind = FaultKind::kCrash;
  std::string node, process;            // where it happened
  std::string peer_node, peer_process;  // the other end (links, lost messages)
  int64_t duration_us = 0;              // pause, clog, partition when known
  int64_t value = 0;                    // clock jump us, drift ppm, error code
  bool one_way = false;
  std::string detail;   // eviction: the evicted key; lost/delayed/broken: why
  uint64_t cause = 0;   // the client operation whose message/command it hit (0: none)
  std::string message;  // the message, call or command it hit ("service: text")
  std::string describe() const;
};

using FaultLog = std::vector<FaultRecord>;

}  // namespace fl::sim
