// Trace: every scheduling decision, delivery, drop, fault and user event of a run, folded into a
// running 64-bit fingerprint.
//
// Contract
// - The fingerprint is always maintained (cheaply: numbers only on the hot path, a stable hash of
//   the detail text for the rest). Same scenario + same seed => same fingerprint, in any process.
// - Events are kept in memory only when recording is on (for export, `explain` and
//   `check-determinism`); recording never changes the fingerprint. Annotations (a judge's verdict
//   marked on the timeline) are kept but never folded: the fingerprint is the world's alone.
// - Export: JSON lines (one event per line, with the fingerprint after it) and the Chrome/Perfetto
//   trace-event format (one track per node, one thread per process).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/hash.h"

namespace fl::sim {

enum class TraceKind : uint8_t {
  kResume,     // a coroutine of a process resumed
  kAction,     // a world action ran (workload arrival, scheduled fault, timer callback)
  kSend,       // a message left a process
  kDeliver,    // a message reached a process
  kDrop,       // a message was lost (drop fault, partition, dead or reset receiver)
  kDuplicate,  // the network duplicated a message
  kFault,      // a fault was injected or healed
  kProcess,    // a process booted, crashed, restarted, paused, resumed
  kUser,       // a note from service code or a checker
  kOp,         // a client operation was invoked or completed (history)
  kViolation,  // a property failed
  kObserve,    // an observation point: a command a Redis server executed, a statement an SQL
               // server committed (what the judges read; never written by service code)
};
const char* trace_kind_name(TraceKind k);

struct TraceEvent {
  int64_t time_us = 0;
  TraceKind kind = TraceKind::kUser;
  std::string node;     // may be empty for world-level events
  std::string process;  // may be empty
  std::string detail;
  uint64_t fingerprint = 0;  // the running fingerprint after this event
};

class Trace {
 public:
  explicit Trace(bool recording) : recording_(recording) {}

  uint64_t fingerprint() const { return fingerprint_; }
  uint64_t event_count() const { return count_; }
  bool recording() const { return recording_; }

  // Hot path: folds numbers only. `a`/`b` identify the event (e.g. process index, incarnation).
  void fold(int64_t time_us, TraceKind kind, uint64_t a, uint64_t b) {
    fingerprint_ = combine(
        combine(combine(fingerprint_, static_cast<uint64_t>(time_us)), (static_cast<uint64_t>(kind) << 32) ^ a), b);
    ++count_;
  }
  // Folds and, when recording, keeps the event. Names and detail enter the fingerprint.
  void record(int64_t time_us, TraceKind kind, std::string_view node, std::string_view process,
              std::string_view detail);
  // Keeps the event when recording, and folds nothing: a note about the run that is not part of
  // it (a judge's verdict marked on the timeline), so judging differently never changes a
  // fingerprint.
  void annotate(int64_t time_us, TraceKind kind, std::string_view node, std::string_view process,
                std::string_view detail) {
    if (recording_) keep(time_us, kind, node, process, std::string(detail));
  }
  // record() of a detail given as its stable_hash (e.g. hashed piece by piece with StableHasher,
  // without building the text): the same fingerprint; `detail()` renders the text only when
  // recording. REQUIRES: detail_hash == stable_hash(detail()).
  template <typename DetailFn>
  void record_hashed(int64_t time_us, TraceKind kind, std::string_view node, std::string_view process,
                     uint64_t detail_hash, DetailFn&& detail) {
    fold_recorded(time_us, kind, names_hash(node, process), detail_hash, node, process, std::forward<DetailFn>(detail));
  }
  // Variant of fold() that also keeps a lazily rendered event when recording.
  template <typename DetailFn>
  void fold_recorded(int64_t time_us, TraceKind kind, uint64_t a, uint64_t b, std::string_view node,
                     std::string_view process, DetailFn&& detail) {
    fold(time_us, kind, a, b);
    if (recording_) keep(time_us, kind, node, process, detail());
  }

  const std::vector<TraceEvent>& events() const { return events_; }

  void write_jsonl(std::ostream& out) const;
  void write_perfetto(std::ostream& out) const;

 private:
  void keep(int64_t time_us, TraceKind kind, std::string_view node, std::string_view process, std::string detail);
  // What record() folds for an event's node and process names.
  static uint64_t names_hash(std::string_view node, std::string_view process) {
    return stable_hash(node) ^ (stable_hash(process) << 1);
  }

  bool recording_;
  uint64_t fingerprint_ = 0x6661756c746c696eULL;  // "faultlin"
  uint64_t count_ = 0;
  std::vector<TraceEvent> events_;
};

// Escapes `s` for use inside a JSON string literal.
std::string json_escape(std::string_view s);
// Renders a fingerprint as 16 hex digits.
std::string hex64(uint64_t v);

}  // namespace fl::sim
