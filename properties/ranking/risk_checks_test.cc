// Each risk checker passes a clean hand-built run and catches a deliberately broken one.
#include <gtest/gtest.h>

#include "properties/ranking/checks.h"

namespace fl::ranking::props {
namespace {

const char* kG = "GLOBAL|ALL|ALL|ALL";
const char* kA = "GLOBAL|ALL|ALL|zh-CN";
const char* kRun = "GLOBAL|ALL|ALL|zh-CN#r1";
const char* kSnap = "GLOBAL|ALL|ALL|zh-CN#r1/pub-1.0.1";

SqlStatementObs st(std::string sql, std::vector<std::string> params, int64_t changes = 1) {
  return SqlStatementObs{std::move(sql), std::move(params), changes};
}

// A local control transaction of scope A writing `state` of `action` on `topic` (risk.cc's shape).
SqlCommit control(int64_t at, const std::string& who, const std::string& topic, const std::string& action,
                  const std::string& state, int64_t until) {
  return SqlCommit{at,
                   true,
                   who,
                   {st("SELECT 1 WHERE guard", {}, 0),
                    st("UPDATE ranking_scope_context SET version = version + 1, risk_epoch = risk_epoch + 1 WHERE "
                       "scope_id = ?",
                       {kA}),
                    st("INSERT INTO risk_action (scope_id, ...) SELECT ?, ?, ...",
                       {kA, topic, action, state, "100", std::to_string(until), kA, who, kA, topic})}};
}

// Scope A: t_1 blocked at 100 (until 1100) and EXPIRED at 2000; a run with candidates t_1 (5) and
// t_2 (3); a snapshot published at 1500 holding t_2 only; the denylist pushed at 200; one view.
RankingRun clean() {
  RankingRun run;
  run.end_us = 5000;
  BoardObs& b = run.board;
  b.params.scopes = {kG, kA};
  b.params.risk = true;
  b.params.expiry_bound_us = 10'000'000;
  b.risk.enabled = true;
  run.commits = {control(100, "risk", "t_1", "act1", "BLOCK", 1100),
                 {1500, true, "pub-1", {st("UPDATE ranking_snapshot SET status = 'PUBLISHED'", {"1", kSnap, kA})}},
                 control(2000, "expiry-1", "t_1", "act1", "EXPIRED", 1100)};
  b.risk.actions = {RiskActionRow{kA, "t_1", 1, "act1", "BLOCK", 100, 1100, 1},
                    RiskActionRow{kA, "t_1", 2, "act1", "EXPIRED", 100, 1100, 2}};
  b.risk.context_epochs = {{kG, {0, 0}}, {kA, {2, 0}}};
  b.candidates = {CandidateRow{kA, kRun, "t_1", 5, "m1", 1}, CandidateRow{kA, kRun, "t_2", 3, "m2", 1}};
  b.snapshots.push_back(SnapshotRow{kSnap, kA, kRun, "PUBLISHED", 5, 2, "", 2, "", 1, 2, "rule-v1", 1});
  b.risk.snapshot_epochs[kSnap] = {1, 0};
  b.items = {SnapshotItemRow{kSnap, 1, "t_2", 3, "m2"}};
  b.redis_writes = {RedisWrite{200, "risk", {"SET", std::string("ranking:emergency-block:") + kA, "1|t_1"}, true},
                    RedisWrite{2100, "expiry-1", {"SET", std::string("ranking:emergency-block:") + kA, "2|"}, true}};
  b.risk.views = {ViewOp{"viewer", std::string("scope=") + kA, 300, 310, Outcome::kOk,
                         std::string("snap=") + kSnap + " deny=1/0 items=t_2"},
                  // A CDN hit of an object cached at 500 with act1 applied, served before its effective_until.
                  ViewOp{"viewer", std::string("scope=") + kA, 1000, 1010, Outcome::kOk,
                         std::string("snap=") + kSnap + " deny=1/0 items=t_2 src=hit cached=500 origin_epochs=1/0"}};
  return run;
}

TEST(RiskChecks, CleanRunPasses) {
  const RankingRun run = clean();
  for (const Verdict& v : {check_risk_actions(run), check_risk_publish(run), check_emergency_block(run)}) {
    EXPECT_EQ(v.status(), VerdictStatus::kPass) << v.property << ": " << (v.evidence.empty() ? "" : v.evidence[0]);
    EXPECT_GT(v.checks, 0) << v.property;
  }
}

// RK-EXPIRY-CURRENT-ACTION's defect: act1 lifted, t_1 blocked again by act2, then act1's late expiry
// writes the next version and ends act2's block before its effective_until.
TEST(RiskChecks, ExpiryOfALiftedActionEndingANewerBlockFails) {
  RankingRun run = clean();
  run.commits = {
      control(100, "risk", "t_1", "act1", "BLOCK", 1100), control(300, "risk", "t_1", "act1", "LIFTED", 1100),
      control(400, "risk", "t_1", "act2", "BLOCK", 9000), control(2000, "expiry-1", "t_1", "act1", "EXPIRED", 1100)};
  run.board.risk.actions = {RiskActionRow{kA, "t_1", 1, "act1", "BLOCK", 100, 1100, 1},
                            RiskActionRow{kA, "t_1", 2, "act1", "LIFTED", 100, 1100, 2},
                            RiskActionRow{kA, "t_1", 3, "act2", "BLOCK", 100, 9000, 3},
                            RiskActionRow{kA, "t_1", 4, "act1", "EXPIRED", 100, 1100, 4}};
  run.board.risk.context_epochs[kA] = {4, 0};
  const Verdict v = check_risk_actions(run);
  EXPECT_EQ(v.status(), VerdictStatus::kFail);
  ASSERT_FALSE(v.evidence.empty());
  EXPECT_NE(v.evidence[0].find("ended the block act2"), std::string::npos) << v.evidence[0];
}

TEST(RiskChecks, EarlyOrDoubleExpiryOrMissingEpochFails) {
  RankingRun early = clean();
  early.commits[2].time_us = 900;  // before effective_until 1100
  EXPECT_EQ(check_risk_actions(early).status(), VerdictStatus::kFail);
  RankingRun no_epoch = clean();
  no_epoch.commits[0].statements.erase(no_epoch.commits[0].statements.begin() + 1);
  EXPECT_EQ(check_risk_actions(no_epoch).status(), VerdictStatus::kFail);
  RankingRun never = clean();
  never.commits.pop_back();
  never.board.risk.actions.pop_back();
  never.board.risk.context_epochs[kA] = {1, 0};
  never.end_us = 20'000'000;  // t_1 still blocked 20 s after effective_until
  EXPECT_EQ(check_risk_actions(never).status(), VerdictStatus::kFail);
}

TEST(RiskChecks, SnapshotShowingABlockedTopicOrHidingAFreeOneFails) {
  RankingRun shown = clean();
  shown.board.items = {SnapshotItemRow{kSnap, 1, "t_1", 5, "m1"}, SnapshotItemRow{kSnap, 2, "t_2", 3, "m2"}};
  EXPECT_EQ(check_risk_publish(shown).status(), VerdictStatus::kFail);
  RankingRun stale = clean();
  stale.board.risk.snapshot_epochs[kSnap] = {0, 0};  // made before the block
  EXPECT_EQ(check_risk_publish(stale).status(), VerdictStatus::kFail);
}

TEST(RiskChecks, ViewIgnoringTheEdgeDenylistFails) {
  RankingRun run = clean();
  run.board.risk.views[0].result = std::string("snap=") + kSnap + " deny=0/0 items=t_2";
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
  RankingRun wrong = clean();
  wrong.board.redis_writes[0].argv[2] = "1|t_2";  // a denylist that is not the DB's at epoch 1
  EXPECT_EQ(check_emergency_block(wrong).status(), VerdictStatus::kFail);
}

// C28, F11: after a CDN hit the edge denylist still applies; a hit may hide more (a topic lifted
// since the origin answered), never show a blocked one.
TEST(RiskChecks, CdnHitShowingABlockedTopicFails) {
  RankingRun run = clean();
  run.board.items.push_back(SnapshotItemRow{kSnap, 2, "t_1", 5, "m1"});
  run.board.risk.views[0].result = std::string("snap=") + kSnap + " deny=1/0 items= src=hit";  // hides t_2 too
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kPass);
  run.board.risk.views[0].result = std::string("snap=") + kSnap + " deny=1/0 items=t_1,t_2 src=hit";
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
}

// RK-ETAG-RISK-EPOCHS's defect (004:L279): the client kept an answer showing t_1 from before the
// block; answered "not modified" after the denylist of epoch 1 reached Redis (at 200), it shows t_1
// again. Before that write the kept answer was still current.
TEST(RiskChecks, NotModifiedConfirmingAnAnswerFromBeforeABlockFails) {
  RankingRun run = clean();
  run.board.items.push_back(SnapshotItemRow{kSnap, 2, "t_1", 5, "m1"});
  run.board.risk.views = {
      ViewOp{"viewer", std::string("scope=") + kA, 150, 160, Outcome::kOk,
             std::string("snap=") + kSnap + " deny=0/0 items=t_1,t_2 src=not-modified etag=" + kSnap}};
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kPass);
  run.board.risk.views[0].invoke_us = 300;
  const Verdict v = check_emergency_block(run);
  EXPECT_EQ(v.status(), VerdictStatus::kFail);
  ASSERT_FALSE(v.evidence.empty());
  EXPECT_NE(v.evidence[0].find("showed {t_1,t_2}"), std::string::npos) << v.evidence[0];
  // A kept answer that hides more than the server would show (t_1 lifted since) is allowed.
  run.board.risk.views[0].result = std::string("snap=") + kSnap + " deny=1/0 items= src=not-modified";
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kPass);
}

