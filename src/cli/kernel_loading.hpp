// Shared by the subcommands that take a kernel (check, run, ...): the command-line arguments
// (KERNEL, --config, --set, --param; --input, --kwarg, --grid for NKI Python kernels) and loading
// them into a prepared kernel on a config. The one place where an NKI Python kernel is traced
// (nki/tracer.hpp) into the JSON kernel that is then parsed like any other.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "config/load.hpp"
#include "kernel/prepare.hpp"
#include "kernel/program.hpp"
#include "nki/kernel_reference.hpp"

namespace trnsim::cli {

struct KernelArguments {
  std::string kernel_path;  ///< a JSON kernel file, or FILE.py[::FUNCTION] (nki/kernel_reference)
  std::string config = "trn2";
  std::vector<std::string> sets;    ///< config overrides "a.b=v"
  std::vector<std::string> params;  ///< kernel param overrides "N=V" (JSON kernels)
  nki::NkiArguments nki;            ///< --input, --kwarg, --grid (NKI Python kernels)
};

/// config::load_config, then each of its warnings (an informational key set with --set) on
/// stderr as "trnsim: warning: ...". Throws InputError as load_config does.
config::LoadedConfig load_config_and_warn(const std::string& name_or_path,
                                          const std::vector<std::string>& sets);

/// Adds KERNEL, --config, --set, --param, --input, --kwarg and --grid to a subcommand.
void add_kernel_arguments(CLI::App& command, KernelArguments& arguments);

/// Adds --input, --kwarg and --grid (what an NKI Python kernel is traced with).
void add_nki_arguments(CLI::App& command, nki::NkiArguments& arguments);

/// Traces an NKI Python kernel for `config`; returns its trnsim-kernel/1 JSON text. With
/// verbosity >= 1 the front end's traceback of a kernel error is shown on stderr. Throws
/// InputError (nki/tracer.hpp).
std::string trace_nki_kernel(const std::string& kernel, const nki::NkiArguments& arguments,
                             const config::Params& config, int verbosity);

struct LoadedKernel {
  config::LoadedConfig config;
  std::shared_ptr<const kernel::Program> program;
  kernel::PreparedKernel prepared;
  /// A JSON kernel: of the file's bytes and the param overrides. An NKI kernel: of the traced
  /// JSON (which depends on the kernel's arguments and on the config's target and compiler).
  std::string kernel_hash;
};

/// Loads the config, traces an NKI kernel, parses, prepares and validates the kernel. Throws
/// InputError. `verbosity` is the -v count (NKI tracebacks from 1).
LoadedKernel load_kernel(const KernelArguments& arguments, int verbosity);

}  // namespace trnsim::cli
