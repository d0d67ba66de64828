#include "properties/ranking/checks.h"

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <map>
#include <set>

#include "impl/ports/digest.h"
#include "properties/common/fault_budget.h"
#include "properties/common/judge.h"

namespace fl::ranking::props {
namespace {

using fl::props::Judge;
using model::parse_event;

std::string field(const std::map<std::string, std::string>& e, const std::string& k) {
  auto it = e.find(k);
  return it == e.end() ? std::string() : it->second;
}

std::string where(const LogRecordObs& r) { return std::to_string(r.partition) + "@" + std::to_string(r.offset); }

bool mentions(const std::string& sql, const char* table) { return sql.find(table) != std::string::npos; }

}  // namespace

std::map<std::string, const VersionRow*> versions_by_triple(const RankingRun& run) {
  std::map<std::string, const VersionRow*> out;
  for (const VersionRow& r : run.versions) {
    out[r.aggregate_key + "/g" + std::to_string(r.generation) + "/v" + std::to_string(r.version)] = &r;
  }
  return out;
}

std::string value_digest(const model::Value& v) {
  return text_digest(std::to_string(v.raw_count) + "|" + std::to_string(v.effective) + "|" +
                     std::to_string(v.suspicious) + "|" + std::to_string(v.risk_adjusted));
}

std::string text_digest(const std::string& s) { return fnv_hex(s); }

namespace {

// The fault that left emit `op` indeterminate, described; nullopt if none touched it.
std::optional<std::string> emit_fault(const fl::props::FaultBudget& budget, const EmitOp& op) {
  if (auto why = budget.touched(op.id)) return why;
  const int64_t done_us = op.complete_us >= 0 ? op.complete_us : budget.end_us();
  for (const auto& [down_us, up_us] : budget.downtimes(op.process)) {
    if (down_us >= op.invoke_us && down_us <= done_us) {
      return "crash of " + op.process + " at " + std::to_string(down_us) + " us, the emit in flight";
    }
  }
  return std::nullopt;
}

}  // namespace

// RANK-39 (004:L141, L145): every event whose fact committed reached the stable log, or was
// rejected with the reason the contract gives, or is still visible as a PENDING outbox row.
Verdict check_ingest_durable(const RankingRun& run) {
  Judge j("rank-ingest-durable", {"RANK-39"},
          "every committed event is in the pre-normalization log, rejected for a contract reason, or still "
          "PENDING in the outbox; no valid event is rejected except as a replay of a logged one");
  std::set<std::string> logged, pending;
  for (const LogRecordObs& r : run.stable) logged.insert(field(r.fields(), "eventId"));
  for (const auto& [id, status] : run.outbox) {
    if (status == "PENDING") pending.insert(id);
  }
  const fl::props::FaultBudget budget(run.faults, run.end_us);
  std::map<std::string, std::string> rejected;
  for (const auto& kv_ : run.rejects) {
    const auto& payload = kv_.first;
    const auto& reason = kv_.second;
    const auto e = parse_event(payload);
    const std::string id = field(e, "eventId");
    const std::string why = model::contract_violation(e, run.config);
    j.expect(!(reason == "replay" ? !logged.count(id) : why.empty()), [&] {
      return "event " + id + " rejected as " + reason + " although " +
             (reason == "replay" ? "it never reached the log" : "it satisfies the contract");
    });
    rejected[id] = reason;
  }
  for (const EmitOp& op : run.emits) {
    if (op.outcome == Outcome::kFail) continue;
    const std::string id = field(parse_event(op.payload), "eventId");
    if (op.outcome == Outcome::kInfo && !logged.count(id) && !rejected.count(id) && !pending.count(id)) {
      // An indeterminate commit (or a producer that died mid-call) is excused only by a fault that
      // touched this emit: one that names it (a lost or held message, a broken call, an I/O error
      // of its statement) or its producer's crash while it was in flight.
      const std::optional<std::string> why = emit_fault(budget, op);
      if (why) {
        j.v.exempt("emit indeterminate: " + *why);
      } else {  // an uncounted failure: left as it was
        fail_verdict(j.v, op.process + " emit of " + id + " indeterminate without a fault, and the event is nowhere");
      }
      continue;
    }
    j.expect(logged.count(id) || rejected.count(id) || pending.count(id), [&] {
      return op.process + " committed event " + id + " but it is neither in the log, nor rejected, nor PENDING";
    });
  }
  return j.v;
}

// RANK-1 (004:L16-19, L279): scope ids are canonical, and an invalid combination is rejected,
// never accepted nor folded into the global scope.
Verdict check_scope_canonical(const RankingRun& run) {
  Judge j("rank-scope-canonical", {"RANK-1"},
          "every aggregate's scope_id is canonical (fixed order, explicit ALL); no accepted event has an "
          "invalid scope combination; each keyed copy is in a scope its event derives");
  for (const HeadRow& h : run.heads) {
    j.expect(model::is_canonical_scope(h.scope_id, run.config),
             [&] { return "head " + h.aggregate_key + ": scope not canonical"; });
  }
  std::map<std::pair<int32_t, int64_t>, const std::map<std::string, std::string>*> stable;  // the records' parses
  for (const LogRecordObs& r : run.stable) {
    const auto& e = r.fields();
    j.expect(!model::scopes_of(e, run.config).empty(),
             [&] { return "stable " + where(r) + ": invalid scope dimensions accepted"; });
    stable[{r.partition, r.offset}] = &e;
  }
  for (const LogRecordObs& r : run.keyed) {
    const auto& k = r.fields();
    auto it = stable.find({std::stoi("0" + field(k, "sourcePartition")), std::stoll("0" + field(k, "sourceOffset"))});
    if (it == stable.end()) {
      j.expect(false, [&] { return "keyed " + where(r) + ": its source coordinates name no stable record"; });
      continue;
    }
    const auto scopes = model::scopes_of(*it->second, run.config);
    j.expect(std::find(scopes.begin(), scopes.end(), field(k, "scopeId")) != scopes.end(),
             [&] { return "keyed " + where(r) + ": scope " + field(k, "scopeId") + " is not one its event derives"; });
  }
  return j.v;
}

// RANK-3 (004:L143, L158, L179): all aggregate state is keyed by the full key; the heads are
// exactly the keys the accepted events derive.
Verdict check_full_key(const RankingRun& run) {
  Judge j("rank-full-key", {"RANK-3"},
          "each head's aggregate_key is its five fields, and the set of heads equals the full keys the "
          "accepted events derive (none missing, none extra); salted shards carry their full key and "
          "merge only into it");
  Verdict& v = j.v;  // a head is one check that may fail twice (its fields, its key): counted by hand
  const auto expected = expected_values_of(run);
  std::set<std::string> seen;
  for (const HeadRow& h : run.heads) {
    ++v.checks;
    const std::string five = h.topic_id + "#" + h.scope_id + "#" + h.window_type + "#" +
                             std::to_string(h.window_start) + "#" + h.metric_type;
    if (five != h.aggregate_key) fail_verdict(v, "head " + h.aggregate_key + " holds the fields of " + five);
    if (!expected.count(h.aggregate_key))
      fail_verdict(v, "head " + h.aggregate_key + ": no accepted event derives this key");
    seen.insert(h.aggregate_key);
  }
  for (const auto& kv_ : expected) {
    const auto& ak = kv_.first;
    const auto& value = kv_.second;
    j.expect(seen.count(ak) > 0, [&] { return "key " + ak + " (" + value.describe() + ") has no head"; });
  }
  check_shard_keys(run, j);
  return j.v;
}

// RANK-4, RANK-5 (004:L61, L98, L204-209): each head's value is the function of the distinct
// (source, event_id) accepted for its key: raw count, distinct actors, suspicious, adjusted.
Verdict check_event_idempotence(const RankingRun& run) {
  Judge j("rank-event-idempotence", {"RANK-4", "RANK-5"},
          "the value each head points to equals the model's value from the distinct accepted events "
          "(raw, effective, suspicious and risk-adjusted kept apart; events the late side output took "
          "excluded)");
  const auto expected = expected_values_of(run);
  const auto versions = versions_by_triple(run);
  for (const HeadRow& h : run.heads) {
    auto e = expected.find(h.aggregate_key);
    if (e == expected.end()) continue;  // rank-full-key's finding
    auto it = versions.find(h.aggregate_key + "/g" + std::to_string(h.generation) + "/v" + std::to_string(h.version));
    j.expect(it != versions.end() && it->second->value == e->second, [&] {
      if (it == versions.end()) return "head " + h.aggregate_key + " points to a missing version";
      return "head " + h.aggregate_key + " g" + std::to_string(h.generation) + "/v" + std::to_string(h.version) +
             " holds " + it->second->value.describe() + ", the accepted events give " + e->second.describe();
    });
  }
  return j.v;
}

// RANK-11 (004:L98, L319): versions are unique by triple, never updated, and carry their digest.
Verdict check_version_immutable(const RankingRun& run) {
  Judge j("rank-version-immutable", {"RANK-11"},
          "no committed statement updates, replaces or deletes a TOPIC_WINDOW_METRIC_VERSION row; each row's "
          "value_digest is the digest of its value and names a source-offset cut");
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (!mentions(s.sql, "topic_window_metric_version")) continue;
      j.expect(!(s.sql.rfind("UPDATE", 0) == 0 || s.sql.rfind("DELETE", 0) == 0 || mentions(s.sql, "OR REPLACE")),
               [&] { return c.client + " committed `" + s.sql.substr(0, 60) + "...`"; });
    }
  }
  for (const VersionRow& r : run.versions) {
    j.expect(value_digest(r.value) == r.digest && !r.cut_ref.empty(), [&] {
      return "version " + r.aggregate_key + "/g" + std::to_string(r.generation) + "/v" + std::to_string(r.version) +
             ": digest " + r.digest + " of " + r.value.describe() + " (cut '" + r.cut_ref + "')";
    });
  }
  return j.v;
}

