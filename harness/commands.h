// The `faultline` subcommands. Each takes its arguments (after the subcommand name) and returns
// the process exit code: 0 all as expected, 1 a property failed unexpectedly, 2 usage or input
// error. Each prints its own usage on a bad flag. main.cc holds the dispatch table.
#pragma once

#include <string>
#include <vector>

namespace fl {

using Args = std::vector<std::string>;

int run_main(const Args& args);
int check_determinism_main(const Args& args);
int list_main(const Args& args);
int fixes_main(const Args& args);
// harness/cmd_sweep.cc (scenario files, sweeps, shrinking, replay, reports; issue 4)
int sweep_main(const Args& args);
int shrink_main(const Args& args);
int replay_main(const Args& args);
int report_main(const Args& args);
int explain_main(const Args& args);
// harness/cmd_null_faults.cc (the judges' metamorphic check: null faults change no verdict)
int null_faults_main(const Args& args);
// harness/cmd_explore.cc (coverage-guided fault schedules)
int explore_main(const Args& args);
// harness/systems/ranking/cmd_evaluate.cc (score rules' offline evaluation, ranking rows A01-A07)
int evaluate_main(const Args& args);

}  // namespace fl
