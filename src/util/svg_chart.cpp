#include "util/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>

#include "util/error.hpp"
#include "util/strings.hpp"

namespace trnsim::util {

namespace {

constexpr std::array<const char*, 8> kPalette = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                                 "#CC79A7", "#56B4E9", "#000000", "#999999"};
constexpr double kWidth = 860;
constexpr double kHeight = 520;
constexpr double kLeft = 90;
constexpr double kTop = 56;
constexpr double kBottom = 70;

const char* color(std::size_t i) {
  return kPalette[i % kPalette.size()];
}

std::string number(double value) {
  if (value == 0) return "0";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e6 || magnitude < 1e-3) return fmt::format("{:.3g}", value);
  return fmt::format("{:.6g}", value);
}

/// Maps data values to pixels along one axis.
struct Scale {
  double low = 0;
  double high = 1;
  double pixel_low = 0;
  double pixel_high = 1;
  bool log = false;

  double operator()(double value) const {
    const double a = log ? std::log10(low) : low;
    const double b = log ? std::log10(high) : high;
    const double v = log ? std::log10(value) : value;
    const double t = b > a ? (v - a) / (b - a) : 0.5;
    return pixel_low + t * (pixel_high - pixel_low);
  }
};

std::string header(const std::string& title, double width) {
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\">\n",
      width, kHeight);
  out += fmt::format("<title>{}</title>\n", xml_escape(title));
  out += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"white\"/>\n", width, kHeight);
  out += fmt::format(
      "<text x=\"{}\" y=\"30\" text-anchor=\"middle\" font-size=\"17\" font-weight=\"bold\">{}"
      "</text>\n",
      width / 2, xml_escape(title));
  return out;
}

std::string axis_labels(const std::string& x_label, const std::string& y_label, double plot_left,
                        double plot_right, double plot_top, double plot_bottom) {
  std::string out;
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     (plot_left + plot_right) / 2, kHeight - 18, xml_escape(x_label));
  out += fmt::format(
      "<text x=\"22\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 22 {0})\">{1}"
      "</text>\n",
      (plot_top + plot_bottom) / 2, xml_escape(y_label));
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n",
      plot_left, plot_top, plot_right - plot_left, plot_bottom - plot_top);
  return out;
}

std::string y_axis(const Scale& y, const std::vector<double>& ticks, double plot_left,
                   double plot_right) {
  std::string out;
  for (double tick : ticks) {
    const double py = y(tick);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.2f}\" x2=\"{2}\" y2=\"{1:.2f}\" stroke=\"#ddd\"/>\n"
        "<text x=\"{3}\" y=\"{4:.2f}\" text-anchor=\"end\">{5}</text>\n",
        plot_left, py, plot_right, plot_left - 6, py + 4, number(tick));
  }
  return out;
}

std::string legend(const std::vector<std::string>& names, double x, double y_top, bool as_lines) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const double y = y_top + 20.0 * static_cast<double>(i);
    if (as_lines) {
      out += fmt::format(
          "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2.5\"/>"
          "<circle cx=\"{4}\" cy=\"{1}\" r=\"3.5\" fill=\"{3}\"/>\n",
          x, y, x + 22, color(i), x + 11);
    } else {
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/>\n", x,
                         y - 7, color(i));
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", x + 28, y + 4, xml_escape(names[i]));
  }
  return out;
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
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
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

LineSeries roofline_roof(std::string name, double peak_tflops, double bandwidth_gbps,
                         double intensity) {
  const double ridge = peak_tflops * 1e3 / bandwidth_gbps;
  const double low = std::min(intensity, ridge) / 10;
  const double high = std::max(intensity, ridge) * 10;
  return {std::move(name),
          {{low, low * bandwidth_gbps / 1e3}, {ridge, peak_tflops}, {high, peak_tflops}}};
}

std::string line_chart_csv(const LineChart& chart) {
  std::string out = "series," + csv_field(chart.x_label) + "," + csv_field(chart.y_label) + "\n";
  for (const LineSeries& series : chart.series) {
    std::vector<std::pair<double, double>> points = series.points;
    std::stable_sort(points.begin(), points.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [x, y] : points) {
      out += fmt::format("{},{},{}\n", csv_field(series.name), x, y);
    }
  }
  return out;
}

std::string bar_chart_csv(const BarChart& chart) {
  std::string out = "series," + csv_field(chart.x_label) + "," + csv_field(chart.y_label) + "\n";
  for (const BarSeries& series : chart.series) {
    for (std::size_t i = 0; i < chart.categories.size(); ++i) {
      const std::optional<double> value =
          i < series.values.size() ? series.values[i] : std::nullopt;
      out += fmt::format("{},{},{}\n", csv_field(series.name), csv_field(chart.categories[i]),
                         value ? fmt::format("{}", *value) : std::string());
    }
  }
  return out;
}

