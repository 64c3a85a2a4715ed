// One test per rule of kernel/validate.hpp, each with its exact message.
#include "kernel/validate.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace trnsim::kernel {
namespace {

using testing::kernel_json;
using testing::run_error;
using testing::trn1_target;
using testing::trn2_target;
using testing::trn3_target;

// p is the first PSUM tensor: offset 0, 2048 float32 = 8192 B = banks 0-3 per partition.
const char* kTensors = R"({
  "h":     {"memory": "hbm",  "dtype": "float32",  "shape": [128, 1024]},
  "hg":    {"memory": "hbm",  "dtype": "float32",  "shape": [1024], "per_core": true},
  "hall":  {"memory": "hbm",  "dtype": "float32",  "shape": [1024]},
  "s":     {"memory": "sbuf", "dtype": "float32",  "shape": [128, 1024]},
  "s2":    {"memory": "sbuf", "dtype": "float32",  "shape": [128, 1024]},
  "sbf":   {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 1024]},
  "i8":    {"memory": "sbuf", "dtype": "int8",     "shape": [128, 512]},
  "col":   {"memory": "sbuf", "dtype": "float32",  "shape": [128, 2]},
  "stats": {"memory": "sbuf", "dtype": "float32",  "shape": [128, 6]},
  "f8":    {"memory": "sbuf", "dtype": "float8_e4m3",   "shape": [128, 2, 512]},
  "f8fn":  {"memory": "sbuf", "dtype": "float8_e4m3fn", "shape": [128, 512]},
  "mxs":   {"memory": "sbuf", "dtype": "float8_e4m3fn_x4", "shape": [128, 128]},
  "mxm":   {"memory": "sbuf", "dtype": "float8_e4m3fn_x4", "shape": [128, 512]},
  "scs":   {"memory": "sbuf", "dtype": "uint8", "shape": [128, 128]},
  "scm":   {"memory": "sbuf", "dtype": "uint8", "shape": [128, 512]},
  "p":     {"memory": "psum", "dtype": "float32",  "shape": [128, 2048]},
  "pbf":   {"memory": "psum", "dtype": "bfloat16", "shape": [128, 512]}})";

std::string error_on(const Target& target, const std::string& statement,
                     const std::string& cores = "1") {
  return run_error(kernel_json(kTensors, "[" + statement + "]", "{}", cores), target);
}
std::string error_on(const std::string& statement) {
  return error_on(trn2_target(), statement);
}

// run_error() reports a test failure when nothing is thrown; this wrapper expects no error.
void expect_ok(const Target& target, const std::string& statement, const std::string& cores = "1") {
  EXPECT_NO_THROW({
    const auto kernel =
        testing::prepare_text(kernel_json(kTensors, "[" + statement + "]", "{}", cores), target);
    for (std::uint32_t pid = 0; pid < kernel.cores; ++pid) testing::collect(kernel, pid);
  });
}

const char* kMatmulBf16 = R"("stationary": "sbf[:, 0:128]", "moving": "sbf[:, 0:512]")";

