// `trnsim nki trace`: lower an NKI Python kernel to the trnsim-kernel/1 JSON that `trnsim run`
// simulates for a config (its target and `compiler` section), so the lowering can be read,
// diffed and kept. Output to stdout or a file written as FILE.tmp and renamed when complete.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/kernel_loading.hpp"
#include "config/load.hpp"
#include "nki/kernel_reference.hpp"
#include "report/output_file.hpp"
#include "util/error.hpp"

namespace trnsim::cli {

void register_nki_command(CLI::App& app, CommandContext& context) {
  struct Options {
    std::string kernel;
    std::string config = "trn2";
    std::vector<std::string> sets;
    nki::NkiArguments arguments;
    std::string output;
  };
  auto options = std::make_shared<Options>();
  CLI::App* nki_command =
      app.add_subcommand("nki", "NKI Python kernels: see what trnsim simulates for them");
  nki_command->require_subcommand(1);

  CLI::App* trace = nki_command->add_subcommand(
      "trace", "Lower an NKI Python kernel to trnsim-kernel/1 JSON for a config");
  trace->add_option("KERNEL", options->kernel, "NKI Python kernel: FILE.py::FUNCTION or FILE.py")
      ->required();
  trace->add_option("-c,--config", options->config,
                    "Built-in config name or JSON file whose target is traced for (default: trn2)");
  trace->add_option("--set", options->sets, "Override a config parameter: dotted.key=value")
      ->take_all();
  add_nki_arguments(*trace, options->arguments);
  trace->add_option("-o,--output", options->output, "Write the JSON to FILE (default: stdout)");
  trace->callback([options, &context] {
    if (!nki::is_nki_kernel(options->kernel)) {
      throw InputError(options->kernel,
                       "expected an NKI Python kernel FILE.py::FUNCTION (or FILE.py); a JSON "
                       "kernel is already what trnsim simulates");
    }
    nki::check_kernel_arguments(options->kernel, {}, options->arguments);
    const config::LoadedConfig config = load_config_and_warn(options->config, options->sets);
    // Created before tracing, so that an unwritable path is reported before the work is done;
    // removed again unless the trace succeeds.
    std::optional<report::OutputFile> file;
    if (!options->output.empty()) file.emplace(options->output, "-o");
    const std::string json =
        trace_nki_kernel(options->kernel, options->arguments, config.params, context.verbosity);
    if (file) {
      file->buffer() << json;
      file->commit();
    } else {
      std::cout << json << std::flush;
    }
    context.exit_code = kExitOk;
  });
}

}  // namespace trnsim::cli
