// One simulation run: elaborates a NeuronCore per participating core (SPMD, `pid`), runs the
// SystemC kernel to completion and returns the per-core statistics.
// SystemC elaborates once per process: call simulate() at most once per process (sweeps and
// tests of whole runs use child processes).
// Leaves out (for now) HBM sharing between cores and collectives.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "config/params.hpp"
#include "core/collective_backend.hpp"
#include "core/core_stats.hpp"
#include "core/dma_backend.hpp"
#include "core/instruction_source.hpp"
#include "core/neuron_core.hpp"

namespace trnsim::core {

struct SimulationResult {
  std::vector<CoreStats> cores;
  double kernel_ns = 0;           ///< from start until the last result of any core is visible
  double launch_overhead_ns = 0;  ///< configured runtime pre/postamble (reported separately)
  std::uint64_t instructions = 0;
  /// The memory system's statistics (DMA queues, HBM stacks and channels), units in key names.
  nlohmann::json memory;
};

/// Makes the instruction source of core `pid`.
using SourceFactory = std::function<std::unique_ptr<InstructionSource>(std::uint32_t pid)>;

/// Builds the system's collective backend for `cores` cores (called once, during elaboration,
/// after the DMA backend exists, so collective traffic can share the DMA engines and HBM), or
/// returns null when collectives are not modelled.
using CollectiveBackendFactory = std::function<std::unique_ptr<CollectiveBackend>(
    const config::Params&, std::uint32_t cores, DmaBackend& dma)>;

/// Runs `cores` NeuronCores. Rethrows the first InputError raised while walking a program.
SimulationResult simulate(const config::Params& params, std::uint32_t cores,
                          const SourceFactory& make_source,
                          const InstructionObserver& observer = {},
                          const CollectiveBackendFactory& make_collectives = {},
                          const DmaObserver& dma_observer = {});

}  // namespace trnsim::core
