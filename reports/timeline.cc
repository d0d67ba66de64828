#include "reports/timeline.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "reports/json.h"

namespace fl::reports {
namespace {

// Faults, violations and process life-cycle events (crash, restart, pause; not task spawns).
bool always_kept(const TimelineEvent& e) {
  if (e.kind == "process") return e.detail.rfind("spawn", 0) != 0;
  return e.kind == "fault" || e.kind == "violation";
}

bool drawable(const std::string& kind) { return kind != "resume" && kind != "action"; }

// The word after `marker` in `s` (letters, digits, - _ . : / |), or "".
std::string word_after(const std::string& s, const std::string& marker) {
  size_t p = s.find(marker);
  if (p == std::string::npos) return "";
  p += marker.size();
  while (p < s.size() && s[p] == ' ') ++p;
  size_t e = p;
  while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '-' || s[e] == '_' || s[e] == '.' ||
                          s[e] == ':' || s[e] == '/'))
    ++e;
  while (e > p && (s[e - 1] == ':' || s[e - 1] == '.')) --e;  // "from a: ..." names "a"
  return s.substr(p, e - p);
}

// The word right before `marker` in `s`, or "".
std::string word_before(const std::string& s, const std::string& marker) {
  size_t p = s.find(marker);
  if (p == std::string::npos) return "";
  while (p > 0 && s[p - 1] == ' ') --p;
  size_t b = p;
  while (b > 0 && (std::isalnum(static_cast<unsigned char>(s[b - 1])) || s[b - 1] == '-' || s[b - 1] == '_' ||
                   s[b - 1] == '.' || s[b - 1] == ':' || s[b - 1] == '/'))
    --b;
  return s.substr(b, p - b);
}

// Time relative to the first drawn event: "+1.234567s".
std::string seconds(int64_t t_us, int64_t base_us) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "+%.6fs", static_cast<double>(t_us - base_us) / 1e6);
  return buf;
}

int64_t base_time(const std::vector<TimelineEvent>& events) { return events.empty() ? 0 : events.front().t_us; }

std::string mermaid_text(const std::string& s, size_t max_len = 80) {
  std::string out;
  for (char c : s.substr(0, max_len)) {
    if (c == '\n' || c == '\r')
      out += ' ';
    else if (c == ';')
      out += "#59;";
    else if (c == '#')
      out += "#35;";
    else if (c == ':')
      out += "#58;";
    else
      out += c;
  }
  if (s.size() > max_len) out += "...";
  return out;
}

std::vector<std::string> lanes_of(const std::vector<TimelineEvent>& events) {
  std::vector<std::string> lanes;
  std::set<std::string> seen;
  auto add = [&](const std::string& l) {
    if (!l.empty() && seen.insert(l).second) lanes.push_back(l);
  };
  for (const TimelineEvent& e : events) {
    add(e.lane());
    if (e.kind == "send" || e.kind == "deliver" || e.kind == "drop" || e.kind == "duplicate") { add(message_peer(e)); }
  }
  if (lanes.empty()) lanes.push_back("world");
  return lanes;
}

}  // namespace

std::string TimelineEvent::lane() const {
  if (!process.empty()) return process;
  if (!node.empty()) return node;
  return "world";
}

std::string message_peer(const TimelineEvent& e) {
  const std::string& d = e.detail;
  if (e.kind == "deliver") {
    std::string p = word_after(d, "from ");
    if (p.empty()) p = word_after(d, "from=");
    if (p.empty()) p = word_before(d, "->");
    return p;
  }
  std::string p = word_after(d, "->");
  if (p.empty()) p = word_after(d, "to=");
  if (p.empty()) p = word_after(d, "to ");
  return p;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

std::vector<TimelineEvent> parse_trace_jsonl(const std::string& text, size_t* bad_lines) {
  std::vector<TimelineEvent> out;
  size_t bad = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::optional<Json> j = parse_json(line);
    if (!j || !j->is_object()) {
      ++bad;
      continue;
    }
    TimelineEvent e;
    e.t_us = json_i64(*j, "t_us");
    e.kind = json_str(*j, "kind");
    e.node = json_str(*j, "node");
    e.process = json_str(*j, "process");
    e.detail = json_str(*j, "detail");
    out.push_back(std::move(e));
  }
  if (bad_lines) *bad_lines = bad;
  return out;
}