// (declared in checks.h)
std::string head_key_moved(const SqlStatementObs& s) {
  if (!mentions(s.sql, "topic_window_metric ") || mentions(s.sql, "_version (") || s.sql.rfind("UPDATE", 0) != 0)
    return "";
  if (s.params.size() == 5) return s.params[2];
  if (s.params.size() == 4) return s.params[1];
  return "";
}

// RANK-12 (004:L98, L320-321): replaying the committed head changes, a head only ever moves from
// (g, v) to (g, v+1), onto an existing version row, and never back to a generation it left.
namespace {

struct HeadState {
  int64_t g = 0, v = 0;
  std::set<int64_t> left;
};

// Whether an UPDATE of a head moves it from (g, v).
bool head_from_matches(const SqlStatementObs& s, int64_t g, int64_t v) {
  if (s.params.size() == 5) return std::stoll(s.params[3]) == g && std::stoll(s.params[4]) == v;
  if (s.params.size() == 4) return std::stoll(s.params[2]) == g && std::stoll(s.params[0]) == v + 1;
  return false;
}

// Applies one commit's head changes to `heads`, judging each against the state it moves from. An
// in-doubt commit's statements carry no change counts: each applies only where it would have
// (its guard holds), and nothing is judged.
void replay_head_changes(Judge& j, const SqlCommit& c, bool in_doubt, std::map<std::string, HeadState>& heads) {
  for (const SqlStatementObs& s : c.statements) {
    if ((!in_doubt && s.changes == 0) || !mentions(s.sql, "topic_window_metric ") || mentions(s.sql, "_version ("))
      continue;
    if (s.sql.rfind("INSERT", 0) == 0 && s.params.size() >= 7) {
      if (!in_doubt || !heads.count(s.params[0])) heads[s.params[0]] = HeadState{std::stoll(s.params[6]), 0, {}};
    } else if (s.sql.rfind("UPDATE", 0) == 0 && s.params.size() == 5) {
      // A generation switch (004:L320): from the current head to a generation never seen on it.
      HeadState& h = heads[s.params[2]];
      const int64_t to_g = std::stoll(s.params[0]), from_g = std::stoll(s.params[3]);
      if (in_doubt && !head_from_matches(s, h.g, h.v)) continue;
      j.expect(!(from_g != h.g || std::stoll(s.params[4]) != h.v || to_g <= h.g || h.left.count(to_g)), [&] {
        return c.client + " switched head " + s.params[2] + " from g" + std::to_string(h.g) + "/v" +
               std::to_string(h.v) + " to g" + std::to_string(to_g);
      });
      h.left.insert(h.g);
      h.g = to_g;
      h.v = std::stoll(s.params[1]);
    } else if (s.sql.rfind("UPDATE", 0) == 0 && s.params.size() == 4) {
      // SET current_aggregate_version = new WHERE key, generation, version (the impl's shape) —
      // judged by its effect: what the head was and what it became.
      HeadState& h = heads[s.params[1]];
      const int64_t to_v = std::stoll(s.params[0]), g = std::stoll(s.params[2]);
      if (in_doubt && !head_from_matches(s, h.g, h.v)) continue;
      j.expect(!(g != h.g || to_v != h.v + 1 || h.left.count(g)), [&] {
        return c.client + " moved head " + s.params[1] + " from g" + std::to_string(h.g) + "/v" + std::to_string(h.v) +
               " to g" + std::to_string(g) + "/v" + std::to_string(to_v);
      });
      if (g != h.g) h.left.insert(h.g);
      h.g = g;
      h.v = to_v;
    }
  }
}

}  // namespace

