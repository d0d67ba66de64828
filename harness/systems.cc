// The registry of systems compiled into faultline. Each adapter in harness/systems/ defines a
// `const SystemUnderTest& xxx_system()`; add one line per system below (kept sorted by name).
#include <algorithm>

#include "harness/system.h"

namespace fl {

const SystemUnderTest& combo_system();
const SystemUnderTest& demo_system();
const SystemUnderTest& gifts_system();
const SystemUnderTest& likes_system();
const SystemUnderTest& ranking_system();

const std::vector<const SystemUnderTest*>& all_systems() {
  static const std::vector<const SystemUnderTest*> systems = [] {
    std::vector<const SystemUnderTest*> v = {
        &combo_system(), &demo_system(), &gifts_system(), &likes_system(), &ranking_system(),
    };
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
    return v;
  }();
  return systems;
}

std::vector<int64_t> boundary_gaps_ms(const std::vector<CriticalDuration>& critical, int64_t max_ms) {
  std::vector<int64_t> gaps;
  for (const CriticalDuration& c : critical) {
    const int64_t ms = c.duration_us / 1000;
    if (ms <= 0 || ms > max_ms) continue;
    for (int64_t d : {ms - 1, ms, ms + 1}) {
      if (std::find(gaps.begin(), gaps.end(), d) == gaps.end()) gaps.push_back(d);
    }
  }
  return gaps;
}

const SystemUnderTest* find_system(const std::string& name) {
  for (const SystemUnderTest* s : all_systems()) {
    if (s->name() == name) return s;
  }
  return nullptr;
}

}  // namespace fl
