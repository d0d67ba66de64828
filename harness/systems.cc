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
        &combo_system(),
        &demo_system(),
        &gifts_system(),
        &likes_system(),
        &ranking_system(),
    };
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
    return v;
  }();
  return systems;
}

const SystemUnderTest* find_system(const std::string& name) {
  for (const SystemUnderTest* s : all_systems()) {
    if (s->name() == name) return s;
  }
  return nullptr;
}

}  // namespace fl
