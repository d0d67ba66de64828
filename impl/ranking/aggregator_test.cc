// The checkpoint encoding of an aggregator's partition state (impl/ranking/aggregator.h): the
// flushed encoding is the encoding of the flushed copy, and decode reads back what encode wrote.
#include "impl/ranking/aggregator.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <iterator>
#include <string>

namespace fl::ranking {
namespace {

// A state with every kind of line: keys (dirty or not) with idempotency records, actors, contents
// and shards (dirty or not), hot-topic counters and watermark facts.
rc::Gen<PartitionState> any_state() {
  return rc::gen::exec([] {
    PartitionState s;
    s.generation = *rc::gen::inRange<int64_t>(1, 5);
    s.next_offset = *rc::gen::inRange<int64_t>(0, 1000);
    s.max_event_time_ms = *rc::gen::inRange<int64_t>(0, 1'000'000);
    const int keys = *rc::gen::inRange(0, 4);
    for (int i = 0; i < keys; ++i) {
      AggKey key{"topic" + std::to_string(i % 2), "GLOBAL|ALL|ALL|ALL", i % 2 ? "short" : "long",
                 *rc::gen::inRange<int64_t>(0, 100'000), i % 3 ? "search_users" : "post_contents"};
      KeyState& k = s.keys[key.str()];
      k.key = key;
      k.generation = s.generation;
      k.version = *rc::gen::inRange<int64_t>(0, 9);
      k.dirty = *rc::gen::arbitrary<bool>();
      k.counts_content = *rc::gen::arbitrary<bool>();
      const int events = *rc::gen::inRange(0, 6);
      for (int e = 0; e < events; ++e) {
        k.applied.insert("p" + std::to_string(e) + ":" + std::to_string(*rc::gen::inRange(0, 50)));
        ++k.actors["actor" + std::to_string(*rc::gen::inRange(0, 3))];
        k.contents.insert("c" + std::to_string(*rc::gen::inRange(0, 3)));
      }
      const int shards = *rc::gen::inRange(0, 3);
      for (int salt = 0; salt < shards; ++salt) {
        Shard& sh = k.shards[salt];
        sh.raw = *rc::gen::inRange<int64_t>(0, 20);
        sh.version = *rc::gen::inRange<int64_t>(0, 5);
        sh.dirty = *rc::gen::arbitrary<bool>();
        for (int64_t e = 0; e < sh.raw; ++e) sh.sketch.add("actor" + std::to_string(e));
      }
    }
    if (*rc::gen::arbitrary<bool>()) s.topic_records["topic0|GLOBAL|ALL|ALL|ALL"] = *rc::gen::inRange<int64_t>(1, 99);
    if (*rc::gen::arbitrary<bool>()) {
      s.wm.watermark = *rc::gen::inRange<int64_t>(0, 1'000'000);
      s.wm.sources["search|0"].max_event_ms = s.wm.watermark;
      s.wm.windows["GLOBAL|ALL|ALL|ALL#short#0#60000"] = "OPEN";
    }
    return s;
  });
}

RC_GTEST_PROP(PartitionStateEncoding, TheFlushedEncodingIsTheEncodingOfTheFlushedCopy, ()) {
  const PartitionState s = *any_state();
  const int64_t next = *rc::gen::inRange<int64_t>(0, 2000);
  PartitionState flushed = s;
  flushed.next_offset = next;
  for (auto& [ak, k] : flushed.keys) k.mark_flushed();
  RC_ASSERT(s.encode_flushed(next) == flushed.encode());
}

// Without kept lines (incremental checkpoints' bases) the text is the same, and nothing is kept.
RC_GTEST_PROP(PartitionStateEncoding, EncodingWithoutKeptLinesIsTheSameTextAndKeepsNothing, ()) {
  const PartitionState s = *any_state();
  const int64_t next = *rc::gen::inRange<int64_t>(0, 2000);
  const std::string dropped = s.encode_flushed(next, KeptLines::kDrop);
  for (const auto& [ak, k] : s.keys) RC_ASSERT(k.flushed_lines.text.empty());
  RC_ASSERT(dropped == s.encode_flushed(next, KeptLines::kKeep));
}

// encode_flushed keeps each key's lines between flushes (KeyState::flushed_lines): after a flush
// commits or fails and the aggregator changes some keys as apply and recovery do, the next
// flushed encoding is still the encoding of the flushed copy, never a kept line gone stale.
RC_GTEST_PROP(PartitionStateEncoding, KeptLinesFollowEveryChangeBetweenFlushes, ()) {
  PartitionState s = *any_state();
  const int rounds = *rc::gen::inRange(1, 5);
  for (int round = 0; round < rounds; ++round) {
    const int64_t next = s.next_offset + *rc::gen::inRange<int64_t>(0, 50);
    PartitionState flushed = s;
    flushed.next_offset = next;
    for (auto& [ak, k] : flushed.keys) k.mark_flushed();
    RC_ASSERT(s.encode_flushed(next) == flushed.encode());
    if (*rc::gen::arbitrary<bool>()) {  // the flush committed (else it failed: keys stay dirty)
      s.next_offset = next;
      for (auto& [ak, k] : s.keys) k.mark_flushed();
    }
    for (auto& [ak, k] : s.keys) {
      switch (*rc::gen::inRange(0, 4)) {
        case 0:  // an event applied (aggregator.cc, apply): a new record, its actor and content
          k.applied.insert("r" + std::to_string(round) + ":" + ak);
          ++k.actors["actor" + std::to_string(*rc::gen::inRange(0, 3))];
          k.contents.insert("c" + std::to_string(*rc::gen::inRange(0, 3)));
          k.dirty = true;
          if (!k.shards.empty()) {
            Shard& sh = k.shards.begin()->second;
            ++sh.raw;
            sh.sketch.add("actor" + std::to_string(round));
            sh.dirty = true;
          }
          break;
        case 1:  // a recovery into a new generation (aggregator.cc, recover)
          k.generation = s.generation + 1;
          k.version = 0;
          k.dirty = true;
          for (auto& [salt, sh] : k.shards) {
            sh.version = 0;
            sh.dirty = true;
          }
          break;
        default:  // untouched: its kept lines serve the next flush
          break;
      }
    }
  }
}

RC_GTEST_PROP(PartitionStateEncoding, DecodeReadsBackWhatEncodeWrote, ()) {
  const PartitionState s = *any_state();
  const std::string text = s.encode();
  RC_ASSERT(PartitionState::decode(text).encode() == text);
}

// Incremental checkpoints (AggregatorOptions::incremental_checkpoints): a base, then after each
// committed flush its delta; decoding the base and applying the deltas in order gives the state
// the aggregator holds, whatever the flushes applied, created, purged or counted in between.
RC_GTEST_PROP(PartitionStateEncoding, TheDeltasOnTheirBaseAreTheState, ()) {
  PartitionState s = *any_state();
  for (auto& [ak, k] : s.keys) {  // a base is written clean (after a committed flush)
    k.dirty = false;
    for (auto& [salt, sh] : k.shards) sh.dirty = false;
  }
  s.reindex_dirty();
  PartitionState loaded = PartitionState::decode(s.encode_flushed(s.next_offset));
  const int rounds = *rc::gen::inRange(1, 6);
  for (int round = 0; round < rounds; ++round) {
    const int changes = *rc::gen::inRange(0, 8);
    for (int c = 0; c < changes; ++c) {
      switch (*rc::gen::inRange(0, 4)) {
        case 0:
        case 1: {  // a record applied to a key, new or not (aggregator.cc, apply)
          AggKey key{"topic" + std::to_string(*rc::gen::inRange(0, 3)), "GLOBAL|ALL|ALL|ALL", "short",
                     *rc::gen::inRange<int64_t>(0, 3) * 60'000, "search_users"};
          auto [it, created] = s.keys.try_emplace(key.str());
          if (created) it->second.generation = s.generation;
          it->second.key = key;
          const std::string record = "r" + std::to_string(*rc::gen::inRange(0, 12));
          if (s.apply_record(it->first, it->second, record, "actor" + std::to_string(*rc::gen::inRange(0, 3)),
                             "c" + std::to_string(*rc::gen::inRange(0, 3)), /*fresh=*/true) &&
              !it->second.shards.empty()) {
            Shard& sh = it->second.shards.begin()->second;
            ++sh.raw;
            sh.sketch.add(record);
            sh.dirty = true;
          }
          break;
        }
        case 2:  // a purge (aggregator.cc, purge): the key goes
          if (!s.keys.empty()) {
            auto it = std::next(s.keys.begin(), *rc::gen::inRange<size_t>(0, s.keys.size()));
            s.erased_keys.insert(it->first);
            s.dirty_keys.erase(it->first);
            s.keys.erase(it);
          }
          break;
        default:  // a hot-topic counter and the watermark move
          s.topic_records["topic1|GLOBAL|ALL|ALL|ALL"] += 1;
          s.changed_topics.insert("topic1|GLOBAL|ALL|ALL|ALL");
          s.wm.watermark = std::max<int64_t>(s.wm.watermark, 0) + 1;
          s.wm.windows["GLOBAL|ALL|ALL|ALL#short#" + std::to_string(round) + "#60000"] = "CLOSED";
          break;
      }
    }
    const int64_t next = s.next_offset + *rc::gen::inRange<int64_t>(0, 50);
    PartitionState::decode_into(loaded, s.encode_delta(next));
    s.mark_flushed();
    s.next_offset = next;
    RC_ASSERT(loaded.encode() == s.encode());
  }
}

TEST(PartitionStateEncoding, AFlushAdvancesOnlyTheDirtyVersions) {
  PartitionState s;
  AggKey a{"t", "GLOBAL|ALL|ALL|ALL", "short", 0, "search_users"};
  AggKey b{"u", "GLOBAL|ALL|ALL|ALL", "short", 0, "search_users"};
  s.keys[a.str()].key = a;
  s.keys[a.str()].version = 3;
  s.keys[a.str()].dirty = true;
  s.keys[b.str()].key = b;
  s.keys[b.str()].version = 7;
  const PartitionState back = PartitionState::decode(s.encode_flushed(42));
  EXPECT_EQ(back.next_offset, 42);
  EXPECT_EQ(back.keys.at(a.str()).version, 4);
  EXPECT_EQ(back.keys.at(b.str()).version, 7);
  EXPECT_EQ(s.keys.at(a.str()).version, 3);  // the state itself is not touched
}

}  // namespace
}  // namespace fl::ranking
