#include "harness/scenario_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/faults.h"
#include "harness/matrix_rows.h"
#include "sim/hash.h"
#include "sim/redis/eviction_policies.h"

namespace fl {
namespace {

constexpr int64_t kDayMs = 86'400'000;
constexpr size_t kMaxPausePoints = 8;  // a pause pair names two; a few more are allowed

std::string quoted_list(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const char* type_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    default:
      return "nothing";
  }
}

// Reads one YAML document into a Scenario, collecting diagnostics. Every read checks the node's
// type first, so yaml-cpp never throws from here (conversions are done by hand).
class Loader {
 public:
  Loader(std::string file, const LoadOptions& options) : file_(std::move(file)), options_(options) {}

  std::vector<Diagnostic>& errors() { return errors_; }

  void load(const YAML::Node& root, Scenario& s) {
    if (!root.IsMap()) {
      error(root, std::string("a scenario file must be a mapping, got ") + type_name(root),
            "start with 'name:', 'system:' and 'variant:'");
      return;
    }
    check_keys(
        root,
        {"name",    "description", "system",       "variant",     "topology",    "workload",          "network",
         "storage", "faults",      "extra_faults", "swarm",       "duration_ms", "quiescent_tail_ms", "properties",
         "expect",  "matrix_rows", "params",       "crash_point", "pause_point", "fail_point",        "without",
         "seed"});
    require(root, "name");
    require(root, "system");
    read_string(root, "name", s.name);
    if (root["name"] && root["name"].IsScalar() && s.name.empty()) { error(root["name"], "name must not be empty"); }
    read_string(root, "description", s.description);
    read_string(root, "system", s.system);
    read_string(root, "variant", s.variant);
    if (root["topology"]) read_topology(root["topology"], s.topology);
    if (root["workload"]) read_workload(root["workload"], s.workload);
    if (root["network"]) read_network(root["network"], s.network);
    if (root["storage"]) read_storage(root["storage"], s.storage);
    read_int(root, "duration_ms", s.duration_ms, 1, kDayMs);
    read_int(root, "quiescent_tail_ms", s.quiescent_tail_ms, 0, kDayMs);
    if (root["faults"]) read_faults(root["faults"], s.duration_ms, s.faults);
    if (root["extra_faults"]) read_faults(root["extra_faults"], s.duration_ms, s.extra_faults);
    if (root["swarm"]) read_swarm(root["swarm"], s.swarm);
    read_string_list(root, "properties", s.properties);
    if (root["expect"]) read_expect(root["expect"], s.expect);
    read_string_list(root, "matrix_rows", s.matrix_rows);
    read_string_map(root, "params", s.params);
    if (root["crash_point"]) read_crash_point(root["crash_point"], s);
    if (root["pause_point"]) read_pause_point(root["pause_point"], s);
    if (root["fail_point"]) read_fail_point(root["fail_point"], s);
    read_string_list(root, "without", s.without);
    if (root["seed"]) {
      uint64_t seed = 0;
      if (read_u64(root["seed"], seed)) s.seed = seed;
    }
    validate_names(root, s);
    validate_at_least_once(root, s);
  }

 private:
  // ---------------------------------------------------------------- diagnostics
  void error(const YAML::Node& at, std::string message, std::string hint = "") {
    const YAML::Mark m = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
    error_at(m, std::move(message), std::move(hint));
  }
  void error_at(const YAML::Mark& m, std::string message, std::string hint = "") {
    Diagnostic d;
    d.file = file_;
    d.line = m.is_null() ? 0 : m.line + 1;
    d.column = m.is_null() ? 0 : m.column + 1;
    d.message = std::move(message);
    d.hint = std::move(hint);
    errors_.push_back(std::move(d));
  }
  static std::string did_you_mean(const std::string& word, const std::vector<std::string>& valid) {
    const std::string best = reports::closest_match(word, valid);
    if (!best.empty()) return "did you mean '" + best + "'?";
    if (valid.size() <= 12) return "expected one of: " + quoted_list(valid);
    return "";
  }

