// Self-contained SVG charts (no scripts, fonts or external files): a line chart over a numeric x
// axis (linear or log) and a grouped bar chart over categories. Colours are the Okabe-Ito
// colour-blind-safe palette; every mark has a <title> tooltip with its exact value.
// Leaves out interactivity and anything beyond these two chart kinds.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trnsim::sweep {

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

/// Axis ticks: about `target` round values (1, 2, 5 x 10^k steps) covering [low, high].
std::vector<double> nice_ticks(double low, double high, int target = 6);

/// Escapes &, <, >, " and ' for XML text and attributes.
std::string xml_escape(const std::string& text);

}  // namespace trnsim::sweep
