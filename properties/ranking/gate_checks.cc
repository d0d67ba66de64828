// Publish gates beyond the pointer CAS: the completeness gate (RANK-10) and the isolation of replay
// runs (RANK-25). Both read the SQL server's commit log, the DB rows read back and the Redis
// server's writes only.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "model/ranking/board.h"
#include "properties/common/judge.h"
#include "properties/ranking/checks.h"

namespace fl::ranking::props {
namespace {

using fl::props::Judge;

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

bool is_publish(const SqlStatementObs& s) {
  return s.changes > 0 && starts(s.sql, "UPDATE ranking_snapshot SET status = 'PUBLISHED'") && s.params.size() >= 3;
}

// A committed write of source_status: (keyed partition, source, complete flag).
bool is_source_flag(const SqlStatementObs& s) {
  return s.changes > 0 && s.sql.find("INTO source_status") != std::string::npos && s.params.size() >= 3;
}

}  // namespace

std::string source_run_of(const BoardObs& b, const std::string& run_id) {
  for (const ReplayRunRow& r : b.replay_runs) {
    if (r.run_id == run_id) return r.source_run_id;
  }
  return run_id;
}

namespace {

// Snapshot id -> run id of every snapshot of a replay run.
std::map<std::string, std::string> replay_snapshots(const BoardObs& b) {
  std::set<std::string> replay;
  for (const ReplayRunRow& r : b.replay_runs) replay.insert(r.run_id);
  std::map<std::string, std::string> out;
  for (const SnapshotRow& s : b.snapshots) {
    if (replay.count(s.run_id)) out[s.snapshot_id] = s.run_id;
  }
  return out;
}

// 004:L325, L265: the replay snapshots published under a promotion authorization that matched them
// at the commit: a committed publish that used up an authorization (status USED, read back) naming
// the snapshot's scope and replay run, a watermark range holding its input watermark, its manifest
// digest, its rule epoch and context version, the pointer version the same commit moved from, and a
// validity holding the commit time. A publish under an authorization that does not match fails.
std::set<std::string> promoted_snapshots(Judge& j, const RankingRun& run) {
  const BoardObs& b = run.board;
  std::set<std::string> out;
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    std::string auth, snap;
    int64_t from_version = -1;
    for (const SqlStatementObs& s : c.statements) {
      if (s.changes == 0) continue;
      if (starts(s.sql, "UPDATE promotion_authorization SET status = 'USED'") && !s.params.empty()) auth = s.params[0];
      if (starts(s.sql, "UPDATE ranking_snapshot SET status = 'PUBLISHED'") && s.params.size() >= 2) snap = s.params[1];
      if (starts(s.sql, "UPDATE ranking_publish_pointer") && s.params.size() >= 4)
        from_version = std::stoll(s.params[3]);
    }
    if (auth.empty()) continue;
    auto a = std::find_if(b.promotions.begin(), b.promotions.end(),
                          [&](const PromotionRow& x) { return x.auth_id == auth; });
    auto sn = std::find_if(b.snapshots.begin(), b.snapshots.end(),
                           [&](const SnapshotRow& x) { return x.snapshot_id == snap; });
    const bool matched = a != b.promotions.end() && sn != b.snapshots.end() && a->status == "USED" &&
                         a->scope_id == sn->scope_id && a->replay_run_id == sn->run_id &&
                         a->watermark_from <= sn->watermark && sn->watermark <= a->watermark_to &&
                         a->manifest_digest == sn->manifest_digest && a->rule_epoch == sn->rule_epoch &&
                         a->expected_ctx_version == sn->ctx_version && a->expected_pointer_version == from_version &&
                         a->valid_from_us <= c.time_us && c.time_us < a->valid_until_us;
    j.expect(matched, [&] {
      return c.client + " published " + snap + " at " + std::to_string(c.time_us) + " under authorization " + auth +
             (a == b.promotions.end()
                  ? " that does not exist"
                  : " (" + a->status + ", run " + a->replay_run_id + ", context v" +
                        std::to_string(a->expected_ctx_version) + ", pointer v" +
                        std::to_string(a->expected_pointer_version) + ", valid " + std::to_string(a->valid_from_us) +
                        ".." + std::to_string(a->valid_until_us) + ") that does not match it");
    });
    if (matched) out.insert(snap);
  }
  return out;
}

// The official tables of part 2 a replay run must never be written into (004:L101).
bool official_table(const std::string& sql) {
  for (const char* t : {"calculation_run", "run_partition_cut", "run_input_manifest", "run_candidate"}) {
    if (sql.find(std::string("INTO ") + t) != std::string::npos || starts(sql, (std::string("UPDATE ") + t).c_str()) ||
        sql.find(std::string("DELETE FROM ") + t) != std::string::npos) {
      return true;
    }
  }
  return false;
}

void check_replay_commits(Judge& j, const RankingRun& run, const std::set<std::string>& replay_runs,
                          const std::map<std::string, std::string>& replay_snaps,
                          const std::set<std::string>& promoted) {
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (s.changes == 0) continue;
      if (starts(s.sql, "UPDATE ranking_publish_pointer") && !s.params.empty()) {
        j.expect(!(replay_snaps.count(s.params[0]) && !promoted.count(s.params[0])),
                 [&] { return c.client + " moved the pointer to snapshot " + s.params[0] + " of a replay run"; });
      } else if (official_table(s.sql)) {
        for (const std::string& p : s.params) {  // uncounted failures: left by hand
          if (replay_runs.count(p)) fail_verdict(j.v, c.client + " wrote replay run " + p + " into an official table");
        }
      }
    }
  }
}

