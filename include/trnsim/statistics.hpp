// The statistics of one run, as the public API returns them: the JSON document that
// `trnsim run --json` prints (docs/outputs.md; units in the key names: _ns, _us, _bytes, _pct,
// _gbps, _tflops), and the text summary `trnsim run` renders from it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace trnsim {

struct RunResult {
  /// From the first instruction to the last visible result of any core, in ns
  /// (statistics["time"]["kernel_ns"]).
  double kernel_ns = 0;
  /// The runtime's per-kernel launch overhead, reported separately (not in kernel_ns).
  double launch_overhead_ns = 0;
  /// Instructions executed by all cores.
  std::uint64_t instructions = 0;
  /// The whole statistics document: provenance, time, cores (engines, tensor, hbm, dma,
  /// bottleneck), memory_system, system, and collectives or source_lines when the kernel has them.
  nlohmann::json statistics;
};

/// The human-readable summary `trnsim run` prints, rendered only from `statistics`.
std::string format_summary(const nlohmann::json& statistics);

}  // namespace trnsim