std::vector<TimelineEvent> select_timeline(const std::vector<TimelineEvent>& events, size_t max_events) {
  std::vector<size_t> keep_always, rest;
  for (size_t i = 0; i < events.size(); ++i) {
    if (!drawable(events[i].kind)) continue;
    (always_kept(events[i]) ? keep_always : rest).push_back(i);
  }
  std::vector<size_t> chosen = keep_always;
  if (chosen.size() > max_events) chosen.resize(max_events);
  const size_t room = max_events - chosen.size();
  const size_t from = rest.size() > room ? rest.size() - room : 0;
  chosen.insert(chosen.end(), rest.begin() + static_cast<std::ptrdiff_t>(from), rest.end());
  std::sort(chosen.begin(), chosen.end());
  std::vector<TimelineEvent> out;
  out.reserve(chosen.size());
  for (size_t i : chosen) out.push_back(events[i]);
  return out;
}

std::string to_mermaid(const std::vector<TimelineEvent>& events) {
  const std::vector<std::string> lanes = lanes_of(events);
  std::map<std::string, std::string> alias;
  std::ostringstream out;
  out << "sequenceDiagram\n";
  for (size_t i = 0; i < lanes.size(); ++i) {
    alias[lanes[i]] = "L" + std::to_string(i);
    out << "  participant L" << i << " as " << mermaid_text(lanes[i], 40) << "\n";
  }
  const std::string all = lanes.size() > 1 ? "L0,L" + std::to_string(lanes.size() - 1) : "L0";
  const int64_t base = base_time(events);
  for (const TimelineEvent& e : events) {
    const std::string me = alias[e.lane()];
    const std::string label = seconds(e.t_us, base) + " " + mermaid_text(e.detail);
    const std::string peer = message_peer(e);
    const bool has_peer = !peer.empty() && alias.count(peer) && peer != e.lane();
    if ((e.kind == "send" || e.kind == "duplicate") && has_peer) {
      out << "  " << me << "->>" << alias[peer] << ": " << label << "\n";
    } else if (e.kind == "drop" && has_peer) {
      out << "  " << me << "--x" << alias[peer] << ": DROP " << label << "\n";
    } else if (e.kind == "deliver" && has_peer) {
      out << "  " << alias[peer] << "-->>" << me << ": delivered " << label << "\n";
    } else if (e.kind == "fault") {
      out << "  Note over " << (e.process.empty() || !alias.count(e.process) ? all : me) << ": FAULT " << label << "\n";
    } else if (e.kind == "violation") {
      out << "  Note over " << all << ": VIOLATION " << label << "\n";
    } else if (e.kind == "process") {
      out << "  Note over " << me << ": PROCESS " << label << "\n";
    } else {
      out << "  Note right of " << me << ": " << e.kind << " " << label << "\n";
    }
  }
  return out.str();
}

const char* svg_css() {
  // Presentation as classes, not per-element attributes: a report embeds dozens of diagrams and
  // the repeated attributes were most of their bytes.
  return "svg.timeline{font-family:monospace;font-size:11px}"
         ".tl-h{fill:#e8eef7;stroke:#456}.tl-n{text-anchor:middle}.tl-l{stroke:#bbb;stroke-dasharray:4,3}"
         ".tl-a{marker-end:url(#arrow)}.tl-d{stroke-dasharray:5,3}.tl-b{fill-opacity:.15}"
         "line.c0{stroke:#333}text.c0,circle.c0{fill:#333}line.cr{stroke:#c0392b}text.cr,circle.cr,rect.cr{fill:#"
         "c0392b}"
         "line.cp{stroke:#d35400}text.cp,circle.cp,rect.cp{fill:#d35400}line.co{stroke:#2c6fbb}text.co,circle.co{fill:#"
         "2c6fbb}"
         "line.cg{stroke:#27ae60}";
}

