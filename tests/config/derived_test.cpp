// Derived and informational parameters: the PE-array size tensor.rows drives the columns, the
// SBUF/PSUM partitions, the engine lanes and the fill/drain latency; PSUM bytes per partition
// follow the banks; derived keys cannot be set; informational keys warn when set.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "config/describe.hpp"
#include "config/load.hpp"
#include "config/schema.hpp"
#include "test_support.hpp"

namespace trnsim::config {
namespace {

using ::testing::HasSubstr;
using testing::input_error;
using testing::ScratchDir;

TEST(DerivedParameters, FollowTheArraySize) {
  for (const int size : {32, 64, 256}) {
    const Params p = load_config("trn1", {"tensor.rows=" + std::to_string(size)}).params;
    EXPECT_EQ(p.tensor.cols, size);
    EXPECT_EQ(p.sbuf.partitions, size);
    EXPECT_EQ(p.vector.lanes, size);
    EXPECT_EQ(p.scalar.lanes, size);
    EXPECT_EQ(p.gpsimd.lanes, size);
    EXPECT_EQ(p.tensor.pipeline_latency_cycles, 2 * size);  // rows + cols
    // Bytes per partition stay as configured (trn1: 176 KiB usable), so SBUF grows with it.
    EXPECT_EQ(p.sbuf.usable_partition_bytes, 176 * 1024);
    // Peak BF16 = rows x cols MACs x 2 FLOP x 2.8 GHz: 256 x 256 -> 367.0016e12.
    EXPECT_DOUBLE_EQ(p.peak_bf16_flops_per_core(), 2.0 * size * size * 2.8e9);
  }
}

TEST(DerivedParameters, PsumBytesPerPartitionFollowTheBanks) {
  // 4 banks x 2048 B = 8192 B; 16 banks x 1024 B = 16384 B.
  EXPECT_EQ(load_config("trn2", {"psum.banks=4"}).params.psum.partition_bytes, 8192);
  EXPECT_EQ(
      load_config("trn2", {"psum.banks=16", "psum.bank_bytes=1024"}).params.psum.partition_bytes,
      16384);
  // The moving-size rule sees the derived value: 4 B x 512 = 2048 > 1 x 1024.
  EXPECT_THAT(input_error([] {
                load_config("trn2", {"psum.banks=1", "psum.bank_bytes=1024"});
              }),
              HasSubstr("4 bytes x tensor.moving_fmax = 512 (from built-in config 'trn2') exceeds "
                        "psum.partition_bytes = psum.banks x psum.bank_bytes = 1024"));
}

TEST(DerivedParameters, SettingOneWithSetIsRefusedNamingItsInputs) {
  EXPECT_THAT(input_error([] { load_config("trn2", {"sbuf.partitions=256"}); }),
              HasSubstr("--set sbuf.partitions=256: sbuf.partitions is derived (sbuf.partitions = "
                        "tensor.rows; "));
  EXPECT_THAT(input_error([] { load_config("trn2", {"sbuf.partitions=256"}); }),
              HasSubstr("and cannot be set: set tensor.rows instead"));
  EXPECT_THAT(input_error([] { load_config("trn2", {"tensor.cols=64"}); }),
              HasSubstr("tensor.cols is derived (tensor.cols = tensor.rows; "));
  EXPECT_THAT(input_error([] { load_config("trn2", {"psum.partition_bytes=8192"}); }),
              HasSubstr("set psum.banks and psum.bank_bytes instead"));
  // Every derived key is refused, even with the value it already has.
  for (const auto& field : parameter_fields()) {
    if (field.meta.derived_from.empty()) continue;
    const std::string set = field.key + "=128";
    EXPECT_THAT(input_error([&] { load_config("trn2", {set}); }), HasSubstr("cannot be set"))
        << field.key;
  }
}

TEST(DerivedParameters, NonSquareArraysAreRefusedWithTheReason) {
  // The only way to ask for one is to set the columns, which names why it cannot be.
  EXPECT_THAT(input_error([] {
                load_config("trn2", {"tensor.rows=256", "tensor.cols=128"});
              }),
              HasSubstr("SBUF (rows) and PSUM (columns) share one partition count"));
}

TEST(DerivedParameters, AFileMayRepeatADerivedValueButNotChangeIt) {
  ScratchDir dir;
  const std::string same =
      dir.write("same.json", R"({"extends": "trn2", "tensor": {"rows": 64, "cols": 64},
                       "sbuf": {"partitions": 64}})");
  EXPECT_EQ(load_config(same).params.sbuf.partitions, 64);
  const std::string different =
      dir.write("different.json", R"({"extends": "trn2", "tensor": {"rows": 64},
                                      "sbuf": {"partitions": 128}})");
  EXPECT_THAT(input_error([&] { load_config(different); }),
              HasSubstr(different +
                        ": /sbuf/partitions: sbuf.partitions = 128 disagrees with the "
                        "derived value 64 (tensor.rows = 64 (from " +
                        different + "))"));
  const std::string sourced = dir.write(
      "sourced.json", R"({"extends": "trn2", "sources": {"sbuf.partitions": "my notes"}})");
  EXPECT_THAT(input_error([&] { load_config(sourced); }),
              HasSubstr("/sources/sbuf.partitions: a derived parameter has no source of its own"));
}

