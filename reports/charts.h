// Charts of a run's data (ChartRecord, reports/report.h) as self-contained SVG: axes with ticks,
// one polyline per series, a legend. No script, no fonts or styles fetched: the HTML report
// inlines them and the Markdown report links them as files (charts/run-<i>-<id>.svg).
#pragma once

#include <cstddef>
#include <string>

#include "reports/report.h"

namespace fl::reports {

// The chart as an SVG document. A chart without points draws its frame and says "no data".
std::string chart_svg(const ChartRecord& chart);
// Where write_report_files puts the chart of run `run_index`, relative to the report's directory
// (the id's characters other than letters, digits and '-' become '_').
std::string chart_file(size_t run_index, const ChartRecord& chart);

}  // namespace fl::reports
