// Scenario files for benchmarks: loaded from the source tree (FAULTLINE_SOURCE_DIR, which each
// benchmark target defines) once per file for the whole process; benchmarks run sequentially.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "harness/scenario_loader.h"

namespace fl::bench {

// The scenario at `relative` (to the source tree), or nullptr with the loader's error in *error.
inline const Scenario* find_scenario(const std::string& relative, std::string* error = nullptr) {
  static std::map<std::string, Scenario> cache;
  if (auto it = cache.find(relative); it != cache.end()) return &it->second;
  LoadResult r = load_scenario_file(std::string(FAULTLINE_SOURCE_DIR) + "/" + relative);
  if (!r.ok()) {
    if (error != nullptr) *error = r.error_text();
    return nullptr;
  }
  return &cache.emplace(relative, *r.scenario).first->second;
}

// The scenario at `relative`; a file that does not load is a broken benchmark: print and abort.
inline const Scenario& scenario(const std::string& relative) {
  std::string error;
  const Scenario* s = find_scenario(relative, &error);
  if (s == nullptr) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::abort();
  }
  return *s;
}

}  // namespace fl::bench
