// Profile tables: the columns match the documented contract in docs/outputs.md, and one row per
// instruction / DMA event carries the hand-computed values.
#include "report/profile.hpp"

#include <gtest/gtest.h>

#include <map>

#include "report/instruction_labels.hpp"
#include "report_test_support.hpp"

namespace trnsim::report {
namespace {

using kernel::Engine;
using kernel::MemoryKind;
using kernel::Opcode;
using testing::csv_split;
using testing::documented_columns;
using testing::GoldenKernel;
using testing::lines_of;
using testing::read_file;
using testing::ScratchDir;

std::vector<std::string> as_strings(const std::vector<std::string_view>& columns) {
  return {columns.begin(), columns.end()};
}

/// Rows of a CSV file as column name -> value (header checked against `columns`).
std::vector<std::map<std::string, std::string>> read_rows(
    const std::string& path, const std::vector<std::string_view>& columns) {
  const std::vector<std::string> lines = lines_of(read_file(path));
  EXPECT_FALSE(lines.empty());
  EXPECT_EQ(csv_split(lines.at(0)), as_strings(columns));
  std::vector<std::map<std::string, std::string>> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> fields = csv_split(lines[i]);
    EXPECT_EQ(fields.size(), columns.size()) << lines[i];
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < columns.size() && c < fields.size(); ++c) {
      row[std::string(columns[c])] = fields[c];
    }
    rows.push_back(row);
  }
  return rows;
}

TEST(ProfileColumns, MatchTheDocumentedContract) {
  EXPECT_EQ(as_strings(profile_columns()), documented_columns("`--profile` columns"));
  EXPECT_EQ(as_strings(dma_profile_columns()), documented_columns("`--dma-profile` columns"));
}

TEST(MemoryTraffic, CountsReadsAndWritesPerMemory) {
  const GoldenKernel golden;
  // nc_matmul: stationary w_sb and moving x_sb, 128 x 128 bfloat16 = 32768 B each, read from
  // SBUF; dst acc 128 x 128 float32 = 65536 B written to PSUM.
  kernel::Instruction matmul = golden.first(Opcode::kNcMatmul);
  MemoryTraffic traffic = memory_traffic(matmul);
  EXPECT_EQ(traffic.read(MemoryKind::kSbuf), 65536u);
  EXPECT_EQ(traffic.written(MemoryKind::kPsum), 65536u);
  EXPECT_EQ(traffic.read(MemoryKind::kPsum), 0u);
  // Accumulating into acc also reads it.
  matmul.accumulate = true;
  EXPECT_EQ(memory_traffic(matmul).read(MemoryKind::kPsum), 65536u);
  // tensor_tensor reads h_sb twice (2 x 65536 B) and writes y_sb (65536 B).
  traffic = memory_traffic(golden.first(Opcode::kTensorTensor));
  EXPECT_EQ(traffic.read(MemoryKind::kSbuf), 131072u);
  EXPECT_EQ(traffic.written(MemoryKind::kSbuf), 65536u);
  // load w: 32768 B from HBM into SBUF.
  traffic = memory_traffic(golden.first(Opcode::kDmaCopy));
  EXPECT_EQ(traffic.read(MemoryKind::kHbm), 32768u);
  EXPECT_EQ(traffic.written(MemoryKind::kSbuf), 32768u);
  EXPECT_EQ(traffic.written(MemoryKind::kHbm), 0u);
}

