// The part-2 checkers (runs, manifests, seals, publishing, the Redis pointer): one per invariant
// family, from the DB rows read back, the SQL server's commit log and the Redis server's commands.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "model/ranking/board.h"
#include "properties/common/fault_budget.h"
#include "properties/common/judge.h"
#include "properties/ranking/checks.h"

namespace fl::ranking::props {

using fl::props::Judge;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string x; std::getline(in, x, sep);) out.push_back(x);
  return out;
}

namespace {

std::string fnv(const std::string& s) { return text_digest(s); }

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool has(const std::string& s, const char* p) { return s.find(p) != std::string::npos; }
// The next word of `sql` from `*at` (empty at its end), split at white space as `std::istream >>`
// splits it (std::isspace of the "C" locale). Every checker tests every committed statement, so
// this allocates nothing.
std::string_view next_word(std::string_view sql, size_t* at) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  size_t from = *at;
  while (from < sql.size() && space(sql[from])) ++from;
  size_t to = from;
  while (to < sql.size() && !space(sql[to])) ++to;
  *at = to;
  return sql.substr(from, to - from);
}
// The table a committed write changes (the one after INSERT [OR x] INTO, UPDATE or DELETE FROM).
std::string_view target(std::string_view sql) {
  size_t at = 0;
  std::string_view w = next_word(sql, &at);
  if (w != "INSERT" && w != "UPDATE" && w != "DELETE") return {};
  for (std::string_view next; !(next = next_word(sql, &at)).empty();) {
    w = next;
    if (w != "OR" && w != "IGNORE" && w != "REPLACE" && w != "INTO" && w != "FROM") break;
  }
  return w;
}
bool writes(const SqlStatementObs& s, const char* table) { return s.changes > 0 && target(s.sql) == table; }

}  // namespace

RunTimeline run_timeline(const RankingRun& run) {
  RunTimeline t;
  for (size_t i = 0; i < run.commits.size(); ++i) {
    if (!run.commits[i].ok) continue;
    for (const SqlStatementObs& s : run.commits[i].statements) {
      if (!starts(s.sql, "UPDATE calculation_run SET status") || s.changes == 0) continue;
      if (has(s.sql, "'BUILDING'") && s.params.size() >= 4) t.building.emplace(s.params[3], i);
      if (has(s.sql, "'SEALED'") && s.params.size() >= 3) t.sealed.emplace(s.params[2], i);
    }
  }
  return t;
}

