// How a kernel is named where trnsim takes one (command lines, sweep specs, baselines): a JSON
// kernel file, or an NKI Python kernel `FILE.py::FUNCTION` (or `FILE.py`, when the file has
// exactly one decorated kernel). The text before an optional `::` ending in `.py` is what makes
// a kernel NKI Python. Also the arguments only an NKI kernel takes (--input, --kwarg, --grid)
// and the rule that the two kinds' arguments do not mix. Leaves out tracing (tracer.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trnsim::nki {

/// True when `kernel` names an NKI Python kernel: FILE.py or FILE.py::FUNCTION.
bool is_nki_kernel(std::string_view kernel);

/// The file part of a kernel reference: FILE for FILE.py::FUNCTION, else `kernel` itself.
std::string kernel_file(std::string_view kernel);

/// `kernel` with its file part replaced by `file`, keeping a `::FUNCTION` suffix (to resolve a
/// reference relative to a spec's directory).
std::string with_kernel_file(std::string_view kernel, const std::string& file);

/// The arguments an NKI kernel is traced with, as the tracer's command line takes them.
struct NkiArguments {
  std::vector<std::string> inputs;  ///< "NAME=DTYPE[D0,D1,..]" or "NAME=FILE.npy"
  std::vector<std::string> kwargs;  ///< "NAME=VALUE", VALUE a Python literal (else a string)
  std::string grid;                 ///< "D0[,D1]"; empty for no launch grid

  bool empty() const { return inputs.empty() && kwargs.empty() && grid.empty(); }
};

/// Checks that a kernel gets only arguments of its kind: --param for a JSON kernel (and --input
/// NAME=FILE.npy, values for --numerics); --input, --kwarg and --grid for an NKI kernel; and that
/// each --input/--kwarg reads NAME=VALUE. Throws InputError naming the offending option.
void check_kernel_arguments(const std::string& kernel, const std::vector<std::string>& params,
                            const NkiArguments& nki);

}  // namespace trnsim::nki