  // ---------------------------------------------------------------- structure
  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) {
        error(key, std::string("a key must be a plain name, got ") + type_name(key));
        continue;
      }
      const std::string& k = key.Scalar();
      if (!seen.insert(k).second) error(key, "duplicate key '" + k + "'");
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
        error(key, "unknown key '" + k + "'", did_you_mean(k, allowed));
      }
    }
  }
  void require(const YAML::Node& map, const char* key) {
    if (!map[key]) error(map, std::string("missing required key '") + key + "'");
  }
  bool expect_map(const YAML::Node& n, const char* what) {
    if (n.IsMap()) return true;
    error(n, std::string(what) + " must be a mapping, got " + type_name(n));
    return false;
  }
  bool expect_scalar(const YAML::Node& n, const char* what) {
    if (n.IsScalar()) return true;
    error(n, std::string(what) + " must be a scalar, got " + type_name(n));
    return false;
  }

  // ---------------------------------------------------------------- scalars
  bool parse_i64(const YAML::Node& n, int64_t& out) {
    if (!expect_scalar(n, "this value")) return false;
    const std::string& t = n.Scalar();
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    if (ec == std::errc() && p == t.data() + t.size() && !t.empty()) return true;
    error(n, "expected an integer, got '" + t + "'",
          ec == std::errc::result_out_of_range ? "the value does not fit in 64 bits" : "");
    return false;
  }
  bool read_u64(const YAML::Node& n, uint64_t& out) {
    if (!expect_scalar(n, "seed")) return false;
    const std::string& t = n.Scalar();
    const bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
    const char* b = t.data() + (hex ? 2 : 0);
    auto [p, ec] = std::from_chars(b, t.data() + t.size(), out, hex ? 16 : 10);
    if (ec == std::errc() && p == t.data() + t.size() && b != p) return true;
    error(n, "expected an unsigned 64-bit integer, got '" + t + "'");
    return false;
  }
  void read_int(const YAML::Node& map, const char* key, int64_t& out, int64_t lo, int64_t hi) {
    const YAML::Node n = map[key];
    if (!n) return;
    int64_t v = 0;
    if (!parse_i64(n, v)) return;
    if (v < lo || v > hi) {
      error(n, std::string(key) + " = " + std::to_string(v) + " is out of range",
            "expected " + std::to_string(lo) + " <= " + key + " <= " + std::to_string(hi));
      return;
    }
    out = v;
  }
  void read_int(const YAML::Node& map, const char* key, int& out, int lo, int hi) {
    int64_t v = out;
    read_int(map, key, v, lo, hi);
    out = static_cast<int>(v);
  }
  void read_double(const YAML::Node& map, const char* key, double& out, double lo, double hi) {
    const YAML::Node n = map[key];
    if (!n || !expect_scalar(n, key)) return;
    const std::string& t = n.Scalar();
    double v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size() || t.empty() || !std::isfinite(v)) {
      error(n, std::string("expected a number for ") + key + ", got '" + t + "'");
      return;
    }
    if (v < lo || v > hi) {
      std::ostringstream range;
      range << "expected " << lo << " <= " << key << " <= " << hi;
      error(n, std::string(key) + " = " + t + " is out of range", range.str());
      return;
    }
    out = v;
  }
  void read_bool(const YAML::Node& map, const char* key, bool& out) {
    const YAML::Node n = map[key];
    if (!n || !expect_scalar(n, key)) return;
    const std::string t = lower(n.Scalar());
    if (t == "true" || t == "yes" || t == "on")
      out = true;
    else if (t == "false" || t == "no" || t == "off")
      out = false;
    else
      error(n, std::string("expected true or false for ") + key + ", got '" + n.Scalar() + "'");
  }
  bool as_string(const YAML::Node& n, const char* what, std::string& out) {
    if (!n.IsScalar()) {
      error(n, std::string(what) + " must be a string, got " + type_name(n));
      return false;
    }
    out = n.Scalar();
    return true;
  }
  void read_string(const YAML::Node& map, const char* key, std::string& out,
                   const std::vector<std::string>* allowed = nullptr) {
    const YAML::Node n = map[key];
    if (!n) return;
    std::string v;
    if (!as_string(n, key, v)) return;
    if (allowed && std::find(allowed->begin(), allowed->end(), v) == allowed->end()) {
      error(n, std::string("unknown ") + key + " '" + v + "'", did_you_mean(v, *allowed));
      return;
    }
    out = v;
  }
  void read_string_list(const YAML::Node& map, const char* key, std::vector<std::string>& out) {
    const YAML::Node n = map[key];
    if (!n) return;
    if (!n.IsSequence()) {
      error(n, std::string(key) + " must be a list, got " + type_name(n), "write [a, b] or '- a'");
      return;
    }
    out.clear();
    for (const YAML::Node& item : n) {
      std::string v;
      if (as_string(item, key, v)) out.push_back(v);
    }
  }
  void read_string_map(const YAML::Node& map, const char* key, std::map<std::string, std::string>& out) {
    const YAML::Node n = map[key];
    if (!n || !expect_map(n, key)) return;
    std::set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string k, v;
      if (!as_string(it->first, "a param name", k) || !as_string(it->second, k.c_str(), v)) continue;
      if (!seen.insert(k).second) error(it->first, "duplicate key '" + k + "'");
      out[k] = v;
    }
  }

  // ---------------------------------------------------------------- sections
  void read_topology(const YAML::Node& n, Topology& t) {
    if (!expect_map(n, "topology")) return;
    check_keys(n, {"replicas", "workers", "clients", "redis"});
    read_int(n, "replicas", t.replicas, 1, 64);
    read_int(n, "workers", t.workers, 0, 64);
    read_int(n, "clients", t.clients, 0, 100000);
    const YAML::Node r = n["redis"];
    if (!r || !expect_map(r, "topology.redis")) return;
    check_keys(r, {"persistence", "snapshot_interval_ms", "maxmemory_bytes", "maxmemory_policy", "maxmemory_samples"});
    static const std::vector<std::string> kPersistence = {"none", "aof-everysec", "snapshot"};
    read_string(r, "persistence", t.redis.persistence, &kPersistence);
    read_int(r, "snapshot_interval_ms", t.redis.snapshot_interval_ms, 1, kDayMs);
    read_redis_memory(r, t.redis);
  }
  // maxmemory as Redis 7.0 takes it (CONFIG SET maxmemory, maxmemory-policy, maxmemory-samples).
  void read_redis_memory(const YAML::Node& r, RedisSettings& redis) {
    read_int(r, "maxmemory_bytes", redis.maxmemory_bytes, 0, int64_t{1} << 40);
    read_string(r, "maxmemory_policy", redis.maxmemory_policy, &sim::redis::eviction_policies());
    read_int(r, "maxmemory_samples", redis.maxmemory_samples, 1, 64);
    if (redis.maxmemory_bytes == 0 && redis.maxmemory_policy != "noeviction") {
      error(r["maxmemory_policy"],
            "an eviction policy without maxmemory_bytes does nothing (Redis evicts only above maxmemory)",
            "set topology.redis.maxmemory_bytes (the simulated Redis uses about 880000 bytes with no key)");
    }
  }
  void read_workload(const YAML::Node& n, std::vector<WorkloadSpec>& out) {
    if (!n.IsSequence()) {
      error(n, std::string("workload must be a list of generators, got ") + type_name(n),
            "write '- kind: <generator>' items");
      return;
    }
    for (const YAML::Node& g : n) {
      if (!expect_map(g, "a workload generator")) continue;
      check_keys(g, {"kind", "rate_per_s", "distribution", "params"});
      require(g, "kind");
      WorkloadSpec w;
      read_string(g, "kind", w.kind);
      read_double(g, "rate_per_s", w.rate_per_s, 0, 1e6);
      read_string(g, "distribution", w.distribution, &known_distributions());
      read_string_map(g, "params", w.params);
      workload_nodes_.push_back(g);
      out.push_back(std::move(w));
    }
  }
  void read_network(const YAML::Node& n, LinkSettings& l) {
    if (!expect_map(n, "network")) return;
    check_keys(n, {"latency_min_us", "latency_mean_us", "drop_probability", "duplicate_probability",
                   "reorder_probability", "fifo", "at_least_once"});
    read_int(n, "latency_min_us", l.latency_min_us, 0, 60'000'000);
    read_double(n, "latency_mean_us", l.latency_mean_us, 0, 60'000'000);
    read_double(n, "drop_probability", l.drop_probability, 0, 1);
    read_double(n, "duplicate_probability", l.duplicate_probability, 0, 1);
    read_double(n, "reorder_probability", l.reorder_probability, 0, 1);
    read_bool(n, "fifo", l.fifo);
    read_bool(n, "at_least_once", l.at_least_once);
  }
  void read_storage(const YAML::Node& n, StorageSettings& st) {
    if (!expect_map(n, "storage")) return;
    check_keys(n, {"journal_mode", "synchronous", "torn_writes", "io_error_probability", "sync_latency_us",
                   "volatile_write_cache", "write_cache_flush_ms"});
    static const std::vector<std::string> kJournal = {"delete", "truncate", "wal", "memory"};
    static const std::vector<std::string> kSync = {"off", "normal", "full"};
    read_string(n, "journal_mode", st.journal_mode, &kJournal);
    read_string(n, "synchronous", st.synchronous, &kSync);
    read_bool(n, "torn_writes", st.torn_writes);
    read_double(n, "io_error_probability", st.io_error_probability, 0, 1);
    read_int(n, "sync_latency_us", st.sync_latency_us, 0, 10'000'000);
    read_bool(n, "volatile_write_cache", st.volatile_write_cache);
    read_int(n, "write_cache_flush_ms", st.write_cache_flush_ms, 1, 600'000);
  }
  void read_faults(const YAML::Node& n, int64_t duration_ms, std::vector<FaultSpec>& out) {
    if (!n.IsSequence()) {
      error(n, std::string("faults must be a list, got ") + type_name(n),
            "write '- {at_ms: 5000, kind: crash, target: replica-0}' items");
      return;
    }
    for (const YAML::Node& f : n) {
      if (!expect_map(f, "a fault")) continue;
      check_keys(f, {"at_ms", "kind", "target", "duration_ms", "value"});
      require(f, "at_ms");
      require(f, "kind");
      FaultSpec spec;
      read_int(f, "at_ms", spec.at_ms, 0, kDayMs);
      read_string(f, "kind", spec.kind, &known_fault_kinds());
      read_string(f, "target", spec.target);
      read_int(f, "duration_ms", spec.duration_ms, 0, kDayMs);
      read_int(f, "value", spec.value, -kDayMs, kDayMs);
      check_fault(f, spec, duration_ms);
      out.push_back(std::move(spec));
    }
  }
  void check_fault(const YAML::Node& f, const FaultSpec& spec, int64_t duration_ms) {
    if (spec.target.empty() && spec.kind != "heal" && !spec.kind.empty()) {
      error(f, "fault '" + spec.kind + "' needs a target", "name a process, a node, or a link 'a|b'");
    }
    static const std::set<std::string> kTimed = {"pause",          "partition",     "partition-oneway", "clog",
                                                 "late-duplicate", "crash-restart", "pause-at-boundary"};
    if (spec.kind == "pause-at-boundary" && spec.value != 0 && spec.value != 1) {
      error(f, "fault 'pause-at-boundary' takes value 0 (before its next call) or 1 (after that call's reply)");
    }
    // A pause written with `duration_ms: 0` holds nothing: the null pause of `faultline null-faults`.
    const bool null_pause = spec.kind == "pause" && f["duration_ms"] && spec.duration_ms == 0;
    if (kTimed.count(spec.kind) && spec.duration_ms <= 0 && !null_pause) {
      error(f, "fault '" + spec.kind + "' needs duration_ms > 0");
    }
    if (f["at_ms"] && spec.at_ms > duration_ms) {
      error(f["at_ms"],
            "fault at_ms = " + std::to_string(spec.at_ms) +
                " is after the end of the active phase (duration_ms = " + std::to_string(duration_ms) + ")",
            "faults belong to the active phase; the quiescent tail heals everything");
    }
  }
  void read_swarm(const YAML::Node& n, SwarmSpec& sw) {
    if (!expect_map(n, "swarm")) return;
    check_keys(n, {"enabled", "kinds", "faults_per_s", "max_pause_ms", "max_clock_jump_ms", "max_downtime_ms",
                   "timing_aware", "patience"});
    sw.enabled = true;  // a swarm section switches it on unless it says otherwise
    read_bool(n, "enabled", sw.enabled);
    read_string_list(n, "kinds", sw.kinds);
    if (const YAML::Node kinds = n["kinds"]; kinds && kinds.IsSequence()) {
      for (const YAML::Node& k : kinds) {
        if (!k.IsScalar()) continue;
        const std::vector<std::string> valid = accepted_swarm_fault_kinds();
        if (std::find(valid.begin(), valid.end(), k.Scalar()) == valid.end()) {
          error(k, "unknown swarm fault kind '" + k.Scalar() + "'", did_you_mean(k.Scalar(), valid));
        }
      }
    }
    read_double(n, "faults_per_s", sw.faults_per_s, 0, 1000);
    read_int(n, "max_pause_ms", sw.max_pause_ms, 0, 3'600'000);
    read_int(n, "max_clock_jump_ms", sw.max_clock_jump_ms, 0, 3'600'000);
    read_int(n, "max_downtime_ms", sw.max_downtime_ms, 0, 3'600'000);
    read_bool(n, "timing_aware", sw.timing_aware);
    read_bool(n, "patience", sw.patience);
  }
  void read_expect(const YAML::Node& n, Expectation& e) {
    expect_node_.reset(n);
    if (n.IsScalar()) {
      const std::string v = n.Scalar();
      if (v == "pass")
        e = Expectation{};
      else if (v == "fail")
        error(n, "a failing expectation names the properties that must fail",
              "write {verdict: fail, properties: [NAME, ...]}");
      else
        error(n, "expect must be 'pass' or {verdict: fail, properties: [NAME, ...]}, got '" + v + "'",
              did_you_mean(v, {"pass", "fail"}));
      return;
    }
    if (!expect_map(n, "expect")) return;
    check_keys(n, {"verdict", "property", "properties", "match", "fingerprint"});
    require(n, "verdict");
    std::string verdict = "pass";
    static const std::vector<std::string> kVerdicts = {"pass", "fail"};
    read_string(n, "verdict", verdict, &kVerdicts);
    e.pass = verdict == "pass";
    std::string one;
    read_string(n, "property", one);
    if (!one.empty()) e.failing.push_back(one);
    std::vector<std::string> many;
    read_string_list(n, "properties", many);
    e.failing.insert(e.failing.end(), many.begin(), many.end());
    std::string match = "all";
    static const std::vector<std::string> kMatch = {"all", "any"};
    read_string(n, "match", match, &kMatch);
    e.any = match == "any";
    if (const YAML::Node fp = n["fingerprint"]) {
      uint64_t v = 0;
      if (read_u64(fp, v)) e.fingerprint = v;
    }
    if (e.pass && !e.failing.empty()) {
      error(n["property"] ? n["property"] : n["properties"],
            "expect names failing properties but the verdict is 'pass'");
    }
    if (!e.pass && e.failing.empty()) {
      error(n, "a failing expectation names the properties that must fail",
            "add 'properties: [NAME, ...]' (any other failure is reported as a further finding)");
    }
  }

  void read_crash_point(const YAML::Node& n, Scenario& s) {
    if (!expect_map(n, "crash_point")) return;
    check_keys(n, {"effect", "when", "restart_after_ms"});
    require(n, "effect");
    CrashPointSpec c;
    read_int(n, "effect", c.effect, 0, int64_t{1} << 40);
    std::string when = "after";
    static const std::vector<std::string> kWhen = {"before", "after"};
    read_string(n, "when", when, &kWhen);
    c.before = when == "before";
    read_int(n, "restart_after_ms", c.restart_after_ms, 0, kDayMs);
    s.crash_point = c;
  }

  // `pause_point:` one mapping, or a list of them (a pause pair: each fires at its own effect).
  void read_pause_point(const YAML::Node& n, Scenario& s) {
    if (n.IsSequence()) {
      if (n.size() == 0 || n.size() > kMaxPausePoints) {
        error(n, "pause_point takes one mapping or a list of 1 to " + std::to_string(kMaxPausePoints) + " of them");
        return;
      }
      for (const YAML::Node& one : n) read_one_pause_point(one, s);
      return;
    }
    read_one_pause_point(n, s);
  }

  void read_one_pause_point(const YAML::Node& n, Scenario& s) {
    if (!expect_map(n, "pause_point")) return;
    check_keys(n, {"effect", "when", "duration_ms"});
    require(n, "effect");
    require(n, "duration_ms");
    PausePointSpec p;
    read_int(n, "effect", p.effect, 0, int64_t{1} << 40);
    std::string when = "after";
    static const std::vector<std::string> kWhen = {"before", "after"};
    read_string(n, "when", when, &kWhen);
    p.before = when == "before";
    read_int(n, "duration_ms", p.duration_ms, 1, kDayMs);
    s.pause_points.push_back(p);
  }

  void read_fail_point(const YAML::Node& n, Scenario& s) {
    if (!expect_map(n, "fail_point")) return;
    check_keys(n, {"effect", "when"});
    require(n, "effect");
    require(n, "when");
    FailPointSpec p;
    read_int(n, "effect", p.effect, 0, int64_t{1} << 40);
    std::string when;
    static const std::vector<std::string> kWhen = {"before", "after"};
    read_string(n, "when", when, &kWhen);
    p.before = when == "before";
    s.fail_point = p;
  }

  // ---------------------------------------------------------------- names
  const SystemUnderTest* find(const std::string& name) const {
    for (const SystemUnderTest* s : systems()) {
      if (s->name() == name) return s;
    }
    return nullptr;
  }
  const std::vector<const SystemUnderTest*>& systems() const {
    return options_.systems ? *options_.systems : all_systems();
  }
  void validate_names(const YAML::Node& root, Scenario& s) {
    validate_matrix_rows(root, s);
    if (s.system.empty() || !root["system"] || !root["system"].IsScalar()) return;
    const SystemUnderTest* sys = find(s.system);
    if (!sys) {
      std::vector<std::string> names;
      for (const SystemUnderTest* x : systems()) names.push_back(x->name());
      error(root["system"], "unknown system '" + s.system + "'", did_you_mean(s.system, names));
      return;
    }
    const std::vector<std::string> variants = sys->variants();
    if (std::find(variants.begin(), variants.end(), s.variant) == variants.end()) {
      error(root["variant"] ? root["variant"] : root, "system '" + s.system + "' has no variant '" + s.variant + "'",
            did_you_mean(s.variant, variants));
    }
    std::vector<std::string> props;
    for (const PropertyInfo& p : sys->properties()) props.push_back(p.name);
    check_names(root["properties"], props, "property", s.system);
    validate_expectation(s, props);
    validate_without(root, s, *sys);
    const std::vector<std::string> kinds = sys->workload_kinds();
    const std::vector<ParamInfo> declared = sys->params();
    for (const YAML::Node& g : workload_nodes_) {
      if (g["kind"] && g["kind"].IsScalar()) check_one(g["kind"], kinds, "workload kind", s.system);
      check_params(g["params"], declared, s.system);
    }
    check_params(root["params"], declared, s.system);
    if (!errors_.empty()) return;
    try {
      s.config = resolve_params(declared, s);  // typed, for build() and critical_durations()
    } catch (const std::exception& e) {
      error(root["params"] ? root["params"] : root, e.what());
      return;
    }
    validate_quiet_tail(root, s, *sys);  // the system's minimum may depend on its params
  }
  // Late duplicates exist only where the scenario declares an at-least-once transport.
  void validate_at_least_once(const YAML::Node& root, const Scenario& s) {
    if (s.network.at_least_once) return;
    const auto& kinds = at_least_once_fault_kinds();
    auto late = [&](const std::string& k) { return std::find(kinds.begin(), kinds.end(), k) != kinds.end(); };
    const std::string hint = "declare the transport with 'network: {at_least_once: true}'";
    for (const std::string& k : s.swarm.kinds) {
      if (late(k)) error(root["swarm"], "swarm kind '" + k + "' needs an at-least-once transport", hint);
    }
    for (const FaultSpec& f : s.faults) {
      if (late(f.kind)) error(root["faults"], "fault '" + f.kind + "' needs an at-least-once transport", hint);
    }
    for (const FaultSpec& f : s.extra_faults) {
      if (late(f.kind)) error(root["extra_faults"], "fault '" + f.kind + "' needs an at-least-once transport", hint);
    }
  }
  void validate_expectation(const Scenario& s, const std::vector<std::string>& props) {
    for (const std::string& name : s.expect.failing) {
      if (std::find(props.begin(), props.end(), name) == props.end()) {
        error(expect_node_, "unknown property '" + name + "' for system '" + s.system + "'", did_you_mean(name, props));
      } else if (!s.properties.empty() &&
                 std::find(s.properties.begin(), s.properties.end(), name) == s.properties.end()) {
        error(expect_node_, "expected failing property '" + name + "' is not among the properties checked",
              "add it to 'properties:'");
      }
    }
  }
  void validate_without(const YAML::Node& root, const Scenario& s, const SystemUnderTest& sys) {
    const YAML::Node list = root["without"];
    if (!list || !list.IsSequence() || s.without.empty()) return;
    if (s.variant != "hardened") {
      error(list, "'without' removes fixes from hardened, but the variant is '" + s.variant + "'",
            "use variant: hardened");
      return;
    }
    std::vector<std::string> ids;
    for (const FixInfo& f : sys.fixes()) ids.push_back(f.id);
    std::set<std::string> seen;
    for (const YAML::Node& n : list) {
      if (!n.IsScalar()) continue;
      if (!seen.insert(n.Scalar()).second) error(n, "fix '" + n.Scalar() + "' is named twice");
      check_one(n, ids, "fix", s.system);
    }
  }
  void validate_quiet_tail(const YAML::Node& root, const Scenario& s, const SystemUnderTest& sys) {
    // With drawn patience the tail must suffice for the most patient client the swarm can draw.
    const int64_t min_ms = sys.min_quiet_tail_ms(s.swarm.enabled && s.swarm.patience ? most_patient(s, sys) : s);
    if (s.quiescent_tail_ms >= min_ms) return;
    const YAML::Node n = root["quiescent_tail_ms"];
    error(n ? n : root,
          "quiescent_tail_ms " + std::to_string(s.quiescent_tail_ms) + " is shorter than system '" + s.system +
              "' needs to judge liveness (" + std::to_string(min_ms) + " ms)",
          "set quiescent_tail_ms: " + std::to_string(min_ms) + " or more");
  }
  void check_one(const YAML::Node& n, const std::vector<std::string>& valid, const char* what,
                 const std::string& system) {
    if (std::find(valid.begin(), valid.end(), n.Scalar()) != valid.end()) return;
    error(n, std::string("unknown ") + what + " '" + n.Scalar() + "' for system '" + system + "'",
          did_you_mean(n.Scalar(), valid));
  }
  void check_names(const YAML::Node& list, const std::vector<std::string>& valid, const char* what,
                   const std::string& system) {
    if (!list || !list.IsSequence()) return;
    for (const YAML::Node& n : list) {
      if (n.IsScalar()) check_one(n, valid, what, system);
    }
  }
  // Every param named in `map` is declared by the system, and its value parses and is in range.
  void check_params(const YAML::Node& map, const std::vector<ParamInfo>& declared, const std::string& system) {
    if (!map || !map.IsMap()) return;
    std::vector<std::string> names;
    for (const ParamInfo& p : declared) names.push_back(p.name);
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      auto p = std::find_if(declared.begin(), declared.end(),
                            [&](const ParamInfo& d) { return d.name == it->first.Scalar(); });
      if (p == declared.end()) {
        check_one(it->first, names, "param", system);
        continue;
      }
      if (!it->second.IsScalar()) continue;  // read_string_map reported it
      if (absl::StatusOr<ParamValue> v = parse_param(*p, it->second.Scalar()); !v.ok()) {
        error(it->second, std::string(v.status().message()) + " (system '" + system + "')",
              p->default_value.empty() ? p->description : "default " + p->default_value + ": " + p->description);
      }
    }
  }
  void validate_matrix_rows(const YAML::Node& root, const Scenario& s) {
    const YAML::Node list = root["matrix_rows"];
    if (!options_.validate_matrix_rows || !list || !list.IsSequence()) return;
    // The scenario's own system's rows first: most files name only those, and every other
    // system's matrix is parsed only for an error message.
    const std::vector<reports::MatrixRow>* own = s.system.empty() ? nullptr : matrix_rows_of_system(s.system);
    for (const YAML::Node& n : list) {
      if (!n.IsScalar()) continue;
      if (own && reports::find_matrix_row(*own, n.Scalar())) continue;
      const reports::MatrixRow* row = find_matrix_row(n.Scalar());
      if (!row) {
        std::vector<std::string> ids;
        for (const reports::MatrixRow& r : all_matrix_rows()) ids.push_back(r.id);
        error(n, "unknown matrix row '" + n.Scalar() + "'", did_you_mean(n.Scalar(), ids));
      } else if (!s.system.empty() && row->matrix != s.system) {
        error(n, "matrix row '" + row->id + "' belongs to the " + row->matrix + " matrix, not to system '" + s.system +
                     "'");
      }
    }
  }

  std::string file_;
  const LoadOptions& options_;
  std::vector<Diagnostic> errors_;
  std::vector<YAML::Node> workload_nodes_;
  YAML::Node expect_node_;
};

