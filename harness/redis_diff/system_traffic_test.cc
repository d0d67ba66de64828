// The seed systems' own Redis traffic on both servers (properties/redis/system_traffic.h): each
// system's exploratory files run in the simulated world, the commands its services sent to the
// simulated Redis are recorded, and then replayed against the simulated Redis (in-process Engine)
// and a real redis-server: once in the recorded order, and as generated sequences that
// re-interleave the recorded clients and interfere on their keys. Every reply is compared
// (redis_diff.h), so each deployed script runs with its real arguments on both servers.
//
// Size: FAULTLINE_DIFF_SEQUENCES / 3 + 1 (default 101) generated sequences per system. RC_PARAMS="seed=..."
// replays a reported failure.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "harness/real/redis_server.h"
#include "harness/redis_diff/hiredis_side.h"
#include "harness/redis_diff/real_redis_test_support.h"
#include "harness/runner.h"
#include "harness/scenario_testing.h"
#include "harness/system.h"
#include "properties/redis/redis_diff.h"
#include "properties/redis/system_traffic.h"

namespace fl::redis_diff {
namespace {

constexpr int kMaxSteps = 30;

// Scripts no recorded run calls, with why; each is compared by a directed test instead.
// redisson_renew: Redisson's watchdog renews a lock held for 10 s (a third of its 30 s lease), and
// no exploratory run holds the combo lock that long (RedisDiff.SystemScriptsLoadOnRealRedis...).
const std::set<std::string> kNotCalledByTheRuns = {"redisson_renew"};

struct TrafficSource {
  std::string system;
  std::vector<std::string> files;  // exploratory files whose seed-1 runs give the traffic
};

// The four seed systems' files. Spec and hardened, so that both the seed's plain commands and the fixes' scripts are replayed,
// and the files whose options call the remaining scripts (the seed's Lua lock and Redisson's
// watchdog in gifts, combo's flush in the seed's order, likes' put without the fill lease).
const std::vector<TrafficSource>& sources() {
  static const std::vector<TrafficSource> list = {
      {"combo",
       {"scenarios/combo/explore-hardened.yaml", "scenarios/combo/explore-spec.yaml",
        "scenarios/combo/found/without-CB-FLUSH-WRITES-FIRST.yaml"}},
      {"likes", {"scenarios/likes/swarm-hardened.yaml", "scenarios/likes/found/without-LK-FILL-LEASE.yaml"}},
      {"gifts",
       {"scenarios/gifts/explore-hardened.yaml", "scenarios/gifts/explore-spec.yaml",
        "scenarios/gifts/explore-spec-lua-lock.yaml", "scenarios/gifts/explore-spec-watchdog.yaml"}},
      {"ranking", {"scenarios/ranking/explore-risk-hardened.yaml", "scenarios/ranking/explore-publish-hardened.yaml"}},
  };
  return list;
}

// The client commands the system's Redis servers executed in the runs of `files` (seed 1).
std::shared_ptr<const std::vector<RecordedCall>> record(const std::vector<std::string>& files) {
  auto pool = std::make_shared<std::vector<RecordedCall>>();
  for (const std::string& file : files) {
    const Scenario s = test_support::load_source_scenario(file);
    RunOptions o;
    o.inspect = [&pool](sim::World&, const SystemRun& run) {
      for (const sim::redis::CommandLog* log : run.redis_command_logs()) {
        for (RecordedCall& c : recorded_calls(*log)) pool->push_back(std::move(c));
      }
    };
    const fl::RunResult r = run_scenario(s, 1, o);
    EXPECT_TRUE(r.error.empty()) << file << ": " << r.error;
  }
  return pool;
}

// N8 for combo's flush (impl/combo/scripts.cc): {'wait', PTTL of the window's lock} while the
// window is open. The PTTL is a reading of each server's clock.
CompareOptions options_for(std::shared_ptr<const ScriptRegistry> scripts) {
  CompareOptions o;
  o.clock_ids = true;
  o.script_clock_equal = [scripts](const std::vector<std::string>& argv, const RedisReply& a, const RedisReply& b,
                                   int64_t tolerance_ms) {
    const std::string name = script_name(*scripts, argv);
    if (name != "combo_flush" && name != "combo_flush_writes_first") return false;
    const auto is_wait = [](const RedisReply& r) {
      return r.kind == RedisReply::Kind::kArray && r.elements.size() == 2 && r.elements[0].str == "wait" &&
             r.elements[1].kind == RedisReply::Kind::kInteger && r.elements[1].integer >= 0;
    };
    return is_wait(a) && is_wait(b) && std::llabs(a.elements[1].integer - b.elements[1].integer) <= tolerance_ms;
  };
  return o;
}

std::vector<Step> load_scripts(const ScriptRegistry& scripts) {
  std::vector<Step> steps;
  for (const std::string& name : scripts.names()) {
    Step s;
    s.argv = {"SCRIPT", "LOAD", scripts.by_name(name)->lua};
    steps.push_back(s);
  }
  return steps;
}

// The whole recorded order, each recorded client on its own connection (kClients of them, in order of
// first appearance), scripts loaded first.
std::vector<Step> recorded_order(const std::vector<RecordedCall>& pool, const ScriptRegistry& scripts) {
  std::vector<Step> steps = load_scripts(scripts);
  std::map<std::string, int> connection;
  for (size_t i = 0; i < pool.size(); ++i) {
    auto [it, added] = connection.emplace(pool[i].client, static_cast<int>(connection.size()) % kClients);
    Step s;
    s.client = it->second;
    s.argv = pool[i].argv;
    steps.push_back(s);
  }
  return steps;
}

class SystemTraffic : public RealRedisTest {};

// Every system's traffic, in the recorded order and re-interleaved: the simulated Redis answers
// as redis-server does, and every script the runs called ran in the generated sequences.
TEST_F(SystemTraffic, EachSystemsTrafficAgreesWithRealRedis) {
  HiredisSide real = real_side();
  for (const TrafficSource& source : sources()) {
    SCOPED_TRACE(source.system);
    const SystemUnderTest* system = find_system(source.system);
    ASSERT_NE(system, nullptr);
    const std::shared_ptr<const ScriptRegistry> scripts = system->redis_scripts();
    ASSERT_NE(scripts, nullptr);
    const auto pool = record(source.files);
    ASSERT_FALSE(pool->empty());
    std::set<std::string> recorded_scripts;
    for (const RecordedCall& c : *pool) {
      if (std::string name = script_name(*scripts, c.argv); !name.empty()) recorded_scripts.insert(name);
    }
    EXPECT_FALSE(recorded_scripts.empty()) << "the runs called no script: nothing of the scripts was compared";
    EngineSide sim(scripts);
    const CompareOptions o = options_for(scripts);

    const std::vector<Step> straight = recorded_order(*pool, *scripts);
    RunResult r = run_and_compare(real, sim, straight, o);
    if (!r.equal && r.timing_sensitive) r = run_and_compare(real, sim, straight, o);
    EXPECT_TRUE(r.equal) << "recorded order differs at step #" << r.failed_step << "\n" << r.report;

    std::map<std::string, int> script_runs;
    int sequences = 0, reruns = 0;
    check_property(sequences_from_env(300) / 3 + 1, kMaxSteps, [&] {
      const std::vector<Step> steps = *gen_traffic_sequence(pool, scripts, kMaxSteps);
      ++sequences;
      for (const Step& s : steps) {
        if (std::string name = script_name(*scripts, s.argv); !name.empty()) ++script_runs[name];
      }
      RunResult g = run_and_compare(real, sim, steps, o);
      if (!g.equal && g.timing_sensitive) {
        ++reruns;
        g = run_and_compare(real, sim, steps, o);
      }
      if (!g.equal) RC_FAIL("replies differ at step #" + std::to_string(g.failed_step) + "\n" + g.report);
    });
    std::cout << source.system << ": " << pool->size() << " recorded calls, " << sequences << " sequences, " << reruns
              << " timing reruns; script runs:";
    for (const auto& [name, n] : script_runs) std::cout << " " << name << "=" << n;
    std::cout << std::endl;
    // The recorded order replayed every script the runs called; the generated sequences some.
    for (const std::string& name : scripts->names()) {
      EXPECT_NE(recorded_scripts.count(name), kNotCalledByTheRuns.count(name))
          << name
          << (kNotCalledByTheRuns.count(name) ? ": called now, take it off kNotCalledByTheRuns"
                                              : ": no recorded run called it");
    }
    EXPECT_FALSE(script_runs.empty()) << "no generated sequence ran a script";
  }
}

// A simulated Redis whose script replies are off by one is caught on the recorded traffic, and
// the sound engine agrees on the same steps.
TEST_F(SystemTraffic, CatchesAScriptReplyThatDiffers) {
  HiredisSide real = real_side();
  const SystemUnderTest* system = find_system("likes");
  ASSERT_NE(system, nullptr);
  const auto scripts = system->redis_scripts();
  const auto pool = record({"scenarios/likes/swarm-hardened.yaml"});
  std::vector<Step> steps = recorded_order(*pool, *scripts);
  steps.resize(std::min<size_t>(steps.size(), 400));
  EngineSide broken(scripts);
  broken.corrupt = [](const std::vector<std::string>& argv, RedisReply r) {
    if (upper(argv[0]) == "EVALSHA" && r.kind == RedisReply::Kind::kInteger) ++r.integer;
    return r;
  };
  RunResult bad = run_and_compare(real, broken, steps, options_for(scripts));
  EXPECT_FALSE(bad.equal) << bad.report;
  EXPECT_NE(bad.report.find("EVALSHA"), std::string::npos);
  EngineSide sound(scripts);
  RunResult ok = run_and_compare(real, sound, steps, options_for(scripts));
  EXPECT_TRUE(ok.equal) << ok.report;
}

// N7: two servers whose clocks are a millisecond apart hand out different ids for an XADD '*'
// inside a script; with clock_ids the ids compare by first appearance, without they differ, and a
// difference in which entry comes back is still caught.
TEST(ClockIds, ScriptChosenStreamIdsCompareByFirstAppearance) {
  const auto later_clock = [](RedisReply r) {
    std::function<void(RedisReply&)> shift = [&shift](RedisReply& x) {
      const size_t dash = x.str.find('-');
      if (x.kind == RedisReply::Kind::kBulk && dash == 13) {
        x.str = std::to_string(std::stoll(x.str.substr(0, dash)) + 1) + x.str.substr(dash);
      }
      for (RedisReply& e : x.elements) shift(e);
    };
    shift(r);
    return r;
  };
  const std::string xadd = "return redis.call('XADD', KEYS[1], '*', 'f', ARGV[1])";
  std::vector<Step> steps(4);
  steps[0].argv = {"XGROUP", "CREATE", "x", "g", "$", "MKSTREAM"};
  steps[1].argv = {"EVAL", xadd, "1", "x", "a"};
  steps[2].argv = {"EVAL", xadd, "1", "x", "b"};
  steps[3].argv = {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"};
  EngineSide a(std::make_shared<ScriptRegistry>(), "a");
  EngineSide b(std::make_shared<ScriptRegistry>(), "b");
  b.corrupt = [&](const std::vector<std::string>&, RedisReply r) { return later_clock(std::move(r)); };
  CompareOptions with;
  with.clock_ids = true;
  RunResult r = run_and_compare(a, b, steps, with);
  EXPECT_TRUE(r.equal) << r.report;
  EXPECT_FALSE(run_and_compare(a, b, steps).equal);
  b.corrupt = [&](const std::vector<std::string>& argv, RedisReply r) {
    if (upper(argv[0]) == "XREADGROUP" && !r.elements.empty()) r.elements[0].elements[1].elements.pop_back();
    return later_clock(std::move(r));
  };
  EXPECT_FALSE(run_and_compare(a, b, steps, with).equal);
}

// What the recorder keeps: a client's commands, without subscriptions and without BLOCK.
TEST(RecordedCalls, KeepClientCommandsWithoutSubscriptionsOrBlocking) {
  sim::redis::CommandLog log;
  auto add = [&log](int depth, std::vector<std::string> argv) {
    sim::redis::CommandRecord r;
    r.client = "w";
    r.depth = depth;
    r.argv = std::move(argv);
    log.push_back(r);
  };
  add(0, {"SUBSCRIBE", "ch"});
  add(0, {"XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "BLOCK", "2000", "STREAMS", "x", ">"});
  add(1, {"GET", "k"});  // run by a script: not the client's
  add(0, {"EVALSHA", "abc", "2", "k1", "k2", "v"});
  const std::vector<RecordedCall> calls = recorded_calls(log);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].argv,
            (std::vector<std::string>{"XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", "x", ">"}));
  EXPECT_EQ(keys_of(calls[0].argv), (std::vector<std::string>{"x"}));
  EXPECT_EQ(keys_of(calls[1].argv), (std::vector<std::string>{"k1", "k2"}));
}

}  // namespace
}  // namespace fl::redis_diff
