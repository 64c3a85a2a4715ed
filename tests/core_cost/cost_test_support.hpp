// Test support for the cost-model tests: Params per generation set field by field from
// hardware-facts.md (independent of configs/*.json, so a config edit cannot silently change an
// expected number), and builders for operands and instructions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "config/params.hpp"
#include "kernel/instruction.hpp"

namespace trnsim::cost::test {

using config::Generation;
using config::Params;
using kernel::AccessPattern;
using kernel::DType;
using kernel::Engine;
using kernel::Instruction;
using kernel::MemoryKind;
using kernel::Opcode;
using kernel::Slot;

/// Trainium2 (NeuronCore-v3): the Params defaults, which are hardware-facts.md values (§2-9).
inline Params trn2() {
  return Params{};
}

/// Trainium1 (NeuronCore-v2): clocks hardware-facts.md §2; no double row (§3.4), no MX (§3.5), no
/// FP32 transpose mode (§3.3), 64-PE tiles (§3.2), no throttling (§3.8 names Trn2/Trn3), no BF16
/// VectorE/ScalarE perf modes (§4, §5); DMA 17 B/ns per engine (§9.1).
inline Params trn1() {
  Params p;
  p.name = "trn1";
  p.generation = Generation::trn1;
  p.nc_version = 2;
  p.tensor.clock_ghz = 2.8;
  p.tensor.double_row_supported = false;
  p.tensor.mx_supported = false;
  p.tensor.transpose_fp32_mode_speedup = 1;
  p.tensor.pe_tile_granularity = 64;
  p.tensor.throttle_enabled = false;
  p.vector.clock_ghz = 1.12;
  p.vector.bf16_fast_copy_speedup = 1;
  p.vector.bf16_2x_speedup = 1;
  p.vector.exponential_speedup = 1;
  p.scalar.clock_ghz = 1.4;
  p.scalar.bf16_speedup = 1;
  p.gpsimd.clock_ghz = 1.4;
  p.dma.engine_bandwidth_gbps = 17;
  p.dma.core_bandwidth_gbps = 500;
  return p;
}

/// Trainium3 (NeuronCore-v4): VectorE 1.2 GHz (§2), MX at 4x (§3.5), moving up to 4096 (§3.1),
/// VectorE exponential at 4x ScalarE exp (§4), ScalarE BF16 tensor_scalar/copy 2x (§5).
inline Params trn3() {
  Params p;
  p.name = "trn3";
  p.generation = Generation::trn3;
  p.nc_version = 4;
  p.tensor.mx_supported = true;
  p.tensor.moving_fmax = 4096;
  p.tensor.background_transpose = true;
  p.vector.clock_ghz = 1.2;
  p.vector.exponential_speedup = 4;
  p.scalar.bf16_speedup = 2;
  p.dma.engine_bandwidth_gbps = 33;
  return p;
}

/// Trainium4 (projected): Trn3 with "3x FP8, 6x FP4 vs Trn3" (hardware-facts.md §1, 3P) applied to
/// the TensorE rates: double row 2 x 3 = 6, MXFP8 4 x 3 = 12, MXFP4 4 x 6 = 24 (as
/// configs/trn4.json).
inline Params trn4() {
  Params p = trn3();
  p.name = "trn4";
  p.generation = Generation::trn4;
  p.nc_version = 5;
  p.tensor.fp8_double_row_speedup = 6;
  p.tensor.mx_speedup = 12;
  p.tensor.mxfp4_speedup = 24;
  return p;
}

inline std::vector<Params> all_generations() {
  return {trn1(), trn2(), trn3(), trn4()};
}

/// An operand with a row-major contiguous free pattern of `free_sizes` (outer first).
inline AccessPattern operand(MemoryKind memory, DType dtype, std::uint32_t partitions,
                             std::initializer_list<std::uint32_t> free_sizes,
                             std::uint32_t partition_start = 0) {
  AccessPattern pattern;
  pattern.memory = memory;
  pattern.dtype = dtype;
  pattern.tensor = 0;
  pattern.partition_start = partition_start;
  pattern.partitions = partitions;
  pattern.rank = static_cast<std::uint8_t>(free_sizes.size());
  std::size_t d = 0;
  for (std::uint32_t size : free_sizes) pattern.sizes[d++] = size;
  std::int64_t stride = 1;
  for (int i = static_cast<int>(pattern.rank) - 1; i >= 0; --i) {
    pattern.strides[i] = stride;
    stride *= pattern.sizes[i];
  }
  return pattern;
}
inline AccessPattern sbuf(DType dtype, std::uint32_t partitions,
                          std::initializer_list<std::uint32_t> free_sizes,
                          std::uint32_t partition_start = 0) {
  return operand(MemoryKind::kSbuf, dtype, partitions, free_sizes, partition_start);
}
inline AccessPattern psum(DType dtype, std::uint32_t partitions,
                          std::initializer_list<std::uint32_t> free_sizes,
                          std::uint32_t partition_start = 0) {
  return operand(MemoryKind::kPsum, dtype, partitions, free_sizes, partition_start);
}
inline AccessPattern hbm(DType dtype, std::initializer_list<std::uint32_t> sizes) {
  return operand(MemoryKind::kHbm, dtype, 1, sizes);
}
/// A one-dimensional SBUF pattern of n elements, `stride` elements apart.
inline AccessPattern sbuf_strided(DType dtype, std::uint32_t partitions, std::uint32_t n,
                                  std::int64_t stride) {
  AccessPattern pattern = sbuf(dtype, partitions, {n});
  pattern.strides[0] = stride;
  return pattern;
}

inline Instruction instruction(Opcode opcode, Engine engine,
                               std::initializer_list<std::pair<Slot, AccessPattern>> operands) {
  Instruction in;
  in.opcode = opcode;
  in.engine = engine;
  for (const auto& [slot, pattern] : operands) in.operand(slot) = pattern;
  return in;
}

/// nc_matmul: dst psum [M, N] fp32, stationary [K, M], moving [K, N].
inline Instruction matmul(DType dtype, std::uint32_t k, std::uint32_t m, std::uint32_t n) {
  return instruction(Opcode::kNcMatmul, Engine::kTensor,
                     {{Slot::kDst, psum(DType::kFloat32, m, {n})},
                      {Slot::kStationary, sbuf(dtype, k, {m})},
                      {Slot::kSrc, sbuf(dtype, k, {n})}});
}

}  // namespace trnsim::cost::test
