// Registration of the trnsim subcommands. Each register_* adds one CLI11 subcommand to `app`
// and sets its callback; a callback reports bad input by throwing trnsim::InputError and a
// failed user check by setting `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace trnsim::cli {

struct CommandContext {
  int exit_code = 0;  ///< set by a subcommand callback; returned by main
  int verbosity = 0;  ///< -v count, set before any callback runs
};

void register_config_command(CLI::App& app, CommandContext& context);
void register_check_command(CLI::App& app, CommandContext& context);
void register_run_command(CLI::App& app, CommandContext& context);
void register_sweep_command(CLI::App& app, CommandContext& context);
void register_compare_command(CLI::App& app, CommandContext& context);
void register_regress_command(CLI::App& app, CommandContext& context);
void register_collective_command(CLI::App& app, CommandContext& context);
void register_validate_command(CLI::App& app, CommandContext& context);
void register_nki_command(CLI::App& app, CommandContext& context);

}  // namespace trnsim::cli