// A transaction whose COMMIT answered an I/O error may have applied (SqlCommit::in_doubt): its
// head changes are replayed as if committed on a copy, and a head whose committed replay cannot
// explain its end state may take the in-doubt replay's state instead, once an in-doubt commit has
// touched it (a later committed change from that state confirms the commit applied).
Verdict check_head_fence(const RankingRun& run) {
  Judge j("rank-head-fence", {"RANK-12"},
          "every committed head change moves (generation, version) from the current value by one version "
          "within a generation, and no generation returns after a switch (a commit answered an I/O error "
          "at COMMIT may have applied)");
  std::map<std::string, HeadState> heads;
  std::map<std::string, std::vector<HeadState>> alternatives;  // states an in-doubt commit may have left
  for (const SqlCommit& c : run.commits) {
    if (c.in_doubt) {
      std::map<std::string, HeadState> maybe = heads;
      Judge scratch("scratch", {}, "");
      replay_head_changes(scratch, c, /*in_doubt=*/true, maybe);
      for (const auto& [key, h] : maybe) {
        auto it = heads.find(key);
        if (it == heads.end() || it->second.g != h.g || it->second.v != h.v) alternatives[key].push_back(h);
      }
      continue;
    }
    if (!c.ok) continue;
    // A committed change from a state only an in-doubt commit explains: that commit applied.
    for (const SqlStatementObs& s : c.statements) {
      const std::string key = head_key_moved(s);
      auto alt = alternatives.find(key);
      if (key.empty() || alt == alternatives.end() || s.changes == 0) continue;
      for (const HeadState& h : alt->second) {
        if (head_from_matches(s, h.g, h.v) && !head_from_matches(s, heads[key].g, heads[key].v)) heads[key] = h;
      }
    }
    replay_head_changes(j, c, /*in_doubt=*/false, heads);
  }
  for (const HeadRow& r : run.heads) {
    auto it = heads.find(r.aggregate_key);
    const bool committed = it != heads.end() && it->second.g == r.generation && it->second.v == r.version;
    bool doubted = false;
    for (const HeadState& h : alternatives[r.aggregate_key])
      doubted = doubted || (h.g == r.generation && h.v == r.version);
    j.expect(committed || doubted, [&] {
      return "head " + r.aggregate_key + " ends at g" + std::to_string(r.generation) + "/v" +
             std::to_string(r.version) + ", which no committed change explains";
    });
  }
  return j.v;
}