// The scope a cached key names: "ranking:pointer:<S>", "ranking:snapshot:<S>:<snapshot_id>" (a
// scope id has no ':'), "ranking:restore:<S>".
std::string key_scope(const std::string& key) {
  const size_t a = key.find(':', 8);
  if (a == std::string::npos) return "";
  const size_t b = key.find(':', a + 1);
  return key.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
}

// Redis: a pointer key of S holds a snapshot of S; a snapshot key of S names a snapshot of S.
void check_redis_scopes(Judge& j, const BoardObs& b, const std::map<std::string, std::string>& snap_scope) {
  for (const RedisWrite& w : b.redis_writes) {
    if (w.argv.size() < 3 || (w.argv[0] != "SET" && w.argv[0] != "set")) continue;
    const std::string& key = w.argv[1];
    std::string id;
    if (starts(key, "ranking:pointer:")) id = w.argv[2].substr(w.argv[2].find('|') + 1);
    if (starts(key, "ranking:snapshot:")) id = key.substr(key.find(':', 17) + 1);
    if (id.empty()) continue;
    auto s = snap_scope.find(id);
    j.expect(s != snap_scope.end() && s->second == key_scope(key), [&] {
      return w.client + " cached " + key + " = " + w.argv[2] + ": snapshot " + id + " is of scope '" +
             (s == snap_scope.end() ? "?" : s->second) + "'";
    });
  }
}

// The context version of each scope over time, from the committed control transactions.
struct ContextTimeline {
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> changes;  // scope -> (time, version from then)
  int64_t at(const std::string& scope, int64_t t) const {
    int64_t v = 0;
    auto it = changes.find(scope);
    if (it == changes.end()) return v;
    for (const auto& [time, version] : it->second) {
      if (time <= t) v = version;
    }
    return v;
  }
};

ContextTimeline context_timeline(const RankingRun& run) {
  ContextTimeline t;
  std::map<std::string, int64_t> version;
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (s.changes == 0) continue;
      std::string scope;
      if (starts(s.sql, "INSERT OR IGNORE INTO ranking_scope_context") && !s.params.empty()) {
        scope = s.params[0];
        version[scope] = 1;
      } else if (std::string moved = context_version_move(s); !moved.empty()) {
        scope = std::move(moved);  // rule, mapping, window configuration and risk transactions alike
        ++version[scope];
      }
      if (!scope.empty()) t.changes[scope].emplace_back(c.time_us, version[scope]);
    }
  }
  return t;
}

