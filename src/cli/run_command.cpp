// `trnsim run`: simulate a kernel with timing on a configuration and print the summary.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/kernel_loading.hpp"
#include "cli/numerics_run.hpp"
#include "cli/progress_options.hpp"
#include "cli/run_progress.hpp"
#include "collective/collective_system.hpp"
#include "report/report.hpp"
#include "report/run_outputs.hpp"
#include "system/simulation.hpp"
#include "util/error.hpp"

namespace trnsim::cli {

void register_run_command(CLI::App& app, CommandContext& context) {
  struct Options {
    KernelArguments kernel;
    bool json = false;
    // Result files (report/run_outputs.hpp, docs/outputs.md)
    report::RunOutputOptions outputs;
    std::string trace_window;
    std::string trace_detail = "dma";
    bool no_run_ahead = false;
    ProgressChoice progress;
    NumericsOptions numerics;
  };
  auto options = std::make_shared<Options>();
  CLI::App* run = app.add_subcommand("run", "Simulate a kernel with timing and print the summary");
  add_kernel_arguments(*run, options->kernel);
  run->add_flag("--json", options->json,
                "Print the full statistics as JSON instead of the summary");
  run->add_option("--trace", options->outputs.trace_path,
                  "Write a Chrome trace-event JSON timeline (open in ui.perfetto.dev)");
  run->add_option("--trace-limit", options->outputs.trace.max_slices,
                  "Write at most N slices to the trace (0 = no limit)");
  run->add_option("--trace-window", options->trace_window,
                  "Only trace slices overlapping BEGIN_US:END_US (either side may be empty)");
  run->add_option("--trace-detail", options->trace_detail,
                  "What the trace holds: instructions, dma (also DMA transfers; the default) or "
                  "packets (also the packet model's DMA packets)")
      ->capture_default_str();
  run->add_option("--profile", options->outputs.profile_path,
                  "Write one CSV row per instruction (columns: docs/outputs.md)");
  run->add_option("--dma-profile", options->outputs.dma_profile_path,
                  "Write one CSV row per DMA transfer and packet (columns: docs/outputs.md)");
  run->add_option("--profile-lines", options->outputs.source_lines_path,
                  "Write one CSV row per kernel source line: instructions, busy and wait time "
                  "(columns: docs/outputs.md)");
  run->add_option("--stats", options->outputs.stats_path,
                  "Write the statistics with provenance (resolved config, kernel hash) as JSON");
  run->add_option("--report", options->outputs.report_path,
                  "Write a self-contained HTML report: summary, utilisation over time, roofline, "
                  "stalls, source lines (docs/outputs.md)");
  run->add_flag("--no-run-ahead", options->no_run_ahead,
                "Keep every core in step with the SystemC kernel (slower; the results are the "
                "same: a check of the simulator, docs/architecture.md)");
  add_progress_options(run, options->progress);
  add_numerics_options(*run, options->numerics);
  run->callback([options, &context] {
    check_numerics_options(options->numerics, options->kernel);
    report::parse_trace_detail(options->trace_detail, options->outputs.trace);
    if (!options->trace_window.empty()) {
      report::parse_trace_window(options->trace_window, options->outputs.trace);
    }
    const LoadedKernel loaded = load_kernel(options->kernel, context.verbosity);
    spdlog::info("simulating {} on {} ({} core(s))", loaded.program->name,
                 loaded.config.params.name, loaded.prepared.cores);
    std::unique_ptr<NumericsRun> numerics;
    if (options->numerics.enabled) {
      numerics = std::make_unique<NumericsRun>(options->numerics, options->kernel, loaded);
    }
    const report::RunInfo info = run_info(loaded);
    report::RunOutputs outputs(
        options->outputs, loaded.prepared, loaded.config,
        {{"trnsim_version", info.version},
         {"kernel",
          {{"name", info.kernel_name}, {"params", info.params}, {"hash", info.kernel_hash}}},
         {"config", info.config_name}});
    auto collectives = std::make_shared<collective::CollectiveLog>();  // [collective]
    system::SimulationResult result;
    RunProgress progress(loaded.prepared, "trnsim run " + loaded.program->name,
                         options->progress.resolve(), options->progress.delayed("instructions"));
    try {
      result = system::simulate(
          loaded.config.params, loaded.prepared.cores,
          [&loaded, &progress](std::uint32_t pid) {
            return progress.wrap(make_stream_source(loaded.prepared, pid));
          },
          outputs.instruction_observer(), collective::backend_factory(collectives),
          outputs.dma_observer(),
          options->no_run_ahead ? system::RunAhead::kOff : system::RunAhead::kOn,
          numerics ? numerics->execute_hook() : core::ExecuteHook{});
    } catch (const InputError&) {
      collective::rethrow_if_failed(*collectives);  // [collective] its error explains the stop
      throw;
    }
    collective::rethrow_if_failed(*collectives);
    progress.finish(result.instructions);
    if (!collectives->operations.empty()) {
      collective::add_statistics(result.statistics.group("collectives"), *collectives);
    }
    nlohmann::json stats = report::run_statistics(result, loaded.config.params, info);
    const bool expectations_met = numerics ? numerics->finish(stats) : true;
    outputs.add_source_lines(stats, result.kernel_ns);
    outputs.finish(stats, result.kernel_ns);
    if (options->json) {
      std::cout << stats.dump(2) << "\n";
    } else {
      std::cout << report::format_summary(stats);
    }
    context.exit_code = expectations_met ? kExitOk : kExitCheckFailed;
  });
}

}  // namespace trnsim::cli
