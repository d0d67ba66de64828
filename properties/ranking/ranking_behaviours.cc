#include "properties/ranking/ranking_behaviours.h"

#include <algorithm>
#include <set>

#include "properties/common/fault_budget.h"
#include "properties/ranking/checks.h"

namespace fl::ranking::props {

namespace {

using Names = std::set<std::string>;

constexpr const char* kGlobalScope = "GLOBAL|ALL|ALL|ALL";  // 004:L211: the explicit global scope

bool starts(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The chain's own processes (the adapter's names): normalizers, aggregators, run coordinators,
// Top K workers and publishers.
bool chain_process(const std::string& p) {
  for (const char* prefix : {"norm-", "agg-", "coord-", "topk-", "pub-"}) {
    if (starts(p, prefix)) return true;
  }
  return false;
}

void producers(const RankingRun& run, Names& out) {
  for (const EmitOp& e : run.emits) {
    if (e.outcome == Outcome::kInfo) out.insert("emit answered indeterminate");
  }
  std::set<std::string> seen;
  for (const LogRecordObs& r : run.stable) {
    // An event is its (sourceService, eventId) (RANK-4).
    const auto& f = r.fields();
    auto source = f.find("sourceService"), id = f.find("eventId");
    if (id == f.end()) continue;
    const std::string key = (source == f.end() ? "" : source->second) + ":" + id->second;
    if (!seen.insert(key).second) out.insert("event appended twice to the stable log");
  }
}

// A committed head UPDATE with five parameters switches the head to a new generation: the
// recovery from a corrupted checkpoint (004:L320); with four it bumps the version within one.
void head_writes(const RankingRun& run, Names& out) {
  for (const SqlCommit& c : run.commits) {
    if (c.in_doubt) out.insert("DB commit answered an I/O error at COMMIT");
    if (!c.ok) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (!head_key_moved(s).empty() && s.params.size() == 5 && s.changes > 0) {
        out.insert("window head switched to a recovery generation");
      }
    }
  }
}

// Whether a statement writes an aggregator's state: a head, a version row or a checkpoint.
bool aggregator_write(const SqlStatementObs& s) {
  return !head_key_moved(s).empty() || starts(s.sql.str(), "INSERT INTO topic_window_metric_version") ||
         s.sql.str().find("agg_checkpoint") != std::string::npos;
}

// A transaction the server rolled back because the statement at `refused_index` found its expected
// change missing or broke a constraint: a fenced aggregator write (a stale owner's flush) or the
// publish pointer's CAS (a lost race).
void refusals(const RankingRun& run, Names& out) {
  for (const SqlCommit& c : run.commits) {
    if (c.refused_index < 0 || c.refused_index >= static_cast<int>(c.statements.size())) continue;
    const SqlStatementObs& s = c.statements[c.refused_index];
    if (aggregator_write(s)) out.insert("stale owner's flush refused");
    if (starts(s.sql.str(), "UPDATE ranking_publish_pointer")) out.insert("publish CAS lost to a newer pointer");
  }
}

struct OwnerMove {
  int64_t time_us = 0;
  std::string from;  // the aggregator that flushed the partition before
};

// Every flush starts with its source-offset cut (the keyed partition its second parameter): a
// committed cut of a partition by another client than the last one is an ownership change.
std::vector<OwnerMove> owner_moves(const RankingRun& run) {
  std::vector<OwnerMove> moves;
  std::map<std::string, std::string> owner;  // keyed partition -> the client that flushed it last
  for (const SqlCommit& c : run.commits) {
    if (!c.ok || c.statements.empty()) continue;
    const SqlStatementObs& s = c.statements[0];
    if (!starts(s.sql.str(), "INSERT OR IGNORE INTO source_offset_cut") || s.params.size() < 2) continue;
    std::string& last = owner[s.params[1]];
    if (!last.empty() && last != c.client) moves.push_back(OwnerMove{c.time_us, last});
    last = c.client;
  }
  return moves;
}

// An ownership change, and the former owner back after it (restarted, or resumed from a pause):
// the stale owner whose writes the fences must refuse (004:L97-98, L319-320). A process's own
// pause or downtime is a fault span with no peer; one still open at the run's end never returns.
void ownership(const RankingRun& run, Names& out) {
  const std::vector<OwnerMove> moves = owner_moves(run);
  if (!moves.empty()) out.insert("keyed partition flushed by a second aggregator");
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  for (const fl::props::FaultSpan& span : budget.spans()) {
    if (!span.peer.empty() || !chain_process(span.place) || span.to_us <= span.from_us) continue;
    out.insert("chain process paused or crashed");
    for (const OwnerMove& m : moves) {
      if (m.from == span.place && span.to_us > m.time_us && span.to_us < run.end_us) {
        out.insert("ownership change followed by the old owner's return");
      }
    }
  }
}

void watermarks(const RankingRun& run, Names& out) {
  if (!run.wm.side.empty()) out.insert("late event sent to the side output");
  for (const IdleRow& r : run.wm.idle) {
    if (r.rejoin_us >= 0) out.insert("idle partition rejoined");
  }
  if (!run.wm.archive.empty()) out.insert("window archived and its dedup state purged");
  if (!run.sketch.shards.empty()) out.insert("hot topic salted into shards");
}

// A control transaction that moved a scope's context version between a run's BUILDING and SEALED
// commits (004:L104, L256).
void context_moves(const RankingRun& run, Names& out) {
  const RunTimeline t = run_timeline(run);
  std::map<std::string, std::string> scope_of;
  for (const RunRow& r : run.board.runs) scope_of[r.run_id] = r.scope_id;
  for (const auto& [run_id, from] : t.building) {
    auto sealed = t.sealed.find(run_id);
    const size_t to = sealed == t.sealed.end() ? run.commits.size() : sealed->second;
    for (size_t i = from + 1; i < to && i < run.commits.size(); ++i) {
      if (!run.commits[i].ok) continue;
      for (const SqlStatementObs& s : run.commits[i].statements) {
        if (!context_version_move(s).empty() && context_version_move(s) == scope_of[run_id]) {
          out.insert("scope context moved while a run was building");
          return;
        }
      }
    }
  }
}

void publishing(const RankingRun& run, Names& out) {
  const BoardObs& b = run.board;
  int64_t first_pointer_us = INT64_MAX;
  for (const RedisWrite& w : b.redis_writes) {
    if (w.ok && w.argv.size() >= 2 && (w.argv[0] == "SET" || w.argv[0] == "set") &&
        starts(w.argv[1], "ranking:pointer:")) {
      first_pointer_us = std::min(first_pointer_us, w.time_us);
    }
  }
  for (int64_t loss_us : b.redis_losses) {
    if (loss_us > first_pointer_us) out.insert("Redis lost a cached pointer");
  }
  for (const RunRow& r : b.runs) {
    if (!r.degraded_policy.empty()) out.insert("degraded run");
  }
  if (!b.replay_runs.empty()) out.insert("replay run");
  for (const ReconciliationRow& r : b.reconciliations) {
    if (r.status != "MATCH") out.insert("reconciliation found DIFF, GAP or REFUSED");
  }
  for (const LayerReportRow& r : b.layer_reports) {
    if (r.status != "MATCH" && r.status != "CONTINUOUS") out.insert("reconciliation found DIFF, GAP or REFUSED");
  }
}

// Risk actions as the DB holds them, and what the viewers were answered (004:L204-240, L279).
void risk(const RankingRun& run, Names& out) {
  const RiskObs& r = run.board.risk;
  std::vector<int64_t> blocks_from_us;
  for (const RiskActionRow& a : r.actions) {
    out.insert(a.scope_id == kGlobalScope ? "global risk action" : "scope risk action");
    if (a.state == "LIFTED" || a.state == "EXPIRED") out.insert("block lifted or expired");
    if (a.state == "BLOCK") blocks_from_us.push_back(a.from_us);
  }
  const int64_t ttl_us = run.board.params.max_safe_ttl_us;
  for (const ViewOp& v : r.views) {
    const std::string src = result_field(v.result, "src");
    if (src == "not-modified") out.insert("view answered not modified");
    if (src != "hit") continue;
    for (int64_t from_us : blocks_from_us) {
      if (from_us <= v.invoke_us && v.invoke_us - from_us <= ttl_us)
        out.insert("CDN hit within the safe TTL of a block");
    }
  }
}

// Topic merges (004:L84-88): old normalizer output arriving after its scope's cutover, and late
// events (old event times) on the new chain's side of a vector.
void merges(const RankingRun& run, Names& out) {
  if (!run.merges.enabled) return;
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> moves;  // scope -> (commit time, epoch)
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (const std::optional<MergeCas> m = merge_cas(s)) moves[m->scope].push_back({c.time_us, m->epoch});
    }
  }
  for (const LogRecordObs& r : run.keyed) {
    const auto& f = r.fields();
    auto scope = f.find("scopeId"), epoch = f.find("mappingEpoch");
    if (scope == f.end() || epoch == f.end() || !moves.count(scope->second)) continue;
    int64_t current = 1;
    for (const auto& [at_us, e] : moves.at(scope->second)) current = at_us <= r.append_us ? e : current;
    if (std::stoll("0" + epoch->second) < current)
      out.insert("keyed copy appended with an older mapping epoch than its scope's");
  }
  for (const model::MergeCutover& c : active_cutovers(run)) {
    for (const LogRecordObs& r : run.stable) {
      const auto& f = r.fields();
      auto hint = f.find("topicHints"), t = f.find("eventTime"), at = f.find("receivedAt");
      if (hint == f.end() || t == f.end() || at == f.end() || model::main_topic(hint->second, run.config) != c.source)
        continue;
      auto v = c.next_offset.find(r.partition);
      if (r.offset < (v == c.next_offset.end() ? 0 : v->second)) continue;
      const auto scopes = model::scopes_of(f, run.config);
      if (std::find(scopes.begin(), scopes.end(), c.scope) == scopes.end()) continue;
      if (std::stoll("0" + t->second) + 60'000 < std::stoll("0" + at->second)) {
        out.insert("late source-topic event past a merge's handover vector");
      }
    }
  }
  for (const CutoverRow& c : run.merges.cutovers) {
    if (c.state == "ABORTED") out.insert("merge scope cutover aborted by a moved context");
  }
}

}  // namespace

std::vector<std::string> ranking_behaviours(const RankingRun& run) {
  Names out;
  producers(run, out);
  head_writes(run, out);
  refusals(run, out);
  ownership(run, out);
  watermarks(run, out);
  context_moves(run, out);
  publishing(run, out);
  risk(run, out);
  merges(run, out);
  return {out.begin(), out.end()};
}

}  // namespace fl::ranking::props
