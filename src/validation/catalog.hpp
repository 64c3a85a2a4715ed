// The example kernels of examples/kernels/ and the generations each one is valid for. This is
// the list `trnsim validate` runs for its sanity checks and tests/examples runs on every
// generation. A kernel is valid on a generation when `trnsim check` accepts it there; the
// generations left out are those without an op the kernel needs (double_row, nc_matmul_mx).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trnsim::validation {

struct ExampleKernel {
  std::string file;                      ///< file name in examples/kernels/
  std::vector<std::string> generations;  ///< built-in configs it runs on
  bool large_matmul = false;  ///< a TensorE-bound matmul expected to approach the ideal time
};

/// Every example kernel, in a stable order (file name).
const std::vector<ExampleKernel>& example_kernels();

/// The example with this file name; nullptr when there is none.
const ExampleKernel* find_example(std::string_view file);

}  // namespace trnsim::validation