// RK-DENYLIST-BYPASS's defect: Redis lost the denylist, the query layer applied none and showed t_1,
// blocked 1.4 s before, beyond a maximum safe TTL of 1 s (within 5 s it is tolerated).
TEST(RiskChecks, BlockedTopicShownPastTheMaximumSafeTtlFails) {
  RankingRun run = clean();
  run.board.items.push_back(SnapshotItemRow{kSnap, 2, "t_1", 5, "m1"});
  run.board.redis_losses = {1000};
  run.board.risk.views[0] = ViewOp{"viewer",     std::string("scope=") + kA,
                                   1500,         1510,
                                   Outcome::kOk, std::string("snap=") + kSnap + " deny=0/0 items=t_1,t_2"};
  run.board.params.max_safe_ttl_us = 5000;
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kPass);
  run.board.params.max_safe_ttl_us = 1000;
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
}

// 004:L237 bounds the exposure the design allows; a fault that held the push back is not the
// design's. t_1's block committed at 100 (a TTL of 1000) and its push never reached Redis; a view at
// 1500 shows t_1. A DB paused for 500 of those 1400 us leaves 900 us of sound path (explained), a
// pause of 300 us leaves 1100 (not); a pause of a process other than the committer (risk) explains
// nothing; a message of risk lost after the commit (a push the design does not retry) explains it,
// one lost before it does not. Once the push is in Redis (at 200), a Redis crash that loses it
// excuses nothing: recovering it is the design's part (RK-DENYLIST-BYPASS).
TEST(RiskChecks, OnlyFaultsBeforeThePushExplainAnExposurePastTheMaximumSafeTtlAndOnlyAsLongAsTheyLast) {
  auto exposed = [] {
    RankingRun run = clean();
    run.board.items.push_back(SnapshotItemRow{kSnap, 2, "t_1", 5, "m1"});
    run.board.redis_writes.erase(run.board.redis_writes.begin());  // the push at 200
    run.board.params.max_safe_ttl_us = 1000;
    run.board.risk.views[0] = ViewOp{"viewer",     std::string("scope=") + kA,
                                     1500,         1510,
                                     Outcome::kOk, std::string("snap=") + kSnap + " deny=0/0 items=t_1,t_2"};
    return run;
  };
  auto pause = [](const std::string& who, int64_t at_us, int64_t duration_us) {
    return sim::FaultRecord{
        .time_us = at_us, .kind = sim::FaultKind::kPause, .node = who, .process = who, .duration_us = duration_us};
  };
  RankingRun run = exposed();
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
  run.faults = {pause("db", 200, 500)};
  Verdict v = check_emergency_block(run);
  EXPECT_EQ(v.status(), VerdictStatus::kPass);
  ASSERT_FALSE(v.exemptions.empty());
  EXPECT_NE(v.exemptions[0].first.find("faulty for 500 us of the 1400"), std::string::npos) << v.exemptions[0].first;
  run.faults = {pause("db", 200, 300)};
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
  run.faults = {pause("expiry-1", 200, 1300)};
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
  // A message of risk lost after its commit (a push the design does not retry) explains the
  // exposure up to the TTL after it (at 600: 900 us before the view), not longer (at 300), and one
  // lost before the commit nothing.
  run.faults = {sim::FaultRecord{.time_us = 600,
                                 .kind = sim::FaultKind::kMessageLost,
                                 .node = "risk",
                                 .process = "risk",
                                 .peer_node = "db",
                                 .peer_process = "db"}};
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kPass);
  run.faults[0].time_us = 300;
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
  run.faults[0].time_us = 50;
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
  run = clean();  // pushed at 200, lost with Redis at 1000
  run.board.items.push_back(SnapshotItemRow{kSnap, 2, "t_1", 5, "m1"});
  run.board.redis_losses = {1000};
  run.board.params.max_safe_ttl_us = 1000;
  run.board.risk.views[0] = ViewOp{"viewer",     std::string("scope=") + kA,
                                   1500,         1510,
                                   Outcome::kOk, std::string("snap=") + kSnap + " deny=0/0 items=t_1,t_2"};
  run.faults = {
      sim::FaultRecord{.time_us = 1000, .kind = sim::FaultKind::kCrash, .node = "redis", .process = "redis"},
      sim::FaultRecord{.time_us = 1400, .kind = sim::FaultKind::kRestart, .node = "redis", .process = "redis"}};
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
}

