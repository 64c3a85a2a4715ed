#include "report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "util/percent.hpp"

namespace trnsim::report {

using core::kReportedUnits;
using kernel::Engine;
using nlohmann::json;
using util::percent;

namespace {

/// Threshold of the bottleneck line: a unit at this utilisation or above bounds the kernel.
constexpr double kBoundPct = 70.0;

/// How busy `unit` is, with the figure the bottleneck compares: "tensor is busy 80.3% of the
/// kernel time", "the DMA's dma_engines is at 93.3% of its 368.0 GB/s over the kernel time".
std::string utilisation_phrase(const json& core, const std::string& unit) {
  const double pct = core["engines"][unit]["utilisation_pct"].get<double>();
  if (unit != kernel::engine_name(Engine::kDma)) {
    return fmt::format("{} is busy {:.1f}% of the kernel time", unit, pct);
  }
  const std::string resource = core["dma"]["busiest_resource"].get<std::string>();
  return fmt::format("the DMA's {} is at {:.1f}% of its {:.1f} GB/s over the kernel time", resource,
                     pct, core["dma"]["resources"][resource]["peak_gbps"].get<double>());
}

/// One line answering "what is my bottleneck", from the per-engine figures of one core: the
/// unit with the highest utilisation_pct when it reaches kBoundPct, else the largest dependency
/// wait.
std::string bottleneck_line(const json& core, double kernel_ns) {
  std::string busiest;
  double busiest_pct = -1;
  std::string runner_up;
  double runner_up_pct = -1;
  for (Engine unit : kReportedUnits) {
    const std::string name(kernel::engine_name(unit));
    if (unit == Engine::kSync) continue;
    const double pct = core["engines"][name]["utilisation_pct"].get<double>();
    if (pct > busiest_pct) {
      runner_up = busiest;
      runner_up_pct = busiest_pct;
      busiest_pct = pct;
      busiest = name;
    } else if (pct > runner_up_pct) {
      runner_up_pct = pct;
      runner_up = name;
    }
  }
  if (busiest_pct >= kBoundPct) {
    std::string line = busiest + "-bound: " + utilisation_phrase(core, busiest);
    if (runner_up_pct >= kBoundPct) line += "; " + utilisation_phrase(core, runner_up);
    return line;
  }
  // No unit is saturated: name the largest dependency wait.
  std::string waiter;
  std::string producer;
  double longest = 0;
  for (Engine unit : kReportedUnits) {
    const std::string name(kernel::engine_name(unit));
    for (const auto& [from, wait] :
         core["engines"][name]["dependency_wait_by_producer_ns"].items()) {
      if (wait.get<double>() > longest) {
        longest = wait.get<double>();
        waiter = name;
        producer = from;
      }
    }
  }
  const std::string verdict =
      fmt::format("latency-bound: the busiest unit ({}) is at only {:.1f}%", busiest, busiest_pct);
  if (longest <= 0) return verdict;
  return fmt::format("{}; {} waits {:.2f} us ({:.1f}% of the kernel) on {}", verdict, waiter,
                     longest / 1e3, percent(longest, kernel_ns), producer);
}

/// The summary's table of the busiest source lines (statistics "source_lines", busiest first).
std::string source_lines_table(const json& lines) {
  constexpr std::size_t kShown = 10;
  const std::size_t shown = std::min(kShown, lines.size());
  std::size_t width = std::string_view("source").size();
  for (std::size_t i = 0; i < shown; ++i) {
    width = std::max(width, lines[i]["source"].get<std::string>().size());
  }
  std::string out = fmt::format(
      "source lines    {} of {} by busy time; busy and wait are sums over the lines' "
      "instructions, which may overlap in time\n",
      shown == lines.size() ? "all" : fmt::format("top {}", shown), lines.size());
  out += fmt::format("{:<{}} {:>12} {:>12} {:>8} {:>12}  {}\n", "source", width, "instructions",
                     "busy_us", "busy%", "dep_wait_us", "engines");
  for (std::size_t i = 0; i < shown; ++i) {
    const json& line = lines[i];
    out += fmt::format("{:<{}} {:>12} {:>12.3f} {:>8.1f} {:>12.3f}  {}\n",
                       line["source"].get<std::string>(), width,
                       line["instructions"].get<std::uint64_t>(),
                       line["busy_ns"].get<double>() / 1e3, line["busy_pct"].get<double>(),
                       line["wait_ns"].get<double>() / 1e3, line["engines"].get<std::string>());
  }
  return out;
}

}  // namespace

RunInfo run_info_of(const kernel::Program& program, const kernel::PreparedKernel& prepared,
                    std::string kernel_hash, std::string config_name, std::string version) {
  RunInfo info;
  info.kernel_name = program.name;
  info.kernel_file = program.file;
  info.params = json::object();
  for (std::size_t i = 0; i < program.params.size(); ++i) {
    const std::uint32_t slot = program.param_slot(i);
    if (!program.params[i].per_core && slot < prepared.global_env.size()) {
      info.params[program.params[i].name] = prepared.global_env[slot];
    }
  }
  info.kernel_hash = std::move(kernel_hash);
  info.config_name = std::move(config_name);
  info.version = std::move(version);
  return info;
}

json run_statistics(const system::SimulationResult& result, const config::Params& params,
                    const RunInfo& info) {
  using stats::Unit;
  // The report's own statistics: the run's time and the system's totals.
  stats::Group report;
  const double kernel_ns = result.kernel_ns;
  const double tensor_clock_ghz = params.tensor.clock_ghz;
  stats::Group& time = report.group("time");
  time.add("kernel_ns", kernel_ns, Unit::kNs);
  time.add("kernel_us", kernel_ns / 1e3, Unit::kUs);
  time.add("kernel_tensor_cycles", static_cast<std::uint64_t>(kernel_ns * tensor_clock_ghz + 0.5),
           Unit::kCycles);
  time.add("tensor_clock_ghz", tensor_clock_ghz, Unit::kGhz);
  time.add("launch_overhead_ns", result.launch_overhead_ns, Unit::kNs);
  time.add("total_with_launch_ns", kernel_ns + result.launch_overhead_ns, Unit::kNs);
  std::uint64_t flops = 0;
  std::uint64_t hbm_bytes = 0;
  double ideal_ns = 0;
  for (const core::CoreStats& core : result.cores) {
    flops += core.matmul_flops;
    hbm_bytes += core.hbm_read_bytes + core.hbm_write_bytes;
    ideal_ns += core.tensor_ideal_ns;
  }
  const double n = static_cast<double>(std::max<std::size_t>(1, result.cores.size()));
  stats::Group& system = report.group("system");
  system.add("cores", result.cores.size(), Unit::kCount);
  system.add("instructions", result.instructions, Unit::kCount);
  system.add("flops", flops, Unit::kCount);
  system.add("hbm_bytes", hbm_bytes, Unit::kBytes);
  system.add("mfu_pct", percent(ideal_ns / n, kernel_ns), Unit::kPercent);
  system.add("hbm_achieved_gbps", kernel_ns > 0 ? hbm_bytes / kernel_ns : 0.0, Unit::kGbps);

  // The blocks' statistics and the report's, rendered; then what analyses them.
  json stats = result.statistics.to_json();
  json own = report.to_json();
  for (auto& [key, value] : own.items()) stats[key] = std::move(value);
  stats["provenance"] = {{"trnsim_version", info.version},
                         {"kernel",
                          {{"name", info.kernel_name},
                           {"file", info.kernel_file},
                           {"params", info.params},
                           {"hash", info.kernel_hash}}},
                         {"config", info.config_name}};
  if (!stats.contains("cores")) stats["cores"] = json::array();
  for (json& core : stats["cores"]) core["bottleneck"] = bottleneck_line(core, kernel_ns);
  return stats;
}

std::string format_summary(const json& stats) {
  std::string out;
  const json& provenance = stats["provenance"];
  const json& time = stats["time"];
  out += fmt::format("kernel {} on {}\n", provenance["kernel"]["name"].get<std::string>(),
                     provenance["config"].get<std::string>());
  out += fmt::format(
      "time            {:.3f} us  ({} TensorE cycles at {} GHz); launch overhead "
      "{:.1f} us reported separately\n",
      time["kernel_us"].get<double>(), time["kernel_tensor_cycles"].get<std::uint64_t>(),
      time["tensor_clock_ghz"].get<double>(), time["launch_overhead_ns"].get<double>() / 1e3);
  for (const json& core : stats["cores"]) {
    if (stats["cores"].size() > 1) out += fmt::format("core {}\n", core["pid"].get<int>());
    out += fmt::format("bottleneck      {}\n", core["bottleneck"].get<std::string>());
    out +=
        fmt::format("{:<8} {:>12} {:>12} {:>8} {:>8} {:>12} {:>7}  {}\n", "engine", "instructions",
                    "active_us", "active%", "util%", "dep_wait_us", "wait%", "waiting on (us)");
    for (Engine unit : kReportedUnits) {
      const std::string name(kernel::engine_name(unit));
      const json& engine = core["engines"][name];
      if (unit == Engine::kCollective && engine["instructions"].get<std::uint64_t>() == 0) continue;
      std::string waits;
      for (const auto& [producer, wait] : engine["dependency_wait_by_producer_ns"].items()) {
        if (!waits.empty()) waits += ", ";
        waits += fmt::format("{} {:.2f}", producer, wait.get<double>() / 1e3);
      }
      out += fmt::format(
          "{:<8} {:>12} {:>12.3f} {:>8.1f} {:>8.1f} {:>12.3f} {:>7.1f}  {}\n", name,
          engine["instructions"].get<std::uint64_t>(), engine["active_ns"].get<double>() / 1e3,
          engine["active_pct"].get<double>(), engine["utilisation_pct"].get<double>(),
          engine["dependency_wait_ns"].get<double>() / 1e3,
          engine["dependency_wait_pct"].get<double>(), waits);
    }
    const json& tensor = core["tensor"];
    out += fmt::format(
        "tensor          {:.3e} FLOP, {:.2f} TFLOPS achieved of {:.2f} peak BF16, "
        "MFU {:.1f}%\n",
        static_cast<double>(tensor["flops"].get<std::uint64_t>()),
        tensor["achieved_tflops"].get<double>(), tensor["peak_bf16_tflops"].get<double>(),
        tensor["mfu_pct"].get<double>());
    const json& hbm = core["hbm"];
    out += fmt::format("hbm             {} B read, {} B written, {:.1f} GB/s achieved\n",
                       hbm["read_bytes"].get<std::uint64_t>(),
                       hbm["write_bytes"].get<std::uint64_t>(), hbm["achieved_gbps"].get<double>());
    const json& dma = core["dma"];
    out += fmt::format(
        "dma             {} transfers, {} B, {:.1f} GB/s achieved, moving data {:.1f}% of "
        "the time\n",
        dma["transfers"].get<std::uint64_t>(), dma["bytes"].get<std::uint64_t>(),
        dma["achieved_gbps"].get<double>(), dma["active_pct"].get<double>());
    std::string resources;
    for (const auto& [name, resource] : dma["resources"].items()) {
      if (!resources.empty()) resources += ", ";
      resources +=
          fmt::format("{} {:.1f}% of {:.1f} GB/s", name, resource["utilisation_pct"].get<double>(),
                      resource["peak_gbps"].get<double>());
    }
    out += fmt::format("dma util        {:.1f}%: {}\n", dma["utilisation_pct"].get<double>(),
                       resources);
  }
  if (stats.contains("source_lines")) out += source_lines_table(stats["source_lines"]);
  return out;
}

}  // namespace trnsim::report
