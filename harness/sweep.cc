#include "harness/sweep.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "harness/build_info.h"
#include "harness/matrix_rows.h"
#include "reports/json.h"

namespace fl {
namespace {

using Clock = std::chrono::steady_clock;

// A worker process runs many jobs, one after another: the parent sends a job index (8 bytes)
// over a socket pair, the worker answers with the job's RunResult as one JSON line. Forking once
// per job cost a fork and, worse, page-faulting the whole heap in again for every run; a worker
// that lives for kJobsPerWorker jobs reuses its heap. Jobs are pure functions of their index and
// of what the parent held at fork time (run_scenario keeps no state between runs: combo_bench
// checks that threaded and sequential sweeps give the same fingerprints), so which worker runs a
// job changes nothing. A job that crashes or hangs still costs only its own result: the worker
// is killed (on a timeout) and the next job goes to a fresh one.
constexpr uint32_t kJobsPerWorker = 64;
constexpr size_t kNoJob = static_cast<size_t>(-1);

struct Running {
  pid_t pid = -1;
  int fd = -1;          // the parent's end of the socket pair
  size_t job = kNoJob;  // the job it is running, kNoJob when idle
  uint32_t jobs_started = 0;
  Clock::time_point started;  // of the current job
  std::string output;
  bool eof = false;     // the worker closed its end
  bool reaped = false;  // waitpid returned its status
  int status = 0;
};

bool write_all(int fd, const char* data, size_t size) {
  size_t off = 0;
  while (off < size) {
    const ssize_t n = ::send(fd, data + off, size - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

bool read_job(int fd, uint64_t* job) {
  char buf[sizeof(uint64_t)];
  size_t off = 0;
  while (off < sizeof buf) {
    const ssize_t n = ::read(fd, buf + off, sizeof buf - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  std::memcpy(job, buf, sizeof buf);
  return true;
}

[[noreturn]] void worker_child(int fd, const WorkerFn& fn) {
  uint64_t job = 0;
  while (read_job(fd, &job)) {
    std::string line;
    try {
      line = run_result_to_json(fn(static_cast<size_t>(job))) + "\n";
    } catch (const std::exception& e) {
      RunResult r;
      r.error = std::string("exception: ") + e.what();
      line = run_result_to_json(r) + "\n";
    }
    if (!write_all(fd, line.data(), line.size())) break;
  }
  ::_exit(0);
}

Running start_worker(const WorkerFn& fn) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return {};
  std::fflush(nullptr);  // the child must not re-flush the parent's buffered output
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    worker_child(fds[1], fn);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return {};
  }
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  Running w;
  w.pid = pid;
  w.fd = fds[0];
  return w;
}

// Hands `job` to an idle worker. False if the worker is gone (its socket is closed).
bool assign(Running& w, size_t job) {
  const uint64_t index = job;
  char buf[sizeof index];
  std::memcpy(buf, &index, sizeof index);
  w.job = job;
  w.started = Clock::now();
  ++w.jobs_started;
  return write_all(w.fd, buf, sizeof buf);
}

// Drains what the worker wrote; true at EOF.
bool drain(Running& w) {
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(w.fd, buf, sizeof buf);
    if (n > 0) {
      w.output.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return true;
    return errno != EAGAIN && errno != EINTR;
  }
}

// Whether the worker has exited (reaps it, keeping its status). Never blocks: a worker that
// closed its pipe but does not exit must still meet the timeout (a blocking waitpid after EOF hung
// the whole sweep at 0% CPU, outside --timeout-s).
bool reap(Running& w) {
  if (w.reaped) return true;
  pid_t r;
  while ((r = ::waitpid(w.pid, &w.status, WNOHANG)) < 0 && errno == EINTR) {}
  w.reaped = r == w.pid || r < 0;
  return w.reaped;
}

// Kills (when still running) and reaps a worker, closing its socket.
void stop(Running& w, bool kill) {
  if (kill && !w.reaped) ::kill(w.pid, SIGKILL);
  if (!kill) ::shutdown(w.fd, SHUT_WR);  // EOF on its job stream: it exits
  while (!w.reaped && ::waitpid(w.pid, &w.status, 0) < 0 && errno == EINTR) {}
  w.reaped = true;
  ::close(w.fd);
}

// The outcome of the worker's current job when the worker ended without answering it.
WorkerOutcome failed_job(Running& w, bool timed_out, absl::Duration timeout) {
  WorkerOutcome out;
  out.job = w.job;
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - w.started).count();
  const int status = w.status;
  if (timed_out) {
    char msg[96];
    std::snprintf(msg, sizeof msg, "timeout: no verdict after %.1f wall s (worker killed)",
                  absl::ToDoubleSeconds(timeout));
    out.result.error = msg;
  } else if (WIFSIGNALED(status)) {
    out.result.error = std::string("crash: worker killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                       strsignal(WTERMSIG(status)) + ")";
  } else {
    out.result.error = "crash: worker exited with status " +
                       std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + " without a result";
  }
  out.result.wall_seconds = out.wall_seconds;
  return out;
}

// The outcome of a job the worker answered (its line), or nullopt while no full line is there.
std::optional<WorkerOutcome> answered_job(Running& w) {
  const size_t nl = w.output.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  WorkerOutcome out;
  out.job = w.job;
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - w.started).count();
  std::optional<RunResult> parsed = run_result_from_json(w.output.substr(0, nl));
  w.output.erase(0, nl + 1);
  if (parsed) {
    out.result = std::move(*parsed);
    out.completed = true;
  } else {
    out.result.error = "crash: worker answered without a result";
    out.result.wall_seconds = out.wall_seconds;
  }
  w.job = kNoJob;
  return out;
}

reports::AssertionRecord to_assertion(const Verdict& v) {
  return reports::AssertionRecord{v.property,
                                  v.invariants,
                                  v.passed,
                                  v.assertion,
                                  v.checks,
                                  v.evidence,
                                  v.exempted(),
                                  1,
                                  v.status() == VerdictStatus::kVacuous ? 1 : 0};
}

}  // namespace

bool parse_shard(const std::string& text, int* index, int* count) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 >= text.size()) return false;
  char* end = nullptr;
  const long i = std::strtol(text.c_str(), &end, 10);
  if (end != text.c_str() + slash) return false;
  const long n = std::strtol(text.c_str() + slash + 1, &end, 10);
  if (*end != '\0' || n < 1 || n > 1000000 || i < 0 || i >= n) return false;
  *index = static_cast<int>(i);
  *count = static_cast<int>(n);
  return true;
}

