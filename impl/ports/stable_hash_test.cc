#include "impl/ports/stable_hash.h"

#include <gtest/gtest.h>

#include <string>

#include "impl/ports/text.h"

namespace fl {
namespace {

// Saved fingerprints depend on these values: they must never change.
TEST(StableHash, KnownValues) {
  EXPECT_EQ(stable_hash(""), mix64(0xcbf29ce484222325ULL));
  EXPECT_EQ(stable_hash("a"), mix64((0xcbf29ce484222325ULL ^ 'a') * 0x100000001b3ULL));
}

TEST(StableHasher, AnySplitOfTheBytesHashesLikeTheWhole) {
  const std::string text = "sql txn agg-1#42 | UPDATE t SET v = ? ['it''s', 7, NULL] expect=changed";
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    StableHasher h;
    h += std::string_view(text).substr(0, cut);
    h.append(text.data() + cut, text.data() + text.size());
    EXPECT_EQ(h.finish(), stable_hash(text)) << "cut at " << cut;
  }
  StableHasher by_char;
  for (char c : text) by_char += c;
  EXPECT_EQ(by_char.finish(), stable_hash(text));
}

TEST(StableHasher, AppendDecimalHashesTheDecimalText) {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{42}, INT64_MIN, INT64_MAX}) {
    StableHasher h;
    append_decimal(h, v);
    EXPECT_EQ(h.finish(), stable_hash(std::to_string(v))) << v;
  }
}

}  // namespace
}  // namespace fl
