#include "sim/log/group_harness.h"
#include "impl/ports/assert.h"

#include <algorithm>

namespace fl::sim::log {

std::string HarnessOp::describe() const {
  static const char* const kNames[] = {"join",  "poll",  "process", "commit", "crash",
                                       "pause", "leave", "produce", "advance"};
  return std::string(kNames[kind]) + "(c" + std::to_string(consumer) + "," + std::to_string(arg) + ")";
}

GroupHarness::GroupHarness(const BrokerConfig& config, const HarnessOptions& options)
    : broker_(config), options_(options) {
  FL_ASSERT(options.consumers > 0 && options.partitions > 0);
  TopicConfig tc;
  tc.partitions = options.partitions;
  LogStatus s = broker_.create_topic(kTopic, tc);
  FL_ASSERT(s == LogStatus::kOk);
  (void)s;
  broker_.tick(now_us_);
  consumers_.resize(options.consumers);
}

bool GroupHarness::can_act(const Consumer& c) const { return !c.crashed && now_us_ >= c.paused_until_us; }

void GroupHarness::apply(const HarnessOp& op) {
  Consumer& c = consumers_[op.consumer % consumers_.size()];
  switch (op.kind) {
    case HarnessOp::kJoin:
      if (c.crashed) c = Consumer{};  // a restart: a new incarnation, nothing remembered
      if (can_act(c) && c.member_id.empty()) join(c);
      break;
    case HarnessOp::kPoll:
      if (can_act(c) && !c.member_id.empty()) poll(c);
      break;
    case HarnessOp::kProcess:
      if (can_act(c)) process(c);
      break;
    case HarnessOp::kCommit:
      if (can_act(c) && !c.member_id.empty()) commit(c);
      break;
    case HarnessOp::kCrash:
      c.crashed = true;  // the broker only notices through the session timeout
      break;
    case HarnessOp::kPause:
      if (can_act(c)) c.paused_until_us = now_us_ + 1 + op.arg % (3 * options_.session_timeout_us);
      break;
    case HarnessOp::kLeave:
      if (can_act(c) && !c.member_id.empty()) {
        broker_.leave(kGroup, c.member_id, now_us_);
        c = Consumer{};
      }
      break;
    case HarnessOp::kProduce: {
      ProduceRequest r;
      r.topic = kTopic;
      r.key = "k" + std::to_string(op.arg % 17);
      r.value = "v" + std::to_string(next_value_++);
      ProduceReply reply = broker_.produce(r, now_us_);
      if (reply.status != LogStatus::kOk) violation("produce failed: " + std::string(log_status_name(reply.status)));
      produced_[{kTopic, reply.partition}].insert(reply.offset);
      break;
    }
    case HarnessOp::kAdvance:
      advance(1 + op.arg % (options_.session_timeout_us / 2));
      break;
  }
  check_step(op.describe());
}

void GroupHarness::join(Consumer& c) {
  c.client_id = "c" + std::to_string(incarnations_++);
  JoinReply j = broker_.join(kGroup, c.client_id, {kTopic}, options_.protocol, options_.session_timeout_us, now_us_);
  FL_ASSERT(j.status == LogStatus::kOk);
  c.member_id = j.member_id;
  c.generation = j.generation;
  c.positions.clear();
}

void GroupHarness::poll(Consumer& c) {
  PollReply r = broker_.poll(kGroup, c.member_id, c.positions, options_.max_poll_records, now_us_);
  if (r.status == LogStatus::kUnknownMember) {
    // Evicted: Kafka's consumer loses its partitions and rejoins; records it holds are still
    // processed by the application (that is the zombie's work).
    drop_stints(c);
    join(c);
    return;
  }
  c.generation = r.generation;
  if (r.status == LogStatus::kRebalanceInProgress) {
    drop_stints(c);  // eager: everything was revoked
    return;
  }
  FL_ASSERT(r.status == LogStatus::kOk);
  // Ownership stints: a partition that is gone or newly (re)assigned drops uncommitted progress
  // of the previous stint; records of that stint still get processed (side effects), uncounted.
  std::set<TopicPartition> counted;
  for (const auto& tp : r.assignment)
    if (c.positions.count(tp) && c.counted.count(tp)) counted.insert(tp);
  for (const auto& tp : r.assignment)
    if (!c.positions.count(tp)) counted.insert(tp);  // a new stint starts now
  for (auto it = c.processed_next.begin(); it != c.processed_next.end();)
    it = (c.positions.count(it->first) && counted.count(it->first)) ? std::next(it) : c.processed_next.erase(it);
  for (auto& rec : c.inflight)
    if (rec.offset >= 0 && (!c.counted.count({rec.topic, rec.partition}) || !counted.count({rec.topic, rec.partition})))
      rec.offset = -1 - rec.offset;  // marks "uncounted" (negative offset)
  c.counted = counted;
  // Per-partition order: each partition's records continue exactly where this consumer's fetch
  // position was (or where the broker said the fetch starts, for a newly owned partition).
  std::map<TopicPartition, int64_t> expect;
  for (const auto& tp : r.assignment) {
    auto it = c.positions.find(tp);
    if (it != c.positions.end()) expect[tp] = std::max(it->second, broker_.log_start_offset(tp));
  }
  for (const LogRecord& rec : r.records) {
    TopicPartition tp{rec.topic, rec.partition};
    auto [it, fresh] = expect.try_emplace(tp, rec.offset);
    if (it->second != rec.offset) {
      violation("order: " + c.member_id + " got " + rec.describe() + ", expected offset " + std::to_string(it->second));
    }
    it->second = rec.offset + 1;
    (void)fresh;
  }
  c.positions = r.positions;
  for (auto& rec : r.records) c.inflight.push_back(std::move(rec));
}

void GroupHarness::drop_stints(Consumer& c) {
  c.positions.clear();
  c.processed_next.clear();
  c.counted.clear();
  for (auto& rec : c.inflight)
    if (rec.offset >= 0) rec.offset = -1 - rec.offset;
}

void GroupHarness::process(Consumer& c) {
  // The side effect: "processed" is recorded whether or not this consumer is still a member.
  const auto members = broker_.members(kGroup);
  const bool zombie = !c.member_id.empty() && !std::count(members.begin(), members.end(), c.member_id);
  for (const LogRecord& rec : c.inflight) {
    TopicPartition tp{rec.topic, rec.partition};
    const bool counted = rec.offset >= 0;
    const int64_t offset = counted ? rec.offset : -1 - rec.offset;
    processed_[tp].insert(offset);
    if (counted) c.processed_next[tp] = std::max(c.processed_next[tp], offset + 1);
    if (zombie) ++zombie_side_effects_;
  }
  c.inflight.clear();
}

void GroupHarness::commit(Consumer& c) {
  // Like commitSync(): commit the progress of the partitions this consumer owns (as of its last
  // poll); progress on revoked partitions is the new owner's to commit.
  OffsetMap offsets;
  for (const auto& [tp, next] : c.processed_next)
    if (c.positions.count(tp)) offsets[tp] = next;
  if (offsets.empty()) return;
  const auto members = broker_.members(kGroup);
  const bool zombie =
      !std::count(members.begin(), members.end(), c.member_id) || c.generation != broker_.generation(kGroup);
  LogStatus s = broker_.commit(kGroup, c.member_id, c.generation, offsets, now_us_);
  if (zombie && s == LogStatus::kCommitFailed) ++zombie_commits_rejected_;
  if (s == LogStatus::kOk) {
    // Commits are for the processed records of partitions still owned; forget the rest.
    c.processed_next.clear();
  } else if (s == LogStatus::kCommitFailed) {
    c.processed_next.clear();  // CommitFailedException: the work is redone by the new owner
  }
}

void GroupHarness::advance(int64_t delta_us) {
  now_us_ += delta_us;
  broker_.tick(now_us_);
}

void GroupHarness::check_step(const std::string& what) {
  // Exclusive ownership among members.
  std::map<TopicPartition, std::string> owner;
  const auto members = broker_.members(kGroup);
  for (const auto& [member, tps] : broker_.owners(kGroup)) {
    if (!std::count(members.begin(), members.end(), member))
      violation("exclusive: non-member " + member + " owns partitions after " + what);
    for (const auto& tp : tps) {
      auto [it, fresh] = owner.emplace(tp, member);
      if (!fresh)
        violation("exclusive: " + tp.describe() + " owned by " + it->second + " and " + member + " after " + what);
    }
  }
  // Committed offsets never move backwards.
  for (int32_t p = 0; p < options_.partitions; ++p) {
    TopicPartition tp{kTopic, p};
    auto committed = broker_.committed(kGroup, tp);
    if (!committed) continue;
    auto [it, fresh] = max_committed_.try_emplace(tp, *committed);
    if (*committed < it->second) {
      violation("monotonic: committed " + tp.describe() + " moved back from " + std::to_string(it->second) + " to " +
                std::to_string(*committed) + " after " + what);
    }
    it->second = std::max(it->second, *committed);
  }
}

void GroupHarness::finish() {
  // Heal: pauses end, crashed members time out.
  advance(3 * options_.session_timeout_us + 1);
  for (Consumer& c : consumers_) c.paused_until_us = 0;
  bool anyone = false;
  for (Consumer& c : consumers_) anyone = anyone || !c.crashed;
  if (!anyone) consumers_[0] = Consumer{};
  for (int round = 0; round < 10'000; ++round) {
    for (Consumer& c : consumers_) {
      if (c.crashed) continue;
      if (c.member_id.empty()) join(c);
      poll(c);
      process(c);
      if (!c.member_id.empty()) commit(c);
      check_step("finish");
    }
    advance(1);
    bool drained = !broker_.rebalancing(kGroup);
    for (int32_t p = 0; p < options_.partitions && drained; ++p) {
      TopicPartition tp{kTopic, p};
      auto committed = broker_.committed(kGroup, tp);
      drained = broker_.log_end_offset(tp) == 0 || (committed && *committed == broker_.log_end_offset(tp));
    }
    if (drained && round > 2) break;
  }
  // Completeness: every partition has exactly one owner among the live consumers.
  std::set<TopicPartition> owned;
  for (const auto& [member, tps] : broker_.owners(kGroup)) owned.insert(tps.begin(), tps.end());
  for (int32_t p = 0; p < options_.partitions; ++p) {
    if (!owned.count({kTopic, p}))
      violation("exclusive: " + TopicPartition{kTopic, p}.describe() + " has no owner at the end");
  }
  // At-least-once: every produced record was processed.
  for (const auto& [tp, offsets] : produced_) {
    for (int64_t o : offsets) {
      if (!processed_[tp].count(o))
        violation("delivery: " + tp.describe() + "@" + std::to_string(o) + " never processed");
    }
  }
}

}  // namespace fl::sim::log
