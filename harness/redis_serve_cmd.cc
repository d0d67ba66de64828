#include "harness/redis_serve_cmd.h"

#include <iostream>

#include "harness/resp/resp_server.h"
#include "impl/combo/service.h"
#include "impl/gifts/scripts.h"
#include "impl/likes/scripts.h"

namespace fl {

namespace {

// The script registry of a seed system, so that its Lua texts and SHA1s run under redis-serve
// exactly as in a simulated run; null for an unknown name.
std::shared_ptr<const ScriptRegistry> system_scripts(const std::string& system) {
  if (system == "combo") return combo::combo_scripts();
  if (system == "likes") return likes::likes_scripts();
  if (system == "gifts") return gifts::gifts_scripts();
  return nullptr;
}

}  // namespace

int redis_serve_main(const std::vector<std::string>& args) {
  // `--scripts SYSTEM` preloads that system's registry; without it EVAL of an unregistered text
  // replies an error. Every other flag is the server's.
  std::vector<std::string> rest;
  std::shared_ptr<const ScriptRegistry> scripts;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--scripts") {
      rest.push_back(args[i]);
      continue;
    }
    if (i + 1 >= args.size() || !(scripts = system_scripts(args[i + 1]))) {
      std::cerr << "faultline redis-serve: --scripts needs a system with scripts: combo, likes or gifts\n"
                << resp::redis_serve_usage();
      return 2;
    }
    ++i;
  }
  return resp::run_redis_serve(rest, std::move(scripts));
}

int redis_serve_main(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return redis_serve_main(args);
}

}  // namespace fl
