// `faultline list`: what this binary knows — systems, their properties (the properties
// catalogue, with invariant ids), workload kinds, params, fault kinds and matrix rows.
#include <cstdio>
#include <string>

#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/faults.h"
#include "harness/params.h"
#include "harness/system.h"
#include "harness/matrix_rows.h"
#include "sim/redis/eviction_policies.h"

namespace fl {

namespace {

const char* kListUsage =
    "usage: faultline list [systems|params|properties|faults|rows [MATRIX]]\n"
    "  Prints, as Markdown, what this binary knows (default: everything but rows). `params` is each\n"
    "  system's typed `params:` (type, unit, range, default), as in docs/scenario-format.md.\n";

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

void list_systems() {
  std::printf("## Systems\n\n| system | variants | workload kinds | params | description |\n|---|---|---|---|---|\n");
  for (const SystemUnderTest* s : all_systems()) {
    std::vector<std::string> params;
    for (const ParamInfo& p : s->params()) params.push_back(p.name);
    std::printf("| %s | %s | %s | %s | %s |\n", s->name().c_str(), join(s->variants()).c_str(),
                join(s->workload_kinds()).c_str(), join(params).c_str(), s->description().c_str());
  }
  std::printf("\n");
}

void list_properties() {
  std::printf("## Properties\n\n| system | property | invariants | what it checks |\n|---|---|---|---|\n");
  for (const SystemUnderTest* s : all_systems()) {
    for (const PropertyInfo& p : s->properties()) {
      std::printf("| %s | %s | %s | %s |\n", s->name().c_str(), p.name.c_str(), join(p.invariants).c_str(),
                  p.description.c_str());
    }
  }
  std::printf("\n");
}

void list_faults() {
  std::printf(
      "## Fault kinds\n\nscheduled (`faults:`): %s\n\nswarm (`swarm.kinds`): %s\n\n"
      "swarm, opt-in (name them in `swarm.kinds`): %s\n\n"
      "swarm, opt-in, only with `network.at_least_once: true`: %s\n\n",
      join(scheduled_fault_kinds()).c_str(), join(swarm_fault_kinds()).c_str(), join(redis_error_fault_kinds()).c_str(),
      join(at_least_once_fault_kinds()).c_str());
  // Issue 16's kinds that are not injected faults: drawn client patience, exact boundaries, and
  // what the fault log records besides injected faults.
  std::printf(
      "swarm option `patience: true` (clients' timeouts and retries drawn per seed, both sides of the "
      "server's internal budget):");
  for (const SystemUnderTest* s : all_systems()) {
    Scenario probe;
    probe.system = s->name();
    probe = with_config(probe);
    for (const PatienceParam& p : s->patience(probe)) {
      std::printf(" %s.%s (budget %lld, %lld..%lld)", s->name().c_str(), p.param.c_str(),
                  static_cast<long long>(p.budget), static_cast<long long>(p.min), static_cast<long long>(p.max));
    }
  }
  std::printf(
      "\n\nexact boundaries: combo param `boundary_percent` (second click a critical duration -1/0/+1 ms "
      "after the first; judged at Redis's certain instants); likes param `boundary_percent` (a like, unlike "
      "or state read on the same pair a critical duration -1/0/+1 ms after a like/unlike)\n\n"
      "fault log records besides injected faults: message-lost, redis-error (refusals), eviction (key), "
      "late-duplicate\n\n");
  std::printf(
      "eviction: `topology.redis.maxmemory_bytes` with `maxmemory_policy` (%s; approximated LRU/LFU "
      "sampling, `maxmemory_samples`); every evicted key is in the fault log\n\n"
      "lying disk: `storage.volatile_write_cache: true` (fsync returns while the data is in the drive's cache, "
      "durable `write_cache_flush_ms` later; a DB power loss drops it; reports list the guarantees it voids)\n\n"
      "completeness of what was published: combo property `published-visible`\n\n",
      join(sim::redis::eviction_policies()).c_str());
}

void list_rows(const std::string& matrix) {
  std::printf("## Matrix rows (%s)\n\n| row | matrix | invariants | source | pass condition |\n|---|---|---|---|---|\n",
              matrix.c_str());
  for (const reports::MatrixRow* r : rows_of_matrix(matrix)) {
    std::printf("| %s | %s | %s | %s | %s |\n", r->id.c_str(), r->matrix.c_str(), join(r->invariants).c_str(),
                r->source.c_str(), r->pass_condition.c_str());
  }
  std::printf("\n");
}

}  // namespace

int list_main(const Args& args) {
  const CliFlags f(args, kListUsage, {});
  if (f.status() >= 0) return f.status();
  if (f.positional().size() > 2) return f.error("too many arguments");
  const std::string what = f.positional().empty() ? "" : f.positional()[0];
  if (what.empty() || what == "systems") list_systems();
  if (what.empty() || what == "params") std::printf("## Params\n\n%s\n", params_markdown(all_systems()).c_str());
  if (what.empty() || what == "properties") list_properties();
  if (what.empty() || what == "faults") list_faults();
  if (what == "rows") {
    const std::string matrix = f.positional().size() > 1 ? f.positional()[1] : "all";
    if (rows_of_matrix(matrix).empty()) {
      std::fprintf(stderr, "faultline: unknown matrix '%s'\n%s", matrix.c_str(), kListUsage);
      return 2;
    }
    list_rows(matrix);
  }
  if (!what.empty() && what != "systems" && what != "params" && what != "properties" && what != "faults" &&
      what != "rows") {
    std::fprintf(stderr, "faultline: unknown list '%s'\n%s", what.c_str(), kListUsage);
    return 2;
  }
  return 0;
}

}  // namespace fl

namespace fl {

namespace {

const char* kFixesUsage =
    "usage: faultline fixes [SYSTEM]\n"
    "  Lists the named fixes hardened adds to each seed design (or to SYSTEM's): id, the seed line\n"
    "  it departs from, the invariants it protects and why. `--without FIX` on run, sweep and\n"
    "  shrink (or `without: [FIX]` in a scenario) runs hardened with that fix removed.\n";

void print_fixes(const SystemUnderTest& sys) {
  std::printf("## %s: %zu named fixes\n\n", sys.name().c_str(), sys.fixes().size());
  if (sys.fixes().empty()) return;
  std::printf("| fix | seed line | invariants | why |\n|---|---|---|---|\n");
  for (const FixInfo& f : sys.fixes()) {
    std::string ids;
    for (const std::string& i : f.invariants) ids += (ids.empty() ? "" : ", ") + i;
    std::printf("| %s | %s | %s | %s |\n", f.id.c_str(), f.seed_line.c_str(), ids.c_str(), f.why.c_str());
  }
  std::printf("\n");
}

}  // namespace

int fixes_main(const Args& args) {
  const CliFlags f(args, kFixesUsage, {});
  if (f.status() >= 0) return f.status();
  if (f.positional().size() > 1) return f.error("too many arguments");
  const std::string what = f.positional().empty() ? "" : f.positional()[0];
  if (!what.empty()) {
    const SystemUnderTest* sys = find_system(what);
    if (sys == nullptr) return std::fprintf(stderr, "faultline: unknown system '%s'\n%s", what.c_str(), kFixesUsage), 2;
    print_fixes(*sys);
    return 0;
  }
  for (const SystemUnderTest* sys : all_systems()) print_fixes(*sys);
  return 0;
}

}  // namespace fl
