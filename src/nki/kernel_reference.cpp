#include "nki/kernel_reference.hpp"

#include <set>

#include "util/error.hpp"

namespace trnsim::nki {

namespace {

constexpr std::string_view kFunctionSeparator = "::";

/// Position of the `::` before the function name, or npos.
std::size_t function_separator(std::string_view kernel) {
  return kernel.rfind(kFunctionSeparator);
}

void check_assignments(const std::vector<std::string>& assignments, const std::string& option,
                       const std::string& expected) {
  std::set<std::string> names;
  for (const std::string& assignment : assignments) {
    const std::size_t equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw InputError(option + " " + assignment, "expected " + expected);
    }
    const std::string name = assignment.substr(0, equals);
    if (!names.insert(name).second) {
      throw InputError(option + " " + assignment, "'" + name + "' is given twice");
    }
  }
}

}  // namespace

bool is_nki_kernel(std::string_view kernel) {
  const std::string file = kernel_file(kernel);
  return file.size() > 3 && file.compare(file.size() - 3, 3, ".py") == 0;
}

std::string kernel_file(std::string_view kernel) {
  const std::size_t separator = function_separator(kernel);
  if (separator != std::string_view::npos) {
    const std::string_view file = kernel.substr(0, separator);
    if (file.size() > 3 && file.substr(file.size() - 3) == ".py") return std::string(file);
  }
  return std::string(kernel);
}

std::string with_kernel_file(std::string_view kernel, const std::string& file) {
  const std::string current = kernel_file(kernel);
  return file + std::string(kernel.substr(current.size()));
}

void check_kernel_arguments(const std::string& kernel, const std::vector<std::string>& params,
                            const NkiArguments& nki) {
  if (is_nki_kernel(kernel)) {
    if (!params.empty()) {
      throw InputError("--param " + params.front(),
                       "'" + kernel +
                           "' is an NKI Python kernel: give its arguments with --kwarg "
                           "NAME=VALUE and its tensors with --input NAME=DTYPE[SHAPE]");
    }
    check_assignments(nki.inputs, "--input",
                      "NAME=DTYPE[SHAPE] (e.g. a=float32[128,512]) or NAME=FILE.npy");
    check_assignments(nki.kwargs, "--kwarg", "NAME=VALUE (VALUE a Python literal, e.g. T=4)");
    return;
  }
  // A JSON kernel declares its tensors: --input may only give values (FILE.npy, --numerics).
  for (const std::string& input : nki.inputs) {
    if (input.size() > 4 && input.ends_with(".npy")) continue;
    throw InputError("--input " + input,
                     "'" + kernel +
                         "' is a JSON kernel, which declares its tensors: --input takes "
                         "NAME=FILE.npy, the values of an HBM tensor for --numerics");
  }
  if (nki.kwargs.empty() && nki.grid.empty()) return;
  const std::string option =
      !nki.kwargs.empty() ? "--kwarg " + nki.kwargs.front() : "--grid " + nki.grid;
  throw InputError(option, "'" + kernel +
                               "' is a JSON kernel: --kwarg and --grid are for NKI Python "
                               "kernels (FILE.py::FUNCTION); set a JSON kernel's params with "
                               "--param NAME=VALUE");
}

}  // namespace trnsim::nki