namespace {

const char* colour_class(const std::string& kind) {
  if (kind == "fault" || kind == "violation" || kind == "drop") return "cr";
  if (kind == "process") return "cp";
  if (kind == "op") return "co";
  return "c0";
}

}  // namespace

std::string to_svg(const std::vector<TimelineEvent>& events, bool standalone) {
  const std::vector<std::string> lanes = lanes_of(events);
  std::map<std::string, int> x_of;
  const int lane_w = 170, left = 20, top = 50, row_h = 22;
  for (size_t i = 0; i < lanes.size(); ++i) { x_of[lanes[i]] = left + lane_w / 2 + static_cast<int>(i) * lane_w; }
  const int width = left * 2 + lane_w * static_cast<int>(lanes.size()) + 720;
  const int height = top + row_h * (static_cast<int>(events.size()) + 1) + 20;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"" << width << "\" height=\"" << height
    << "\">\n";
  if (standalone) o << "<style>" << svg_css() << "</style>\n";
  o << "<defs><marker id=\"arrow\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" "
       "orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#333\"/></marker></defs>\n";
  for (const std::string& l : lanes) {
    const int x = x_of[l];
    o << "<rect x=\"" << x - lane_w / 2 + 5 << "\" y=\"8\" width=\"" << lane_w - 10
      << "\" height=\"24\" class=\"tl-h\"/>";
    o << "<text x=\"" << x << "\" y=\"24\" class=\"tl-n\">" << xml_escape(l.substr(0, 22)) << "</text>";
    o << "<line x1=\"" << x << "\" y1=\"32\" x2=\"" << x << "\" y2=\"" << height - 10 << "\" class=\"tl-l\"/>\n";
  }
  const int text_x = left + lane_w * static_cast<int>(lanes.size()) + 10;
  const int64_t base = base_time(events);
  int y = top;
  for (const TimelineEvent& e : events) {
    y += row_h;
    const int x = x_of.count(e.lane()) ? x_of[e.lane()] : x_of[lanes[0]];
    const std::string peer = message_peer(e);
    const bool has_peer = !peer.empty() && x_of.count(peer) && peer != e.lane();
    const std::string colour = colour_class(e.kind);
    if (e.kind == "fault" || e.kind == "violation") {
      o << "<rect x=\"" << left << "\" y=\"" << y - 14 << "\" width=\"" << lane_w * static_cast<int>(lanes.size())
        << "\" height=\"18\" class=\"tl-b " << colour << "\"/>";
    }
    if ((e.kind == "send" || e.kind == "duplicate" || e.kind == "drop") && has_peer) {
      o << "<line x1=\"" << x << "\" y1=\"" << y - 4 << "\" x2=\"" << x_of[peer] << "\" y2=\"" << y - 4
        << "\" class=\"tl-a " << colour << (e.kind == "drop" ? " tl-d" : "") << "\"/>";
    } else if (e.kind == "deliver" && has_peer) {
      o << "<line x1=\"" << x_of[peer] << "\" y1=\"" << y - 4 << "\" x2=\"" << x << "\" y2=\"" << y - 4
        << "\" class=\"tl-a cg\"/>";
    } else {
      o << "<circle cx=\"" << x << "\" cy=\"" << y - 4 << "\" r=\"5\" class=\"" << colour << "\"/>";
    }
    o << "<text x=\"" << text_x << "\" y=\"" << y << "\" class=\"" << colour << "\">"
      << xml_escape(seconds(e.t_us, base) + " [" + e.kind + "] " + e.lane() + ": " + e.detail.substr(0, 90))
      << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace fl::reports
