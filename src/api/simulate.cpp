// trnsim::Simulation and trnsim::simulate (include/trnsim/simulate.hpp): one run as `trnsim run`
// does it (cli/run_command.cpp): result files, collectives, the timing model and the statistics;
// trnsim::register_hbm_model (include/trnsim/models.hpp).
#include "trnsim/simulate.hpp"

#include <atomic>
#include <optional>
#include <stdexcept>
#include <utility>

#include "api/errors.hpp"
#include "api/state.hpp"
#include "collective/collective_system.hpp"
#include "core/stream_source.hpp"
#include "report/report.hpp"
#include "report/run_outputs.hpp"
#include "system/backends.hpp"
#include "system/simulation.hpp"
#include "trnsim/models.hpp"
#include "trnsim/trnsim.hpp"
#include "util/log.hpp"

namespace trnsim {

namespace {

/// Provenance of a run, as `trnsim run` reports it.
report::RunInfo run_info(const detail::KernelState& state) {
  return report::run_info_of(*state.program, state.prepared, state.hash,
                             state.config.state().loaded.params.name, TRNSIM_VERSION);
}

report::RunOutputOptions output_options_of(const SimulateOptions& options) {
  report::RunOutputOptions out;
  out.trace_path = options.trace_path;
  out.profile_path = options.profile_path;
  out.dma_profile_path = options.dma_profile_path;
  out.source_lines_path = options.source_lines_path;
  out.stats_path = options.stats_path;
  out.report_path = options.report_path;
  return out;
}

std::atomic<bool> elaborated{false};

}  // namespace

std::string version() {
  return TRNSIM_VERSION;
}

std::string format_summary(const nlohmann::json& statistics) {
  return report::format_summary(statistics);
}

void register_hbm_model(const std::string& name, HbmTargetFactory factory) {
  if (!factory) throw std::invalid_argument("trnsim::register_hbm_model: empty factory");
  system::register_hbm_model(
      name, [factory = std::move(factory)](
                sc_core::sc_module_name module_name, const HbmTargetSpec& spec,
                const config::Params& /*params*/) { return factory(module_name, spec); });
}

/// Everything one run holds: the kernel it runs, the result files being written, the
/// collectives' log and the elaborated model.
struct Simulation::State {
  State(const Kernel& kernel_to_run, const SimulateOptions& options)
      : kernel(kernel_to_run),
        info(run_info(kernel.state())),
        outputs(
            output_options_of(options), kernel.state().prepared, loaded(),
            {{"trnsim_version", info.version},
             {"kernel",
              {{"name", info.kernel_name}, {"params", info.params}, {"hash", info.kernel_hash}}},
             {"config", info.config_name}}),
        collectives(std::make_shared<collective::CollectiveLog>()) {
    const kernel::PreparedKernel& prepared = kernel.state().prepared;
    model.emplace(
        loaded().params, prepared.cores,
        [&prepared](std::uint32_t pid) {
          return std::make_unique<core::StreamSource>(prepared, pid);
        },
        outputs.instruction_observer(), collective::backend_factory(collectives),
        outputs.dma_observer(), options.run_ahead ? system::RunAhead::kOn : system::RunAhead::kOff);
  }

  const config::LoadedConfig& loaded() const { return kernel.state().config.state().loaded; }

  Kernel kernel;  ///< a shared handle: the prepared kernel lives as long as the run
  report::RunInfo info;
  report::RunOutputs outputs;
  std::shared_ptr<collective::CollectiveLog> collectives;
  std::optional<system::System> model;
};

Simulation::Simulation(const Kernel& kernel, const SimulateOptions& options) {
  if (elaborated.exchange(true)) {
    throw std::logic_error(
        "trnsim::Simulation: SystemC elaborates one model per process; run further simulations "
        "in child processes");
  }
  detail::translating_errors([&] {
    log::configure(0, options.log);  // before the model is built: its components read the levels
    state_ = std::make_unique<State>(kernel, options);
  });
}

Simulation::~Simulation() = default;

RunResult Simulation::result() {
  return detail::translating_errors([&] {
    State& state = *state_;
    if (const std::exception_ptr failure = state.model->failure()) {
      state.model.reset();  // before anything is thrown (system::System::failure())
      collective::rethrow_if_failed(*state.collectives);  // its error explains the stop
      std::rethrow_exception(failure);
    }
    collective::rethrow_if_failed(*state.collectives);
    system::SimulationResult result = state.model->result();
    if (!state.collectives->operations.empty()) {
      collective::add_statistics(result.statistics.group("collectives"), *state.collectives);
    }
    RunResult run;
    run.statistics = report::run_statistics(result, state.loaded().params, state.info);
    state.outputs.add_source_lines(run.statistics, result.kernel_ns);
    state.outputs.finish(run.statistics, result.kernel_ns);
    run.kernel_ns = result.kernel_ns;
    run.launch_overhead_ns = result.launch_overhead_ns;
    run.instructions = result.instructions;
    return run;
  });
}

RunResult simulate(const Kernel& kernel, const SimulateOptions& options) {
  Simulation simulation(kernel, options);
  detail::translating_errors([] { sc_core::sc_start(); });
  return simulation.result();
}

}  // namespace trnsim
