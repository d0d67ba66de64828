#include "harness/sweep.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <iterator>
#include <set>
#include <sstream>

#include "harness/commands.h"
#include "harness/scenario_loader.h"
#include "harness/shrink.h"
#include "harness/system.h"

namespace fl {
namespace {

namespace fs = std::filesystem;

TEST(Sweep, ShardsCoverEverySeedOnce) {
  int i = -1, n = -1;
  EXPECT_TRUE(parse_shard("3/8", &i, &n));
  EXPECT_EQ(i, 3);
  EXPECT_EQ(n, 8);
  for (const char* bad : {"8/8", "-1/4", "1/0", "a/b", "1/", "/2", "12", "1/2/3"}) {
    EXPECT_FALSE(parse_shard(bad, &i, &n)) << bad;
  }
  std::multiset<uint64_t> all;
  for (int k = 0; k < 7; ++k) {
    for (uint64_t s : shard_seeds(100, 50, k, 7)) all.insert(s);
  }
  EXPECT_EQ(all.size(), 50u);
  EXPECT_EQ(std::set<uint64_t>(all.begin(), all.end()).size(), 50u);
  EXPECT_EQ(*all.begin(), 100u);
  EXPECT_EQ(*all.rbegin(), 149u);
}

TEST(Sweep, CrashesAndHangsAreThatJobsFailure) {
  std::vector<size_t> order;
  const auto out = run_in_workers(
      6,
      [](size_t job) {
        if (job == 1) std::abort();
        if (job == 2) ::sleep(30);
        if (job == 3) ::_exit(3);
        RunResult r;
        r.seed = 1000 + job;
        r.all_passed = job != 4;
        r.verdicts.push_back(Verdict{"p", {"X-1"}, job != 4, "checked", {}, 7});
        return r;
      },
      3, absl::Seconds(1), [&](const WorkerOutcome& o, size_t, size_t) { order.push_back(o.job); });
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(order.size(), 6u);
  for (size_t j = 0; j < 6; ++j) EXPECT_EQ(out[j].job, j);
  EXPECT_TRUE(out[0].completed);
  EXPECT_EQ(out[0].result.seed, 1000u);
  EXPECT_FALSE(out[1].completed);
  EXPECT_NE(out[1].result.error.find("signal 6"), std::string::npos) << out[1].result.error;
  EXPECT_FALSE(out[2].completed);
  EXPECT_NE(out[2].result.error.find("timeout"), std::string::npos) << out[2].result.error;
  EXPECT_LT(out[2].wall_seconds, 10);
  EXPECT_NE(out[3].result.error.find("status 3"), std::string::npos) << out[3].result.error;
  EXPECT_TRUE(out[4].completed);
  EXPECT_EQ(failed_properties(out[4].result), std::vector<std::string>{"p"});
  EXPECT_EQ(failed_properties(out[1].result), std::vector<std::string>{"<error>"});
}

// A worker that closes its pipe without exiting (here: every descriptor, then a long sleep) is
// still held to the timeout; the sweep used to wait for it in a blocking waitpid, at 0% CPU.
TEST(Sweep, AWorkerThatClosesItsPipeButNeverExitsTimesOut) {
  const auto start = std::chrono::steady_clock::now();
  const auto out = run_in_workers(
      2,
      [](size_t job) {
        if (job == 0) {
          for (int fd = 3; fd < 1024; ++fd) ::close(fd);
          ::sleep(30);
        }
        RunResult r;
        r.seed = 7;
        r.all_passed = true;
        return r;
      },
      2, absl::Seconds(1));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].completed);
  EXPECT_NE(out[0].result.error.find("timeout"), std::string::npos) << out[0].result.error;
  EXPECT_TRUE(out[1].completed);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10);
}

// A worker runs many seeds one after another: each must come out exactly as in a fresh process
// (run_isolated starts a new worker per run), or reusing workers would leak state between runs.
TEST(Sweep, AWorkerRunningManySeedsGivesEachTheFingerprintOfAFreshProcess) {
  for (const char* file : {"scenarios/combo/explore-hardened.yaml", "scenarios/likes/swarm-hardened.yaml"}) {
    LoadResult loaded = load_scenario_file((fs::path(FAULTLINE_SOURCE_DIR) / file).string());
    ASSERT_TRUE(loaded.ok()) << loaded.error_text();
    const Scenario& s = *loaded.scenario;
    constexpr size_t kSeeds = 5;
    const auto reused = run_in_workers(
        kSeeds, [&](size_t job) { return run_scenario(s, job + 1, RunOptions{}); }, 1, absl::Seconds(120));
    for (size_t job = 0; job < kSeeds; ++job) {
      const RunResult fresh = run_isolated(s, job + 1, RunOptions{}, absl::Seconds(120));
      ASSERT_TRUE(reused[job].completed) << file << " seed " << job + 1 << ": " << reused[job].result.error;
      EXPECT_TRUE(fresh.error.empty()) << fresh.error;
      EXPECT_EQ(reused[job].result.fingerprint, fresh.fingerprint) << file << " seed " << job + 1;
      EXPECT_EQ(reused[job].result.events, fresh.events) << file << " seed " << job + 1;
    }
  }
}

