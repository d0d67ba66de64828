#include "harness/runner.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>

#include "harness/faults.h"
#include "properties/verdict.h"
#include "sim/hash.h"
#include "sim/rng.h"
#include "sim/world.h"
#include "impl/ports/assert.h"

namespace fl {

namespace {

constexpr int64_t kUsPerMs = 1000;

sim::LinkOptions link_options(const LinkSettings& n) {
  sim::LinkOptions o;
  o.latency_min_us = n.latency_min_us;
  o.latency_mean_us = n.latency_mean_us;
  o.drop_probability = n.drop_probability;
  o.duplicate_probability = n.duplicate_probability;
  o.reorder_probability = n.reorder_probability;
  o.fifo = n.fifo;
  return o;
}

std::vector<std::string> requested_properties(const Scenario& s, const SystemUnderTest& sys) {
  if (!s.properties.empty()) return s.properties;
  std::vector<std::string> all;
  for (const PropertyInfo& p : sys.properties()) all.push_back(p.name);
  return all;
}

bool named(const std::vector<std::string>& names, const std::string& property) {
  return std::find(names.begin(), names.end(), property) != names.end();
}

bool fails(const std::vector<Verdict>& verdicts, const std::string& property) {
  return std::any_of(verdicts.begin(), verdicts.end(),
                     [&](const Verdict& v) { return !v.passed && v.property == property; });
}

// A passing expectation wants every property to pass. A failing one wants the named properties
// to fail (all of them, or one with match: any); others failing too are further findings.
bool matches_expectation(const Scenario& s, const std::vector<Verdict>& verdicts, bool all_passed) {
  if (s.expect.pass) return all_passed;
  if (all_passed || s.expect.failing.empty()) return false;
  size_t failing = 0;
  for (const std::string& p : s.expect.failing) failing += fails(verdicts, p) ? 1 : 0;
  return s.expect.any ? failing > 0 : failing == s.expect.failing.size();
}

std::vector<std::string> further_findings(const Scenario& s, const std::vector<Verdict>& verdicts) {
  std::vector<std::string> out;
  if (s.expect.pass) return out;  // on a passing expectation every failure is unexpected
  for (const Verdict& v : verdicts) {
    if (!v.passed && !named(s.expect.failing, v.property)) out.push_back(v.property);
  }
  return out;
}

void write_traces(const sim::Trace& trace, const RunOptions& options) {
  if (!options.trace_jsonl_path.empty()) {
    std::ofstream out(options.trace_jsonl_path);
    trace.write_jsonl(out);
  }
  if (!options.perfetto_path.empty()) {
    std::ofstream out(options.perfetto_path);
    trace.write_perfetto(out);
  }
}

std::string replay_command(const Scenario& s, uint64_t seed, const RunOptions& options) {
  const std::string& path = options.scenario_path.empty() ? s.source_file : options.scenario_path;
  std::string cmd =
      "faultline run " + (path.empty() ? std::string("<scenario.yaml>") : path) + " --seed " + std::to_string(seed);
  // Fixes removed on the command line are not in the file: the replay must remove them too.
  for (const std::string& id : options.without) cmd += " --without " + id;
  return cmd;
}

// Numbers the calls of the service processes; arms the crash, pause or fail point if one is asked for.
// The command line's point wins over the scenario's pinned one.
void watch_service_effects(sim::World& world, const SystemRun& run, const Scenario& s, const RunOptions& options) {
  std::optional<CrashPoint> point = options.crash_point;
  if (!point && s.crash_point) {
    point = CrashPoint{static_cast<uint64_t>(s.crash_point->effect), s.crash_point->before,
                       s.crash_point->restart_after_ms};
  }
  std::vector<PausePoint> pauses = options.pause_points;
  if (pauses.empty()) {
    for (const PausePointSpec& p : s.pause_points) {
      pauses.push_back(PausePoint{static_cast<uint64_t>(p.effect), p.before, p.duration_ms});
    }
  }
  std::optional<FailPoint> fail = options.fail_point;
  if (!fail && s.fail_point) fail = FailPoint{static_cast<uint64_t>(s.fail_point->effect), s.fail_point->before};
  if (!options.list_effects && !point && pauses.empty() && !fail) return;
  for (const char* role : {"replica", "worker", "gateway"}) world.watch_effects(run.fault_targets(role));
  if (point) {
    world.arm_crash_point(sim::CrashPointPlan{point->effect_index, point->before, point->restart_after_ms * kUsPerMs});
  }
  for (const PausePoint& p : pauses) {
    world.arm_pause_point(sim::PausePointPlan{p.effect_index, p.before, p.duration_ms * kUsPerMs});
  }
  if (fail) world.arm_fail_point(sim::FailPointPlan{fail->effect_index, fail->before});
}

bool wanted_process(const std::string& process, const std::vector<std::string>& prefixes) {
  return prefixes.empty() || std::any_of(prefixes.begin(), prefixes.end(),
                                         [&](const std::string& prefix) { return process.rfind(prefix, 0) == 0; });
}

ListedEffect listed_effect(const sim::EffectRecord& e) {
  return ListedEffect{e.process,
                      "#" + std::to_string(e.index) + " t=" + std::to_string((e.time_us - sim::kEpochUs) / 1000) +
                          "ms " + e.process + " -> " + e.service + ": " + e.request,
                      e.index};
}

// The effects of options.meanwhile_processes made while the first armed pause point held its
// caller: from the instant it fired to the end of its duration.
std::vector<ListedEffect> effects_meanwhile(const sim::World& world, const Scenario& s, const RunOptions& options) {
  std::vector<ListedEffect> out;
  const std::optional<int64_t> from_us = world.pause_point_fired_at_us(0);
  if (!from_us) return out;
  const int64_t duration_ms =
      options.pause_points.empty() ? s.pause_points.front().duration_ms : options.pause_points.front().duration_ms;
  const int64_t to_us = *from_us + duration_ms * kUsPerMs;
  for (const sim::EffectRecord& e : world.effects()) {
    if (e.time_us >= *from_us && e.time_us <= to_us && wanted_process(e.process, options.meanwhile_processes)) {
      out.push_back(listed_effect(e));
    }
  }
  return out;
}

}  // namespace

uint64_t default_seed(const Scenario& s) { return s.seed.value_or(1); }

std::vector<CrashPoint> crash_points_to_sweep(const RunResult& listed, uint64_t limit,
                                              const std::vector<std::string>& process_prefixes) {
  std::vector<CrashPoint> points;
  uint64_t chosen = 0;
  for (size_t i = 0; i < listed.effects.size() && (limit == 0 || chosen < limit); ++i) {
    if (!wanted_process(listed.effects[i].process, process_prefixes)) continue;
    ++chosen;
    points.push_back(CrashPoint{i, true});
    points.push_back(CrashPoint{i, false});
  }
  return points;
}

std::vector<int64_t> pause_durations_ms(const std::vector<CriticalDuration>& critical) {
  std::vector<int64_t> out = {2, 20};
  for (const CriticalDuration& c : critical) {
    const int64_t ms = std::max<int64_t>(c.duration_us / kUsPerMs, 1);
    const int64_t spread = std::max<int64_t>(ms / 10, 1);
    for (int64_t d : {ms - spread, ms + spread}) {
      if (d >= 1 && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    }
  }
  return out;
}

std::vector<PausePoint> pause_points_to_sweep(const RunResult& listed, uint64_t limit,
                                              const std::vector<std::string>& process_prefixes,
                                              const std::vector<int64_t>& durations_ms, uint64_t seed) {
  FL_ASSERT(!durations_ms.empty());
  std::vector<PausePoint> points;
  uint64_t chosen = 0;
  for (size_t i = 0; i < listed.effects.size() && (limit == 0 || chosen < limit); ++i) {
    if (!wanted_process(listed.effects[i].process, process_prefixes)) continue;
    ++chosen;
    for (bool before : {true, false}) {
      // One duration per boundary, the same for the same seed whatever else is swept.
      sim::Rng rng(sim::stable_hash("pause-point") ^ (seed * 0x9e3779b97f4a7c15ULL) ^ (i << 1) ^ (before ? 1 : 0));
      points.push_back(PausePoint{i, before, durations_ms[rng.below(durations_ms.size())]});
    }
  }
  return points;
}

std::string apply_without(Scenario& s, const std::vector<std::string>& without) {
  if (without.empty()) return "";
  const SystemUnderTest* sys = find_system(s.system);
  if (sys == nullptr) return "unknown system '" + s.system + "'";
  if (s.variant != "hardened")
    return "--without removes fixes from hardened, but the scenario's variant is '" + s.variant + "'";
  std::string known;
  for (const FixInfo& f : sys->fixes()) known += (known.empty() ? "" : ", ") + f.id;
  for (const std::string& id : without) {
    if (!find_fix(sys->fixes(), id)) {
      return "system '" + s.system + "' has no fix '" + id + "' (fixes: " + (known.empty() ? "none" : known) + ")";
    }
  }
  for (const std::string& id : without) {
    if (std::find(s.without.begin(), s.without.end(), id) == s.without.end()) s.without.push_back(id);
  }
  return "";
}

std::vector<std::string> scenario_caveats(const Scenario& s) {
  std::vector<std::string> out;
  if (s.storage.volatile_write_cache) {
    out.push_back(
        "storage.volatile_write_cache: the DB's disk acknowledges fsync with the data only in a volatile "
        "cache (durable " +
        std::to_string(s.storage.write_cache_flush_ms) +
        " ms later), so a DB power loss voids the durability of acknowledged commits and, as "
        "synced pages are lost independently, the consistency of what survives: no design can keep LIKE-3/4/6, "
        "COMBO-1/2 or GIFT-1/4 on it, whatever `synchronous` says");
  }
  if (s.storage.synchronous != "full") {
    out.push_back("storage.synchronous=" + s.storage.synchronous +
                  ": a DB power loss may drop the last acknowledged commits; judges may excuse a lost "
                  "commit only after a DB crash");
  }
  return out;
}

RunResult run_scenario(const Scenario& given, uint64_t seed, const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  RunResult result;
  result.scenario = given.name;
  result.system = given.system;
  Scenario s;
  try {
    s = with_config(given);  // typed params for a scenario built in code (a loaded one has them)
  } catch (const std::invalid_argument& e) {
    result.variant = given.variant;
    result.seed = seed;
    result.error = e.what();
    return result;
  }
  result.variant = s.variant;
  result.seed = seed;
  result.config_digest = scenario_digest(s);
  result.replay_command = replay_command(s, seed, options);
  result.caveats = scenario_caveats(s);
  const SystemUnderTest* sys = find_system(s.system);
  if (sys == nullptr) {
    result.error = "unknown system '" + s.system + "'";
    return result;
  }
  const bool record = options.record_trace || !options.trace_jsonl_path.empty() || !options.perfetto_path.empty();
  // The world is destroyed before the system run: frames may refer to the run's objects.
  auto world = std::make_unique<sim::World>(
      sim::WorldOptions{.seed = seed, .record_trace = record, .judged = options.judges, .coverage = options.coverage});
  std::unique_ptr<SystemRun> run;
  // The configuration is the trace's first event, so two variants of one scenario (same
  // messages, different state) still have different fingerprints.
  world->trace().record(world->now_us(), sim::TraceKind::kUser, "", "",
                        "system " + s.system + " variant " + s.variant + " config " + sim::hex64(result.config_digest));
  // Clients with patience drawn per seed (swarm.patience): the run, its faults and its judges all
  // see the drawn params.
  std::string patience;
  const Scenario drawn = draw_patience(s, *sys, world->stream("patience"), &patience);
  if (!patience.empty()) world->note_fault("", "patience " + patience);
  try {
    world->network().set_default_link(link_options(drawn.network));
    run = sys->build(*world, drawn);
    watch_service_effects(*world, *run, drawn, options);
    FaultInjector faults(*world, *run, drawn, sys->critical_durations(drawn));
    faults.schedule_all();
    result.applied_faults = faults.scheduled();
    const int64_t end_us = sim::kEpochUs + (drawn.duration_ms + drawn.quiescent_tail_ms) * kUsPerMs;
    world->run_until(end_us);
    if (options.judges) {
      result.verdicts = run->check(*world, requested_properties(drawn, *sys));
      result.behaviours = run->behaviours(*world);
      std::sort(result.behaviours.begin(), result.behaviours.end());
      result.behaviours.erase(std::unique(result.behaviours.begin(), result.behaviours.end()), result.behaviours.end());
    }
    if (!world->panics().empty()) result.verdicts.push_back(panic_verdict(*world));
    for (const Verdict& v : result.verdicts) {
      // Failing properties are marked in the trace so timelines and `explain` can show them; the
      // marks are annotations, outside the fingerprint (a verdict is not part of the world).
      if (!v.passed) {
        world->trace().annotate(world->now_us(), sim::TraceKind::kViolation, "", "",
                                v.property + " failed" + (v.evidence.empty() ? "" : ": " + v.evidence.front()));
      }
    }
  } catch (const std::exception& e) { result.error = std::string("run aborted: ") + e.what(); }
  if (options.inspect && run) options.inspect(*world, *run);
  result.crash_point_fired = world->crash_point_fired();
  result.pause_point_fired = world->pause_point_fired();
  result.fail_point_fired = world->fail_point_fired();
  if (options.list_effects) {
    for (const sim::EffectRecord& e : world->effects()) result.effects.push_back(listed_effect(e));
  }
  if (!options.meanwhile_processes.empty()) result.meanwhile = effects_meanwhile(*world, s, options);
  result.coverage.assign(world->coverage().features().begin(), world->coverage().features().end());
  result.fingerprint = world->trace().fingerprint();
  result.events = world->events_executed();
  result.judged = options.judges;
  for (const sim::Operation& op : world->history().operations()) {
    if (op.complete_us >= 0 && op.outcome == Outcome::kOk) ++result.operations_ok;
  }
  result.simulated_us = world->now_us() - sim::kEpochUs;
  write_traces(world->trace(), options);
  world.reset();
  run.reset();
  result.all_passed = result.error.empty() && !result.verdicts.empty();
  for (const Verdict& v : result.verdicts) result.all_passed = result.all_passed && v.passed;
  result.as_expected = result.error.empty() && matches_expectation(s, result.verdicts, result.all_passed);
  result.further_findings = further_findings(s, result.verdicts);
  for (const Verdict& v : result.verdicts) {
    if (v.status() == VerdictStatus::kVacuous) result.vacuous.push_back(v.property);
  }
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

Verdict panic_verdict(const sim::World& world) {
  Verdict v = passing_verdict("process-panic", {}, "no process dies of an exception escaping its task");
  for (const sim::World::Panic& p : world.panics()) {
    ++v.checks;
    fail_verdict(v, p.process + " at " + std::to_string(p.time_us) + ": " + p.what);
  }
  return v;
}

}  // namespace fl