// ---------------------------------------------------------------- emitting
std::string num(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s = ec == std::errc() ? std::string(buf, p) : "0";
  return s;
}

void emit_string(YAML::Emitter& e, const std::string& s) { e << YAML::DoubleQuoted << s; }

void emit_string_list(YAML::Emitter& e, const std::vector<std::string>& v) {
  e << YAML::Flow << YAML::BeginSeq;
  for (const std::string& s : v) emit_string(e, s);
  e << YAML::EndSeq;
}

void emit_string_map(YAML::Emitter& e, const std::map<std::string, std::string>& m) {
  e << YAML::Flow << YAML::BeginMap;
  for (const auto& [k, v] : m) {
    e << YAML::Key;
    emit_string(e, k);
    e << YAML::Value;
    emit_string(e, v);
  }
  e << YAML::EndMap;
}

void emit_topology(YAML::Emitter& e, const Topology& t) {
  e << YAML::Key << "topology" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "replicas" << YAML::Value << t.replicas;
  e << YAML::Key << "workers" << YAML::Value << t.workers;
  e << YAML::Key << "clients" << YAML::Value << t.clients;
  e << YAML::Key << "redis" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "persistence" << YAML::Value;
  emit_string(e, t.redis.persistence);
  e << YAML::Key << "snapshot_interval_ms" << YAML::Value << t.redis.snapshot_interval_ms;
  // Written only when set, so files (and config digests) without a memory limit stay as they were.
  if (t.redis.maxmemory_bytes > 0) {
    e << YAML::Key << "maxmemory_bytes" << YAML::Value << t.redis.maxmemory_bytes;
    e << YAML::Key << "maxmemory_policy" << YAML::Value;
    emit_string(e, t.redis.maxmemory_policy);
    e << YAML::Key << "maxmemory_samples" << YAML::Value << t.redis.maxmemory_samples;
  }
  e << YAML::EndMap << YAML::EndMap;
}

