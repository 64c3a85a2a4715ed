// `trnsim regress`: rerun a baseline's cases and fail on metrics out of tolerance, or rewrite
// its expected values with --update (src/sweep/regress).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/progress_options.hpp"
#include "sweep/driver.hpp"
#include "sweep/regress.hpp"
#include "sweep/results.hpp"
#include "sweep/workers.hpp"
#include "util/error.hpp"

namespace trnsim::cli {

void register_regress_command(CLI::App& app, CommandContext& context) {
  struct Options {
    ProgressChoice progress;
    std::string baseline;
    bool update = false;
    bool all = false;
    unsigned jobs = 0;
    double timeout_s = 0;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "regress", "Rerun a timing baseline; exit 1 when a metric leaves its tolerance");
  command->add_option("BASELINE", options->baseline, "Baseline JSON (trnsim-baseline/1)")
      ->required();
  command->add_flag("--update", options->update,
                    "Rewrite the expected values with this build's results (tolerances kept)");
  command->add_flag("--all", options->all, "List every metric, not only the changed ones");
  command->add_option("-j,--jobs", options->jobs,
                      "Cases simulated at once (default: one per hardware thread)");
  command->add_option("--timeout", options->timeout_s,
                      "Per-case limit in seconds; a case over it fails");
  add_progress_options(command, options->progress);
  command->callback([options, &context] {
    const sweep::Baseline baseline = sweep::load_baseline(options->baseline);
    std::vector<sweep::RunRequest> requests;
    for (const sweep::BaselineCase& item : baseline.cases) requests.push_back(item.request);
    sweep::BatchOptions batch;
    batch.trnsim_binary = sweep::self_executable();
    batch.parallel = sweep::resolve_parallelism(options->jobs);
    batch.timeout_s = options->timeout_s;
    batch.progress = options->progress.resolve();
    batch.progress_options = options->progress.delayed("points");
    batch.label = "regress";
    std::vector<sweep::RunResult> results;
    try {
      results = sweep::run_batch(requests, batch, std::cerr);
    } catch (const sweep::Interrupted&) {
      std::cerr << "trnsim: regress interrupted\n";
      context.exit_code = sweep::kExitInterrupted;
      return;
    }
    const sweep::RegressReport report = sweep::check_baseline(baseline, results);
    std::cout << sweep::format_report(baseline, report, options->all);
    if (options->update) {
      sweep::write_file_atomically(
          options->baseline, sweep::format_baseline(sweep::updated_baseline(baseline, results)));
      std::cout << fmt::format(
          "regress: updated the expected values in {}{}\n", options->baseline,
          report.failed_cases > 0 ? " (cases that did not run kept theirs)" : "");
      context.exit_code = report.failed_cases > 0 ? kExitCheckFailed : kExitOk;
      return;
    }
    context.exit_code = report.passed() ? kExitOk : kExitCheckFailed;
  });
}

}  // namespace trnsim::cli
