#include "validation/validate.hpp"

#include <filesystem>
#include <set>

#include "sweep/driver.hpp"
#include "util/error.hpp"

namespace trnsim::validation {

std::string default_kernels_dir() {
  return std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels";
}

std::vector<RunSpec> unique_runs(const std::vector<Row>& rows) {
  std::vector<RunSpec> runs;
  std::set<std::string> seen;
  for (const Row& row : rows) {
    for (const RunSpec& run : row.runs) {
      if (seen.insert(run.key()).second) runs.push_back(run);
    }
  }
  return runs;
}

Report run_validation(const ValidateOptions& options, std::ostream& log) {
  Report report;
  report.version = options.version;
  report.rows = calibration_rows();
  if (options.sanity) {
    std::vector<Row> sanity = sanity_rows();
    report.rows.insert(report.rows.end(), sanity.begin(), sanity.end());
  }

  const std::vector<RunSpec> runs = unique_runs(report.rows);
  std::vector<sweep::RunRequest> requests;
  for (const RunSpec& run : runs) {
    const std::filesystem::path path = std::filesystem::path(options.kernels_dir) / run.kernel;
    const std::string file = run.kernel.substr(0, run.kernel.find("::"));
    if (!std::filesystem::exists(std::filesystem::path(options.kernels_dir) / file)) {
      throw InputError(path.string(),
                       "example kernel not found (pass the examples/kernels directory with "
                       "--kernels)");
    }
    sweep::RunRequest request;
    request.kernel = run.kernel;
    request.kernel_path = path.string();
    request.config = run.config;
    request.config_path = run.config;
    request.params = run.params;
    request.inputs = run.inputs;
    request.kwargs = run.kwargs;
    request.sets = run.sets;
    request.sets.insert(request.sets.end(), options.sets.begin(), options.sets.end());
    requests.push_back(std::move(request));
  }

  sweep::BatchOptions batch;
  batch.trnsim_binary = options.trnsim_binary;
  batch.parallel = options.parallel;
  batch.timeout_s = options.timeout_s;
  batch.progress = options.progress;
  batch.progress_options = options.progress_options;
  batch.label = "validate";
  const std::vector<sweep::RunResult> results = sweep::run_batch(requests, batch, log);

  RunResults by_run;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (results[i].ok) {
      by_run.add_statistics(runs[i], results[i].statistics);
    } else {
      by_run.add_error(runs[i], results[i].error);
    }
  }
  for (const Row& row : report.rows) report.outcomes.push_back(evaluate(row, by_run));
  report.calibration = calibration_entries();
  return report;
}

}  // namespace trnsim::validation