TEST(Sweep, RunResultJsonRoundTrips) {
  RunResult r;
  r.scenario = "s\"x";
  r.seed = 18446744073709551615ULL;
  r.fingerprint = 0x8000000000000001ULL;
  r.config_digest = 42;
  r.simulated_us = 25'000'000;
  r.wall_seconds = 0.125;
  r.all_passed = false;
  r.as_expected = true;
  r.replay_command = "faultline run a.yaml --seed 1";
  r.verdicts.push_back(Verdict{"p", {"A-1", "A-2"}, false, "a < b", {"e1\n", "e2"}, 9});
  r.meanwhile.push_back(ListedEffect{"risk", "#17 t=15290ms risk -> redis: INCR f", 17});
  std::optional<RunResult> back = run_result_from_json(run_result_to_json(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->scenario, r.scenario);
  EXPECT_EQ(back->seed, r.seed);
  EXPECT_EQ(back->fingerprint, r.fingerprint);
  EXPECT_EQ(back->wall_seconds, r.wall_seconds);
  EXPECT_TRUE(back->as_expected);
  ASSERT_EQ(back->verdicts.size(), 1u);
  EXPECT_EQ(back->verdicts[0].evidence, r.verdicts[0].evidence);
  EXPECT_EQ(back->verdicts[0].checks, 9);
  ASSERT_EQ(back->meanwhile.size(), 1u);  // a pause pair's candidates cross the worker pipe
  EXPECT_EQ(back->meanwhile[0].process, "risk");
  EXPECT_EQ(back->meanwhile[0].text, r.meanwhile[0].text);
  EXPECT_EQ(back->meanwhile[0].index, 17u);
  EXPECT_FALSE(run_result_from_json("garbage"));
}

// A fake system under test for shrink: property "p" fails iff there is a pause fault, at least
// two clients and at least one second of run; property "q" fails iff replicas > 2.
RunResult fake_run(const Scenario& s, uint64_t seed) {
  bool pause = false;
  for (const FaultSpec& f : s.faults) pause |= f.kind == "pause";
  RunResult r;
  r.seed = seed;
  Scenario inputs = s;  // like a real run, the fingerprint does not depend on `expect`
  inputs.expect = Expectation{};
  r.fingerprint = scenario_digest(inputs) ^ seed;
  const bool p_fails = pause && s.topology.clients >= 2 && s.duration_ms >= 1000;
  r.verdicts.push_back(Verdict{"p", {}, !p_fails, "", {}, 1});
  r.verdicts.push_back(Verdict{"q", {}, s.topology.replicas <= 2, "", {}, 1});
  r.all_passed = !p_fails && s.topology.replicas <= 2;
  return r;
}

Scenario big_scenario() {
  Scenario s;
  s.name = "big";
  s.system = "fake";
  s.topology.replicas = 3;
  s.topology.clients = 16;
  s.duration_ms = 20000;
  s.workload = {WorkloadSpec{"a", 5, "poisson", {}}, WorkloadSpec{"b", 3, "poisson", {}}};
  s.faults = {FaultSpec{1000, "crash", "r0", 0, 0}, FaultSpec{2000, "pause", "r1", 500, 0},
              FaultSpec{3000, "clock-jump", "r1", 0, 100}, FaultSpec{15000, "partition", "a|b", 100, 0}};
  s.swarm.enabled = true;
  s.network.drop_probability = 0.1;
  return s;
}

TEST(Shrink, ReducesWhileTheSamePropertyFails) {
  const Scenario s = big_scenario();
  ShrinkResult res = shrink_failure(s, 7, fake_run, 500, "p");
  ASSERT_TRUE(res.reproduced);
  EXPECT_EQ(res.property, "p");
  ASSERT_EQ(res.minimal.faults.size(), 1u);
  EXPECT_EQ(res.minimal.faults[0].kind, "pause");
  EXPECT_EQ(res.minimal.topology.clients, 2);
  EXPECT_GE(res.minimal.duration_ms, 1000);
  EXPECT_LT(res.minimal.duration_ms, 4000);
  EXPECT_FALSE(res.minimal.swarm.enabled);
  EXPECT_EQ(res.minimal.workload.size(), 1u);
  EXPECT_EQ(res.minimal.network.drop_probability, 0);
  EXPECT_EQ(res.minimal.seed, 7u);
  EXPECT_FALSE(res.minimal.expect.pass);
  EXPECT_EQ(res.minimal.expect.failing, std::vector<std::string>{"p"});
  EXPECT_EQ(res.minimal.expect.fingerprint, fake_run(res.minimal, 7).fingerprint);
  EXPECT_NE(res.summary.find("faults 4 -> 1"), std::string::npos) << res.summary;
  EXPECT_NE(res.summary.find("clients 16 -> 2"), std::string::npos) << res.summary;
  // The minimal scenario still fails p when replayed.
  const RunResult again = fake_run(res.minimal, 7);
  EXPECT_FALSE(again.verdicts[0].passed);
  // Shrinking "q" keeps 3 replicas (dropping one would make q pass).
  ShrinkResult rq = shrink_failure(s, 7, fake_run, 500, "q");
  EXPECT_EQ(rq.minimal.topology.replicas, 3);
  EXPECT_TRUE(rq.minimal.faults.empty());
}

TEST(Shrink, ReportsANonFailingRunAndRespectsTheBudget) {
  Scenario s = big_scenario();
  s.faults.clear();
  s.topology.replicas = 1;
  ShrinkResult res = shrink_failure(s, 1, fake_run, 10);
  EXPECT_FALSE(res.reproduced);
  EXPECT_EQ(res.runs, 1);
  ShrinkResult capped = shrink_failure(big_scenario(), 1, fake_run, 3, "p");
  EXPECT_LE(capped.runs, 3);
}

TEST(Sweep, RunRecordFoldsSeeds) {
  Scenario s = big_scenario();
  s.matrix_rows = {"DEMO-1"};
  s.expect = Expectation{.pass = false, .failing = {"p"}};
  std::vector<WorkerOutcome> runs(3);
  for (int i = 0; i < 3; ++i) {
    runs[i].job = i;
    runs[i].completed = true;
    runs[i].result = fake_run(s, 10 + i);
    runs[i].result.simulated_us = 1'000'000;
  }
  runs[2].completed = false;
  runs[2].result = RunResult{};
  runs[2].result.seed = 12;
  runs[2].result.error = "timeout: ...";
  reports::RunRecord rec = make_run_record(s, runs, "now", "abc");
  EXPECT_EQ(rec.seeds, (std::vector<uint64_t>{10, 11, 12}));
  EXPECT_EQ(rec.failing_seeds, (std::vector<uint64_t>{10, 11, 12}));
  EXPECT_EQ(rec.failures_per_property["p"], 2);
  EXPECT_EQ(rec.failures_per_property["<error>"], 1);
  EXPECT_EQ(rec.simulated_us, 2'000'000);
  EXPECT_NE(rec.error.find("seed 12"), std::string::npos);
  EXPECT_EQ(rec.config_digest, scenario_digest(s));
  EXPECT_TRUE(rec.as_expected());
  EXPECT_TRUE(rec.is_evidence());
}

// Per property, a sweep counts the seeds that judged it and those where it checked nothing; a
// property that checked nothing on every seed makes the sweep unexpected even when all passed.
TEST(Sweep, RunRecordCountsVacuousSeedsPerProperty) {
  Scenario s = big_scenario();
  s.topology.replicas = 2;  // p and q pass
  s.faults.clear();
  std::vector<WorkerOutcome> runs(3);
  for (int i = 0; i < 3; ++i) {
    runs[i].job = i;
    runs[i].completed = true;
    runs[i].result = fake_run(s, 20 + i);
    runs[i].result.verdicts[1].checks = i == 1 ? 4 : 0;  // q checks something on one seed only
    runs[i].result.verdicts.push_back(passing_verdict("idle", {}, "never exercised"));
  }
  reports::RunRecord rec = make_run_record(s, runs, "now", "abc");
  ASSERT_EQ(rec.assertions.size(), 3u);
  EXPECT_EQ(rec.assertions[1].seeds, 3);
  EXPECT_EQ(rec.assertions[1].vacuous_seeds, 2);
  EXPECT_STREQ(rec.assertions[1].status(), "PASS");
  EXPECT_EQ(rec.assertions[2].vacuous_seeds, 3);
  EXPECT_STREQ(rec.assertions[2].status(), "VACUOUS");
  EXPECT_TRUE(rec.passed());
  EXPECT_FALSE(rec.as_expected());
  EXPECT_EQ(rec.vacuous_properties(), std::vector<std::string>{"idle"});
  for (WorkerOutcome& w : runs) w.result.verdicts.pop_back();
  EXPECT_TRUE(make_run_record(s, runs, "now", "abc").as_expected());
}

// The sweep counts, per behaviour the system reports, the seeds that exercised it: the demo's
// swarm makes some increments indeterminate, on some seeds (about half of them).
TEST(Sweep, RunRecordCountsTheSeedsOfEachBehaviour) {
  LoadResult loaded = load_scenario_file(std::string(FAULTLINE_SOURCE_DIR) + "/scenarios/demo/counter-retries.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.error_text();
  std::vector<WorkerOutcome> runs;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    WorkerOutcome w;
    w.job = runs.size();
    w.completed = true;
    w.result = run_scenario(*loaded.scenario, seed, RunOptions{});
    runs.push_back(std::move(w));
  }
  const reports::RunRecord rec = make_run_record(*loaded.scenario, runs, "now", "abc");
  ASSERT_TRUE(rec.behaviour_seeds.count("increment answered indeterminate"));
  EXPECT_GT(rec.behaviour_seeds.at("increment answered indeterminate"), 0);
  EXPECT_LT(rec.behaviour_seeds.at("increment answered indeterminate"), 8);
  const std::optional<RunResult> back = run_result_from_json(run_result_to_json(runs[0].result));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->behaviours, runs[0].result.behaviours);
}

