// `faultline redis-serve [--socket PATH | --port N] [--host ADDR] [--tick-ms N]`: serves the
// simulated Redis over RESP2 in real time (see harness/resp/resp_server.h). Returns 0 after a
// clean stop (SIGINT/SIGTERM), 1 when it cannot listen, 2 on bad flags (usage printed).
#pragma once

#include <string>
#include <vector>

namespace fl {

// `args`: the arguments after the subcommand name (the harness/commands.h convention).
int redis_serve_main(const std::vector<std::string>& args);
// main()-style: argv[0] is the subcommand name ("redis-serve"), flags follow.
int redis_serve_main(int argc, char** argv);

}  // namespace fl
