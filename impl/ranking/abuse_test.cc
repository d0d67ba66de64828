// The abuse layers of 004 §9.1 and the four values of §9.2, on hand-built windows.

#include "impl/ranking/abuse.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace fl::ranking {
namespace {

BehaviourEvent ev(const std::string& id, const std::string& actor, Signal s = Signal::kSearch) {
  BehaviourEvent e;
  e.at_ms = 1000;
  e.event_id = id;
  e.topic_id = "T";
  e.signal = s;
  e.actor = actor;
  e.device = "dev-" + actor;
  e.ip = "ip-" + actor;
  e.account_age_days = 400;
  return e;
}

const AbuseOptions kOptions;

TEST(Abuse, RepeatsCountOnceAndReplaysAndMalformedEventsNever) {
  std::vector<BehaviourEvent> es = {ev("1", "a"), ev("2", "a"), ev("3", "b"), ev("3", "c"), ev("4", "d")};
  es.back().well_formed = false;
  const WindowValues v = window_values(es, kOptions)[static_cast<int>(Signal::kSearch)];
  EXPECT_EQ(v, (WindowValues{5, 2, 0, 2}));  // a (twice), b; c's event replays b's id; d malformed
}

TEST(Abuse, ActorsCrowdedOnOneDeviceAreSuspicious) {
  std::vector<BehaviourEvent> es;
  for (int i = 0; i <= kOptions.actors_per_device_max; ++i) {
    es.push_back(ev(std::to_string(i), "farm" + std::to_string(i), Signal::kEngage));
    es.back().device = "shared";
  }
  es.push_back(ev("x", "honest", Signal::kEngage));
  const WindowValues v = window_values(es, kOptions)[static_cast<int>(Signal::kEngage)];
  EXPECT_EQ(v.effective, kOptions.actors_per_device_max + 2);
  EXPECT_EQ(v.suspicious, kOptions.actors_per_device_max + 1);
  EXPECT_EQ(v.adjusted, 1);
}

TEST(Abuse, SynchronizedNewAccountsAreSuspiciousAndOldOnesAreNot) {
  std::vector<BehaviourEvent> young, old;
  for (int i = 0; i < kOptions.sync_accounts_min; ++i) {
    BehaviourEvent e = ev(std::to_string(i), "n" + std::to_string(i), Signal::kPost);
    e.at_ms = 4000 + i;
    e.account_age_days = kOptions.new_account_age_days;
    young.push_back(e);
    e.account_age_days = kOptions.new_account_age_days + 1;
    old.push_back(e);
  }
  EXPECT_EQ(window_values(young, kOptions)[static_cast<int>(Signal::kPost)].adjusted, 0);
  EXPECT_EQ(window_values(old, kOptions)[static_cast<int>(Signal::kPost)].suspicious, 0);
  // Spread over intervals they are not synchronized.
  for (size_t i = 0; i < young.size(); ++i) young[i].at_ms = static_cast<int64_t>(i) * kOptions.sync_interval_ms;
  EXPECT_EQ(window_values(young, kOptions)[static_cast<int>(Signal::kPost)].suspicious, 0);
}

TEST(Abuse, OneContentFromManyAccountsIsAMatrix) {
  std::vector<BehaviourEvent> es;
  for (int i = 0; i < kOptions.same_content_accounts_min; ++i) {
    es.push_back(ev(std::to_string(i), "m" + std::to_string(i), Signal::kPost));
    es.back().content_digest = "copy-paste";
  }
  EXPECT_EQ(window_values(es, kOptions)[static_cast<int>(Signal::kPost)].adjusted, 0);
  es.pop_back();
  EXPECT_EQ(window_values(es, kOptions)[static_cast<int>(Signal::kPost)].suspicious, 0);
}

TEST(Abuse, WithoutReplaysTheValuesDoNotDependOnTheEventsOrder) {
  // (Of two events with one id, the first received is the original: that is order, by design.)
  std::vector<BehaviourEvent> es;
  for (int i = 0; i < 30; ++i) {
    es.push_back(ev(std::to_string(i), "u" + std::to_string(i % 11), static_cast<Signal>(i % kSignals)));
    es.back().device = "d" + std::to_string(i % 4);
    es.back().account_age_days = i % 3;
    es.back().at_ms = 1000 * (i % 5);
  }
  const auto forward = window_values(es, kOptions);
  std::reverse(es.begin(), es.end());
  EXPECT_EQ(window_values(es, kOptions), forward);
  EXPECT_GT(forward[0].suspicious, 0) << "the window must exercise a layer";
}

}  // namespace
}  // namespace fl::ranking
