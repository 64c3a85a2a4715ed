#include "cli/numerics_run.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "kernel/stream.hpp"
#include "nki/kernel_reference.hpp"
#include "util/error.hpp"

namespace trnsim::cli {

namespace {

/// "NAME=VALUE" split at the first '='; InputError at `option ASSIGNMENT` otherwise.
std::pair<std::string, std::string> split_assignment(const std::string& assignment,
                                                     const std::string& option,
                                                     const std::string& expected) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == assignment.size()) {
    throw InputError(option + " " + assignment,
                     "expected " + expected + ", found '" + assignment + "'");
  }
  return {assignment.substr(0, eq), assignment.substr(eq + 1)};
}

bool is_npy_path(const std::string& value) {
  return value.size() > 4 && value.ends_with(".npy");
}

}  // namespace

void add_numerics_options(CLI::App& command, NumericsOptions& options) {
  command.add_flag("--numerics", options.enabled,
                   "Also compute the kernel's values: inputs from --input NAME=FILE.npy, else "
                   "seeded random data (docs/numerics.md)");
  command.add_option("--seed", options.seed,
                     "--numerics: seed of the random data of inputs without a file (default 0)");
  command.add_option("--output-dir", options.output_dir,
                     "--numerics: write every HBM tensor with values to DIR/NAME.npy");
  command
      .add_option("--expect", options.expects,
                  "--numerics: compare HBM tensor NAME with FILE.npy at the end; exit 1 when "
                  "they differ (repeatable)")
      ->allow_extra_args(false)
      ->type_name("NAME=FILE.npy");
  command.add_option("--rtol", options.rtol,
                     "--expect: relative tolerance (default: by the tensor's type)");
  command.add_option("--atol", options.atol,
                     "--expect: absolute tolerance (default: by the tensor's type)");
}

void check_numerics_options(const NumericsOptions& options, const KernelArguments& kernel) {
  if (options.enabled) return;
  const auto needs = [](const std::string& option) {
    throw InputError(option, "needs --numerics (values are computed only with it)");
  };
  if (!options.output_dir.empty()) needs("--output-dir " + options.output_dir);
  if (!options.expects.empty()) needs("--expect " + options.expects.front());
  if (options.rtol) needs("--rtol");
  if (options.atol) needs("--atol");
  if (nki::is_nki_kernel(kernel.kernel_path)) return;
  for (const std::string& input : kernel.nki.inputs) {
    // Values for a JSON kernel; any other --input is rejected with the kernel's arguments.
    if (is_npy_path(input)) needs("--input " + input);
  }
}

NumericsRun::NumericsRun(const NumericsOptions& options, const KernelArguments& kernel,
                         const LoadedKernel& loaded)
    : options_(options), loaded_(loaded) {
  model_ = std::make_unique<numerics::FunctionalModel>(loaded.prepared, options.seed);
  const bool nki_kernel = nki::is_nki_kernel(kernel.kernel_path);
  for (const std::string& input : kernel.nki.inputs) {
    const auto [name, value] = split_assignment(
        input, "--input", nki_kernel ? "NAME=FILE.npy or NAME=DTYPE[SHAPE]" : "NAME=FILE.npy");
    if (!is_npy_path(value)) {
      if (nki_kernel) continue;  // a shape for tracing: its values are seeded
      throw InputError("--input " + input,
                       "expected NAME=FILE.npy (a JSON kernel declares its tensors' types and "
                       "shapes), found '" +
                           input + "'");
    }
    model_->set_input(name, numerics::read_npy(value), "--input " + input);
  }
  for (const std::string& expect : options.expects) {
    const auto [name, path] = split_assignment(expect, "--expect", "NAME=FILE.npy");
    Expectation expectation{name, "--expect " + expect, numerics::read_npy(path)};
    const std::vector<std::uint64_t> shape = model_->tensor_shape(name, expectation.where);
    if (expectation.reference.shape != shape) {
      throw InputError(expectation.where,
                       fmt::format("expected an array of tensor '{}''s shape {}, found shape {}",
                                   name, numerics::format_shape(shape),
                                   numerics::format_shape(expectation.reference.shape)));
    }
    numerics::array_values(expectation.reference, expectation.where);  // a numeric type
    expectations_.push_back(std::move(expectation));
  }
  // Every instruction must have a functional model: say which one does not before simulating.
  for (std::uint32_t pid = 0; pid < loaded.prepared.cores; ++pid) {
    kernel::InstructionStream stream(loaded.prepared, pid);
    kernel::Instruction instruction;
    while (stream.next(instruction)) model_->check(instruction);
  }
}