std::vector<uint64_t> shard_seeds(uint64_t first, uint64_t count, int shard_index, int shard_count) {
  std::vector<uint64_t> out;
  for (uint64_t k = static_cast<uint64_t>(shard_index); k < count; k += static_cast<uint64_t>(shard_count)) {
    out.push_back(first + k);
  }
  return out;
}

std::vector<WorkerOutcome> run_in_workers(size_t jobs, const WorkerFn& fn, int parallel, absl::Duration timeout,
                                          const ProgressFn& progress) {
  std::vector<WorkerOutcome> results(jobs);
  std::vector<Running> workers;
  size_t next = 0, finished = 0;
  parallel = std::max(1, parallel);
  auto report = [&](WorkerOutcome out) {
    const size_t job = out.job;
    results[job] = std::move(out);
    ++finished;
    if (progress) progress(results[job], finished, jobs);
  };
  while (finished < jobs) {
    // Every idle worker gets the next job; workers are started while jobs wait for one.
    for (Running& w : workers) {
      if (w.job != kNoJob || w.eof || next >= jobs || w.jobs_started >= kJobsPerWorker) continue;
      assign(w, next++);  // a worker gone meanwhile shows as EOF below: that job is its failure
    }
    while (next < jobs && static_cast<int>(workers.size()) < parallel) {
      Running w = start_worker(fn);
      if (w.pid < 0) {  // fork failed: that job fails, the sweep goes on
        WorkerOutcome out;
        out.job = next++;
        out.result.error = std::string("crash: cannot start worker: ") + strerror(errno);
        report(std::move(out));
        continue;
      }
      assign(w, next++);
      workers.push_back(std::move(w));
    }
    if (workers.empty()) continue;
    std::vector<pollfd> fds;
    for (const Running& w : workers) fds.push_back(pollfd{w.fd, POLLIN, 0});
    ::poll(fds.data(), fds.size(), 50);
    for (size_t i = 0; i < workers.size();) {
      Running& w = workers[i];
      if (!w.eof) w.eof = drain(w);
      if (w.job != kNoJob) {
        if (std::optional<WorkerOutcome> out = answered_job(w)) report(std::move(*out));
      }
      const bool idle = w.job == kNoJob;
      const bool retire = idle && (w.eof || w.jobs_started >= kJobsPerWorker || next >= jobs);
      const bool gone = w.eof && reap(w);
      const bool late = !idle && absl::FromChrono(Clock::now() - w.started) > timeout;
      if (!retire && !gone && !late) {
        ++i;
        continue;
      }
      if (idle) {
        stop(w, /*kill=*/false);
      } else {
        stop(w, /*kill=*/!gone);
        report(failed_job(w, !gone, timeout));
      }
      workers.erase(workers.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  for (Running& w : workers) stop(w, /*kill=*/false);
  return results;
}

RunResult run_isolated(const Scenario& s, uint64_t seed, const RunOptions& options, absl::Duration timeout) {
  std::vector<WorkerOutcome> out = run_in_workers(
      1, [&](size_t) { return run_scenario(s, seed, options); }, 1, timeout);
  RunResult r = std::move(out[0].result);
  if (!out[0].completed) {
    r.seed = seed;
    r.scenario = s.name;
    r.system = s.system;
    r.variant = s.variant;
  }
  return r;
}

// One line of the worker protocol: the same members, in the same order, as always.
std::string run_result_to_json(const RunResult& r) {
  using reports::Json;
  Json verdicts = Json::array();
  for (const Verdict& v : r.verdicts) {
    Json exemptions = Json::array();
    for (const auto& [reason, count] : v.exemptions) exemptions.push_back(Json{{"reason", reason}, {"count", count}});
    const size_t evidence = std::min<size_t>(v.evidence.size(), 50);
    verdicts.push_back(Json{{"property", v.property},
                            {"invariants", v.invariants},
                            {"passed", v.passed},
                            {"assertion", v.assertion},
                            {"checks", v.checks},
                            {"evidence", std::vector<std::string>(v.evidence.begin(), v.evidence.begin() + evidence)},
                            {"exemptions", std::move(exemptions)}});
  }
  Json faults = Json::array();
  for (const FaultSpec& f : r.applied_faults) {
    faults.push_back(Json{{"at_ms", f.at_ms},
                          {"kind", f.kind},
                          {"target", f.target},
                          {"duration_ms", f.duration_ms},
                          {"value", f.value}});
  }
  Json meanwhile = Json::array();
  for (const ListedEffect& e : r.meanwhile) {
    meanwhile.push_back(Json{{"process", e.process}, {"text", e.text}, {"index", e.index}});
  }
  const Json j{{"scenario", r.scenario},
               {"system", r.system},
               {"variant", r.variant},
               {"seed", r.seed},
               {"config_digest", r.config_digest},
               {"fingerprint", r.fingerprint},
               {"events", r.events},
               {"simulated_us", r.simulated_us},
               {"wall_seconds", reports::json_double(r.wall_seconds)},
               {"all_passed", r.all_passed},
               {"as_expected", r.as_expected},
               {"replay_command", r.replay_command},
               {"error", r.error},
               {"verdicts", std::move(verdicts)},
               {"further_findings", r.further_findings},
               {"vacuous", r.vacuous},
               {"coverage", r.coverage},
               {"behaviours", r.behaviours},
               {"applied_faults", std::move(faults)},
               {"meanwhile", std::move(meanwhile)}};
  return reports::json_dump(j);
}

std::optional<RunResult> run_result_from_json(const std::string& line) {
  using namespace reports;
  std::optional<Json> j = parse_json(line);
  if (!j || !j->is_object() || !json_get(*j, "verdicts")) return std::nullopt;
  RunResult r;
  r.scenario = json_str(*j, "scenario");
  r.system = json_str(*j, "system");
  r.variant = json_str(*j, "variant");
  r.seed = json_u64(*j, "seed");
  r.config_digest = json_u64(*j, "config_digest");
  r.fingerprint = json_u64(*j, "fingerprint");
  r.events = json_u64(*j, "events");
  r.simulated_us = json_i64(*j, "simulated_us");
  r.wall_seconds = json_num(*j, "wall_seconds");
  r.all_passed = json_flag(*j, "all_passed");
  r.as_expected = json_flag(*j, "as_expected");
  r.replay_command = json_str(*j, "replay_command");
  r.error = json_str(*j, "error");
  for (const Json& v : json_items(*j, "verdicts")) {
    Verdict verdict{json_str(v, "property"),
                    json_strings(v, "invariants"),
                    json_flag(v, "passed"),
                    json_str(v, "assertion"),
                    json_strings(v, "evidence"),
                    json_i64(v, "checks"),
                    {}};
    for (const Json& e : json_items(v, "exemptions")) verdict.exempt(json_str(e, "reason"), json_i64(e, "count"));
    r.verdicts.push_back(std::move(verdict));
  }
  r.further_findings = json_strings(*j, "further_findings");
  r.vacuous = json_strings(*j, "vacuous");
  for (const Json& c : json_items(*j, "coverage")) r.coverage.push_back(c.is_number_unsigned() ? c.get<uint64_t>() : 0);
  r.behaviours = json_strings(*j, "behaviours");
  for (const Json& f : json_items(*j, "applied_faults")) {
    r.applied_faults.push_back(FaultSpec{json_i64(f, "at_ms"), json_str(f, "kind"), json_str(f, "target"),
                                         json_i64(f, "duration_ms"), json_i64(f, "value")});
  }
  for (const Json& e : json_items(*j, "meanwhile")) {
    r.meanwhile.push_back(ListedEffect{json_str(e, "process"), json_str(e, "text"), json_u64(e, "index")});
  }
  return r;
}

std::vector<std::string> failed_properties(const RunResult& r) {
  std::vector<std::string> out;
  if (!r.error.empty()) out.push_back("<error>");
  for (const Verdict& v : r.verdicts) {
    if (!v.passed) out.push_back(v.property);
  }
  return out;
}

reports::RunRecord make_run_record(const Scenario& s, const std::vector<WorkerOutcome>& runs, const std::string& now,
                                   const std::string& commit) {
  reports::RunRecord rec;
  rec.scenario = s.name;
  rec.scenario_file = s.source_file;
  rec.system = s.system;
  rec.variant = s.variant;
  rec.matrix_rows = s.matrix_rows;
  rec.expected_pass = s.expect.pass;
  rec.expected_failing = s.expect.failing;
  rec.expected_any = s.expect.any;
  rec.config_digest = scenario_digest(s);
  rec.produced_at = now;
  rec.commit = commit;
  std::map<std::string, size_t> index;  // property -> position in rec.assertions
  for (const WorkerOutcome& w : runs) {
    const RunResult& r = w.result;
    rec.seeds.push_back(r.seed);
    rec.simulated_us += r.simulated_us;
    rec.wall_seconds += r.wall_seconds;
    const bool failed = !r.error.empty() || !r.all_passed;
    if (failed) {
      if (rec.failing_seeds.empty()) rec.fingerprint = r.fingerprint;
      rec.failing_seeds.push_back(r.seed);
    }
    if (rec.seeds.size() == 1 && !failed) rec.fingerprint = r.fingerprint;
    for (const std::string& b : r.behaviours) ++rec.behaviour_seeds[b];
    if (!r.error.empty()) {
      ++rec.failures_per_property["<error>"];
      if (rec.error.empty()) rec.error = "seed " + std::to_string(r.seed) + ": " + r.error;
    }
    for (const Verdict& v : r.verdicts) {
      auto [it, fresh] = index.emplace(v.property, rec.assertions.size());
      if (fresh) {
        rec.assertions.push_back(to_assertion(v));
      } else {
        reports::AssertionRecord& a = rec.assertions[it->second];
        if (a.passed && !v.passed) a.evidence = v.evidence;
        a.add_seed(v.checks, v.exempted(), v.passed);
      }
      if (!v.passed) ++rec.failures_per_property[v.property];
    }
  }
  return rec;
}

std::vector<reports::TimelineEvent> timeline_from_trace_file(const std::string& path, size_t max_events) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return reports::select_timeline(reports::parse_trace_jsonl(text.str()), max_events);
}

reports::Report new_report() {
  reports::Report rep;
  rep.produced_at = utc_now_iso8601();
  rep.commit = build_commit();
  rep.rows = all_matrix_rows();
  return rep;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace fl
