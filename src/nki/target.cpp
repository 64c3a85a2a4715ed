#include "nki/target.hpp"

#include <string>

#include "kernel/target_from_config.hpp"

namespace trnsim::nki {

nlohmann::ordered_json target_json(const config::Params& params) {
  const kernel::Target target = kernel::target_from_params(params);
  nlohmann::ordered_json json;
  json["name"] = target.name;
  json["nc_version"] = target.nc_version;
  json["pmax"] = target.partitions;
  json["gemm_stationary_fmax"] = target.gemm_stationary_fmax;
  json["gemm_moving_fmax"] = target.gemm_moving_fmax;
  json["psum_fmax"] = target.psum_fmax();
  json["psum_num_banks"] = target.psum_banks;
  json["psum_bank_bytes"] = target.psum_bank_bytes;
  json["psum_partition_bytes"] = target.psum_partition_bytes();
  json["sbuf_partition_bytes"] = target.sbuf_partition_bytes;
  json["sbuf_alignment_bytes"] = target.sbuf_alignment_bytes;
  json["psum_alignment_bytes"] = target.psum_alignment_bytes;
  json["bn_stats_fmax"] = target.bn_stats_fmax;
  json["vector_transpose_max"] = target.vector_transpose_max;
  json["dma_queues"] = target.dma_queues;
  json["cores_per_chip"] = target.cores_per_chip;
  const config::CompilerParams& compiler = params.compiler;
  json["compiler"] = {
      {"loop_tile_buffers", compiler.loop_tile_buffers},
      {"dma_queues", compiler.dma_queues},
      {"sbuf_memset_engine", std::string(config::enum_name(compiler.sbuf_memset_engine))},
      {"copy_engine", std::string(config::enum_name(compiler.copy_engine))},
      {"fold_zero_fill", compiler.fold_zero_fill},
      {"dge_mode", std::string(config::enum_name(compiler.dge_mode))},
  };
  return json;
}

}  // namespace trnsim::nki
