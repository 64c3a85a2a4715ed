// Statistics one NeuronCore collects while it runs a kernel. Plain counters and sums, filled by
// the timing model (neuron_core.cpp); derived metrics (utilisation, MFU, bandwidth) are computed
// at report time from these and the config (report/summary.hpp).
#pragma once

#include <array>
#include <cstdint>

#include "kernel/instruction.hpp"

namespace trnsim::core {

struct EngineStats {
  std::uint64_t instructions = 0;
  double active_ns = 0;  ///< sum of busy time (for kDma: time the core's DMA data path moves data)
  /// Time the engine sat idle with its next instruction ready to run but waiting for a
  /// dependency, attributed to the engine that produced the awaited result, ns.
  std::array<double, kernel::kEngineCount> wait_ns_by_producer{};
  /// Time the engine could not start because a shared port was busy (NC-v2 SBUF/PSUM sharing), ns.
  double port_wait_ns = 0;
  std::array<std::uint64_t, kernel::kOpcodeCount> op_counts{};

  double wait_ns() const {
    double total = 0;
    for (double w : wait_ns_by_producer) total += w;
    return total;
  }
};

struct CoreStats {
  std::uint32_t pid = 0;
  std::array<EngineStats, kernel::kEngineCount> engines{};
  double end_ns = 0;  ///< when the last result of this core became visible
  std::uint64_t instructions = 0;
  std::uint64_t matmul_flops = 0;  ///< 2*K*M*N summed over nc_matmul(_mx)
  double tensor_ideal_ns = 0;      ///< the matmuls' FLOPs at the peak rate of their dtype
  std::uint64_t hbm_read_bytes = 0;
  std::uint64_t hbm_write_bytes = 0;
  std::uint64_t dma_transfers = 0;
  std::uint64_t dma_bytes = 0;
  double throttled_ns = 0;  ///< extra TensorE time caused by throttling
};

}  // namespace trnsim::core
