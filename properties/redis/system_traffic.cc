#include "properties/redis/system_traffic.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "impl/ports/assert.h"

namespace fl::redis_diff {
namespace {

namespace gen = rc::gen;

// Commands that change what a connection is (a subscriber, another user, another database) or
// end it: a replayed sequence keeps its connections plain.
bool connection_state(const std::string& cmd) {
  static const std::set<std::string> kDropped = {
      "SUBSCRIBE", "UNSUBSCRIBE", "PSUBSCRIBE", "PUNSUBSCRIBE", "SSUBSCRIBE", "SUNSUBSCRIBE", "HELLO",
      "AUTH",      "SELECT",      "CLIENT",     "RESET",        "QUIT",       "MONITOR"};
  return kDropped.count(cmd) > 0;
}

// argv less a "BLOCK <ms>" option (XREAD, XREADGROUP).
std::vector<std::string> without_block(std::vector<std::string> argv) {
  for (size_t i = 1; i + 1 < argv.size(); ++i) {
    if (upper(argv[i]) == "BLOCK") {
      argv.erase(argv.begin() + static_cast<std::ptrdiff_t>(i), argv.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      break;
    }
  }
  return argv;
}

// One turn of a recorded client: a call, or a whole MULTI..EXEC/DISCARD block.
using Unit = std::vector<const RecordedCall*>;

// The window's calls as per-client queues of units, clients in order of first appearance.
std::vector<std::vector<Unit>> units_by_client(const std::vector<RecordedCall>& pool, size_t begin, size_t end,
                                               std::vector<std::string>* clients) {
  std::map<std::string, size_t> index;
  std::vector<std::vector<Unit>> queues;
  std::map<std::string, bool> in_multi;
  for (size_t i = begin; i < end; ++i) {
    const RecordedCall& c = pool[i];
    auto [it, added] = index.emplace(c.client, queues.size());
    if (added) {
      queues.emplace_back();
      clients->push_back(c.client);
    }
    std::vector<Unit>& q = queues[it->second];
    const std::string cmd = upper(c.argv[0]);
    if (in_multi[c.client] && !q.empty()) {
      q.back().push_back(&c);
    } else {
      q.push_back(Unit{&c});
    }
    if (cmd == "MULTI") in_multi[c.client] = true;
    if (cmd == "EXEC" || cmd == "DISCARD") in_multi[c.client] = false;
  }
  return queues;
}

Step command_step(int client, std::vector<std::string> argv) {
  Step s;
  s.kind = Step::Kind::kCommand;
  s.client = client;
  s.argv = std::move(argv);
  return s;
}

// Another client's write on `key` between two recorded turns.
void interfere(int kind, const std::string& key, std::vector<Step>* out) {
  constexpr int kInterferer = kClients - 1;
  switch (kind % 7) {
    case 0:
    case 1:
      out->push_back(command_step(kInterferer, {"DEL", key}));
      return;
    case 2:
    case 3: {
      out->push_back(command_step(kInterferer, {"PEXPIRE", key, "1"}));
      Step wait;
      wait.kind = Step::Kind::kWait;
      wait.wait_ms = 3;
      out->push_back(wait);
      return;
    }
    case 4:
    case 5:
      out->push_back(command_step(kInterferer, {"SET", key, "interfered"}));
      return;
    default:
      out->push_back(command_step(kInterferer, {"SCRIPT", "FLUSH"}));
      return;
  }
}

struct Turn {
  int client_pick = 0;   // which client with calls left goes next
  int interference = 0;  // < kInterferencePercent: this turn is an interference
  int key_pick = 0;      // the key an interference hits
};
constexpr int kInterferencePercent = 12;

}  // namespace

std::string script_name(const ScriptRegistry& scripts, const std::vector<std::string>& argv) {
  if (argv.size() < 2) return "";
  const std::string cmd = upper(argv[0]);
  const RedisScript* s = cmd == "EVALSHA" || cmd == "EVALSHA_RO" ? scripts.by_sha1(argv[1])
                         : cmd == "EVAL" || cmd == "EVAL_RO"     ? scripts.by_lua(argv[1])
                                                                 : nullptr;
  return s ? s->name : "";
}

std::vector<RecordedCall> recorded_calls(const sim::redis::CommandLog& log) {
  std::vector<RecordedCall> out;
  for (const sim::redis::CommandRecord& r : log) {
    if (r.depth != 0 || r.argv.empty() || connection_state(upper(r.argv[0]))) continue;
    out.push_back(RecordedCall{r.client, without_block(r.argv)});
  }
  return out;
}

std::vector<std::string> keys_of(const std::vector<std::string>& argv) {
  if (argv.size() < 2) return {};
  const std::string cmd = upper(argv[0]);
  if (cmd == "EVAL" || cmd == "EVALSHA" || cmd == "EVAL_RO" || cmd == "EVALSHA_RO") {
    const long long n = argv.size() > 2 ? std::atoll(argv[2].c_str()) : 0;
    std::vector<std::string> keys;
    for (size_t i = 3; i < argv.size() && static_cast<long long>(i - 3) < n; ++i) keys.push_back(argv[i]);
    return keys;
  }
  if (cmd == "MGET" || cmd == "DEL" || cmd == "EXISTS" || cmd == "UNLINK" || cmd == "TOUCH") {
    return {argv.begin() + 1, argv.end()};
  }
  if (cmd == "XREADGROUP" || cmd == "XREAD") {
    auto streams = std::find_if(argv.begin(), argv.end(), [](const std::string& a) { return upper(a) == "STREAMS"; });
    if (streams == argv.end()) return {};
    const size_t first = static_cast<size_t>(streams - argv.begin()) + 1;
    const size_t n = (argv.size() - first) / 2;
    return {argv.begin() + static_cast<std::ptrdiff_t>(first), argv.begin() + static_cast<std::ptrdiff_t>(first + n)};
  }
  static const std::set<std::string> kKeyless = {"PING",  "ECHO", "PUBLISH", "SCRIPT", "DBSIZE", "FLUSHALL", "FLUSHDB",
                                                 "MULTI", "EXEC", "DISCARD", "TIME",   "INFO",   "CONFIG",   "WAIT"};
  if (kKeyless.count(cmd)) return {};
  return {argv[1]};
}

rc::Gen<std::vector<Step>> gen_traffic_sequence(std::shared_ptr<const std::vector<RecordedCall>> pool,
                                                std::shared_ptr<const ScriptRegistry> scripts, int max_steps) {
  FL_ASSERT(pool != nullptr && !pool->empty() && scripts != nullptr);
  auto calls_by_script = std::make_shared<std::vector<std::vector<size_t>>>();  // per script called
  {
    std::map<std::string, std::vector<size_t>> by_name;
    for (size_t i = 0; i < pool->size(); ++i) {
      if (std::string name = script_name(*scripts, (*pool)[i].argv); !name.empty()) by_name[name].push_back(i);
    }
    for (auto& [name, calls] : by_name) calls_by_script->push_back(std::move(calls));
  }
  return gen::exec([pool, scripts, calls_by_script, max_steps] {
    std::vector<Step> steps;
    for (const std::string& name : scripts->names()) {
      steps.push_back(command_step(0, {"SCRIPT", "LOAD", scripts->by_name(name)->lua}));
    }
    // RapidCheck scales inRange by the size: starts are drawn at nominal size, uniform. Half the
    // windows lead up to a call of a script drawn uniformly, so a script the runs call rarely is
    // replayed as often as a frequent one.
    size_t begin = *gen::resize(100, gen::inRange<size_t>(0, pool->size()));
    if (!calls_by_script->empty() && *gen::resize(100, gen::inRange(0, 2)) == 0) {
      const auto& calls = (*calls_by_script)[*gen::resize(100, gen::inRange<size_t>(0, calls_by_script->size()))];
      const size_t anchor = calls[*gen::resize(100, gen::inRange<size_t>(0, calls.size()))];
      const auto lead = *gen::resize(100, gen::inRange<size_t>(0, static_cast<size_t>(max_steps)));
      begin = anchor > lead ? anchor - lead : 0;
    }
    const size_t end = std::min(pool->size(), begin + 2 * static_cast<size_t>(max_steps));
    std::vector<std::string> clients;
    std::vector<std::vector<Unit>> queues = units_by_client(*pool, begin, end, &clients);
    std::vector<std::string> keys;
    for (size_t i = begin; i < end; ++i) {
      for (std::string& k : keys_of((*pool)[i].argv)) keys.push_back(std::move(k));
    }
    std::vector<size_t> next(queues.size(), 0);
    const auto turns = *gen::resize(
        max_steps, gen::container<std::vector<Turn>>(gen::resize(
                       100, gen::map(gen::tuple(gen::inRange(0, 1000), gen::inRange(0, 100), gen::inRange(0, 1000)),
                                     [](const std::tuple<int, int, int>& t) {
                                       return Turn{std::get<0>(t), std::get<1>(t), std::get<2>(t)};
                                     }))));
    for (const Turn& t : turns) {
      if (t.interference < kInterferencePercent && !keys.empty()) {
        interfere(t.key_pick, keys[static_cast<size_t>(t.key_pick) % keys.size()], &steps);
        continue;
      }
      std::vector<size_t> active;
      for (size_t c = 0; c < queues.size(); ++c) {
        if (next[c] < queues[c].size()) active.push_back(c);
      }
      if (active.empty()) break;
      const size_t c = active[static_cast<size_t>(t.client_pick) % active.size()];
      for (const RecordedCall* call : queues[c][next[c]++]) {
        steps.push_back(command_step(static_cast<int>(c % kClients), call->argv));
      }
    }
    return steps;
  });
}

}  // namespace fl::redis_diff