namespace {

bool past_collecting(const RunRow& r) { return r.status == "BUILDING" || r.status == "SEALED"; }

// The window type a run scores: its own window configuration's (004:L220), or the board's.
std::string scored_window_type(const BoardParams& p, const RunRow& r) {
  auto it = p.window_types.find(r.window_config);
  return it == p.window_types.end() ? p.window_type : it->second;
}

std::map<std::string, std::vector<const CutRow*>> cuts_by_run(const BoardObs& b) {
  std::map<std::string, std::vector<const CutRow*>> out;
  for (const CutRow& c : b.cuts) out[c.run_id].push_back(&c);
  return out;
}

std::vector<model::VersionInput> version_inputs(const RankingRun& run) {
  std::map<std::string, const HeadRow*> heads;
  for (const HeadRow& h : run.heads) heads[h.aggregate_key] = &h;
  std::vector<model::VersionInput> out;
  for (const VersionRow& v : run.versions) {
    auto h = heads.find(v.aggregate_key);
    auto c = run.board.offset_cuts.find(v.cut_ref);
    if (h == heads.end() || c == run.board.offset_cuts.end()) continue;
    out.push_back(model::VersionInput{v.aggregate_key, h->second->topic_id, h->second->scope_id, h->second->window_type,
                                      v.generation, v.version, v.value.risk_adjusted, v.digest, v.cut_ref,
                                      c->second.partition, c->second.next_offset, c->second.generation});
  }
  return out;
}

std::string parse_ref(const std::string& ref, int32_t* p, int64_t* n, int64_t* g) {
  long long a = 0, b = 0, c = 0;
  if (std::sscanf(ref.c_str(), "k%lld@%lld/g%lld", &a, &b, &c) != 3) return "malformed cut " + ref;
  *p = static_cast<int32_t>(a);
  *n = b;
  *g = c;
  return "";
}

// ---- RANK-15, RANK-16.

// RANK-20 (004:L253): the partitions a run expects. A run without a degraded policy expects every
// candidate partition (and is FULL); a DEGRADED run expects exactly the included partitions of the
// APPROVED policy of its scope it names, whose included and excluded sets split the candidate
// partitions and whose digest recomputes. nullopt (and a failure) otherwise.
std::optional<std::set<int64_t>> expected_partitions(Judge& j, const RunRow& r, const BoardObs& b, int64_t created_us) {
  Verdict& v = j.v;  // one check, failed on either of two paths that return: counted by hand
  std::set<int64_t> all;
  for (int64_t p = 0; p < b.params.candidate_partitions; ++p) all.insert(p);
  ++v.checks;
  if (r.degraded_policy.empty()) {
    if (r.expected_count == b.params.candidate_partitions && (r.completeness.empty() || r.completeness == "FULL"))
      return all;
    fail_verdict(v, "run " + r.run_id + " expects " + std::to_string(r.expected_count) + " of the " +
                        std::to_string(b.params.candidate_partitions) + " candidate partitions (" + r.completeness +
                        ") without a degraded policy");
    return std::nullopt;
  }
  auto p = std::find_if(b.policies.begin(), b.policies.end(),
                        [&](const DegradedPolicyRow& x) { return x.policy_version == r.degraded_policy; });
  std::set<int64_t> included, excluded;
  if (p != b.policies.end()) {
    for (const std::string& x : split(p->included, ',')) included.insert(std::stoll(x));
    for (const std::string& x : split(p->excluded, ',')) excluded.insert(std::stoll(x));
  }
  std::set<int64_t> both = included;
  both.insert(excluded.begin(), excluded.end());
  if (p == b.policies.end() || p->approval != "APPROVED" || p->scope_id != r.scope_id || r.completeness != "DEGRADED" ||
      excluded.empty() || both != all || included.size() + excluded.size() != all.size() ||
      created_us < p->valid_from_us || created_us >= p->valid_until_us ||
      static_cast<int64_t>(included.size()) != r.expected_count ||
      fnv(p->scope_id + "|" + p->included + "|" + p->excluded + "|" + std::to_string(p->valid_from_us) + "|" +
          std::to_string(p->valid_until_us)) != p->digest) {
    fail_verdict(v, "run " + r.run_id + " (" + r.completeness + ", expecting " + std::to_string(r.expected_count) +
                        " partitions) names degraded policy " + r.degraded_policy +
                        (p == b.policies.end() ? ", which does not exist"
                                               : " (" + p->approval + ", scope " + p->scope_id + ", included " +
                                                     p->included + ", excluded " + p->excluded + ")"));
    return std::nullopt;
  }
  return included;
}

void check_run_cuts(Judge& j, const RunRow& r, const std::vector<const CutRow*>& cuts, const BoardObs& b,
                    int64_t created_us) {
  const std::vector<std::string> vector = split(r.vector, ',');
  std::vector<std::string> expected, results;
  std::set<int64_t> ids;
  const std::optional<std::set<int64_t>> want = expected_partitions(j, r, b, created_us);
  if (!want) return;
  const bool sized = static_cast<int64_t>(vector.size()) == b.params.candidate_partitions &&
                     static_cast<int64_t>(cuts.size()) == r.expected_count;
  j.expect(sized, [&] {
    return "run " + r.run_id + ": " + std::to_string(cuts.size()) + " cut rows, vector of " +
           std::to_string(vector.size()) + ", expected " + std::to_string(r.expected_count);
  });
  if (!sized) return;
  for (const CutRow* c : cuts) {
    j.expect(!(!want->count(c->partition) || !ids.insert(c->partition).second ||
               c->ref != vector[static_cast<size_t>(c->partition)]),
             [&] {
               return "run " + r.run_id + " partition " + std::to_string(c->partition) + ": cut " + c->ref +
                      " is not the run vector's";
             });
    expected.push_back(std::to_string(c->partition) + "|" + c->ref);
    if (!past_collecting(r)) continue;
    auto obj = b.topk_objects.find(c->object_ref);
    j.expect(!(c->status != "COMPLETED" || obj == b.topk_objects.end() || fnv(obj->second) != c->digest ||
               std::count(obj->second.begin(), obj->second.end(), '\n') != c->item_count),
             [&] {
               return "run " + r.run_id + " is " + r.status + " but partition " + std::to_string(c->partition) +
                      " is " + c->status + " with object '" + c->object_ref + "' (" + std::to_string(c->item_count) +
                      " items, digest " + c->digest + ") that does not verify";
             });
    results.push_back(std::to_string(c->partition) + "|" + c->ref + "|" + c->object_ref + "|" +
                      std::to_string(c->item_count) + "|" + c->digest + "|" + c->status);
  }
  j.expect(!(set_digest(expected) != r.expected_digest),
           [&] { return "run " + r.run_id + ": expected_partition_set_digest does not recompute"; });
  if (past_collecting(r)) {
    j.expect(!(set_digest(results) != r.result_digest),
             [&] { return "run " + r.run_id + ": partition_result_set_digest does not recompute"; });
  }
}

// Committed cut-row changes: one PENDING -> COMPLETED write per (run, partition), none after BUILDING.
void check_cut_writes(Judge& j, const RankingRun& run, const RunTimeline& t) {
  std::map<std::pair<std::string, std::string>, int> completed;
  for (size_t i = 0; i < run.commits.size(); ++i) {
    if (!run.commits[i].ok) continue;
    for (const SqlStatementObs& s : run.commits[i].statements) {
      if (!writes(s, "run_partition_cut") || starts(s.sql, "INSERT")) continue;
      if (!starts(s.sql, "UPDATE") || s.params.size() < 5) {
        j.expect(false,
                 [&] { return run.commits[i].client + " committed `" + s.sql.substr(0, 50) + "...` on cut rows"; });
        continue;
      }
      const std::string& r = s.params[3];
      auto b = t.building.find(r);
      j.expect(!(++completed[{r, s.params[4]}] > 1 || (b != t.building.end() && b->second <= i)), [&] {
        return run.commits[i].client + " rewrote the cut of run " + r + " partition " + s.params[4] +
               (b != t.building.end() && b->second <= i ? " after BUILDING" : " a second time");
      });
    }
  }
}

// ---- RANK-14, RANK-17.

// Every version by "aggregate_key,generation,version" (the last input of a triple wins).
using InputsByTriple = std::map<std::string, const model::VersionInput*>;
InputsByTriple inputs_by_triple(const std::vector<model::VersionInput>& inputs) {
  InputsByTriple triples;
  for (const model::VersionInput& in : inputs) {
    triples[in.aggregate_key + "," + std::to_string(in.generation) + "," + std::to_string(in.version)] = &in;
  }
  return triples;
}

void check_manifest_rows(Judge& j, const RunRow& r, const std::vector<const ManifestRow*>& rows,
                         const InputsByTriple& triples) {
  std::map<int32_t, std::pair<int64_t, int64_t>> cut;  // partition -> (next_offset, generation)
  for (const std::string& ref : split(r.vector, ',')) {
    int32_t p = 0;
    int64_t n = 0, g = 0;
    if (parse_ref(ref, &p, &n, &g).empty()) cut[p] = {n, g};
  }
  std::vector<std::string> lines;
  for (const ManifestRow* m : rows) {
    lines.push_back(m->topic_id + "|" + m->manifest_id + "|" + m->manifest_digest);
    j.expect(!(m->manifest_id != r.run_id + "/" + m->topic_id || fnv(m->items) != m->manifest_digest), [&] {
      return "manifest " + m->manifest_id + ": digest " + m->manifest_digest + " does not cover its items";
    });
    int64_t score = 0;
    for (const std::string& item : split(m->items, ';')) {
      const std::vector<std::string> f = split(item, ',');
      auto it = f.size() == 5 ? triples.find(f[0] + "," + f[1] + "," + f[2]) : triples.end();
      if (it == triples.end() || it->second->value_digest != f[3] || it->second->cut_ref != f[4] ||
          it->second->topic_id != m->topic_id || it->second->scope_id != r.scope_id) {
        j.expect(false, [&] {
          return "manifest " + m->manifest_id + " item " + item + " names no version of its topic and scope";
        });
        continue;
      }
      auto c = cut.find(it->second->cut_partition);
      j.expect(
          !(c == cut.end() || it->second->cut_next_offset > c->second.first ||
            it->second->cut_generation != c->second.second),
          [&] { return "manifest " + m->manifest_id + " item " + item + " lies outside the run's cut " + r.vector; });
      score += it->second->risk_adjusted;
    }
    j.expect(!(score != m->score), [&] {
      return "manifest " + m->manifest_id + ": score " + std::to_string(m->score) + ", its versions give " +
             std::to_string(score);
    });
  }
  j.expect(!(static_cast<int64_t>(rows.size()) != r.manifest_count || set_digest(lines) != r.manifest_digest), [&] {
    return "run " + r.run_id + ": " + std::to_string(rows.size()) + " manifest rows, run says " +
           std::to_string(r.manifest_count) + " (set digest " + r.manifest_digest + ")";
  });
}

// The model's Top K per partition, from the version rows the run's cut admits, against the objects.
void check_topk_model(Judge& j, const RunRow& r, const std::vector<const CutRow*>& cuts, const BoardObs& b,
                      const std::vector<model::VersionInput>& inputs) {
  for (const CutRow* c : cuts) {
    auto obj = b.topk_objects.find(c->object_ref);
    if (obj == b.topk_objects.end()) continue;  // rank-run-partitions' finding
    int32_t p = 0;
    int64_t n = 0, g = 0;
    if (!parse_ref(c->ref, &p, &n, &g).empty()) continue;
    const auto want =
        model::expected_local_topk(inputs, r.scope_id, scored_window_type(b.params, r), p, n, g, b.params.top_k);
    std::vector<model::TopkEntryModel> got;
    for (const std::string& line : split(obj->second, '\n')) {
      model::TopkEntryModel e;
      if (model::parse_topk_line(line, &e)) got.push_back(std::move(e));
    }
    j.expect(!(got != want), [&] {
      return "run " + r.run_id + " partition " + std::to_string(p) + ": local Top K of " + std::to_string(got.size()) +
             " entries (first " + (got.empty() ? "-" : got[0].describe()) + "), the cut's versions give " +
             std::to_string(want.size()) + " (first " + (want.empty() ? "-" : want[0].describe()) + ")";
    });
  }
}

// Manifest rows are inserted only by the commit that moves their run to BUILDING; afterwards only
// a PENDING entry's disposition changes; nothing is deleted.
void check_manifest_writes(Judge& j, const RankingRun& run, const RunTimeline& t) {
  for (size_t i = 0; i < run.commits.size(); ++i) {
    if (!run.commits[i].ok) continue;
    for (const SqlStatementObs& s : run.commits[i].statements) {
      if (!writes(s, "run_input_manifest")) continue;
      const bool insert = starts(s.sql, "INSERT") && !s.params.empty();
      const bool disposition = starts(s.sql, "UPDATE run_input_manifest SET disposition") && has(s.sql, "'PENDING'");
      auto b = insert ? t.building.find(s.params[0]) : t.building.end();
      j.expect(!(!(insert && b != t.building.end() && b->second == i) && !disposition), [&] {
        return run.commits[i].client + " changed the frozen manifest: `" + s.sql.substr(0, 60) + "...`";
      });
    }
  }
}

// ---- RANK-18.

void check_sealed_run(Judge& j, const RankingRun& run, const RunRow& r, const std::vector<const ManifestRow*>& rows,
                      const std::vector<const CandidateRow*>& cands) {
  std::set<std::string> candidate_entries, candidate_topics;
  for (const ManifestRow* m : rows) {
    const bool want = model::is_candidate(m->score, run.board.params.entry_score);
    // With the risk service an entry at the entry score may be REJECTED for a risk reason, which
    // rank-risk-response judges (004:L231, L313).
    const bool risk_rejected =
        run.board.params.risk_service && m->disposition == "REJECTED" && starts(m->reason, "risk-");
    // With scope control a candidate write refused because the context moved rejects the entry
    // 'context-changed' (004:L230); rank-control-epochs judges that the context had moved.
    const bool context_rejected =
        run.board.params.scope_control && m->disposition == "REJECTED" && m->reason == "context-changed";
    j.expect(!((m->disposition != "CANDIDATE" && m->disposition != "REJECTED") ||
               (m->disposition == "REJECTED" && m->reason.empty()) ||
               ((m->disposition == "CANDIDATE") != want && !(want && (risk_rejected || context_rejected)))),
             [&] {
               return "sealed run " + r.run_id + ": entry " + m->topic_id + " (score " + std::to_string(m->score) +
                      ") is " + m->disposition + " '" + m->reason + "'";
             });
    if (m->disposition == "CANDIDATE") candidate_entries.insert(m->topic_id);
  }
  std::vector<std::string> lines;
  for (const CandidateRow* c : cands) {
    j.expect(!(c->scope_id != r.scope_id), [&] {
      return "sealed run " + r.run_id + " of " + r.scope_id + " has candidate " + c->topic_id + " under scope " +
             c->scope_id;
    });
    candidate_topics.insert(c->topic_id);
    lines.push_back(c->topic_id + "|" + std::to_string(c->score) + "|" + c->manifest_id);
  }
  j.expect(!(candidate_topics != candidate_entries || static_cast<int64_t>(cands.size()) != r.candidate_count ||
             set_digest(lines) != r.candidate_digest),
           [&] {
             return "sealed run " + r.run_id + ": " + std::to_string(cands.size()) + " candidates over " +
                    std::to_string(candidate_topics.size()) + " topics, " + std::to_string(candidate_entries.size()) +
                    " CANDIDATE entries, run says " + std::to_string(r.candidate_count) + " (digest " +
                    r.candidate_digest + ")";
           });
}

// The run a committed candidate write names: an insert's second column, else (an update or a
// delete, which RANK-18 allows while the run is BUILDING: the seal must catch it, C26) the
// parameter that is a run id.
std::string candidate_run(const SqlStatementObs& s, const BoardObs& b) {
  if (starts(s.sql, "INSERT")) return s.params.size() >= 2 ? s.params[1] : "";
  for (const std::string& p : s.params) {
    for (const RunRow& r : b.runs) {
      if (r.run_id == p) return p;
    }
  }
  return "";
}

// Candidate writes commit only while their run is BUILDING (between the two transitions).
void check_candidate_writes(Judge& j, const RankingRun& run, const RunTimeline& t) {
  for (size_t i = 0; i < run.commits.size(); ++i) {
    if (!run.commits[i].ok) continue;
    for (const SqlStatementObs& s : run.commits[i].statements) {
      if (!writes(s, "run_candidate")) continue;
      const std::string r = candidate_run(s, run.board);
      auto b = t.building.find(r);
      auto e = t.sealed.find(r);
      j.expect(!(r.empty() || b == t.building.end() || b->second >= i || (e != t.sealed.end() && e->second <= i)), [&] {
        return run.commits[i].client + " committed `" + s.sql.substr(0, 60) + "...` on candidates of run '" + r +
               "' while the run was not BUILDING";
      });
    }
  }
}

// ---- RANK-22, RANK-23, RANK-36.

// `blocked`: the topics blocked in the snapshot's scope or globally at its publish (risk actions
// only, 004:L236), which its items leave out.
void check_published_snapshot(Judge& j, const RankingRun& run, const SnapshotRow& s,
                              const std::vector<const SnapshotItemRow*>& items, const std::set<std::string>& blocked) {
  const BoardObs& b = run.board;
  // A promoted replay's snapshot is judged by the run it recomputed (rank-replay-isolation judges
  // whether it could publish at all).
  const std::string of = source_run_of(b, s.run_id);
  auto r = std::find_if(b.runs.begin(), b.runs.end(), [&](const RunRow& x) { return x.run_id == of; });
  const bool matched = r != b.runs.end() && r->status == "SEALED" && r->scope_id == s.scope_id &&
                       r->manifest_count == s.manifest_count && r->manifest_digest == s.manifest_digest &&
                       r->candidate_count == s.candidate_count && r->candidate_digest == s.candidate_digest;
  j.expect(matched, [&] {
    return "PUBLISHED snapshot " + s.snapshot_id + " does not match a SEALED run of its scope (counts, digests)";
  });
  if (!matched) return;
  std::vector<std::pair<std::string, int64_t>> cands;
  std::set<std::string> manifest_ids;
  for (const CandidateRow& c : b.candidates) {
    if (c.run_id == of && !blocked.count(c.topic_id)) cands.emplace_back(c.topic_id, c.score);
  }
  for (const ManifestRow& m : b.manifest) {
    if (m.run_id == of) manifest_ids.insert(m.manifest_id);
  }
  const auto want = model::expected_items(cands, b.params.top_n);
  bool same = want.size() == items.size();
  for (size_t i = 0; same && i < items.size(); ++i) {
    same = items[i]->rank_no == static_cast<int64_t>(i + 1) && items[i]->topic_id == want[i].first &&
           items[i]->score == want[i].second && manifest_ids.count(items[i]->manifest_id);
  }
  j.expect(same, [&] {
    return "PUBLISHED snapshot " + s.snapshot_id + " holds " + std::to_string(items.size()) +
           " items; its sealed run's candidates give " + std::to_string(want.size()) +
           (want.empty() ? std::string() : " starting " + want[0].first);
  });
}

// Replays the committed publishes: each PUBLISHED status commits with the CAS of its scope's
// pointer in one transaction; epochs of a scope go up by one, watermarks never down; no item of a
// snapshot is written after it was READY.
void check_publish_commits(Judge& j, const RankingRun& run) {
  std::map<std::string, int64_t> epoch, watermark;
  std::set<std::string> ready;
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    std::string published_scope, cas_scope;
    for (const SqlStatementObs& s : c.statements) {
      if (s.changes == 0) continue;
      if (starts(s.sql, "UPDATE ranking_snapshot SET status = 'READY'") && !s.params.empty()) ready.insert(s.params[0]);
      if (starts(s.sql, "INSERT INTO ranking_snapshot_item") && !s.params.empty()) {
        j.expect(!(ready.count(s.params[0])),
                 [&] { return c.client + " wrote an item of snapshot " + s.params[0] + " after READY"; });
      }
      if (starts(s.sql, "UPDATE ranking_snapshot SET status = 'PUBLISHED'") && s.params.size() >= 3)
        published_scope = s.params[2];
      if (starts(s.sql, "UPDATE ranking_publish_pointer") && s.params.size() >= 5) {
        cas_scope = s.params[2];
        const int64_t from = std::stoll(s.params[4]), wm = std::stoll(s.params[1]);
        j.expect(!(from != epoch[cas_scope] || (watermark.count(cas_scope) && wm < watermark[cas_scope])), [&] {
          return c.client + " moved the pointer of " + cas_scope + " from epoch " + std::to_string(from) +
                 " (current " + std::to_string(epoch[cas_scope]) + ") to watermark " + std::to_string(wm);
        });
        epoch[cas_scope] = from + 1;
        watermark[cas_scope] = wm;
      }
    }
    if (published_scope.empty() && cas_scope.empty()) continue;
    j.expect(!(published_scope != cas_scope), [&] {
      return c.client + " published in " + published_scope + " and moved the pointer of " + cas_scope +
             " in one transaction";
    });
  }
  for (const PointerRow& p : run.board.pointers) {
    if (p.snapshot_id.empty()) continue;
    auto s = std::find_if(run.board.snapshots.begin(), run.board.snapshots.end(),
                          [&](const SnapshotRow& x) { return x.snapshot_id == p.snapshot_id; });
    j.expect(!(s == run.board.snapshots.end() || s->status != "PUBLISHED" || s->scope_id != p.scope_id ||
               s->epoch != p.epoch),
             [&] {
               return "the DB pointer of " + p.scope_id + " names " + p.snapshot_id + " at epoch " +
                      std::to_string(p.epoch) + ", not a PUBLISHED snapshot of that epoch and scope";
             });
  }
}