// RANK-41 (004:L152, L484 F03): every stable record is carried on exactly (its mapped scopes) or
// parked as a candidate term, and each keyed partition's checkpoint has consumed the whole log.
Verdict check_offset_continuity(const RankingRun& run) {
  Judge j("rank-offset-continuity", {"RANK-41"},
          "each stable offset reaches the keyed log for every scope it derives (or the candidate-term "
          "queue), and every keyed partition's checkpoint reaches its log end: no gap");
  std::set<std::tuple<int32_t, int64_t, std::string>> carried;
  for (const LogRecordObs& r : run.keyed) {
    const auto& k = r.fields();
    carried.insert({std::stoi("0" + field(k, "sourcePartition")), std::stoll("0" + field(k, "sourceOffset")),
                    field(k, "scopeId")});
  }
  std::set<std::pair<int32_t, int64_t>> parked(run.candidate_terms.begin(), run.candidate_terms.end());
  for (const LogRecordObs& r : run.stable) {
    const auto& e = r.fields();
    if (model::main_topic(field(e, "topicHints"), run.config).empty()) {
      j.expect(parked.count({r.partition, r.offset}) > 0,
               [&] { return "stable " + where(r) + ": unmapped but not queued"; });
      continue;
    }
    for (const std::string& scope : model::scopes_of(e, run.config)) {
      j.expect(carried.count({r.partition, r.offset, scope}) > 0,
               [&] { return "stable " + where(r) + " never reached scope " + scope; });
    }
  }
  for (const auto& kv_ : run.keyed_end) {
    const auto& p = kv_.first;
    const auto& end = kv_.second;
    auto it = run.checkpoints.find(p);
    const int64_t at = it == run.checkpoints.end() ? 0 : it->second;
    j.expect(at == end, [&] {
      return "keyed partition " + std::to_string(p) + ": checkpoint at " + std::to_string(at) + ", log end " +
             std::to_string(end);
    });
  }
  return j.v;
}