TEST(Validate, OpGeneration) {
  EXPECT_EQ(
      error_on(R"({"op": "nc_matmul_mx", "dst": "p[:, 0:512]", "stationary": "mxs", "moving": "mxm",
                         "stationary_scale": "scs", "moving_scale": "scm"})"),
      "k.json: nc_matmul_mx /program/0: op-generation: nc_matmul_mx needs NeuronCore-v4 or "
      "later; the target 'trn2' is NeuronCore-v3 (tensor.mx_supported = false)");
  expect_ok(trn3_target(),
            R"({"op": "nc_matmul_mx", "dst": "p[:, 0:512]", "stationary": "mxs", "moving": "mxm",
                               "stationary_scale": "scs", "moving_scale": "scm"})");
  EXPECT_EQ(error_on(R"({"op": "exponential", "dst": "s", "src": "s2"})"),
            "k.json: exponential /program/0: op-generation: exponential needs NeuronCore-v4 or "
            "later; the target 'trn2' is NeuronCore-v3");
  EXPECT_EQ(error_on(trn1_target(),
                     R"({"op": "tensor_copy", "engine": "scalar", "dst": "s", "src": "s2"})"),
            "k.json: tensor_copy /program/0: op-generation: tensor_copy on the scalar engine needs "
            "NeuronCore-v3 or later; the target 'trn1' is NeuronCore-v2");
  expect_ok(trn2_target(), R"({"op": "tensor_copy", "engine": "scalar", "dst": "s", "src": "s2"})");
  EXPECT_EQ(
      error_on(
          R"({"op": "tensor_scalar", "engine": "scalar", "dst": "s", "src": "s2", "op0": "add", "operand0": 1})"),
      "k.json: tensor_scalar /program/0: op-generation: tensor_scalar on the scalar engine "
      "needs NeuronCore-v4 or later; the target 'trn2' is NeuronCore-v3");
  EXPECT_EQ(error_on(trn1_target(),
                     R"({"op": "nc_matmul", "dst": "p[:, 0:512]", "stationary": "f8[:, :, 0:128]",
                                        "moving": "f8", "perf_mode": "double_row"})"),
            "k.json: nc_matmul /program/0: op-generation: perf_mode double_row needs "
            "NeuronCore-v3 or later; the target 'trn1' is NeuronCore-v2 "
            "(tensor.double_row_supported = false)");
  EXPECT_EQ(
      error_on(trn1_target(), R"({"op": "dma_copy", "dst": "s", "src": "h", "dge": "hwdge"})"),
      "k.json: dma_copy /program/0: op-generation: dge hwdge needs NeuronCore-v3 or later; "
      "the target 'trn1' is NeuronCore-v2");
  EXPECT_EQ(
      error_on(
          trn1_target(),
          std::string(R"({"op": "nc_matmul", "dst": "p[:, 0:512]", )") +
              R"("stationary": "s[:, 0:128]", "moving": "s[:, 0:512]", "is_transpose": true})"),
      "k.json: nc_matmul /program/0: op-generation: is_transpose needs NeuronCore-v3 or "
      "later; the target 'trn1' is NeuronCore-v2");
}

TEST(Validate, EngineMemory) {
  EXPECT_EQ(
      error_on(
          R"({"op": "nc_matmul", "dst": "p[:, 0:512]", "stationary": "p[:, 0:128]", "moving": "s[:, 0:512]"})"),
      "k.json: nc_matmul /program/0/stationary: engine-memory: stationary 'p[:, 0:128]' is "
      "in psum, but the tensor engine reads only sbuf");
  EXPECT_EQ(
      error_on(std::string(R"({"op": "nc_matmul", "dst": "s[:, 0:512]", )") + kMatmulBf16 + "}"),
      "k.json: nc_matmul /program/0/dst: engine-memory: dst 's[:, 0:512]' is in sbuf, but "
      "the tensor engine writes only psum");
  EXPECT_EQ(
      error_on(R"({"op": "tensor_tensor", "dst": "s", "in0": "h", "in1": "s2", "alu": "add"})"),
      "k.json: tensor_tensor /program/0/in0: engine-memory: in0 'h' is in hbm, but the "
      "vector engine reads and writes only sbuf and psum (move it with dma_copy)");
  EXPECT_EQ(
      error_on(
          R"({"op": "tensor_tensor", "engine": "gpsimd", "dst": "s", "in0": "s2", "in1": "p[:, 0:1024]", "alu": "add"})"),
      "k.json: tensor_tensor /program/0/in1: engine-memory: in1 'p[:, 0:1024]' is in psum, "
      "but the gpsimd engine reads and writes only sbuf");
  EXPECT_EQ(error_on(trn1_target(), R"({"op": "dma_copy", "dst": "s", "src": "p[:, 0:1024]"})"),
            "k.json: dma_copy /program/0/src: engine-memory: src 'p[:, 0:1024]' is in psum, but "
            "NeuronCore-v2 DMA cannot read psum");
  expect_ok(trn2_target(), R"({"op": "dma_copy", "dst": "s", "src": "p[:, 0:1024]"})");
  EXPECT_EQ(error_on(R"({"op": "all_reduce", "dst": "s", "src": "h"})"),
            "k.json: all_reduce /program/0/dst: engine-memory: dst 's' is in sbuf, but "
            "collectives read and write only hbm");
  EXPECT_EQ(error_on(R"({"op": "send", "src": "p", "peer": 1})"),
            "k.json: send /program/0/src: engine-memory: src 'p' is in psum, but send transfers "
            "only hbm or sbuf");
}