// ---- RANK-24.

struct DbPointerSpan {  // the DB pointer held (epoch, snapshot) over [from, to)
  int64_t epoch = 0;
  std::string snapshot_id;
  int64_t from = 0, to = INT64_MAX;
  std::string client;  // who committed it
};

std::map<std::string, std::vector<DbPointerSpan>> pointer_history(const RankingRun& run) {
  std::map<std::string, std::vector<DbPointerSpan>> out;
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (!starts(s.sql, "UPDATE ranking_publish_pointer") || s.changes == 0 || s.params.size() < 5) continue;
      auto& spans = out[s.params[2]];
      if (!spans.empty()) spans.back().to = c.time_us;
      spans.push_back(DbPointerSpan{std::stoll(s.params[4]) + 1, s.params[0], c.time_us, INT64_MAX, c.client});
    }
  }
  return out;
}

}  // namespace

std::string set_digest(std::vector<std::string> lines) {
  std::sort(lines.begin(), lines.end());
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return text_digest(all);
}

// RANK-15, RANK-16 (004:L99, L247-249).
Verdict check_run_partitions(const RankingRun& run) {
  Judge j("rank-run-partitions", {"RANK-15", "RANK-16", "RANK-20"},
          "each run expects every candidate partition, or, DEGRADED, exactly the included ones of "
          "the approved policy of its scope it names (004:L253), and has exactly "
          "its expected (partition, cut) rows with the run vector's cuts and a "
          "recomputable expected-set digest; a BUILDING or SEALED run has every partition COMPLETED "
          "with a verifiable Top K object and a recomputable result-set digest; a cut row is "
          "completed by one committed write and never written after BUILDING");
  const auto cuts = cuts_by_run(run.board);
  std::map<std::string, int64_t> created;  // run -> when its INSERT committed (a policy's validity)
  for (const SqlCommit& c : run.commits) {
    for (const SqlStatementObs& s : c.statements) {
      if (c.ok && s.changes > 0 && starts(s.sql, "INSERT INTO calculation_run") && !s.params.empty()) {
        created.emplace(s.params[0], c.time_us);
      }
    }
  }
  for (const RunRow& r : run.board.runs) {
    auto it = cuts.find(r.run_id);
    auto at = created.find(r.run_id);
    check_run_cuts(j, r, it == cuts.end() ? std::vector<const CutRow*>{} : it->second, run.board,
                   at == created.end() ? -1 : at->second);
  }
  check_cut_writes(j, run, run_timeline(run));
  return j.v;
}