// Issue 42, finding 5: an instant excuses an exposure only if it hit the push (a call of the
// committer between its commit and its push, or Redis refusing the committer's denylist write), and
// only up to the maximum safe TTL after it; a duration only on the push's path (the committer, the
// DB, Redis) and only for as long as it lasted. The same exposure with faults that touched other
// processes, or the push of another scope, still fails.
TEST(RiskChecks, OnlyAFaultThatHitThePushExcusesAnExposureAndOnlyUpToTheTtlAfterIt) {
  RankingRun run = clean();
  run.board.items.push_back(SnapshotItemRow{kSnap, 2, "t_1", 5, "m1"});
  run.board.redis_writes.erase(run.board.redis_writes.begin());  // the push at 200 never reached Redis
  run.board.params.max_safe_ttl_us = 1000;
  run.board.risk.views[0] = ViewOp{"viewer",     std::string("scope=") + kA,
                                   1500,         1510,
                                   Outcome::kOk, std::string("snap=") + kSnap + " deny=0/0 items=t_1,t_2"};
  auto lost = [](int64_t at_us, const std::string& from, const std::string& to, const std::string& detail,
                 const std::string& message) {
    return sim::FaultRecord{.time_us = at_us,
                            .kind = sim::FaultKind::kMessageLost,
                            .node = from,
                            .process = from,
                            .peer_node = to,
                            .peer_process = to,
                            .detail = detail,
                            .message = message};
  };
  // Another caller's message lost at the DB and at Redis (a crash of coord-1 mid-call): not the push.
  run.faults = {lost(600, "coord-1", "db", "connection gone", "sql: sql exec coord-1#4 | SELECT 1"),
                lost(610, "redis", "pub-1", "reply dropped", "redis: integer 1")};
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
  // The reply of risk's denylist read, lost at 600: the push never came.
  run.faults = {lost(600, "db", "risk", "reply dropped", "sql: sql reply rows=1")};
  const Verdict hit = check_emergency_block(run);
  EXPECT_EQ(hit.status(), VerdictStatus::kPass);
  ASSERT_EQ(hit.exemptions.size(), 1u);
  EXPECT_NE(hit.exemptions[0].first.find("the push may have been lost"), std::string::npos) << hit.exemptions[0].first;
  // Redis refusing risk's write of this scope's denylist hit the push; refusing its write of another
  // scope's, or another client's, did not.
  const std::string key = std::string("ranking:emergency-block:") + kA;
  auto refused = [](int64_t at_us, const std::string& message) {
    return sim::FaultRecord{.time_us = at_us,
                            .kind = sim::FaultKind::kRedisError,
                            .node = "redis",
                            .process = "redis",
                            .value = 1,
                            .message = message};
  };
  run.faults = {refused(600, "risk: EVALSHA abc 1 " + key + " 1 t_1|1100")};
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kPass);
  run.faults = {refused(600, std::string("risk: EVALSHA abc 1 ranking:emergency-block:") + kG + " 1 t_1|1100"),
                refused(600, "expiry-1: EVALSHA abc 1 " + key + " 1 t_1|1100")};
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
  // A pause of the edge (off the push's path) for the whole exposure explains nothing.
  run.faults = {sim::FaultRecord{
      .time_us = 150, .kind = sim::FaultKind::kPause, .node = "edge", .process = "edge", .duration_us = 1300}};
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
  // A 0 ppm drift and a 0 ms pause of the committer change nothing.
  run.faults = {sim::FaultRecord{.time_us = 150, .kind = sim::FaultKind::kClockDrift, .node = "risk", .value = 0},
                sim::FaultRecord{.time_us = 150, .kind = sim::FaultKind::kPause, .node = "risk", .process = "risk"}};
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
}

