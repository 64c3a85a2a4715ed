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

}  // namespace trnsim::sweep