TEST(DerivedParameters, ShowOutputWithADerivedChangeLoadsBack) {
  ScratchDir dir;
  const LoadedConfig first = load_config("trn2", {"tensor.rows=256", "psum.banks=4"});
  const std::string file = dir.write("shown.json", first.effective.dump(2));
  EXPECT_EQ(load_config(file).effective.dump(), first.effective.dump());
}

TEST(DerivedParameters, AnOutOfRangeDerivedValueNamesItsInputs) {
  // 1024 banks x 2 MiB = 2 GiB per partition, above the declared 1 GiB.
  EXPECT_THAT(
      input_error([] {
        load_config("trn2", {"psum.banks=1024", "psum.bank_bytes=2097152"});
      }),
      HasSubstr("psum.partition_bytes = psum.banks x psum.bank_bytes = 2147483647 must be between "
                "1 and 1073741824 bytes (psum.banks = 1024 (from --set psum.banks=1024)"));
}

TEST(InformationalParameters, SetWarnsAndAppliesFilesDoNot) {
  const LoadedConfig set = load_config("trn2", {"generation=trn3", "tensor.clock_ghz=2.0"});
  EXPECT_EQ(set.params.generation, Generation::trn3);
  ASSERT_EQ(set.warnings.size(), 1u);
  EXPECT_THAT(set.warnings[0], HasSubstr("--set generation=trn3: generation is informational ("));
  EXPECT_THAT(set.warnings[0], HasSubstr("it changes no simulated result"));
  ScratchDir dir;
  const std::string file =
      dir.write("labelled.json", R"({"extends": "trn2", "generation": "trn3"})");
  EXPECT_TRUE(load_config(file).warnings.empty());
  EXPECT_TRUE(load_config("trn2", {"tensor.clock_ghz=2.0"}).warnings.empty());
}

TEST(InformationalParameters, NoFieldIsBothDerivedAndInformational) {
  for (const auto& field : parameter_fields()) {
    EXPECT_TRUE(field.meta.derived_from.empty() || field.meta.informational.empty()) << field.key;
  }
}

TEST(Explain, MarksDerivedAndInformationalParameters) {
  const std::string table = explain_table(load_config("trn2", {"tensor.rows=64"}));
  EXPECT_THAT(table, HasSubstr("(derived: = tensor.rows)"));
  EXPECT_THAT(table, HasSubstr("(derived: = psum.banks x psum.bank_bytes)"));
  EXPECT_THAT(table, HasSubstr("(informational: a label)"));
  std::istringstream lines(table);
  std::string line;
  bool saw_partitions = false;
  while (std::getline(lines, line)) {
    if (line.rfind("sbuf.partitions ", 0) == 0) {
      saw_partitions = true;
      EXPECT_THAT(line, HasSubstr(" 64 "));
    }
  }
  EXPECT_TRUE(saw_partitions);
}

}  // namespace
}  // namespace trnsim::config
