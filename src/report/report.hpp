// Run statistics and the summary printed by `trnsim run`. The statistics JSON is the single
// source of truth: the text summary, --json output and --stats files are all rendered from it.
// The blocks' statistics come from the statistics tree (trnsim/stats.hpp); this adds analysis
// across blocks. Units are in the key names (_ns, _us, _bytes, _pct, _gbps, _tflops).
// Leaves out per-instruction data (traces and profiles are separate writers).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "config/params.hpp"
#include "kernel/prepare.hpp"
#include "system/simulation.hpp"

namespace trnsim::report {

/// What was run, for provenance.
struct RunInfo {
  std::string kernel_name;
  std::string kernel_file;
  nlohmann::json params;  ///< resolved kernel params {name: value}
  std::string kernel_hash;
  std::string config_name;
  std::string version;
};

/// A run's provenance: the program's name and file, its resolved params (the per-core ones left
/// out), and the given kernel hash, config name and trnsim version.
RunInfo run_info_of(const kernel::Program& program, const kernel::PreparedKernel& prepared,
                    std::string kernel_hash, std::string config_name, std::string version);

/// The statistics document of one run: the blocks' statistics (result.statistics: cores,
/// memory_system, and what the caller added, such as collectives), the run's time and the
/// system's totals, rendered to JSON; then the provenance and each core's bottleneck line.
nlohmann::json run_statistics(const system::SimulationResult& result, const config::Params& params,
                              const RunInfo& info);

/// The human-readable summary, rendered only from `statistics`.
std::string format_summary(const nlohmann::json& statistics);

}  // namespace trnsim::report
