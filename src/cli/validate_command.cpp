// `trnsim validate`: compare simulations of the example kernels with published measurements of
// real hardware (calibration-targets.md) plus sanity checks; print the table or the Markdown of
// docs/validation.md; exit 1 when a row leaves its tolerance without a stated reason.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/kernel_loading.hpp"
#include "cli/progress_options.hpp"
#include "config/load.hpp"
#include "sweep/workers.hpp"
#include "util/error.hpp"
#include "util/output_target.hpp"
#include "validation/targets.hpp"
#include "validation/validate.hpp"

namespace trnsim::cli {

void register_validate_command(CLI::App& app, CommandContext& context) {
  struct Options {
    ProgressChoice progress;
    bool markdown = false;
    std::string output;
    std::string kernels = validation::default_kernels_dir();
    unsigned jobs = 0;
    double timeout_s = 0;
    bool no_sanity = false;
    std::vector<std::string> sets;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "validate",
      "Compare the example kernels with published hardware measurements (T1-T5) and run "
      "sanity checks; exit 1 when a target leaves its tolerance");
  command->add_flag("--markdown", options->markdown,
                    "Print the Markdown of docs/validation.md instead of the table");
  command->add_option("-o,--output", options->output, "Write to FILE instead of stdout");
  command->add_option("--kernels", options->kernels,
                      "Directory of the example kernels (default: the source tree's "
                      "examples/kernels)");
  command->add_option("-j,--jobs", options->jobs,
                      "Simulations at once (default: one per hardware thread)");
  command->add_option("--timeout", options->timeout_s,
                      "Per-simulation limit in seconds; a run over it gives no result");
  command->add_flag("--no-sanity", options->no_sanity,
                    "Only the published targets, not the sanity checks over every example");
  command->add_option("--set", options->sets,
                      "Override a config parameter in every run (KEY=VALUE, repeatable), e.g. "
                      "--set dma.model=packet to validate the detailed DMA model");
  add_progress_options(command, options->progress);
  command->callback([options, &context] {
    validation::ValidateOptions run;
    run.kernels_dir = options->kernels;
    run.trnsim_binary = sweep::self_executable();
    run.parallel = sweep::resolve_parallelism(options->jobs);
    run.timeout_s = options->timeout_s;
    run.progress = options->progress.resolve();
    run.progress_options = options->progress.delayed("points");
    run.sanity = !options->no_sanity;
    for (const std::string& set : options->sets) {
      const std::size_t equals = set.find('=');
      if (equals == std::string::npos || equals == 0) {
        throw InputError("--set " + set, "expected KEY=VALUE (e.g. dma.model=transfer)");
      }
      run.sets.emplace_back(set.substr(0, equals), set.substr(equals + 1));
    }
    // Checked once here (unknown key, bad value) rather than failing every run.
    for (const std::string& generation : validation::generations()) {
      if (generation == validation::generations().front()) {
        load_config_and_warn(generation, options->sets);  // warnings once, not per generation
      } else {
        config::load_config(generation, options->sets);
      }
    }
    run.version = TRNSIM_VERSION;
    const validation::Report report = validation::run_validation(run, std::cerr);
    const std::string text =
        options->markdown ? validation::format_markdown(report) : validation::format_text(report);
    if (options->output.empty()) {
      std::cout << text;
    } else {
      util::write_output_file(options->output, text, "-o");
      std::cerr << "validate: " << validation::summary_line(report) << "; wrote " << options->output
                << "\n";
    }
    context.exit_code = validation::all_passed(report.outcomes) ? kExitOk : kExitCheckFailed;
  });
}

}  // namespace trnsim::cli
