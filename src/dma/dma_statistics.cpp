#include "dma/dma_statistics.hpp"

#include "util/log.hpp"

namespace trnsim::dma {

using stats::Unit;

void add_core_dma_statistics(stats::Group& core, std::uint32_t pid, const CoreDmaStats& stats,
                             const OnChipBytes& on_chip, double peak_bytes_per_ns,
                             std::uint32_t engines, std::optional<std::uint64_t> packets) {
  const double achieved =
      stats.active_ns > 0 ? static_cast<double>(stats.bytes) / stats.active_ns : 0;
  core.add("core", pid, Unit::kIndex);
  core.add("transfers", stats.transfers, Unit::kCount);
  core.add("bytes", stats.bytes, Unit::kBytes);
  core.add("descriptors", stats.descriptors, Unit::kCount);
  if (packets) core.add("packets", *packets, Unit::kCount);
  core.add("active_ns", stats.active_ns, Unit::kNs);
  core.add("achieved_bandwidth_gbps", achieved, Unit::kGbps);
  core.add("efficiency_pct", percent(achieved, peak_bytes_per_ns), Unit::kPercent);
  core.add("engine_busy_pct", percent(stats.engine_busy_ns, stats.active_ns * engines),
           Unit::kPercent);
  core.add("sbuf_read_bytes", on_chip.sbuf_read, Unit::kBytes);
  core.add("sbuf_write_bytes", on_chip.sbuf_write, Unit::kBytes);
  core.add("psum_read_bytes", on_chip.psum_read, Unit::kBytes);
  core.add("psum_write_bytes", on_chip.psum_write, Unit::kBytes);
  std::deque<stats::Group>& queues = core.list("queues");
  for (std::size_t q = 0; q < stats.queues.size(); ++q) {
    const QueueStats& queue = stats.queues[q];
    if (queue.transfers == 0) continue;
    stats::Group& element = queues.emplace_back("queues");
    element.add("queue", q, Unit::kIndex);
    element.add("transfers", queue.transfers, Unit::kCount);
    element.add("bytes", queue.bytes, Unit::kBytes);
    element.add("active_ns", queue.active_ns, Unit::kNs);
  }
}

std::vector<std::uint64_t> cores_served(const StackLayout& layout, std::uint32_t cores,
                                        std::uint32_t stack) {
  std::vector<std::uint64_t> served;
  for (std::uint32_t pid = 0; pid < cores; ++pid) {
    if (layout.home(pid) == stack) served.push_back(pid);
  }
  return served;
}

void add_rate_model_statistics(stats::Group& memory_system, std::string_view model,
                               double elapsed_ns, double core_peak_bytes_per_ns,
                               std::uint32_t engines, const std::vector<CoreDmaStats>& cores,
                               const std::vector<OnChipBytes>& on_chip,
                               const std::vector<StackBytes>& stacks, const StackLayout& layout,
                               double stack_peak_gbps) {
  memory_system.add("model", model, Unit::kText);
  stats::Group& dma = memory_system.group("dma");
  dma.add("peak_bandwidth_per_core_gbps", core_peak_bytes_per_ns, Unit::kGbps);
  std::deque<stats::Group>& core_list = dma.list("cores");
  for (std::uint32_t pid = 0; pid < cores.size(); ++pid) {
    if (cores[pid].transfers == 0) continue;
    add_core_dma_statistics(core_list.emplace_back("cores"), pid, cores[pid], on_chip[pid],
                            core_peak_bytes_per_ns, engines, std::nullopt);
  }
  stats::Group& hbm = memory_system.group("hbm");
  hbm.add("elapsed_ns", elapsed_ns, Unit::kNs);
  std::deque<stats::Group>& stack_list = hbm.list("stacks");
  for (std::uint32_t s = 0; s < stacks.size(); ++s) {
    const StackBytes& stack = stacks[s];
    if (stack.read + stack.write == 0) continue;
    const auto bytes = static_cast<double>(stack.read + stack.write);
    const double achieved = elapsed_ns > 0 ? bytes / elapsed_ns : 0;
    stats::Group& element = stack_list.emplace_back("stacks");
    element.add("stack", s, Unit::kIndex);
    element.add("cores", cores_served(layout, static_cast<std::uint32_t>(cores.size()), s),
                Unit::kIndex);
    element.add("read_bytes", stack.read, Unit::kBytes);
    element.add("write_bytes", stack.write, Unit::kBytes);
    element.add("achieved_bandwidth_gbps", achieved, Unit::kGbps);
    element.add("peak_bandwidth_gbps", stack_peak_gbps, Unit::kGbps);
    element.add("utilization_pct", percent(achieved, stack_peak_gbps), Unit::kPercent);
  }
}

void trace_plan(std::string_view model, std::uint32_t pid, std::uint64_t id, std::uint64_t bytes,
                std::uint32_t engines, std::uint64_t descriptors, double issue_ns,
                double ready_ns) {
  log::component("dma").debug(
      "{} model: core {} DMA #{}: {} B over {} engine(s), {} descriptor(s), issued {:.3f} ns, "
      "data may move from {:.3f} ns",
      model, pid, id, bytes, engines, descriptors, issue_ns, ready_ns);
}

}  // namespace trnsim::dma
