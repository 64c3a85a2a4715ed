// What kernel validation, allocation and the expression built-ins need to know about the
// hardware a kernel runs on: generation, on-chip memory geometry, Tensor Engine tile limits,
// engine limits and the system size. Filled from the configuration by target_from_params()
// (kernel/target_from_config.hpp); tests build it by hand. Leaves out every timing number.
#pragma once

#include <cstdint>
#include <string>

namespace trnsim::kernel {

struct Target {
  std::string name = "trn2";  ///< configuration name, used in messages ("the target 'trn2'")
  int nc_version = 3;  ///< NeuronCore-vN: 2 = Trn1, 3 = Trn2, 4 = Trn3 (hardware-facts.md §1)

  // System size.
  std::uint32_t cores_per_chip = 8;  ///< NeuronCores per chip
  std::uint32_t chips = 1;           ///< chips in the configured system (cores <= chips * cpc)

  // SBUF / PSUM geometry (per NeuronCore).
  std::uint32_t partitions = 128;               ///< SBUF and PSUM partitions (pmax)
  std::uint64_t sbuf_partition_bytes = 196608;  ///< usable SBUF bytes per partition
  std::uint32_t sbuf_alignment_bytes = 64;      ///< allocation alignment inside a partition
  std::uint32_t psum_banks = 8;                 ///< PSUM banks per partition
  std::uint32_t psum_bank_bytes = 2048;         ///< bytes of one bank per partition
  std::uint32_t psum_alignment_bytes = 4;       ///< allocation alignment inside a bank

  // HBM (per chip).
  std::uint64_t hbm_bytes = 96ull << 30;   ///< capacity of one chip's HBM
  std::uint64_t hbm_alignment_bytes = 64;  ///< alignment of HBM tensor addresses

  // Tensor Engine tile limits (elements).
  std::uint32_t gemm_stationary_fmax = 128;  ///< stationary free size (PE columns)
  std::uint32_t gemm_moving_fmax = 512;      ///< NKI nl.tile_size.gemm_moving_fmax
  std::uint32_t moving_fmax_fp32_dst = 512;  ///< largest moving free size, FP32 dst
  std::uint32_t moving_fmax_bf16_dst = 512;  ///< largest moving free size, BF16 dst (NC-v4+)
  std::uint32_t tensor_transpose_max = 128;  ///< nc_transpose on Tensor: [P, F] both <= this
  std::uint32_t vector_transpose_max = 32;   ///< nc_transpose on Vector: [P, F] both <= this

  // Vector/Scalar/GpSimd limits (elements per partition).
  std::uint64_t engine_free_max_sbuf = 65536;  ///< free size of an SBUF operand
  std::uint64_t engine_free_max_psum = 4096;   ///< free size of a PSUM operand
  std::uint32_t bn_stats_fmax = 512;           ///< bn_stats src free size

  // Features that the configuration may switch (defaults: NeuronCore-v3).
  bool double_row_supported = true;  ///< FP8 perf_mode double_row (NC-v3+)
  bool mx_supported = false;         ///< nc_matmul_mx (NC-v4+)
  bool bf16_dst_supported = false;   ///< matmul may write bfloat16 to PSUM (NC-v4+)

  // DMA.
  std::uint32_t dma_queues = 16;  ///< queue ids 0 .. dma_queues-1

  /// FP32 elements of one PSUM bank per partition (NKI psum_fmax).
  std::uint32_t psum_fmax() const { return psum_bank_bytes / 4; }
  std::uint64_t psum_partition_bytes() const {
    return static_cast<std::uint64_t>(psum_banks) * psum_bank_bytes;
  }
  std::uint64_t max_cores() const { return static_cast<std::uint64_t>(chips) * cores_per_chip; }
  /// "NeuronCore-v3"
  std::string nc_name() const { return "NeuronCore-v" + std::to_string(nc_version); }
};

}  // namespace trnsim::kernel