// Issue 42, finding 5: the denylist behind at the end (expiry-1's EXPIRED at 2000 never pushed; the
// run ends at 5000, the TTL is 1000) is excused only as a view would be: Redis lost the epoch it
// held, or the push may still be due (no more than the TTL of sound path on its path since the
// commit, or since an instant that hit the push). A Redis restart long before, a fault of another
// process, a push lost long before the end, or a crash of the committer that left it more than the
// TTL of sound time, does not excuse it.
TEST(RiskChecks, DenylistBehindAtTheEndNeedsAFaultThatHitItsPushWithinTheTtl) {
  RankingRun run = clean();
  run.board.params.max_safe_ttl_us = 1000;
  run.board.redis_writes.pop_back();  // expiry-1's push of epoch 2 never reached Redis
  auto status = [&run](std::vector<sim::FaultRecord> faults) {
    RankingRun x = run;
    x.faults = std::move(faults);
    for (const sim::FaultRecord& f : x.faults) {
      if (f.kind == sim::FaultKind::kCrash && f.process == "redis") x.board.redis_losses.push_back(f.time_us);
    }
    return check_emergency_block(x).status();
  };
  auto crash = [](const std::string& who, int64_t at_us) {
    return sim::FaultRecord{.time_us = at_us, .kind = sim::FaultKind::kCrash, .node = who, .process = who};
  };
  auto restart = [](const std::string& who, int64_t at_us) {
    return sim::FaultRecord{.time_us = at_us, .kind = sim::FaultKind::kRestart, .node = who, .process = who};
  };
  auto lost = [](int64_t at_us, const std::string& from, const std::string& to) {
    return sim::FaultRecord{.time_us = at_us,
                            .kind = sim::FaultKind::kMessageLost,
                            .node = from,
                            .process = from,
                            .peer_node = to,
                            .peer_process = to,
                            .detail = "dropped"};
  };
  EXPECT_EQ(status({}), VerdictStatus::kFail);
  EXPECT_EQ(status({crash("redis", 10), restart("redis", 20)}), VerdictStatus::kFail);    // before anything
  EXPECT_EQ(status({lost(4200, "coord-1", "db")}), VerdictStatus::kFail);                 // another caller
  EXPECT_EQ(status({crash("risk", 2010), restart("risk", 4500)}), VerdictStatus::kFail);  // not the committer
  EXPECT_EQ(status({lost(4200, "expiry-1", "redis")}), VerdictStatus::kPass);             // 800 us before the end
  EXPECT_EQ(status({lost(2050, "expiry-1", "redis")}), VerdictStatus::kFail);             // lost 2950 us before
  EXPECT_EQ(status({crash("expiry-1", 2010), restart("expiry-1", 2500)}), VerdictStatus::kFail);  // 2510 us sound
  EXPECT_EQ(status({crash("expiry-1", 2010), restart("expiry-1", 4500)}), VerdictStatus::kPass);  // 510 us sound
  EXPECT_EQ(status({sim::FaultRecord{
                .time_us = 2000, .kind = sim::FaultKind::kPause, .node = "db", .process = "db", .duration_us = 2500}}),
            VerdictStatus::kPass);  // 500 us of sound path since the commit: the push may still be due
  // The key (epoch 1, written at 200) went with Redis's data at 2200 and was not written since: the
  // query layer reads the DB then. Written again after the loss (at 2300, epoch 1), it is behind.
  EXPECT_EQ(status({crash("redis", 2200), restart("redis", 2250)}), VerdictStatus::kPass);
  run.board.redis_writes.push_back(
      RedisWrite{2300, "risk", {"SET", std::string("ranking:emergency-block:") + kA, "1|t_1"}, true});
  EXPECT_EQ(status({crash("redis", 2200), restart("redis", 2250)}), VerdictStatus::kFail);
  // Redis held epoch 2 (written at 2400).
  run.board.redis_writes.push_back(
      RedisWrite{2400, "expiry-1", {"SET", std::string("ranking:emergency-block:") + kA, "2|"}, true});
  EXPECT_EQ(status({}), VerdictStatus::kPass);  // held at the end: nothing to excuse
}

