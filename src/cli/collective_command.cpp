// `trnsim collective`: nccom-test-style table of one collective over rank counts and sizes
// (docs/collectives.md). Each point is a synthetic kernel simulated in its own child process.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/kernel_loading.hpp"
#include "cli/progress_options.hpp"
#include "collective/benchmark.hpp"
#include "config/load.hpp"
#include "fabric/fabric.hpp"
#include "util/error.hpp"
#include "util/strings.hpp"

namespace trnsim::cli {

namespace {

collective::Operation parse_operation(const std::string& text) {
  const std::vector<std::string> names = {"all_reduce", "all_gather", "reduce_scatter",
                                          "all_to_all", "permute"};
  const collective::Operation operations[] = {
      collective::Operation::kAllReduce, collective::Operation::kAllGather,
      collective::Operation::kReduceScatter, collective::Operation::kAllToAll,
      collective::Operation::kPermute};
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return operations[i];
  }
  throw InputError("--op", "expected one of " + util::join(names, "|") + ", found '" + text + "'" +
                               util::did_you_mean(text, names));
}

std::vector<std::uint32_t> parse_ranks(const std::string& text) {
  std::vector<std::uint32_t> ranks;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const bool digits = !item.empty() && item.size() <= 7 &&
                        item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoul(item) == 0) {
      throw InputError("--ranks",
                       "expected a comma-separated list of positive rank counts such "
                       "as 2,4,8,16, found '" +
                           item + "' in '" + text + "'");
    }
    ranks.push_back(static_cast<std::uint32_t>(std::stoul(item)));
  }
  if (ranks.empty()) throw InputError("--ranks", "expected at least one rank count");
  return ranks;
}

}  // namespace

