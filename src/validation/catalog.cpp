#include "validation/catalog.hpp"

#include <algorithm>

namespace trnsim::validation {

namespace {

const std::vector<std::string> kAll = {"trn1", "trn2", "trn3", "trn4"};
const std::vector<std::string> kDoubleRow = {"trn2", "trn3", "trn4"};  // NC-v3+ (facts §3.4)
const std::vector<std::string> kMx = {"trn3", "trn4"};                 // NC-v4+ (facts §3.5)
const std::vector<std::string> kHwdge = {"trn2", "trn3", "trn4"};      // NC-v3+ (facts §9.3)

std::vector<ExampleKernel> build() {
  std::vector<ExampleKernel> kernels = {
      {"collective_all_gather.json", kAll},
      {"collective_all_reduce.json", kAll},
      {"collective_permute.json", kAll},
      {"dma_load_stream.json", kAll},
      {"dma_load_stream_hwdge.json", kHwdge},
      {"flash_attention_fwd.json", kAll},
      {"layernorm_v1.json", kAll},
      {"layernorm_v2.json", kAll},
      {"matmul_bf16_large.json", kAll, true},
      {"matmul_fp8_double_row.json", kDoubleRow, true},
      {"matmul_mx.json", kMx},
      {"matmul_t1_v1_tiled.json", kAll},
      {"matmul_t1_v2_hoisted.json", kAll},
      {"matmul_t1_v3_blocked.json", kAll},
      {"matmul_t1_v4_optimized.json", kAll, true},
      {"matmul_tiled.json", kAll},
      {"moe_grouped_matmul.json", kAll},
      {"rmsnorm.json", kAll},
      {"selective_scan.json", kAll},
      {"softmax.json", kAll},
      {"transpose_dma.json", kAll},
      {"transpose_tensor_engine.json", kAll},
      {"vector_add.json", kAll},
      {"vector_add_single_buffer.json", kAll},
      {"vector_add_t3.json", kAll},
  };
  std::sort(kernels.begin(), kernels.end(),
            [](const ExampleKernel& a, const ExampleKernel& b) { return a.file < b.file; });
  return kernels;
}

}  // namespace

const std::vector<ExampleKernel>& example_kernels() {
  static const std::vector<ExampleKernel> kernels = build();
  return kernels;
}

const ExampleKernel* find_example(std::string_view file) {
  for (const ExampleKernel& kernel : example_kernels()) {
    if (kernel.file == file) return &kernel;
  }
  return nullptr;
}

}  // namespace trnsim::validation
