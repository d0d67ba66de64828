// The registry of systems compiled into faultline: the declarations (fl_system, generated into
// systems_registry.cc) as SystemUnderTest pointers.
#include <algorithm>

#include "harness/system.h"
#include "impl/ports/assert.h"

namespace fl {

const std::vector<const SystemUnderTest*>& all_systems() {
  static const std::vector<const SystemUnderTest*> systems = [] {
    std::vector<const SystemUnderTest*> v;
    for (const SystemDeclaration& d : declared_systems()) v.push_back(d.system);
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
    for (size_t i = 1; i < v.size(); ++i) FL_ASSERT(v[i - 1]->name() != v[i]->name());
    return v;
  }();
  return systems;
}

std::vector<std::string> system_names() {
  std::vector<std::string> names;
  for (const SystemUnderTest* s : all_systems()) names.push_back(s->name());
  return names;
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
