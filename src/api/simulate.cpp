// trnsim::Simulation and trnsim::simulate (include/trnsim/simulate.hpp): one run as `trnsim run`
// does it (api/run.hpp: result files, collectives, the timing model and the statistics);
// trnsim::register_hbm_model (include/trnsim/models.hpp).
#include "trnsim/simulate.hpp"

#include <atomic>
#include <stdexcept>
#include <utility>

#include "api/errors.hpp"
#include "api/run.hpp"
#include "api/state.hpp"
#include "report/report.hpp"
#include "system/backends.hpp"
#include "trnsim/models.hpp"
#include "trnsim/trnsim.hpp"
#include "util/log.hpp"

namespace trnsim {

namespace {

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

api::RunSettings settings_of(const SimulateOptions& options) {
  api::RunSettings settings;
  settings.outputs = output_options_of(options);
  settings.run_ahead = options.run_ahead ? system::RunAhead::kOn : system::RunAhead::kOff;
  return settings;
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

/// Everything one run holds: the kernel it runs (a shared handle: the prepared kernel lives as
/// long as the run) and the run itself.
struct Simulation::State {
  State(const Kernel& kernel_to_run, const SimulateOptions& options)
      : kernel(kernel_to_run),
        run({kernel.state().config.state().loaded, *kernel.state().program, kernel.state().prepared,
             kernel.state().hash, TRNSIM_VERSION},
            settings_of(options)) {}

  Kernel kernel;
  api::Run run;
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
    api::FinishedRun finished = state_->run.finish();
    RunResult run;
    run.statistics = std::move(finished.statistics);
    run.kernel_ns = finished.kernel_ns;
    run.launch_overhead_ns = finished.launch_overhead_ns;
    run.instructions = finished.instructions;
    return run;
  });
}

RunResult simulate(const Kernel& kernel, const SimulateOptions& options) {
  Simulation simulation(kernel, options);
  detail::translating_errors([] { sc_core::sc_start(); });
  return simulation.result();
}

}  // namespace trnsim
