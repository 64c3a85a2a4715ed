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
  if (!options.report_path.empty()) {
    html_report_ = std::make_unique<HtmlReport>(options.report_path, program, kernel.cores);
  }
  if (!options.source_lines_path.empty()) {
    source_lines_file_ = std::make_unique<OutputFile>(options.source_lines_path, "--profile-lines");
  }
  report_source_lines_ = program.has_source_lines();
  if (source_lines_file_ || report_source_lines_) {
    source_lines_ = std::make_unique<SourceLineProfile>(program);
  }
}

RunOutputs::~RunOutputs() = default;

core::InstructionObserver RunOutputs::instruction_observer() {
  TraceWriter* trace = trace_.get();
  ProfileWriter* profile = profile_.get();
  SourceLineProfile* lines = source_lines_.get();
  HtmlReport* html = html_report_.get();
  if (trace == nullptr && profile == nullptr && lines == nullptr && html == nullptr) return {};
  return [trace, profile, lines, html](const core::InstructionTiming& timing) {
    if (trace != nullptr) trace->instruction(timing);
    if (profile != nullptr) profile->instruction(timing);
    if (lines != nullptr) lines->instruction(timing);
    if (html != nullptr) html->instruction(timing);
  };
}

core::DmaObserver RunOutputs::dma_observer() {
  TraceWriter* trace = trace_.get();
  DmaProfileWriter* dma_profile = dma_profile_.get();
  SourceLineProfile* lines = source_lines_.get();
  HtmlReport* html = html_report_.get();
  if (trace == nullptr && dma_profile == nullptr && lines == nullptr && html == nullptr) return {};
  return [trace, dma_profile, lines, html](const core::DmaEvent& event) {
    if (trace != nullptr) trace->dma(event);
    if (dma_profile != nullptr) dma_profile->dma(event);
    if (lines != nullptr) lines->dma(event);
    if (html != nullptr) html->dma(event);
  };
}

void RunOutputs::add_source_lines(nlohmann::json& statistics, double kernel_ns) const {
  if (!report_source_lines_) return;
  statistics["source_lines"] = source_lines_json(source_lines_->rows(kernel_ns));
}

void RunOutputs::finish(const nlohmann::json& statistics, double kernel_ns) {
  if (trace_) trace_->finish(kernel_ns);
  if (profile_) profile_->finish();
  if (dma_profile_) dma_profile_->finish();
  if (source_lines_file_) {
    write_source_lines_csv(*source_lines_file_, source_lines_->rows(kernel_ns));
    source_lines_file_->commit();
  }
  if (!options_.stats_path.empty()) {
    write_stats_file(options_.stats_path, stats_document(statistics, config_));
  }
  if (html_report_) html_report_->finish(statistics, kernel_ns);
}

}  // namespace trnsim::report