TEST(Validate, MatmulDtypes) {
  EXPECT_EQ(
      error_on(
          R"({"op": "nc_matmul", "dst": "p[:, 0:512]", "stationary": "sbf[:, 0:128]", "moving": "i8"})"),
      "k.json: nc_matmul /program/0/moving: matmul-dtype: moving 'i8' is int8, not a Tensor "
      "Engine input type on NeuronCore-v3 (allowed: float8_e4m3, float8_e5m2, bfloat16, "
      "float16, tfloat32, float32)");
  EXPECT_EQ(
      error_on(
          R"({"op": "nc_matmul", "dst": "p[:, 0:512]", "stationary": "s[:, 0:128]", "moving": "sbf[:, 0:512]"})"),
      "k.json: nc_matmul /program/0: matmul-dtype: stationary is float32 but moving is "
      "bfloat16; when one input is float32 or tfloat32 the other must be too");
  EXPECT_EQ(
      error_on(
          trn3_target(),
          R"({"op": "nc_matmul", "dst": "p[:, 0:512]", "stationary": "f8[:, 0, 0:128]", "moving": "f8fn"})"),
      "k.json: nc_matmul /program/0: matmul-dtype: float8_e4m3 and float8_e4m3fn cannot be "
      "mixed in one matmul");
  EXPECT_EQ(
      error_on(
          std::string(R"({"op": "nc_matmul", "dst": "p[:, 0:512]", "perf_mode": "double_row", )") +
          kMatmulBf16 + "}"),
      "k.json: nc_matmul /program/0: matmul-dtype: perf_mode double_row needs float8 inputs, "
      "found stationary bfloat16 and moving bfloat16");
  EXPECT_EQ(error_on(std::string(R"({"op": "nc_matmul", "dst": "pbf", )") + kMatmulBf16 + "}"),
            "k.json: nc_matmul /program/0/dst: matmul-dtype: dst 'pbf' is bfloat16, but "
            "NeuronCore-v3 matmuls write float32");
  expect_ok(trn3_target(),
            std::string(R"({"op": "nc_matmul", "dst": "pbf", )") + kMatmulBf16 + "}");
  EXPECT_EQ(
      error_on(
          trn3_target(),
          R"({"op": "nc_matmul_mx", "dst": "p[:, 0:512]", "stationary": "sbf[:, 0:128]", "moving": "mxm",
                                        "stationary_scale": "scs", "moving_scale": "scm"})"),
      "k.json: nc_matmul_mx /program/0/stationary: matmul-dtype: stationary 'sbf[:, 0:128]' "
      "is bfloat16; nc_matmul_mx takes packed MX types (float8_e5m2_x4, float8_e4m3fn_x4, "
      "float4_e2m1fn_x4)");
}

TEST(Validate, DmaDtypes) {
  EXPECT_EQ(error_on(R"({"op": "dma_transpose", "dst": "s[:, 0:128]", "src": "h[0:128, 0:128]"})"),
            "k.json: dma_transpose /program/0/src: dma-dtype: dma_transpose moves 2-byte dtypes, "
            "found src float32");
  EXPECT_EQ(error_on(R"({"op": "dma_copy", "dst": "mxs", "src": "sbf[:, 0:128]"})"),
            "k.json: dma_copy /program/0: dma-dtype: DMA cannot cast packed MX types: src is "
            "bfloat16, dst is float8_e4m3fn_x4");
}

