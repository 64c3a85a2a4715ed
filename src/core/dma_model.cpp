#include "core/dma_model.hpp"

#include <algorithm>
#include <cmath>

namespace trnsim::core {

using kernel::AccessPattern;
using kernel::Instruction;
using kernel::MemoryKind;

namespace {

/// Contiguous runs per partition of a pattern (HBM: in total).
std::uint64_t runs_of(const AccessPattern& pattern) {
  const std::uint64_t run = std::max<std::uint64_t>(1, pattern.contiguous_run_elements());
  return std::max<std::uint64_t>(1, pattern.elements_per_partition() / run);
}

/// Partition-like rows of a pattern: on-chip the partition count; HBM the outermost size when
/// it has more than one dimension (a [128, F] HBM tile is 128 rows), else 1.
std::uint32_t rows_of(const AccessPattern& pattern) {
  if (pattern.on_chip()) return pattern.partitions;
  return pattern.rank > 1 ? pattern.sizes[0] : 1;
}

}  // namespace

DmaTiming dma_timing(const Instruction& instruction, const config::Params& params) {
  const config::DmaParams& dma = params.dma;
  const AccessPattern& src = instruction.src();
  const AccessPattern& dst = instruction.dst();
  DmaTiming timing;
  timing.latency_ns = dma.fixed_cost_ns;
  if (instruction.dge == kernel::DgeMode::kHwdge) timing.latency_ns += dma.hwdge_cost_ns;
  if (instruction.dge == kernel::DgeMode::kSwdge) timing.latency_ns += dma.swdge_cost_ns;

  // Each engine owns partitions / engines_per_core partitions (8 of 128 by default).
  const std::uint32_t rows = std::max(rows_of(src), rows_of(dst));
  const std::uint32_t rows_per_engine =
      std::max<std::uint32_t>(1, static_cast<std::uint32_t>(params.sbuf.partitions) /
                                     static_cast<std::uint32_t>(dma.engines_per_core));
  timing.engines = std::clamp<std::uint32_t>((rows + rows_per_engine - 1) / rows_per_engine, 1,
                                             static_cast<std::uint32_t>(dma.engines_per_core));
  // A descriptor per contiguous chunk on each side; the busier side decides.
  const std::uint64_t src_descriptors = runs_of(src) * (src.on_chip() ? src.partitions : 1);
  const std::uint64_t dst_descriptors = runs_of(dst) * (dst.on_chip() ? dst.partitions : 1);
  timing.descriptors = std::max(src_descriptors, dst_descriptors);

  double efficiency = 1.0;
  if (instruction.opcode == kernel::Opcode::kDmaTranspose) {
    efficiency = src.memory == MemoryKind::kHbm ? dma.transpose_efficiency_hbm
                                                : dma.transpose_efficiency_sbuf;
  }
  const double bytes = static_cast<double>(std::max(src.bytes(), dst.bytes()));
  const double bandwidth_gbps =  // GB/s == bytes/ns
      std::min(dma.core_bandwidth_gbps, timing.engines * dma.engine_bandwidth_gbps) * efficiency;
  const double descriptors_per_engine =
      std::ceil(static_cast<double>(timing.descriptors) / timing.engines);
  // Per-descriptor occupancy and per-byte transfer pipeline on each engine: the slower binds.
  timing.transfer_ns =
      std::max(bytes / bandwidth_gbps, descriptors_per_engine * dma.descriptor_overhead_ns);
  return timing;
}

SimpleDmaModel::Result SimpleDmaModel::transfer(const Instruction& instruction,
                                                const sc_core::sc_time& issue) {
  const DmaTiming timing = dma_timing(instruction, params_);
  const std::size_t trigger =
      std::min<std::size_t>(static_cast<std::size_t>(instruction.dma_trigger), kTriggers - 1);
  sc_core::sc_time& queue_free = queue_free_[trigger * kQueues + (instruction.dma_queue % kQueues)];
  const sc_core::sc_time ready = issue + sc_core::sc_time(timing.latency_ns, sc_core::SC_NS);
  Result result;
  result.data_start = std::max({ready, queue_free, datapath_free_});
  result.complete = result.data_start + sc_core::sc_time(timing.transfer_ns, sc_core::SC_NS);
  result.transfer_ns = timing.transfer_ns;
  // The shared path is busy only for this transfer's share of the core's DMA bandwidth.
  const double bytes =
      static_cast<double>(std::max(instruction.src().bytes(), instruction.dst().bytes()));
  datapath_free_ =
      result.data_start +
      sc_core::sc_time(std::min(timing.transfer_ns, bytes / params_.dma.core_bandwidth_gbps),
                       sc_core::SC_NS);
  queue_free = result.complete;
  return result;
}

SimpleDmaBackend::SimpleDmaBackend(const config::Params& params, std::uint32_t cores)
    : models_(cores, SimpleDmaModel(params)) {}

void SimpleDmaBackend::submit(std::uint32_t pid, std::uint64_t id, const Instruction& instruction,
                              DmaClient& client) {
  const SimpleDmaModel::Result result =
      models_.at(pid).transfer(instruction, sc_core::sc_time_stamp());
  client.dma_complete(id, result.complete, result.transfer_ns);
}

}  // namespace trnsim::core
