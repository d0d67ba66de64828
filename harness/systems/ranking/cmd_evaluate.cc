// `faultline evaluate`: score rule versions side by side on a labelled workload (rows A01-A07 of
// seed 004 §16.2; harness/systems/ranking/evaluation.h).
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/systems/ranking/evaluation.h"

namespace fl {

namespace {

const char* kEvaluateUsage =
    "usage: faultline evaluate FILE [--rules OLD,NEW] [--json OUT]\n"
    "  Generates FILE's labelled workload once, lets each score rule version publish its board\n"
    "  from the same frozen inputs (004 §11.2), and prints rows A01-A07 side by side, measured\n"
    "  from the published snapshots against the workload's labels (docs/evaluation.md).\n"
    "  --rules  the versions to compare, of those FILE declares (default: all, in file order)\n"
    "  --json   also write the figures as JSON to OUT\n"
    "exit: 0 measured, 2 usage or input error\n";

}  // namespace

int evaluate_main(const Args& args) {
  CliFlags flags(args, kEvaluateUsage, {{"--rules", FlagKind::kList}, {"--json", FlagKind::kText}});
  if (flags.status() >= 0) return flags.status();
  if (flags.positional().size() != 1) return flags.error("expected one evaluation FILE");
  std::string error;
  std::optional<EvaluationSpec> spec = load_evaluation_file(flags.positional()[0], &error);
  if (!spec) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 2;
  }
  if (flags.has("--rules")) {
    const std::vector<std::string> wanted = flags.list("--rules");
    if (wanted.size() < 2 || std::set<std::string>(wanted.begin(), wanted.end()).size() != wanted.size())
      return flags.error("--rules takes two or more distinct versions");
    std::vector<ranking::ScoreRule> chosen;
    for (const std::string& v : wanted) {
      bool found = false;
      for (const ranking::ScoreRule& r : spec->rules) {
        if (r.version == v) {
          chosen.push_back(r);
          found = true;
        }
      }
      if (!found) return flags.error("rule version '" + v + "' is not declared in " + spec->file);
    }
    spec->rules = std::move(chosen);
  }
  const EvaluationResult result = evaluate(*spec);
  std::printf("%s", evaluation_table(*spec, result).c_str());
  if (flags.has("--json")) {
    std::ofstream out(flags.str("--json"), std::ios::binary);
    out << evaluation_json(*spec, result);
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", flags.str("--json").c_str());
      return 2;
    }
  }
  return 0;
}

}  // namespace fl