TEST(Validate, TileLimits) {
  EXPECT_EQ(
      error_on(
          R"({"op": "nc_matmul", "dst": "p[:, 0:512]", "stationary": "sbf[:, 0:256]", "moving": "sbf[:, 0:512]"})"),
      "k.json: nc_matmul /program/0/stationary: tile-limit: stationary free size M = 256 "
      "exceeds gemm_stationary_fmax = 128 (Tensor Engine columns)");
  const char* wide =
      R"({"op": "nc_matmul", "dst": "p[:, 0:1024]", "stationary": "sbf[:, 0:128]", "moving": "sbf"})";
  EXPECT_EQ(error_on(wide),
            "k.json: nc_matmul /program/0/moving: tile-limit: moving free size N = 1024 exceeds "
            "the limit of 512 for a float32 dst on NeuronCore-v3");
  expect_ok(trn3_target(), wide);  // NC-v4: up to 4096 with a float32 dst, from a bank boundary
  Target small_psum = trn2_target();
  small_psum.engine_free_max_psum = 1000;
  EXPECT_EQ(error_on(small_psum, R"({"op": "tensor_copy", "dst": "s", "src": "p[:, 0:1024]"})"),
            "k.json: tensor_copy /program/0/src: tile-limit: src 'p[:, 0:1024]' has 1024 elements "
            "per partition in psum; the vector engine accesses at most 1000 per partition there");
  EXPECT_EQ(error_on(R"({"op": "bn_stats", "dst": "stats", "src": "s"})"),
            "k.json: bn_stats /program/0/src: tile-limit: bn_stats takes at most 512 elements per "
            "partition, found src 's' with 1024");
  expect_ok(trn2_target(), R"({"op": "bn_stats", "dst": "stats", "src": "s[:, 0:512]"})");
  EXPECT_EQ(
      error_on(
          R"({"op": "nc_transpose", "engine": "vector", "dst": "s[0:32, 0:64]", "src": "s2[0:64, 0:32]"})"),
      "k.json: nc_transpose /program/0/src: tile-limit: nc_transpose on the vector engine "
      "handles at most [32, 32], found src [64, 32]");
  EXPECT_EQ(
      error_on(
          trn3_target(),
          R"({"op": "nc_matmul_mx", "dst": "p[0:128, 0:512]", "stationary": "mxs[0:48]", "moving": "mxm[0:48]",
                                        "stationary_scale": "scs", "moving_scale": "scm"})"),
      "k.json: nc_matmul_mx /program/0: tile-limit: nc_matmul_mx needs a multiple of 32 "
      "partitions, found 48");
}

TEST(Validate, PartitionStart) {
  EXPECT_EQ(error_on(R"({"op": "tensor_copy", "dst": "s[16:48]", "src": "s2[16:48]"})"),
            "k.json: tensor_copy /program/0/dst: partition-start: dst 's[16:48]' starts at "
            "partition 16 with 32 partitions; an access of at most 32 partitions must start at "
            "partition 0, 32, 64 or 96");
  EXPECT_EQ(error_on(R"({"op": "tensor_copy", "dst": "s[0:64]", "src": "s2[32:96]"})"),
            "k.json: tensor_copy /program/0/src: partition-start: src 's2[32:96]' starts at "
            "partition 32 with 64 partitions; an access of 33-64 partitions must start at "
            "partition 0 or 64");
  EXPECT_EQ(error_on(R"({"op": "memset", "dst": "s[1:128]", "value": 0})"),
            "k.json: memset /program/0/dst: partition-start: dst 's[1:128]' starts at partition 1 "
            "with 127 partitions; an access of more than 64 partitions must start at partition 0");
  expect_ok(trn2_target(), R"({"op": "tensor_copy", "dst": "s[96:128]", "src": "s2[64:96]"})");
  expect_ok(trn2_target(),
            R"({"op": "dma_copy", "dst": "s[16:48]", "src": "h[0:32]"})");  // DMA: any
}

