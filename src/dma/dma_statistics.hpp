// Per-core DMA counters and their JSON form, shared by both DMA models (PacketMemorySystem, the
// packet model, and TransferLevelDma), so `memory_system.dma.cores[]` has one schema whichever
// model ran. Pure: no simulation.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "dma/stack_layout.hpp"
#include "trnsim/stats.hpp"
#include "util/percent.hpp"

namespace trnsim::dma {

using util::percent;

/// Per-core DMA counters (all queues), and per queue.
struct QueueStats {
  std::uint64_t transfers = 0;
  std::uint64_t bytes = 0;
  double active_ns = 0;  ///< union of [first data, completion] of its transfers
  double busy_until_ns = 0;
};
struct CoreDmaStats {
  std::uint64_t transfers = 0;
  std::uint64_t bytes = 0;
  std::uint64_t descriptors = 0;
  std::uint64_t packets = 0;
  double engine_busy_ns = 0;  ///< sum over engines of data-path occupancy
  double active_ns = 0;       ///< union over transfers of [first data, completion]
  double busy_until_ns = 0;
  std::vector<QueueStats> queues;
};

/// Bytes the core's DMAs read from and wrote to its SBUF and PSUM.
struct OnChipBytes {
  std::uint64_t sbuf_read = 0;
  std::uint64_t sbuf_write = 0;
  std::uint64_t psum_read = 0;
  std::uint64_t psum_write = 0;
};

/// Adds one element of `memory_system.dma.cores`. `peak_bytes_per_ns`: the core's DMA peak;
/// `packets`: included when the model counts them.
void add_core_dma_statistics(stats::Group& core, std::uint32_t pid, const CoreDmaStats& stats,
                             const OnChipBytes& on_chip, double peak_bytes_per_ns,
                             std::uint32_t engines, std::optional<std::uint64_t> packets);

/// Bytes a DMA model moved to and from one HBM stack.
struct StackBytes {
  std::uint64_t read = 0;
  std::uint64_t write = 0;
};

/// Adds `memory_system` of a rate model (`model`: "transfer" or "flow"): "dma" per core that
/// ran DMAs, "hbm" per stack that moved bytes (its cores by `layout`, achieved over
/// `elapsed_ns` against `stack_peak_gbps`). The packet model's form adds packets, channels and
/// row buffers.
void add_rate_model_statistics(stats::Group& memory_system, std::string_view model,
                               double elapsed_ns, double core_peak_bytes_per_ns,
                               std::uint32_t engines, const std::vector<CoreDmaStats>& cores,
                               const std::vector<OnChipBytes>& on_chip,
                               const std::vector<StackBytes>& stacks, const StackLayout& layout,
                               double stack_peak_gbps);

/// The cores whose home stack is `stack` (an HBM stack's `cores`).
std::vector<std::uint64_t> cores_served(const StackLayout& layout, std::uint32_t cores,
                                        std::uint32_t stack);

/// The `dma` component's debug line for a DMA a model planned (util/log.hpp): call it only when
/// log::debug_enabled("dma") said so when the model was built.
void trace_plan(std::string_view model, std::uint32_t pid, std::uint64_t id, std::uint64_t bytes,
                std::uint32_t engines, std::uint64_t descriptors, double issue_ns, double ready_ns);

/// Adds `[first_ns, done_ns]` to a union of intervals kept as (busy_until, active total).
inline void add_active_interval(double first_ns, double done_ns, double& busy_until_ns,
                                double& active_ns) {
  if (done_ns > busy_until_ns) {
    active_ns += done_ns - (first_ns > busy_until_ns ? first_ns : busy_until_ns);
    busy_until_ns = done_ns;
  }
}

/// A DMA whose data moved over [first_ns, complete_ns] on `queue`, in the statistics every model
/// keeps: the core's and the queue's active time, and the latest completion.
inline void count_completion(CoreDmaStats& stats, std::uint32_t queue, double first_ns,
                             double complete_ns, double& last_complete_ns) {
  add_active_interval(first_ns, complete_ns, stats.busy_until_ns, stats.active_ns);
  QueueStats& queue_stats = stats.queues[queue];
  add_active_interval(first_ns, complete_ns, queue_stats.busy_until_ns, queue_stats.active_ns);
  if (complete_ns > last_complete_ns) last_complete_ns = complete_ns;
}

}  // namespace trnsim::dma
