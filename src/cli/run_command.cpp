// `trnsim run`: simulate a kernel with timing on a configuration and print the summary.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "api/run.hpp"
#include "cli/commands.hpp"
#include "cli/kernel_loading.hpp"
#include "cli/numerics_run.hpp"
#include "cli/progress_options.hpp"
#include "cli/run_progress.hpp"
#include "report/report.hpp"

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
    const std::string& dma_model = loaded.config.params.dma.model;
    if (!options->outputs.trace_path.empty() &&
        options->outputs.trace.detail == report::TraceDetail::kPackets &&
        (dma_model == "flow" || dma_model == "transfer")) {
      std::cerr << "trnsim: warning: --trace-detail packets: the " << dma_model
                << " DMA model moves no packets, so the trace has none; add --set "
                   "dma.model=packet for them\n";
    }
    spdlog::info("simulating {} on {} ({} core(s))", loaded.program->name,
                 loaded.config.params.name, loaded.prepared.cores);
    std::unique_ptr<NumericsRun> numerics;
    if (options->numerics.enabled) {
      numerics = std::make_unique<NumericsRun>(options->numerics, options->kernel, loaded);
    }
    RunProgress progress(loaded.prepared, "trnsim run " + loaded.program->name,
                         options->progress.resolve(), options->progress.delayed("instructions"));
    api::RunSettings settings;
    settings.outputs = options->outputs;
    settings.run_ahead = options->no_run_ahead ? system::RunAhead::kOff : system::RunAhead::kOn;
    settings.wrap_source = [&progress](std::unique_ptr<core::InstructionSource> source) {
      return progress.wrap(std::move(source));
    };
    if (numerics) settings.execute = numerics->execute_hook();
    api::Run simulation(
        {loaded.config, *loaded.program, loaded.prepared, loaded.kernel_hash, TRNSIM_VERSION},
        settings);
    sc_core::sc_start();
    bool expectations_met = true;
    const RunResult finished =
        simulation.finish([&](const RunResult& result, nlohmann::json& stats) {
          progress.finish(result.instructions);
          if (numerics) expectations_met = numerics->finish(stats);
        });
    const nlohmann::json& stats = finished.statistics;
    if (options->json) {
      std::cout << stats.dump(2) << "\n";
    } else {
      std::cout << report::format_summary(stats);
    }
    context.exit_code = expectations_met ? kExitOk : kExitCheckFailed;
  });
}

}  // namespace trnsim::cli
