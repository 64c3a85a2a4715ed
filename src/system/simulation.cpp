#include "system/simulation.hpp"

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>

#include "system/backends.hpp"
#include "util/error.hpp"
#include "util/sim_time.hpp"

namespace trnsim::system {

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

System::System(const config::Params& params, std::uint32_t cores, const SourceFactory& make_source,
               const InstructionObserver& observer,
               const CollectiveBackendFactory& make_collectives, const DmaObserver& dma_observer,
               RunAhead run_ahead, const ExecuteHook& execute)
    : params_(params), barrier_(cores) {
  // Femtosecond resolution: engine cycles (e.g. 1/2.4 GHz) accumulate no visible rounding.
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  sim_time::scale();  // the resolution every module converts with (util/sim_time.hpp)
  route_systemc_reports_to_stderr();
  memory_system_ = build_memory_system(params_, cores);
  DmaBackend& dma = *memory_system_;
  dma.set_observer(dma_observer);
  collectives_ = make_collectives ? make_collectives(params_, cores, dma) : nullptr;
  // Cores run ahead of the kernel in groups, without a bound (NeuronCore::run_ahead()), when no
  // program waits for or exchanges data with another core, the DMA model makes their DMAs'
  // timing depend on their group's only, and no observer or execute hook sees their
  // instructions in the order the cores interleave.
  std::vector<std::unique_ptr<core::InstructionSource>> sources;
  sources.reserve(cores);
  bool interacting = false;
  for (std::uint32_t pid = 0; pid < cores; ++pid) {
    sources.push_back(make_source(pid));
    interacting = interacting || sources.back()->interacts_with_other_cores();
  }
  // Only collective traffic reaches another core's home stack.
  if (!interacting) dma.home_stacks_only();
  const bool may_group = run_ahead == RunAhead::kOn && !interacting && !observer && !dma_observer &&
                         !execute && dma.accepts_submit_ahead();
  std::map<std::uint32_t, core::RunGroup*> groups;
  for (std::uint32_t pid = 0; may_group && pid < cores; ++pid) {
    const std::uint32_t id = dma.isolation_group(pid);
    if (id == DmaBackend::kNoIsolation || groups.contains(id)) continue;
    run_groups_.push_back(std::make_unique<core::RunGroup>());
    run_groups_.back()->id = id;
    run_groups_.back()->dma = &dma;
    groups[id] = run_groups_.back().get();
  }
  const Chip::CoreFactory make_core = [&](const char* name, std::uint32_t pid) {
    const auto group = may_group ? groups.find(dma.isolation_group(pid)) : groups.end();
    return std::make_unique<NeuronCore>(
        name, params_, pid, std::move(sources[pid]), dma, collectives_.get(), &barrier_, observer,
        run_ahead == RunAhead::kOn, execute, group == groups.end() ? nullptr : group->second);
  };
  const auto cores_per_chip = static_cast<std::uint32_t>(std::max(1, params_.chip.cores));
  for (std::uint32_t first = 0; first < cores; first += cores_per_chip) {
    const std::string name = "chip" + std::to_string(first / cores_per_chip);
    chips_.push_back(std::make_unique<Chip>(name.c_str(), first,
                                            std::min(cores_per_chip, cores - first), make_core));
    for (const auto& core : chips_.back()->cores()) cores_.push_back(core.get());
  }
}

System::~System() = default;

std::exception_ptr System::failure() const {
  for (const NeuronCore* core : cores_) {
    if (core->error()) return core->error();
  }
  for (const NeuronCore* core : cores_) {
    if (!core->finished()) {
      return std::make_exception_ptr(
          InputError("kernel", "core " + std::to_string(core->stats().pid) +
                                   " never finished: it waits at a core_barrier or collective "
                                   "that not every core of its group reaches"));
    }
  }
  return nullptr;
}

SimulationResult System::result() const {
  SimulationResult result;
  for (const NeuronCore* core : cores_) {
    result.cores.push_back(core->stats());
    result.kernel_ns = std::max(result.kernel_ns, core->stats().end_ns);
    result.instructions += core->stats().instructions;
    result.wakes_run_ahead += core->wakes_run_ahead();
    result.wakes_through_kernel += core->wakes_through_kernel();
  }
  for (const CoreStats& core : result.cores) {
    core::add_statistics(result.statistics.append("cores"), core, params_, result.kernel_ns);
  }
  memory_system_->add_statistics(result.statistics.group("memory_system"), result.kernel_ns);
  result.launch_overhead_ns = params_.sequencer.launch_overhead_us * 1e3;
  return result;
}

SimulationResult simulate(const config::Params& params, std::uint32_t cores,
                          const SourceFactory& make_source, const InstructionObserver& observer,
                          const CollectiveBackendFactory& make_collectives,
                          const DmaObserver& dma_observer, RunAhead run_ahead,
                          const ExecuteHook& execute) {
  std::exception_ptr failure;
  SimulationResult result;
  {
    const System system(params, cores, make_source, observer, make_collectives, dma_observer,
                        run_ahead, execute);
    sc_core::sc_start();
    failure = system.failure();
    if (!failure) result = system.result();
  }  // the model is gone before anything is thrown (System::failure())
  if (failure) std::rethrow_exception(failure);
  return result;
}

}  // namespace trnsim::system

// libsystemc.so refers to sc_main (its own main() calls it). Programs with their own main(), like
// trnsim, drive SystemC through simulate() and never call it; this definition is weak, so a
// program that embeds trnsim in its own sc_main (examples/embed) keeps that one.
extern "C" __attribute__((weak)) int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 0;
}
