#include "properties/likes/run.h"
#include "impl/ports/assert.h"

#include <algorithm>

namespace fl::likes::props {

std::string HistoryOp::describe() const {
  std::string s =
      "#" + std::to_string(id) + " " + process + " " + op + " " + args + " [" + std::to_string(invoke_us) + ", ";
  s += complete_us < 0 ? std::string("open") : std::to_string(complete_us);
  s += "] -> " + std::string(outcome_name(outcome));
  if (!result.empty()) s += " " + result;
  return s;
}

int64_t StoreSnapshot::rows_of(int64_t asset) const {
  int64_t n = 0;
  for (const auto& [pair, rows] : db_rows) {
    if (pair.first == asset) n += rows;
  }
  return n;
}

bool LikesRun::in_grace(int64_t s_us, int64_t e_us) const {
  for (const auto& [a, b] : redis_grace) {
    if (s_us < b && e_us >= a) return true;
  }
  return false;
}

GraceTracker::GraceTracker(int64_t repair_us, int64_t start_us) : repair_us_(repair_us), last_sample_us_(start_us) {
  FL_ASSERT(repair_us >= 0);
}

void GraceTracker::on_sample(int64_t now_us, bool restarted, bool repairable) {
  FL_ASSERT(now_us >= last_sample_us_);
  if (restarted && !open_start_us_) open_start_us_ = last_sample_us_;
  if (restarted) repairable_since_us_.reset();
  last_sample_us_ = now_us;
  if (!open_start_us_) return;
  if (!repairable) {
    repairable_since_us_.reset();
    return;
  }
  if (!repairable_since_us_) repairable_since_us_ = now_us;
  if (now_us - *repairable_since_us_ >= repair_us_) {
    closed_.emplace_back(*open_start_us_, now_us);
    open_start_us_.reset();
    repairable_since_us_.reset();
  }
}

std::vector<std::pair<int64_t, int64_t>> GraceTracker::windows(int64_t end_us) const {
  std::vector<std::pair<int64_t, int64_t>> out = closed_;
  if (open_start_us_) out.emplace_back(*open_start_us_, std::max(end_us, *open_start_us_));
  return out;
}

}  // namespace fl::likes::props