// An answer may be made at any instant of its view: one that began while t_1's block (committed at
// 100) was past the maximum safe TTL may show t_1 if the block ended (EXPIRED at 2000) before the
// view answered; one that answered before that fails.
TEST(RiskChecks, ViewAnsweredAfterTheBlockEndedMayShowItsTopic) {
  RankingRun run = clean();
  run.board.items.push_back(SnapshotItemRow{kSnap, 2, "t_1", 5, "m1"});
  run.board.redis_losses = {1000};
  run.board.params.max_safe_ttl_us = 1000;
  run.board.risk.views[0] = ViewOp{"viewer",     std::string("scope=") + kA,
                                   1500,         2050,
                                   Outcome::kOk, std::string("snap=") + kSnap + " deny=0/0 items=t_1,t_2"};
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kPass);
  run.board.risk.views[0].complete_us = 1900;
  EXPECT_EQ(check_emergency_block(run).status(), VerdictStatus::kFail);
}

// C12: a candidate written with a risk verdict under the context its request carried.
RankingRun with_risk_service(const std::string& ctx_version, const std::string& risk_epoch, const std::string& topic) {
  RankingRun run = clean();
  run.board.params.risk_service = true;
  run.board.runs.push_back(RunRow{kRun, kA, "BUILDING", "", 1, 0, 1, "", "", -1, "", -1, "", 2, "rule-v1", 1});
  run.commits.insert(
      run.commits.begin(),
      SqlCommit{50, true, "coord-1", {st("INSERT OR IGNORE INTO ranking_scope_context (scope_id)", {kA})}});
  run.commits.insert(run.commits.begin() + 2,
                     SqlCommit{150,
                               true,
                               "coord-1",
                               {st("SELECT 1 FROM ranking_scope_context WHERE ...", {}, 0),
                                st("INSERT INTO run_candidate (..., risk_verdict) VALUES (...)",
                                   {kA, kRun, topic, "5", "m1", ctx_version, risk_epoch, "0"})}});
  return run;
}

