// `trnsim config`: list, show, explain, diff and reference of configurations (src/config).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/kernel_loading.hpp"
#include "config/describe.hpp"
#include "config/load.hpp"

namespace trnsim::cli {
namespace {

struct ConfigOptions {
  std::string name;
  std::string other;
  std::vector<std::string> overrides;
};

void add_set_option(CLI::App& command, ConfigOptions& options) {
  command
      .add_option("--set", options.overrides,
                  "Override a parameter, e.g. --set tensor.clock_ghz=2.8 (repeatable)")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE");
}

}  // namespace

void register_config_command(CLI::App& app, CommandContext& /*context*/) {
  auto options = std::make_shared<ConfigOptions>();
  CLI::App* config = app.add_subcommand("config", "List, show, explain and compare configurations");
  config->require_subcommand(1);

  CLI::App* list = config->add_subcommand("list", "Built-in configs, one line each");
  list->callback([] {
    std::size_t width = 0;
    for (const auto& name : config::builtin_config_names()) width = std::max(width, name.size());
    for (const auto& name : config::builtin_config_names()) {
      std::cout << name << std::string(width - name.size() + 2, ' ')
                << config::builtin_config_description(name) << "\n";
    }
  });

  CLI::App* show = config->add_subcommand("show", "Effective configuration as JSON on stdout");
  show->add_option("NAME", options->name, "Built-in config name or JSON file")->required();
  add_set_option(*show, *options);
  show->callback([options] {
    const auto loaded = load_config_and_warn(options->name, options->overrides);
    std::cout << loaded.effective.dump(2) << "\n";
  });

  CLI::App* explain =
      config->add_subcommand("explain", "Every parameter with value, unit, description and source");
  explain->add_option("NAME", options->name, "Built-in config name or JSON file")->required();
  add_set_option(*explain, *options);
  explain->callback([options] {
    std::cout << config::explain_table(load_config_and_warn(options->name, options->overrides));
  });

  CLI::App* diff = config->add_subcommand("diff", "Parameters whose values differ between A and B");
  diff->add_option("A", options->name, "Built-in config name or JSON file")->required();
  diff->add_option("B", options->other, "Built-in config name or JSON file")->required();
  add_set_option(*diff, *options);
  diff->callback([options] {
    // --set applies to both sides, so a what-if compares like with like.
    std::cout << config::diff_table(load_config_and_warn(options->name, options->overrides),
                                    config::load_config(options->other, options->overrides));
  });

  CLI::App* reference = config->add_subcommand(
      "reference", "Markdown reference of every parameter (docs/config-reference.md)");
  reference->callback([] { std::cout << config::reference_markdown(); });
}

}  // namespace trnsim::cli
