// `trnsim sweep`: run a sweep spec in worker processes (sharded, resumable), and merge, export
// and plot its results (src/sweep, docs/sweeps.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/progress_options.hpp"
#include "sweep/driver.hpp"
#include "sweep/plot.hpp"
#include "sweep/results.hpp"
#include "sweep/spec.hpp"
#include "util/error.hpp"
#include "util/strings.hpp"
#include "util/svg_chart.hpp"

namespace trnsim::cli {
namespace {

void write_text_file(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    return;
  }
  sweep::write_file_atomically(path, text);
}

std::string default_results_path(const std::string& spec_path, const sweep::Shard& shard) {
  const std::string stem = std::filesystem::path(spec_path).stem().string();
  return shard.count > 1 ? fmt::format("{}.shard-{}-of-{}.jsonl", stem, shard.index, shard.count)
                         : stem + ".results.jsonl";
}

std::string values_text(const nlohmann::ordered_json& values) {
  std::string out;
  for (const auto& [key, value] : values.items()) {
    out += (out.empty() ? "" : " ") + key + "=" + sweep::value_text(value);
  }
  return out.empty() ? "(no varied values)" : out;
}

struct RunOptions {
  std::string spec;
  std::string output;
  std::string csv;
  std::string shard = "0/1";
  ProgressChoice progress;
  unsigned jobs = 0;
  double timeout_s = 0;
  bool resume = false;
  bool overwrite = false;
  bool dry_run = false;
};

void run_spec(const RunOptions& options, CommandContext& context) {
  if (options.spec.empty()) {
    throw InputError("trnsim sweep",
                     "expected a sweep spec (trnsim sweep SPEC.json) or one of "
                     "the subcommands merge, export, plot");
  }
  const sweep::SweepSpec spec = sweep::load_sweep_spec(options.spec);
  const sweep::Shard shard = sweep::parse_shard(options.shard, "--shard");
  const std::size_t total = sweep::point_count(spec);
  if (options.dry_run) {
    std::cout << fmt::format("sweep {}: {} points{}\n", spec.name, total,
                             shard.count > 1
                                 ? fmt::format(", shard {}/{} runs every {}th from {}", shard.index,
                                               shard.count, shard.count, shard.index)
                                 : "");
    for (std::size_t i = shard.index; i < total; i += shard.count) {
      const sweep::SweepPoint point = sweep::make_point(spec, i);
      std::cout << fmt::format("{:>6}  {}  [{} on {}]\n", i, values_text(point.values),
                               point.request.kernel, point.request.config);
    }
    return;
  }
  sweep::SweepOptions sweep_options;
  sweep_options.batch.trnsim_binary = sweep::self_executable();
  sweep_options.batch.parallel = sweep::resolve_parallelism(options.jobs);
  sweep_options.batch.timeout_s = options.timeout_s;
  sweep_options.batch.progress = options.progress.resolve();
  sweep_options.results_path =
      options.output.empty() ? default_results_path(options.spec, shard) : options.output;
  sweep_options.shard = shard;
  sweep_options.resume = options.resume;
  sweep_options.overwrite = options.overwrite;

  const sweep::SweepSummary summary = sweep::run_sweep(spec, sweep_options, std::cerr);
  const std::string scope =
      shard.count > 1 ? fmt::format("shard {}/{}: {} of {} points", shard.index, shard.count,
                                    summary.shard_points, summary.total_points)
                      : fmt::format("{} points", summary.total_points);
  std::cout << fmt::format("sweep {}: {}; {} ran now, {} resumed, {} failed; results in {}\n",
                           spec.name, scope, summary.ran, summary.resumed, summary.failed,
                           sweep_options.results_path);
  if (!summary.first_error.empty()) std::cout << "first failure: " << summary.first_error << "\n";
  if (summary.interrupted) {
    std::cerr << fmt::format(
        "trnsim: sweep interrupted; `trnsim sweep {} --resume -o {}` "
        "continues it\n",
        options.spec, sweep_options.results_path);
    context.exit_code = sweep::kExitInterrupted;
    return;
  }
  if (!options.csv.empty()) {
    write_text_file(options.csv,
                    sweep::results_csv(sweep::read_results(sweep_options.results_path).records));
  }
}

}  // namespace

