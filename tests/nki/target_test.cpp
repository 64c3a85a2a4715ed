// The tracer's --target JSON: the architecture constants of a config and its compiler section.
#include "nki/target.hpp"

#include <gtest/gtest.h>

#include "config/load.hpp"
#include "util/error.hpp"

namespace trnsim::nki {
namespace {

TEST(TargetJson, Trn2GivesTheNkiConstantsOfNeuronCoreV3) {
  const nlohmann::ordered_json target = target_json(config::load_config("trn2").params);
  // hardware-facts.md §3.1, §8, §9.2: 128 partitions, 128 x 512 matmul tiles, 8 PSUM banks of 2
  // KiB, 192 KiB usable SBUF per partition, 16 DMA queues, 8 cores per chip.
  const nlohmann::ordered_json expected = nlohmann::ordered_json::parse(R"({
    "name": "trn2", "nc_version": 3, "pmax": 128, "gemm_stationary_fmax": 128,
    "gemm_moving_fmax": 512, "psum_fmax": 512, "psum_num_banks": 8, "psum_bank_bytes": 2048,
    "psum_partition_bytes": 16384, "sbuf_partition_bytes": 196608, "sbuf_alignment_bytes": 32,
    "psum_alignment_bytes": 4, "bn_stats_fmax": 512, "vector_transpose_max": 32,
    "dma_queues": 16, "cores_per_chip": 8,
    "compiler": {"loop_tile_buffers": 2, "dma_queues": 16, "sbuf_memset_engine": "gpsimd",
                 "copy_engine": "vector", "fold_zero_fill": true, "dge_mode": "hwdge"}})");
  EXPECT_EQ(target, expected) << target.dump(2);
}

TEST(TargetJson, FollowsTheGenerationAndOverrides) {
  const nlohmann::ordered_json trn1 = target_json(config::load_config("trn1").params);
  EXPECT_EQ(trn1["name"], "trn1");
  EXPECT_EQ(trn1["nc_version"], 2);
  EXPECT_EQ(trn1["cores_per_chip"], 2);
  const nlohmann::ordered_json changed = target_json(
      config::load_config("trn2", {"compiler.loop_tile_buffers=3", "compiler.copy_engine=scalar",
                                   "compiler.fold_zero_fill=false", "psum.bank_bytes=1024"})
          .params);
  EXPECT_EQ(changed["compiler"]["loop_tile_buffers"], 3);
  EXPECT_EQ(changed["compiler"]["copy_engine"], "scalar");
  EXPECT_EQ(changed["compiler"]["fold_zero_fill"], false);
  EXPECT_EQ(changed["psum_fmax"], 256);                  // FP32 elements of one 1 KiB bank
  EXPECT_EQ(changed["psum_partition_bytes"], 8 * 1024);  // 8 banks of 1 KiB
}

TEST(TargetJson, TileSizesFollowThePeArraySize) {
  // nl.tile_size on a 256 x 256 array: pmax = gemm_stationary_fmax = 256; the moving free size
  // and a PSUM bank (512 FP32) do not depend on the array.
  const nlohmann::ordered_json wide =
      target_json(config::load_config("trn2", {"tensor.rows=256"}).params);
  EXPECT_EQ(wide["pmax"], 256);
  EXPECT_EQ(wide["gemm_stationary_fmax"], 256);
  EXPECT_EQ(wide["gemm_moving_fmax"], 512);
  EXPECT_EQ(wide["psum_fmax"], 512);
  const nlohmann::ordered_json narrow =
      target_json(config::load_config("trn3", {"tensor.rows=64"}).params);
  EXPECT_EQ(narrow["pmax"], 64);
  EXPECT_EQ(narrow["gemm_stationary_fmax"], 64);
  EXPECT_EQ(narrow["gemm_moving_fmax"], 4096);  // Trainium3: tensor.moving_fmax
}

TEST(CompilerSection, DmaQueuesMustExist) {
  try {
    config::load_config("trn2", {"compiler.dma_queues=32"});
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("compiler.dma_queues = 32 (from --set "
                                         "compiler.dma_queues=32) must not exceed "
                                         "dma.queues_per_engine = 16"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace trnsim::nki
