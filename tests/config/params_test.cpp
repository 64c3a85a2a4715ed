// Parameter declarations and derived quantities, checked against hand-worked hardware-facts.md
// numbers.
#include "config/params.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "config/load.hpp"
#include "config/schema.hpp"

namespace trnsim::config {
namespace {

/// Collects every field as dotted key -> JSON value.
class Collect {
 public:
  std::map<std::string, nlohmann::json> values;

  template <class T>
  void field(std::string_view key, T& value, const FieldMeta& /*meta*/) {
    const std::string dotted = prefix_ + std::string(key);
    if constexpr (ConfigEnum<T>) {
      values[dotted] = std::string(enum_name(value));
    } else {
      values[dotted] = value;
    }
  }
  template <class S>
  void section(std::string_view key, S& block, std::string_view /*description*/) {
    prefix_ = std::string(key) + ".";
    block.visit(*this);
    prefix_.clear();
  }

 private:
  std::string prefix_;
};

std::map<std::string, nlohmann::json> values_of(Params params) {
  Collect collect;
  params.visit(collect);
  return collect.values;
}

TEST(Params, DefaultsAreTheTrn2Config) {
  EXPECT_EQ(values_of(Params{}), values_of(load_config("trn2").params));
}

TEST(Params, EveryFieldHasUnitDescriptionSourceAndSaneRange) {
  std::set<std::string> keys;
  for (const auto& field : parameter_fields()) {
    EXPECT_TRUE(keys.insert(field.key).second) << "declared twice: " << field.key;
    EXPECT_FALSE(field.meta.description.empty()) << field.key;
    EXPECT_FALSE(field.meta.source.empty()) << field.key;
    const bool numeric = field.kind == FieldKind::integer || field.kind == FieldKind::integer64 ||
                         field.kind == FieldKind::number;
    if (numeric) {
      EXPECT_LE(field.meta.min, field.meta.max) << field.key;
      EXPECT_TRUE(std::isfinite(field.meta.min) && std::isfinite(field.meta.max))
          << field.key << " needs a range";
    }
    if (field.kind == FieldKind::enumeration) {
      EXPECT_GE(field.choices.size(), 2u) << field.key;  // model choices too: two built-ins
    }
  }
  EXPECT_EQ(parameter_keys().size(), parameter_fields().size());
}

TEST(Params, EnumSpellingsRoundTrip) {
  EXPECT_EQ(enum_name(Topology::switch_), "switch");
  EXPECT_EQ(parse_enum<Topology>("nvlink_switch"), Topology::nvlink_switch);
  EXPECT_EQ(parse_enum<DmaArbitration>("strict_priority"), DmaArbitration::strict_priority);
  EXPECT_EQ(parse_enum<Generation>("trn5"), std::nullopt);
}

TEST(Params, PeakFlopsPerCoreMatchFacts) {
  // hardware-facts.md §1: NC-v3: 128*128*2*2.4 GHz = 78.6432e12 BF16; x2 FP8 = 157.2864e12; /4
  // FP32.
  const Params trn2 = load_config("trn2").params;
  EXPECT_DOUBLE_EQ(trn2.peak_bf16_flops_per_core(), 128.0 * 128 * 2 * 2.4e9);
  EXPECT_NEAR(trn2.peak_bf16_flops_per_core(), 78.6432e12, 1e6);
  EXPECT_NEAR(trn2.peak_fp8_flops_per_core(), 157.2864e12, 1e6);
  EXPECT_NEAR(trn2.peak_fp32_flops_per_core(), 19.6608e12, 1e6);
  EXPECT_EQ(trn2.peak_mxfp8_flops_per_core(), 0.0);
  // NC-v2: 128*128*2*2.8 GHz = 91.7504e12 (docs "92"); FP8 at the BF16 rate on Trn1.
  const Params trn1 = load_config("trn1").params;
  EXPECT_NEAR(trn1.peak_bf16_flops_per_core(), 91.7504e12, 1e6);
  EXPECT_NEAR(trn1.peak_fp8_flops_per_core(), 91.7504e12, 1e6);
  // NC-v4: MXFP8 x4 = 314.5728e12 per core; x 8 cores = 2,516.58 TFLOPS (A-TRN3: 2,517).
  const Params trn3 = load_config("trn3").params;
  EXPECT_NEAR(trn3.peak_mxfp8_flops_per_core(), 314.5728e12, 1e6);
  EXPECT_NEAR(trn3.peak_mxfp8_flops_per_core() * trn3.cores_per_chip(), 2516.5824e12, 1e7);
}

TEST(Params, Trn4IsTheAnnouncedMultipleOfTrn3) {
  // hardware-facts.md §11.4: 3x FP8, 6x FP4, 4x memory bandwidth vs Trainium3.
  const Params trn3 = load_config("trn3").params;
  const Params trn4 = load_config("trn4").params;
  EXPECT_DOUBLE_EQ(trn4.peak_mxfp8_flops_per_core() * trn4.cores_per_chip(),
                   3 * trn3.peak_mxfp8_flops_per_core() * trn3.cores_per_chip());
  EXPECT_DOUBLE_EQ(trn4.peak_mxfp4_flops_per_core() * trn4.cores_per_chip(),
                   6 * trn3.peak_mxfp4_flops_per_core() * trn3.cores_per_chip());
  EXPECT_DOUBLE_EQ(trn4.hbm_bandwidth_gbps(), 4 * trn3.hbm_bandwidth_gbps());
  EXPECT_EQ(trn4.nc_version, 5);
}

TEST(Params, ChipMemoryTotalsMatchFacts) {
  // hardware-facts.md §1: HBM 32/96/144 GiB; 820 GB/s, 2.9 TB/s, 4.9 TB/s.
  const Params trn1 = load_config("trn1").params;
  const Params trn2 = load_config("trn2").params;
  const Params trn3 = load_config("trn3").params;
  EXPECT_DOUBLE_EQ(trn1.hbm_capacity_gib(), 32);
  EXPECT_DOUBLE_EQ(trn2.hbm_capacity_gib(), 96);
  EXPECT_DOUBLE_EQ(trn3.hbm_capacity_gib(), 144);
  EXPECT_DOUBLE_EQ(trn1.hbm_bandwidth_gbps(), 820);
  EXPECT_DOUBLE_EQ(trn2.hbm_bandwidth_gbps(), 2900);
  EXPECT_DOUBLE_EQ(trn3.hbm_bandwidth_gbps(), 4900);
  // hardware-facts.md §1, §8: SBUF per chip 48 MiB (2 x 24), 224 MiB (8 x 28), 256 MiB (8 x 32).
  const auto sbuf_mib = [](const Params& p) {
    return static_cast<double>(p.sbuf.partitions) * p.sbuf.partition_bytes * p.chip.cores /
           (1 << 20);
  };
  EXPECT_DOUBLE_EQ(sbuf_mib(trn1), 48);
  EXPECT_DOUBLE_EQ(sbuf_mib(trn2), 224);
  EXPECT_DOUBLE_EQ(sbuf_mib(trn3), 256);
  // hardware-facts.md §8: NC-v2 usable 192 KiB - 16 KiB = 176 KiB = 180224 bytes per partition.
  EXPECT_EQ(trn1.sbuf.usable_partition_bytes, 176 * 1024);
  // hardware-facts.md §8: PSUM 8 banks x 2 KiB, 512 FP32 per bank (psum_fmax).
  EXPECT_EQ(trn2.psum_fmax(), 512);
}

TEST(Params, DmaAndHbmDerivedRatesMatchFacts) {
  // hardware-facts.md §9.1: 16 engines x 23 B/ns = 368 GB/s per Trn2 NC; Trn1 272; Trn3 528.
  EXPECT_DOUBLE_EQ(load_config("trn2").params.dma.engines_per_core *
                       load_config("trn2").params.dma.engine_bandwidth_gbps,
                   368);
  EXPECT_DOUBLE_EQ(16 * load_config("trn1").params.dma.engine_bandwidth_gbps, 272);
  EXPECT_DOUBLE_EQ(16 * load_config("trn3").params.dma.engine_bandwidth_gbps, 528);
  // Trn2 burst time: 64 B / (725 GB/s / 16 channels) = 64 / 45.3125 = 1.41241... ns.
  EXPECT_NEAR(load_config("trn2").params.hbm.burst_ns(), 64.0 / 45.3125, 1e-12);
  // Clock periods: 1 / 2.4 GHz = 0.41667 ns; 1 / 0.96 GHz = 1.04167 ns.
  EXPECT_NEAR(load_config("trn2").params.tensor_cycle_ns(), 0.4166667, 1e-6);
  EXPECT_NEAR(load_config("trn2").params.vector.cycle_ns(), 1.0416667, 1e-6);
}

TEST(Params, SystemVariantsHaveTheDocumentedShape) {
  const Params trn2_48xl = load_config("trn2-48xl").params;
  EXPECT_EQ(trn2_48xl.system.topology, Topology::torus2d);
  EXPECT_EQ(trn2_48xl.system.torus_x * trn2_48xl.system.torus_y, 16);
  EXPECT_EQ(trn2_48xl.total_cores(), 16 * 8);  // 128 physical NCs (hardware-facts.md §12)
  const Params ultra = load_config("trn2-ultraserver").params;
  EXPECT_EQ(ultra.system.topology, Topology::torus3d);
  EXPECT_EQ(ultra.system.chips, 64);
  EXPECT_EQ(ultra.system.torus_z, 4);
  EXPECT_EQ(load_config("trn1-32xl").params.system.chips, 16);
  EXPECT_EQ(load_config("trn3-ultraserver-64").params.system.topology, Topology::switch_);
  EXPECT_EQ(load_config("trn3-ultraserver-64").params.system.chips, 4 * 16);
  EXPECT_EQ(load_config("trn3-ultraserver-144").params.system.chips, 36 * 4);
  EXPECT_EQ(load_config("trn3-ultraserver-144").params.system.chips_per_instance, 4);
  EXPECT_EQ(load_config("trn4-rack").params.system.topology, Topology::nvlink_switch);
  EXPECT_EQ(load_config("trn4-rack").params.generation, Generation::trn4);
}

}  // namespace
}  // namespace trnsim::config