void emit_workload(YAML::Emitter& e, const std::vector<WorkloadSpec>& ws) {
  e << YAML::Key << "workload" << YAML::Value;
  if (ws.empty()) {
    e << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
    return;
  }
  e << YAML::BeginSeq;
  for (const WorkloadSpec& w : ws) {
    e << YAML::BeginMap << YAML::Key << "kind" << YAML::Value;
    emit_string(e, w.kind);
    e << YAML::Key << "rate_per_s" << YAML::Value << num(w.rate_per_s);
    e << YAML::Key << "distribution" << YAML::Value;
    emit_string(e, w.distribution);
    e << YAML::Key << "params" << YAML::Value;
    emit_string_map(e, w.params);
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
}

void emit_network_storage(YAML::Emitter& e, const LinkSettings& l, const StorageSettings& s) {
  e << YAML::Key << "network" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "latency_min_us" << YAML::Value << l.latency_min_us;
  e << YAML::Key << "latency_mean_us" << YAML::Value << num(l.latency_mean_us);
  e << YAML::Key << "drop_probability" << YAML::Value << num(l.drop_probability);
  e << YAML::Key << "duplicate_probability" << YAML::Value << num(l.duplicate_probability);
  e << YAML::Key << "reorder_probability" << YAML::Value << num(l.reorder_probability);
  e << YAML::Key << "fifo" << YAML::Value << (l.fifo ? "true" : "false");
  // Written only when declared, so files (and config digests) of other scenarios stay as they were.
  if (l.at_least_once) e << YAML::Key << "at_least_once" << YAML::Value << "true";
  e << YAML::EndMap;
  e << YAML::Key << "storage" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "journal_mode" << YAML::Value;
  emit_string(e, s.journal_mode);
  e << YAML::Key << "synchronous" << YAML::Value;
  emit_string(e, s.synchronous);
  e << YAML::Key << "torn_writes" << YAML::Value << (s.torn_writes ? "true" : "false");
  e << YAML::Key << "io_error_probability" << YAML::Value << num(s.io_error_probability);
  e << YAML::Key << "sync_latency_us" << YAML::Value << s.sync_latency_us;
  // Written only when chosen, so files (and config digests) of honest disks stay as they were.
  if (s.volatile_write_cache) {
    e << YAML::Key << "volatile_write_cache" << YAML::Value << "true";
    e << YAML::Key << "write_cache_flush_ms" << YAML::Value << s.write_cache_flush_ms;
  }
  e << YAML::EndMap;
}

void emit_faults(YAML::Emitter& e, const char* key, const std::vector<FaultSpec>& fs) {
  e << YAML::Key << key << YAML::Value;
  if (fs.empty()) {
    e << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
    return;
  }
  e << YAML::BeginSeq;
  for (const FaultSpec& f : fs) {
    e << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "at_ms" << YAML::Value << f.at_ms;
    e << YAML::Key << "kind" << YAML::Value;
    emit_string(e, f.kind);
    e << YAML::Key << "target" << YAML::Value;
    emit_string(e, f.target);
    e << YAML::Key << "duration_ms" << YAML::Value << f.duration_ms;
    e << YAML::Key << "value" << YAML::Value << f.value;
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
}

void emit_swarm(YAML::Emitter& e, const SwarmSpec& s) {
  e << YAML::Key << "swarm" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "enabled" << YAML::Value << (s.enabled ? "true" : "false");
  e << YAML::Key << "kinds" << YAML::Value;
  emit_string_list(e, s.kinds);
  e << YAML::Key << "faults_per_s" << YAML::Value << num(s.faults_per_s);
  e << YAML::Key << "max_pause_ms" << YAML::Value << s.max_pause_ms;
  e << YAML::Key << "max_clock_jump_ms" << YAML::Value << s.max_clock_jump_ms;
  e << YAML::Key << "max_downtime_ms" << YAML::Value << s.max_downtime_ms;
  e << YAML::Key << "timing_aware" << YAML::Value << (s.timing_aware ? "true" : "false");
  if (s.patience) e << YAML::Key << "patience" << YAML::Value << "true";  // only when on: digests stay
  e << YAML::EndMap;
}

void emit_expect(YAML::Emitter& e, const Expectation& x) {
  e << YAML::Key << "expect" << YAML::Value;
  if (x.pass && !x.fingerprint) {
    e << "pass";
    return;
  }
  e << YAML::Flow << YAML::BeginMap << YAML::Key << "verdict" << YAML::Value << (x.pass ? "pass" : "fail");
  if (!x.failing.empty()) {
    e << YAML::Key << "properties" << YAML::Value;
    emit_string_list(e, x.failing);
  }
  if (x.any) e << YAML::Key << "match" << YAML::Value << "any";
  if (x.fingerprint) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(*x.fingerprint));
    e << YAML::Key << "fingerprint" << YAML::Value << hex;
  }
  e << YAML::EndMap;
}

}  // namespace

