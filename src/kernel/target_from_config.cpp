#include "kernel/target_from_config.hpp"

#include <algorithm>
#include <cmath>

namespace trnsim::kernel {

Target target_from_params(const config::Params& params) {
  Target target;
  target.name = params.name;
  target.nc_version = params.nc_version;
  target.cores_per_chip = static_cast<std::uint32_t>(params.chip.cores);
  target.chips = static_cast<std::uint32_t>(params.system.chips);

  target.partitions = static_cast<std::uint32_t>(params.sbuf.partitions);
  target.sbuf_partition_bytes = static_cast<std::uint64_t>(params.sbuf.usable_partition_bytes);
  target.sbuf_alignment_bytes = static_cast<std::uint32_t>(params.sbuf.alignment_bytes);
  target.psum_banks = static_cast<std::uint32_t>(params.psum.banks);
  target.psum_bank_bytes = static_cast<std::uint32_t>(params.psum.bank_bytes);
  target.psum_alignment_bytes = static_cast<std::uint32_t>(params.psum.alignment_bytes);

  target.hbm_bytes = static_cast<std::uint64_t>(
      std::llround(params.hbm_capacity_gib() * 1024.0 * 1024.0 * 1024.0));

  target.gemm_stationary_fmax = static_cast<std::uint32_t>(params.tensor.cols);
  target.gemm_moving_fmax = static_cast<std::uint32_t>(params.tensor.moving_fmax);
  target.moving_fmax_fp32_dst = static_cast<std::uint32_t>(params.tensor.moving_fmax);
  target.moving_fmax_bf16_dst = static_cast<std::uint32_t>(params.tensor.bf16_dst_supported
                                                               ? params.tensor.moving_fmax_bf16_dst
                                                               : params.tensor.moving_fmax);
  target.tensor_transpose_max =
      static_cast<std::uint32_t>(std::min(params.tensor.rows, params.tensor.cols));
  target.vector_transpose_max = static_cast<std::uint32_t>(params.vector.transpose_max);
  target.engine_free_max_sbuf = static_cast<std::uint64_t>(params.vector.max_free_elems_sbuf);
  target.engine_free_max_psum = static_cast<std::uint64_t>(params.vector.max_free_elems_psum);
  target.bn_stats_fmax = static_cast<std::uint32_t>(params.vector.bn_stats_fmax);

  target.double_row_supported = params.tensor.double_row_supported;
  target.mx_supported = params.tensor.mx_supported;
  target.bf16_dst_supported = params.tensor.bf16_dst_supported;

  target.dma_queues = static_cast<std::uint32_t>(params.dma.queues_per_engine);
  return target;
}

}  // namespace trnsim::kernel
