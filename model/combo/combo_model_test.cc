#include "model/combo/combo_model.h"

#include <gtest/gtest.h>

namespace fl::model::combo {
namespace {

Purchase p(int64_t pid, int64_t t_ms, int64_t item = 1) {
  Purchase x;
  x.pid = pid;
  x.key = Key{1, 7, item};
  x.qty = 1;
  x.lo_us = t_ms * 1000;
  x.hi_us = t_ms * 1000 + 500;
  return x;
}

TEST(ComboModel, IntendedWindowsFollowTheDefinition) {
  // 0 s, 1 s, 2.9 s -> one window; 3.0 s opens the next; a different item is its own window.
  auto w = intended_windows({p(1, 0), p(2, 1000), p(3, 2900), p(4, 3000), p(5, 100, 2)}, 3000);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0], (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(w[1], (std::vector<int64_t>{4}));
  EXPECT_EQ(w[2], (std::vector<int64_t>{5}));
}

TEST(ComboModel, AttributesToRecordsByFirstPid) {
  std::map<Key, std::vector<int64_t>> ids{{Key{1, 7, 1}, {1, 4}}};
  Assignment a = assigned_groups({p(1, 0), p(2, 1000), p(3, 2900), p(4, 3000)}, ids);
  ASSERT_EQ(a.groups.size(), 2u);
  EXPECT_EQ(a.groups[0].qty_all, 3);
  EXPECT_EQ(a.groups[1].pids, (std::vector<int64_t>{4}));
  EXPECT_EQ(a.group_of(3)->min_pid, 1);
}

TEST(ComboModel, ServerWindowIdsWin) {
  auto a1 = p(1, 0), a2 = p(2, 10), a3 = p(3, 20);
  a1.window_id = 2;
  a2.window_id = 2;
  a3.window_id = 3;
  Assignment a = assigned_groups({a1, a2, a3}, {});
  ASSERT_EQ(a.groups.size(), 2u);
  EXPECT_EQ(a.groups[0].min_pid, 1);
  EXPECT_EQ(a.groups[0].qty_all, 2);
}

TEST(ComboModel, RowsLeftOutOfARecordedWindowStayAlone) {
  // Window 1 was recorded with members {1, 2}; row 3 (no window) is not among them, so it is not
  // attributed to record 1 by pid order: it belongs to no published window.
  auto a1 = p(1, 0), a2 = p(2, 10), a3 = p(3, 20);
  a1.window_id = 1;
  a2.window_id = 1;
  std::map<Key, std::vector<int64_t>> ids{{Key{1, 7, 1}, {1}}};
  Assignment a = assigned_groups({a1, a2, a3}, ids);
  ASSERT_EQ(a.groups.size(), 2u);
  EXPECT_EQ(a.group_of(1)->qty_all, 2);
  EXPECT_EQ(a.group_of(3)->label, "p:3");
}

}  // namespace
}  // namespace fl::model::combo