void register_collective_command(CLI::App& app, CommandContext& context) {
  struct Options {
    std::string config = "trn2-48xl";
    std::vector<std::string> sets;
    std::string op = "all_reduce";
    std::string ranks = "2";
    std::string sizes = "1KiB:1GiB";
    std::string algorithm = "auto";
    std::string dtype = "float32";
    std::uint32_t ranks_per_chip = 0;
    int lnc = 0;
    bool kernel = false;
    ProgressChoice progress;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "collective", "Time one collective over rank counts and message sizes (like nccom-test)");
  command->add_option("--config", options->config, "Built-in config name or JSON file")
      ->capture_default_str();
  command->add_option("--set", options->sets, "Override a config value, e.g. system.lnc=2");
  command
      ->add_option("--op", options->op, "all_reduce|all_gather|reduce_scatter|all_to_all|permute")
      ->capture_default_str();
  command->add_option("--ranks", options->ranks, "Comma-separated rank counts, e.g. 2,4,8,16")
      ->capture_default_str();
  command
      ->add_option("--sizes", options->sizes,
                   "FIRST:LAST[:FACTOR] (x2 by default) or a comma list; K/M/G(iB) are binary")
      ->capture_default_str();
  command
      ->add_option("--algorithm", options->algorithm, "auto|ring|mesh|rdh|kangaring|hierarchical")
      ->capture_default_str();
  command->add_option("--dtype", options->dtype, "Element type (nccom-test's type column)")
      ->capture_default_str();
  command->add_option("--ranks-per-chip", options->ranks_per_chip,
                      "Ranks placed on each chip before the next (0 = as many as fit)");
  command->add_option("--lnc", options->lnc, "Logical core size, 1 or 2 (= --set system.lnc=N)");
  command->add_flag("--kernel", options->kernel,
                    "Run each point as a synthetic kernel through the full NeuronCore and "
                    "DMA/HBM model (--set dma.model=transfer is faster still, dma.model=packet "
                    "slow above ~100 MiB)");
  command->add_flag("--json", options->json, "Print the points as JSON");
  add_progress_options(command, options->progress);
  command->callback([options, &context] {
    collective::BenchmarkPoint base;
    base.config = options->config;
    base.sets = options->sets;
    if (options->lnc != 0) {
      if (options->lnc != 1 && options->lnc != 2) {
        throw InputError("--lnc", fmt::format("expected 1 or 2, found {}", options->lnc));
      }
      base.sets.push_back(fmt::format("system.lnc={}", options->lnc));
    }
    base.operation = parse_operation(options->op);
    const auto algorithm = kernel::collective_algorithm_from_name(options->algorithm);
    if (!algorithm) {
      std::vector<std::string> names;
      for (std::size_t id = 0; id < kernel::collective_algorithm_count(); ++id) {
        names.emplace_back(
            kernel::collective_algorithm_name(static_cast<kernel::CollectiveAlgorithm>(id)));
      }
      throw InputError("--algorithm", "expected one of " + util::join(names, "|") + ", found '" +
                                          options->algorithm + "'" +
                                          util::did_you_mean(options->algorithm, names));
    }
    base.algorithm = *algorithm;
    const auto dtype = kernel::dtype_from_name(options->dtype);
    if (!dtype) {
      throw InputError("--dtype", "unknown element type '" + options->dtype + "'");
    }
    base.dtype = *dtype;
    base.ranks_per_chip = options->ranks_per_chip;
    base.direct = !options->kernel;
    const std::vector<std::uint32_t> ranks = parse_ranks(options->ranks);
    const std::vector<std::uint64_t> sizes = collective::parse_sizes(options->sizes);

    // Validate the config and every placement before simulating anything.
    const config::LoadedConfig loaded = load_config_and_warn(base.config, base.sets);
    for (const std::uint32_t n : ranks) {
      collective::BenchmarkPoint point = base;
      point.ranks = n;
      collective::benchmark_cores(point, loaded.params);
    }
    fabric::ResourcePool pool;
    const fabric::Fabric fabric(loaded.params, pool);

    nlohmann::ordered_json points = nlohmann::ordered_json::array();
    if (!options->json) {
      std::cout << fmt::format("# {} on {}: {}\n", collective::operation_name(base.operation),
                               loaded.params.name, fabric.describe());
      std::cout << fmt::format(
          "# type {}, system.lnc {}, algorithm {}; GB/s columns are GiB/s "
          "as in nccom-test\n",
          kernel::dtype_name(base.dtype), loaded.params.system.lnc, options->algorithm);
      std::cout << fmt::format("{:>6} {:>6} {:>12} {:>12} {:>10} {:>12} {:>10} {:>10}  {}\n",
                               "ranks", "chips", "size(B)", "count", "type", "time(us)", "algbw",
                               "busbw", "algorithm");
    }
    util::Progress progress("trnsim collective", ranks.size() * sizes.size(), 0,
                            options->progress.resolve(), std::cerr,
                            options->progress.delayed("points"));
    for (const std::uint32_t n : ranks) {
      for (const std::uint64_t size : sizes) {
        collective::BenchmarkPoint point = base;
        point.ranks = n;
        point.bytes = size;
        const collective::BenchmarkResult result = collective::run_point_in_child(point);
        if (!result.error.empty()) {
          throw InputError(fmt::format("{} ranks, {} bytes", n, size), result.error);
        }
        const std::string algorithm_name(kernel::collective_algorithm_name(result.algorithm));
        const std::string shown =
            base.operation == collective::Operation::kPermute ? "direct" : algorithm_name;
        progress.clear();
        if (options->json) {
          points.push_back({{"ranks", n},
                            {"chips", result.chips},
                            {"size_bytes", result.bytes},
                            {"count", result.elements},
                            {"type", kernel::dtype_name(base.dtype)},
                            {"time_us", result.time_ns / 1e3},
                            {"algbw_gibps", result.algbw_gibps},
                            {"busbw_gibps", result.busbw_gibps},
                            {"algorithm", shown},
                            {"steps", result.steps},
                            {"wall_s", result.wall_s}});
        } else {
          std::cout << fmt::format(
              "{:>6} {:>6} {:>12} {:>12} {:>10} {:>12.2f} {:>10.2f} {:>10.2f}  {}\n", n,
              result.chips, result.bytes, result.elements, kernel::dtype_name(base.dtype),
              result.time_ns / 1e3, result.algbw_gibps, result.busbw_gibps, shown);
          std::cout.flush();
        }
        progress.advance(false);
      }
    }
    progress.finish();
    if (options->json) {
      nlohmann::ordered_json out = {{"operation", collective::operation_name(base.operation)},
                                    {"config", loaded.params.name},
                                    {"fabric", fabric.describe()},
                                    {"lnc", loaded.params.system.lnc},
                                    {"points", points}};
      std::cout << out.dump(2) << "\n";
    }
    context.exit_code = kExitOk;
  });
}

}  // namespace trnsim::cli