// RANK-14, RANK-17 (004:L99-100, L214-220, L230, L249).
Verdict check_manifest_frozen(const RankingRun& run) {
  Judge j("rank-manifest-frozen", {"RANK-14", "RANK-17"},
          "every BUILDING or SEALED run's manifest has the run's count and recomputable set digest; "
          "each entry's items name existing versions of its topic and scope inside the run's cut "
          "with matching value digests and sum to its score; each partition's Top K is what the "
          "model computes from the versions the cut admits; manifest rows are written only with the "
          "BUILDING transition and afterwards change only their disposition");
  const auto inputs = version_inputs(run);
  const InputsByTriple triples = inputs_by_triple(inputs);  // once, not once per run
  const auto cuts = cuts_by_run(run.board);
  std::map<std::string, std::vector<const ManifestRow*>> rows;
  for (const ManifestRow& m : run.board.manifest) rows[m.run_id].push_back(&m);
  for (const RunRow& r : run.board.runs) {
    if (!past_collecting(r)) continue;
    check_manifest_rows(j, r, rows[r.run_id], triples);
    auto it = cuts.find(r.run_id);
    if (it == cuts.end()) continue;
    const std::set<std::string> away = merged_away(run, r.scope_id, r.mapping_epoch);
    if (away.empty()) {
      check_topk_model(j, r, it->second, run.board, inputs);
      continue;
    }
    // A run under a mapping that merged topics away scores without them (004:L89).
    std::vector<model::VersionInput> kept;
    for (const model::VersionInput& in : inputs) {
      if (in.scope_id != r.scope_id || !away.count(in.topic_id)) kept.push_back(in);
    }
    check_topk_model(j, r, it->second, run.board, kept);
  }
  check_manifest_writes(j, run, run_timeline(run));
  return j.v;
}

