// Consumer-group properties of the Broker, as RapidCheck properties over random
// join/leave/crash/pause/poll/process/commit/produce/advance sequences, plus, for every property,
// a run against a deliberately broken broker configuration that must be caught.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "sim/log/group_harness.h"
#include "sim/rng.h"

namespace fl::sim::log {
namespace {

HarnessOp make_op(int kind, int consumer, int arg) {
  HarnessOp op;
  op.kind = static_cast<HarnessOp::Kind>(kind);
  op.consumer = static_cast<uint32_t>(consumer);
  op.arg = static_cast<uint32_t>(arg);
  return op;
}

// Biased towards polling/processing/committing, so that runs make progress between faults.
HarnessOp random_op(Rng& rng) {
  static const int kWeights[] = {2, 6, 5, 4, 1, 1, 1, 6, 3};
  uint64_t total = 0;
  for (int w : kWeights) total += static_cast<uint64_t>(w);
  uint64_t pick = rng.below(total);
  int kind = 0;
  while (pick >= static_cast<uint64_t>(kWeights[kind])) pick -= static_cast<uint64_t>(kWeights[kind++]);
  return make_op(kind, static_cast<int>(rng.below(3)), static_cast<int>(rng.below(100'000)));
}

std::vector<std::string> run(const BrokerConfig& config, const HarnessOptions& options,
                             const std::vector<HarnessOp>& ops) {
  GroupHarness h(config, options);
  for (const auto& op : ops) h.apply(op);
  h.finish();
  return h.violations();
}

// Searches random runs for a violation whose text starts with `prefix`.
bool random_runs_find(const BrokerConfig& config, RebalanceProtocol protocol, const std::string& prefix, int runs) {
  for (int seed = 1; seed <= runs; ++seed) {
    Rng rng(static_cast<uint64_t>(seed));
    HarnessOptions options;
    options.protocol = protocol;
    std::vector<HarnessOp> ops;
    for (int i = 0; i < 300; ++i) ops.push_back(random_op(rng));
    for (const auto& v : run(config, options, ops))
      if (v.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

rc::Gen<std::vector<HarnessOp>> gen_ops() {
  return rc::gen::container<std::vector<HarnessOp>>(rc::gen::map(
      rc::gen::tuple(
          rc::gen::weightedElement<int>({{2, 0}, {6, 1}, {5, 2}, {4, 3}, {1, 4}, {1, 5}, {1, 6}, {6, 7}, {3, 8}}),
          rc::gen::inRange(0, 3), rc::gen::inRange(0, 100'000)),
      [](const std::tuple<int, int, int>& t) { return make_op(std::get<0>(t), std::get<1>(t), std::get<2>(t)); }));
}

void check_correct_broker(RebalanceProtocol protocol) {
  const auto ops = *rc::gen::scale(4.0, gen_ops());
  HarnessOptions options;
  options.protocol = protocol;
  options.partitions = *rc::gen::inRange(1, 6);
  GroupHarness h(BrokerConfig{}, options);
  for (const auto& op : ops) h.apply(op);
  h.finish();
  RC_ASSERT(h.violations() == std::vector<std::string>{});
  RC_TAG(h.zombie_commits_rejected() > 0 ? "zombie commit rejected" : "no zombie commit");
}

RC_GTEST_PROP(GroupProperty, EagerHoldsAllProperties, ()) { check_correct_broker(RebalanceProtocol::kEager); }

RC_GTEST_PROP(GroupProperty, CooperativeHoldsAllProperties, ()) {
  check_correct_broker(RebalanceProtocol::kCooperative);
}

TEST(GroupProperty, RandomRunsExerciseZombies) {
  // The generator reaches the interesting states: zombies whose side effects happen and whose
  // commits are rejected.
  uint64_t effects = 0, rejected = 0;
  for (int seed = 1; seed <= 50; ++seed) {
    Rng rng(static_cast<uint64_t>(seed));
    GroupHarness h(BrokerConfig{}, HarnessOptions{});
    for (int i = 0; i < 120; ++i) h.apply(random_op(rng));
    h.finish();
    EXPECT_EQ(h.violations(), std::vector<std::string>{}) << "seed " << seed;
    effects += h.zombie_side_effects();
    rejected += h.zombie_commits_rejected();
  }
  EXPECT_GT(effects, 0u);
  EXPECT_GT(rejected, 0u);
}

// ---- The properties can fail: one broken configuration each, found by random runs.

TEST(GroupPropertyCanFail, NoGenerationCheckMovesCommittedOffsetBack) {
  BrokerConfig broken;
  broken.broken_no_generation_check = true;
  EXPECT_TRUE(random_runs_find(broken, RebalanceProtocol::kEager, "monotonic:", 1000));
}

TEST(GroupPropertyCanFail, BrokenHandoffGivesAPartitionTwoOwners) {
  BrokerConfig broken;
  broken.broken_handoff = true;
  EXPECT_TRUE(random_runs_find(broken, RebalanceProtocol::kCooperative, "exclusive:", 300));
  EXPECT_TRUE(random_runs_find(broken, RebalanceProtocol::kEager, "exclusive:", 300));
}

TEST(GroupPropertyCanFail, ResumeAtEndLosesRecords) {
  BrokerConfig broken;
  broken.broken_resume_at_end = true;
  EXPECT_TRUE(random_runs_find(broken, RebalanceProtocol::kEager, "delivery:", 300));
}

TEST(GroupPropertyCanFail, ReversedFetchBreaksOrder) {
  BrokerConfig broken;
  broken.broken_fetch_reversed = true;
  EXPECT_TRUE(random_runs_find(broken, RebalanceProtocol::kEager, "order:", 300));
}

// ---- The zombie, step by step (Kafka's CommitFailedException scenario).

std::vector<HarnessOp> zombie_script() {
  return {
      make_op(HarnessOp::kProduce, 0, 1),     make_op(HarnessOp::kProduce, 0, 1),
      make_op(HarnessOp::kProduce, 0, 1),                                       // 3 records, one key
      make_op(HarnessOp::kJoin, 0, 0),        make_op(HarnessOp::kPoll, 0, 0),  // c0 owns everything
      make_op(HarnessOp::kPause, 0, 15'000),                                    // c0 paused > session
      make_op(HarnessOp::kAdvance, 1, 4'999), make_op(HarnessOp::kAdvance, 1, 4'999),
      make_op(HarnessOp::kAdvance, 1, 4'999),                                   // c0 evicted
      make_op(HarnessOp::kJoin, 1, 0),        make_op(HarnessOp::kPoll, 1, 0),  // c1 takes over
      make_op(HarnessOp::kProduce, 0, 1),     make_op(HarnessOp::kPoll, 1, 0),
      make_op(HarnessOp::kProcess, 1, 0),     make_op(HarnessOp::kCommit, 1, 0),  // c1 commits 4
      make_op(HarnessOp::kAdvance, 1, 4'999), make_op(HarnessOp::kAdvance, 1, 4'999),
      make_op(HarnessOp::kPoll, 1, 0),     // c1 heartbeats
      make_op(HarnessOp::kProcess, 0, 0),  // zombie's effects
      make_op(HarnessOp::kCommit, 0, 0),   // zombie commits 3
  };
}

TEST(GroupZombie, StaleCommitRejectedWhileSideEffectsHappen) {
  HarnessOptions options;
  options.partitions = 1;
  GroupHarness h(BrokerConfig{}, options);
  for (const auto& op : zombie_script()) h.apply(op);
  EXPECT_EQ(h.violations(), std::vector<std::string>{});
  EXPECT_EQ(h.zombie_side_effects(), 3u);      // the zombie did process its 3 records
  EXPECT_EQ(h.zombie_commits_rejected(), 1u);  // but its commit was fenced
  EXPECT_EQ(h.broker().committed("g", {"t", 0}), 4);
}

TEST(GroupZombie, WithoutGenerationCheckTheZombieMovesTheOffsetBack) {
  HarnessOptions options;
  options.partitions = 1;
  BrokerConfig broken;
  broken.broken_no_generation_check = true;
  GroupHarness h(broken, options);
  for (const auto& op : zombie_script()) h.apply(op);
  ASSERT_EQ(h.violations().size(), 1u);
  EXPECT_EQ(h.violations()[0].rfind("monotonic:", 0), 0u) << h.violations()[0];
  EXPECT_EQ(h.broker().committed("g", {"t", 0}), 3);
}

}  // namespace
}  // namespace fl::sim::log