std::string chart_csv_path(const std::string& svg_path) {
  constexpr std::string_view kSvg = ".svg";
  if (svg_path.size() > kSvg.size() &&
      svg_path.compare(svg_path.size() - kSvg.size(), kSvg.size(), kSvg) == 0) {
    return svg_path.substr(0, svg_path.size() - kSvg.size()) + ".csv";
  }
  return svg_path + ".csv";
}

std::vector<double> log_ticks(double low, double high, const std::set<double>& data) {
  constexpr double kSlack = 1e-9;
  const int first_decade = static_cast<int>(std::floor(std::log10(low) + kSlack));
  const int last_decade = static_cast<int>(std::ceil(std::log10(high) - kSlack));
  const int powers_inside = static_cast<int>(std::floor(std::log10(high) + kSlack)) -
                            static_cast<int>(std::ceil(std::log10(low) - kSlack)) + 1;
  if (powers_inside >= 2) {
    // Every power of ten from the one at or below the data to the one at or above it.
    std::vector<double> ticks;
    for (int decade = first_decade; decade <= last_decade; ++decade) {
      ticks.push_back(std::pow(10.0, decade));
    }
    return ticks;
  }
  // Within about a decade: the data's own values when few and apart, else 1-2-5 steps.
  // The data's own values label the axis when few and apart (a factor 1.25 or more: labels of
  // closer values would overlap).
  bool apart = true;
  for (auto it = data.begin(); it != data.end() && std::next(it) != data.end(); ++it) {
    if (*std::next(it) < *it * 1.25) apart = false;
  }
  if (data.size() <= 12 && apart) return {data.begin(), data.end()};
  std::vector<double> steps;
  for (int decade = first_decade - 1; decade <= last_decade; ++decade) {
    for (const double mantissa : {1.0, 2.0, 5.0})
      steps.push_back(mantissa * std::pow(10.0, decade));
  }
  std::vector<double> ticks;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const bool below_next = i + 1 < steps.size() && steps[i + 1] <= low * (1 + kSlack);
    if (below_next) continue;  // a later step is still at or below the data
    ticks.push_back(steps[i]);
    if (steps[i] >= high * (1 - kSlack)) break;
  }
  return ticks;
}

std::vector<double> nice_ticks(double low, double high, int target) {
  if (!(high > low)) {
    const double pad = low == 0 ? 1.0 : std::fabs(low) * 0.1;
    low -= pad;
    high += pad;
  }
  const double raw = (high - low) / std::max(1, target - 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude * 10;
  for (double multiple : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (multiple * magnitude >= raw) {
      step = multiple * magnitude;
      break;
    }
  }
  std::vector<double> ticks;
  const double first = std::floor(low / step + 1e-9) * step;
  for (double tick = first; tick <= high + step * (1 - 1e-9); tick += step) {
    ticks.push_back(std::fabs(tick) < step * 1e-9 ? 0.0 : tick);
    if (tick >= high - step * 1e-9) break;
  }
  return ticks;
}

std::string line_chart_svg(const LineChart& chart) {
  std::set<double> xs;
  std::set<double> ys;
  for (const LineSeries& series : chart.series) {
    for (const auto& [x, y] : series.points) {
      if (chart.log_x && x <= 0) {
        throw InputError("--log-x", fmt::format("a log x axis needs x > 0, found {}", x));
      }
      if (chart.log_y && y <= 0) {
        throw InputError("--log-y", fmt::format("a log y axis needs y > 0, found {}", y));
      }
      xs.insert(x);
      ys.insert(y);
    }
  }
  if (xs.empty()) {
    xs.insert(0);
    ys.insert(0);
  }
  std::vector<std::string> names;
  for (const LineSeries& series : chart.series) {
    if (!series.name.empty()) names.push_back(series.name);
  }
  const double legend_width = names.empty() ? 30.0 : 200.0;
  const double plot_left = kLeft;
  const double plot_right = kWidth - legend_width;
  const double plot_top = kTop;
  const double plot_bottom = kHeight - kBottom;

  std::vector<double> x_ticks;
  std::vector<double> y_ticks;
  if (chart.log_x) {
    x_ticks = log_ticks(*xs.begin(), *xs.rbegin(), xs);
  } else {
    x_ticks = xs.size() <= 12 && xs.size() >= 2 ? std::vector<double>(xs.begin(), xs.end())
                                                : nice_ticks(*xs.begin(), *xs.rbegin());
  }
  if (chart.log_y) {
    y_ticks = log_ticks(*ys.begin(), *ys.rbegin(), ys);
  } else {
    // A y axis from zero unless the values sit far from it, so changes are not exaggerated.
    const double y_low = *ys.begin() >= 0 && *ys.begin() < 0.5 * *ys.rbegin() ? 0.0 : *ys.begin();
    y_ticks = nice_ticks(y_low, *ys.rbegin());
  }
  Scale x{std::min(x_ticks.front(), *xs.begin()), std::max(x_ticks.back(), *xs.rbegin()),
          plot_left + 20, plot_right - 20, chart.log_x};
  Scale y{std::min(y_ticks.front(), *ys.begin()), std::max(y_ticks.back(), *ys.rbegin()),
          plot_bottom, plot_top, chart.log_y};

  std::string out = header(chart.title, kWidth);
  out += y_axis(y, y_ticks, plot_left, plot_right);
  for (double tick : x_ticks) {
    const double px = x(tick);
    out += fmt::format(
        "<line x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\" stroke=\"#eee\"/>\n"
        "<text x=\"{0:.2f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px, plot_top, plot_bottom, plot_bottom + 18, number(tick));
  }
  out += axis_labels(chart.x_label, chart.y_label, plot_left, plot_right, plot_top, plot_bottom);
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    std::vector<std::pair<double, double>> points = chart.series[s].points;
    std::sort(points.begin(), points.end());
    std::string polyline;
    for (const auto& [px, py] : points) polyline += fmt::format("{:.2f},{:.2f} ", x(px), y(py));
    out +=
        fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2.5\" points=\"{}\"/>\n",
                    color(s), polyline);
    for (const auto& [px, py] : points) {
      const std::string label =
          chart.series[s].name.empty()
              ? fmt::format("{} = {}", number(px), number(py))
              : fmt::format("{}: {} = {}", chart.series[s].name, number(px), number(py));
      out += fmt::format(
          "<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"3.5\" fill=\"{}\"><title>{}</title></circle>\n",
          x(px), y(py), color(s), xml_escape(label));
    }
  }
  out += legend(names, plot_right + 20, plot_top + 10, true);
  out += "</svg>\n";
  return out;
}

