#include "core/simulation.hpp"

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <string>

#include "dma/dma_system.hpp"
#include "dma/transfer_model.hpp"
#include "util/error.hpp"

namespace trnsim::core {

namespace {

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
                          const DmaObserver& dma_observer, RunAhead run_ahead) {
  // Femtosecond resolution: engine cycles (e.g. 1/2.4 GHz) accumulate no visible rounding.
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  route_systemc_reports_to_stderr();
  BarrierHub barrier(cores);
  // dma.model selects the memory system's granularity (dma_system.hpp, transfer_model.hpp).
  std::unique_ptr<dma::DmaSystem> packet_model;
  std::unique_ptr<dma::TransferLevelDma> transfer_model;
  DmaBackend* backend = nullptr;
  if (params.dma.model == config::DmaModel::transfer) {
    transfer_model = std::make_unique<dma::TransferLevelDma>(params, cores);
    backend = transfer_model.get();
  } else {
    packet_model = std::make_unique<dma::DmaSystem>("memory_system", params, cores);
    backend = packet_model.get();
  }
  DmaBackend& dma = *backend;
  dma.set_observer(dma_observer);
  std::unique_ptr<CollectiveBackend> collectives =
      make_collectives ? make_collectives(params, cores, dma) : nullptr;
  std::vector<std::unique_ptr<NeuronCore>> modules;
  modules.reserve(cores);
  for (std::uint32_t pid = 0; pid < cores; ++pid) {
    const std::string name = "core" + std::to_string(pid);
    modules.push_back(std::make_unique<NeuronCore>(name.c_str(), params, pid, make_source(pid), dma,
                                                   collectives.get(), &barrier, observer,
                                                   run_ahead == RunAhead::kOn));
  }
  sc_core::sc_start();
  SimulationResult result;
  for (const auto& core : modules) {
    if (core->error()) std::rethrow_exception(core->error());
  }
  for (const auto& core : modules) {
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
