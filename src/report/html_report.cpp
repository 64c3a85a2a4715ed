#include "report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/report.hpp"
#include "util/svg_chart.hpp"

namespace trnsim::report {

namespace {

using kernel::Engine;
using nlohmann::json;

/// Time bins of the utilisation chart: at most this many (RateCounter merges beyond).
constexpr std::size_t kTimeBins = 240;
/// Stalls listed.
constexpr std::size_t kStallsShown = 15;

/// Engines whose sequencers run instructions (a DMA's trigger counts for its trigger engine).
constexpr std::array<Engine, 6> kSequencers = {Engine::kTensor, Engine::kVector,
                                               Engine::kScalar, Engine::kGpSimd,
                                               Engine::kSync,   Engine::kCollective};

/// Points drawn per line of the utilisation chart at most (bins are merged down to it).
constexpr std::size_t kPointsShown = 120;

/// The counter's bins up to the kernel's end, merged a few at a time so that at most
/// kPointsShown remain, as (merged bin centre in us, value per ns of the merged bin).
std::vector<std::pair<double, double>> per_ns(const RateCounter& counter, double kernel_ns) {
  const double bin = counter.bin_ns();
  const auto used =
      std::min(counter.bins().size(), static_cast<std::size_t>(std::ceil(kernel_ns / bin)) + 1);
  const std::size_t factor = std::max<std::size_t>(1, (used + kPointsShown - 1) / kPointsShown);
  std::vector<std::pair<double, double>> points;
  for (std::size_t first = 0; first < used; first += factor) {
    double sum = 0;
    const std::size_t last = std::min(used, first + factor);
    for (std::size_t i = first; i < last; ++i) sum += counter.bins()[i];
    const double width = bin * static_cast<double>(last - first);
    points.emplace_back((static_cast<double>(first) * bin + width / 2) / 1e3, sum / width);
  }
  return points;
}

std::uint64_t recent_key(std::uint32_t core, std::uint64_t sequence) {
  return std::uint64_t{core} << 40 ^ sequence;
}

std::string escape(std::string_view text) {
  return util::xml_escape(std::string(text));
}

double number_or(const json& object, const json::json_pointer& pointer, double fallback) {
  return object.contains(pointer) && object.at(pointer).is_number()
             ? object.at(pointer).get<double>()
             : fallback;
}

/// Sum of a numeric field over every core of the statistics.
double sum_over_cores(const json& statistics, const json::json_pointer& field) {
  double total = 0;
  if (!statistics.contains("cores")) return 0;
  for (const json& core : statistics["cores"]) total += number_or(core, field, 0);
  return total;
}

constexpr std::string_view kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1100px;
color:#222;padding:0 16px}
h1{font-size:1.5em;margin-bottom:4px}h2{font-size:1.2em;margin-top:32px;border-bottom:1px solid #ddd}
pre{background:#f6f8fa;padding:12px;overflow-x:auto;font-size:12.5px;line-height:1.35}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#555;font-size:13px}.chart{margin:8px 0}
)";

}  // namespace

HtmlReport::HtmlReport(std::string path, const kernel::Program& program, std::uint32_t cores)
    : target_(std::move(path), "--report"),
      program_(program),
      cores_(std::max(cores, 1u)),
      labels_(program),
      dma_bytes_(100.0, kTimeBins) {
  for (auto& counter : busy_) counter = std::make_unique<RateCounter>(100.0, kTimeBins);
}

void HtmlReport::instruction(const core::InstructionTiming& timing) {
  const kernel::Instruction& instruction = *timing.instruction;
  const Engine sequencer =
      instruction.engine == Engine::kDma ? instruction.dma_trigger : instruction.engine;
  if (timing.end_ns > timing.start_ns) {
    busy_[static_cast<std::size_t>(sequencer)]->add(timing.start_ns, timing.end_ns,
                                                    timing.end_ns - timing.start_ns);
  }
  const std::uint32_t statement = instruction.source.statement;
  if (timing.wait_ns > 0) {
    const std::uint64_t key = recent_key(instruction.pid, timing.waited_on_sequence);
    const Recent& producer = recent_[key & (recent_.size() - 1)];
    // A producer that left the window of recent instructions is named by its engine only.
    const std::uint32_t producer_statement =
        producer.key == key ? producer.statement : ~std::uint32_t{0};
    Stall& stall = stalls_[{producer_statement, statement}];
    stall.producer_statement = producer_statement;
    stall.consumer_statement = statement;
    stall.producer_engine = producer.key == key ? producer.engine : timing.waited_on;
    stall.consumer_engine = instruction.engine;
    stall.wait_ns += timing.wait_ns;
    ++stall.waits;
  }
  const std::uint64_t key = recent_key(instruction.pid, instruction.sequence);
  recent_[key & (recent_.size() - 1)] = {key, statement, instruction.engine};
}

void HtmlReport::dma(const core::DmaEvent& event) {
  if (event.kind != core::DmaEvent::Kind::kTransfer || event.end_ns <= event.start_ns) return;
  dma_bytes_.add(event.start_ns, event.end_ns, static_cast<double>(event.bytes));
}

std::vector<HtmlReport::Stall> HtmlReport::stalls() const {
  std::vector<Stall> list;
  list.reserve(stalls_.size());
  for (const auto& [key, stall] : stalls_) list.push_back(stall);
  std::stable_sort(list.begin(), list.end(),
                   [](const Stall& a, const Stall& b) { return a.wait_ns > b.wait_ns; });
  return list;
}

void HtmlReport::finish(const json& statistics, double kernel_ns) {
  target_.write(render(statistics, kernel_ns));
  target_.commit();
}

std::string HtmlReport::render(const json& statistics, double kernel_ns) const {
  std::string page;
  page += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  page += "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">";
  page += fmt::format("<title>trnsim: {} on {}</title>", escape(program_.name),
                      escape(statistics.value("/provenance/config"_json_pointer, std::string())));
  page += "<style>";
  page += kStyle;
  page += "</style></head><body>\n";
  page += fmt::format("<h1>{}</h1><p class=\"note\">{}</p>\n", escape(program_.name),
                      escape(program_.description));

  // 1. Summary: the same text as `trnsim run`.
  page +=
      "<h2 id=\"summary\">Summary</h2>\n<pre>" + escape(format_summary(statistics)) + "</pre>\n";

  // 2. Utilisation over time.
  page += "<h2 id=\"utilisation\">Engine utilisation over time</h2>\n";
  util::LineChart over_time{
      "busy share per time bin, all cores", "time (us)", "busy (%)", false, false, {}};
  for (const Engine engine : kSequencers) {
    const RateCounter& counter = *busy_[static_cast<std::size_t>(engine)];
    if (counter.empty()) continue;
    util::LineSeries series{std::string(kernel::engine_name(engine)), {}};
    for (const auto& [time_us, busy_per_ns] : per_ns(counter, kernel_ns)) {
      series.points.emplace_back(time_us, std::min(busy_per_ns / cores_ * 100.0, 100.0));
    }
    over_time.series.push_back(std::move(series));
  }
  const double dma_peak_gbps =
      number_or(statistics, "/memory_system/dma/peak_bandwidth_per_core_gbps"_json_pointer, 0);
  if (!dma_bytes_.empty() && dma_peak_gbps > 0) {
    util::LineSeries series{"dma (bytes vs peak)", {}};
    for (const auto& [time_us, bytes_per_ns] : per_ns(dma_bytes_, kernel_ns)) {
      series.points.emplace_back(time_us,
                                 std::min(bytes_per_ns / (dma_peak_gbps * cores_) * 100.0, 100.0));
    }
    over_time.series.push_back(std::move(series));
  }
  if (over_time.series.empty()) {
    page += "<p class=\"note\">No instruction took time.</p>\n";
  } else {
    page += "<div class=\"chart\">" + util::line_chart_svg(over_time) + "</div>\n";
    page +=
        "<p class=\"note\">Each engine's sequencer: the share of each time bin it spent on "
        "instructions, summed over cores and divided by their number (TensorE tiles that "
        "run at once are capped at 100%). DMA: bytes moved per bin against the cores' peak "
        "DMA bandwidth.</p>\n";
  }

  // 3. Roofline and achieved vs peak.
  page += "<h2 id=\"roofline\">Roofline and engine shares</h2>\n";
  const double flops = sum_over_cores(statistics, "/tensor/flops"_json_pointer);
  const double hbm_bytes = sum_over_cores(statistics, "/hbm/read_bytes"_json_pointer) +
                           sum_over_cores(statistics, "/hbm/write_bytes"_json_pointer);
  const double peak_tflops = sum_over_cores(statistics, "/tensor/peak_bf16_tflops"_json_pointer);
  const double bandwidth_gbps = dma_peak_gbps * cores_;
  if (flops > 0 && hbm_bytes > 0 && peak_tflops > 0 && bandwidth_gbps > 0 && kernel_ns > 0) {
    const double intensity = flops / hbm_bytes;              // FLOP per HBM byte
    const double achieved_tflops = flops / kernel_ns / 1e3;  // FLOP/ns = GFLOP/s
    const double ridge = peak_tflops * 1e3 / bandwidth_gbps;
    util::LineChart roofline{"TensorE roofline (BF16 peak; memory roof: the cores' DMA bandwidth)",
                             "arithmetic intensity (FLOP per HBM byte)",
                             "TFLOP/s",
                             true,
                             true,
                             {}};
    roofline.series.push_back(util::roofline_roof("roof", peak_tflops, bandwidth_gbps, intensity));
    roofline.series.push_back({"this kernel", {{intensity, achieved_tflops}}});
    page += "<div class=\"chart\">" + util::line_chart_svg(roofline) + "</div>\n";
    page += fmt::format(
        "<p class=\"note\">{:.3g} FLOP per HBM byte; {:.3g} TFLOP/s achieved of {:.3g} peak "
        "({:.1f}%); the ridge is at {:.3g} FLOP/byte, so this kernel is {} by its "
        "intensity.</p>\n",
        intensity, achieved_tflops, peak_tflops, 100.0 * achieved_tflops / peak_tflops, ridge,
        intensity < ridge ? "memory-bound" : "compute-bound");
  } else {
    page +=
        "<p class=\"note\">No TensorE roofline: the kernel has no matmul FLOPs or no HBM "
        "traffic.</p>\n";
  }
  util::BarChart shares{
      "busy and utilisation per engine (core 0)", "engine", "% of the kernel", {}, {}};
  util::BarSeries active{"active (busy) %", {}};
  util::BarSeries utilisation{"utilisation of peak %", {}};
  if (statistics.contains("cores") && !statistics["cores"].empty()) {
    const json& engines = statistics["cores"][0]["engines"];
    for (const auto& [name, engine] : engines.items()) {
      if (engine.value("instructions", 0) == 0) continue;
      shares.categories.push_back(name);
      active.values.push_back(engine.value("active_pct", 0.0));
      utilisation.values.push_back(engine.value("utilisation_pct", 0.0));
    }
  }
  if (!shares.categories.empty()) {
    shares.series = {active, utilisation};
    page += "<div class=\"chart\">" + util::bar_chart_svg(shares) + "</div>\n";
  }

  // 4. Stalls.
  page += "<h2 id=\"stalls\">Dependency stalls</h2>\n";
  const std::vector<Stall> list = stalls();
  if (list.empty()) {
    page += "<p class=\"note\">No instruction waited for a dependency.</p>\n";
  } else {
    page +=
        "<p class=\"note\">Time instructions were ready on their engine but waited for a "
        "producer, summed per (producer statement, waiting statement); waits of different "
        "instructions may overlap, so the sums can exceed the kernel time.</p>\n";
    page +=
        "<table><tr><th>producer</th><th>&rarr; waiting</th><th>waits</th>"
        "<th>total wait (us)</th><th>mean (ns)</th></tr>\n";
    const auto describe = [this](std::uint32_t statement, Engine engine) {
      std::string text = "<b>" + escape(kernel::engine_name(engine)) + "</b> ";
      if (statement == ~std::uint32_t{0}) return text + "(an earlier instruction)";
      const InstructionLabels::StatementText& label = labels_.statement(statement);
      text += escape(label.label);
      if (!label.source.empty())
        text += " <span class=\"note\">" + escape(label.source) + "</span>";
      return text;
    };
    for (std::size_t i = 0; i < list.size() && i < kStallsShown; ++i) {
      const Stall& stall = list[i];
      page += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.3f}</td>"
          "<td class=\"n\">{:.1f}</td></tr>\n",
          describe(stall.producer_statement, stall.producer_engine),
          describe(stall.consumer_statement, stall.consumer_engine), stall.waits,
          stall.wait_ns / 1e3, stall.wait_ns / static_cast<double>(stall.waits));
    }
    page += "</table>\n";
  }

  // 5. Source lines.
  if (statistics.contains("source_lines") && statistics["source_lines"].is_array()) {
    page += "<h2 id=\"source-lines\">Kernel source lines</h2>\n";
    page +=
        "<table><tr><th>source</th><th>statement</th><th>engines</th><th>instructions</th>"
        "<th>busy (us)</th><th>busy % of kernel</th><th>wait (us)</th></tr>\n";
    for (const json& line : statistics["source_lines"]) {
      page += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.3f}"
          "</td><td class=\"n\">{:.1f}</td><td class=\"n\">{:.3f}</td></tr>\n",
          escape(line.value("source", "")), escape(line.value("label", "")),
          escape(line.value("engines", "")), line.value("instructions", 0),
          line.value("busy_ns", 0.0) / 1e3, line.value("busy_pct", 0.0),
          line.value("wait_ns", 0.0) / 1e3);
    }
    page +=
        "</table>\n<p class=\"note\">Busy and wait are sums over the line's instructions, "
        "which may overlap in time.</p>\n";
  }
  page += "</body></html>\n";
  return page;
}

}  // namespace trnsim::report
