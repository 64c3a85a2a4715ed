// `trnsim compare`: one kernel on several configs, a column per generation (src/sweep/compare).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/kernel_loading.hpp"
#include "cli/progress_options.hpp"
#include "config/load.hpp"
#include "kernel/parse.hpp"
#include "nki/kernel_reference.hpp"
#include "sweep/compare.hpp"
#include "sweep/driver.hpp"
#include "sweep/results.hpp"
#include "sweep/run_request.hpp"
#include "sweep/workers.hpp"
#include "util/error.hpp"
#include "util/json_input.hpp"

namespace trnsim::cli {
namespace {

sweep::Assignments parse_assignments(const std::vector<std::string>& texts,
                                     const std::string& option) {
  sweep::Assignments out;
  for (const std::string& text : texts) {
    const auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw InputError(option + " " + text, "expected NAME=VALUE");
    }
    out.emplace_back(text.substr(0, equals), text.substr(equals + 1));
  }
  return out;
}

/// Bad input is exit 2 before any run: a JSON kernel that cannot be read or parsed (with the
/// --param overrides), an NKI kernel file that does not exist, a config that does not load.
/// What remains (a kernel invalid on one config, a failed run) is a column's failure.
void check_inputs(const std::string& kernel, const std::vector<std::string>& params,
                  const std::vector<std::string>& configs, const std::vector<std::string>& sets) {
  if (nki::is_nki_kernel(kernel)) {
    util::read_input_file(nki::kernel_file(kernel), "kernel file");
  } else {
    kernel::ParseOptions options;
    for (const std::string& assignment : params) {
      options.param_overrides.push_back(kernel::parse_param_override(assignment));
    }
    kernel::parse_program_file(kernel, options);
  }
  if (configs.empty()) throw InputError("--configs", "expected at least one config");
  for (const std::string& config : configs) config::load_config(config, sets);
}

}  // namespace

void register_compare_command(CLI::App& app, CommandContext& context) {
  struct Options {
    ProgressChoice progress;
    std::string kernel;
    std::vector<std::string> configs = {"trn1", "trn2", "trn3", "trn4"};
    std::vector<std::string> params;
    nki::NkiArguments nki;
    std::vector<std::string> sets;
    std::string svg;
    std::string report;
    bool json = false;
    unsigned jobs = 0;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "compare", "Run one kernel on several configs (generations) and compare them side by side");
  command
      ->add_option("KERNEL", options->kernel,
                   "Kernel: a JSON file or an NKI Python kernel FILE.py::FUNCTION")
      ->required();
  command
      ->add_option("--configs", options->configs,
                   "Comma-separated configs, names or files (default: trn1,trn2,trn3,trn4)")
      ->delimiter(',');
  command->add_option("-p,--param", options->params, "Kernel param override NAME=VALUE")
      ->take_all();
  add_nki_arguments(*command, options->nki);
  command->add_option("--set", options->sets, "Config override dotted.key=value, on every config")
      ->take_all();
  command->add_option("--report", options->report,
                      "Also write one HTML page: the table, kernel time, MFU, engine shares, "
                      "roofline and waits across the configs");
  command->add_option("--svg", options->svg,
                      "Also draw kernel time per config to FILE.svg (its data to FILE.csv)");
  command->add_flag("--json", options->json, "Print the comparison as JSON");
  command->add_option("-j,--jobs", options->jobs,
                      "Configs simulated at once (default: one per hardware thread)");
  add_progress_options(command, options->progress);
  command->callback([options, &context] {
    nki::check_kernel_arguments(options->kernel, options->params, options->nki);
    check_inputs(options->kernel, options->params, options->configs, options->sets);
    std::vector<sweep::RunRequest> requests;
    for (const std::string& config : options->configs) {
      sweep::RunRequest request;
      request.kernel = options->kernel;
      request.kernel_path = options->kernel;
      request.config = config;
      request.config_path = sweep::resolve_config(config, {});
      request.params = parse_assignments(options->params, "--param");
      request.inputs = parse_assignments(options->nki.inputs, "--input");
      request.kwargs = parse_assignments(options->nki.kwargs, "--kwarg");
      request.grid = options->nki.grid;
      request.sets = parse_assignments(options->sets, "--set");
      requests.push_back(std::move(request));
    }
    sweep::BatchOptions batch;
    batch.trnsim_binary = sweep::self_executable();
    batch.parallel = sweep::resolve_parallelism(options->jobs);
    batch.progress = options->progress.resolve();
    batch.progress_options = options->progress.delayed("points");
    batch.label = "compare";
    std::vector<sweep::RunResult> results;
    try {
      results = sweep::run_batch(requests, batch, std::cerr);
    } catch (const sweep::Interrupted&) {
      std::cerr << "trnsim: compare interrupted\n";
      context.exit_code = sweep::kExitInterrupted;
      return;
    }
    std::vector<sweep::CompareColumn> columns;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      columns.push_back({options->configs[i], results[i]});
    }
    std::string title = options->kernel;
    for (const std::string& param : options->params) title += " " + param;
    for (const std::string& input : options->nki.inputs) title += " " + input;
    for (const std::string& kwarg : options->nki.kwargs) title += " " + kwarg;
    if (!options->nki.grid.empty()) title += " grid=" + options->nki.grid;
    for (const std::string& set : options->sets) title += " " + set;
    if (options->json) {
      std::cout << sweep::compare_json(title, columns).dump(2) << "\n";
    } else {
      std::cout << sweep::compare_table(title, columns);
    }
    if (!options->svg.empty()) {
      const util::BarChart chart = sweep::compare_chart(title, columns);
      sweep::write_file_atomically(options->svg, util::bar_chart_svg(chart));
      sweep::write_file_atomically(util::chart_csv_path(options->svg), util::bar_chart_csv(chart));
    }
    if (!options->report.empty()) {
      sweep::write_file_atomically(options->report, sweep::compare_html(title, columns));
    }
    std::size_t failed = 0;
    for (const sweep::CompareColumn& column : columns) failed += column.run.ok ? 0 : 1;
    if (failed > 0) {
      std::cerr << "trnsim: compare: the kernel failed on " << failed << " of " << columns.size()
                << " configs (see the notes)\n";
    }
    context.exit_code = failed > 0 ? kExitCheckFailed : kExitOk;
  });
}

}  // namespace trnsim::cli