// RANK-18 (004:L100-101, L249-251).
Verdict check_run_seal(const RankingRun& run) {
  Judge j("rank-run-seal", {"RANK-18"},
          "a SEALED run has every manifest entry terminal with the disposition the rule gives (a "
          "REJECTED one with its reason), candidates exactly the CANDIDATE entries, and the "
          "recomputed candidate count and set digest; candidates are written only while the run is "
          "BUILDING, never after SEALED");
  std::map<std::string, std::vector<const ManifestRow*>> rows;
  std::map<std::string, std::vector<const CandidateRow*>> cands;
  for (const ManifestRow& m : run.board.manifest) rows[m.run_id].push_back(&m);
  for (const CandidateRow& c : run.board.candidates) cands[c.run_id].push_back(&c);
  for (const RunRow& r : run.board.runs) {
    if (r.status == "SEALED") check_sealed_run(j, run, r, rows[r.run_id], cands[r.run_id]);
  }
  check_candidate_writes(j, run, run_timeline(run));
  return j.v;
}

// RANK-22, RANK-23, RANK-36 (004:L101-104, L200, L255-266).
Verdict check_publish_fence(const RankingRun& run) {
  Judge j("rank-publish-fence", {"RANK-22", "RANK-23", "RANK-36"},
          "every PUBLISHED snapshot matches its SEALED run (scope, counts, digests) and holds the "
          "run's top candidates in the fixed order; each publish commits with its own scope's "
          "pointer CAS from the current epoch, watermarks never go back, items never change after "
          "READY, and the DB pointer names a PUBLISHED snapshot of its epoch");
  std::map<std::string, std::vector<const SnapshotItemRow*>> items;
  for (const SnapshotItemRow& i : run.board.items) items[i.snapshot_id].push_back(&i);
  std::map<std::string, std::set<std::string>> blocked = blocked_at_publish(run);
  for (const SnapshotRow& s : run.board.snapshots) {
    j.expect(!((s.status == "PUBLISHED") != (s.epoch >= 0)), [&] {
      return "snapshot " + s.snapshot_id + " is " + s.status + " with epoch " + std::to_string(s.epoch);
    });
    if (s.status == "PUBLISHED") check_published_snapshot(j, run, s, items[s.snapshot_id], blocked[s.snapshot_id]);
  }
  check_publish_commits(j, run);
  return j.v;
}

// ---- RANK-21, RANK-22, RANK-19: the scope control context.

// A scope's context as its committed control transactions leave it.
struct Ctx {
  int64_t version = 0, epoch = 0;
  std::string rule;
  std::string mapping, window_config;  // scope control only
  int64_t mapping_epoch = 0;
  std::string describe() const {
    return "v" + std::to_string(version) + ", " + rule + " epoch " + std::to_string(epoch) +
           (mapping.empty() ? "" : ", " + mapping + " epoch " + std::to_string(mapping_epoch) + ", " + window_config);
  }
};

std::string describe_pin(int64_t version, const std::string& rule, int64_t epoch, const std::string& mapping,
                         int64_t mapping_epoch, const std::string& window_config) {
  return Ctx{version, epoch, rule, mapping, window_config, mapping_epoch}.describe();
}