// The BUILDING commit of the run (its risk calls come after it) and coord-1's degrade of t_2.
SqlCommit building_commit() {
  return SqlCommit{
      120,
      true,
      "coord-1",
      {st("UPDATE calculation_run SET status = 'BUILDING', partition_result_set_digest = ?", {"d", "1", "d", kRun})}};
}
SqlCommit degrade_commit(int64_t t_us) {
  return SqlCommit{t_us,
                   true,
                   "coord-1",
                   {st("UPDATE run_input_manifest SET disposition = ?, reason = ? WHERE run_id = ? AND topic_id = ?",
                       {"REJECTED", "risk-unavailable:risk-degrade-v1", kRun, "t_2"})}};
}

// F05: a degraded disposition (no risk answer in time) needs a fault of the risk service or the
// coordinator since its run went BUILDING (its risk calls come after that commit), however late a
// paused DB commits it.
TEST(RiskChecks, DegradedDispositionNeedsARiskServiceFaultSinceItsRunWasBuilding) {
  RankingRun run = with_risk_service("2", "1", "t_1");
  run.commits.push_back(degrade_commit(9'000'000));
  run.end_us = 10'000'000;
  run.faults = {sim::FaultRecord{.time_us = 1'000'000,
                                 .kind = sim::FaultKind::kPause,
                                 .node = "risk-svc",
                                 .process = "risk-svc",
                                 .duration_us = 2'000'000}};           // until 3 s: 6 s before the commit
  EXPECT_EQ(check_risk_response(run).status(), VerdictStatus::kFail);  // no BUILDING commit seen
  run.commits.insert(run.commits.begin() + 1, building_commit());
  EXPECT_EQ(check_risk_response(run).status(), VerdictStatus::kPass);
  run.faults.clear();  // no fault at all: unexplained
  EXPECT_EQ(check_risk_response(run).status(), VerdictStatus::kFail);
}

