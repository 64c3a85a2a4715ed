// The composition root: builds the model of a system (chips, their NeuronCores, the memory system
// chosen by dma.model with HBM stacks chosen by hbm.model, the collective backend) as SystemC
// modules, and gathers the per-core and memory-system statistics once the SystemC kernel ran.
// SystemC elaborates once per process: build one System (or call simulate()) per process
// (sweeps and tests of whole runs use child processes).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "config/params.hpp"
#include "core/barrier_hub.hpp"
#include "core/collective_backend.hpp"
#include "core/core_stats.hpp"
#include "core/dma_backend.hpp"
#include "core/instruction_source.hpp"
#include "core/neuron_core.hpp"

namespace trnsim::system {

using core::CollectiveBackend;
using core::CoreStats;
using core::DmaBackend;
using core::DmaObserver;
using core::ExecuteHook;
using core::InstructionObserver;
using core::InstructionSource;
using core::NeuronCore;

struct SimulationResult {
  std::vector<CoreStats> cores;
  double kernel_ns = 0;           ///< from start until the last result of any core is visible
  double launch_overhead_ns = 0;  ///< configured runtime pre/postamble (reported separately)
  std::uint64_t instructions = 0;
  /// The statistics the blocks added (trnsim/stats.hpp): `cores` (one element per core, by
  /// core::add_statistics) and `memory_system` (the DMA queues, HBM stacks and channels).
  stats::Group statistics;
  /// Simulator figures, not results: engine and DMA-dispatcher wake-ups that cores ran ahead
  /// of the SystemC kernel, and those that went through it (NeuronCore::run_ahead()).
  std::uint64_t wakes_run_ahead = 0;
  std::uint64_t wakes_through_kernel = 0;
};

/// Whether single-core systems may run ahead of the SystemC kernel (NeuronCore::run_ahead()).
/// The results are the same either way (tests compare them); kOff is slower.
enum class RunAhead : bool { kOff, kOn };

/// Makes the instruction source of core `pid`.
using SourceFactory = std::function<std::unique_ptr<InstructionSource>(std::uint32_t pid)>;

/// Builds the system's collective backend for `cores` cores (called once, during elaboration,
/// after the DMA backend exists, so collective traffic can share the DMA engines and HBM), or
/// returns null when collectives are not modelled.
using CollectiveBackendFactory = std::function<std::unique_ptr<CollectiveBackend>(
    const config::Params&, std::uint32_t cores, DmaBackend& dma)>;

/// Sends SystemC's own warnings and errors to stderr instead of stdout, which carries results
/// only, and drops its informational reports (e.g. "Simulation stopped by user" when a run stops
/// on an error that trnsim reports itself). Called before every sc_start().
void route_systemc_reports_to_stderr();

class Chip;

/// The elaborated model of one run: constructing it builds every module (as children of the
/// SystemC top level); after sc_core::sc_start() returned, result() gathers the statistics.
/// Sets the kernel's time resolution (1 fs), so no sc_time may be created before it.
class System {
 public:
  /// Throws InputError for a config whose models do not fit together (hbm.model with a DMA
  /// model that has no HBM stacks of its own).
  System(const config::Params& params, std::uint32_t cores, const SourceFactory& make_source,
         const InstructionObserver& observer = {},
         const CollectiveBackendFactory& make_collectives = {},
         const DmaObserver& dma_observer = {}, RunAhead run_ahead = RunAhead::kOn,
         const ExecuteHook& execute = {});
  ~System();
  System(const System&) = delete;
  System& operator=(const System&) = delete;

  /// Why the run that ended failed, or null: the first InputError raised while walking a
  /// program, or an InputError if a core never finished (a barrier or collective not every core
  /// of its group reached). Returned, not thrown, so that callers destroy the model before they
  /// throw it: with SystemC's coroutines, AddressSanitizer cannot clean the stack frames an
  /// exception unwinds, and the modules' destructors would then run over their stale redzones.
  std::exception_ptr failure() const;
  /// The statistics of the run that ended (requires failure() to be null).
  SimulationResult result() const;

 private:
  const config::Params params_;
  core::BarrierHub barrier_;
  std::unique_ptr<DmaBackend> memory_system_;
  std::unique_ptr<CollectiveBackend> collectives_;
  std::vector<std::unique_ptr<core::RunGroup>> run_groups_;  ///< before the cores that use them
  std::vector<std::unique_ptr<Chip>> chips_;
  std::vector<NeuronCore*> cores_;
};

/// Builds a System, runs the SystemC kernel to the end and returns System::result().
SimulationResult simulate(const config::Params& params, std::uint32_t cores,
                          const SourceFactory& make_source,
                          const InstructionObserver& observer = {},
                          const CollectiveBackendFactory& make_collectives = {},
                          const DmaObserver& dma_observer = {}, RunAhead run_ahead = RunAhead::kOn,
                          const ExecuteHook& execute = {});

}  // namespace trnsim::system
