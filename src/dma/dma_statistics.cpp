#include "dma/dma_statistics.hpp"

#include "util/log.hpp"

namespace trnsim::dma {

nlohmann::json core_dma_json(std::uint32_t pid, const CoreDmaStats& stats,
                             const OnChipBytes& on_chip, double peak_bytes_per_ns,
                             std::uint32_t engines, std::optional<std::uint64_t> packets) {
  const double achieved =
      stats.active_ns > 0 ? static_cast<double>(stats.bytes) / stats.active_ns : 0;
  nlohmann::json queues = nlohmann::json::array();
  for (std::size_t q = 0; q < stats.queues.size(); ++q) {
    const QueueStats& queue = stats.queues[q];
    if (queue.transfers == 0) continue;
    queues.push_back({{"queue", q},
                      {"transfers", queue.transfers},
                      {"bytes", queue.bytes},
                      {"active_ns", queue.active_ns}});
  }
  nlohmann::json core = {{"core", pid},
                         {"transfers", stats.transfers},
                         {"bytes", stats.bytes},
                         {"descriptors", stats.descriptors}};
  if (packets) core["packets"] = *packets;
  core["active_ns"] = stats.active_ns;
  core["achieved_bandwidth_gbps"] = achieved;
  core["efficiency_pct"] = percent(achieved, peak_bytes_per_ns);
  core["engine_busy_pct"] = percent(stats.engine_busy_ns, stats.active_ns * engines);
  core["sbuf_read_bytes"] = on_chip.sbuf_read;
  core["sbuf_write_bytes"] = on_chip.sbuf_write;
  core["psum_read_bytes"] = on_chip.psum_read;
  core["psum_write_bytes"] = on_chip.psum_write;
  core["queues"] = queues;
  return core;
}

nlohmann::json rate_model_statistics(std::string_view model, double elapsed_ns,
                                     double core_peak_bytes_per_ns, std::uint32_t engines,
                                     const std::vector<CoreDmaStats>& cores,
                                     const std::vector<OnChipBytes>& on_chip,
                                     const std::vector<StackBytes>& stacks,
                                     const StackLayout& layout, double stack_peak_gbps) {
  nlohmann::json core_list = nlohmann::json::array();
  for (std::uint32_t pid = 0; pid < cores.size(); ++pid) {
    if (cores[pid].transfers == 0) continue;
    core_list.push_back(core_dma_json(pid, cores[pid], on_chip[pid], core_peak_bytes_per_ns,
                                      engines, std::nullopt));
  }
  nlohmann::json out;
  out["model"] = std::string(model);
  out["dma"] = {{"peak_bandwidth_per_core_gbps", core_peak_bytes_per_ns}, {"cores", core_list}};
  nlohmann::json stack_list = nlohmann::json::array();
  for (std::uint32_t s = 0; s < stacks.size(); ++s) {
    const StackBytes& stack = stacks[s];
    if (stack.read + stack.write == 0) continue;
    nlohmann::json served = nlohmann::json::array();
    for (std::uint32_t pid = 0; pid < cores.size(); ++pid) {
      if (layout.home(pid) == s) served.push_back(pid);
    }
    const auto bytes = static_cast<double>(stack.read + stack.write);
    const double achieved = elapsed_ns > 0 ? bytes / elapsed_ns : 0;
    stack_list.push_back({{"stack", s},
                          {"cores", served},
                          {"read_bytes", stack.read},
                          {"write_bytes", stack.write},
                          {"achieved_bandwidth_gbps", achieved},
                          {"peak_bandwidth_gbps", stack_peak_gbps},
                          {"utilization_pct", percent(achieved, stack_peak_gbps)}});
  }
  out["hbm"] = {{"elapsed_ns", elapsed_ns}, {"stacks", stack_list}};
  return out;
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
