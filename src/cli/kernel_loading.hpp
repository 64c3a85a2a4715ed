// Shared by the subcommands that take a kernel (check, run, ...): the command-line arguments
// (KERNEL, --config, --set, --param) and loading them into a prepared kernel on a config.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "config/load.hpp"
#include "core/instruction_source.hpp"
#include "kernel/prepare.hpp"
#include "kernel/program.hpp"
#include "report/report.hpp"

namespace trnsim::cli {

struct KernelArguments {
  std::string kernel_path;
  std::string config = "trn2";
  std::vector<std::string> sets;    ///< config overrides "a.b=v"
  std::vector<std::string> params;  ///< kernel param overrides "N=V"
};

/// Adds KERNEL, --config, --set and --param to a subcommand.
void add_kernel_arguments(CLI::App& command, KernelArguments& arguments);

struct LoadedKernel {
  config::LoadedConfig config;
  std::shared_ptr<const kernel::Program> program;
  kernel::PreparedKernel prepared;
  std::string kernel_hash;  ///< of the kernel file's bytes and the param overrides
};

/// Loads the config, parses, prepares and validates the kernel. Throws InputError.
LoadedKernel load_kernel(const KernelArguments& arguments);

/// The lazy instruction stream of core `pid`, as the timing model's source.
std::unique_ptr<core::InstructionSource> make_stream_source(const kernel::PreparedKernel& kernel,
                                                            std::uint32_t pid);

/// Provenance of a run of `loaded`.
report::RunInfo run_info(const LoadedKernel& loaded);

}  // namespace trnsim::cli