TEST(Validate, PartitionStartOnALargerArrayKeepsTheQuadrantRule) {
  // A 256 x 256 PE array has 256 partitions: starts at multiples of the smallest power of two
  // >= max(partitions accessed, 32), so 128 partitions may also start at 128.
  Target wide = trn2_target();
  wide.partitions = 256;
  wide.gemm_stationary_fmax = 256;
  const char* tensors = R"({"w": {"memory": "sbuf", "dtype": "float32", "shape": [256, 64]},
                            "w2": {"memory": "sbuf", "dtype": "float32", "shape": [256, 64]}})";
  const auto kernel = [&](const std::string& statement) {
    return kernel_json(tensors, "[" + statement + "]", "{}", "1");
  };
  EXPECT_NO_THROW(testing::collect(
      testing::prepare_text(
          kernel(R"({"op": "tensor_copy", "dst": "w[128:256]", "src": "w2[0:128]"})"), wide),
      0));
  EXPECT_EQ(
      run_error(kernel(R"({"op": "tensor_copy", "dst": "w[64:192]", "src": "w2[0:128]"})"), wide),
      "k.json: tensor_copy /program/0/dst: partition-start: dst 'w[64:192]' starts at "
      "partition 64 with 128 partitions; an access of 65-128 partitions must start at "
      "partition 0 or 128");
  EXPECT_EQ(
      run_error(kernel(R"({"op": "tensor_copy", "dst": "w[8:40]", "src": "w2[0:32]"})"), wide),
      "k.json: tensor_copy /program/0/dst: partition-start: dst 'w[8:40]' starts at "
      "partition 8 with 32 partitions; an access of at most 32 partitions must start at "
      "partition 0, 32, 64, 96, 128, 160, 192 or 224");
}

TEST(Validate, PsumBank) {
  // p[:, 256:768] float32: bytes 1024 .. 3071 of each partition; banks are 2048 bytes.
  EXPECT_EQ(
      error_on(std::string(R"({"op": "nc_matmul", "dst": "p[:, 256:768]", )") + kMatmulBf16 + "}"),
      "k.json: nc_matmul /program/0/dst: psum-bank: dst 'p[:, 256:768]' covers bytes "
      "1024-3071 of each partition, crossing from PSUM bank 0 into bank 1 (banks of 2048 "
      "bytes)");
  expect_ok(trn2_target(),
            std::string(R"({"op": "nc_matmul", "dst": "p[:, 512:1024]", )") + kMatmulBf16 + "}");
  EXPECT_EQ(
      error_on(
          trn3_target(),
          R"({"op": "nc_matmul", "dst": "p[:, 256:1280]", "stationary": "sbf[:, 0:128]", "moving": "sbf"})"),
      "k.json: nc_matmul /program/0/dst: psum-bank: dst 'p[:, 256:1280]' covers bytes "
      "1024-5119 of each partition, crossing from PSUM bank 0 into bank 1 (banks of 2048 "
      "bytes); a dst spanning several banks must start at a bank boundary");
}