TEST(ProfileWriter, OneRowPerInstructionWithTheHandComputedValues) {
  const GoldenKernel golden;
  ScratchDir dir;
  const std::string path = dir.file("profile.csv");
  core::InstructionTiming timing;
  timing.instruction = &golden.first(Opcode::kNcMatmul);
  timing.start_ns = 100;
  timing.end_ns = 218.5;
  timing.visible_ns = 300;
  timing.wait_ns = 50;
  timing.waited_on = Engine::kDma;
  timing.waited_on_sequence = 1;
  core::InstructionTiming load;
  load.instruction = &golden.first(Opcode::kDmaCopy);
  load.start_ns = 0;
  load.end_ns = 2;
  {
    ProfileWriter writer(path, golden.program(), 8);
    writer.instruction(timing);
    writer.instruction(load);
    EXPECT_EQ(writer.rows(), 2u);
    writer.finish();
  }
  const auto rows = read_rows(path, profile_columns());
  ASSERT_EQ(rows.size(), 2u);
  const std::map<std::string, std::string> expected{
      {"core", "0"},
      {"chip", "0"},
      {"seq", "2"},
      {"engine", "tensor"},
      {"opcode", "nc_matmul"},
      {"label", "mm, \"main\""},
      {"nki_source_location", golden.program().file + ":/program/1/body/1"},
      {"loop_values", "t=0"},
      {"start_ts", "100.000"},
      {"end_ts", "218.500"},
      {"duration_ns", "118.500"},
      {"evt_wait_time_ns", "50.000"},
      {"waited_on_engine", "dma"},
      {"waited_on_seq", "1"},
      {"result_visible_ts", "300.000"},
      {"dtype", "bfloat16"},
      {"partitions", "128"},
      {"elements_per_partition", "128"},
      {"operands",
       "dst=acc[128, 128] float32 psum; moving=x_sb[128, 128] bfloat16 sbuf; "
       "stationary=w_sb[128, 128] bfloat16 sbuf"},
      {"hbm_read_bytes", "0"},
      {"hbm_write_bytes", "0"},
      {"sbuf_read_bytes", "65536"},
      {"sbuf_write_bytes", "0"},
      {"psum_read_bytes", "0"},
      {"psum_write_bytes", "65536"},
      {"raw_flops", "4194304"},  // 2 * 128 * 128 * 128
      {"dma_queue", ""},
  };
  EXPECT_EQ(rows[0], expected);
  // The DMA trigger: its sequencer (sync) and queue; no wait, visible time in the DMA profile.
  EXPECT_EQ(rows[1].at("engine"), "sync");
  EXPECT_EQ(rows[1].at("opcode"), "dma_copy");
  EXPECT_EQ(rows[1].at("label"), "load w");
  EXPECT_EQ(rows[1].at("loop_values"), "");
  EXPECT_EQ(rows[1].at("dma_queue"), "2");
  EXPECT_EQ(rows[1].at("waited_on_engine"), "");
  EXPECT_EQ(rows[1].at("result_visible_ts"), "");
  EXPECT_EQ(rows[1].at("hbm_read_bytes"), "32768");
}

TEST(DmaProfileWriter, OneRowPerTransferAndPacket) {
  const GoldenKernel golden;
  ScratchDir dir;
  const std::string path = dir.file("dma.csv");
  const kernel::Instruction& load = golden.first(Opcode::kDmaCopy);
  core::DmaEvent transfer = core::dma_event_of(3, load.sequence, load);
  transfer.dma_engine = -1;
  transfer.hbm_stack = 1;
  transfer.issue_ns = 10;
  transfer.start_ns = 1310;
  transfer.end_ns = 2334;  // 32768 B in 1024 ns = 32 GB/s
  core::DmaEvent packet = transfer;
  packet.kind = core::DmaEvent::Kind::kPacket;
  packet.packet = 4;
  packet.dma_engine = 5;
  packet.bytes = 2048;
  {
    DmaProfileWriter writer(path, golden.program(), 2);
    writer.dma(packet);
    writer.dma(transfer);
    writer.finish();
  }
  const auto rows = read_rows(path, dma_profile_columns());
  ASSERT_EQ(rows.size(), 2u);
  const std::map<std::string, std::string> expected{
      {"core", "3"},
      {"chip", "1"},  // 3 / 2 cores per chip
      {"seq", "0"},
      {"kind", "transfer"},
      {"packet", ""},
      {"opcode", "dma_copy"},
      {"label", "load w"},
      {"nki_source_location", golden.program().file + ":/program/0"},
      {"loop_values", ""},
      {"trigger_engine", "sync"},
      {"queue", "2"},
      {"dma_engine", "-1"},
      {"hbm_stack", "1"},
      {"src_memory", "hbm"},
      {"dst_memory", "sbuf"},
      {"bytes", "32768"},
      {"hbm_read_bytes", "32768"},
      {"hbm_write_bytes", "0"},
      {"issue_ts", "10.000"},
      {"start_ts", "1310.000"},
      {"end_ts", "2334.000"},
      {"duration_ns", "1024.000"},
      {"latency_ns", "1300.000"},
      {"achieved_gbps", "32.000"},
  };
  EXPECT_EQ(rows[1], expected);
  EXPECT_EQ(rows[0].at("kind"), "packet");
  EXPECT_EQ(rows[0].at("packet"), "4");
  EXPECT_EQ(rows[0].at("dma_engine"), "5");
  EXPECT_EQ(rows[0].at("achieved_gbps"), "2.000");  // 2048 B / 1024 ns
}

}  // namespace
}  // namespace trnsim::report
