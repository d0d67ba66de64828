#include "harness/redis_serve_cmd.h"

#include "harness/resp/resp_server.h"

namespace fl {

int redis_serve_main(const std::vector<std::string>& args) {
  // No system's scripts are preloaded: EVAL of an unregistered text replies an error.
  return resp::run_redis_serve(args, nullptr);
}

int redis_serve_main(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return redis_serve_main(args);
}

}  // namespace fl
