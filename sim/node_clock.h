// NodeClock: a node's local clock as a function of world time.
//
//   local(t) = t + offset_us + (t - anchor_us) * drift_ppm / 1e6
//
// Offset and drift are faults injectable at run time (a jump changes the offset; a drift change
// re-anchors so local time stays continuous). World time never goes backwards; local time may.
#pragma once

#include <cstdint>

namespace fl::sim {

// 2026-01-01T00:00:00Z: simulated time starts at a fixed, realistic epoch.
inline constexpr int64_t kEpochUs = 1'767'225'600'000'000LL;

class NodeClock {
 public:
  int64_t local_us(int64_t world_us) const {
    return world_us + offset_us_ + (world_us - anchor_us_) * drift_ppm_ / 1'000'000;
  }
  // World duration that elapses while `local_delay_us` passes on this clock (rounded up, >= 0).
  int64_t world_delay_us(int64_t local_delay_us) const {
    if (local_delay_us <= 0) return 0;
    if (drift_ppm_ == 0) return local_delay_us;
    __extension__ using i128 = __int128;
    const i128 num = static_cast<i128>(local_delay_us) * 1'000'000;
    const i128 den = 1'000'000 + drift_ppm_;
    return static_cast<int64_t>((num + den - 1) / den);
  }
  void jump(int64_t delta_us) { offset_us_ += delta_us; }
  void set_drift(int64_t world_now_us, int64_t drift_ppm) {
    offset_us_ += (world_now_us - anchor_us_) * drift_ppm_ / 1'000'000;
    anchor_us_ = world_now_us;
    drift_ppm_ = drift_ppm;
  }
  int64_t offset_us() const { return offset_us_; }
  int64_t drift_ppm() const { return drift_ppm_; }

 private:
  int64_t offset_us_ = 0;
  int64_t drift_ppm_ = 0;  // REQUIRES > -1e6
  int64_t anchor_us_ = kEpochUs;
};

}  // namespace fl::sim
