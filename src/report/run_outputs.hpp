// The per-run output files requested on the command line (--trace, --profile, --dma-profile,
// --profile-lines, --stats, --report), behind the two observers the timing model calls, and the
// busy time per source line of a kernel with `source` attribution (source_lines.hpp). Each file is
// written to PATH.tmp while the simulation runs and renamed into place only by finish(); if the run
// fails, the destructor removes every PATH.tmp.
// Leaves out the summary and --json output (report.hpp), which need no streaming.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "config/load.hpp"
#include "core/dma_backend.hpp"
#include "core/neuron_core.hpp"
#include "kernel/prepare.hpp"
#include "report/html_report.hpp"
#include "report/profile.hpp"
#include "report/source_lines.hpp"
#include "report/stats_file.hpp"
#include "report/trace.hpp"

namespace trnsim::report {

struct RunOutputOptions {
  std::string trace_path;         ///< --trace FILE.json ("" = none)
  std::string profile_path;       ///< --profile FILE.csv
  std::string dma_profile_path;   ///< --dma-profile FILE.csv
  std::string source_lines_path;  ///< --profile-lines FILE.csv
  std::string stats_path;         ///< --stats FILE.json
  std::string report_path;        ///< --report FILE.html
  TraceOptions trace;             ///< --trace-limit, --trace-window
};

class RunOutputs {
 public:
  /// Opens every requested file. `kernel` and `config` must outlive this object.
  /// `metadata` (version, kernel, config name) goes into the trace's otherData.
  RunOutputs(const RunOutputOptions& options, const kernel::PreparedKernel& kernel,
             const config::LoadedConfig& config, nlohmann::json metadata);
  ~RunOutputs();

  /// Per-instruction observer feeding the trace, the profile and the per-line sums; empty when
  /// none is wanted.
  core::InstructionObserver instruction_observer();
  /// DMA-event observer feeding the trace, the DMA profile and the per-line sums; empty when
  /// none is wanted.
  core::DmaObserver dma_observer();

  /// When the kernel has source attribution (Program::has_source_lines()): sets
  /// statistics["source_lines"] to the busy time per source line (source_lines_json()).
  void add_source_lines(nlohmann::json& statistics, double kernel_ns) const;

  /// Completes every file (trace counters and footer, per-line profile, stats document) and
  /// renames them into place. `statistics` is report::run_statistics of the run.
  void finish(const nlohmann::json& statistics, double kernel_ns);

 private:
  RunOutputOptions options_;
  const config::LoadedConfig& config_;
  std::unique_ptr<TraceWriter> trace_;
  std::unique_ptr<ProfileWriter> profile_;
  std::unique_ptr<DmaProfileWriter> dma_profile_;
  std::unique_ptr<HtmlReport> html_report_;
  /// Kept for --profile-lines or when the kernel has source attribution.
  std::unique_ptr<SourceLineProfile> source_lines_;
  std::unique_ptr<OutputFile> source_lines_file_;
  bool report_source_lines_ = false;  ///< the kernel has source attribution
};

}  // namespace trnsim::report