// End to end through the subcommands with the kernel demo: sweep the spec variant (fails as
// expected), shrink a failing seed, replay the minimal file, merge two shards, explain a trace.
TEST(Commands, SweepShrinkReplayReportExplainOnTheDemo) {
  const fs::path spec = fs::path(FAULTLINE_SOURCE_DIR) / "scenarios/demo/counter-retries-spec.yaml";
  ASSERT_TRUE(find_system("demo") != nullptr && fs::exists(spec))
      << "the demo system and " << spec << " are inputs of this test";
  const fs::path dir = fs::path(FAULTLINE_BINARY_DIR) / "sweep_test_out";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string file = (dir / "spec.yaml").string();
  fs::copy_file(spec, file);
  EXPECT_EQ(sweep_main({file, "--seeds", "6", "--jobs", "2", "--shard", "0/2", "--json", (dir / "s0.json").string(),
                        "--quiet"}),
            0);
  EXPECT_EQ(sweep_main({file, "--seeds", "6", "--jobs", "2", "--shard", "1/2", "--json", (dir / "s1.json").string(),
                        "--quiet"}),
            0);
  EXPECT_EQ(report_main({"--merge", (dir / "s0.json").string(), (dir / "s1.json").string(), "--out",
                         (dir / "merged").string()}),
            0);
  std::ifstream merged(dir / "merged/report.json");
  std::stringstream text;
  text << merged.rdbuf();
  std::optional<reports::Report> rep = reports::report_from_json(text.str(), nullptr);
  ASSERT_TRUE(rep);
  ASSERT_EQ(rep->runs.size(), 1u);
  EXPECT_EQ(rep->runs[0].seeds, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  ASSERT_FALSE(rep->runs[0].failing_seeds.empty());
  const uint64_t seed = rep->runs[0].failing_seeds[0];
  const std::string min = (dir / "min.yaml").string();
  EXPECT_EQ(shrink_main({file, "--seed", std::to_string(seed), "--out", min}), 0);
  LoadResult shrunk = load_scenario_file(min);
  ASSERT_TRUE(shrunk.ok()) << shrunk.error_text();
  EXPECT_EQ(shrunk.scenario->seed, seed);
  EXPECT_TRUE(shrunk.scenario->expect.fingerprint.has_value());
  EXPECT_EQ(replay_main({min}), 0);
  // A tampered fingerprint is not a reproduction.
  Scenario tampered = *shrunk.scenario;
  *tampered.expect.fingerprint ^= 1;
  std::ofstream(dir / "tampered.yaml") << scenario_to_yaml(tampered);
  EXPECT_EQ(replay_main({(dir / "tampered.yaml").string()}), 1);
  EXPECT_EQ(sweep_main({file, "--seeds", "x"}), 2);
  EXPECT_EQ(sweep_main({file, "--bogus"}), 2);
  EXPECT_EQ(sweep_main({(dir / "missing.yaml").string(), "--seeds", "1"}), 2);
  const std::string trace = (dir / "s0.json.trace.jsonl").string();
  ASSERT_TRUE(fs::exists(trace));
  EXPECT_EQ(explain_main({trace, "--out", (dir / "explained").string()}), 0);
  EXPECT_GT(fs::file_size(dir / "explained.svg"), 200u);
  EXPECT_GT(fs::file_size(dir / "explained.mmd"), 20u);
}

// A fail-point sweep fails one call at a time; each broken property's first point is written as a
// scenario with its fail_point: that replays with its fingerprint. Hardened (dedup ids) survives
// every point the spec breaks.
TEST(Commands, FailPointSweepsWriteReplayableFindings) {
  const fs::path demo = fs::path(FAULTLINE_SOURCE_DIR) / "scenarios/demo";
  ASSERT_TRUE(find_system("demo") != nullptr && fs::exists(demo / "counter-retries-spec.yaml"));
  const fs::path dir = fs::path(FAULTLINE_BINARY_DIR) / "fail_point_test_out";
  fs::remove_all(dir);
  const std::string spec = (demo / "counter-retries-spec.yaml").string();
  EXPECT_EQ(sweep_main({spec, "--fail-points", "--effects", "2", "--jobs", "2", "--found", dir.string()}), 0);
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir)) found.push_back(e.path());
  ASSERT_EQ(found.size(), 1u);  // one property (no-double-count), its first point
  LoadResult pinned = load_scenario_file(found[0].string());
  ASSERT_TRUE(pinned.ok()) << pinned.error_text();
  ASSERT_TRUE(pinned.scenario->fail_point.has_value());
  EXPECT_TRUE(pinned.scenario->expect.fingerprint.has_value());
  EXPECT_EQ(replay_main({found[0].string()}), 0);
  const std::string hardened = (demo / "counter-retries.yaml").string();
  EXPECT_EQ(sweep_main({hardened, "--fail-points", "--effects", "2", "--jobs", "2"}), 0);
  EXPECT_EQ(sweep_main({hardened, "--fail-points", "--pause-points"}), 2);
  EXPECT_EQ(sweep_main({hardened, "--fail-points", "--processes", "no-such-", "--jobs", "1"}), 2);
}

