// `faultline evaluate`: score rule versions side by side on a labelled workload (rows A01-A07 of
// seed 004 §16.2; harness/systems/ranking/evaluation.h).
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "harness/build_info.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/matrix_rows.h"
#include "harness/sweep.h"
#include "harness/systems/ranking/evaluation.h"

namespace fl {

namespace {

const char* kEvaluateUsage =
    "usage: faultline evaluate FILE [--rules OLD,NEW] [--json OUT] [--out DIR] [--write-history DIR]\n"
    "  Generates FILE's labelled workload once, lets each score rule version publish its board\n"
    "  from the same frozen inputs (004 §11.2), and prints rows A01-A07 side by side, measured\n"
    "  from the published snapshots against the workload's labels (docs/evaluation.md).\n"
    "  --rules  the versions to compare, of those FILE declares (default: all, in file order)\n"
    "  --json   also write the figures as JSON to OUT\n"
    "  --out    also write a report of rows A01-A07 (report.md with its charts/, report.html,\n"
    "           report.json, junit.xml): MEASURED, or PASS/FAIL where FILE declares thresholds;\n"
    "           `faultline report --merge` adds its report.json to the scenario suite's\n"
    "  --write-history  write the history evaluated as DIR/events.csv and DIR/labels.csv, the\n"
    "           format a file's `history:` reads (docs/evaluation.md)\n"
    "exit: 0 measured and every declared threshold held, 1 a threshold missed, 2 usage or input error\n";

}  // namespace

int evaluate_main(const Args& args) {
  CliFlags flags(args, kEvaluateUsage,
                 {{"--rules", FlagKind::kList},
                  {"--json", FlagKind::kText},
                  {"--out", FlagKind::kText},
                  {"--write-history", FlagKind::kText}});
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
  std::string command = "faultline evaluate " + spec->file;
  if (flags.has("--rules")) command += " --rules " + flags.str("--rules");
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
  if (flags.has("--write-history")) {
    const std::string dir = flags.str("--write-history");
    if (std::string err = write_history(history_of(*spec), spec->workload, dir); !err.empty()) {
      std::fprintf(stderr, "%s\n", err.c_str());
      return 2;
    }
    std::printf("wrote %s/events.csv, labels.csv\n", dir.c_str());
  }
  reports::Report report;
  report.title = "faultline evaluation: " + spec->workload.name;
  report.produced_at = utc_now_iso8601();
  report.commit = build_commit();
  report.matrices = {"ranking"};
  report.rows = all_matrix_rows();
  report.runs = evaluation_records(*spec, result, command, report.produced_at, report.commit);
  if (flags.has("--out")) {
    if (std::string err = reports::write_report_files(report, flags.str("--out")); !err.empty()) {
      std::fprintf(stderr, "%s\n", err.c_str());
      return 2;
    }
    std::printf("wrote %s/report.md, report.html, junit.xml, report.json\n", flags.str("--out").c_str());
  }
  return reports::report_exit_code(report);
}

}  // namespace fl