// What a candidate list must hold: "ctx=<v>|run=<run>|topic:score;..." of a SEALED run of the
// scope made under context v, with exactly that run's stored candidates.
std::string expected_candidates(const BoardObs& b, const std::string& scope, const std::string& value) {
  // A run id holds '|' (it starts with the scope id); the topic list after the last '|' does not.
  const size_t a = value.find("|run="), c = value.rfind('|');
  if (a == std::string::npos || c < a + 5) return "malformed";
  const std::string run_id = value.substr(a + 5, c - a - 5);
  auto r = std::find_if(b.runs.begin(), b.runs.end(), [&](const RunRow& x) { return x.run_id == run_id; });
  if (r == b.runs.end() || r->status != "SEALED" || r->scope_id != scope)
    return "a SEALED run " + run_id + " of " + scope;
  std::map<std::string, int64_t> cands;
  for (const CandidateRow& x : b.candidates) {
    if (x.run_id == run_id && x.scope_id == scope) cands[x.topic_id] = x.score;
  }
  std::string want = "ctx=" + std::to_string(r->ctx_version) + "|run=" + run_id + "|";
  bool first = true;
  for (const auto& [topic, score] : cands) {
    want += (first ? "" : ";") + topic + ":" + std::to_string(score);
    first = false;
  }
  return want;
}

int64_t value_context(const std::string& value) { return std::strtoll(value.c_str() + 4, nullptr, 10); }

}  // namespace

// RANK-40, RANK-14 (004:L317): replaying the Redis server's writes, every candidate list that
// becomes live (a SET of `ranking:candidates:S`, or a RENAME onto it) holds exactly the stored
// candidates of a SEALED run of S made under the context it names; a rename onto the live key comes
// only from the isolated rebuild namespace of S (`ranking:candidates-rebuild:S:*`), whose content was
// written there, and the scope's context version was the pinned one both when the rebuilt batch was
// written and when it replaced the live list (a context change in between discards the batch).
Verdict check_candidate_cache(const RankingRun& run) {
  Judge j("rank-candidate-cache", {"RANK-40", "RANK-14"},
          "every live Redis candidate list holds the stored candidates of a SEALED run of its scope "
          "under the context it names; a rebuilt list replaces it only from the isolated rebuild "
          "namespace of that scope, under a context unchanged since the batch was written");
  const BoardObs& b = run.board;
  const ContextTimeline ctx = context_timeline(run);
  std::map<std::string, std::pair<int64_t, std::string>> isolated;  // rebuild key -> (written at, value)
  size_t loss = 0;
  for (const RedisWrite& w : b.redis_writes) {
    while (loss < b.redis_losses.size() && b.redis_losses[loss] <= w.time_us) {
      ++loss;
      isolated.clear();
    }
    if (!w.ok || w.argv.size() < 2) continue;
    const std::string cmd = w.argv[0], key = w.argv[1];
    if ((cmd == "DEL" || cmd == "del")) isolated.erase(key);
    if ((cmd == "SET" || cmd == "set") && starts(key, "ranking:candidates-rebuild:") && w.argv.size() >= 3) {
      isolated[key] = {w.time_us, w.argv[2]};
    }
    std::string scope, value;
    if ((cmd == "SET" || cmd == "set") && starts(key, "ranking:candidates:") && w.argv.size() >= 3) {
      scope = key.substr(19);
      value = w.argv[2];
    }
    if ((cmd == "RENAME" || cmd == "rename") && w.argv.size() >= 3 && starts(w.argv[2], "ranking:candidates:")) {
      scope = w.argv[2].substr(19);
      auto src = isolated.find(key);
      const bool rebuilt = starts(key, ("ranking:candidates-rebuild:" + scope + ":").c_str()) && src != isolated.end();
      j.expect(rebuilt, [&] {
        return w.client + " renamed " + key + " onto the live candidate list of " + scope +
               ": not a rebuild of that scope's isolated namespace";
      });
      if (!rebuilt) continue;
      value = src->second.second;
      const int64_t pinned = value_context(value);
      j.expect(ctx.at(scope, src->second.first) == pinned && ctx.at(scope, w.time_us) == pinned, [&] {
        return w.client + " switched a rebuild of " + scope + " pinned at context v" + std::to_string(pinned) +
               " while the context was v" + std::to_string(ctx.at(scope, w.time_us)) + " (v" +
               std::to_string(ctx.at(scope, src->second.first)) + " when the batch was written)";
      });
      isolated.erase(src);
    }
    if (scope.empty()) continue;
    const std::string want = expected_candidates(b, scope, value);
    j.expect(want == value,
             [&] { return w.client + " made the candidate list of " + scope + " '" + value + "', want " + want; });
  }
  return j.v;
}

