// Timelines: a run's trace drawn as a sequence diagram, one lane per node/process, faults and
// violations marked. Used by `faultline explain TRACE.jsonl` and by the HTML report's
// counterexample section.
//
// Message arrows: a send/deliver/drop event's peer is read from its detail text, which names it
// as "to <peer>" / "-> <peer>" (send) or "from <peer>" / "<peer> ->" (deliver). Events whose
// peer cannot be found are drawn as notes on their own lane.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fl::reports {

struct TimelineEvent {
  int64_t t_us = 0;
  std::string kind;  // sim::trace_kind_name(): send, deliver, drop, fault, process, op, ...
  std::string node;
  std::string process;
  std::string detail;
  bool operator==(const TimelineEvent&) const = default;

  // The lane this event is drawn on: process, else node, else "world".
  std::string lane() const;
};

// Parses the trace JSON-lines format of sim::Trace::write_jsonl. Lines that are not a JSON
// object are skipped and counted in *bad_lines (when given). Never throws.
std::vector<TimelineEvent> parse_trace_jsonl(const std::string& text, size_t* bad_lines = nullptr);

// The events worth drawing, at most `max_events`: scheduler resumes and internal actions are
// dropped; faults, process events and violations are always kept; of the rest the LAST ones
// are kept (failures are judged at the end of the run).
std::vector<TimelineEvent> select_timeline(const std::vector<TimelineEvent>& events, size_t max_events);

// Mermaid `sequenceDiagram` text.
std::string to_mermaid(const std::vector<TimelineEvent>& events);
// A standalone SVG document (no scripts, no external references).
// `standalone` = false leaves out the <style> (svg_css()), which a page embedding many
// diagrams includes once.
std::string to_svg(const std::vector<TimelineEvent>& events, bool standalone = true);
const char* svg_css();

// The peer a message event names in its detail, or "".
std::string message_peer(const TimelineEvent& e);

// Escapes text for HTML/XML content and attribute values.
std::string xml_escape(const std::string& s);

}  // namespace fl::reports
