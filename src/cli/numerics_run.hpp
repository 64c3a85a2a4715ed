// `trnsim run --numerics`: functional execution alongside timing (numerics/functional_model.hpp)
// on the command line. Options --numerics, --seed, --output-dir, --expect, --rtol, --atol; the
// kernel's --input NAME=FILE.npy give input values. Everything the user gave is read and checked
// before the simulation starts (files, tensor names, shapes, ops without a functional model);
// after it, findings go to stderr, outputs to --output-dir, and --expect comparisons decide the
// exit code (1 when an output does not match).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/kernel_loading.hpp"
#include "core/neuron_core.hpp"
#include "numerics/expect.hpp"
#include "numerics/functional_model.hpp"
#include "numerics/npy.hpp"

namespace trnsim::cli {

struct NumericsOptions {
  bool enabled = false;
  std::uint64_t seed = 0;
  std::string output_dir;
  std::vector<std::string> expects;  ///< NAME=FILE.npy
  std::optional<double> rtol;
  std::optional<double> atol;
};

/// Adds --numerics, --seed, --output-dir, --expect, --rtol and --atol.
void add_numerics_options(CLI::App& command, NumericsOptions& options);

/// Throws InputError when an option that needs --numerics (or an --input with values for a JSON
/// kernel) is given without it.
void check_numerics_options(const NumericsOptions& options, const KernelArguments& kernel);

class NumericsRun {
 public:
  /// Reads every input and reference file and checks the kernel's instructions. Throws
  /// InputError. `loaded` must outlive this object.
  NumericsRun(const NumericsOptions& options, const KernelArguments& kernel,
              const LoadedKernel& loaded);

  /// The hook the timing model calls with each instruction when its inputs are final: applies
  /// the instruction's effect on values.
  core::ExecuteHook execute_hook();

  /// After the run: reports findings on stderr, writes --output-dir, compares --expect, and sets
  /// statistics["numerics"]. Returns true when every --expect comparison matched.
  bool finish(nlohmann::json& statistics);

 private:
  struct Expectation {
    std::string name;
    std::string where;  ///< "--expect NAME=FILE"
    numerics::NpyArray reference;
  };
  NumericsOptions options_;
  const LoadedKernel& loaded_;
  std::unique_ptr<numerics::FunctionalModel> model_;
  std::vector<Expectation> expectations_;
};

}  // namespace trnsim::cli
