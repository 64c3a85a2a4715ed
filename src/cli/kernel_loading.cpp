#include "cli/kernel_loading.hpp"

#include <iostream>

#include "kernel/parse.hpp"
#include "kernel/target_from_config.hpp"
#include "nki/target.hpp"
#include "nki/tracer.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/json_input.hpp"

namespace trnsim::cli {

void add_nki_arguments(CLI::App& command, nki::NkiArguments& arguments) {
  command
      .add_option("--input", arguments.inputs,
                  "NKI kernel tensor argument: NAME=DTYPE[D0,D1,..] (e.g. a=float32[128,512]) "
                  "or NAME=FILE.npy (repeatable)")
      ->allow_extra_args(false)
      ->type_name("NAME=SPEC");
  command
      .add_option("--kwarg", arguments.kwargs,
                  "NKI kernel argument: NAME=VALUE, VALUE a Python literal, else a string "
                  "(repeatable)")
      ->allow_extra_args(false)
      ->type_name("NAME=VALUE");
  command.add_option("--grid", arguments.grid, "NKI kernel launch grid: D0 or D0,D1")
      ->type_name("D0[,D1]");
}

void add_kernel_arguments(CLI::App& command, KernelArguments& arguments) {
  command
      .add_option("KERNEL", arguments.kernel_path,
                  "Kernel: a JSON file (trnsim-kernel/1) or an NKI Python kernel "
                  "FILE.py::FUNCTION")
      ->required();
  command.add_option("-c,--config", arguments.config,
                     "Built-in config name or JSON file (default: trn2)");
  command.add_option("--set", arguments.sets, "Override a config parameter: dotted.key=value")
      ->take_all();
  command
      .add_option("-p,--param", arguments.params,
                  "Override a kernel param: NAME=VALUE (an integer expression)")
      ->take_all();
  add_nki_arguments(command, arguments.nki);
}

std::string trace_nki_kernel(const std::string& kernel, const nki::NkiArguments& arguments,
                             const config::Params& config, int verbosity) {
  nki::TraceRequest request;
  request.kernel = kernel;
  request.arguments = arguments;
  request.target = nki::target_json(config);
  request.traceback = verbosity >= 1;
  return nki::trace_kernel(request, std::cerr);
}

config::LoadedConfig load_config_and_warn(const std::string& name_or_path,
                                          const std::vector<std::string>& sets) {
  config::LoadedConfig loaded = config::load_config(name_or_path, sets);
  for (const std::string& warning : loaded.warnings) {
    std::cerr << "trnsim: warning: " << warning << "\n";
  }
  return loaded;
}

LoadedKernel load_kernel(const KernelArguments& arguments, int verbosity) {
  nki::check_kernel_arguments(arguments.kernel_path, arguments.params, arguments.nki);
  LoadedKernel loaded;
  loaded.config = load_config_and_warn(arguments.config, arguments.sets);

  std::string text;
  if (nki::is_nki_kernel(arguments.kernel_path)) {
    text = trace_nki_kernel(arguments.kernel_path, arguments.nki, loaded.config.params, verbosity);
  } else {
    text = util::read_input_file(arguments.kernel_path, "kernel file");
  }
  kernel::ParseOptions options;
  std::uint64_t hash = util::fnv1a64(text);
  for (const std::string& assignment : arguments.params) {
    options.param_overrides.push_back(kernel::parse_param_override(assignment));
    hash = util::fnv1a64("\n--param " + assignment, hash);
  }
  loaded.kernel_hash = util::hex64(hash);
  loaded.program = std::make_shared<const kernel::Program>(
      kernel::parse_program_text(text, arguments.kernel_path, options));
  loaded.prepared =
      kernel::prepare_kernel(loaded.program, kernel::target_from_params(loaded.config.params));
  return loaded;
}

}  // namespace trnsim::cli