// 004:L313: a risk call that fails degrades by the policy. A reset of the coordinator that broke
// its call for t_2 of the run (explore seed 478995160 of explore-risk-hardened: coord-2 degraded
// t_17 at the instant of its reset) explains that degrade; the same fault on the call for another
// topic or another run, or one after the commit, does not.
TEST(RiskChecks, DegradeIsExplainedByAFaultThatFailedItsOwnRiskCall) {
  RankingRun run = with_risk_service("2", "1", "t_1");
  run.commits.insert(run.commits.begin() + 1, building_commit());
  run.commits.push_back(degrade_commit(2'000'000));
  run.end_us = 10'000'000;
  EXPECT_EQ(check_risk_response(run).status(), VerdictStatus::kFail);  // no fault at all
  auto broken = [](int64_t t_us, const std::string& message) {
    return sim::FaultRecord{.time_us = t_us,
                            .kind = sim::FaultKind::kCallBroken,
                            .node = "coord-1",
                            .process = "coord-1",
                            .peer_node = "risk-svc",
                            .peer_process = "risk-svc",
                            .detail = "connection reset",
                            .message = message};
  };
  const std::string call = std::string("risk-svc: risk-check t_2 ") + kRun;
  run.faults = {broken(1'999'000, std::string("risk-svc: risk-check t_21 ") + kRun)};  // another topic's call
  EXPECT_EQ(check_risk_response(run).status(), VerdictStatus::kFail);
  run.faults = {broken(1'999'000, "risk-svc: risk-check t_2 other-run")};  // another run's call
  EXPECT_EQ(check_risk_response(run).status(), VerdictStatus::kFail);
  run.faults = {broken(2'500'000, call)};  // after the degrade was committed
  EXPECT_EQ(check_risk_response(run).status(), VerdictStatus::kFail);
  run.faults = {broken(1'999'000, call)};
  const Verdict v = check_risk_response(run);
  EXPECT_EQ(v.status(), VerdictStatus::kPass);
  ASSERT_EQ(v.exempted(), 1);
  EXPECT_NE(v.exemptions[0].first.find("risk call failed"), std::string::npos) << v.exemptions[0].first;
}

