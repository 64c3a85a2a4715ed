#include "core/simulation.hpp"

#include <algorithm>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>

#include "dma/flow_model.hpp"
#include "dma/packet_memory_system.hpp"
#include "dma/transfer_model.hpp"
#include "util/error.hpp"

namespace trnsim::core {

namespace {

/// One chip of the simulated system: the parent module of its NeuronCores, so the SystemC
/// hierarchy reads chip0.core0.tensor. Cores are numbered within their chip; `pid` is global.
class Chip : public sc_core::sc_module {
 public:
  using CoreFactory =
      std::function<std::unique_ptr<NeuronCore>(const char* name, std::uint32_t pid)>;
  /// Builds cores `first_pid` .. `first_pid + cores - 1` as children (during the constructor,
  /// as SystemC requires of a module's children).
  Chip(sc_core::sc_module_name name, std::uint32_t first_pid, std::uint32_t cores,
       const CoreFactory& make_core)
      : sc_module(name) {
    for (std::uint32_t local = 0; local < cores; ++local) {
      const std::string core_name = "core" + std::to_string(local);
      cores_.push_back(make_core(core_name.c_str(), first_pid + local));
    }
  }
  const std::vector<std::unique_ptr<NeuronCore>>& cores() const { return cores_; }

 private:
  std::vector<std::unique_ptr<NeuronCore>> cores_;
};

/// SystemC's default handler, except that what it would display on stdout goes to stderr, and
/// its informational reports ("Simulation stopped by user." when a run stops on an error, which
/// trnsim reports itself) are not displayed.
void report_to_stderr(const sc_core::sc_report& report, const sc_core::sc_actions& actions) {
  if ((actions & sc_core::SC_DISPLAY) != 0 && report.get_severity() != sc_core::SC_INFO) {
    std::cerr << sc_core::sc_report_compose_message(report) << "\n";
  }
  sc_core::sc_report_handler::default_handler(report, actions & ~sc_core::SC_DISPLAY);
}

}  // namespace

void route_systemc_reports_to_stderr() {
  sc_core::sc_report_handler::set_handler(&report_to_stderr);
}

SimulationResult simulate(const config::Params& params, std::uint32_t cores,
                          const SourceFactory& make_source, const InstructionObserver& observer,
                          const CollectiveBackendFactory& make_collectives,
                          const DmaObserver& dma_observer, RunAhead run_ahead,
                          const ExecuteHook& execute) {
  // Femtosecond resolution: engine cycles (e.g. 1/2.4 GHz) accumulate no visible rounding.
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  route_systemc_reports_to_stderr();
  BarrierHub barrier(cores);
  // dma.model selects the memory system's granularity (packet_memory_system.hpp, flow_model.hpp,
  // transfer_model.hpp).
  std::unique_ptr<dma::PacketMemorySystem> packet_model;
  std::unique_ptr<dma::FlowLevelDma> flow_model;
  std::unique_ptr<dma::TransferLevelDma> transfer_model;
  DmaBackend* backend = nullptr;
  if (params.dma.model == config::DmaModel::transfer) {
    transfer_model = std::make_unique<dma::TransferLevelDma>(params, cores);
    backend = transfer_model.get();
  } else if (params.dma.model == config::DmaModel::flow) {
    flow_model = std::make_unique<dma::FlowLevelDma>("memory_system", params, cores);
    backend = flow_model.get();
  } else {
    packet_model = std::make_unique<dma::PacketMemorySystem>("memory_system", params, cores);
    backend = packet_model.get();
  }
  DmaBackend& dma = *backend;
  dma.set_observer(dma_observer);
  std::unique_ptr<CollectiveBackend> collectives =
      make_collectives ? make_collectives(params, cores, dma) : nullptr;
  const Chip::CoreFactory make_core = [&](const char* name, std::uint32_t pid) {
    return std::make_unique<NeuronCore>(name, params, pid, make_source(pid), dma, collectives.get(),
                                        &barrier, observer, run_ahead == RunAhead::kOn, execute);
  };
  const auto cores_per_chip = static_cast<std::uint32_t>(std::max(1, params.chip.cores));
  std::vector<std::unique_ptr<Chip>> chips;
  std::vector<NeuronCore*> modules;
  for (std::uint32_t first = 0; first < cores; first += cores_per_chip) {
    const std::string name = "chip" + std::to_string(first / cores_per_chip);
    chips.push_back(std::make_unique<Chip>(name.c_str(), first,
                                           std::min(cores_per_chip, cores - first), make_core));
    for (const auto& core : chips.back()->cores()) modules.push_back(core.get());
  }
  sc_core::sc_start();
  SimulationResult result;
  for (const NeuronCore* core : modules) {
    if (core->error()) std::rethrow_exception(core->error());
  }
  for (const NeuronCore* core : modules) {
    if (!core->finished()) {
      throw InputError("kernel", "core " + std::to_string(core->stats().pid) +
                                     " never finished: it waits at a core_barrier or collective "
                                     "that not every core of its group reaches");
    }
    result.cores.push_back(core->stats());
    result.kernel_ns = std::max(result.kernel_ns, core->stats().end_ns);
    result.instructions += core->stats().instructions;
    result.wakes_run_ahead += core->wakes_run_ahead();
    result.wakes_through_kernel += core->wakes_through_kernel();
  }
  result.memory = packet_model ? packet_model->statistics(result.kernel_ns)
                  : flow_model ? flow_model->statistics(result.kernel_ns)
                               : transfer_model->statistics(result.kernel_ns);
  result.launch_overhead_ns = params.sequencer.launch_overhead_us * 1e3;
  return result;
}

}  // namespace trnsim::core

// libsystemc.so refers to sc_main (its own main() calls it). trnsim has its own main() and
// drives SystemC through simulate(), so sc_main is never called.
extern "C" int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 0;
}
