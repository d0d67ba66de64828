#include "sim/scheduler.h"
#include "impl/ports/assert.h"

namespace fl::sim {

uint32_t Scheduler::store_action(std::function<void()> fn) {
  FL_ASSERT(fn);
  if (!free_slots_.empty()) {
    const uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    FL_ASSERT(!actions_[slot]);
    actions_[slot] = std::move(fn);
    return slot;
  }
  actions_.push_back(std::move(fn));
  FL_ASSERT(actions_.size() < kNoAction);
  return static_cast<uint32_t>(actions_.size() - 1);
}

std::function<void()> Scheduler::take_action(uint32_t slot) {
  FL_ASSERT(slot < actions_.size());
  std::function<void()> fn = std::move(actions_[slot]);
  actions_[slot] = nullptr;
  free_slots_.push_back(slot);
  FL_ASSERT(fn);
  return fn;
}

}  // namespace fl::sim