TEST(RiskChecks, RiskVerdictUnderAStaleContextOrForASuspiciousTopicFails) {
  EXPECT_EQ(check_risk_response(with_risk_service("2", "1", "t_1")).status(), VerdictStatus::kPass);
  const Verdict stale =
      check_risk_response(with_risk_service("1", "0", "t_1"));  // the request's context before the block
  EXPECT_EQ(stale.status(), VerdictStatus::kFail);
  EXPECT_EQ(check_risk_response(with_risk_service("2", "1", "t_4")).status(), VerdictStatus::kFail);  // t_4 % 4 == 0
}

// RANK-29, 004:L213: a CDN that keeps an object for its whole TTL regardless of the earliest
// pending expiry. The object cached at 500 was built with act1's block of t_1 (effective_until
// 1100, EXPIRED at 2000) and is still served at 2500.
TEST(RiskChecks, CdnObjectServedPastTheEarliestExpiryFails) {
  RankingRun run = clean();
  run.board.risk.views.push_back(
      ViewOp{"viewer", std::string("scope=") + kA, 2500, 2510, Outcome::kOk,
             std::string("snap=") + kSnap + " deny=2/0 items=t_2 src=hit cached=500 origin_epochs=1/0"});
  const Verdict v = check_risk_actions(run);
  EXPECT_EQ(v.status(), VerdictStatus::kFail);
  ASSERT_FALSE(v.evidence.empty());
  EXPECT_NE(v.evidence[0].find("valid past the earliest pending expiry"), std::string::npos) << v.evidence[0];
  // The same object served before the EXPIRED committed (the block still holds) is fine.
  run.board.risk.views.back().invoke_us = 1900;
  EXPECT_EQ(check_risk_actions(run).status(), VerdictStatus::kPass);
}

// 004:L212: "切换风险模型也推进它". A risk-model switch of scope A at 2500 advances A's risk_epoch
// once (the run's final context is at epoch 3); one that moves only the model and the version fails.
TEST(RiskChecks, RiskModelSwitchWithoutAnEpochAdvanceFails) {
  RankingRun run = clean();
  run.commits.push_back(
      SqlCommit{2500,
                true,
                "risk",
                {st("UPDATE ranking_scope_context SET version = version + 1, risk_epoch = risk_epoch + "
                    "1, risk_model_version = ? WHERE scope_id = ? AND risk_model_version = ?",
                    {"risk-m2", kA, "risk-m1"})}});
  run.board.risk.context_epochs[kA] = {3, 0};
  const Verdict ok = check_risk_actions(run);
  EXPECT_EQ(ok.status(), VerdictStatus::kPass) << (ok.evidence.empty() ? "" : ok.evidence[0]);
  run.commits.back().statements[0] =
      st("UPDATE ranking_scope_context SET version = version + 1, risk_model_version = ? "
         "WHERE scope_id = ?",
         {"risk-m2", kA});
  run.board.risk.context_epochs[kA] = {2, 0};
  const Verdict v = check_risk_actions(run);
  EXPECT_EQ(v.status(), VerdictStatus::kFail);
  ASSERT_FALSE(v.evidence.empty());
  EXPECT_NE(v.evidence[0].find("switched the risk model"), std::string::npos) << v.evidence[0];
}

}  // namespace
}  // namespace fl::ranking::props
