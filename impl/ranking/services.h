// The ingest chain of seed 004 part 1: producers record a business fact and an outbox row, a relay
// sends the event to an ingest replica, which validates the contract (004:L203 first layer) and
// appends accepted events to the pre-normalization log (004:L141); normalizers map hints to one
// topic_id through the topic service (004:L70-78) and expand scopes (004:L142) into the log keyed
// by topic_id + scope_id (004:L158).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "impl/ports/history.h"
#include "impl/ports/log.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"
#include "impl/ranking/contract.h"
#include "impl/ranking/fixes.h"

namespace fl::ranking {

struct ProducerOptions {
  std::string service;  // search-service | post-service | comment-service
  std::string event_type;
  double events_per_s = 5;
  int64_t stop_at_us = 0;
  int topics = 20;
  int hot_percent = 0;  // events on t_1
  int alias_percent = 20;
  int unmapped_percent = 5;
  int lowconf_percent = 5;
  int actors = 50;
  int repeat_actor_percent = 10;                  // the previous actor again (004:L6)
  int invalid_percent = 5;                        // missing field, impossible time, forged source, bad scope
  int replay_percent = 5;                         // the same event sent again
  int late_percent = 10;                          // event time up to 20 min in the past
  int future_percent = 0;                         // event time up to max_future_ms ahead (still valid)
  int64_t stall_from_us = 0, stall_until_us = 0;  // the relay sends nothing in between (a source stops)
  std::vector<std::string> ingest;                // ingest replicas
  int64_t relay_interval_us = 200'000;
  int64_t rpc_timeout_us = 300'000;
};

// Generates events, keeps them with their outbox rows, and relays the outbox (the history records
// one `emit` per event: ok once its fact is committed).
Task<void> run_producer(Runtime& rt, Rpc& rpc, Sql& sql, Recorder& history, ProducerOptions o);

struct IngestRequest {
  std::string payload;
  std::string describe() const { return "ingest"; }
};
struct IngestReply {
  std::string status;  // accepted | rejected | error
  std::string describe() const { return status; }
};

// The contract validator (004:L203): a reject is recorded with its reason before it is answered.
class IngestService {
 public:
  IngestService(Runtime& rt, Sql& sql, Log& log, BoardConfig cfg);
  Task<void> run(Rpc& rpc, const std::string& name);

 private:
  Task<MessagePtr> handle(const IngestRequest& r);
  std::string invalid_reason(const Event& e) const;
  Runtime& rt_;
  Sql& sql_;
  std::unique_ptr<LogProducer> producer_;
  BoardConfig cfg_;
  std::set<std::string> seen_;  // obvious replays (004:L203): event ids this replica appended
};

struct NormalizeRequest {
  std::string hint;
  std::string describe() const { return "normalize " + hint; }
};
struct NormalizeReply {
  std::string status;  // mapped | low_confidence | unmapped
  std::string topic_id;
  int64_t mapping_version = 1;
  int64_t mapping_epoch = 1;
  std::string describe() const { return status + " " + topic_id; }
};

// The topic service: mapping version 1 (activation epoch 1) maps t_i and its aliases a<i>x, a<i>y
// to t_i (i <= topics); lc-* is low confidence; anything else is unmapped.
NormalizeReply normalize_hint(const std::string& hint, int topics);
Task<void> run_topic_service(Runtime& rt, Rpc& rpc, int topics);

// The keyed copy of stable record `rec` (event `e`) for one scope (004:L142): the event's id,
// source, type, time, actor and content, its topic under `mapping` and `epoch`, the scope with its
// derivation rule version, and the source coordinates every later stage carries.
Event keyed_copy(const Event& e, const std::string& topic, const std::string& mapping, const std::string& epoch,
                 const std::string& scope, int scope_rule_version, const LogRecord& rec);

struct NormalizerOptions {
  BoardConfig cfg;
  int64_t rpc_timeout_us = 200'000;
  // Mapping switches (control.h): each scope copy carries the mapping_version +
  // mapping_activation_epoch its scope's context row holds when the copy is made (004:L140, L142),
  // read from the DB for every copy; without a context row, the initial mapping. Both mappings map
  // hints the same way (the switch is judged by its stamps, docs/systems/ranking.md).
  bool scope_control = false;
  // Topic merges (merge.h): the scope's context and cutover rows decide each copy's topic and stamps,
  // read from the DB for every copy; a copy its cutover holds is retried until the cutover ends.
  bool merges = false;
};
Task<void> run_normalizer(Runtime& rt, Rpc& rpc, Sql& sql, Log& log, NormalizerOptions o);

}  // namespace fl::ranking
