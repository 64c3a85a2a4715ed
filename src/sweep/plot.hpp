// `trnsim sweep plot`: one chart from sweep results. x is a varied value (or a param, kwarg,
// input, config key, "kernel", "config", "index"), y a recorded metric, optional series by another
// key and KEY=VALUE filters. Numeric x gives a line chart, anything else grouped bars.
// Leaves out failed points (counted in the note) and aggregation of repeated points.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sweep/results.hpp"

namespace trnsim::sweep {

struct PlotRequest {
  std::string x;
  std::string y;
  std::string by;                                          ///< "" for one series
  std::vector<std::pair<std::string, std::string>> where;  ///< keep records with KEY == VALUE
  bool log_x = false;
  bool log_y = false;
  bool bars = false;  ///< bars even for a numeric x
  std::string title;  ///< "" for "<y> vs <x>"
};

struct PlotOutput {
  std::string svg;
  std::string csv;          ///< the data behind the chart (line_chart_csv / bar_chart_csv)
  std::size_t plotted = 0;  ///< points drawn
  std::size_t skipped = 0;  ///< failed points or points without the metric
};

/// Throws InputError for an unknown key or metric (with a suggestion) and when two points land on
/// the same x in the same series (naming the keys that tell them apart).
PlotOutput plot_results(const std::vector<Record>& records, const PlotRequest& request);

/// `sweep report`: one self-contained HTML page of a sweep's results: for each recorded metric
/// (time_us, mfu_pct, hbm_gbps, dma_active_pct) a chart against the first varied value, a
/// series per value of the second, the other varied values held at the first point's; the
/// bottleneck verdicts counted; and a table of the points (the first 1,000). `title` heads it.
std::string sweep_report_html(const std::vector<Record>& records, const std::string& title);

/// Parses a --where "KEY=VALUE".
std::pair<std::string, std::string> parse_where(const std::string& text);

}  // namespace trnsim::sweep