core::ExecuteHook NumericsRun::execute_hook() {
  numerics::FunctionalModel* model = model_.get();
  return [model](const kernel::Instruction& instruction, std::span<const std::uint32_t> group) {
    model->execute(instruction, group);
  };
}

bool NumericsRun::finish(nlohmann::json& statistics) {
  nlohmann::json findings = nlohmann::json::array();
  for (const numerics::Finding& finding : model_->findings()) {
    std::cerr << "trnsim: warning: " << finding.location << ": " << finding.message << "\n";
    findings.push_back(
        {{"kind", finding.kind == numerics::Finding::Kind::kUnwrittenRead ? "unwritten_read"
                                                                          : "non_finite"},
         {"location", finding.location},
         {"message", finding.message}});
  }
  const auto more = [](std::uint64_t total, const char* what) {
    if (total > numerics::FunctionalModel::kMaxFindings) {
      std::cerr << "trnsim: warning: " << total - numerics::FunctionalModel::kMaxFindings
                << " more " << what << " not shown\n";
    }
  };
  more(model_->unwritten_reads(), "reads of unwritten memory");
  more(model_->non_finite_results(), "first non-finite results");

  nlohmann::json outputs = nlohmann::json::array();
  if (!options_.output_dir.empty()) {
    for (const std::string& name : model_->tensors_with_values()) {
      const std::string path = (std::filesystem::path(options_.output_dir) / (name + ".npy"));
      numerics::write_npy(path, model_->tensor_values(name), "--output-dir");
      outputs.push_back(path);
    }
  }

  bool all_match = true;
  nlohmann::json comparisons = nlohmann::json::array();
  for (const Expectation& expectation : expectations_) {
    numerics::Tolerance tolerance =
        numerics::default_tolerance(model_->tensor_dtype(expectation.name));
    if (options_.rtol) tolerance.rtol = *options_.rtol;
    if (options_.atol) tolerance.atol = *options_.atol;
    const numerics::Comparison comparison = numerics::compare_arrays(
        model_->tensor_values(expectation.name), expectation.reference, tolerance);
    nlohmann::json worst = nlohmann::json::array();
    for (const numerics::Mismatch& m : comparison.worst) {
      worst.push_back({{"index", m.index}, {"got", m.got}, {"expected", m.expected}});
    }
    comparisons.push_back({{"tensor", expectation.name},
                           {"reference", expectation.where},
                           {"elements", comparison.elements},
                           {"mismatches", comparison.mismatches},
                           {"max_abs_error", comparison.max_abs_error},
                           {"rtol", tolerance.rtol},
                           {"atol", tolerance.atol},
                           {"worst", worst}});
    if (comparison.mismatches == 0) {
      std::cerr << fmt::format(
          "trnsim: {}: all {} elements match (max abs error {:.3g}; rtol "
          "{:g}, atol {:g})\n",
          expectation.where, comparison.elements, comparison.max_abs_error, tolerance.rtol,
          tolerance.atol);
      continue;
    }
    all_match = false;
    std::cerr << fmt::format(
        "trnsim: {}: {} of {} elements differ (rtol {:g}, atol {:g}); "
        "worst:\n",
        expectation.where, comparison.mismatches, comparison.elements, tolerance.rtol,
        tolerance.atol);
    for (const numerics::Mismatch& m : comparison.worst) {
      std::cerr << fmt::format("  {}{}: got {:.9g}, expected {:.9g}\n", expectation.name,
                               numerics::format_shape(m.index), m.got, m.expected);
    }
  }
  statistics["numerics"] = {{"seed", options_.seed},
                            {"unwritten_reads", model_->unwritten_reads()},
                            {"non_finite_results", model_->non_finite_results()},
                            {"findings", findings},
                            {"outputs", outputs},
                            {"expect", comparisons}};
  return all_match;
}

}  // namespace trnsim::cli