// Whether a run (or snapshot) pinned exactly the context x; the mapping and window configuration
// only with scope control.
bool pinned(const Ctx& x, bool scoped, int64_t version, const std::string& mapping, int64_t mapping_epoch,
            const std::string& window_config) {
  return version == x.version &&
         (!scoped || (mapping == x.mapping && mapping_epoch == x.mapping_epoch && window_config == x.window_config));
}

// Replays one committed statement on the contexts; returns the violation it shows ("" if none).
// 004:L86: a mapping switch registers the new mapping_version and advances mapping_activation_epoch
// in the context transaction; 004:L104: every rule, mapping or window-configuration transaction
// moves the monotone control version.
std::string apply_control(std::map<std::string, Ctx>& ctx, const BoardParams& p, const SqlStatementObs& s) {
  if (starts(s.sql, "INSERT OR IGNORE INTO ranking_scope_context") && !s.params.empty()) {
    ctx[s.params[0]] = Ctx{1, 1, "rule-v1", p.initial_mapping, p.initial_window_config, 1};
  } else if (starts(s.sql, "UPDATE ranking_scope_context SET rule_version") && s.params.size() == 2) {
    Ctx& x = ctx[s.params[1]];
    x.version += 1;
    x.epoch += 1;
    x.rule = s.params[0];
  } else if (const std::optional<MergeCas> m = merge_cas(s)) {
    // A merge's cutover CAS (004:L86): its epoch is the one its cutover row registered.
    Ctx& x = ctx[m->scope];
    const int64_t was = x.mapping_epoch;
    x.version += 1;
    x.mapping_epoch = m->epoch;
    x.mapping = m->mapping;
    if (m->epoch != was + 1) {
      return "a merge moved the mapping epoch of " + m->scope + " from " + std::to_string(was) + " to " +
             std::to_string(m->epoch);
    }
  } else if (starts(s.sql, "UPDATE ranking_scope_context SET mapping_version") && s.params.size() >= 2) {
    Ctx& x = ctx[s.params[1]];
    const bool epoch = has(s.sql, "mapping_activation_epoch = mapping_activation_epoch + 1");
    const bool version = has(s.sql, "version = version + 1");
    x.version += version ? 1 : 0;
    x.mapping_epoch += epoch ? 1 : 0;
    const std::string was = x.mapping;
    x.mapping = s.params[0];
    if (!epoch || !version || was == x.mapping) {
      return "switched the mapping of " + s.params[1] + " from " + was + " to " + x.mapping +
             (epoch ? "" : " without a new mapping_activation_epoch") +
             (version ? "" : " without a new context version");
    }
  } else if (starts(s.sql, "UPDATE ranking_scope_context SET window_config_version") && s.params.size() >= 2) {
    Ctx& x = ctx[s.params[1]];
    const bool version = has(s.sql, "version = version + 1");
    x.version += version ? 1 : 0;
    x.window_config = s.params[0];
    if (!version) return "changed the window configuration of " + s.params[1] + " without a new context version";
  } else if (starts(s.sql, "UPDATE ranking_scope_context SET version = version + 1") && !s.params.empty()) {
    // A risk control transaction (004:L104, L212): the version only (risk_checks.cc judges the epochs);
    // an absorption names its scope second.
    ++ctx[s.params.size() >= 3 ? s.params[1] : s.params[0]].version;
  }
  return "";
}

std::string context_version_move(const SqlStatementObs& s) {
  if (s.changes == 0 || !starts(s.sql, "UPDATE ranking_scope_context SET") || !has(s.sql, "version = version + 1")) {
    return "";
  }
  // The row is the one the top-level "WHERE scope_id = ?" names: its parameter is the one after
  // every placeholder before it, those of subqueries included (an absorption reads the global row).
  int depth = 0;
  size_t placeholders = 0;
  static constexpr std::string_view kWhere = "WHERE scope_id = ?";
  for (size_t i = 0; i < s.sql.size(); ++i) {
    if (depth == 0 && s.sql.compare(i, kWhere.size(), kWhere) == 0) {
      return placeholders < s.params.size() ? s.params[placeholders] : "";
    }
    if (s.sql[i] == '(') ++depth;
    if (s.sql[i] == ')') --depth;
    if (s.sql[i] == '?') ++placeholders;
  }
  return "";
}

// A PUBLISHED commit: the snapshot and its run carry exactly the context at the commit
// (004:L260-263: version, rule_version + epoch, window_config_version, mapping_version + epoch).
void check_publish_context(Judge& j, const RankingRun& run, const SqlCommit& c, const SqlStatementObs& s,
                           const std::map<std::string, Ctx>& ctx) {
  const BoardObs& b = run.board;
  auto sn = std::find_if(b.snapshots.begin(), b.snapshots.end(),
                         [&](const SnapshotRow& x) { return x.snapshot_id == s.params[1]; });
  if (sn == b.snapshots.end()) return;                  // rank-publish-fence's finding
  const std::string of = source_run_of(b, sn->run_id);  // a promoted replay: the run it recomputed
  auto r = std::find_if(b.runs.begin(), b.runs.end(), [&](const RunRow& x) { return x.run_id == of; });
  auto it = ctx.find(s.params[2]);
  const Ctx x = it == ctx.end() ? Ctx{} : it->second;
  const bool scoped = b.params.scope_control;
  j.expect(!(!pinned(x, scoped, sn->ctx_version, sn->mapping_version, sn->mapping_epoch, sn->window_config) ||
             sn->rule_version != x.rule || sn->rule_epoch != x.epoch || r == b.runs.end() ||
             !pinned(x, scoped, r->ctx_version, r->mapping_version, r->mapping_epoch, r->window_config)),
           [&] {
             return c.client + " published " + s.params[1] + " (context " +
                    describe_pin(sn->ctx_version, sn->rule_version, sn->rule_epoch, sn->mapping_version,
                                 sn->mapping_epoch, sn->window_config) +
                    ") while the context was " + x.describe();
           });
}

