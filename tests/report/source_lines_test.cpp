// Busy time per source line (SourceLineProfile): hand-made timings of the instructions of
// tests/report/kernels/source_lines.json grouped by their `source`, the documented CSV columns,
// statements without a source grouped by pointer, and the summary's table.
#include "report/source_lines.hpp"

#include <gtest/gtest.h>

#include "kernel/parse.hpp"
#include "report/report.hpp"
#include "report_test_support.hpp"

namespace trnsim::report {
namespace {

using kernel::Engine;
using kernel::Instruction;
using kernel::Opcode;
using testing::documented_columns;
using testing::read_file;
using testing::ScratchDir;

// Statements of source_lines.json: 0 memset (kern.py:10), 1 memset on gpsimd (kern.py:10),
// 2 loop (kern.py:11), 3 tensor_tensor in the loop (kern.py:12), 4 dma_copy "store" (kern.py:13).
kernel::Program source_lines_program() {
  return kernel::parse_program_file(std::string(TRNSIM_SOURCE_DIR) +
                                    "/tests/report/kernels/source_lines.json");
}

Instruction instruction_of(std::uint32_t statement, Engine engine, std::uint64_t sequence) {
  Instruction instruction;
  instruction.source.statement = statement;
  instruction.engine = engine;
  instruction.sequence = sequence;
  return instruction;
}

core::InstructionTiming source_line_timing(const Instruction& instruction, double start_ns,
                                           double end_ns, double wait_ns = 0) {
  core::InstructionTiming timing;
  timing.instruction = &instruction;
  timing.start_ns = start_ns;
  timing.end_ns = end_ns;
  timing.wait_ns = wait_ns;
  return timing;
}

std::vector<std::string> source_line_strings(const std::vector<std::string_view>& columns) {
  return {columns.begin(), columns.end()};
}

TEST(SourceLines, ColumnsMatchTheDocumentedContract) {
  EXPECT_EQ(source_line_strings(source_line_columns()),
            documented_columns("`--profile-lines` columns"));
}

TEST(SourceLines, InstructionsAndTransfersAreSummedPerSourceLine) {
  const kernel::Program program = source_lines_program();
  SourceLineProfile profile(program);
  const Instruction memset_vector = instruction_of(0, Engine::kVector, 0);
  const Instruction memset_gpsimd = instruction_of(1, Engine::kGpSimd, 1);
  const Instruction add = instruction_of(3, Engine::kVector, 2);
  Instruction store = instruction_of(4, Engine::kDma, 5);
  store.opcode = Opcode::kDmaCopy;
  profile.instruction(source_line_timing(memset_vector, 0, 500));
  profile.instruction(source_line_timing(memset_gpsimd, 0, 600));
  profile.instruction(source_line_timing(add, 600, 1600, 100));
  profile.instruction(source_line_timing(add, 1600, 2600));
  profile.instruction(source_line_timing(add, 2600, 3600));
  profile.instruction(source_line_timing(store, 3600, 3602));  // the trigger on sync: not busy time
  core::DmaEvent packet = core::dma_event_of(0, 5, store);
  packet.kind = core::DmaEvent::Kind::kPacket;
  packet.issue_ns = 3700;
  packet.start_ns = 4000;
  packet.end_ns = 4400;
  profile.dma(packet);  // a part of the transfer: not counted again
  core::DmaEvent transfer = core::dma_event_of(0, 5, store);
  transfer.issue_ns = 3700;
  transfer.start_ns = 4000;
  transfer.end_ns = 5000;
  profile.dma(transfer);

  // Kernel time 5000 ns. Line 12: 3 x 1000 ns = 60%; line 10: 500 + 600 = 1100 ns = 22%, gpsimd
  // busier than vector; line 13: the transfer's 1000 ns = 20%, and it waited from the trigger's
  // end (3602) to its issue (3700): 98 ns.
  const std::vector<SourceLineRow> rows = profile.rows(5000);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].source, "kern.py:12");
  EXPECT_EQ(rows[0].instructions, 3u);
  EXPECT_DOUBLE_EQ(rows[0].busy_ns, 3000);
  EXPECT_DOUBLE_EQ(rows[0].busy_pct, 60);
  EXPECT_DOUBLE_EQ(rows[0].wait_ns, 100);
  EXPECT_EQ(rows[0].engines, "vector");
  EXPECT_DOUBLE_EQ(rows[0].first_start_ns, 600);
  EXPECT_DOUBLE_EQ(rows[0].last_end_ns, 3600);
  EXPECT_EQ(rows[0].label, "tensor_tensor /program/2/body/0");

