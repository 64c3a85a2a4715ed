// trnsim: entry point. Parses the command line, dispatches to a subcommand, and maps errors to
// the documented exit codes (util/error.hpp): results go to stdout, diagnostics to stderr.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "cli/commands.hpp"
#include "util/error.hpp"

namespace {

void configure_logging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("trnsim");
  logger->set_pattern("trnsim: %l: %v");
  logger->set_level(verbosity >= 2   ? spdlog::level::debug
                    : verbosity == 1 ? spdlog::level::info
                                     : spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) {
  // The SystemC banner is not ours to print on stdout.
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);

  CLI::App app{"trnsim: a cycle-approximate simulator of AWS Trainium accelerators"};
  app.set_version_flag("--version", std::string("trnsim ") + TRNSIM_VERSION);
  app.require_subcommand(1);
  trnsim::cli::CommandContext context;
  app.add_flag("-v,--verbose", context.verbosity,
               "More diagnostics on stderr (-v info and NKI front-end tracebacks, -vv debug)");
  app.footer(
      "Exit codes: 0 success, 1 a requested check failed, 2 invalid input, 70 internal error.");

  app.parse_complete_callback([&context] { configure_logging(context.verbosity); });

  trnsim::cli::register_config_command(app, context);
  trnsim::cli::register_check_command(app, context);
  trnsim::cli::register_run_command(app, context);
  trnsim::cli::register_sweep_command(app, context);
  trnsim::cli::register_compare_command(app, context);
  trnsim::cli::register_regress_command(app, context);
  trnsim::cli::register_collective_command(app, context);
  trnsim::cli::register_validate_command(app, context);
  trnsim::cli::register_nki_command(app, context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage on stderr
    return trnsim::kExitInvalidInput;
  } catch (const trnsim::InputError& e) {
    std::cerr << "trnsim: error: " << e.what() << "\n";
    return trnsim::kExitInvalidInput;
  } catch (const std::exception& e) {
    std::cerr << "trnsim: internal error: " << e.what() << "\n";
    return trnsim::kExitInternal;
  }
  return context.exit_code;
}
