#include "kernel/target_from_config.hpp"

#include <gtest/gtest.h>

#include "config/load.hpp"

namespace trnsim::kernel {
namespace {

// Expected values are the hardware-facts.md numbers the built-in configs are documented to carry.
TEST(TargetFromConfig, Trn2) {
  const Target t = target_from_params(config::load_config("trn2").params);
  EXPECT_EQ(t.name, "trn2");
  EXPECT_EQ(t.nc_version, 3);
  EXPECT_EQ(t.cores_per_chip, 8u);      // hardware-facts.md §1
  EXPECT_EQ(t.partitions, 128u);        // §8
  EXPECT_EQ(t.psum_banks, 8u);          // §8
  EXPECT_EQ(t.psum_bank_bytes, 2048u);  // §8
  EXPECT_EQ(t.psum_fmax(), 512u);
  EXPECT_EQ(t.gemm_stationary_fmax, 128u);  // §3.1
  EXPECT_EQ(t.moving_fmax_fp32_dst, 512u);  // §3.1
  EXPECT_TRUE(t.double_row_supported);      // §3.4
  EXPECT_FALSE(t.mx_supported);             // §3.5
  EXPECT_EQ(t.hbm_bytes, 96ull << 30);      // 96 GiB, §1
  EXPECT_EQ(t.dma_queues, 16u);             // §9.2
}

TEST(TargetFromConfig, Trn3AndTrn1) {
  const Target t3 = target_from_params(config::load_config("trn3").params);
  EXPECT_EQ(t3.nc_version, 4);
  EXPECT_TRUE(t3.mx_supported);
  EXPECT_EQ(t3.moving_fmax_fp32_dst, 4096u);  // §3.1
  EXPECT_EQ(t3.moving_fmax_bf16_dst, 8192u);  // §3.1
  const Target t1 = target_from_params(config::load_config("trn1").params);
  EXPECT_EQ(t1.nc_version, 2);
  EXPECT_EQ(t1.cores_per_chip, 2u);
  EXPECT_FALSE(t1.double_row_supported);
}

}  // namespace
}  // namespace trnsim::kernel