// RANK-2 (004:L16-19, L101, L281-283): every row of the board belongs to exactly one scope and
// names only rows of that scope: a head's scope is its aggregate key's; a candidate's and a
// snapshot's scope is its run's; a snapshot's items are entries of its run's manifest; the DB
// pointer of S names a snapshot of S; every cached pointer or snapshot key of S names a snapshot of S.
Verdict check_scope_isolation(const RankingRun& run) {
  Judge j("rank-scope-isolation", {"RANK-2"},
          "heads, candidates, snapshots, snapshot items, DB pointers, Redis keys and the responses "
          "clients were shown (full or not modified) of a scope name only rows of that same scope");
  const BoardObs& b = run.board;
  std::map<std::string, std::string> run_scope, snap_scope, manifest_run;
  for (const RunRow& r : b.runs) run_scope[r.run_id] = r.scope_id;
  for (const ReplayRunRow& r : b.replay_runs) run_scope[r.run_id] = r.scope_id;
  for (const ManifestRow& m : b.manifest) manifest_run[m.manifest_id] = m.run_id;
  for (const HeadRow& h : run.heads) {
    j.expect(h.aggregate_key.find("#" + h.scope_id + "#") != std::string::npos,
             [&] { return "head " + h.aggregate_key + " is stored under scope " + h.scope_id; });
  }
  for (const CandidateRow& c : b.candidates) {
    j.expect(run_scope[c.run_id] == c.scope_id, [&] {
      return "candidate " + c.topic_id + " of run " + c.run_id + " (scope " + run_scope[c.run_id] +
             ") is stored under scope " + c.scope_id;
    });
  }
  std::map<std::string, std::string> snap_run;
  for (const SnapshotRow& s : b.snapshots) {
    snap_scope[s.snapshot_id] = s.scope_id;
    snap_run[s.snapshot_id] = s.run_id;
    j.expect(run_scope[s.run_id] == s.scope_id, [&] {
      return "snapshot " + s.snapshot_id + " of scope " + s.scope_id + " is built from run " + s.run_id;
    });
  }
  for (const SnapshotItemRow& i : b.items) {
    auto m = manifest_run.find(i.manifest_id);
    const std::string& of = snap_run[i.snapshot_id];
    auto src =
        std::find_if(b.replay_runs.begin(), b.replay_runs.end(), [&](const ReplayRunRow& r) { return r.run_id == of; });
    const std::string want =
        src == b.replay_runs.end() ? of : src->source_run_id;  // a replay shows its source's entries
    j.expect(m != manifest_run.end() && m->second == want, [&] {
      return "item " + i.topic_id + " of snapshot " + i.snapshot_id + " names manifest entry " + i.manifest_id +
             " of another run";
    });
  }
  for (const PointerRow& p : b.pointers) {
    if (p.snapshot_id.empty()) continue;
    j.expect(snap_scope[p.snapshot_id] == p.scope_id, [&] {
      return "the DB pointer of " + p.scope_id + " names snapshot " + p.snapshot_id + " of scope " +
             snap_scope[p.snapshot_id];
    });
  }
  check_redis_scopes(j, b, snap_scope);
  // 004:L279-284 (C05): a response for S, a full one or a "not modified" that confirms the client's
  // kept one by its ETag, shows a snapshot of S.
  for (const ViewOp& op : b.risk.views) {
    const std::string snap = result_field(op.result, "snap");
    if (op.outcome != Outcome::kOk || snap.empty()) continue;
    const std::string scope = op.args.substr(op.args.find('=') + 1);
    j.expect(snap_scope[snap] == scope, [&] {
      return op.process + " at " + std::to_string(op.invoke_us) + " was shown snapshot " + snap + " of scope " +
             snap_scope[snap] + " for " + scope + " (src=" + result_field(op.result, "src") + ")";
    });
  }
  return j.v;
}

