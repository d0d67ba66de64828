// A checker that samples the stores during a run must not change the run it watches: the likes
// sampler reads Redis's keyspace and the DB (through the VFS's inspection door) on timers of its
// own (World::observe_at). Sampling every 37 ms or not at all must leave everything the world
// did - messages, deliveries, faults (DB I/O errors drawn from the VFS's Rng included), process
// events, operations and the servers' observations - exactly the same.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/params.h"
#include "harness/runner.h"
#include "harness/scenario_loader.h"
#include "harness/scenario_testing.h"

namespace fl {
namespace {

// The world's recorded events without the fingerprint after each (the samples are folded into it),
// the configuration (the first event: it names the interval) and the verdicts.
std::vector<std::string> world_events(const Scenario& s, uint64_t seed, const std::string& path) {
  RunOptions o;
  o.trace_jsonl_path = path;
  const RunResult r = run_scenario(s, seed, o);
  EXPECT_TRUE(r.error.empty()) << r.error;
  std::ifstream in(path);
  std::vector<std::string> out;
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (first || line.find("\"kind\":\"violation\"") != std::string::npos) {
      first = false;
      continue;
    }
    out.push_back(line.substr(0, line.rfind(",\"fp\":")));
  }
  std::remove(path.c_str());
  return out;
}

Scenario likes_with_interval(const std::string& interval_ms) {
  Scenario s = test_support::load_source_scenario("scenarios/likes/swarm-hardened.yaml");
  s.storage.io_error_probability = 0.02;  // many draws from the DB disk's Rng
  s.params["sample_interval_ms"] = interval_ms;
  return with_config(s);
}

TEST(Observer, LikesSamplingDoesNotChangeTheWorld) {
  // Per process: two checkouts' suites may run at once and share the temporary directory.
  const std::string dir = ::testing::TempDir() + "observer-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  for (uint64_t seed : {116, 214, 288}) {
    const std::vector<std::string> often = world_events(likes_with_interval("37"), seed, dir + "/often.jsonl");
    // An interval longer than the run: only the final state is read.
    const std::vector<std::string> never = world_events(likes_with_interval("3600000"), seed, dir + "/never.jsonl");
    ASSERT_GT(often.size(), 1000u);
    ASSERT_EQ(often.size(), never.size()) << "seed " << seed;
    for (size_t i = 0; i < often.size(); ++i) ASSERT_EQ(often[i], never[i]) << "seed " << seed << " event " << i;
    size_t storage_errors = 0;
    for (const std::string& e : often) storage_errors += e.find("disk I/O error") != std::string::npos ? 1 : 0;
    EXPECT_GT(storage_errors, 0u) << "seed " << seed << ": the run drew DB I/O errors";
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fl
