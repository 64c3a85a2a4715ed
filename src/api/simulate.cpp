// trnsim::Simulation and trnsim::simulate (include/trnsim/simulate.hpp): one run as `trnsim run`
// does it (api/run.hpp: result files, collectives, the timing model and the statistics);
// trnsim::register_hbm_model and register_cost_model (include/trnsim/models.hpp).
#include "trnsim/simulate.hpp"

#include <atomic>
#include <optional>
#include <stdexcept>
#include <utility>

#include "api/errors.hpp"
#include "api/run.hpp"
#include "api/state.hpp"
#include "core/cost/cost_helpers.hpp"
#include "core/cost/cost_models.hpp"
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

void register_cost_model(const std::string& engine, const std::string& name,
                         CostModelFunction model) {
  const std::optional<kernel::Engine> kind = kernel::engine_from_name(engine);
  if (!kind || !kernel::engine_info(*kind).compute) {
    throw std::invalid_argument("trnsim::register_cost_model: '" + engine +
                                "' is not a compute engine (tensor, vector, scalar, gpsimd)");
  }
  if (!model) throw std::invalid_argument("trnsim::register_cost_model: empty model");
  cost::register_cost_model(
      *kind, name,
      [model = std::move(model)](const kernel::Instruction& instruction,
                                 const config::Params& params, const cost::CostContext& context) {
        const cost::EngineCost analytic = cost::engine_cost(instruction, params, context);
        CostQuery query;
        query.opcode = kernel::opcode_name(instruction.opcode);
        query.engine = kernel::engine_name(instruction.engine);
        const kernel::AccessPattern& main =
            instruction.src().used() ? instruction.src() : instruction.dst();
        query.dtype = kernel::dtype_name(main.dtype);
        query.elements_per_partition = instruction.elements_per_partition;
        query.partitions = instruction.partitions;
        query.flops = instruction.flops;
        query.bytes_read = instruction.bytes_read;
        query.bytes_written = instruction.bytes_written;
        query.clock_ghz = cost::engine_clock_ghz(instruction.engine, params);
        query.depends_on_recent = context.depends_on_recent;
        query.stationary_reused = context.stationary_reused;
        query.activation_table_switch = context.activation_table_switch;
        query.analytic = {analytic.cycles, analytic.load_stationary_cycles,
                          analytic.latency_cycles};
        const EngineCycles answer = model(query);
        cost::EngineCost cost = cost::detail::make_cost(answer.cycles, query.clock_ghz);
        cost.load_stationary_cycles = answer.load_stationary_cycles;
        cost.latency_cycles = answer.latency_cycles;
        return cost;
      });
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
  return detail::translating_errors([&] { return state_->run.finish(); });
}

RunResult simulate(const Kernel& kernel, const SimulateOptions& options) {
  Simulation simulation(kernel, options);
  detail::translating_errors([] { sc_core::sc_start(); });
  return simulation.result();
}

}  // namespace trnsim