// RANK-10 (004:L151, L265, L323): replaying the commit log in commit order, no snapshot becomes
// PUBLISHED by a commit made while the last committed source_status row of some (keyed partition,
// required source) flags it incomplete. Spec freezes (keeps the previous snapshot); there is no
// degraded rule version, so every publish is under the normal rule.
Verdict check_completeness_gate(const RankingRun& run) {
  Judge j("rank-completeness-gate", {"RANK-10"},
          "no snapshot is published while a committed source_status row flags a required source "
          "of a keyed partition incomplete (the publisher freezes)");
  std::map<std::pair<std::string, std::string>, std::string> flag;  // (keyed partition, source) -> complete
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (is_source_flag(s)) flag[{s.params[0], s.params[1]}] = s.params[2];
      if (!is_publish(s)) continue;
      // The first flag (in key order) that is incomplete is the evidence.
      const auto incomplete = std::find_if(flag.begin(), flag.end(), [](const auto& f) { return f.second == "0"; });
      j.expect(incomplete == flag.end(), [&] {
        return c.client + " published snapshot " + s.params[1] + " at " + std::to_string(c.time_us) + " while source " +
               incomplete->first.second + " of keyed partition " + incomplete->first.first + " was incomplete";
      });
    }
  }
  return j.v;
}

// RANK-25 (004:L101, L252, L302-303): each shadow run carries its SEALED source run's input
// watermark, manifest digest, context version and rule epoch, and holds exactly the source
// manifest's entries its rule admits (score at least its entry score); no official table, snapshot
// or Redis key names it; a comparison stores both sides' true contexts and is COMPARED, with the
// true Top N overlap, only when they are identical, else REFUSED.
void check_shadow_runs(Judge& j, const RankingRun& run) {
  Verdict& v = j.v;  // a Redis write is one check that may fail per shadow run, official-table writes uncounted
  const BoardObs& b = run.board;
  std::map<std::string, const RunRow*> runs;
  for (const RunRow& r : b.runs) runs[r.run_id] = &r;
  std::map<std::string, const ShadowRunRow*> shadows;
  std::map<std::string, std::set<std::pair<std::string, int64_t>>> held;
  for (const ShadowCandidateRow& c : b.shadow_candidates) held[c.shadow_run_id].insert({c.topic_id, c.score});
  const auto context = [](const std::string& scope, int64_t wm, const std::string& digest, int64_t ctx) {
    return scope + "|" + std::to_string(wm) + "|" + digest + "|" + std::to_string(ctx);
  };
  for (const ShadowRunRow& s : b.shadow_runs) {
    shadows[s.shadow_run_id] = &s;
    auto r = runs.find(s.source_run_id);
    const bool carried = r != runs.end() && r->second->status == "SEALED" && r->second->scope_id == s.scope_id &&
                         r->second->watermark == s.watermark && r->second->manifest_digest == s.manifest_digest &&
                         r->second->ctx_version == s.ctx_version && r->second->rule_epoch == s.rule_epoch;
    j.expect(carried, [&] {
      return "shadow run " + s.shadow_run_id + " does not carry its source run's watermark, manifest and epochs";
    });
    if (!carried) continue;
    std::set<std::pair<std::string, int64_t>> want;
    for (const ManifestRow& m : b.manifest) {
      if (m.run_id == s.source_run_id && m.score >= s.entry_score) want.insert({m.topic_id, m.score});
    }
    j.expect(want == held[s.shadow_run_id], [&] {
      return "shadow run " + s.shadow_run_id + " holds " + std::to_string(held[s.shadow_run_id].size()) +
             " candidates; its rule admits " + std::to_string(want.size()) + " of the frozen manifest";
    });
  }
  for (const SnapshotRow& sn : b.snapshots) {
    j.expect(!shadows.count(sn.run_id),
             [&] { return "snapshot " + sn.snapshot_id + " was built from shadow run " + sn.run_id; });
  }
  for (const RedisWrite& w : b.redis_writes) {
    ++v.checks;
    for (const auto& [id, row] : shadows) {
      for (const std::string& a : w.argv) {
        if (a.find(id) != std::string::npos) fail_verdict(v, w.client + " cached shadow run " + id);
      }
    }
  }
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    for (const SqlStatementObs& st : c.statements) {
      if (st.changes == 0 || !official_table(st.sql)) continue;
      for (const std::string& p : st.params) {
        if (shadows.count(p)) fail_verdict(v, c.client + " wrote shadow run " + p + " into an official table");
      }
    }
  }
  for (const ShadowComparisonRow& cmp : b.shadow_comparisons) {
    auto s = shadows.find(cmp.shadow_run_id);
    auto r = runs.find(cmp.official_run_id);
    if (s == shadows.end() || r == runs.end()) {
      j.expect(false, [&] {
        return "comparison of " + cmp.shadow_run_id + " with " + cmp.official_run_id + " names no such runs";
      });
      continue;
    }
    const std::string mine =
        context(s->second->scope_id, s->second->watermark, s->second->manifest_digest, s->second->ctx_version);
    const std::string theirs =
        context(r->second->scope_id, r->second->watermark, r->second->manifest_digest, r->second->ctx_version);
    const bool stored =
        cmp.context_shadow == mine && cmp.context_official == theirs && (cmp.status == "COMPARED") == (mine == theirs);
    j.expect(stored, [&] {
      return "comparison of " + cmp.shadow_run_id + " with " + cmp.official_run_id + " is " + cmp.status +
             " with contexts [" + cmp.context_shadow + "] and [" + cmp.context_official + "], truly [" + mine +
             "] and [" + theirs + "]";
    });
    if (!stored) continue;
    if (cmp.status != "COMPARED") continue;
    std::vector<std::pair<std::string, int64_t>> a(held[cmp.shadow_run_id].begin(), held[cmp.shadow_run_id].end()), o;
    for (const CandidateRow& c : b.candidates) {
      if (c.run_id == cmp.official_run_id) o.emplace_back(c.topic_id, c.score);
    }
    std::set<std::string> ta, to;
    for (const auto& [t, score] : model::expected_items(a, b.params.top_n)) ta.insert(t);
    for (const auto& [t, score] : model::expected_items(o, b.params.top_n)) to.insert(t);
    const int64_t overlap =
        static_cast<int64_t>(std::count_if(ta.begin(), ta.end(), [&](const std::string& t) { return to.count(t); }));
    j.expect(overlap == cmp.overlap, [&] {
      return "comparison of " + cmp.shadow_run_id + " reports a Top " + std::to_string(b.params.top_n) +
             " overlap of " + std::to_string(cmp.overlap) + ", the candidates give " + std::to_string(overlap);
    });
  }
}

