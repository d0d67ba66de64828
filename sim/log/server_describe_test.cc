#include <gtest/gtest.h>

#include <string>

#include "impl/ports/rpc.h"
#include "impl/ports/stable_hash.h"
#include "sim/log/server.h"

namespace fl::sim::log {
namespace {

LogRequest request(LogRequest::Kind kind) {
  LogRequest r;
  r.kind = kind;
  r.topic = "stable";
  r.produce = ProduceRequest{.topic = "keyed",
                             .partition = 2,
                             .key = "t1|global",
                             .value = "v",
                             .producer_id = 7,
                             .epoch = 3,
                             .sequence = 41,
                             .transactional = true};
  r.producer_group = "relay";
  r.check_service = "relay-check";
  r.half_id = 12;
  r.resolution = HalfResolution::kRollback;
  r.transactional_id = "agg-0";
  r.epoch = -1;
  r.commit = true;
  r.txn_offsets.offsets = {{TopicPartition{"stable", 0}, 5}, {TopicPartition{"stable", 3}, 9}};
  r.group = "aggregators";
  r.client_id = "w1";
  r.member_id = "w1-1";
  r.offsets = {{TopicPartition{"keyed", 1}, 100}};
  r.generation = 4;
  return r;
}

// The network folds Message::digest() into the fingerprint: it must hash exactly describe()'s
// bytes, and describe() must keep its text (saved fingerprints depend on both).
TEST(LogRequestDescription, DigestIsTheHashOfTheTextForEveryKind) {
  for (int k = 0; k <= static_cast<int>(LogRequest::Kind::kRegisterChecker); ++k) {
    const MessagePtr m = make_message(request(static_cast<LogRequest::Kind>(k)));
    EXPECT_EQ(m->digest(), stable_hash(m->describe())) << m->describe();
  }
  EXPECT_EQ(make_message(LogRequest{})->digest(), stable_hash(LogRequest{}.describe()));
}

TEST(LogRequestDescription, TextIsUnchanged) {
  EXPECT_EQ(request(LogRequest::Kind::kProduce).describe(), "produce keyed key=t1|global pid=7 epoch=3 seq=41 txn");
  EXPECT_EQ(request(LogRequest::Kind::kEndTxn).describe(),
            "end_txn agg-0 epoch=-1 commit offsets={stable/0:5,stable/3:9}");
  EXPECT_EQ(request(LogRequest::Kind::kPoll).describe(), "poll aggregators w1-1 at={keyed/1:100}");
  EXPECT_EQ(request(LogRequest::Kind::kCommit).describe(), "commit aggregators w1-1 gen=4 {keyed/1:100}");
  EXPECT_EQ(request(LogRequest::Kind::kEndHalf).describe(), "end_half id=12 ROLLBACK");
  EXPECT_EQ(request(LogRequest::Kind::kJoin).describe(), "join aggregators client=w1");
  EXPECT_EQ(request(LogRequest::Kind::kHeartbeat).describe(), "heartbeat aggregators w1-1");
  LogRequest empty_poll = request(LogRequest::Kind::kPoll);
  empty_poll.offsets.clear();
  EXPECT_EQ(empty_poll.describe(), "poll aggregators w1-1 at={}");
}

}  // namespace
}  // namespace fl::sim::log
