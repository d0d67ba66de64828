// `faultline run` and `faultline check-determinism`.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/runner.h"
#include "harness/scenario_loader.h"
#include "sim/trace.h"

extern char** environ;

namespace fl {

namespace {

const char* kRunUsage =
    "usage: faultline run FILE [--seed N] [--without FIX]... [--trace OUT.jsonl] [--perfetto OUT.json] [--quiet]\n"
    "                      [--no-judges]\n"
    "  Runs the scenario once and prints each property's verdict (PASS, FAIL, VACUOUS) with its\n"
    "  evidence and the operations it exempted.\n"
    "  --seed N          the seed (default: the scenario's saved seed, else 1)\n"
    "  --without FIX     run hardened without this named fix (repeatable; see 'faultline fixes')\n"
    "  --trace PATH      write every trace event as JSON lines\n"
    "  --perfetto PATH   write a Chrome/Perfetto trace (open in ui.perfetto.dev)\n"
    "  --quiet           print only the summary line\n"
    "  --no-judges       run the world without its judges, to measure speed and state size alone:\n"
    "                    nothing is checked, the run prints NOT JUDGED and is never as expected\n"
    "exit: 0 as expected, 1 a property failed unexpectedly (or, with --no-judges, always), 2 usage\n"
    "      or input error\n";

const char* kDeterminismUsage =
    "usage: faultline check-determinism FILE [--seed N]\n"
    "  Runs the scenario with the same seed in two separate processes and compares their traces.\n"
    "  Exit 0 when the fingerprints match; 1 (naming the first divergent event) when they do not.\n";

int usage_error(const char* usage, const std::string& message) {
  std::fprintf(stderr, "faultline: %s\n%s", message.c_str(), usage);
  return 2;
}

struct RunFlags {
  std::string file;
  std::optional<uint64_t> seed;
  RunOptions options;
  bool quiet = false;
};

// Returns an exit code (0 after --help, 2 on a bad flag), or -1 when parsed. CLI11 parses
// (harness/cli.h); `--without` repeats or takes a comma list.
int parse_run_flags(const Args& args, const char* usage, RunFlags* flags, bool allow_outputs) {
  std::vector<FlagDef> defs = {{"--seed", FlagKind::kCount}, {"--without", FlagKind::kList}};
  if (allow_outputs) {
    defs.insert(defs.end(), {{"--trace", FlagKind::kText},
                             {"--perfetto", FlagKind::kText},
                             {"--quiet", FlagKind::kSwitch},
                             {"--no-judges", FlagKind::kSwitch}});
  }
  const CliFlags f(args, usage, defs);
  if (f.status() >= 0) return f.status();
  if (f.has("--seed")) f.u64("--seed", &flags->seed.emplace());
  flags->options.without = f.list("--without");
  if (f.has("--without") && flags->options.without.empty()) {
    return usage_error(usage, "--without takes a fix id (see 'faultline fixes')");
  }
  flags->options.trace_jsonl_path = f.str("--trace");
  flags->options.perfetto_path = f.str("--perfetto");
  flags->quiet = f.has("--quiet");
  flags->options.judges = !f.has("--no-judges");
  if (f.positional().empty()) return usage_error(usage, "missing scenario FILE");
  if (f.positional().size() > 1) return usage_error(usage, "unexpected argument '" + f.positional()[1] + "'");
  flags->file = f.positional()[0];
  return -1;
}

void print_result(const RunResult& r, bool quiet) {
  if (!quiet) {
    std::printf("scenario %s  system %s  variant %s  seed %llu\n", r.scenario.c_str(), r.system.c_str(),
                r.variant.c_str(), static_cast<unsigned long long>(r.seed));
    for (const Verdict& v : r.verdicts) {
      std::string ids;
      for (const std::string& id : v.invariants) ids += (ids.empty() ? "" : ",") + id;
      std::printf("  %-7s %-28s [%s] %s (%lld checks)\n", v.status_name(), v.property.c_str(), ids.c_str(),
                  v.assertion.c_str(), static_cast<long long>(v.checks));
      for (const auto& [reason, count] : v.exemptions) {
        std::printf("          exempted %lld: %s\n", static_cast<long long>(count), reason.c_str());
      }
      size_t shown = 0;
      for (const std::string& e : v.evidence) {
        if (++shown > 8) {
          std::printf("         ... %zu more\n", v.evidence.size() - 8);
          break;
        }
        std::printf("         evidence: %s\n", e.c_str());
      }
    }
  }
  if (!r.error.empty()) std::printf("error: %s\n", r.error.c_str());
  auto list = [](const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  if (!r.further_findings.empty())
    std::printf("further findings (failed, not expected): %s\n", list(r.further_findings).c_str());
  if (!r.vacuous.empty()) std::printf("vacuous (checked nothing): %s\n", list(r.vacuous).c_str());
  for (const std::string& c : r.caveats) std::printf("caveat: %s\n", c.c_str());
  if (!r.judged) {  // a measurement: its line says so and counts the work instead of verdicts
    std::printf(
        "NOT JUDGED: no property was checked (--no-judges); fingerprint %s; config %s; %llu events; "
        "%llu client operations ok; %.1f simulated s in %.2f wall s\n",
        sim::hex64(r.fingerprint).c_str(), sim::hex64(r.config_digest).c_str(),
        static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.operations_ok),
        r.simulated_us / 1e6, r.wall_seconds);
  } else {
    std::printf("%s: %s; fingerprint %s; config %s; %llu events; %.1f simulated s in %.2f wall s\n",
                r.as_expected ? "AS EXPECTED" : "UNEXPECTED",
                r.all_passed ? "all properties passed" : "a property failed", sim::hex64(r.fingerprint).c_str(),
                sim::hex64(r.config_digest).c_str(), static_cast<unsigned long long>(r.events), r.simulated_us / 1e6,
                r.wall_seconds);
  }
  std::printf("replay: %s\n", r.replay_command.c_str());
}

}  // namespace

int run_main(const Args& args) {
  RunFlags flags;
  if (int rc = parse_run_flags(args, kRunUsage, &flags, true); rc >= 0) return rc;
  std::optional<Scenario> s = load_scenario_or_print(flags.file);
  if (!s) return 2;
  flags.options.scenario_path = flags.file;
  if (std::string why = apply_without(*s, flags.options.without); !why.empty()) { return usage_error(kRunUsage, why); }
  const RunResult r = run_scenario(*s, flags.seed.value_or(default_seed(*s)), flags.options);
  print_result(r, flags.quiet);
  if (!r.error.empty()) return 1;
  return r.as_expected ? 0 : 1;
}

namespace {

// Runs `faultline run FILE --seed N --trace PATH --quiet` as a child process.
bool run_child(const std::string& file, uint64_t seed, const std::string& trace_path) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string seed_text = std::to_string(seed);
  std::vector<std::string> argv_s = {self, "run", file, "--seed", seed_text, "--trace", trace_path, "--quiet"};
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  const int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return false;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  // Exit 0 or 1 are both completed runs (1: a property failed); anything else is not.
  return WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1);
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

int check_determinism_main(const Args& args) {
  RunFlags flags;
  if (int rc = parse_run_flags(args, kDeterminismUsage, &flags, false); rc >= 0) return rc;
  std::optional<Scenario> s = load_scenario_or_print(flags.file);
  if (!s) return 2;
  const uint64_t seed = flags.seed.value_or(default_seed(*s));
  const auto dir = std::filesystem::temp_directory_path() / ("faultline-det-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string a = (dir / "a.jsonl").string(), b = (dir / "b.jsonl").string();
  const bool ran = run_child(flags.file, seed, a) && run_child(flags.file, seed, b);
  const std::vector<std::string> la = read_lines(a), lb = read_lines(b);
  std::filesystem::remove_all(dir);
  if (!ran || la.empty()) {
    std::fprintf(stderr, "faultline: a child run failed to complete\n");
    return 1;
  }
  for (size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
    const std::string ea = i < la.size() ? la[i] : "(end of trace)";
    const std::string eb = i < lb.size() ? lb[i] : "(end of trace)";
    if (ea != eb) {
      std::printf("NONDETERMINISTIC: traces diverge at event %zu\n  process 1: %s\n  process 2: %s\n", i + 1,
                  ea.c_str(), eb.c_str());
      return 1;
    }
  }
  const std::string& last = la.back();
  const size_t at = last.rfind("\"fp\":\"");
  const std::string fp = at == std::string::npos ? "?" : last.substr(at + 6, 16);
  std::printf("DETERMINISTIC: seed %llu, %zu trace events identical in two processes, fingerprint %s\n",
              static_cast<unsigned long long>(seed), la.size(), fp.c_str());
  return 0;
}

}  // namespace fl