void register_sweep_command(CLI::App& app, CommandContext& context) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "sweep",
      "Run a sweep spec in parallel worker processes (docs/sweeps.md); or merge, "
      "export, plot its results");
  command->require_subcommand(0, 1);
  command->add_option("SPEC", options->spec, "Sweep spec (trnsim-sweep/1 JSON)");
  command->add_option("-o,--output", options->output,
                      "Results file, JSON Lines (default: SPEC-stem.results.jsonl, or "
                      "SPEC-stem.shard-I-of-N.jsonl with --shard)");
  command->add_option("-j,--jobs", options->jobs,
                      "Worker processes at once (default: one per hardware thread)");
  command
      ->add_option("--shard", options->shard,
                   "Run only points i with i % N == I (e.g. 3/8, from a Slurm array task)")
      ->type_name("I/N");
  command->add_flag("--resume", options->resume,
                    "Continue an existing results file: keep its finished points, run the rest");
  command->add_flag("--overwrite", options->overwrite, "Start an existing results file afresh");
  command->add_option("--csv", options->csv, "Also export the results as CSV to FILE");
  command->add_option("--timeout", options->timeout_s,
                      "Per-point limit in seconds; a point over it is recorded as failed");
  add_progress_options(command, options->progress);
  command->add_flag("--dry-run", options->dry_run,
                    "List the points (of this shard) and their varied values; run nothing");
  command->callback([options, command, &context] {
    if (!command->get_subcommands().empty()) return;
    run_spec(*options, context);
  });

  // merge
  struct MergeOptions {
    std::vector<std::string> inputs;
    std::string output;
    std::string spec;
    std::string csv;
  };
  auto merge_options = std::make_shared<MergeOptions>();
  CLI::App* merge = command->add_subcommand(
      "merge", "Join result files (e.g. the shards of a sweep) into one, sorted by point");
  merge->add_option("RESULTS", merge_options->inputs, "Result files to join")->required();
  merge->add_option("-o,--output", merge_options->output, "Merged results file")->required();
  merge->add_option("--spec", merge_options->spec,
                    "The sweep spec: fail unless every one of its points is present");
  merge->add_option("--csv", merge_options->csv, "Also export the merged results as CSV");
  merge->callback([merge_options, &context] {
    const sweep::MergedResults merged = sweep::merge_results(merge_options->inputs);
    std::vector<std::size_t> missing = merged.missing;
    std::size_t expected = merged.records.size() + missing.size();
    if (!merge_options->spec.empty()) {
      const sweep::SweepSpec spec = sweep::load_sweep_spec(merge_options->spec);
      expected = sweep::point_count(spec);
      const std::size_t present_end =
          merged.records.empty() ? 0 : merged.records.back()["index"].get<std::size_t>() + 1;
      if (present_end > expected) {
        throw InputError(merge_options->spec,
                         fmt::format("the results have point {} but the spec has {} points",
                                     present_end - 1, expected));
      }
      for (std::size_t i = present_end; i < expected; ++i) missing.push_back(i);
    }
    sweep::write_results(merge_options->output, merged.records);
    if (!merge_options->csv.empty()) {
      write_text_file(merge_options->csv, sweep::results_csv(merged.records));
    }
    std::cout << fmt::format(
        "merged {} files: {} points into {}{}\n", merge_options->inputs.size(),
        merged.records.size(), merge_options->output,
        merged.duplicates > 0 ? fmt::format(" ({} identical duplicates dropped)", merged.duplicates)
                              : "");
    if (!missing.empty()) {
      std::vector<std::string> shown;
      for (std::size_t i = 0; i < missing.size() && i < 20; ++i) {
        shown.push_back(std::to_string(missing[i]));
      }
      std::cerr << fmt::format("trnsim: {} of {} points missing: {}{}\n", missing.size(), expected,
                               util::join(shown, ", "),
                               missing.size() > shown.size() ? ", ..." : "");
      context.exit_code = kExitCheckFailed;
    }
  });

  // export
  struct ExportOptions {
    std::string input;
    std::string output = "-";
  };
  auto export_options = std::make_shared<ExportOptions>();
  CLI::App* exporter = command->add_subcommand("export", "Write sweep results as CSV");
  exporter->add_option("RESULTS", export_options->input, "Results file (JSON Lines)")->required();
  exporter->add_option("-o,--output", export_options->output, "CSV file (default: stdout)");
  exporter->callback([export_options] {
    std::vector<sweep::Record> records = sweep::read_results(export_options->input).records;
    sweep::sort_by_index(records);
    write_text_file(export_options->output, sweep::results_csv(records));
  });

  // plot
  struct PlotOptions {
    std::string input;
    std::string output;
    std::vector<std::string> where;
    sweep::PlotRequest request;
  };
  auto plot_options = std::make_shared<PlotOptions>();
  CLI::App* plot = command->add_subcommand(
      "plot", "Draw a metric against a varied value as a self-contained SVG chart");
  plot->add_option("RESULTS", plot_options->input, "Results file (JSON Lines)")->required();
  plot->add_option("--x", plot_options->request.x,
                   "Varied value on the x axis (e.g. T, dma.fixed_cost_ns, config)")
      ->required();
  plot->add_option("--y", plot_options->request.y, "Recorded metric (e.g. time_us)")->required();
  plot->add_option("--by", plot_options->request.by, "One line or bar colour per value of KEY");
  plot->add_option("--where", plot_options->where, "Keep only points with KEY=VALUE (repeatable)")
      ->type_name("KEY=VALUE");
  plot->add_flag("--log-x", plot_options->request.log_x, "Logarithmic x axis");
  plot->add_flag("--log-y", plot_options->request.log_y, "Logarithmic y axis");
  plot->add_flag("--bars", plot_options->request.bars, "Bars even when x is numeric");
  plot->add_option("--title", plot_options->request.title, "Chart title");
  plot->add_option("-o,--output", plot_options->output,
                   "SVG file (the data goes to the same name with .csv)")
      ->required();
  plot->callback([plot_options] {
    sweep::PlotRequest request = plot_options->request;
    for (const std::string& filter : plot_options->where) {
      request.where.push_back(sweep::parse_where(filter));
    }
    std::vector<sweep::Record> records = sweep::read_results(plot_options->input).records;
    sweep::sort_by_index(records);
    const sweep::PlotOutput output = sweep::plot_results(records, request);
    write_text_file(plot_options->output, output.svg);
    const std::string csv_path = util::chart_csv_path(plot_options->output);
    write_text_file(csv_path, output.csv);
    std::cerr << fmt::format(
        "trnsim: plotted {} points to {} (data in {}){}\n", output.plotted, plot_options->output,
        csv_path,
        output.skipped > 0
            ? fmt::format(" ({} failed or without the metric, left out)", output.skipped)
            : "");
  });

  struct ReportOptions {
    std::string input;
    std::string output;
    std::string title;
  };
  auto report_options = std::make_shared<ReportOptions>();
  CLI::App* report = command->add_subcommand(
      "report", "One self-contained HTML page of a sweep: metrics charts, bottlenecks, points");
  report->add_option("RESULTS", report_options->input, "Results file (JSON Lines)")->required();
  report->add_option("-o,--output", report_options->output, "HTML file")->required();
  report->add_option("--title", report_options->title, "Page title (default: the results file)");
  report->callback([report_options] {
    std::vector<sweep::Record> records = sweep::read_results(report_options->input).records;
    sweep::sort_by_index(records);
    const std::string title =
        report_options->title.empty() ? report_options->input : report_options->title;
    write_text_file(report_options->output, sweep::sweep_report_html(records, title));
    std::cerr << fmt::format("trnsim: {} points reported to {}\n", records.size(),
                             report_options->output);
  });
}

}  // namespace trnsim::cli
