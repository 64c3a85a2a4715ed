#include "api/run.hpp"

#include <exception>
#include <utility>

#include "core/stream_source.hpp"

namespace trnsim::api {

namespace {

/// The provenance the result files carry.
nlohmann::json provenance(const report::RunInfo& info) {
  return {
      {"trnsim_version", info.version},
      {"kernel", {{"name", info.kernel_name}, {"params", info.params}, {"hash", info.kernel_hash}}},
      {"config", info.config_name}};
}

}  // namespace

Run::Run(const RunInputs& inputs, const RunSettings& settings)
    : params_(inputs.config.params),
      info_(report::run_info_of(inputs.program, inputs.prepared, inputs.kernel_hash,
                                inputs.config.params.name, inputs.version)),
      outputs_(settings.outputs, inputs.prepared, inputs.config, provenance(info_)),
      collectives_(std::make_shared<collective::CollectiveLog>()) {
  const kernel::PreparedKernel& prepared = inputs.prepared;
  const auto wrap = settings.wrap_source;
  model_.emplace(
      params_, prepared.cores,
      [&prepared, wrap](std::uint32_t pid) {
        std::unique_ptr<core::InstructionSource> source =
            std::make_unique<core::StreamSource>(prepared, pid);
        return wrap ? wrap(std::move(source)) : std::move(source);
      },
      outputs_.instruction_observer(), collective::backend_factory(collectives_),
      outputs_.dma_observer(), settings.run_ahead, settings.execute);
}

Run::~Run() = default;

RunResult Run::finish(
    const std::function<void(const RunResult& run, nlohmann::json& statistics)>& amend) {
  if (const std::exception_ptr failure = model_->failure()) {
    model_.reset();  // before anything is thrown (system::System::failure())
    collective::rethrow_if_failed(*collectives_);
    std::rethrow_exception(failure);
  }
  collective::rethrow_if_failed(*collectives_);
  system::SimulationResult result = model_->result();
  model_.reset();  // the collective backend logs its links' use when destroyed (CollectiveLog)
  if (!collectives_->operations.empty()) {
    collective::add_statistics(result.statistics.group("collectives"), *collectives_);
  }
  RunResult run;
  run.kernel_ns = result.kernel_ns;
  run.launch_overhead_ns = result.launch_overhead_ns;
  run.instructions = result.instructions;
  run.statistics = report::run_statistics(result, params_, info_);
  if (amend) amend(run, run.statistics);
  outputs_.add_source_lines(run.statistics, result.kernel_ns);
  outputs_.finish(run.statistics, result.kernel_ns);
  return run;
}

}  // namespace trnsim::api
