// HtmlReport on hand-made timings of the golden kernel's instructions: stalls summed per
// (producer statement, waiting statement), a producer that left the recent window, no file from
// an unfinished report. The pages themselves: tests/report/html_report_test.py (every example,
// rendered in Chromium).
#include "report/html_report.hpp"

#include <gtest/gtest.h>

#include "report_test_support.hpp"

namespace trnsim::report {
namespace {

using kernel::Engine;
using kernel::Opcode;
using testing::GoldenKernel;
using testing::read_file;
using testing::ScratchDir;

core::InstructionTiming waiting_on(const kernel::Instruction& instruction, double start_ns,
                                   double wait_ns, std::uint64_t producer) {
  core::InstructionTiming timing;
  timing.instruction = &instruction;
  timing.start_ns = start_ns;
  timing.end_ns = start_ns + 100;
  timing.visible_ns = timing.end_ns;
  timing.wait_ns = wait_ns;
  timing.waited_on = Engine::kDma;
  timing.waited_on_sequence = producer;
  return timing;
}

TEST(HtmlReport, StallsAreSummedPerProducerAndWaitingStatement) {
  GoldenKernel golden;
  ScratchDir dir;
  const kernel::Instruction& load = golden.first(Opcode::kDmaCopy);
  const kernel::Instruction& matmul = golden.first(Opcode::kNcMatmul);
  HtmlReport report(dir.file("r.html"), golden.program(), 1);
  report.instruction(waiting_on(load, 0, 0, 0));
  report.instruction(waiting_on(matmul, 500, 300, load.sequence));
  report.instruction(waiting_on(matmul, 700, 50, load.sequence));
  report.instruction(waiting_on(matmul, 900, 20, load.sequence + 5000));  // never seen

  const std::vector<HtmlReport::Stall> stalls = report.stalls();
  ASSERT_EQ(stalls.size(), 2u);
  EXPECT_EQ(stalls[0].producer_statement, load.source.statement);
  EXPECT_EQ(stalls[0].consumer_statement, matmul.source.statement);
  EXPECT_EQ(stalls[0].producer_engine, Engine::kDma);
  EXPECT_EQ(stalls[0].consumer_engine, Engine::kTensor);
  EXPECT_DOUBLE_EQ(stalls[0].wait_ns, 350.0);  // 300 + 50
  EXPECT_EQ(stalls[0].waits, 2u);
  EXPECT_EQ(stalls[1].producer_statement, ~std::uint32_t{0});  // named by its engine only
  EXPECT_DOUBLE_EQ(stalls[1].wait_ns, 20.0);
}

TEST(HtmlReport, AnUnfinishedReportLeavesNoFile) {
  GoldenKernel golden;
  ScratchDir dir;
  { HtmlReport report(dir.file("r.html"), golden.program(), 1); }
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.html")));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace trnsim::report
