// The `faultline` command: dispatch to subcommands (harness/commands.h).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "harness/build_info.h"
#include "harness/commands.h"
#include "harness/memory.h"
#include "harness/redis_serve_cmd.h"

namespace fl {

namespace {

struct Subcommand {
  const char* name;
  const char* summary;
  int (*main)(const Args&);
};

// The dispatch table. Keep sorted by name.
const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> table = {
      {"check-determinism", "run a scenario+seed in two processes and compare fingerprints", check_determinism_main},
      {"evaluate", "score rule versions side by side on a labelled workload (ranking rows A01-A07)", evaluate_main},
      {"explain", "draw a trace as a sequence diagram (Mermaid text and SVG)", explain_main},
      {"explore", "search fault schedules guided by coverage (new interruptions and orderings)", explore_main},
      {"fixes", "list the named fixes hardened adds to each seed design (for --without FIX)", fixes_main},
      {"list", "list systems, properties (with invariant ids), fault kinds and matrix rows", list_main},
      {"null-faults", "re-run scenarios with faults that change nothing and check every verdict holds",
       null_faults_main},
      {"redis-serve", "serve the simulated Redis over RESP2/RESP3 in real time (for redis-cli, hiredis)",
       redis_serve_main},
      {"replay", "re-run a saved scenario with its seed and check the failure reproduces", replay_main},
      {"report", "run the scenarios of a test matrix (or merge shards) and write PASS/FAIL reports", report_main},
      {"run", "run one scenario with one seed and print each property's verdict", run_main},
      {"shrink", "reduce a failing run to a minimal scenario that still fails", shrink_main},
      {"sweep", "run many seeds in parallel worker processes (sharded with --shard i/n)", sweep_main},
  };
  return table;
}

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: faultline <command> [args]\n\n"
               "faultline runs seed systems inside a deterministic simulated world, injects faults,\n"
               "checks invariants and writes PASS/FAIL reports with replayable evidence.\n\ncommands:\n");
  for (const Subcommand& c : subcommands()) std::fprintf(out, "  %-18s %s\n", c.name, c.summary);
  std::fprintf(out,
               "\n`faultline <command> --help` prints a command's usage; `faultline --version` the\n"
               "commit it was built from. Exit codes: 0 as expected, 1 a property failed\n"
               "unexpectedly, 2 usage or input error.\n");
}

}  // namespace

int faultline_main(int argc, char** argv) {
  keep_freed_memory();
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(stdout);
    return 0;
  }
  if (name == "--version" || name == "version") {  // the commit reports name as theirs
    std::printf("faultline %s\n", build_commit());
    return 0;
  }
  for (const Subcommand& c : subcommands()) {
    if (name == c.name) return c.main(Args(argv + 2, argv + argc));
  }
  std::fprintf(stderr, "faultline: unknown command '%s'\n\n", name.c_str());
  print_usage(stderr);
  return 2;
}

}  // namespace fl
