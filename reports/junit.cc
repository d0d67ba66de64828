// JUnit XML: one testcase per (row, variant), for CI dashboards.
#include <map>
#include <sstream>

#include "reports/report.h"
#include "reports/report_text.h"
#include "reports/timeline.h"

namespace fl::reports {

std::string to_junit_xml(const Report& report) {
  // One testcase per (row, variant). A testcase fails when a covering run was not as expected
  // (a spec FAIL that the scenario expects is a passing test); NOT_RUN rows are skipped.
  const std::vector<RowVerdict> rows = judge_rows(report);
  std::map<std::string, std::vector<const RowVerdict*>> by_suite;
  for (const RowVerdict& v : rows) by_suite[v.row->matrix + "." + v.variant].push_back(&v);
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" << xml_escape(report.title)
    << "\" timestamp=\"" << xml_escape(report.produced_at) << "\">\n";
  for (const auto& [suite, cases] : by_suite) {
    size_t failures = 0, skipped = 0;
    for (const RowVerdict* v : cases) {
      if (v->status == RowStatus::kNotRun) ++skipped;
      for (size_t idx : v->runs) {
        if (!report.runs[idx].as_expected()) {
          ++failures;
          break;
        }
      }
    }
    o << "<testsuite name=\"" << xml_escape(suite) << "\" tests=\"" << cases.size() << "\" failures=\"" << failures
      << "\" skipped=\"" << skipped << "\">\n"
      << "<properties><property name=\"commit\" value=\"" << xml_escape(report.commit) << "\"/></properties>\n";
    for (const RowVerdict* v : cases) {
      o << "<testcase classname=\"" << xml_escape(suite) << "\" name=\""
        << xml_escape(v->row->id + " " + v->row->scenario) << "\">";
      if (v->status == RowStatus::kNotRun) {
        o << "<skipped message=\"NOT_RUN: no run gives evidence for this row\"/>";
      } else {
        std::string unexpected;
        for (size_t idx : v->runs) {
          const RunRecord& r = report.runs[idx];
          if (!r.as_expected()) unexpected += r.scenario_file + " ";
        }
        if (!unexpected.empty()) {
          o << "<failure message=\"" << row_status_name(v->status) << " not as expected\">"
            << xml_escape("unexpected verdicts in: " + unexpected) << "</failure>";
        }
        o << "<system-out>" << row_status_name(v->status) << " " << xml_escape(join(v->failed_properties, ", "))
          << "</system-out>";
      }
      o << "</testcase>\n";
    }
    o << "</testsuite>\n";
  }
  o << "</testsuites>\n";
  return o.str();
}

}  // namespace fl::reports