std::string Diagnostic::to_string() const {
  std::string out = file;
  if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
  out += ": error: " + message;
  if (!hint.empty()) out += " (hint: " + hint + ")";
  return out;
}

std::string LoadResult::error_text() const {
  std::string out;
  for (const Diagnostic& d : errors) out += d.to_string() + "\n";
  return out;
}

const std::vector<std::string>& known_fault_kinds() { return scheduled_fault_kinds(); }

const std::vector<std::string>& known_distributions() {
  static const std::vector<std::string> d = {"poisson", "uniform", "burst"};
  return d;
}

LoadResult load_scenario_text(std::string_view yaml, const std::string& filename, const LoadOptions& options) {
  LoadResult result;
  auto fail = [&](int line, int col, std::string msg) {
    result.errors.push_back(Diagnostic{filename, line, col, std::move(msg), ""});
    return result;
  };
  try {
    const YAML::Node root = YAML::Load(std::string(yaml));
    if (!root || root.IsNull()) return fail(1, 1, "empty scenario file");
    Scenario s;
    s.source_file = filename;
    Loader loader(filename, options);
    loader.load(root, s);
    result.errors = std::move(loader.errors());
    if (result.errors.empty()) result.scenario = std::move(s);
    return result;
  } catch (const YAML::Exception& e) {
    result.errors.clear();
    return fail(e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1,
                "malformed YAML: " + e.msg);
  } catch (const std::exception& e) {
    result.errors.clear();
    return fail(0, 0, std::string("cannot read scenario: ") + e.what());
  }
}

