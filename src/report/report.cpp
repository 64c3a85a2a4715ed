#include "report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace trnsim::report {

using kernel::Engine;
using nlohmann::json;

namespace {

/// Units whose busy time can bound a kernel, in report order.
constexpr std::array<Engine, 7> kReportedUnits{Engine::kTensor,    Engine::kVector, Engine::kScalar,
                                               Engine::kGpSimd,    Engine::kSync,   Engine::kDma,
                                               Engine::kCollective};

double percent(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

json engine_statistics(const core::EngineStats& engine, double kernel_ns) {
  json out;
  out["instructions"] = engine.instructions;
  out["active_ns"] = engine.active_ns;
  out["active_pct"] = percent(engine.active_ns, kernel_ns);
  out["dependency_wait_ns"] = engine.wait_ns();
  json by_producer = json::object();
  for (std::size_t i = 0; i < engine.wait_ns_by_producer.size(); ++i) {
    if (engine.wait_ns_by_producer[i] > 0) {
      by_producer[std::string(kernel::engine_name(static_cast<Engine>(i)))] =
          engine.wait_ns_by_producer[i];
    }
  }
  out["dependency_wait_by_producer_ns"] = by_producer;
  out["port_wait_ns"] = engine.port_wait_ns;
  json ops = json::object();
  for (std::size_t op = 0; op < engine.op_counts.size(); ++op) {
    if (engine.op_counts[op] > 0) {
      ops[std::string(kernel::opcode_name(static_cast<kernel::Opcode>(op)))] = engine.op_counts[op];
    }
  }
  out["instructions_by_op"] = ops;
  return out;
}

/// One line answering "what is my bottleneck", from the per-engine figures of one core.
std::string bottleneck_line(const json& core, double kernel_ns) {
  std::string busiest;
  double busiest_pct = -1;
  for (Engine unit : kReportedUnits) {
    const std::string name(kernel::engine_name(unit));
    if (unit == Engine::kSync) continue;
    const double pct = core["engines"][name]["active_pct"].get<double>();
    if (pct > busiest_pct) {
      busiest_pct = pct;
      busiest = name;
    }
  }
  if (busiest_pct >= 70.0) {
    return fmt::format("{}-bound: {} is busy {:.1f}% of the kernel time", busiest, busiest,
                       busiest_pct);
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
  if (longest <= 0) {
    return fmt::format("latency-bound: the busiest unit ({}) is busy only {:.1f}%", busiest,
                       busiest_pct);
  }
  return fmt::format(
      "latency-bound: the busiest unit ({}) is busy only {:.1f}%; {} waits {:.2f} us ({:.1f}% of "
      "the kernel) on {}",
      busiest, busiest_pct, waiter, longest / 1e3, percent(longest, kernel_ns), producer);
}

/// The summary's table of the busiest source lines (statistics "source_lines", busiest first).
std::string source_lines_table(const json& lines) {
  constexpr std::size_t kShown = 10;
  const std::size_t shown = std::min(kShown, lines.size());
  std::size_t width = std::string_view("source").size();
  for (std::size_t i = 0; i < shown; ++i) {
    width = std::max(width, lines[i]["source"].get<std::string>().size());
  }
  std::string out =
      fmt::format("source lines    {} of {} by busy time (summed over the lines' instructions)\n",
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

json run_statistics(const core::SimulationResult& result, const config::Params& params,
                    const RunInfo& info) {
  json stats;
  stats["provenance"] = {{"trnsim_version", info.version},
                         {"kernel",
                          {{"name", info.kernel_name},
                           {"file", info.kernel_file},
                           {"params", info.params},
                           {"hash", info.kernel_hash}}},
                         {"config", info.config_name}};
  const double kernel_ns = result.kernel_ns;
  const double tensor_clock_ghz = params.tensor.clock_ghz;
  stats["time"] = {
      {"kernel_ns", kernel_ns},
      {"kernel_us", kernel_ns / 1e3},
      {"kernel_tensor_cycles", static_cast<std::uint64_t>(kernel_ns * tensor_clock_ghz + 0.5)},
      {"tensor_clock_ghz", tensor_clock_ghz},
      {"launch_overhead_ns", result.launch_overhead_ns},
      {"total_with_launch_ns", kernel_ns + result.launch_overhead_ns}};

  std::uint64_t flops = 0;
  std::uint64_t hbm_bytes = 0;
  double ideal_ns = 0;
  json cores = json::array();
  for (const core::CoreStats& core : result.cores) {
    json c;
    c["pid"] = core.pid;
    c["instructions"] = core.instructions;
    c["end_ns"] = core.end_ns;
    json engines = json::object();
    for (Engine unit : kReportedUnits) {
      engines[std::string(kernel::engine_name(unit))] =
          engine_statistics(core.engines[static_cast<std::size_t>(unit)], kernel_ns);
    }
    c["engines"] = engines;
    const double seconds = kernel_ns * 1e-9;
    const double peak = params.peak_bf16_flops_per_core();
    c["tensor"] = {{"flops", core.matmul_flops},
                   {"achieved_tflops", seconds > 0 ? core.matmul_flops / seconds / 1e12 : 0.0},
                   {"peak_bf16_tflops", peak / 1e12},
                   {"ideal_ns", core.tensor_ideal_ns},
                   {"mfu_pct", percent(core.tensor_ideal_ns, kernel_ns)},
                   {"throttled_ns", core.throttled_ns}};
    const std::uint64_t core_hbm = core.hbm_read_bytes + core.hbm_write_bytes;
    c["hbm"] = {{"read_bytes", core.hbm_read_bytes},
                {"write_bytes", core.hbm_write_bytes},
                {"achieved_gbps", kernel_ns > 0 ? core_hbm / kernel_ns : 0.0}};
    c["dma"] = {
        {"transfers", core.dma_transfers},
        {"bytes", core.dma_bytes},
        {"active_pct",
         percent(core.engines[static_cast<std::size_t>(Engine::kDma)].active_ns, kernel_ns)},
        {"achieved_gbps", kernel_ns > 0 ? core.dma_bytes / kernel_ns : 0.0}};
    c["bottleneck"] = bottleneck_line(c, kernel_ns);
    cores.push_back(c);
    flops += core.matmul_flops;
    hbm_bytes += core_hbm;
    ideal_ns += core.tensor_ideal_ns;
  }
  stats["cores"] = cores;
  if (!result.memory.is_null()) stats["memory_system"] = result.memory;
  const double n = static_cast<double>(std::max<std::size_t>(1, result.cores.size()));
  stats["system"] = {{"cores", result.cores.size()},
                     {"instructions", result.instructions},
                     {"flops", flops},
                     {"hbm_bytes", hbm_bytes},
                     {"mfu_pct", percent(ideal_ns / n, kernel_ns)},
                     {"hbm_achieved_gbps", kernel_ns > 0 ? hbm_bytes / kernel_ns : 0.0}};
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
    out += fmt::format("{:<8} {:>12} {:>12} {:>8} {:>12}  {}\n", "engine", "instructions",
                       "active_us", "active%", "dep_wait_us", "waiting on (us)");
    for (Engine unit : kReportedUnits) {
      const std::string name(kernel::engine_name(unit));
      const json& engine = core["engines"][name];
      if (unit == Engine::kCollective && engine["instructions"].get<std::uint64_t>() == 0) continue;
      std::string waits;
      for (const auto& [producer, wait] : engine["dependency_wait_by_producer_ns"].items()) {
        if (!waits.empty()) waits += ", ";
        waits += fmt::format("{} {:.2f}", producer, wait.get<double>() / 1e3);
      }
      out +=
          fmt::format("{:<8} {:>12} {:>12.3f} {:>8.1f} {:>12.3f}  {}\n", name,
                      engine["instructions"].get<std::uint64_t>(),
                      engine["active_ns"].get<double>() / 1e3, engine["active_pct"].get<double>(),
                      engine["dependency_wait_ns"].get<double>() / 1e3, waits);
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
    out += fmt::format("dma             {} transfers, {} B, active {:.1f}%\n",
                       dma["transfers"].get<std::uint64_t>(), dma["bytes"].get<std::uint64_t>(),
                       dma["active_pct"].get<double>());
  }
  if (stats.contains("source_lines")) out += source_lines_table(stats["source_lines"]);
  return out;
}

}  // namespace trnsim::report