// Scope control: a run is created under the context as it is at its commit (004:L220, L222-229); a
// candidate commits only while the context is still its run's, and an entry is rejected
// 'context-changed' only after it moved (004:L230).
void check_run_context(Judge& j, const RankingRun& run, const SqlCommit& c, const SqlStatementObs& s,
                       const std::map<std::string, Ctx>& ctx) {
  const bool created = starts(s.sql, "INSERT INTO calculation_run") && !s.params.empty();
  const bool candidate = starts(s.sql, "INSERT INTO run_candidate") && s.params.size() >= 2;
  const bool rejected = starts(s.sql,
                               "UPDATE run_input_manifest SET disposition = 'REJECTED', reason = "
                               "'context-changed'") &&
                        !s.params.empty();
  if (!created && !candidate && !rejected) return;
  const std::string& id = candidate ? s.params[1] : s.params[0];
  const BoardObs& b = run.board;
  auto r = std::find_if(b.runs.begin(), b.runs.end(), [&](const RunRow& x) { return x.run_id == id; });
  if (r == b.runs.end()) return;  // rank-run-seal's and rank-scope-isolation's finding
  auto it = ctx.find(r->scope_id);
  const Ctx x = it == ctx.end() ? Ctx{} : it->second;
  const bool same = pinned(x, true, r->ctx_version, r->mapping_version, r->mapping_epoch, r->window_config) &&
                    r->rule_version == x.rule && r->rule_epoch == x.epoch;
  j.expect(same != rejected, [&] {
    const std::string what = created     ? "created run " + id
                             : candidate ? "wrote a candidate of run " + id
                                         : "rejected an entry of run " + id + " 'context-changed'";
    return c.client + " " + what + " (context " +
           describe_pin(r->ctx_version, r->rule_version, r->rule_epoch, r->mapping_version, r->mapping_epoch,
                        r->window_config) +
           ") while the context was " + x.describe();
  });
}

// Scope control: every manifest item of a run reads a window of the type its window configuration
// scores, so no run mixes window configurations (004:L220); a snapshot carries its run's mapping and
// window configuration (004:L262-263).
void check_pinned_inputs(Judge& j, const RankingRun& run) {
  const BoardObs& b = run.board;
  std::map<std::string, std::string> window_of;  // aggregate key -> window type
  for (const HeadRow& h : run.heads) window_of[h.aggregate_key] = h.window_type;
  std::map<std::string, const RunRow*> runs;
  for (const RunRow& r : b.runs) runs[r.run_id] = &r;
  for (const ManifestRow& m : b.manifest) {
    auto r = runs.find(m.run_id);
    if (r == runs.end()) continue;
    const std::string want = scored_window_type(b.params, *r->second);
    for (const std::string& item : split(m.items, ';')) {
      const std::string ak = item.substr(0, item.find(','));
      j.expect(!(!model::rule_reads_window(want, window_of[ak])), [&] {
        return "run " + m.run_id + " (" + r->second->window_config + ": " + want + " windows) has manifest item " + ak +
               " of a " + window_of[ak] + " window";
      });
    }
  }
  for (const SnapshotRow& sn : b.snapshots) {
    auto r = runs.find(sn.run_id);
    if (r == runs.end()) continue;  // a replay run's snapshot: rank-replay-isolation's
    j.expect(!(sn.mapping_version != r->second->mapping_version || sn.mapping_epoch != r->second->mapping_epoch ||
               sn.window_config != r->second->window_config),
             [&] {
               return "snapshot " + sn.snapshot_id + " carries " + sn.mapping_version + " epoch " +
                      std::to_string(sn.mapping_epoch) + ", " + sn.window_config + "; its run was made under " +
                      r->second->mapping_version + " epoch " + std::to_string(r->second->mapping_epoch) + ", " +
                      r->second->window_config;
             });
  }
}

void check_final_contexts(Judge& j, const RankingRun& run, const std::map<std::string, Ctx>& ctx) {
  for (const ContextRow& row : run.board.contexts) {
    auto it = ctx.find(row.scope_id);
    const Ctx x = it == ctx.end() ? Ctx{} : it->second;
    j.expect(!(row.version != x.version || row.rule_epoch != x.epoch || row.rule_version != x.rule ||
               (run.board.params.scope_control &&
                (row.mapping_version != x.mapping || row.mapping_epoch != x.mapping_epoch ||
                 row.window_config != x.window_config))),
             [&] {
               return "context of " + row.scope_id + " ends at " +
                      describe_pin(row.version, row.rule_version, row.rule_epoch, row.mapping_version,
                                   row.mapping_epoch, row.window_config) +
                      "; its committed control transactions give " + x.describe();
             });
  }
}

// RANK-21, RANK-22 (004:L101, L256-263, L297-303), and with scope control RANK-19 (004:L230):
// replaying the committed control transactions, each rule activation or rollback moves the scope's
// context version and rule_activation_epoch up by one (never back, never reused), each mapping
// switch its version and mapping_activation_epoch, each window-configuration change its version; the
// final rows agree; every publish commits under exactly the context its snapshot and run were made
// under; with scope control every run is created under the context of its commit, candidates
// commit only under their run's context, and no run or snapshot mixes window configurations or
// mappings.
Verdict check_control_epochs(const RankingRun& run) {
  Judge j("rank-control-epochs", {"RANK-21", "RANK-22", "RANK-19"},
          "each committed rule activation or rollback adds one to the scope's context version and "
          "rule_activation_epoch (a mapping switch: version and mapping_activation_epoch; a "
          "window-configuration change: version), the final context rows agree, every PUBLISHED "
          "snapshot was published under the context it and its run carry, and with scope control "
          "runs and candidates are written under their context and no run mixes window configurations");
  Verdict& v = j.v;  // a control statement's failure is not counted as a check: left by hand
  std::map<std::string, Ctx> ctx;
  const bool scoped = run.board.params.scope_control;
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (s.changes == 0) continue;
      if (const std::string why = apply_control(ctx, run.board.params, s); !why.empty()) {
        fail_verdict(v, c.client + " " + why);
      }
      if (starts(s.sql, "UPDATE ranking_snapshot SET status = 'PUBLISHED'") && s.params.size() >= 3) {
        check_publish_context(j, run, c, s, ctx);
      }
      if (scoped) check_run_context(j, run, c, s, ctx);
    }
  }
  check_final_contexts(j, run, ctx);
  if (scoped) check_pinned_inputs(j, run);
  return j.v;
}

