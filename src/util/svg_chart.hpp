// Self-contained SVG charts (no scripts, fonts or external files): a line chart over a numeric x
// axis (linear or log) and a grouped bar chart over categories. Colours are the Okabe-Ito
// colour-blind-safe palette; every mark has a <title> tooltip with its exact value.
// Leaves out interactivity and anything beyond these two chart kinds.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace trnsim::util {

struct LineSeries {
  std::string name;                               ///< legend entry ("" for a single series)
  std::vector<std::pair<double, double>> points;  ///< (x, y); drawn in x order
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;  ///< needs x > 0
  bool log_y = false;  ///< needs y > 0
  std::vector<LineSeries> series;
};

struct BarSeries {
  std::string name;
  std::vector<std::optional<double>> values;  ///< one per category; nullopt draws "n/a"
};

struct BarChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<std::string> categories;
  std::vector<BarSeries> series;
};

/// The SVG document. Throws InputError when a log axis meets a value <= 0.
std::string line_chart_svg(const LineChart& chart);
std::string bar_chart_svg(const BarChart& chart);

/// A roofline's roof: compute-bound at `peak_tflops` right of the ridge (peak / bandwidth FLOP
/// per byte), memory-bound at `bandwidth_gbps` x intensity left of it, drawn from a decade below
/// to a decade above the ridge and `intensity` (FLOP per byte), whichever spans more.
LineSeries roofline_roof(std::string name, double peak_tflops, double bandwidth_gbps,
                         double intensity);

/// The data behind a chart as CSV, one row per drawn point or bar: columns `series` (the legend
/// name, empty for a single unnamed series), then the chart's x label, then its y label; numbers
/// in the shortest form that reads back exactly; a bar drawn "n/a" has an empty y.
std::string line_chart_csv(const LineChart& chart);
std::string bar_chart_csv(const BarChart& chart);
/// Where the data of the chart drawn to `svg_path` goes: the same path with `.csv` in place of
/// its `.svg` extension (appended when it has none).
std::string chart_csv_path(const std::string& svg_path);

/// Axis ticks: about `target` round values (1, 2, 5 x 10^k steps) covering [low, high].
std::vector<double> nice_ticks(double low, double high, int target = 6);

/// Ticks of a log axis over data in [low, high] (> 0), the axis then spanning them: every power
/// of ten from the one at or below `low` to the one at or above `high` when at least two powers
/// of ten lie within [low, high]; else the data's own values when there are at most 12 of them,
/// each at least 1.25 times the previous; else 1-2-5 steps from the one at or below `low` to the
/// one at or above `high`.
std::vector<double> log_ticks(double low, double high, const std::set<double>& data);

/// Escapes &, <, >, " and ' for XML text and attributes.
std::string xml_escape(const std::string& text);

}  // namespace trnsim::util
