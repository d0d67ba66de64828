#include "properties/likes/run.h"

namespace fl::likes::props {

std::string HistoryOp::describe() const {
  std::string s = "#" + std::to_string(id) + " " + process + " " + op + " " + args + " [" +
                  std::to_string(invoke_us) + ", ";
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

}  // namespace fl::likes::props