TEST(Validate, ShapeMismatch) {
  EXPECT_EQ(
      error_on(
          R"({"op": "tensor_tensor", "dst": "s", "in0": "s2", "in1": "sbf[:, 0:512]", "alu": "add"})"),
      "k.json: tensor_tensor /program/0/in1: shape-mismatch: in1 'sbf[:, 0:512]' has shape "
      "[128, 512] but dst 's' has shape [128, 1024]");
  EXPECT_EQ(error_on(R"({"op": "tensor_copy", "dst": "s[0:1, 0:64]", "src": "s2[0:64, 0:1]"})"),
            "k.json: tensor_copy /program/0/dst: shape-mismatch: dst 's[0:1, 0:64]' spans 1 "
            "partition but src 's2[0:64, 0:1]' spans 64; compute engines map partitions one to "
            "one");
  EXPECT_EQ(
      error_on(
          R"({"op": "nc_matmul", "dst": "p[:, 0:512]", "stationary": "sbf[0:64, 0:128]", "moving": "sbf[:, 0:512]"})"),
      "k.json: nc_matmul /program/0: shape-mismatch: stationary 'sbf[0:64, 0:128]' has 64 "
      "partitions (the contraction K) but moving 'sbf[:, 0:512]' has 128");
  EXPECT_EQ(
      error_on(std::string(R"({"op": "nc_matmul", "dst": "p[0:64, 0:512]", )") + kMatmulBf16 + "}"),
      "k.json: nc_matmul /program/0/dst: shape-mismatch: dst 'p[0:64, 0:512]' is [64 "
      "partitions x 512] but stationary.T @ moving is [M = 128 partitions x N = 512]");
  EXPECT_EQ(
      error_on(R"({"op": "activation", "dst": "s", "src": "s2", "func": "exp", "bias": "col"})"),
      "k.json: activation /program/0/bias: shape-mismatch: bias 'col' must be [P, 1] with "
      "P = 128 (the partitions of the input), found [128, 2]");
  EXPECT_EQ(
      error_on(R"({"op": "tensor_reduce", "dst": "col", "src": "s", "alu": "add", "axis": 1})"),
      "k.json: tensor_reduce /program/0/dst: shape-mismatch: reducing src 's' of shape "
      "[128, 1024] gives [128], but dst 'col' has shape [128, 2]");
  EXPECT_EQ(
      error_on(
          R"({"op": "tensor_reduce", "dst": "col[:, 0:1]", "src": "s", "alu": "add", "axis": 0})"),
      "k.json: tensor_reduce /program/0/axis: axis: 0 is not a free axis of src 's' (shape "
      "[128, 1024], partition axis 0; to reduce across partitions use "
      "tensor_partition_reduce)");
  EXPECT_EQ(error_on(R"({"op": "dma_copy", "dst": "s[:, 0:512]", "src": "h"})"),
            "k.json: dma_copy /program/0/dst: shape-mismatch: dst 's[:, 0:512]' has shape [128, "
            "512] but src 'h' has shape [128, 1024]");
  EXPECT_EQ(error_on(trn2_target(), R"({"op": "all_gather", "dst": "hall", "src": "hg"})", "2"),
            "k.json: all_gather /program/0/dst: shape-mismatch: all_gather over 2 cores of src "
            "with 1024 elements needs dst with 2048 elements, found 1024");
  expect_ok(trn2_target(), R"({"op": "all_reduce", "dst": "hall", "src": "hg"})", "2");
}

TEST(Validate, CoresQueuesAndPeers) {
  EXPECT_EQ(error_on(trn2_target(), R"({"op": "core_barrier", "cores": [0, 5]})", "2"),
            "k.json: core_barrier /program/0/cores/1: core-group: core 5 does not exist; the "
            "kernel runs on 2 core(s), 0-1");
  EXPECT_EQ(error_on(trn2_target(), R"({"op": "core_barrier", "cores": [1, 1]})", "2"),
            "k.json: core_barrier /program/0/cores: core-group: core 1 is listed twice");
  EXPECT_EQ(error_on(trn2_target(), R"({"op": "send", "src": "hg", "peer": "pid"})", "2"),
            "k.json: send /program/0/peer: peer 'pid' = 0 is this core itself; send/recv need "
            "another core");
  EXPECT_EQ(error_on(R"({"op": "dma_copy", "dst": "s", "src": "h", "queue": 16})"),
            "k.json: dma_copy /program/0/queue: dma-queue: queue '16' = 16 is out of range 0-15");
  EXPECT_EQ(error_on(trn2_target(), "", "9"),
            "k.json: /cores: cores = 9 ('9') must be between 1 and the 8 NeuronCores of the "
            "configured system (1 chip(s) x 8 cores of trn2)");
}

}  // namespace
}  // namespace trnsim::kernel