  EXPECT_EQ(rows[1].source, "kern.py:10");
  EXPECT_EQ(rows[1].instructions, 2u);
  EXPECT_DOUBLE_EQ(rows[1].busy_ns, 1100);
  EXPECT_DOUBLE_EQ(rows[1].busy_pct, 22);
  EXPECT_EQ(rows[1].engines, "gpsimd+vector");
  EXPECT_DOUBLE_EQ(rows[1].first_start_ns, 0);
  EXPECT_DOUBLE_EQ(rows[1].last_end_ns, 600);
  EXPECT_EQ(rows[1].label, "memset /program/0");  // the line's first statement

  EXPECT_EQ(rows[2].source, "kern.py:13");
  EXPECT_EQ(rows[2].instructions, 1u);
  EXPECT_DOUBLE_EQ(rows[2].busy_ns, 1000);
  EXPECT_DOUBLE_EQ(rows[2].wait_ns, 98);
  EXPECT_EQ(rows[2].engines, "dma");
  EXPECT_DOUBLE_EQ(rows[2].first_start_ns, 3600);
  EXPECT_DOUBLE_EQ(rows[2].last_end_ns, 5000);
  EXPECT_EQ(rows[2].label, "store");

  ScratchDir dir;
  const std::string path = dir.file("lines.csv");
  {
    OutputFile file(path, "--profile-lines");
    write_source_lines_csv(file, rows);
    file.commit();
  }
  EXPECT_EQ(read_file(path),
            "source,instructions,busy_ns,busy_pct,wait_ns,engines,first_start_ns,last_end_ns,"
            "label\n"
            "kern.py:12,3,3000.000,60.000,100.000,vector,600.000,3600.000,tensor_tensor "
            "/program/2/body/0\n"
            "kern.py:10,2,1100.000,22.000,0.000,gpsimd+vector,0.000,600.000,memset /program/0\n"
            "kern.py:13,1,1000.000,20.000,98.000,dma,3600.000,5000.000,store\n");

  const nlohmann::json lines = source_lines_json(rows);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2]["source"], "kern.py:13");
  EXPECT_EQ(lines[2]["wait_ns"], 98.0);
  for (const auto& column : source_line_columns()) {
    EXPECT_TRUE(lines[0].contains(std::string(column))) << column;
  }
}

TEST(SourceLines, StatementsWithoutASourceAreGroupedByPointer) {
  const kernel::Program program = kernel::parse_program_text(
      R"json({"format": "trnsim-kernel/1", "name": "t",
              "tensors": {"s": {"memory": "sbuf", "dtype": "float32", "shape": [128, 8]}},
              "program": [{"op": "memset", "dst": "s", "value": 0},
                          {"op": "memset", "dst": "s", "value": 1, "name": "second"}]})json",
      "k.json");
  SourceLineProfile profile(program);
  const Instruction first = instruction_of(0, Engine::kVector, 0);
  const Instruction second = instruction_of(1, Engine::kVector, 1);
  profile.instruction(source_line_timing(first, 0, 10));
  profile.instruction(source_line_timing(second, 10, 30));
  profile.instruction(source_line_timing(second, 30, 50));
  const std::vector<SourceLineRow> rows = profile.rows(0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].source, "k.json:/program/1");
  EXPECT_EQ(rows[0].instructions, 2u);
  EXPECT_EQ(rows[0].label, "second");
  EXPECT_DOUBLE_EQ(rows[0].busy_pct, 0);  // no kernel time
  EXPECT_EQ(rows[1].source, "k.json:/program/0");
}

TEST(SourceLines, TheSummaryListsTheTenBusiestLines) {
  nlohmann::json stats = nlohmann::json::parse(R"json({
    "provenance": {"kernel": {"name": "k"}, "config": "trn2"},
    "time": {"kernel_us": 1.0, "kernel_tensor_cycles": 2400, "tensor_clock_ghz": 2.4,
             "launch_overhead_ns": 0.0},
    "cores": []})json");
  const std::string without = format_summary(stats);
  EXPECT_EQ(without.find("source lines"), std::string::npos) << without;
  std::vector<SourceLineRow> rows(12);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].source = "kern.py:" + std::to_string(i + 1);
    rows[i].instructions = i + 1;
    rows[i].busy_ns = 1000.0 * static_cast<double>(12 - i);
    rows[i].busy_pct = 10.0;
    rows[i].wait_ns = 500;
    rows[i].engines = "vector";
  }
  stats["source_lines"] = source_lines_json(rows);
  const std::string with = format_summary(stats);
  EXPECT_NE(with.find("source lines    top 10 of 12 by busy time"), std::string::npos) << with;
  EXPECT_NE(with.find("source     instructions      busy_us    busy%  dep_wait_us  engines\n"),
            std::string::npos)
      << with;
  EXPECT_NE(with.find("kern.py:1             1       12.000     10.0        0.500  vector\n"),
            std::string::npos)
      << with;
  EXPECT_NE(with.find("kern.py:10"), std::string::npos) << with;
  EXPECT_EQ(with.find("kern.py:11"), std::string::npos) << with;
}

}  // namespace
}  // namespace trnsim::report
