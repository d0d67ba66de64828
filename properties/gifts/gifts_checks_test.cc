// Each gifts checker catches a hand-built run that violates its invariant, and passes a clean one.
#include "properties/gifts/checks.h"

#include <gtest/gtest.h>

namespace fl::gifts::props {
namespace {

constexpr int64_t kS = 1'000'000;

struct Builder {
  Builder() {
    run.params.initial_balance = 1000;
    run.db_read = true;
    run.end_us = 60 * kS;
    run.services = {"gift-1", "push-1", "redis", "db", "log"};
    run.charge_path = {"gift-1", "redis", "db", "log"};
  }
  HistoryOp& op(const std::string& process, const std::string& name, const std::string& args, int64_t t0, int64_t t1,
                Outcome outcome, const std::string& result) {
    HistoryOp o;
    o.id = run.history.size() + 1;
    o.process = process;
    o.op = name;
    o.args = args;
    o.invoke_us = t0;
    o.complete_us = t1;
    o.outcome = outcome;
    o.result = result;
    run.history.push_back(o);
    return run.history.back();
  }
  // A charged gift: send ok, order row, outbox SENT, commit, log record.
  void charge(int64_t id, int64_t user, const std::string& req, const std::string& intent, int64_t t) {
    op("sender-1", "send", "user=" + std::to_string(user) + " room=r1 gift=g1 count=1 req=" + req + " intent=" + intent,
       t, t + 100'000, Outcome::kOk, "order=" + std::to_string(id));
    const std::string msg = "m" + std::to_string(id);
    run.orders.push_back(model::Order{id, user, req, "r1", "g1", 1, 10, msg});
    run.outbox.push_back(OutboxRow{msg, "SENT"});
    run.commits.push_back(SqlCommit{t + 50'000, true, "gift-1", {{"INSERT INTO gift_order ...", {std::to_string(user), req}}}});
    run.log.push_back(LogRecordObs{"r1", msg + "|r1|" + std::to_string(user) + "|g1|1|0|0", t + 60'000});
    run.balances[user] = run.params.initial_balance - 10 * static_cast<int64_t>(run.orders.size());
  }
  void viewer_joins(const std::string& v, int64_t t = 0) {
    op(v, "connect", "user=9 room=r1 gw=gw-1 lastSeq=0", t, t + 1000, Outcome::kOk, "seq=0");
  }
  void deliver(const std::string& v, const std::string& msg, int64_t seq, int64_t count, int64_t t, int64_t played_at,
               const std::string& result = "played", int64_t ts_ms = -1) {
    op(v, "deliver",
       "msg=" + msg + " room=r1 sender=1 gift=g1 count=" + std::to_string(count) + " seq=" + std::to_string(seq) +
           " ts=" + std::to_string(ts_ms < 0 ? t / 1000 : ts_ms),
       t, played_at, result == "played" ? Outcome::kOk : Outcome::kFail, result);
  }
  GiftsRun run;
};

Builder clean() {
  Builder b;
  b.viewer_joins("viewer-1");
  b.charge(1, 1, "a", "1-1", 1 * kS);
  b.charge(2, 1, "b", "1-2", 2 * kS);
  b.deliver("viewer-1", "m2", 1, 2, 5 * kS, 5 * kS);
  return b;
}

TEST(GiftsChecks, CleanRunPassesEveryProperty) {
  Builder b = clean();
  std::vector<std::string> names;
  for (const PropertyInfo& p : gifts_properties()) names.push_back(p.name);
  for (const Verdict& v : check_gifts(b.run, names)) {
    EXPECT_TRUE(v.passed) << v.property << ": " << (v.evidence.empty() ? "" : v.evidence[0]);
  }
}

TEST(GiftsChecks, ChargeOnceCatchesADoubleDebit) {
  Builder b = clean();
  b.run.balances[1] -= 10;  // the upsert's second debit
  EXPECT_FALSE(check_charge_once(b.run).passed);
}

TEST(GiftsChecks, IntentOnceCatchesADoubleTapChargedTwice) {
  Builder b = clean();
  b.charge(3, 1, "c", "1-9", 3 * kS);
  b.charge(4, 1, "d", "1-9", 3 * kS + 80'000);
  EXPECT_FALSE(check_intent_once(b.run).passed);
}

TEST(GiftsChecks, OutcomeCatchesDuplicateAnswers) {
  Builder charged = clean();
  charged.op("sender-1", "send", "user=1 room=r1 gift=g1 count=1 req=a intent=1-1", 3 * kS, 3 * kS + 1, Outcome::kFail,
             "duplicate");
  EXPECT_FALSE(check_outcome(charged.run).passed);
  Builder uncharged = clean();
  uncharged.op("sender-1", "send", "user=1 room=r1 gift=g1 count=1 req=z intent=1-7", 3 * kS, 3 * kS + 1,
               Outcome::kFail, "duplicate");
  EXPECT_FALSE(check_outcome(uncharged.run).passed);
}

TEST(GiftsChecks, OutcomeNeedsAFaultForIndeterminateAnswers) {
  Builder b = clean();
  b.op("sender-1", "send", "user=1 room=r1 gift=g1 count=1 req=q intent=1-5", 3 * kS, 4 * kS, Outcome::kInfo, "timeout");
  EXPECT_FALSE(check_outcome(b.run).passed);
  b.run.faults.push_back(sim::FaultRecord{3 * kS + 10, sim::FaultKind::kPause, "db", "db", "", "", kS});
  const Verdict v = check_outcome(b.run);
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.exempted(), 1);
}

TEST(GiftsChecks, OutboxCatchesOrphanAndPendingRows) {
  Builder orphan = clean();
  orphan.run.outbox.push_back(OutboxRow{"m9", "SENT"});
  EXPECT_FALSE(check_outbox(orphan.run).passed);
  Builder pending = clean();
  pending.run.outbox[0].status = "PENDING";
  EXPECT_FALSE(check_outbox(pending.run).passed);
}

// Transactional messages (003:L225-231): no outbox table; the log is judged instead.
TEST(GiftsChecks, TxmsgOutboxCatchesAChargeWithoutItsMessageAndAMessageWithoutItsCharge) {
  Builder ok = clean();
  ok.run.params.txmsg = true;
  ok.run.outbox.clear();
  EXPECT_TRUE(check_outbox(ok.run).passed);
  Builder lost = ok;  // the check-back rolled the half back, then the local transaction committed
  lost.run.log.erase(lost.run.log.begin());
  EXPECT_FALSE(check_outbox(lost.run).passed);
  Builder orphan = ok;  // a half committed although its local transaction never did
  orphan.run.log.push_back(LogRecordObs{"r1", "m9|r1|1|g1|1|0|0", 9 * kS});
  EXPECT_FALSE(check_outbox(orphan.run).passed);
  Builder twice = ok;
  twice.run.log.push_back(twice.run.log.front());
  EXPECT_FALSE(check_outbox(twice.run).passed);
}

// A half is checked back once old enough by the broker's clock: a clock jump back on the log that
// freezes it until the end excuses a half left unresolved (explore-hardened-txmsg seed 3740); a
// jump forward, or a clock that advanced enough, excuses nothing.
TEST(GiftsChecks, TxmsgExcusesAnUnresolvedHalfOnlyWhileTheBrokersClockIsHeldBack) {
  Builder b = clean();
  b.run.params.txmsg = true;
  b.run.outbox.clear();
  b.run.log.erase(b.run.log.begin());  // order 1's half never resolved
  sim::FaultRecord jump;
  jump.kind = sim::FaultKind::kClockJump;
  jump.node = jump.process = "log";
  jump.time_us = 500'000;
  jump.value = 30 * kS;  // forward: the broker's clock ran on
  b.run.faults.push_back(jump);
  EXPECT_FALSE(check_outbox(b.run).passed);
  b.run.faults.back().value = -80 * kS;  // back, past the end of the run (60 s): frozen
  const Verdict v = check_outbox(b.run);
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.exempted(), 1);
  b.run.faults.back().value = -20 * kS;  // back, but it caught up 20 s later: checked back in time
  EXPECT_FALSE(check_outbox(b.run).passed);
}

TEST(GiftsChecks, DeliveryCatchesALostAndADoubledGift) {
  Builder lost = clean();
  lost.run.history.pop_back();  // the batch never played
  EXPECT_FALSE(check_delivery(lost.run).passed);
  EXPECT_FALSE(check_batch_conservation(lost.run).passed);
  Builder doubled = clean();
  doubled.deliver("viewer-1", "m3", 2, 2, 6 * kS, 6 * kS);
  EXPECT_FALSE(check_delivery(doubled.run).passed);
  EXPECT_FALSE(check_batch_conservation(doubled.run).passed);
}

// One msgId pushed with two counts is a window flushed twice: excused only by a Redis crash that
// could have rolled the first flush back, between the first content's flush and the second push
// (explore-hardened seed 15699: AOF everysec lost a flushed window in a crash).
TEST(GiftsChecks, BatchConservationExcusesTwoContentsOnlyAfterARedisCrashBetweenThem) {
  Builder b = clean();
  b.run.params.expiry_ms = 10'000;
  b.run.params.window_ms = 3'000;
  b.deliver("viewer-1", "m2", 2, 1, 12 * kS, 12 * kS);  // m2 again, with another count
  EXPECT_FALSE(check_batch_conservation(b.run).passed);
  sim::FaultRecord crash;
  crash.kind = sim::FaultKind::kCrash;
  crash.node = crash.process = "redis";
  crash.time_us = 14 * kS;  // while the gifts were in flight, but after both pushes: explains nothing
  b.run.faults.push_back(crash);
  EXPECT_FALSE(check_batch_conservation(b.run).passed);
  b.run.faults.back().time_us = 10 * kS;  // between the first push (5 s) and the second (12 s)
  const Verdict v = check_batch_conservation(b.run);
  EXPECT_TRUE(v.passed);
  EXPECT_GE(v.exempted(), 1);
}

// A Redis crash excuses only the counts of the gifts in flight across it (their combo state may be
// rolled back), not the whole key: gifts charged after it must still be pushed (explore-hardened
// seed 15699 was VACUOUS when the whole key was exempted).
TEST(GiftsChecks, ARedisCrashExcusesOnlyTheGiftsInItsFlight) {
  Builder b = clean();
  b.run.params.expiry_ms = 10'000;
  b.run.params.window_ms = 3'000;
  sim::FaultRecord crash;
  crash.kind = sim::FaultKind::kCrash;
  crash.node = crash.process = "redis";
  crash.time_us = 3 * kS;  // in the flight of the two gifts pushed as m2
  b.run.faults.push_back(crash);
  sim::FaultRecord restart = crash;
  restart.kind = sim::FaultKind::kRestart;
  restart.time_us = 3 * kS + 500'000;
  b.run.faults.push_back(restart);
  b.run.history.pop_back();  // m2 lost with the rolled-back window: excused
  for (const Verdict& v : {check_batch_conservation(b.run), check_delivery(b.run)}) {
    EXPECT_TRUE(v.passed) << v.property;
    EXPECT_GE(v.checks, 1) << v.property;
    EXPECT_GE(v.exempted(), 2) << v.property;
  }
  b.charge(3, 1, "c", "1-3", 20 * kS);  // charged after the crash and never pushed: not excused
  EXPECT_FALSE(check_batch_conservation(b.run).passed);
  EXPECT_FALSE(check_delivery(b.run).passed);
}

// A refused request on the push path holds the gift for the timer slack (its caller backs off
// before the next attempt): enough refusals in its flight may age it past the 10 s expiry
// (explore-hardened seed 7816); fewer excuse nothing.
TEST(GiftsChecks, RefusedPushAttemptsExcuseAnExpiredGiftOnlyWhenTheyAddUp) {
  Builder b = clean();
  b.run.params.expiry_ms = 10'000;
  b.run.params.window_ms = 3'000;
  b.run.history.pop_back();  // m2 never pushed
  auto refuse = [&](int64_t t) {
    sim::FaultRecord f;
    f.kind = sim::FaultKind::kStorageError;
    f.node = f.process = "db";
    f.time_us = t;
    b.run.faults.push_back(f);
  };
  refuse(4 * kS);
  refuse(6 * kS);
  EXPECT_FALSE(check_batch_conservation(b.run).passed);  // 2 s held: under the 3 s bound
  refuse(8 * kS);
  const Verdict v = check_batch_conservation(b.run);
  EXPECT_TRUE(v.passed);
  EXPECT_GE(v.checks, 1);
}

// A viewer's presence ends when the gateway it joined through crashes (its connection is gone until
// it reconnects): a batch pushed meanwhile reached nobody (explore-hardened-txmsg seed 5465); a
// crash of another gateway excuses nothing.
TEST(GiftsChecks, AGatewayCrashEndsItsViewersPresence) {
  auto crash_of = [](const std::string& gw) {
    sim::FaultRecord f;
    f.kind = sim::FaultKind::kCrash;
    f.node = f.process = gw;
    f.time_us = 3 * kS;
    return f;
  };
  Builder other = clean();
  other.run.history.pop_back();  // m2 never received
  other.run.faults.push_back(crash_of("gw-2"));
  EXPECT_FALSE(check_batch_conservation(other.run).passed);
  Builder own = clean();
  own.run.history.pop_back();
  own.run.faults.push_back(crash_of("gw-1"));
  EXPECT_TRUE(check_batch_conservation(own.run).passed);
}

// A batch is unobservable when every viewer then in the room lost its copy on the last hop
// (explore-hardened seeds 7530, 7949); a loss that spared one viewer excuses nothing.
TEST(GiftsChecks, ABatchEveryViewerLostOnTheLastHopIsExcused) {
  Builder b = clean();
  b.run.history.pop_back();  // m2 never received
  EXPECT_FALSE(check_batch_conservation(b.run).passed);
  sim::FaultRecord lost;
  lost.kind = sim::FaultKind::kMessageLost;
  lost.node = lost.process = "gw-1";
  lost.peer_node = lost.peer_process = "viewer-1";
  lost.time_us = 5 * kS;
  b.run.faults.push_back(lost);
  EXPECT_TRUE(check_batch_conservation(b.run).passed);
  b.viewer_joins("viewer-2", 0);  // a second viewer in the room did not lose it
  EXPECT_FALSE(check_batch_conservation(b.run).passed);
}

// A copy replaced in the reorder buffer by a copy still buffered at the end is not "never played"
// (explore-hardened seed 7649); gift-play-order bounds how long the buffered copy waits.
TEST(GiftsChecks, DeliveryWaitsForACopyStillBuffered) {
  Builder b = clean();
  b.deliver("viewer-1", "m7", 3, 1, 59 * kS, 59 * kS, "dropped:replaced-in-buffer");
  EXPECT_FALSE(check_delivery(b.run).passed);
  b.op("viewer-1", "deliver", "msg=m7 room=r1 sender=1 gift=g1 count=1 seq=3 ts=59000", 59 * kS, -1, Outcome::kInfo, "");
  EXPECT_TRUE(check_delivery(b.run).passed);
}

TEST(GiftsChecks, DeliveryCatchesAReceivedMessageNeverPlayed) {
  Builder b = clean();
  b.deliver("viewer-1", "m9", 0, 1, 6 * kS, 6 * kS, "dropped:seq-below-expected");
  EXPECT_FALSE(check_delivery(b.run).passed);
}

// A room switch (003:L193) excuses a drop of the room left, not of the room joined.
TEST(GiftsChecks, DeliveryExcusesLeftRoomDropsOnlyAfterTheSwitch) {
  Builder switched = clean();
  switched.op("viewer-1", "connect", "user=9 room=r2 gw=gw-1 lastSeq=0", 6 * kS, 6 * kS + 1000, Outcome::kOk, "seq=0");
  switched.deliver("viewer-1", "m9", 2, 1, 6 * kS + 2000, 6 * kS + 2000, "dropped:left-room");
  EXPECT_TRUE(check_delivery(switched.run).passed);
  Builder still_there = clean();
  still_there.deliver("viewer-1", "m9", 2, 1, 6 * kS + 2000, 6 * kS + 2000, "dropped:left-room");
  EXPECT_FALSE(check_delivery(still_there.run).passed);
}

TEST(GiftsChecks, PlayOrderIsPerRoom) {
  Builder b = clean();
  b.op("viewer-1", "connect", "user=9 room=r2 gw=gw-1 lastSeq=0", 6 * kS, 6 * kS + 1000, Outcome::kOk, "seq=0");
  b.op("viewer-1", "deliver", "msg=m7 room=r2 sender=1 gift=g1 count=1 seq=1 ts=7000", 7 * kS, 7 * kS, Outcome::kOk,
       "played");
  EXPECT_TRUE(check_play_order(b.run).passed);
  b.deliver("viewer-1", "m8", 1, 1, 8 * kS, 8 * kS);  // room r1 seq 1 after r1 seq 1 played
  EXPECT_FALSE(check_play_order(b.run).passed);
}

TEST(GiftsChecks, LockCatchesACountWriteAfterTheLeaseRanOut) {
  Builder b = clean();
  auto cmd = [&](const std::string& client, int64_t ms, int depth, std::vector<std::string> argv) {
    b.run.redis.push_back(RedisCommand{ms * 1000, ms, client, 1, depth, std::move(argv)});
  };
  cmd("push-1", 1000, 1, {"HINCRBY", "gift:batch:r1:1:g1", "push-1:1:consumer", "1"});
  cmd("push-1", 1000, 1, {"PEXPIRE", "gift:batch:r1:1:g1", "3000"});
  cmd("push-1", 1001, 0, {"INCRBY", "gift:batch:count:r1:1:g1", "1"});
  EXPECT_TRUE(check_lock(b.run).passed);
  cmd("push-1", 4500, 0, {"DEL", "gift:batch:count:r1:1:g1"});  // paused past the 3 s lease
  EXPECT_FALSE(check_lock(b.run).passed);
}

// The hand-written lock of 003:L147-152: SET key owner PX lease inside the script.
TEST(GiftsChecks, LockCatchesACountWriteAfterTheLuaLockLeaseRanOut) {
  Builder b = clean();
  auto cmd = [&](const std::string& client, int64_t ms, int depth, std::vector<std::string> argv) {
    b.run.redis.push_back(RedisCommand{ms * 1000, ms, client, 1, depth, std::move(argv)});
  };
  cmd("push-1", 1000, 1, {"SET", "gift:batch:r1:1:g1", "push-1:1:consumer", "PX", "3000"});
  cmd("push-1", 1001, 0, {"INCRBY", "gift:batch:count:r1:1:g1", "1"});
  EXPECT_TRUE(check_lock(b.run).passed);
  cmd("push-2", 4100, 1, {"SET", "gift:batch:r1:1:g1", "push-2:1:consumer", "PX", "3000"});
  cmd("push-2", 4101, 0, {"INCRBY", "gift:batch:count:r1:1:g1", "1"});
  EXPECT_TRUE(check_lock(b.run).passed);
  cmd("push-1", 4500, 0, {"DEL", "gift:batch:count:r1:1:g1"});  // push-1 paused past its lease
  EXPECT_FALSE(check_lock(b.run).passed);
}

TEST(GiftsChecks, PlayOnceCatchesASecondPlay) {
  Builder b = clean();
  b.deliver("viewer-1", "m2", 1, 2, 6 * kS, 6 * kS);
  EXPECT_FALSE(check_play_once(b.run).passed);
}

TEST(GiftsChecks, PlayOrderCatchesAStallAndADecrease) {
  Builder stall = clean();
  stall.deliver("viewer-1", "m7", 5, 1, 7 * kS, -1, "");
  EXPECT_FALSE(check_play_order(stall.run).passed);
  Builder order = clean();
  order.deliver("viewer-1", "m8", 0, 1, 7 * kS, 7 * kS);
  EXPECT_FALSE(check_play_order(order.run).passed);
}

TEST(GiftsChecks, ExpiryCatchesAnOldMessage) {
  Builder b = clean();
  b.deliver("viewer-1", "m2x", 2, 1, 20 * kS, 20 * kS, "played", 5'000);
  EXPECT_FALSE(check_expiry(b.run).passed);
}

TEST(GiftsChecks, ReconnectCatchesADropAfterTheBaseline) {
  Builder b = clean();
  b.op("viewer-1", "connect", "user=9 room=r1 gw=gw-2 lastSeq=1", 8 * kS, 8 * kS + 1000, Outcome::kOk, "seq=5");
  b.deliver("viewer-1", "m5", 3, 1, 9 * kS, 9 * kS, "dropped:seq-below-expected");
  EXPECT_FALSE(check_reconnect(b.run).passed);
}

// A Redis crash excuses a drop only where it may have rolled the room's counter back under it:
// after a viewer got another message of the room with that seq or more, before the drop.
TEST(GiftsChecks, ReconnectExcusesADropOnlyAfterACrashThatMayHaveReissuedItsSeq) {
  Builder b = clean();
  b.op("viewer-1", "connect", "user=9 room=r1 gw=gw-2 lastSeq=1", 8 * kS, 8 * kS + 1000, Outcome::kOk, "seq=5");
  b.deliver("viewer-1", "m5", 3, 1, 12 * kS, 12 * kS, "dropped:seq-below-expected");
  sim::FaultRecord crash;
  crash.kind = sim::FaultKind::kCrash;
  crash.process = "redis";
  crash.time_us = 3 * kS;  // before the counter handed out seq 3: no rollback can explain it
  b.run.faults.push_back(crash);
  b.deliver("viewer-2", "m4", 4, 1, 10 * kS, 10 * kS);  // another message of r1 with seq 4 >= 3
  EXPECT_FALSE(check_reconnect(b.run).passed);
  b.run.faults.back().time_us = 11 * kS;  // after seq 4 went out, before the drop
  const Verdict v = check_reconnect(b.run);
  EXPECT_TRUE(v.passed) << (v.evidence.empty() ? "" : v.evidence[0]);
  EXPECT_EQ(v.exempted(), 1);
}

}  // namespace
}  // namespace fl::gifts::props
