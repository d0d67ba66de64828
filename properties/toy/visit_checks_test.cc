#include "properties/toy/visit_checks.h"

#include <gtest/gtest.h>

#include "sim/node_clock.h"

namespace fl::toy {
namespace {

// A run built by hand: visits in the history, the commands Redis ran for them, the final counter.
struct Rig {
  std::vector<sim::Operation> history;
  sim::redis::CommandLog commands;
  sim::FaultLog fault_log;
  int64_t counter = 0;  // what Redis's INCRs left, unless a test sets the final counter itself

  uint64_t visit(const std::string& request_id, Outcome outcome) {
    sim::Operation op;
    op.id = history.size() + 1;
    op.process = "client-1";
    op.op = "visit";
    op.args = request_id;
    op.invoke_us = sim::kEpochUs + static_cast<int64_t>(op.id) * 1000;
    op.complete_us = op.invoke_us + 500;
    op.outcome = outcome;
    history.push_back(op);
    return op.id;
  }
  // INCR toy:visits as Redis ran it for operation `cause` (depth 1: inside a script).
  void incr(uint64_t cause, int depth = 0) {
    sim::redis::CommandRecord r;
    r.seq = commands.size() + 1;
    r.time_us = sim::kEpochUs + static_cast<int64_t>(r.seq) * 1000;
    r.client = "web-1";
    r.depth = depth;
    r.cause = cause;
    r.argv = {"INCR", kJudgedCounterKey};
    r.reply = RedisReply::integer_of(++counter);
    commands.push_back(r);
  }
  VisitRun run(const props::FaultBudget* faults = nullptr) const {
    return VisitRun{&history, &commands, counter, faults, "redis"};
  }
};

TEST(ToyChecks, AGoodRunPasses) {
  Rig rig;
  rig.incr(rig.visit("client-1#1-1", Outcome::kOk));
  rig.incr(rig.visit("client-1#1-2", Outcome::kOk), 1);
  rig.visit("client-1#1-3", Outcome::kInfo);  // may or may not have counted: not counted here
  rig.visit("client-1#1-4", Outcome::kFail);
  for (const Verdict& v : {check_visit_counted_once(rig.run()), check_visit_not_lost(rig.run())}) {
    EXPECT_EQ(v.status(), VerdictStatus::kPass) << v.property;
    EXPECT_TRUE(v.evidence.empty()) << v.property;
  }
}

TEST(ToyChecks, ARetryCountedTwiceIsCaught) {
  Rig rig;
  const uint64_t op = rig.visit("client-1#1-1", Outcome::kOk);
  rig.incr(op);
  rig.incr(op);  // the retry of a visit whose answer was lost, counted again (spec)
  const Verdict v = check_visit_counted_once(rig.run());
  EXPECT_EQ(v.status(), VerdictStatus::kFail);
  ASSERT_GE(v.evidence.size(), 1u);
  EXPECT_NE(v.evidence[0].find("visit client-1#1-1 (op 1 by client-1, ok) counted 2 times"), std::string::npos)
      << v.evidence[0];
  EXPECT_NE(v.evidence.back().find("final counter 2 > 1"), std::string::npos) << v.evidence.back();
  EXPECT_EQ(check_visit_not_lost(rig.run()).status(), VerdictStatus::kPass);
}

TEST(ToyChecks, AnIncrementForNoVisitIsCaught) {
  Rig rig;
  rig.incr(rig.visit("client-1#1-1", Outcome::kOk));
  rig.incr(0);
  const Verdict v = check_visit_counted_once(rig.run());
  EXPECT_EQ(v.status(), VerdictStatus::kFail);
  EXPECT_NE(v.evidence[0].find("worked for no visit"), std::string::npos) << v.evidence[0];
}

TEST(ToyChecks, ALostAcknowledgedVisitIsCaught) {
  Rig rig;
  rig.incr(rig.visit("client-1#1-1", Outcome::kOk));
  rig.visit("client-1#1-2", Outcome::kOk);  // answered counted, yet Redis ran no INCR for it
  const Verdict v = check_visit_not_lost(rig.run());
  EXPECT_EQ(v.status(), VerdictStatus::kFail);
  EXPECT_NE(v.evidence[0].find("client-1#1-2"), std::string::npos) << v.evidence[0];
  EXPECT_NE(v.evidence.back().find("final counter 1 < 2"), std::string::npos) << v.evidence.back();
}

TEST(ToyChecks, ACounterRedisLostIsExcusedOnlyByACrashOfRedis) {
  Rig rig;
  rig.incr(rig.visit("client-1#1-1", Outcome::kOk));
  rig.incr(rig.visit("client-1#1-2", Outcome::kOk));
  rig.counter = 1;  // the node restarted from a persistence that had not kept the second INCR
  EXPECT_EQ(check_visit_not_lost(rig.run()).status(), VerdictStatus::kFail);
  sim::FaultRecord crash;
  crash.time_us = sim::kEpochUs + 10'000;
  crash.kind = sim::FaultKind::kCrash;
  crash.node = crash.process = "redis";
  rig.fault_log.push_back(crash);
  const props::FaultBudget faults(rig.fault_log, sim::kEpochUs + 20'000);
  const Verdict v = check_visit_not_lost(rig.run(&faults));
  EXPECT_EQ(v.status(), VerdictStatus::kPass);
  EXPECT_EQ(v.exempted(), 1);
  // The same crash excuses only the final count: a service that never INCRed an acknowledged
  // visit still fails.
  rig.visit("client-1#1-3", Outcome::kOk);
  const Verdict broken = check_visit_not_lost(rig.run(&faults));
  EXPECT_EQ(broken.status(), VerdictStatus::kFail);
  EXPECT_NE(broken.evidence[0].find("client-1#1-3"), std::string::npos) << broken.evidence[0];
}

TEST(ToyChecks, NothingVisitedIsVacuous) {
  Rig rig;
  EXPECT_EQ(check_visit_counted_once(rig.run()).status(), VerdictStatus::kVacuous);
  EXPECT_EQ(check_visit_not_lost(rig.run()).status(), VerdictStatus::kVacuous);
  rig.visit("client-1#1-1", Outcome::kFail);  // no visit answered counted: nothing to find lost
  EXPECT_EQ(check_visit_not_lost(rig.run()).status(), VerdictStatus::kVacuous);
}

TEST(ToyChecks, ACounterWithoutVisitsIsCaught) {
  Rig rig;
  rig.counter = 3;
  EXPECT_EQ(check_visit_counted_once(rig.run()).status(), VerdictStatus::kFail);
}

TEST(ToyChecks, BehavioursNameARetryThatReachedRedis) {
  Rig rig;
  const uint64_t op = rig.visit("client-1#1-1", Outcome::kInfo);
  rig.incr(op);
  EXPECT_EQ(visit_behaviours(rig.run()), std::vector<std::string>{"a visit answered indeterminate"});
  rig.incr(op);
  EXPECT_EQ(visit_behaviours(rig.run()).front(), "a visit reached Redis twice (a retry or a duplicate)");
}

}  // namespace
}  // namespace fl::toy
