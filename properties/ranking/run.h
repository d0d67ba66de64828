// What the ranking judges see of a finished run: world observations only (the producers' history,
// the records and offsets of the two logs, the DB read back from its VFS, the SQL server's commit
// log, the world's fault log) and the scenario's constants. Never impl/'s state, the variant or the
// fix set.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "impl/ports/history.h"
#include "model/ranking/model.h"
#include "sim/fault_log.h"

namespace fl::ranking::props {

struct EmitOp {  // one producer `emit`: the event it recorded and whether its fact committed
  std::string process;
  std::string payload;
  int64_t invoke_us = 0;
  Outcome outcome = Outcome::kInfo;
};

struct LogRecordObs {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  std::string value;
};

struct HeadRow {
  std::string aggregate_key, topic_id, scope_id, window_type;
  int64_t window_start = 0;
  std::string metric_type;
  int64_t generation = 0, version = 0;
};

struct VersionRow {
  std::string aggregate_key;
  int64_t generation = 0, version = 0;
  model::Value value;
  std::string cut_ref, digest;
};

struct SqlStatementObs {
  std::string sql;
  std::vector<std::string> params;  // rendered: integers in decimal, text as is
  int64_t changes = 0;              // rows it changed (committed transactions only)
};
struct SqlCommit {
  int64_t time_us = 0;
  bool ok = false;
  std::string client;
  std::vector<SqlStatementObs> statements;
};

struct RankingRun {
  model::Config config;
  std::vector<EmitOp> emits;
  std::vector<LogRecordObs> stable, keyed;  // the pre-normalization log and the keyed log
  std::map<int32_t, int64_t> keyed_end;     // keyed partition -> log end offset
  bool db_read = false;
  std::vector<std::pair<std::string, std::string>> outbox;   // (event_id, status)
  std::vector<std::pair<std::string, std::string>> rejects;  // (payload, reason)
  std::vector<std::pair<int32_t, int64_t>> candidate_terms;  // stable (partition, offset)
  std::vector<HeadRow> heads;
  std::vector<VersionRow> versions;
  std::map<int32_t, int64_t> checkpoints;  // keyed partition -> next_offset
  std::vector<SqlCommit> commits;
  sim::FaultLog faults;
  int64_t end_us = 0;
  std::vector<std::string> chain;  // every process of the chain (for fault explanations)
};

// The value digest the seed stores with each version (004:L98), recomputed by the judge.
std::string value_digest(const model::Value& v);

}  // namespace fl::ranking::props
