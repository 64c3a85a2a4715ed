// `trnsim validate` without the command line: builds the rows (targets.hpp), runs each
// simulation they need once as a `trnsim run --json` worker process (SystemC elaborates once
// per process), and evaluates the rows into a Report.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "util/progress.hpp"
#include "validation/report.hpp"
#include "validation/targets.hpp"

namespace trnsim::validation {

struct ValidateOptions {
  std::string kernels_dir;    ///< directory holding the example kernels (examples/kernels)
  std::string trnsim_binary;  ///< worker executable (the running trnsim)
  unsigned parallel = 1;      ///< worker processes at once
  double timeout_s = 0;       ///< per run; 0 for none
  util::ProgressStyle progress = util::ProgressStyle::kQuiet;
  util::Progress::Options progress_options;
  bool sanity = true;  ///< also run the sanity checks (every example on every generation)
  std::vector<std::pair<std::string, std::string>> sets;  ///< --set KEY=VALUE for every run
  std::string version;                                    ///< recorded in the report
};

/// The source tree's examples/kernels directory (where this build was configured from).
std::string default_kernels_dir();

/// The runs `rows` need, each once, in order of first use.
std::vector<RunSpec> unique_runs(const std::vector<Row>& rows);

/// Runs and evaluates everything. Throws InputError when a kernel file is missing or the
/// batch is interrupted; a run that fails makes its rows "no result".
Report run_validation(const ValidateOptions& options, std::ostream& log);

}  // namespace trnsim::validation
