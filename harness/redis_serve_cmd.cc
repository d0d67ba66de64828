#include "harness/redis_serve_cmd.h"

#include <iostream>

#include "harness/cli.h"
#include "harness/resp/resp_server.h"
#include "harness/system.h"

namespace fl {

namespace {

// The script registry a system declares (SystemUnderTest::redis_scripts), so that its Lua texts
// and SHA1s run under redis-serve exactly as in a simulated run; null for an unknown name or a
// system without scripts.
std::shared_ptr<const ScriptRegistry> system_scripts(const std::string& system) {
  const SystemUnderTest* s = find_system(system);
  return s ? s->redis_scripts() : nullptr;
}

// "combo, gifts or likes": the systems that have scripts, for the usage error.
std::string systems_with_scripts() {
  std::vector<std::string> names;
  for (const SystemUnderTest* s : all_systems()) {
    if (s->redis_scripts()) names.push_back(s->name());
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

}  // namespace

int redis_serve_main(const std::vector<std::string>& args) {
  const char* usage = resp::redis_serve_usage();
  const CliFlags f(args, usage,
                   {{"--socket", FlagKind::kText},
                    {"--port", FlagKind::kCount},
                    {"--host", FlagKind::kText},
                    {"--tick-ms", FlagKind::kCount},
                    {"--scripts", FlagKind::kText}});
  if (f.status() >= 0) return f.status();
  if (!f.positional().empty()) return f.error("unexpected argument '" + f.positional()[0] + "'");
  resp::RespServerOptions o;
  uint64_t port = 6379, tick_ms = 100;
  f.u64("--port", &port);
  f.u64("--tick-ms", &tick_ms);
  if (port > 65535) return f.error("--port takes 0..65535, got " + std::to_string(port));
  if (tick_ms < 1 || tick_ms > 60'000) return f.error("--tick-ms takes 1..60000, got " + std::to_string(tick_ms));
  if (f.has("--socket") && f.has("--port")) return f.error("give --socket or --port, not both");
  if (f.has("--socket") && f.str("--socket").empty()) return f.error("--socket needs a path");
  o.unix_path = f.str("--socket");
  o.tcp_port = o.unix_path.empty() ? static_cast<int>(port) : o.tcp_port;
  o.tcp_host = f.str("--host", o.tcp_host);
  o.tick_interval_ms = static_cast<int64_t>(tick_ms);
  // `--scripts SYSTEM` preloads that system's registry (its scripts run as their C++ functions);
  // any other script text runs in Lua.
  if (f.has("--scripts") && !(o.engine.scripts = system_scripts(f.str("--scripts")))) {
    return f.error("--scripts needs a system with scripts: " + systems_with_scripts());
  }
  return resp::run_redis_serve(std::move(o));
}

int redis_serve_main(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return redis_serve_main(args);
}

}  // namespace fl
