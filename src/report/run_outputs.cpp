#include "report/run_outputs.hpp"

namespace trnsim::report {

RunOutputs::RunOutputs(const RunOutputOptions& options, const kernel::PreparedKernel& kernel,
                       const config::LoadedConfig& config, nlohmann::json metadata)
    : options_(options), config_(config) {
  const kernel::Program& program = kernel.prog();
  const auto cores_per_chip = static_cast<std::uint32_t>(config.params.cores_per_chip());
  if (!options.trace_path.empty()) {
    TraceSystem system;
    system.cores = kernel.cores;
    system.cores_per_chip = cores_per_chip;
    system.sbuf_bytes_used = kernel.allocation.sbuf_bytes_used;
    system.sbuf_partition_bytes = kernel.target.sbuf_partition_bytes;
    system.psum_bytes_used = kernel.allocation.psum_bytes_used;
    system.psum_partition_bytes = kernel.target.psum_partition_bytes();
    system.metadata = std::move(metadata);
    trace_ = std::make_unique<TraceWriter>(options.trace_path, program, std::move(system),
                                           options.trace);
  }
  if (!options.profile_path.empty()) {
    profile_ = std::make_unique<ProfileWriter>(options.profile_path, program, cores_per_chip);
  }
  if (!options.dma_profile_path.empty()) {
    dma_profile_ =
        std::make_unique<DmaProfileWriter>(options.dma_profile_path, program, cores_per_chip);
  }
}

RunOutputs::~RunOutputs() = default;

core::InstructionObserver RunOutputs::instruction_observer() {
  TraceWriter* trace = trace_.get();
  ProfileWriter* profile = profile_.get();
  if (trace != nullptr && profile != nullptr) {
    return [trace, profile](const core::InstructionTiming& timing) {
      trace->instruction(timing);
      profile->instruction(timing);
    };
  }
  if (trace != nullptr) {
    return [trace](const core::InstructionTiming& timing) { trace->instruction(timing); };
  }
  if (profile != nullptr) {
    return [profile](const core::InstructionTiming& timing) { profile->instruction(timing); };
  }
  return {};
}

core::DmaObserver RunOutputs::dma_observer() {
  TraceWriter* trace = trace_.get();
  DmaProfileWriter* dma_profile = dma_profile_.get();
  if (trace == nullptr && dma_profile == nullptr) return {};
  return [trace, dma_profile](const core::DmaEvent& event) {
    if (trace != nullptr) trace->dma(event);
    if (dma_profile != nullptr) dma_profile->dma(event);
  };
}

void RunOutputs::finish(const nlohmann::json& statistics, double kernel_ns) {
  if (trace_) trace_->finish(kernel_ns);
  if (profile_) profile_->finish();
  if (dma_profile_) dma_profile_->finish();
  if (!options_.stats_path.empty()) {
    write_stats_file(options_.stats_path, stats_document(statistics, config_));
  }
}

}  // namespace trnsim::report