namespace {

// Whether a request only reads rows of `snapshot_id` (a publisher reading the items it is about to
// cache: the first half of its Redis step).
bool reads_snapshot(const SqlCommit& c, const std::string& snapshot_id) {
  if (c.statements.empty()) return false;
  for (const SqlStatementObs& s : c.statements) {
    if (!starts(s.sql, "SELECT") || std::find(s.params.begin(), s.params.end(), snapshot_id) == s.params.end())
      return false;
  }
  return true;
}

// Why a final Redis pointer one publish behind the DB's is the end of the run cutting a publish in
// two, or "" if it is not: the DB pointer's last change is the publish's commit (004:L256, L266:
// the DB pointer is the authority, Redis a cache written after it), Redis holds the pointer that
// change replaced, and the process that committed it did nothing the world saw after it but read
// that snapshot's rows and cache them (the first half of its Redis step: a SET of that snapshot's
// key; no other Redis write, no other SQL request) before the run ended; and the step was still in
// flight: the run ended within the step's fault-free bound (BoardParams::publish_step_us) of the
// commit, stretched only by the time duration faults held the step's path (the publisher, the DB,
// Redis). A publisher that went on to other work, one idle long after its commit, or a pointer older
// than the one replaced, is not a publish in flight.
std::string publish_in_flight(const RankingRun& run, const std::string& scope, const std::vector<DbPointerSpan>& spans,
                              const std::string& cached, const fl::props::FaultBudget& budget) {
  if (spans.size() < 2) return "";
  const DbPointerSpan& last = spans.back();
  const DbPointerSpan& before = spans[spans.size() - 2];
  if (cached != std::to_string(before.epoch) + "|" + before.snapshot_id) return "";
  const std::string snapshot_key = "ranking:snapshot:" + scope + ":" + last.snapshot_id;
  for (const RedisWrite& w : run.board.redis_writes) {
    if (w.client != last.client || w.time_us < last.from) continue;
    const bool caches_it =
        w.argv.size() >= 2 && (w.argv[0] == "SET" || w.argv[0] == "set") && w.argv[1] == snapshot_key;
    if (!caches_it) return "";
  }
  for (const SqlCommit& c : run.commits) {
    if (c.client == last.client && c.time_us > last.from && !reads_snapshot(c, last.snapshot_id)) return "";
  }
  const std::vector<std::string> path = {last.client, "db", "redis"};
  const int64_t held_us = budget.covered_us(path, last.from, run.end_us);
  const int64_t sound_us = run.end_us - last.from - held_us;
  if (sound_us > run.board.params.publish_step_us) return "";
  return "publish in flight at the end: " + last.client + " committed pointer " + std::to_string(last.epoch) + "|" +
         last.snapshot_id + " at " + std::to_string(last.from) + " us and the run ended " +
         std::to_string(run.end_us - last.from) + " us later (" + std::to_string(held_us) +
         " us of it held by faults) before its Redis step";
}

}  // namespace

// RANK-24 (004:L266, L312, L317): every pointer the Redis server stored was the DB pointer at some
// moment since Redis last lost its data; every cached snapshot is a PUBLISHED one with its items;
// at the end the cached pointer is the DB pointer, or absent.
Verdict check_pointer_cache(const RankingRun& run) {
  Judge j("rank-pointer-cache", {"RANK-24"},
          "each Redis pointer write stores an (epoch, snapshot) the DB pointer held at some moment "
          "since Redis last lost its data, never a lower epoch than the key held; each cached "
          "snapshot is PUBLISHED with its items; the final cached pointer is the DB pointer or absent");
  Verdict& v = j.v;  // the final pointer: counted, then passed, exempted or failed by branch
  const BoardObs& b = run.board;
  const auto history = pointer_history(run);
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  std::map<std::string, std::string> item_text;
  std::map<std::string, std::string> status;
  for (const SnapshotRow& s : b.snapshots) status[s.snapshot_id] = s.status;
  for (const SnapshotItemRow& i : b.items) {
    std::string& t = item_text[i.snapshot_id];
    t += (t.empty() ? "" : ";") + std::to_string(i.rank_no) + ":" + i.topic_id + ":" + std::to_string(i.score);
  }
  std::map<std::string, int64_t> held;  // key -> epoch since the last loss
  size_t loss = 0;
  int64_t since = 0;
  for (const RedisWrite& w : b.redis_writes) {
    while (loss < b.redis_losses.size() && b.redis_losses[loss] <= w.time_us) {
      since = b.redis_losses[loss++];
      held.clear();
    }
    if (w.argv.size() < 3 || (w.argv[0] != "SET" && w.argv[0] != "set")) continue;
    const std::string& key = w.argv[1];
    if (starts(key, "ranking:pointer:")) {
      const std::string scope = key.substr(16);
      const size_t bar = w.argv[2].find('|');
      const int64_t e = std::stoll(w.argv[2].substr(0, bar));
      const std::string id = bar == std::string::npos ? "" : w.argv[2].substr(bar + 1);
      bool ok = false;
      auto h = history.find(scope);
      for (const DbPointerSpan& s : h == history.end() ? std::vector<DbPointerSpan>{} : h->second) {
        if (s.epoch == e && s.snapshot_id == id && s.from <= w.time_us && s.to > since) ok = true;
      }
      j.expect(!(!ok || (held.count(key) && held[key] > e)), [&] {
        return w.client + " stored pointer " + w.argv[2] + " for " + scope + " at " + std::to_string(w.time_us) +
               ": not the DB pointer at any moment since Redis last lost its "
               "data" +
               (held.count(key) ? " (the key held epoch " + std::to_string(held[key]) + ")" : "");
      });
      held[key] = std::max(held[key], e);
    } else if (starts(key, "ranking:snapshot:")) {
      const std::string id = key.substr(key.find(':', 17) + 1);
      j.expect(!(status[id] != "PUBLISHED" || item_text[id] != w.argv[2]), [&] {
        return w.client + " cached snapshot " + id + " (" + status[id] + ") with items that are not its own";
      });
    }
  }
  for (const PointerRow& p : b.pointers) {
    if (p.snapshot_id.empty()) continue;
    auto it = b.redis_end.find("ranking:pointer:" + p.scope_id);
    ++v.checks;
    if (it == b.redis_end.end() || it->second == std::to_string(p.epoch) + "|" + p.snapshot_id) continue;
    auto h = history.find(p.scope_id);
    if (const std::string why =
            h == history.end() ? "" : publish_in_flight(run, p.scope_id, h->second, it->second, budget);
        !why.empty()) {
      v.exempt(why);
      continue;
    }
    fail_verdict(v, "at the end Redis serves pointer " + it->second + " for " + p.scope_id + ", the DB pointer is " +
                        std::to_string(p.epoch) + "|" + p.snapshot_id);
  }
  return j.v;
}

}  // namespace fl::ranking::props
