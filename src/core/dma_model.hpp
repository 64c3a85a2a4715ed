// Simple DMA timing of one NeuronCore, the fallback of the DMA-engine/HBM model (dma::DmaSystem,
// src/dma), with the same three parts: each DMA pays a latency (dma.fixed_cost_ns plus descriptor
// generation: overlappable with other DMAs), then its engines (8 partitions each) are busy for
// the longer of their descriptors' occupancy (dma.descriptor_overhead_ns each) and their bytes
// at the engines' bandwidth (the two pipeline), and it occupies the core's shared DMA data path
// for bytes / the core's DMA bandwidth. Transfers on one (trigger engine, queue) complete in
// issue order. Analytic: no SystemC modules, completion known at submission.
// Leaves out: HBM banks/channels and contention between cores, packet-level arbitration.
#pragma once

#include <array>
#include <cstdint>
#include <systemc>
#include <vector>

#include "config/params.hpp"
#include "core/dma_backend.hpp"
#include "kernel/instruction.hpp"

namespace trnsim::core {

/// Uncontended timing of one DMA, a pure function of the instruction and the config.
struct DmaTiming {
  double latency_ns = 0;          ///< fixed cost before data moves (overlaps other transfers)
  double transfer_ns = 0;         ///< time the data path is occupied
  std::uint32_t engines = 1;      ///< DMA engines the transfer spreads over
  std::uint64_t descriptors = 1;  ///< contiguous chunks (one per partition and run)
};
DmaTiming dma_timing(const kernel::Instruction& instruction, const config::Params& params);

/// Placeholder backend: one SimpleDmaModel per core, completion known at submission.
class SimpleDmaModel {
 public:
  explicit SimpleDmaModel(const config::Params& params) : params_(params) {}

  struct Result {
    sc_core::sc_time data_start;
    sc_core::sc_time complete;
    double transfer_ns = 0;
  };
  /// Schedules a DMA issued at `issue`; returns when its data moves and when it completes.
  Result transfer(const kernel::Instruction& instruction, const sc_core::sc_time& issue);

 private:
  const config::Params& params_;
  static constexpr std::size_t kTriggers = 5;  // tensor, vector, scalar, gpsimd, sync
  static constexpr std::size_t kQueues = 16;
  std::array<sc_core::sc_time, kTriggers * kQueues> queue_free_{};
  sc_core::sc_time datapath_free_;
};

class SimpleDmaBackend final : public DmaBackend {
 public:
  SimpleDmaBackend(const config::Params& params, std::uint32_t cores);
  void submit(std::uint32_t pid, std::uint64_t id, const kernel::Instruction& instruction,
              DmaClient& client) override;

 private:
  std::vector<SimpleDmaModel> models_;  ///< by pid
};

}  // namespace trnsim::core
