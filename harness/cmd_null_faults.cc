// `faultline null-faults`: the judges' metamorphic check over scenario files (harness/null_faults.h).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/null_faults.h"
#include "harness/scenario_loader.h"

namespace fl {

namespace {

const char* kNullFaultsUsage =
    "usage: faultline null-faults FILE|DIR... [--seed N] [--nodes A,B | --all-nodes]\n"
    "                             [--kinds K,...] [--at-ms T,...] [--out DIR]\n"
    "  A fault that changes nothing must change no verdict. Runs each scenario with its seed (or\n"
    "  --seed), then again with one null fault added at a time, as an extra fault that reorders\n"
    "  nothing: a clock drift of 0 ppm, a clock jump of 0 ms, a pause of 0 ms (of each process of\n"
    "  the node), a clog of a link that carried no traffic, a partition of two nodes that never\n"
    "  talked. Each must leave the world's trace the same apart from the fault records, and every\n"
    "  property with its verdict and its count of exempted items.\n"
    "  DIR        every *.yaml file in it, in name order\n"
    "  --nodes    the nodes hit (default: the store nodes db, redis, log and the first client)\n"
    "  --all-nodes  every node of the run\n"
    "  --kinds    a subset of clock-drift,clock-jump,pause,clog,partition (default: all)\n"
    "  --at-ms    when the null faults happen, ms into the run (default 100)\n"
    "  --out      write each finding as a scenario file there (replay it with `faultline run`)\n"
    "exit: 0 every verdict held, 1 a null fault changed the world or a verdict, 2 usage or input error\n";

using K = FlagKind;

std::vector<std::string> expand(const std::vector<std::string>& paths, std::string* bad) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& e : std::filesystem::directory_iterator(p)) {
        if (e.path().extension() == ".yaml") in_dir.push_back(e.path().string());
      }
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (std::filesystem::exists(p, ec)) {
      files.push_back(p);
    } else {
      *bad = p;
      return {};
    }
  }
  return files;
}

bool parse_times(const std::vector<std::string>& texts, std::vector<int64_t>* out) {
  out->clear();
  for (const std::string& t : texts) {
    if (t.empty() || t.size() > 9 || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return false;
    }
    out->push_back(std::stoll(t));
  }
  return !out->empty();
}

std::string write_finding(const std::string& dir, const std::string& file, size_t n, const NullFaultFinding& f) {
  std::filesystem::create_directories(dir);
  const std::string path = (std::filesystem::path(dir) /
                            (std::filesystem::path(file).stem().string() + "-null-" + std::to_string(n) + ".yaml"))
                               .string();
  std::ofstream out(path);
  out << "# A null fault (" << f.null_fault.label << ") changed what `faultline null-faults " << file
      << "` compared:\n";
  for (const std::string& p : f.problems) out << "#   " << p << "\n";
  Scenario s = f.scenario;
  s.expect.fingerprint.reset();
  out << scenario_to_yaml(s);
  return path;
}

}  // namespace

int null_faults_main(const Args& args) {
  CliFlags flags(args, kNullFaultsUsage,
                 {{"--seed", K::kCount},
                  {"--nodes", K::kList},
                  {"--all-nodes", K::kSwitch},
                  {"--kinds", K::kList},
                  {"--at-ms", K::kList},
                  {"--out", K::kText}});
  if (flags.status() >= 0) return flags.status();
  if (flags.positional().empty()) return flags.error("expected at least one scenario FILE or DIR");
  NullFaultOptions options;
  options.nodes = flags.list("--nodes");
  options.all_nodes = flags.has("--all-nodes");
  if (options.all_nodes && !options.nodes.empty()) return flags.error("--nodes and --all-nodes exclude each other");
  options.kinds = flags.list("--kinds");
  for (const std::string& k : options.kinds) {
    const auto& known = null_fault_kinds();
    if (std::find(known.begin(), known.end(), k) == known.end())
      return flags.error("unknown null-fault kind '" + k + "'");
  }
  if (flags.has("--at-ms") && !parse_times(flags.list("--at-ms"), &options.at_ms)) {
    return flags.error("--at-ms takes milliseconds, e.g. 100,5000");
  }
  std::string bad;
  const std::vector<std::string> files = expand(flags.positional(), &bad);
  if (!bad.empty()) return flags.error("no such file or directory: " + bad);
  int rc = 0;
  size_t cases = 0, findings = 0;
  for (const std::string& file : files) {
    std::optional<Scenario> s = load_scenario_or_print(file);
    if (!s) return 2;
    uint64_t seed = default_seed(*s);
    flags.u64("--seed", &seed);
    const NullFaultResult r = check_null_faults(*s, seed, options);
    cases += r.cases.size();
    if (!r.error.empty()) {
      std::printf("ERROR %s seed %llu: %s\n", file.c_str(), static_cast<unsigned long long>(seed), r.error.c_str());
      rc = 1;
      continue;
    }
    std::printf("%s %s seed %llu: %zu null faults, %zu changed something%s\n", r.held() ? "HELD" : "CHANGED",
                file.c_str(), static_cast<unsigned long long>(seed), r.cases.size(), r.findings.size(),
                r.skipped.empty() ? "" : (" (" + std::to_string(r.skipped.size()) + " not planned)").c_str());
    for (const std::string& why : r.skipped) std::printf("  not planned: %s\n", why.c_str());
    for (size_t i = 0; i < r.findings.size(); ++i) {
      const NullFaultFinding& f = r.findings[i];
      std::printf("  %s:\n", f.null_fault.label.c_str());
      for (const std::string& p : f.problems) std::printf("    %s\n", p.c_str());
      if (flags.has("--out"))
        std::printf("    written: %s\n", write_finding(flags.str("--out"), file, i + 1, f).c_str());
    }
    findings += r.findings.size();
    if (!r.held()) rc = 1;
  }
  std::printf("null-faults: %zu files, %zu null faults, %zu changed a verdict or the world\n", files.size(), cases,
              findings);
  return rc;
}

}  // namespace fl
