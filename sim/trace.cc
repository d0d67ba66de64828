#include "sim/trace.h"

#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

namespace fl::sim {

const char* trace_kind_name(TraceKind k) {
  switch (k) {
    case TraceKind::kResume:
      return "resume";
    case TraceKind::kAction:
      return "action";
    case TraceKind::kSend:
      return "send";
    case TraceKind::kDeliver:
      return "deliver";
    case TraceKind::kDrop:
      return "drop";
    case TraceKind::kDuplicate:
      return "duplicate";
    case TraceKind::kFault:
      return "fault";
    case TraceKind::kProcess:
      return "process";
    case TraceKind::kUser:
      return "user";
    case TraceKind::kOp:
      return "op";
    case TraceKind::kObserve:
      return "observe";
    case TraceKind::kViolation:
      return "violation";
  }
  return "?";
}

// The JSON writing is nlohmann-json's (escapes, exact 64-bit integers); ordered_json keeps the
// members in the order the trace has always been written in.
namespace {
using Json = nlohmann::ordered_json;

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }
}  // namespace

std::string json_escape(std::string_view s) {
  const std::string quoted = dump(Json(s));
  return quoted.substr(1, quoted.size() - 2);
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void Trace::record(int64_t time_us, TraceKind kind, std::string_view node, std::string_view process,
                   std::string_view detail) {
  fold(time_us, kind, names_hash(node, process), stable_hash(detail));
  if (recording_) keep(time_us, kind, node, process, std::string(detail));
}

void Trace::keep(int64_t time_us, TraceKind kind, std::string_view node, std::string_view process, std::string detail) {
  events_.push_back(
      TraceEvent{time_us, kind, std::string(node), std::string(process), std::move(detail), fingerprint_});
}

void Trace::write_jsonl(std::ostream& out) const {
  for (const TraceEvent& e : events_) {
    out << dump(Json{{"t_us", e.time_us},
                     {"kind", trace_kind_name(e.kind)},
                     {"node", e.node},
                     {"process", e.process},
                     {"detail", e.detail},
                     {"fp", hex64(e.fingerprint)}})
        << "\n";
  }
}

void Trace::write_perfetto(std::ostream& out) const {
  // Chrome trace-event format: pid = node, tid = process; instant events ("ph":"i").
  std::map<std::string, int> node_ids;
  std::map<std::pair<std::string, std::string>, int> thread_ids;
  auto node_id = [&](const std::string& n) {
    auto [it, fresh] = node_ids.emplace(n.empty() ? "world" : n, static_cast<int>(node_ids.size()) + 1);
    (void)fresh;
    return it->second;
  };
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string& line) {
    if (!first) out << ",\n";
    first = false;
    out << line;
  };
  for (const TraceEvent& e : events_) {
    const int pid = node_id(e.node);
    auto key = std::make_pair(e.node, e.process);
    auto [it, fresh] = thread_ids.emplace(key, static_cast<int>(thread_ids.size()) + 1);
    if (fresh) {
      emit("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(pid) + ",\"args\":{\"name\":\"" +
           json_escape(e.node.empty() ? "world" : e.node) + "\"}}");
      emit("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(pid) +
           ",\"tid\":" + std::to_string(it->second) + ",\"args\":{\"name\":\"" +
           json_escape(e.process.empty() ? "-" : e.process) + "\"}}");
    }
    emit("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"" + std::string(trace_kind_name(e.kind)) + "\",\"cat\":\"" +
         trace_kind_name(e.kind) + "\",\"ts\":" + std::to_string(e.time_us) + ",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(it->second) + ",\"args\":{\"detail\":\"" + json_escape(e.detail) + "\"}}");
  }
  out << "\n]}\n";
}

}  // namespace fl::sim