// --pause-ms pauses each boundary once per duration given (before and after each effect), instead
// of one duration drawn per boundary; a bad duration, or the flag without --pause-points, is a
// usage error.
TEST(Commands, PauseMsPausesEachBoundaryForEachDuration) {
  const fs::path demo = fs::path(FAULTLINE_SOURCE_DIR) / "scenarios/demo";
  const std::string hardened = (demo / "counter-retries.yaml").string();
  const fs::path json = fs::path(FAULTLINE_BINARY_DIR) / "pause_ms_test_out.json";
  fs::remove(json);
  EXPECT_EQ(sweep_main({hardened, "--pause-points", "--effects", "2", "--pause-ms", "5,50,500", "--jobs", "2", "--json",
                        json.string()}),
            0);
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"seeds\":12"), std::string::npos) << text.substr(0, 400);  // 2 effects x 2 sides x 3
  EXPECT_EQ(sweep_main({hardened, "--pause-points", "--pause-ms", "0"}), 2);
  EXPECT_EQ(sweep_main({hardened, "--pause-points", "--pause-ms", "5ms"}), 2);
  EXPECT_EQ(sweep_main({hardened, "--crash-points", "--pause-ms", "5"}), 2);
}

// --meanwhile pairs each pause with a pause at each effect the named processes made while it held
// its caller: the sweep runs the single pauses and then the pairs (more runs than the pauses
// alone); the flag goes with --pause-points only.
TEST(Commands, MeanwhileSweepsPausePairs) {
  const fs::path demo = fs::path(FAULTLINE_SOURCE_DIR) / "scenarios/demo";
  const std::string hardened = (demo / "counter-retries.yaml").string();
  const fs::path json = fs::path(FAULTLINE_BINARY_DIR) / "meanwhile_test_out.json";
  fs::remove(json);
  EXPECT_EQ(sweep_main({hardened, "--pause-points", "--processes", "replica-1", "--effects", "2", "--pause-ms", "500",
                        "--meanwhile", "replica-2", "--jobs", "2", "--json", json.string()}),
            0);
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch runs;
  ASSERT_TRUE(std::regex_search(text, runs, std::regex("\"seeds\":([0-9]+)"))) << text.substr(0, 400);
  EXPECT_GT(std::stoi(runs[1].str()), 4) << text.substr(0, 400);  // 2 effects x 2 sides, then the pairs
  EXPECT_EQ(sweep_main({hardened, "--crash-points", "--meanwhile", "replica-2"}), 2);
}

}  // namespace
}  // namespace fl
