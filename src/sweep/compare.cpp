#include "sweep/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "sweep/metrics.hpp"
#include "util/svg_chart.hpp"

namespace trnsim::sweep {

using nlohmann::json;

namespace {

constexpr std::array<const char*, 5> kEngines = {"tensor", "vector", "scalar", "gpsimd", "dma"};

std::optional<double> number_at(const json& statistics, const std::string& pointer) {
  const json::json_pointer at(pointer);
  if (!statistics.contains(at) || !statistics.at(at).is_number()) return std::nullopt;
  return statistics.at(at).get<double>();
}

std::string verdict(const json& statistics) {
  std::string problem;
  const auto value = extract_metric(statistics, resolve_metric("bottleneck", ""), problem);
  return value && value->is_string() ? value->get<std::string>() : std::string("?");
}

/// Index of the first column that ran, the reference for speedups.
std::optional<std::size_t> reference_column(const std::vector<CompareColumn>& columns) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].run.ok &&
        number_at(columns[i].run.statistics, "/time/kernel_us").value_or(0) > 0) {
      return i;
    }
  }
  return std::nullopt;
}

std::optional<double> speedup(const std::vector<CompareColumn>& columns, std::size_t i) {
  const auto reference = reference_column(columns);
  if (!reference || !columns[i].run.ok) return std::nullopt;
  const auto base = number_at(columns[*reference].run.statistics, "/time/kernel_us");
  const auto here = number_at(columns[i].run.statistics, "/time/kernel_us");
  if (!base || !here || *here <= 0) return std::nullopt;
  return *base / *here;
}

}  // namespace

std::string compare_table(const std::string& kernel, const std::vector<CompareColumn>& columns) {
  struct Row {
    std::string label;
    std::vector<std::string> cells;
  };
  std::vector<Row> rows;
  std::vector<std::string> notes;
  const auto reference = reference_column(columns);
  const auto add_row = [&](std::string label, const auto& cell) {
    Row row{std::move(label), {}};
    for (std::size_t i = 0; i < columns.size(); ++i) {
      row.cells.push_back(columns[i].run.ok ? cell(columns[i].run.statistics, i) : "-");
    }
    rows.push_back(std::move(row));
  };
  const auto format_at = [](const char* pointer, const char* format) {
    return [pointer, format](const json& statistics, std::size_t) {
      const auto value = number_at(statistics, pointer);
      return value ? fmt::format(fmt::runtime(format), *value) : std::string("?");
    };
  };

  add_row("time (us)", format_at("/time/kernel_us", "{:.3f}"));
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (!columns[i].run.ok) {
      notes.push_back(columns[i].run.error);
      rows.back().cells[i] = fmt::format("invalid [{}]", notes.size());
    }
  }
  add_row(reference ? "speedup vs " + columns[*reference].config : std::string("speedup"),
          [&](const json&, std::size_t i) {
            const auto value = speedup(columns, i);
            return value ? fmt::format("{:.2f}x", *value) : std::string("?");
          });
  bool multicore = false;
  for (const auto& column : columns) {
    multicore = multicore || (column.run.ok &&
                              number_at(column.run.statistics, "/system/cores").value_or(1) > 1);
  }
  add_row("cores", format_at("/system/cores", "{:.0f}"));
  for (const char* engine : kEngines) {
    const std::string pointer = std::string("/cores/0/engines/") + engine + "/active_pct";
    add_row(fmt::format("{} active %{}", engine, multicore ? " (core 0)" : ""),
            [pointer](const json& statistics, std::size_t) {
              const auto value = number_at(statistics, pointer);
              return value ? fmt::format("{:.1f}", *value) : std::string("?");
            });
  }
  // What the bottleneck compares for the DMA (a DMA in flight may move data far below its
  // bandwidth, so its active % alone does not make it the bottleneck).
  add_row(fmt::format("dma util %{}", multicore ? " (core 0)" : ""),
          format_at("/cores/0/engines/dma/utilisation_pct", "{:.1f}"));
  add_row("MFU %", format_at("/system/mfu_pct", "{:.1f}"));
  add_row("HBM GB/s used", format_at("/system/hbm_achieved_gbps", "{:.1f}"));
  add_row(multicore ? "bottleneck (core 0)" : "bottleneck",
          [](const json& statistics, std::size_t) { return verdict(statistics); });

  std::size_t label_width = 0;
  for (const Row& row : rows) label_width = std::max(label_width, row.label.size());
  std::vector<std::size_t> widths;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    std::size_t width = columns[i].config.size();
    for (const Row& row : rows) width = std::max(width, row.cells[i].size());
    widths.push_back(width);
  }
  std::string out = fmt::format("kernel {}\n", kernel);
  out += fmt::format("{:<{}}", "", label_width);
  for (std::size_t i = 0; i < columns.size(); ++i) {
    out += fmt::format("  {:>{}}", columns[i].config, widths[i]);
  }
  out += "\n";
  for (const Row& row : rows) {
    out += fmt::format("{:<{}}", row.label, label_width);
    for (std::size_t i = 0; i < columns.size(); ++i) {
      out += fmt::format("  {:>{}}", row.cells[i], widths[i]);
    }
    out += "\n";
  }
  if (!notes.empty()) out += "\n";
  std::size_t note = 0;
  for (const auto& column : columns) {
    if (column.run.ok) continue;
    out += fmt::format("[{}] invalid on {}: {}\n", ++note, column.config, column.run.error);
  }
  return out;
}