// RANK-31 (004:L78, L485 F04): aggregates are keyed by main topics only; low-confidence and
// unmapped terms never reach the keyed log.
// A scope's mapping activations (commit time, mapping_version, mapping_activation_epoch), from its
// committed mapping switches, after the initial mapping (epoch 1, active from the start).
struct MappingActivation {
  int64_t at_us = 0;
  std::string version;
  int64_t epoch = 0;
};
std::map<std::string, std::vector<MappingActivation>> mapping_activations(const RankingRun& run) {
  std::map<std::string, std::vector<MappingActivation>> out;
  for (const SqlCommit& c : run.commits) {
    if (!c.ok) continue;
    for (const SqlStatementObs& s : c.statements) {
      if (s.changes == 0 || s.params.size() < 3 ||
          s.sql.rfind("UPDATE ranking_scope_context SET mapping_version", 0) != 0) {
        continue;
      }
      if (const std::optional<MergeCas> m = merge_cas(s)) {  // a merge's cutover CAS (004:L86)
        out[m->scope].push_back({c.time_us, m->mapping, m->epoch});
        continue;
      }
      if (s.params.size() < 4) continue;
      const bool advances = s.sql.find("mapping_activation_epoch = mapping_activation_epoch + 1") != std::string::npos;
      out[s.params[1]].push_back({c.time_us, s.params[0], std::stoll("0" + s.params[3]) + (advances ? 1 : 0)});
    }
  }
  return out;
}

// Scope control (004:L140, L142, L86): each keyed copy carries the mapping its scope's context had
// active at some moment between the stable record's append and the copy's append: activated before
// the copy was appended, and not yet replaced when the stable record was appended.
void check_mapping_stamps(Judge& j, const RankingRun& run) {
  const auto acts = mapping_activations(run);
  std::map<std::pair<int32_t, int64_t>, int64_t> stable_at;
  for (const LogRecordObs& r : run.stable) stable_at[{r.partition, r.offset}] = r.append_us;
  for (const LogRecordObs& r : run.keyed) {
    const auto& k = r.fields();
    auto ts =
        stable_at.find({std::stoi("0" + field(k, "sourcePartition")), std::stoll("0" + field(k, "sourceOffset"))});
    if (ts == stable_at.end()) continue;  // rank-scope-canonical's finding
    std::vector<MappingActivation> a = {{INT64_MIN, run.board.params.initial_mapping, 1}};
    if (auto it = acts.find(field(k, "scopeId")); it != acts.end())
      a.insert(a.end(), it->second.begin(), it->second.end());
    bool active = false;
    for (size_t i = 0; i < a.size(); ++i) {
      active |= a[i].version == field(k, "mappingVersion") && std::to_string(a[i].epoch) == field(k, "mappingEpoch") &&
                a[i].at_us <= r.append_us && (i + 1 == a.size() || a[i + 1].at_us > ts->second);
    }
    j.expect(active, [&] {
      return "keyed " + where(r) + " of " + field(k, "scopeId") + " carries " + field(k, "mappingVersion") + " epoch " +
             field(k, "mappingEpoch") +
             ", not a mapping its scope had active between the "
             "stable append at " +
             std::to_string(ts->second) + " and its own at " + std::to_string(r.append_us);
    });
  }
}

