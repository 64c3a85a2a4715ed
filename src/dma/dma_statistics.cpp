#include "dma/dma_statistics.hpp"

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

}  // namespace trnsim::dma