nlohmann::ordered_json compare_json(const std::string& kernel,
                                    const std::vector<CompareColumn>& columns) {
  nlohmann::ordered_json out;
  out["kernel"] = kernel;
  out["columns"] = nlohmann::ordered_json::array();
  const auto reference = reference_column(columns);
  for (std::size_t i = 0; i < columns.size(); ++i) {
    nlohmann::ordered_json column;
    column["config"] = columns[i].config;
    column["ok"] = columns[i].run.ok;
    if (!columns[i].run.ok) {
      column["error"] = columns[i].run.error;
      out["columns"].push_back(std::move(column));
      continue;
    }
    const json& statistics = columns[i].run.statistics;
    const auto put = [&](const char* key, const std::string& pointer) {
      const auto value = number_at(statistics, pointer);
      column[key] = value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
    };
    put("time_us", "/time/kernel_us");
    const auto ratio = speedup(columns, i);
    column["speedup"] = ratio ? nlohmann::ordered_json(*ratio) : nlohmann::ordered_json();
    column["speedup_reference"] = reference ? columns[*reference].config : "";
    put("cores", "/system/cores");
    nlohmann::ordered_json active = nlohmann::ordered_json::object();
    for (const char* engine : kEngines) {
      const auto value =
          number_at(statistics, std::string("/cores/0/engines/") + engine + "/active_pct");
      active[engine] = value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
    }
    column["active_pct"] = std::move(active);
    put("dma_utilisation_pct", "/cores/0/engines/dma/utilisation_pct");
    put("mfu_pct", "/system/mfu_pct");
    put("hbm_gbps", "/system/hbm_achieved_gbps");
    column["bottleneck"] = verdict(statistics);
    out["columns"].push_back(std::move(column));
  }
  return out;
}

util::BarChart compare_chart(const std::string& kernel, const std::vector<CompareColumn>& columns) {
  util::BarChart chart;
  chart.title = "kernel time per config: " + kernel;
  chart.x_label = "config";
  chart.y_label = "kernel time (us)";
  util::BarSeries series{"", {}};
  for (const auto& column : columns) {
    chart.categories.push_back(column.config);
    series.values.push_back(column.run.ok ? number_at(column.run.statistics, "/time/kernel_us")
                                          : std::nullopt);
  }
  chart.series.push_back(std::move(series));
  return chart;
}

