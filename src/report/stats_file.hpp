// The --stats file: the run statistics (report::run_statistics, the same document the summary is
// rendered from) plus full provenance: trnsim version, kernel name, file, params and content
// hash, and the resolved configuration in full with its origin and hash. Deterministic: no
// dates, hosts or paths other than the ones given on the command line.
// Leaves out per-instruction data (see trace.hpp and profile.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "config/load.hpp"

namespace trnsim::report {

/// Format tag of the --stats document.
inline constexpr const char* kStatsFormat = "trnsim-stats/1";

/// {"format", "provenance" (statistics' provenance with "config" expanded to {name, origin,
/// hash, resolved}), then every other key of `statistics` in its order}.
nlohmann::ordered_json stats_document(const nlohmann::json& statistics,
                                      const config::LoadedConfig& config);

/// Writes `document` (2-space indented) to PATH.tmp, then renames it to PATH.
void write_stats_file(const std::string& path, const nlohmann::ordered_json& document);

}  // namespace trnsim::report