Verdict check_normalization(const RankingRun& run) {
  Judge j("rank-normalization", {"RANK-31"},
          "every head and keyed record names a main topic; each keyed copy's topic is its hint's main topic "
          "under the mapping version");
  std::map<std::pair<int32_t, int64_t>, std::string> hint;
  for (const LogRecordObs& r : run.stable) hint[{r.partition, r.offset}] = field(r.fields(), "topicHints");
  for (const LogRecordObs& r : run.keyed) {
    const auto& k = r.fields();
    auto it = hint.find({std::stoi("0" + field(k, "sourcePartition")), std::stoll("0" + field(k, "sourceOffset"))});
    if (it == hint.end()) continue;  // rank-scope-canonical's finding
    const std::string main = model::main_topic(it->second, run.config);
    j.expect(
        !main.empty() && (main == field(k, "topicId") ||
                          (run.merges.enabled && merged_topic(run, main, field(k, "scopeId")) == field(k, "topicId"))),
        [&] { return "keyed " + where(r) + ": hint " + it->second + " became topic " + field(k, "topicId"); });
  }
  for (const HeadRow& h : run.heads) {
    j.expect(model::main_topic(h.topic_id, run.config) == h.topic_id,
             [&] { return "head " + h.aggregate_key + ": not a main topic"; });
  }
  if (run.board.params.scope_control) check_mapping_stamps(j, run);
  return j.v;
}

std::vector<PropertyInfo> ranking_properties() {
  return {
      {"rank-ingest-durable",
       {"RANK-39"},
       "004 §6.1-6.2: committed events reach the log, a recorded reject or a pending outbox row"},
      {"rank-scope-canonical", {"RANK-1"}, "004 L16-19: canonical scope ids, invalid combinations rejected"},
      {"rank-full-key", {"RANK-3"}, "004 §6.1, §6.4: heads keyed by exactly the full aggregation keys"},
      {"rank-event-idempotence", {"RANK-4", "RANK-5"}, "004 §4.2, §9.2: values from the distinct accepted events"},
      {"rank-distinct-sketch",
       {"RANK-5"},
       "004 §7.2-7.3: HyperLogLog sketches merged by register max, estimates within bound"},
      {"rank-version-immutable", {"RANK-11"}, "004 §4.2: version rows immutable, digest matches"},
      {"rank-head-fence", {"RANK-12"}, "004 §12.2: head moves by the double CAS only"},
      {"rank-offset-continuity", {"RANK-41"}, "004 §6.3, F03: no offset skipped between the logs and checkpoints"},
      {"rank-normalization", {"RANK-31"}, "004 §3.2: aggregates keyed by main topics only"},
      {"rank-merge-ownership",
       {"RANK-32", "RANK-33", "RANK-35"},
       "004 §3.3: across a merge's barrier each event counts once, owned by its stable offset alone"},
      {"rank-merge-cutover",
       {"RANK-34"},
       "004 §3.3: per-scope cutovers switch at their CAS only, never revert; the run completes last"},
      {"rank-watermark", {"RANK-7"}, "004 §6.3: watermarks never move back nor run ahead; idle only after the timeout"},
      {"rank-idle-recovery", {"RANK-8"}, "004 §6.3: a returning partition catches up before it rejoins"},
      {"rank-window-lifecycle", {"RANK-9"}, "004 §6.3: OPEN -> CLOSED -> FINAL -> PURGED; FINAL is immutable"},
      {"rank-dedup-purge", {"RANK-6"}, "004 §6.3: dedup state purged only after FINAL, evidence and reconciliation"},
      {"rank-run-partitions",
       {"RANK-15", "RANK-16", "RANK-20"},
       "004 §4.2, §10.1: every expected partition, cuts and Top K results closed"},
      {"rank-manifest-frozen",
       {"RANK-14", "RANK-17"},
       "004 §4.2, §9.2: manifests pinned to versions in the cut, frozen at BUILDING"},
      {"rank-run-seal", {"RANK-18"}, "004 §10.1: sealed runs closed, candidates only while BUILDING"},
      {"rank-publish-fence",
       {"RANK-22", "RANK-23", "RANK-36"},
       "004 §10.1: publish by one transaction with the pointer CAS"},
      {"rank-pointer-cache", {"RANK-24"}, "004 §10.1, §12.1: the Redis pointer caches the DB pointer only"},
      {"rank-control-epochs",
       {"RANK-21", "RANK-22", "RANK-19"},
       "004 §4.2, §9.2, §11.1: control epochs only advance; runs, candidates and publishes under the current context"},
      {"rank-completeness-gate", {"RANK-10"}, "004 §6.3, §10.1: no publish while a required source is incomplete"},
      {"rank-replay-isolation",
       {"RANK-25"},
       "004 §4.2, §10.1: replay runs never reach the official tables or the pointer"},
      {"rank-scope-isolation",
       {"RANK-2"},
       "004 §1, §10.2: every run, candidate, snapshot, pointer and Redis key of one scope"},
      {"rank-candidate-cache",
       {"RANK-40", "RANK-14"},
       "004 §12.1: the Redis candidate list is a sealed run's, rebuilt in isolation under a pinned context"},
      {"rank-reconciliation",
       {"RANK-38"},
       "004 §15.3: reconciliations compare only under one frozen context, else refuse"},
      {"rank-risk-actions",
       {"RANK-26", "RANK-27", "RANK-29"},
       "004 §9.2: risk actions are control transactions advancing one epoch; expiry by its own EXPIRED"},
      {"rank-risk-publish",
       {"RANK-22", "RANK-26"},
       "004 §9.2, §10.1: publish under the current and absorbed risk epochs, blocked topics left out"},
      {"rank-emergency-block",
       {"RANK-28", "RANK-26"},
       "004 §9.3, §10.3: the edge denylist states the DB's blocks and the query layer applies it"},
      {"rank-risk-response",
       {"RANK-19", "RANK-21"},
       "004 §9.2, §12: risk verdicts commit only under the context their request carried"}};
}

