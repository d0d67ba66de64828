#include "harness/null_faults.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "harness/system.h"
#include "sim/trace.h"
#include "sim/world.h"

namespace fl {

const std::vector<std::string>& null_fault_kinds() {
  static const std::vector<std::string> kinds = {"clock-drift", "clock-jump", "pause", "clog", "partition"};
  return kinds;
}

namespace {

// What the baseline run shows of the world: its nodes, their processes, the system's roles, which
// node pairs exchanged a message, and the recorded trace.
struct Baseline {
  std::vector<std::string> nodes;                             // in the world's order
  std::map<std::string, std::vector<std::string>> processes;  // node -> its processes
  std::map<std::string, std::vector<std::string>> roles;      // role -> targets
  std::set<std::pair<std::string, std::string>> talked;       // unordered node pairs (a < b)
  std::vector<sim::TraceEvent> trace;
};

const std::vector<std::string> kRoles = {"redis", "db", "log", "client", "replica", "worker", "gateway"};

// The receiving process of a recorded send ("send SERVICE -> TO: ..." or "reply SERVICE -> TO: ...").
std::string receiver_of(const std::string& detail) {
  const size_t arrow = detail.find(" -> ");
  if (arrow == std::string::npos) return "";
  const size_t colon = detail.find(": ", arrow + 4);
  return detail.substr(arrow + 4, colon == std::string::npos ? std::string::npos : colon - arrow - 4);
}

void read_world(sim::World& world, const SystemRun& run, Baseline* b) {
  std::map<std::string, std::string> node_of;  // process -> node
  for (const sim::Node& n : world.nodes()) {
    b->nodes.push_back(n.name);
    for (uint32_t p : n.processes) {
      b->processes[n.name].push_back(std::string(world.process(p).process_name()));
      node_of[b->processes[n.name].back()] = n.name;
    }
  }
  for (const std::string& role : kRoles) b->roles[role] = run.fault_targets(role);
  b->trace = world.trace().events();
  for (const sim::TraceEvent& e : b->trace) {
    if (e.kind != sim::TraceKind::kSend) continue;
    auto to = node_of.find(receiver_of(e.detail));
    if (to == node_of.end() || e.node.empty()) continue;
    b->talked.insert(std::minmax(e.node, to->second));
  }
}

std::string at_text(int64_t at_ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(at_ms) / 1000.0);
  return buf;
}

// The default targets: the store nodes and the first client.
std::vector<std::string> default_targets(const Baseline& b) {
  std::vector<std::string> out;
  for (const char* role : {"db", "redis", "log"}) {
    for (const std::string& t : b.roles.at(role)) out.push_back(t);
  }
  if (!b.roles.at("client").empty()) out.push_back(b.roles.at("client").front());
  // A broker or store the system does not name by role is still a store when it is called so.
  for (const char* name : {"log", "redis", "db"}) {
    if (std::find(b.nodes.begin(), b.nodes.end(), name) != b.nodes.end() &&
        std::find(out.begin(), out.end(), name) == out.end()) {
      out.push_back(name);
    }
  }
  return out;
}

// A node that never exchanged a message with `node` in the baseline: a link to it carries no
// traffic. "" when every node talked with it.
std::string silent_peer(const Baseline& b, const std::string& node) {
  for (const std::string& other : b.nodes) {
    if (other != node && !b.talked.count(std::minmax(node, other))) return other;
  }
  return "";
}

// Whether `node` (or a process of it) already drifts at `at_ms` in the baseline: a drift change
// there is no null fault (it re-anchors the node's clock, which rounds), so none is planned.
bool drifting(const RunResult& baseline, const Baseline& b, const std::string& node, int64_t at_ms) {
  for (const FaultSpec& f : baseline.applied_faults) {
    if (f.kind != "clock-drift" || f.value == 0 || f.at_ms > at_ms) continue;
    const auto& on_node = b.processes.at(node);
    if (f.target == node || std::find(on_node.begin(), on_node.end(), f.target) != on_node.end()) return true;
  }
  return false;
}

bool wanted(const NullFaultOptions& o, const std::string& kind) {
  return o.kinds.empty() || std::find(o.kinds.begin(), o.kinds.end(), kind) != o.kinds.end();
}

void plan(const Scenario& s, const Baseline& b, const NullFaultOptions& o, NullFaultResult* r) {
  const RunResult& baseline = r->baseline;
  std::vector<std::string> targets = o.all_nodes ? b.nodes : o.nodes.empty() ? default_targets(b) : o.nodes;
  for (const int64_t at : o.at_ms) {
    const std::string when = " at " + at_text(at);
    for (const std::string& node : targets) {
      if (std::find(b.nodes.begin(), b.nodes.end(), node) == b.nodes.end()) {
        r->skipped.push_back("no node " + node);
        continue;
      }
      auto add = [&](const std::string& label, FaultSpec f) {
        f.at_ms = at;
        r->cases.push_back(NullFaultCase{label + when, std::move(f)});
      };
      if (wanted(o, "clock-drift") && drifting(baseline, b, node, at)) {
        r->skipped.push_back("clock-drift 0 ppm on " + node + " at " + at_text(at) + ": it drifts already");
      } else if (wanted(o, "clock-drift")) {
        add("clock-drift 0 ppm on " + node, FaultSpec{.kind = "clock-drift", .target = node});
      }
      if (wanted(o, "clock-jump")) add("clock-jump 0 ms on " + node, FaultSpec{.kind = "clock-jump", .target = node});
      if (wanted(o, "pause")) {
        for (const std::string& p : b.processes.at(node))
          add("pause 0 ms of " + p, FaultSpec{.kind = "pause", .target = p});
      }
      const bool links = wanted(o, "clog") || wanted(o, "partition");
      const std::string peer = links ? silent_peer(b, node) : "";
      if (links && peer.empty()) r->skipped.push_back("clog and partition of " + node + ": it talked with every node");
      if (peer.empty()) continue;
      if (wanted(o, "clog")) {
        add("clog of the idle link " + node + "|" + peer + " for " + std::to_string(o.clog_ms) + " ms",
            FaultSpec{.kind = "clog", .target = node + "|" + peer, .duration_ms = o.clog_ms});
      }
      if (wanted(o, "partition") && at < s.duration_ms) {
        add("partition of " + node + "|" + peer + " (never talk) to the end of the active phase",
            FaultSpec{.kind = "partition", .target = node + "|" + peer, .duration_ms = s.duration_ms - at});
      }
    }
  }
}

// The trace without the fault records, the configuration line and the judges' marks of failed
// properties (what they conclude, compared apart): what the world did.
std::vector<const sim::TraceEvent*> world_events(const std::vector<sim::TraceEvent>& trace) {
  std::vector<const sim::TraceEvent*> out;
  for (size_t i = 1; i < trace.size(); ++i) {  // event 0: "system ... config <digest>"
    if (trace[i].kind != sim::TraceKind::kFault && trace[i].kind != sim::TraceKind::kViolation)
      out.push_back(&trace[i]);
  }
  return out;
}

std::string describe_event(const sim::TraceEvent* e) {
  if (e == nullptr) return "(end of trace)";
  return std::to_string(e->time_us - sim::kEpochUs) + "us " + sim::trace_kind_name(e->kind) + " " + e->node + "/" +
         e->process + " " + e->detail;
}

// "" when the two traces show the same world; else where they first differ.
std::string world_difference(const std::vector<sim::TraceEvent>& a, const std::vector<sim::TraceEvent>& b) {
  const auto wa = world_events(a), wb = world_events(b);
  for (size_t i = 0; i < std::max(wa.size(), wb.size()); ++i) {
    const sim::TraceEvent* x = i < wa.size() ? wa[i] : nullptr;
    const sim::TraceEvent* y = i < wb.size() ? wb[i] : nullptr;
    if (x && y && x->time_us == y->time_us && x->kind == y->kind && x->node == y->node && x->process == y->process &&
        x->detail == y->detail) {
      continue;
    }
    return "the world changed at event " + std::to_string(i + 1) + ": " + describe_event(x) + " became " +
           describe_event(y);
  }
  return "";
}

std::string exemption_text(const Verdict& v) {
  std::string out;
  for (const auto& [reason, n] : v.exemptions) {
    if (out.size() > 400) return out + "; ...";
    out += (out.empty() ? "" : "; ") + std::to_string(n) + "x " + reason;
  }
  return out;
}

// What the null fault changed in the verdicts.
std::vector<std::string> verdict_changes(const RunResult& base, const RunResult& with) {
  std::vector<std::string> out;
  std::map<std::string, const Verdict*> after;
  for (const Verdict& v : with.verdicts) after[v.property] = &v;
  for (const Verdict& v : base.verdicts) {
    auto it = after.find(v.property);
    if (it == after.end()) {
      out.push_back(v.property + ": " + v.status_name() + " -> not judged");
      continue;
    }
    const Verdict& w = *it->second;
    if (v.status() != w.status()) {
      out.push_back(
          v.property + ": " + v.status_name() + " -> " + w.status_name() +
          (w.exempted() ? " (exempted " + std::to_string(w.exempted()) + ": " + exemption_text(w) + ")" : ""));
    } else if (v.exempted() != w.exempted()) {
      out.push_back(v.property + ": still " + v.status_name() + ", but exempted " + std::to_string(v.exempted()) +
                    " -> " + std::to_string(w.exempted()) + " (" + exemption_text(w) + ")");
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> null_fault_changes(const RunResult& baseline,
                                            const std::vector<sim::TraceEvent>& baseline_trace, const RunResult& with,
                                            const std::vector<sim::TraceEvent>& with_trace) {
  std::vector<std::string> out;
  if (std::string d = world_difference(baseline_trace, with_trace); !d.empty()) out.push_back(std::move(d));
  for (std::string& change : verdict_changes(baseline, with)) out.push_back(std::move(change));
  return out;
}

NullFaultResult check_null_faults(const Scenario& s, uint64_t seed, const NullFaultOptions& options) {
  NullFaultResult r;
  Baseline base;
  RunOptions ro;
  ro.record_trace = true;
  ro.inspect = [&base](sim::World& world, const SystemRun& run) { read_world(world, run, &base); };
  r.baseline = run_scenario(s, seed, ro);
  if (!r.baseline.error.empty() || base.nodes.empty()) {
    r.error = r.baseline.error.empty() ? "the baseline run built no world" : r.baseline.error;
    return r;
  }
  plan(s, base, options, &r);
  for (const NullFaultCase& c : r.cases) {
    Scenario with = s;
    with.extra_faults.push_back(c.fault);
    std::vector<sim::TraceEvent> trace;
    RunOptions wo;
    wo.record_trace = true;
    wo.inspect = [&trace](sim::World& world, const SystemRun&) { trace = world.trace().events(); };
    const RunResult res = run_scenario(with, seed, wo);
    NullFaultFinding f{c, {}, with};
    if (!res.error.empty()) {
      f.problems.push_back("the run failed: " + res.error);
    } else {
      f.problems = null_fault_changes(r.baseline, base.trace, res, trace);
    }
    if (!f.problems.empty()) r.findings.push_back(std::move(f));
  }
  return r;
}

}  // namespace fl
