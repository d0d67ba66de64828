#include "properties/toy/visit_checks.h"

#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include "impl/ports/assert.h"
#include "properties/common/judge.h"
#include "sim/node_clock.h"

namespace fl::toy {
namespace {

using sim::redis::CommandRecord;

// One request id as the world saw it: its visits (a client records one per id) and the
// commands Redis ran for them.
struct Visit {
  const sim::Operation* op = nullptr;  // the first visit with this id
  Outcome outcome = Outcome::kFail;    // the best of its visits: ok, else info, else fail
  std::vector<const CommandRecord*> increments;
  int requests_at_redis = 0;  // commands Redis ran for it as sent, errors aside (a script counts once)
};

struct Tally {
  std::map<std::string, Visit> by_id;
  std::vector<std::pair<const std::string*, const Visit*>> in_order;  // by first invocation
  std::vector<const CommandRecord*> unattributed;
};

Outcome outcome_of(const sim::Operation& op) { return op.completed() ? op.outcome : Outcome::kInfo; }

Outcome better(Outcome a, Outcome b) {
  if (a == Outcome::kOk || b == Outcome::kOk) return Outcome::kOk;
  return (a == Outcome::kInfo || b == Outcome::kInfo) ? Outcome::kInfo : Outcome::kFail;
}

bool is_counter_increment(const CommandRecord& r) {
  if (r.argv.size() != 2 || r.argv[1] != kJudgedCounterKey || r.reply.kind != RedisReply::Kind::kInteger) return false;
  const std::string& cmd = r.argv[0];
  return cmd.size() == 4 && (cmd[0] | 0x20) == 'i' && (cmd[1] | 0x20) == 'n' && (cmd[2] | 0x20) == 'c' &&
         (cmd[3] | 0x20) == 'r';
}

Tally tally(const VisitRun& run) {
  FL_ASSERT(run.history != nullptr && run.redis_commands != nullptr);
  Tally t;
  std::map<uint64_t, Visit*> by_op;
  for (const sim::Operation& op : *run.history) {
    if (op.op != "visit") continue;
    const auto [it, fresh] = t.by_id.try_emplace(op.args);
    Visit& v = it->second;
    v.outcome = fresh ? outcome_of(op) : better(v.outcome, outcome_of(op));
    if (fresh) {
      v.op = &op;
      t.in_order.emplace_back(&it->first, &v);
    }
    by_op[op.id] = &v;
  }
  for (const CommandRecord& r : *run.redis_commands) {
    const auto it = by_op.find(r.cause);
    Visit* v = it == by_op.end() ? nullptr : it->second;
    if (v != nullptr && r.depth == 0 && !r.reply.is_error()) ++v->requests_at_redis;
    if (!is_counter_increment(r)) continue;
    if (v != nullptr) {
      v->increments.push_back(&r);
    } else {
      t.unattributed.push_back(&r);
    }
  }
  return t;
}

std::string seconds(int64_t t_us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(t_us - sim::kEpochUs) / 1e6);
  return buf;
}

std::string describe(const CommandRecord& r) {
  return "redis#" + std::to_string(r.seq) + " at " + seconds(r.time_us) + " for " + r.client + ": " + r.argv[0] + " " +
         r.argv[1] + " -> " + std::to_string(r.reply.integer);
}

std::string describe(const std::string& id, const Visit& v) {
  return "visit " + id + " (op " + std::to_string(v.op->id) + " by " + v.op->process + ", " + outcome_name(v.outcome) +
         ")";
}

std::string increments_of(const Visit& v) {
  std::string s;
  for (const CommandRecord* r : v.increments) s += (s.empty() ? "" : "; ") + describe(*r);
  return s;
}

// The first crash of the Redis node after the first increment: it may have lost the writes its
// persistence had not kept.
std::optional<std::string> redis_crash_after(const VisitRun& run, const Tally& t) {
  if (run.faults == nullptr) return std::nullopt;
  std::optional<int64_t> first_us;
  for (const auto& [id, v] : t.by_id) {
    for (const CommandRecord* r : v.increments) {
      if (!first_us || r->time_us < *first_us) first_us = r->time_us;
    }
  }
  if (!first_us) return std::nullopt;
  for (const auto& [down_us, up_us] : run.faults->downtimes(run.redis_process)) {
    if (down_us >= *first_us) return "crash of " + run.redis_process + " at " + seconds(down_us);
  }
  return std::nullopt;
}

}  // namespace

std::vector<PropertyInfo> visit_properties() {
  return {
      {"visit-counted-once",
       {"TOY-1"},
       "each request id counted at most once; the final counter <= the visits that may have counted"},
      {"visit-not-lost",
       {"TOY-2"},
       "each visit answered counted was counted; the final counter >= the visits answered counted"},
  };
}

Verdict check_visit_counted_once(const VisitRun& run) {
  const Tally t = tally(run);
  props::Judge j("visit-counted-once", {"TOY-1"}, "per request id at most one INCR of the counter; final <= ok + info");
  int64_t may_have_counted = 0;
  for (const auto& [id, v] : t.in_order) {
    if (v->outcome != Outcome::kFail) ++may_have_counted;
    j.expect(v->increments.size() <= 1, [id = id, v = v] {
      return describe(*id, *v) + " counted " + std::to_string(v->increments.size()) + " times: " + increments_of(*v);
    });
  }
  for (const CommandRecord* r : t.unattributed) {
    j.expect(false, [r] { return "an increment that worked for no visit: " + describe(*r); });
  }
  if (!t.by_id.empty() || run.final_counter != 0) {
    j.expect(run.final_counter <= may_have_counted, [&] {
      return "final counter " + std::to_string(run.final_counter) + " > " + std::to_string(may_have_counted) +
             " request ids answered counted or indeterminate";
    });
  }
  return j.v;
}

Verdict check_visit_not_lost(const VisitRun& run) {
  const Tally t = tally(run);
  props::Judge j("visit-not-lost", {"TOY-2"}, "per visit answered counted an INCR of the counter; final >= ok");
  int64_t acknowledged = 0;
  for (const auto& [id, v] : t.in_order) {
    if (v->outcome != Outcome::kOk) continue;
    ++acknowledged;
    j.expect(!v->increments.empty(), [id = id, v = v] {
      return describe(*id, *v) + " was answered counted, but Redis ran no INCR of the counter for it";
    });
  }
  if (acknowledged == 0) return j.v;
  j.expect_or_exempt(run.final_counter >= acknowledged, redis_crash_after(run, t),
                     "acknowledged visits missing from the final counter", [&] {
                       return "final counter " + std::to_string(run.final_counter) + " < " +
                              std::to_string(acknowledged) + " request ids answered counted";
                     });
  return j.v;
}

std::vector<std::string> visit_behaviours(const VisitRun& run) {
  const Tally t = tally(run);
  bool repeated = false, indeterminate = false;
  for (const auto& [id, v] : t.by_id) {
    repeated = repeated || v.requests_at_redis >= 2;
    indeterminate = indeterminate || v.outcome == Outcome::kInfo;
  }
  std::vector<std::string> out;
  if (repeated) out.push_back("a visit reached Redis twice (a retry or a duplicate)");
  if (indeterminate) out.push_back("a visit answered indeterminate");
  return out;
}

}  // namespace fl::toy