std::vector<Verdict> check_ranking(const RankingRun& run, const std::vector<std::string>& properties) {
  static const std::map<std::string, Verdict (*)(const RankingRun&)> kCheckers = {
      {"rank-ingest-durable", check_ingest_durable},
      {"rank-scope-canonical", check_scope_canonical},
      {"rank-full-key", check_full_key},
      {"rank-event-idempotence", check_event_idempotence},
      {"rank-version-immutable", check_version_immutable},
      {"rank-head-fence", check_head_fence},
      {"rank-offset-continuity", check_offset_continuity},
      {"rank-normalization", check_normalization},
      {"rank-run-partitions", check_run_partitions},
      {"rank-manifest-frozen", check_manifest_frozen},
      {"rank-run-seal", check_run_seal},
      {"rank-publish-fence", check_publish_fence},
      {"rank-pointer-cache", check_pointer_cache},
      {"rank-control-epochs", check_control_epochs},
      {"rank-watermark", check_watermark},
      {"rank-idle-recovery", check_idle_recovery},
      {"rank-window-lifecycle", check_window_lifecycle},
      {"rank-dedup-purge", check_dedup_purge},
      {"rank-completeness-gate", check_completeness_gate},
      {"rank-replay-isolation", check_replay_isolation},
      {"rank-scope-isolation", check_scope_isolation},
      {"rank-candidate-cache", check_candidate_cache},
      {"rank-reconciliation", check_reconciliation},
      {"rank-risk-actions", check_risk_actions},
      {"rank-risk-publish", check_risk_publish},
      {"rank-emergency-block", check_emergency_block},
      {"rank-risk-response", check_risk_response},
      {"rank-distinct-sketch", check_distinct_sketch},
      {"rank-merge-ownership", check_merge_ownership},
      {"rank-merge-cutover", check_merge_cutover}};
  static const std::set<std::string> kWatermark = {"rank-watermark", "rank-idle-recovery", "rank-window-lifecycle",
                                                   "rank-dedup-purge", "rank-completeness-gate"};
  static const std::set<std::string> kBoard = {
      "rank-run-partitions",  "rank-manifest-frozen", "rank-run-seal",         "rank-publish-fence",
      "rank-pointer-cache",   "rank-control-epochs",  "rank-replay-isolation", "rank-completeness-gate",
      "rank-scope-isolation", "rank-candidate-cache", "rank-reconciliation",   "rank-risk-actions",
      "rank-risk-publish",    "rank-emergency-block", "rank-risk-response"};
  std::vector<Verdict> out;
  for (const std::string& p : properties) {
    if (kBoard.count(p) && run.board.params.scopes.empty()) continue;     // no board in this scenario
    if (kWatermark.count(p) && !run.wm.params.enabled) continue;          // no watermarks in this scenario
    if (p == "rank-distinct-sketch" && !run.sketch.enabled) continue;     // no sketches in this scenario
    if (p.rfind("rank-merge-", 0) == 0 && !run.merges.enabled) continue;  // no merges in this scenario
    auto it = kCheckers.find(p);
    if (it != kCheckers.end()) out.push_back(it->second(run));
  }
  return out;
}

}  // namespace fl::ranking::props