std::string bar_chart_svg(const BarChart& chart) {
  double high = 0;
  double low = 0;
  for (const BarSeries& series : chart.series) {
    for (const auto& value : series.values) {
      if (value) {
        high = std::max(high, *value);
        low = std::min(low, *value);
      }
    }
  }
  std::vector<std::string> names;
  for (const BarSeries& series : chart.series) {
    if (!series.name.empty()) names.push_back(series.name);
  }
  const double legend_width = names.size() > 1 ? 200.0 : 30.0;
  const double plot_left = kLeft;
  const double plot_right = kWidth - legend_width;
  const double plot_top = kTop;
  const double plot_bottom = kHeight - kBottom;
  const std::vector<double> ticks = nice_ticks(low, high > low ? high : low + 1);
  Scale y{std::min(ticks.front(), low), std::max(ticks.back(), high), plot_bottom, plot_top, false};

  std::string out = header(chart.title, kWidth);
  out += y_axis(y, ticks, plot_left, plot_right);
  out += axis_labels(chart.x_label, chart.y_label, plot_left, plot_right, plot_top, plot_bottom);
  const std::size_t categories = std::max<std::size_t>(1, chart.categories.size());
  const std::size_t bars = std::max<std::size_t>(1, chart.series.size());
  const double slot = (plot_right - plot_left) / static_cast<double>(categories);
  const double bar_width = slot * 0.8 / static_cast<double>(bars);
  for (std::size_t c = 0; c < chart.categories.size(); ++c) {
    const double slot_left = plot_left + slot * static_cast<double>(c);
    out += fmt::format("<text x=\"{:.2f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       slot_left + slot / 2, plot_bottom + 18, xml_escape(chart.categories[c]));
    for (std::size_t s = 0; s < chart.series.size(); ++s) {
      const double bar_left = slot_left + slot * 0.1 + bar_width * static_cast<double>(s);
      const auto& value =
          c < chart.series[s].values.size() ? chart.series[s].values[c] : std::optional<double>();
      if (!value) {
        out += fmt::format(
            "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\" fill=\"#777\">n/a</text>\n",
            bar_left + bar_width / 2, y(0) - 6);
        continue;
      }
      const double top = std::min(y(*value), y(0));
      const double height = std::fabs(y(*value) - y(0));
      const std::string label = chart.series[s].name.empty()
                                    ? fmt::format("{}: {}", chart.categories[c], number(*value))
                                    : fmt::format("{}, {}: {}", chart.categories[c],
                                                  chart.series[s].name, number(*value));
      out += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\">"
          "<title>{}</title></rect>\n",
          bar_left, top, bar_width, height, color(s), xml_escape(label));
      out += fmt::format(
          "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\" font-size=\"11\">{}</text>\n",
          bar_left + bar_width / 2, top - 4, fmt::format("{:.3g}", *value));
    }
  }
  if (names.size() > 1) out += legend(names, plot_right + 20, plot_top + 10, false);
  out += "</svg>\n";
  return out;
}

}  // namespace trnsim::util