LoadResult load_scenario_file(const std::string& path, const LoadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    LoadResult r;
    r.errors.push_back(Diagnostic{path, 0, 0, "cannot open file", ""});
    return r;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return load_scenario_text(text.str(), path, options);
}

std::optional<Scenario> load_scenario_or_print(const std::string& path) {
  LoadResult loaded = load_scenario_file(path);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s", loaded.error_text().c_str());
    return std::nullopt;
  }
  return loaded.scenario;
}

std::string scenario_to_yaml(const Scenario& s) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value;
  emit_string(e, s.name);
  e << YAML::Key << "description" << YAML::Value;
  emit_string(e, s.description);
  e << YAML::Key << "system" << YAML::Value;
  emit_string(e, s.system);
  e << YAML::Key << "variant" << YAML::Value;
  emit_string(e, s.variant);
  emit_topology(e, s.topology);
  emit_workload(e, s.workload);
  emit_network_storage(e, s.network, s.storage);
  emit_faults(e, "faults", s.faults);
  if (!s.extra_faults.empty()) emit_faults(e, "extra_faults", s.extra_faults);  // absent: digests unchanged
  emit_swarm(e, s.swarm);
  e << YAML::Key << "duration_ms" << YAML::Value << s.duration_ms;
  e << YAML::Key << "quiescent_tail_ms" << YAML::Value << s.quiescent_tail_ms;
  e << YAML::Key << "properties" << YAML::Value;
  emit_string_list(e, s.properties);
  emit_expect(e, s.expect);
  e << YAML::Key << "matrix_rows" << YAML::Value;
  emit_string_list(e, s.matrix_rows);
  e << YAML::Key << "params" << YAML::Value;
  emit_string_map(e, s.params);
  if (s.crash_point) {
    e << YAML::Key << "crash_point" << YAML::Value << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "effect" << YAML::Value << s.crash_point->effect;
    e << YAML::Key << "when" << YAML::Value << (s.crash_point->before ? "before" : "after");
    e << YAML::Key << "restart_after_ms" << YAML::Value << s.crash_point->restart_after_ms;
    e << YAML::EndMap;
  }
  if (!s.pause_points.empty()) {
    // One point is written as a mapping (the form every saved pause point has), a pair as a list.
    auto point = [&e](const PausePointSpec& p) {
      e << YAML::Flow << YAML::BeginMap;
      e << YAML::Key << "effect" << YAML::Value << p.effect;
      e << YAML::Key << "when" << YAML::Value << (p.before ? "before" : "after");
      e << YAML::Key << "duration_ms" << YAML::Value << p.duration_ms;
      e << YAML::EndMap;
    };
    e << YAML::Key << "pause_point" << YAML::Value;
    if (s.pause_points.size() == 1) {
      point(s.pause_points.front());
    } else {
      e << YAML::BeginSeq;
      for (const PausePointSpec& p : s.pause_points) point(p);
      e << YAML::EndSeq;
    }
  }
  if (s.fail_point) {
    e << YAML::Key << "fail_point" << YAML::Value << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "effect" << YAML::Value << s.fail_point->effect;
    e << YAML::Key << "when" << YAML::Value << (s.fail_point->before ? "before" : "after");
    e << YAML::EndMap;
  }
  if (!s.without.empty()) {
    e << YAML::Key << "without" << YAML::Value;
    emit_string_list(e, s.without);
  }
  if (s.seed) e << YAML::Key << "seed" << YAML::Value << *s.seed;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

uint64_t scenario_digest(const Scenario& s) {
  // Only what changes the run: labels (name, description), the expectation and the matrix rows a
  // file gives evidence for are left out, so renaming a file or pinning its expected failure
  // keeps its digest and its trace fingerprint.
  Scenario canonical = s;
  canonical.seed.reset();
  canonical.source_file.clear();
  canonical.name.clear();
  canonical.description.clear();
  canonical.expect = Expectation{};
  canonical.matrix_rows.clear();
  return sim::stable_hash(scenario_to_yaml(canonical));
}

}  // namespace fl