// RANK-25 (004:L101, L265, L325, L494): a replay run lives only in its own namespace: no committed
// write names it in the official run tables, and none of its snapshots is PUBLISHED, the DB
// pointer's or cached in Redis unless published under a promotion authorization that matched it.
Verdict check_replay_isolation(const RankingRun& run) {
  Judge j("rank-replay-isolation", {"RANK-25"},
          "replay runs stay in their namespace: never written into the official run tables; their "
          "snapshots are never PUBLISHED, never the DB pointer's and never cached in Redis, except "
          "one published under a promotion authorization that names it and matched the context, the "
          "pointer version and its validity at the commit; shadow runs carry their source run's "
          "inputs and epochs, hold what their rule admits of its frozen manifest, reach no official "
          "table, snapshot or Redis key, and are compared only on an identical context");
  Verdict& v = j.v;  // a Redis write is one check that may fail per replay snapshot: counted by hand
  const BoardObs& b = run.board;
  std::set<std::string> replay_runs;
  for (const ReplayRunRow& r : b.replay_runs) replay_runs.insert(r.run_id);
  const auto snaps = replay_snapshots(b);
  const std::set<std::string> promoted = promoted_snapshots(j, run);
  for (const SnapshotRow& s : b.snapshots) {
    if (!snaps.count(s.snapshot_id) || promoted.count(s.snapshot_id)) continue;
    j.expect(s.status != "PUBLISHED" && s.epoch < 0,
             [&] { return "snapshot " + s.snapshot_id + " of replay run " + s.run_id + " is " + s.status; });
  }
  for (const PointerRow& p : b.pointers) {
    j.expect(!(snaps.count(p.snapshot_id) && !promoted.count(p.snapshot_id)),
             [&] { return "the DB pointer of " + p.scope_id + " names replay snapshot " + p.snapshot_id; });
  }
  check_replay_commits(j, run, replay_runs, snaps, promoted);
  check_shadow_runs(j, run);
  for (const RedisWrite& w : b.redis_writes) {
    if (w.argv.size() < 3) continue;
    ++v.checks;
    for (const auto& [snap, run_id] : snaps) {
      if (promoted.count(snap)) continue;
      if (w.argv[1].find(snap) != std::string::npos || w.argv[2].find(snap) != std::string::npos) {
        fail_verdict(v, w.client + " cached " + w.argv[1] + " = " + w.argv[2] + " of replay run " + run_id);
      }
    }
  }
  return j.v;
}

}  // namespace fl::ranking::props
