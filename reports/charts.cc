#include "reports/charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "reports/timeline.h"

namespace fl::reports {

namespace {

constexpr double kWidth = 820, kHeight = 320;
constexpr double kLeft = 60, kRight = 260, kTop = 30, kBottom = 44;  // margins; the legend is on the right
const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

struct Range {
  double lo = 0, hi = 1;
};

Range range_of(const ChartRecord& c, bool x_axis) {
  double lo = INFINITY, hi = -INFINITY;
  for (const ChartSeries& s : c.series) {
    for (double v : x_axis ? s.x : s.y) {
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (!(lo <= hi)) return Range{};
  if (lo == hi) return Range{lo - 1, hi + 1};
  return Range{lo, hi};
}

std::string number(double v) {
  char buf[32];
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e12)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

std::string chart_svg(const ChartRecord& c) {
  const Range xr = range_of(c, true), yr = range_of(c, false);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (x - xr.lo) / (xr.hi - xr.lo) * plot_w; };
  auto py = [&](double y) {
    const double f = (y - yr.lo) / (yr.hi - yr.lo);
    return c.y_inverted ? kTop + f * plot_h : kTop + (1 - f) * plot_h;
  };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
    << "\" viewBox=\"0 0 " << kWidth << " " << kHeight << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<title>" << xml_escape(c.title) << "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
    << "<text x=\"" << kLeft << "\" y=\"18\" font-size=\"13\">" << xml_escape(c.title) << "</text>\n"
    << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << plot_w << "\" height=\"" << plot_h
    << "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (int i = 0; i <= 4; ++i) {  // ticks and grid
    const double xv = xr.lo + (xr.hi - xr.lo) * i / 4, yv = yr.lo + (yr.hi - yr.lo) * i / 4;
    o << "<line x1=\"" << px(xv) << "\" y1=\"" << kTop << "\" x2=\"" << px(xv) << "\" y2=\"" << kTop + plot_h
      << "\" stroke=\"#eee\"/><text x=\"" << px(xv) << "\" y=\"" << kTop + plot_h + 14 << "\" text-anchor=\"middle\">"
      << number(xv) << "</text>\n";
    o << "<line x1=\"" << kLeft << "\" y1=\"" << py(yv) << "\" x2=\"" << kLeft + plot_w << "\" y2=\"" << py(yv)
      << "\" stroke=\"#eee\"/><text x=\"" << kLeft - 6 << "\" y=\"" << py(yv) + 4 << "\" text-anchor=\"end\">"
      << number(yv) << "</text>\n";
  }
  o << "<text x=\"" << kLeft + plot_w / 2 << "\" y=\"" << kHeight - 8 << "\" text-anchor=\"middle\">"
    << xml_escape(c.x_label) << "</text>\n<text x=\"14\" y=\"" << kTop + plot_h / 2
    << "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " << kTop + plot_h / 2 << ")\">" << xml_escape(c.y_label)
    << "</text>\n";
  bool any = false;
  for (size_t k = 0; k < c.series.size(); ++k) {
    const ChartSeries& s = c.series[k];
    const char* colour = kColours[k % (sizeof kColours / sizeof kColours[0])];
    std::ostringstream points;
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      points << px(s.x[i]) << "," << py(s.y[i]) << " ";
      any = true;
    }
    o << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.5\" points=\"" << points.str()
      << "\"/>\n";
    const double ly = kTop + 6 + 16 * static_cast<double>(k);
    o << "<line x1=\"" << kWidth - kRight + 12 << "\" y1=\"" << ly << "\" x2=\"" << kWidth - kRight + 30 << "\" y2=\""
      << ly << "\" stroke=\"" << colour << "\" stroke-width=\"2\"/><text x=\"" << kWidth - kRight + 34 << "\" y=\""
      << ly + 4 << "\">" << xml_escape(s.name) << "</text>\n";
  }
  if (!any) {
    o << "<text x=\"" << kLeft + plot_w / 2 << "\" y=\"" << kTop + plot_h / 2
      << "\" text-anchor=\"middle\" fill=\"#777\">no data</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

std::string chart_file(size_t run_index, const ChartRecord& chart) {
  std::string id = chart.id.empty() ? "chart" : chart.id;
  for (char& ch : id) {  // a merged report.json is input: its ids never name another directory
    const bool safe = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-';
    if (!safe) ch = '_';
  }
  return "charts/run-" + std::to_string(run_index) + "-" + id + ".svg";
}

}  // namespace fl::reports
