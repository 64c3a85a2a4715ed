// trnsim::simulate (include/trnsim/simulate.hpp): one run as `trnsim run` does it
// (cli/run_command.cpp): result files, collectives, the timing model and the statistics.
#include "trnsim/simulate.hpp"

#include <atomic>
#include <stdexcept>

#include "api/errors.hpp"
#include "api/state.hpp"
#include "collective/collective_system.hpp"
#include "core/simulation.hpp"
#include "core/stream_source.hpp"
#include "report/report.hpp"
#include "report/run_outputs.hpp"
#include "trnsim/trnsim.hpp"
#include "util/log.hpp"

namespace trnsim {

namespace {

/// Provenance of a run, as `trnsim run` reports it.
report::RunInfo run_info(const detail::KernelState& state) {
  return report::run_info_of(*state.program, state.prepared, state.hash,
                             state.config.state().loaded.params.name, TRNSIM_VERSION);
}

std::atomic<bool> simulated{false};

}  // namespace

std::string version() {
  return TRNSIM_VERSION;
}

std::string format_summary(const nlohmann::json& statistics) {
  return report::format_summary(statistics);
}

RunResult simulate(const Kernel& kernel, const SimulateOptions& options) {
  if (simulated.exchange(true)) {
    throw std::logic_error(
        "trnsim::simulate: SystemC elaborates one model per process; run further simulations in "
        "child processes");
  }
  return detail::translating_errors([&] {
    log::configure(0, options.log);  // before the model is built: its components read the levels
    const detail::KernelState& state = kernel.state();
    const config::LoadedConfig& loaded = state.config.state().loaded;
    report::RunOutputOptions output_options;
    output_options.trace_path = options.trace_path;
    output_options.profile_path = options.profile_path;
    output_options.dma_profile_path = options.dma_profile_path;
    output_options.source_lines_path = options.source_lines_path;
    output_options.stats_path = options.stats_path;
    output_options.report_path = options.report_path;
    const report::RunInfo info = run_info(state);
    report::RunOutputs outputs(
        output_options, state.prepared, loaded,
        {{"trnsim_version", info.version},
         {"kernel",
          {{"name", info.kernel_name}, {"params", info.params}, {"hash", info.kernel_hash}}},
         {"config", info.config_name}});
    auto collectives = std::make_shared<collective::CollectiveLog>();
    core::SimulationResult result;
    try {
      result = core::simulate(
          loaded.params, state.prepared.cores,
          [&state](std::uint32_t pid) {
            return std::make_unique<core::StreamSource>(state.prepared, pid);
          },
          outputs.instruction_observer(), collective::backend_factory(collectives),
          outputs.dma_observer(), options.run_ahead ? core::RunAhead::kOn : core::RunAhead::kOff);
    } catch (const InputError&) {
      collective::rethrow_if_failed(*collectives);  // its error explains the stop
      throw;
    }
    collective::rethrow_if_failed(*collectives);
    RunResult run;
    run.statistics = report::run_statistics(result, loaded.params, info);
    if (!collectives->operations.empty()) {
      run.statistics["collectives"] = collective::statistics(*collectives);
    }
    outputs.add_source_lines(run.statistics, result.kernel_ns);
    outputs.finish(run.statistics, result.kernel_ns);
    run.kernel_ns = result.kernel_ns;
    run.launch_overhead_ns = result.launch_overhead_ns;
    run.instructions = result.instructions;
    return run;
  });
}

}  // namespace trnsim