namespace {

constexpr std::string_view kPageStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1100px;
color:#222;padding:0 16px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:32px;border-bottom:1px solid #ddd}
pre{background:#f6f8fa;padding:12px;overflow-x:auto;font-size:12.5px;line-height:1.35}
.note{color:#555;font-size:13px}.chart{margin:8px 0}
)";

double sum_over_cores(const json& statistics, const std::string& pointer) {
  double total = 0;
  if (!statistics.contains("cores")) return 0;
  for (const json& core : statistics["cores"]) total += number_at(core, pointer).value_or(0);
  return total;
}

}  // namespace

std::string compare_html(const std::string& kernel, const std::vector<CompareColumn>& columns) {
  const auto escape = [](const std::string& text) { return util::xml_escape(text); };
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  page += "<title>trnsim compare: " + escape(kernel) + "</title><style>";
  page += kPageStyle;
  page += "</style></head><body>\n<h1>" + escape(kernel) + "</h1>\n";
  page += "<h2 id=\"table\">Comparison</h2>\n<pre>" + escape(compare_table(kernel, columns)) +
          "</pre>\n";

  std::vector<const CompareColumn*> valid;
  for (const CompareColumn& column : columns) {
    if (column.run.ok) valid.push_back(&column);
  }
  if (valid.empty()) {
    page += "<p class=\"note\">The kernel ran on none of the configs.</p></body></html>\n";
    return page;
  }

  page += "<h2 id=\"time\">Kernel time and MFU</h2>\n";
  page +=
      "<div class=\"chart\">" + util::bar_chart_svg(compare_chart(kernel, columns)) + "</div>\n";
  util::BarChart mfu{"TensorE MFU per config", "config", "MFU (%)", {}, {{"", {}}}};
  for (const CompareColumn* column : valid) {
    mfu.categories.push_back(column->config);
    mfu.series[0].values.push_back(number_at(column->run.statistics, "/system/mfu_pct"));
  }
  page += "<div class=\"chart\">" + util::bar_chart_svg(mfu) + "</div>\n";

  page += "<h2 id=\"engines\">Engine busy share</h2>\n";
  util::BarChart busy{"busy share per engine (core 0)", "config", "% of the kernel", {}, {}};
  for (const char* engine : kEngines) {
    util::BarSeries series{engine, {}};
    bool any = false;
    for (const CompareColumn* column : valid) {
      const auto value = number_at(column->run.statistics,
                                   std::string("/cores/0/engines/") + engine + "/active_pct");
      series.values.push_back(value);
      any = any || value.value_or(0) > 0;
    }
    if (any) busy.series.push_back(std::move(series));
  }
  for (const CompareColumn* column : valid) busy.categories.push_back(column->config);
  if (!busy.series.empty())
    page += "<div class=\"chart\">" + util::bar_chart_svg(busy) + "</div>\n";

  page += "<h2 id=\"roofline\">Roofline</h2>\n";
  util::LineChart roofline{"TensorE roofline per config (BF16 peak; memory roof: DMA bandwidth)",
                           "arithmetic intensity (FLOP per HBM byte)",
                           "TFLOP/s",
                           true,
                           true,
                           {}};
  for (const CompareColumn* column : valid) {
    const json& statistics = column->run.statistics;
    const double flops = sum_over_cores(statistics, "/tensor/flops");
    const double hbm = sum_over_cores(statistics, "/hbm/read_bytes") +
                       sum_over_cores(statistics, "/hbm/write_bytes");
    const double peak = sum_over_cores(statistics, "/tensor/peak_bf16_tflops");
    const double cores = statistics.contains("cores") ? statistics["cores"].size() : 1.0;
    const double bandwidth =
        number_at(statistics, "/memory_system/dma/peak_bandwidth_per_core_gbps").value_or(0) *
        cores;
    const double kernel_ns = number_at(statistics, "/time/kernel_ns").value_or(0);
    if (flops <= 0 || hbm <= 0 || peak <= 0 || bandwidth <= 0 || kernel_ns <= 0) continue;
    const double intensity = flops / hbm;
    roofline.series.push_back(
        util::roofline_roof(column->config + " roof", peak, bandwidth, intensity));
    roofline.series.push_back({column->config, {{intensity, flops / kernel_ns / 1e3}}});
  }
  if (roofline.series.empty()) {
    page +=
        "<p class=\"note\">No roofline: the kernel has no matmul FLOPs or no HBM traffic.</p>\n";
  } else {
    page += "<div class=\"chart\">" + util::line_chart_svg(roofline) + "</div>\n";
  }

  page += "<h2 id=\"stalls\">Dependency waits</h2>\n";
  util::BarChart waits{"dependency wait per engine (core 0)", "config", "wait (us)", {}, {}};
  for (const char* engine : kEngines) {
    util::BarSeries series{engine, {}};
    bool any = false;
    for (const CompareColumn* column : valid) {
      const auto value = number_at(column->run.statistics, std::string("/cores/0/engines/") +
                                                               engine + "/dependency_wait_ns");
      series.values.push_back(value ? std::optional<double>(*value / 1e3) : std::nullopt);
      any = any || value.value_or(0) > 0;
    }
    if (any) waits.series.push_back(std::move(series));
  }
  for (const CompareColumn* column : valid) waits.categories.push_back(column->config);
  if (waits.series.empty()) {
    page += "<p class=\"note\">No engine waited for a dependency.</p>\n";
  } else {
    page += "<div class=\"chart\">" + util::bar_chart_svg(waits) + "</div>\n";
    page +=
        "<p class=\"note\">Time each engine was idle with work waiting for a producer on "
        "another engine (the summary's dep_wait column).</p>\n";
  }
  page += "</body></html>\n";
  return page;
}

}  // namespace trnsim::sweep
